/*
 * reload.c: the configuration reread on SIGHUP. See include/service/reload.h.
 */
#include "service/reload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "formats/format.h"

#define MOD "pipeline"

static int str_differs(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") != 0;
}

static int keep_str(char **dst, const char *running) {
  char *c = running ? strdup(running) : NULL;
  if (running && !c)
    return -ENOMEM;
  free(*dst);
  *dst = c;
  return 0;
}

static int strv_differs(char *const *a, size_t na, char *const *b, size_t nb) {
  if (na != nb)
    return 1;
  for (size_t i = 0; i < na; i++)
    if (str_differs(a[i], b[i]))
      return 1;
  return 0;
}

/* The alert channels are built at start (judging/alerting.h): the exec
 * argv and the webhook stay as they were until a restart. Returns 0 or
 * -ENOMEM; adds the names of what changed to `changed`. */
static int keep_alert_channels(ps_config *n, const ps_config *run, char *changed, size_t cap) {
  const char *what = NULL;
  if (strv_differs(n->alerts.exec, n->alerts.nexec, run->alerts.exec, run->alerts.nexec) ||
      n->alerts.exec_timeout_ms != run->alerts.exec_timeout_ms)
    what = "alerts.exec";
  if (n->alerts.webhook.given != run->alerts.webhook.given ||
      str_differs(n->alerts.webhook.url, run->alerts.webhook.url) ||
      str_differs(n->alerts.webhook.url_file, run->alerts.webhook.url_file) ||
      str_differs(n->alerts.webhook.tls_ca_file, run->alerts.webhook.tls_ca_file) ||
      n->alerts.webhook.format != run->alerts.webhook.format ||
      n->alerts.webhook.timeout_ms != run->alerts.webhook.timeout_ms)
    what = what ? "alerts.exec, alerts.webhook" : "alerts.webhook";
  if (what)
    snprintf(changed + strlen(changed), cap - strlen(changed), "%s%s", changed[0] ? ", " : "",
             what);
  for (size_t i = 0; i < n->alerts.nexec; i++)
    free(n->alerts.exec[i]);
  free(n->alerts.exec);
  n->alerts.exec = NULL;
  n->alerts.nexec = 0;
  if (run->alerts.nexec) {
    if (!(n->alerts.exec = calloc(run->alerts.nexec, sizeof *n->alerts.exec)))
      return -ENOMEM;
    for (size_t i = 0; i < run->alerts.nexec; i++, n->alerts.nexec++)
      if (!(n->alerts.exec[i] = strdup(run->alerts.exec[i])))
        return -ENOMEM;
  }
  n->alerts.exec_timeout_ms = run->alerts.exec_timeout_ms;
  n->alerts.webhook.given = run->alerts.webhook.given;
  n->alerts.webhook.format = run->alerts.webhook.format;
  n->alerts.webhook.timeout_ms = run->alerts.webhook.timeout_ms;
  if (keep_str(&n->alerts.webhook.url, run->alerts.webhook.url) < 0 ||
      keep_str(&n->alerts.webhook.url_file, run->alerts.webhook.url_file) < 0 ||
      keep_str(&n->alerts.webhook.tls_ca_file, run->alerts.webhook.tls_ca_file) < 0 ||
      keep_str(&n->alerts.webhook.url_from_file, run->alerts.webhook.url_from_file) < 0)
    return -ENOMEM;
  return 0;
}

/* `n` takes the running values (copies: the running config may be freed
 * before `n`), and one warning names every such setting the file changed. */
static int keep_restart_settings(ps_config *n, const ps_config *run) {
#define INFLUX_STRS(X)                                                          \
  X(url) X(database) X(retention_policy) X(username) X(password_file) X(org)    \
  X(bucket) X(token_file) X(tls_ca_file)
#define INFLUX_NUMS(X)                                                          \
  X(api) X(gzip) X(timeout_ms) X(tls_verify) X(create_database)                 \
  X(unreachable_deadline_s)
  char changed[512] = "";
#define NOTE(name)                                                              \
  snprintf(changed + strlen(changed), sizeof changed - strlen(changed), "%s%s", \
           changed[0] ? ", " : "", name)
#define CMP_STR(k)                                                              \
  if (str_differs(n->influxdb.k, run->influxdb.k))                              \
    NOTE("influxdb." #k);
#define CMP_NUM(k)                                                              \
  if (n->influxdb.k != run->influxdb.k)                                         \
    NOTE("influxdb." #k);
  INFLUX_STRS(CMP_STR)
  INFLUX_NUMS(CMP_NUM)
  if (str_differs(n->state_dir, run->state_dir))
    NOTE("state_dir");
#define KEEP_STR(k)                                                             \
  if (keep_str(&n->influxdb.k, run->influxdb.k) < 0)                            \
    return -ENOMEM;
#define KEEP_NUM(k) n->influxdb.k = run->influxdb.k;
  INFLUX_STRS(KEEP_STR)
  INFLUX_NUMS(KEEP_NUM)
  if (keep_str(&n->influxdb.password, run->influxdb.password) < 0 ||
      keep_str(&n->influxdb.token, run->influxdb.token) < 0 ||
      keep_str(&n->state_dir, run->state_dir) < 0 ||
      keep_alert_channels(n, run, changed, sizeof changed) < 0)
    return -ENOMEM;
  if (changed[0])
    PS_WARN(MOD, "SIGHUP: %s changed in %s; these apply only at the next start "
                 "(still using the running values)",
            changed, n->file ? n->file : "the configuration");
  return 0;
#undef INFLUX_STRS
#undef INFLUX_NUMS
#undef NOTE
#undef CMP_STR
#undef CMP_NUM
#undef KEEP_STR
#undef KEEP_NUM
}

int pl_reload_read(const char *file, const ps_config *running, ps_config **out) {
  *out = NULL;
  ps_config *n = calloc(1, sizeof *n);
  if (!n)
    return -ENOMEM;
  ps_config_defaults(n);
  ps_buf err;
  ps_buf_init(&err, 4096);
  int rc = ps_config_load(n, file, ps_format_source_rules, &err);
  if (rc < 0)
    PS_ERROR(MOD, "SIGHUP: %s; keeping the running configuration",
             err.data ? err.data : "configuration error");
  ps_buf_free(&err);
  if (rc == 0 && (rc = keep_restart_settings(n, running)) < 0)
    PS_ERROR(MOD, "SIGHUP: out of memory; keeping the running configuration");
  if (rc < 0) {
    ps_config_free(n);
    free(n);
    return rc;
  }
  *out = n;
  return 0;
}
