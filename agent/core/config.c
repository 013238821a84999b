/*
 * config.c: loading a configuration file and the checks that involve more
 * than one key (include/core/config.h). The key tables, the walker, the
 * tags and sources, the verdict metrics and the secrets are parts of their
 * own beside it (agent/core/config_private.h).
 *
 * DESIGN
 * - Checks that involve two keys (v1 needs a database, v2 a bucket, pending
 *   memory must hold a batch) run after the walk, naming the group's line.
 * - What depends on a source's format (the jsonl mapping, runs) is asked of
 *   the caller's rules (ps_source_rules), which the formats' ops tables
 *   answer: core names no format (docs/architecture.md).
 */
#include "core/config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libconfig.h>

#include "config_private.h"
#include "core/util.h"

#define MAX_CONFIG_BYTES (4u << 20)

/* ---- defaults and freeing: the tables' walks (config_walk.c) ------------ */

void ps_config_defaults(ps_config *c) {
  memset(c, 0, sizeof *c);
  ps_cfg_defaults(ps_cfg_top_keys, c);
}

void ps_config_free(ps_config *c) {
  if (!c)
    return;
  free(c->file);
  ps_cfg_free_secret(&c->influxdb.password);
  ps_cfg_free_secret(&c->influxdb.token);
  ps_cfg_free_secret(&c->alerts.webhook.url_from_file);
  ps_cfg_free(ps_cfg_top_keys, c);
  memset(c, 0, sizeof *c);
}

void ps_source_defaults(ps_source_cfg *s) {
  memset(s, 0, sizeof *s);
  ps_cfg_defaults(ps_cfg_source_keys, s);
}

void ps_source_free(ps_source_cfg *s) {
  if (!s)
    return;
  ps_cfg_free(ps_cfg_source_keys, s);
  memset(s, 0, sizeof *s);
}

/* alerts: a webhook needs exactly one of url and url_file. */
static int check_alerts(ps_cfg_loader *L, const config_setting_t *root) {
  ps_config *c = L->c;
  const config_setting_t *hook = config_setting_lookup(
      (config_setting_t *)root, "alerts.webhook");
  if (!hook)
    return 0;
  c->alerts.webhook.given = 1;
  int has_url = c->alerts.webhook.url && c->alerts.webhook.url[0];
  int has_file = c->alerts.webhook.url_file && c->alerts.webhook.url_file[0];
  if (has_url && has_file)
    return ps_cfg_fail(L, hook, "key 'alerts.webhook': both url and url_file are set; keep "
                       "url_file (the URL is a secret) and remove url");
  if (!has_url && !has_file)
    return ps_cfg_fail(L, hook, "key 'alerts.webhook': needs url_file = \"/etc/perfship/"
                       "webhook_url\"; (a file holding the URL, mode 600) or url = \"...\";");
  return 0;
}

/* Checks that involve more than one key. */
static int check_whole(ps_cfg_loader *L, const config_setting_t *root) {
  ps_config *c = L->c;
  const config_setting_t *influx = config_setting_get_member(root, "influxdb");
  const config_setting_t *batch = config_setting_get_member(root, "batch");
  if (c->influxdb.api == PS_API_V1 && (!c->influxdb.database || !c->influxdb.database[0]))
    return ps_cfg_fail(L, influx, "key 'influxdb.database': is empty but api is \"v1\"; set "
                       "database = \"perf\"; (or api = \"v2\" with a bucket)");
  if (c->influxdb.api == PS_API_V2 && (!c->influxdb.bucket || !c->influxdb.bucket[0]))
    return ps_cfg_fail(L, influx, "key 'influxdb.bucket': is empty but api is \"v2\"; set "
                       "bucket = \"perf\"; (and org if the server needs one)");
  if (c->report.path && c->report.path[0] && c->report.path[0] != '/')
    return ps_cfg_fail(L, config_setting_get_member(root, "report"),
                       "key 'report.path': \"%s\" is not an absolute path; the agent's "
                       "working directory is not yours: write the whole path, e.g. "
                       "\"/var/lib/perfship/report/index.html\"", c->report.path);
  if (c->batch.max_pending_bytes < c->batch.max_bytes)
    return ps_cfg_fail(L, batch, "key 'batch.max_pending_bytes': %lld is less than "
                       "batch.max_bytes (%lld), so not even one batch could be held; raise "
                       "max_pending_bytes or lower max_bytes",
                       (long long)c->batch.max_pending_bytes, (long long)c->batch.max_bytes);
  int rc = ps_cfg_check_verdicts(L, root);
  return rc ? rc : check_alerts(L, root);
}

static int load_file(ps_config *c, const char *path, ps_source_rules_fn rules,
                     ps_buf *err);

int ps_config_load(ps_config *c, const char *path, ps_source_rules_fn rules, ps_buf *err) {
  ps_buf discard;
  ps_buf_init(&discard, 4096);
  int rc = load_file(c, path, rules, err ? err : &discard);
  ps_buf_free(&discard);
  return rc;
}

static int load_file(ps_config *c, const char *path, ps_source_rules_fn rules,
                     ps_buf *err) {
  ps_cfg_loader L = {.c = c, .err = err, .path = path, .rules = rules};
  ps_buf text;
  ps_buf_init(&text, 0);
  int err_no = -ps_read_file(path, MAX_CONFIG_BYTES, &text, NULL);
  if (err_no) {
    ps_buf_free(&text);
    if (err_no == ENOENT)
      ps_buf_printf(err, "%s: no such configuration file; check the path given "
                    "with -c (config/perfship.cfg is an annotated sample)", path);
    else if (err_no == EISDIR)
      ps_buf_printf(err, "%s: is a directory, not a configuration file; give the "
                    "file's path with -c", path);
    else if (err_no == EINVAL)
      ps_buf_printf(err, "%s: not a regular file, so not a configuration file; "
                    "give the file's path with -c", path);
    else if (err_no == EFBIG)
      ps_buf_printf(err, "%s: larger than %u bytes, which no perfship configuration "
                    "is; check the path", path, MAX_CONFIG_BYTES);
    else
      ps_buf_printf(err, "%s: cannot read: %s", path, strerror(err_no));
    return -err_no;
  }
  L.text = text.data; /* freed below, as the loader's own copy */
  L.text_len = text.len;
  free(c->file);
  c->file = strdup(path);

  config_t cf;
  config_init(&cf);
  /* Relative @include paths are relative to the including file. */
  char *dir = strdup(path);
  char *slash = dir ? strrchr(dir, '/') : NULL;
  if (slash) {
    *slash = '\0';
    config_set_include_dir(&cf, dir[0] ? dir : "/");
  }
  int rc = 0;
  if (!config_read_file(&cf, path)) {
    const char *efile = config_error_file(&cf) ? config_error_file(&cf) : path;
    if (config_error_type(&cf) == CONFIG_ERR_FILE_IO)
      ps_buf_printf(err, "%s: cannot read the file (%s)", efile,
                    config_error_text(&cf) ? config_error_text(&cf) : "I/O error");
    else
      ps_buf_printf(err, "%s:%d: %s; fix the syntax there (settings look like "
                    "name = value; groups { ... }, lists ( ... ))",
                    efile, config_error_line(&cf),
                    config_error_text(&cf) ? config_error_text(&cf) : "parse error");
    rc = -EINVAL;
  } else {
    const config_setting_t *root = config_root_setting(&cf);
    rc = ps_cfg_walk_group(&L, root, ps_cfg_top_keys, c, "the top level");
    if (!rc)
      rc = check_whole(&L, root);
  }
  config_destroy(&cf);
  free(dir);
  free(L.text);
  return rc;
}

/* The same rule as the delivery's global tags, so that what the judges
 * read back (docs/verdicts.md, "A series is per host") is what the agent
 * wrote. */
const char *ps_config_host(const ps_config *c, char *buf, size_t n) {
  for (size_t i = 0; i < c->ntags; i++)
    if (strcmp(c->tags[i].key, "host") == 0 && c->tags[i].value && c->tags[i].value[0])
      return c->tags[i].value;
  if (n == 0)
    return "unknown";
  buf[0] = '\0';
  if (gethostname(buf, n - 1) < 0 || !buf[0])
    snprintf(buf, n, "unknown");
  buf[n - 1] = '\0';
  return buf;
}

/* One rule for `run` and `convert -c`, so that convert prints what would be
 * shipped. A `host` key with an empty value counts as set: the encoder
 * leaves the empty tag out, as the configuration asked. */
int ps_config_global_tags(const ps_config *c, char *host_buf, size_t n, ps_tag **out,
                          size_t *nout) {
  int have_host = 0;
  for (size_t i = 0; i < c->ntags; i++)
    have_host |= strcmp(c->tags[i].key, "host") == 0;
  size_t count = c->ntags + !have_host;
  ps_tag *tags = calloc(count, sizeof *tags);
  if (!tags)
    return -ENOMEM;
  for (size_t i = 0; i < c->ntags; i++)
    tags[i] = (ps_tag){c->tags[i].key, c->tags[i].value};
  if (!have_host)
    tags[c->ntags] = (ps_tag){"host", ps_config_host(c, host_buf, n)};
  *out = tags;
  *nout = count;
  return 0;
}
