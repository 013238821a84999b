/*
 * config.c: defaults, the libconfig loader and the secrets reader. See
 * include/core/config.h.
 *
 * DESIGN
 * - Every key is a row of a table (name, kind, offset, range or enum names,
 *   doc). One walker visits each group of the file member by member and
 *   looks the member up in its table, so an unknown key is found at every
 *   level for free, and a typo gets the nearest known key as a suggestion.
 *   Looking keys up with config_lookup_*() instead would silently ignore
 *   both typos and wrong types (libconfig returns "false" for a missing and
 *   for a mistyped setting alike).
 * - The walker writes straight into ps_config through the offsets; strings
 *   are copied out at once, so config_t is destroyed before returning.
 * - libconfig 1.5 truncates a plain integer beyond 32 bits without a word
 *   (10000000000 reads as 1410065408). Byte sizes are large, so for a plain
 *   integer the literal is read again from the file's text and used when it
 *   differs: "1048576" and "1048576L" both mean what they say.
 * - Checks that involve two keys (v1 needs a database, v2 a bucket, pending
 *   memory must hold a batch) run after the walk, naming the group's line.
 */
#include "core/config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libconfig.h>

#include "core/util.h"

#define MAX_CONFIG_BYTES (4u << 20)
#define MAX_SECRET_BYTES 4096

/* ---- names ------------------------------------------------------------- */

typedef struct enum_name {
  const char *name;
  int value;
} enum_name;

static const enum_name api_names[] = {{"v1", PS_API_V1}, {"v2", PS_API_V2}, {NULL, 0}};
static const enum_name gzip_names[] = {
    {"auto", PS_GZIP_AUTO}, {"true", PS_GZIP_ON}, {"on", PS_GZIP_ON},
    {"false", PS_GZIP_OFF}, {"off", PS_GZIP_OFF}, {NULL, 0}};
static const enum_name start_at_names[] = {
    {"beginning", PS_START_BEGINNING}, {"end", PS_START_END}, {NULL, 0}};
static const enum_name log_level_names[] = {
    {"error", PS_LOG_ERROR}, {"warning", PS_LOG_WARNING},
    {"info", PS_LOG_INFO},   {"debug", PS_LOG_DEBUG},   {NULL, 0}};
static const enum_name format_names[] = {
    {"jsonl", PS_FMT_JSONL},         {"lp", PS_FMT_LP},
    {"loadgen", PS_FMT_LOADGEN},     {"dss-bench", PS_FMT_DSS_BENCH},
    {"locust", PS_FMT_LOCUST},       {NULL, 0}};
static const enum_name ftype_names[] = {
    {"integer", PS_F_INT}, {"unsigned", PS_F_UINT}, {"float", PS_F_FLOAT},
    {"string", PS_F_STRING}, {"boolean", PS_F_BOOL}, {NULL, 0}};
static const enum_name time_unit_names[] = {
    {"s", 0}, {"ms", -3}, {"us", -6}, {"ns", -9}, {NULL, 0}};
/* alerts: the event names (alerts.on, the perfship_alert tag) and the
 * webhook's body formats. */
static const enum_name alert_kind_names[] = {
    {"run_failed", PS_ALERT_RUN_FAILED},
    {"run_interrupted", PS_ALERT_RUN_INTERRUPTED},
    {"run_stalled", PS_ALERT_RUN_STALLED},
    {"run_recovered", PS_ALERT_RUN_RECOVERED},
    {"no_new_run", PS_ALERT_NO_NEW_RUN},
    {"regression", PS_ALERT_REGRESSION},
    {"improvement", PS_ALERT_IMPROVEMENT},
    {"agent_unhealthy", PS_ALERT_AGENT_UNHEALTHY},
    {"agent_recovered", PS_ALERT_AGENT_RECOVERED},
    {NULL, 0}};
static const enum_name webhook_format_names[] = {
    {"json", PS_WEBHOOK_JSON}, {"slack", PS_WEBHOOK_SLACK}, {NULL, 0}};

static int enum_lookup(const enum_name *t, const char *name, int *out) {
  if (!name)
    return -EINVAL;
  for (; t->name; t++)
    if (strcmp(t->name, name) == 0) {
      *out = t->value;
      return 0;
    }
  return -EINVAL;
}

/* "a, b or c" into b (for messages) */
static void enum_list(ps_buf *b, const enum_name *t) {
  size_t n = 0;
  while (t[n].name)
    n++;
  for (size_t i = 0; i < n; i++)
    ps_buf_printf(b, "%s\"%s\"", i == 0 ? "" : (i + 1 == n ? " or " : ", "),
                  t[i].name);
}

/* The name of `value` in table `t`; "unknown" when it has none. */
static const char *enum_name_of(const enum_name *t, int value) {
  for (; t->name; t++)
    if (t->value == value)
      return t->name;
  return "unknown";
}

const char *ps_format_name(ps_format_id f) { return enum_name_of(format_names, (int)f); }

int ps_format_from_name(const char *name, ps_format_id *out) {
  int v = 0;
  int rc = enum_lookup(format_names, name, &v);
  if (!rc)
    *out = (ps_format_id)v;
  return rc;
}

int ps_ftype_from_name(const char *name, ps_ftype *out) {
  int v = 0;
  int rc = enum_lookup(ftype_names, name, &v);
  if (!rc)
    *out = (ps_ftype)v;
  return rc;
}

int ps_time_unit_from_name(const char *name, int *exp_out) {
  return enum_lookup(time_unit_names, name, exp_out);
}

const char *ps_alert_kind_name(ps_alert_kind k) {
  return enum_name_of(alert_kind_names, (int)k);
}

int ps_alert_kind_from_name(const char *name, ps_alert_kind *out) {
  int v = 0;
  int rc = enum_lookup(alert_kind_names, name, &v);
  if (!rc)
    *out = (ps_alert_kind)v;
  return rc;
}

/* ---- defaults and freeing ---------------------------------------------- */

static void verdicts_defaults(ps_verdicts_cfg *v);
static void verdicts_free(ps_verdicts_cfg *v);

void ps_source_defaults(ps_source_cfg *s) {
  memset(s, 0, sizeof *s);
  s->format = PS_FMT_JSONL;
  s->measurement = strdup("jsonl");
  s->time_unit_exp = 0;
  s->no_new_run_after_s = -1;
}

static void free_strv(char **v, size_t n) {
  for (size_t i = 0; v && i < n; i++)
    free(v[i]);
  free(v);
}

void ps_source_free(ps_source_cfg *s) {
  if (!s)
    return;
  free(s->path);
  free(s->measurement);
  free_strv(s->tag_keys, s->ntag_keys);
  free_strv(s->field_keys, s->nfield_keys);
  free(s->time_key);
  for (size_t i = 0; s->types && i < s->ntypes; i++)
    free(s->types[i].key);
  free(s->types);
  memset(s, 0, sizeof *s);
}

void ps_config_defaults(ps_config *c) {
  memset(c, 0, sizeof *c);
  c->influxdb.url = strdup(PS_INFLUX_DEFAULT_URL);
  c->influxdb.api = PS_API_V1;
  c->influxdb.database = strdup("perf");
  c->influxdb.retention_policy = strdup("");
  c->influxdb.username = strdup("");
  c->influxdb.password_file = strdup("");
  c->influxdb.org = strdup("");
  c->influxdb.bucket = strdup("");
  c->influxdb.token_file = strdup("");
  c->influxdb.gzip = PS_GZIP_AUTO;
  c->influxdb.timeout_ms = 10000;
  c->influxdb.tls_ca_file = strdup("");
  c->influxdb.tls_verify = 1;
  c->influxdb.create_database = 1;
  c->influxdb.unreachable_deadline_s = 300;
  c->batch.max_points = 5000;
  c->batch.max_bytes = 1048576;
  c->batch.flush_interval_ms = 1000;
  c->batch.max_pending_bytes = 8388608;
  c->watch.rescan_interval_ms = 30000;
  c->watch.settle_ms = 2000;
  c->watch.max_line_bytes = 67108864;
  c->watch.start_at = PS_START_BEGINNING;
  c->selfstats.interval_ms = 10000;
  c->state_dir = strdup("/var/lib/perfship");
  c->alerts.stall_after_s = 1800;
  c->alerts.no_new_run_after_s = 93600;
  c->alerts.unhealthy_after_s = 600;
  c->alerts.catch_up_s = 21600;
  c->alerts.min_interval_s = 300;
  c->alerts.exec_timeout_ms = 10000;
  c->alerts.on = PS_ALERT_ON_DEFAULT;
  c->alerts.webhook.url = strdup("");
  c->alerts.webhook.url_file = strdup("");
  c->alerts.webhook.tls_ca_file = strdup("");
  c->alerts.webhook.format = PS_WEBHOOK_JSON;
  c->alerts.webhook.timeout_ms = 5000;
  c->report.path = strdup("");
  c->report.since_days = 90;
  c->report.min_interval_s = 300;
  c->report.chart_js = strdup(PS_REPORT_DEFAULT_CHART_JS);
  c->log_level = PS_LOG_INFO;
  verdicts_defaults(&c->verdicts);
}

/* Secrets are wiped before their memory goes back to the allocator. */
static void free_secret(char **s) {
  if (*s) {
    memset(*s, 0, strlen(*s));
    free(*s);
    *s = NULL;
  }
}

void ps_config_free(ps_config *c) {
  if (!c)
    return;
  free(c->file);
  free(c->influxdb.url);
  free(c->influxdb.database);
  free(c->influxdb.retention_policy);
  free(c->influxdb.username);
  free(c->influxdb.password_file);
  free(c->influxdb.org);
  free(c->influxdb.bucket);
  free(c->influxdb.token_file);
  free(c->influxdb.tls_ca_file);
  free_secret(&c->influxdb.password);
  free_secret(&c->influxdb.token);
  free_strv(c->alerts.exec, c->alerts.nexec);
  free(c->alerts.webhook.url);
  free(c->alerts.webhook.url_file);
  free(c->alerts.webhook.tls_ca_file);
  free_secret(&c->alerts.webhook.url_from_file);
  free(c->state_dir);
  free(c->report.path);
  free(c->report.chart_js);
  for (size_t i = 0; c->tags && i < c->ntags; i++) {
    free(c->tags[i].key);
    free(c->tags[i].value);
  }
  free(c->tags);
  for (size_t i = 0; c->sources && i < c->nsources; i++)
    ps_source_free(&c->sources[i]);
  free(c->sources);
  verdicts_free(&c->verdicts);
  memset(c, 0, sizeof *c);
}

/* ---- the key tables ---------------------------------------------------- */

typedef enum key_kind {
  K_STR,      /* char *; `min` 1 means it must not be empty */
  K_URL,      /* char *, http:// or https:// */
  K_INT,      /* int64_t in [min, max] */
  K_BOOL,     /* int */
  K_ENUM,     /* int-sized enum, from `names` (gzip also takes a boolean) */
  K_STRLIST,  /* char ** at offset, size_t count at offset2 */
  K_ENUMLIST, /* unsigned bit set at offset, one bit per name of `names` */
  K_HOOK_URL, /* char *, an http(s) URL with a path (a secret: not echoed) */
  K_TYPES,    /* jsonl "types" map: ps_type_decl * at offset, count at offset2 */
  K_GROUP,    /* a nested table */
  K_TAGS,     /* top-level "tags" */
  K_SOURCES,  /* top-level "sources" */
  K_FLOAT,    /* double in [min, max] millionths (the bounds are integers) */
  K_VMETRICS, /* verdicts.metrics: a group of per-metric groups */
} key_kind;

typedef struct key_spec key_spec;
struct key_spec {
  const char *name;
  key_kind kind;
  size_t offset;
  size_t offset2;
  int64_t min, max;
  const enum_name *names;
  const key_spec *sub; /* K_GROUP */
  int jsonl_only;      /* source keys that mean nothing to other formats */
  const char *doc;     /* what the value is: used in "expected ..." */
};

#define CFG(m) offsetof(ps_config, m)
#define SRC(m) offsetof(ps_source_cfg, m)
#define I64MAX INT64_MAX
/* Upper bounds for durations. Their users turn them into nanoseconds
 * (stall detection) or add them to uv_now() (deadlines, settling): an
 * unbounded value overflowed there, into undefined behaviour or a deadline
 * in the past. Ten years, and a day between two timer ticks, are far beyond
 * any useful setting. */
#define MAX_SECONDS ((int64_t)10 * 365 * 86400)
#define MAX_MS ((int64_t)86400000)

static const key_spec influxdb_keys[] = {
    {"url", K_URL, CFG(influxdb.url), 0, 0, 0, NULL, NULL, 0,
     "the server's base URL, e.g. \"" PS_INFLUX_DEFAULT_URL "\""},
    {"api", K_ENUM, CFG(influxdb.api), 0, 0, 0, api_names, NULL, 0,
     "the write API"},
    {"database", K_STR, CFG(influxdb.database), 0, 0, 0, NULL, NULL, 0,
     "a database name"},
    {"retention_policy", K_STR, CFG(influxdb.retention_policy), 0, 0, 0, NULL, NULL, 0,
     "a retention policy name (\"\" for the default)"},
    {"username", K_STR, CFG(influxdb.username), 0, 0, 0, NULL, NULL, 0, "a user name"},
    {"password_file", K_STR, CFG(influxdb.password_file), 0, 0, 0, NULL, NULL, 0,
     "the path of a file holding the password"},
    {"org", K_STR, CFG(influxdb.org), 0, 0, 0, NULL, NULL, 0, "an organisation name"},
    {"bucket", K_STR, CFG(influxdb.bucket), 0, 0, 0, NULL, NULL, 0, "a bucket name"},
    {"token_file", K_STR, CFG(influxdb.token_file), 0, 0, 0, NULL, NULL, 0,
     "the path of a file holding the API token"},
    {"gzip", K_ENUM, CFG(influxdb.gzip), 0, 0, 0, gzip_names, NULL, 0,
     "when to compress request bodies"},
    {"timeout_ms", K_INT, CFG(influxdb.timeout_ms), 0, 1, 3600000, NULL, NULL, 0,
     "milliseconds"},
    {"tls_ca_file", K_STR, CFG(influxdb.tls_ca_file), 0, 0, 0, NULL, NULL, 0,
     "the path of a CA bundle"},
    {"tls_verify", K_BOOL, CFG(influxdb.tls_verify), 0, 0, 0, NULL, NULL, 0,
     "true or false"},
    {"create_database", K_BOOL, CFG(influxdb.create_database), 0, 0, 0, NULL, NULL, 0,
     "true or false"},
    {"unreachable_deadline_s", K_INT, CFG(influxdb.unreachable_deadline_s), 0, 1,
     MAX_SECONDS, NULL, NULL, 0, "seconds"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

static const key_spec batch_keys[] = {
    {"max_points", K_INT, CFG(batch.max_points), 0, 1, 1000000, NULL, NULL, 0,
     "points per request"},
    {"max_bytes", K_INT, CFG(batch.max_bytes), 0, 1024, (int64_t)1 << 30, NULL, NULL, 0,
     "bytes per request"},
    {"flush_interval_ms", K_INT, CFG(batch.flush_interval_ms), 0, 1, 3600000, NULL,
     NULL, 0, "milliseconds"},
    {"max_pending_bytes", K_INT, CFG(batch.max_pending_bytes), 0, 1024, I64MAX, NULL,
     NULL, 0, "bytes"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

static const key_spec watch_keys[] = {
    {"rescan_interval_ms", K_INT, CFG(watch.rescan_interval_ms), 0, 1, MAX_MS, NULL,
     NULL, 0, "milliseconds"},
    {"settle_ms", K_INT, CFG(watch.settle_ms), 0, 0, MAX_MS, NULL, NULL, 0,
     "milliseconds"},
    {"max_line_bytes", K_INT, CFG(watch.max_line_bytes), 0, 1024, (int64_t)1 << 40,
     NULL, NULL, 0, "bytes"},
    {"start_at", K_ENUM, CFG(watch.start_at), 0, 0, 0, start_at_names, NULL, 0,
     "where to start reading files found at start"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

static const key_spec selfstats_keys[] = {
    {"interval_ms", K_INT, CFG(selfstats.interval_ms), 0, 1, MAX_MS, NULL, NULL, 0,
     "milliseconds"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

/* alerts (docs/alerts.md). */
static const key_spec webhook_keys[] = {
    {"url", K_HOOK_URL, CFG(alerts.webhook.url), 0, 0, 0, NULL, NULL, 0,
     "the URL to POST each event to"},
    {"url_file", K_STR, CFG(alerts.webhook.url_file), 0, 1, 0, NULL, NULL, 0,
     "the path of a file holding the URL"},
    {"tls_ca_file", K_STR, CFG(alerts.webhook.tls_ca_file), 0, 0, 0, NULL, NULL, 0,
     "the path of a CA bundle"},
    {"format", K_ENUM, CFG(alerts.webhook.format), 0, 0, 0, webhook_format_names, NULL, 0,
     "the body posted"},
    {"timeout_ms", K_INT, CFG(alerts.webhook.timeout_ms), 0, 1, 600000, NULL, NULL, 0,
     "milliseconds"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

static const key_spec alerts_keys[] = {
    {"stall_after_s", K_INT, CFG(alerts.stall_after_s), 0, 1, MAX_SECONDS, NULL, NULL, 0,
     "seconds"},
    {"no_new_run_after_s", K_INT, CFG(alerts.no_new_run_after_s), 0, 0, MAX_SECONDS, NULL,
     NULL, 0, "seconds, 0 for off"},
    {"unhealthy_after_s", K_INT, CFG(alerts.unhealthy_after_s), 0, 1, MAX_SECONDS, NULL,
     NULL, 0, "seconds"},
    {"catch_up_s", K_INT, CFG(alerts.catch_up_s), 0, 0, MAX_SECONDS, NULL, NULL, 0,
     "seconds"},
    {"min_interval_s", K_INT, CFG(alerts.min_interval_s), 0, 0, MAX_SECONDS, NULL, NULL, 0,
     "seconds"},
    {"exec", K_STRLIST, CFG(alerts.exec), CFG(alerts.nexec), 0, 0, NULL, NULL, 0,
     "the notifier's argv, e.g. [\"/usr/local/bin/notify\", \"--channel\", \"perf\"]"},
    {"exec_timeout_ms", K_INT, CFG(alerts.exec_timeout_ms), 0, 1, 600000, NULL, NULL, 0,
     "milliseconds"},
    {"webhook", K_GROUP, 0, 0, 0, 0, NULL, webhook_keys, 0, "a group { ... }"},
    {"on", K_ENUMLIST, CFG(alerts.on), 0, 0, 0, alert_kind_names, NULL, 0,
     "a list of event names, e.g. [\"run_failed\", \"no_new_run\"]"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

/* verdicts = { ... } (docs/verdicts.md). */
static const enum_name worse_names[] = {
    {"higher", PS_WORSE_HIGHER}, {"lower", PS_WORSE_LOWER}, {NULL, 0}};
static const enum_name change_unit_names[] = {
    {"percent", PS_CHANGE_PERCENT}, {"points", PS_CHANGE_POINTS}, {NULL, 0}};
#define VMC(m) offsetof(ps_verdict_metric_cfg, m)
#define MILLIONTHS(x) ((int64_t)((x) * 1000000.0))

static const key_spec verdict_metric_keys[] = {
    {"worse", K_ENUM, VMC(worse), 0, 0, 0, worse_names, NULL, 0,
     "which direction is a regression"},
    {"min_change", K_FLOAT, VMC(min_change), 0, 0, MILLIONTHS(1e6), NULL, NULL, 0,
     "the smallest change reported, in `unit`"},
    {"unit", K_ENUM, VMC(unit), 0, 0, 0, change_unit_names, NULL, 0,
     "the unit of min_change"},
    {"enabled", K_BOOL, VMC(enabled), 0, 0, 0, NULL, NULL, 0, "true or false"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

static const key_spec verdicts_dss_keys[] = {
    {"min_change_pct", K_FLOAT, CFG(verdicts.dss.min_change_pct), 0, 0, MILLIONTHS(1000),
     NULL, NULL, 0, "percent"},
    {"reference_arm", K_STR, CFG(verdicts.dss.reference_arm), 0, 0, 0, NULL, NULL, 0,
     "an arm's label (\"\" = the first arm)"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

/* significance: the permutation count grows as 10 / significance, so the
 * bounds keep one test between 50 and 10,000 permutations. window_runs:
 * the test is O(n log n) per permutation; a thousand runs is years of
 * nightly runs. */
static const key_spec verdicts_keys[] = {
    {"significance", K_FLOAT, CFG(verdicts.significance), 0, MILLIONTHS(0.001),
     MILLIONTHS(0.2), NULL, NULL, 0, "the p-value at or below which a change counts"},
    {"min_runs", K_INT, CFG(verdicts.min_runs), 0, 4, 1000, NULL, NULL, 0,
     "successful runs before the first verdict"},
    {"window_runs", K_INT, CFG(verdicts.window_runs), 0, 4, 1000, NULL, NULL, 0,
     "the newest runs a verdict looks at"},
    {"metrics", K_VMETRICS, 0, 0, 0, 0, NULL, verdict_metric_keys, 0,
     "a group of metric = { worse = ...; min_change = ...; } groups"},
    {"stage_drift_pct", K_FLOAT, CFG(verdicts.stage_drift_pct), 0, 0, MILLIONTHS(1000),
     NULL, NULL, 0, "percent"},
    {"dss", K_GROUP, 0, 0, 0, 0, NULL, verdicts_dss_keys, 0, "a group { ... }"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

static const key_spec report_keys[] = {
    {"path", K_STR, CFG(report.path), 0, 0, 0, NULL, NULL, 0,
     "the HTML file to keep current, e.g. \"/var/lib/perfship/report/index.html\" "
     "(\"\" = none)"},
    {"since_days", K_INT, CFG(report.since_days), 0, 1, 3660, NULL, NULL, 0,
     "days of runs the page shows"},
    {"min_interval_s", K_INT, CFG(report.min_interval_s), 0, 0, MAX_SECONDS, NULL, NULL, 0,
     "seconds between two regenerations"},
    {"chart_js", K_STR, CFG(report.chart_js), 0, 1, 0, NULL, NULL, 0,
     "the path of Chart.js (chart.min.js)"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

static const key_spec top_keys[] = {
    {"influxdb", K_GROUP, 0, 0, 0, 0, NULL, influxdb_keys, 0, "a group { ... }"},
    {"batch", K_GROUP, 0, 0, 0, 0, NULL, batch_keys, 0, "a group { ... }"},
    {"watch", K_GROUP, 0, 0, 0, 0, NULL, watch_keys, 0, "a group { ... }"},
    {"selfstats", K_GROUP, 0, 0, 0, 0, NULL, selfstats_keys, 0, "a group { ... }"},
    {"alerts", K_GROUP, 0, 0, 0, 0, NULL, alerts_keys, 0, "a group { ... }"},
    {"verdicts", K_GROUP, 0, 0, 0, 0, NULL, verdicts_keys, 0, "a group { ... }"},
    {"report", K_GROUP, 0, 0, 0, 0, NULL, report_keys, 0, "a group { ... }"},
    {"state_dir", K_STR, CFG(state_dir), 0, 1, 0, NULL, NULL, 0, "a directory path"},
    {"tags", K_TAGS, 0, 0, 0, 0, NULL, NULL, 0, "a group of strings"},
    {"sources", K_SOURCES, 0, 0, 0, 0, NULL, NULL, 0, "a list of groups ( { ... }, ... )"},
    {"log_level", K_ENUM, CFG(log_level), 0, 0, 0, log_level_names, NULL, 0,
     "the log level"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

static const key_spec source_keys[] = {
    {"path", K_STR, SRC(path), 0, 1, 0, NULL, NULL, 0,
     "a directory, a file or a glob"},
    {"format", K_ENUM, SRC(format), 0, 0, 0, format_names, NULL, 0, "the format"},
    {"measurement", K_STR, SRC(measurement), 0, 1, 0, NULL, NULL, 1,
     "a measurement name"},
    {"tag_keys", K_STRLIST, SRC(tag_keys), SRC(ntag_keys), 0, 0, NULL, NULL, 1,
     "a list of key names, e.g. [\"stage\"]"},
    {"field_keys", K_STRLIST, SRC(field_keys), SRC(nfield_keys), 0, 0, NULL, NULL, 1,
     "a list of key names, e.g. [\"latency\"]"},
    {"time_key", K_STR, SRC(time_key), 0, 1, 0, NULL, NULL, 1,
     "the key holding the timestamp"},
    {"time_unit", K_ENUM, SRC(time_unit_exp), 0, 0, 0, time_unit_names, NULL, 1,
     "the unit of time_key"},
    {"types", K_TYPES, SRC(types), SRC(ntypes), 0, 0, NULL, NULL, 1,
     "a group of key = \"type\""},
    {"no_new_run_after_s", K_INT, SRC(no_new_run_after_s), 0, 0, MAX_SECONDS, NULL, NULL,
     0, "seconds, 0 for off (alerts.no_new_run_after_s for this source)"},
    {NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL}};

/* ---- the loader -------------------------------------------------------- */

typedef struct loader {
  ps_config *c;
  ps_buf *err;
  const char *path;   /* as given, for messages */
  char *text;         /* the file's bytes, to re-read large integers */
  size_t text_len;
} loader;

static const char *type_word(int t) {
  switch (t) {
  case CONFIG_TYPE_GROUP: return "a group";
  case CONFIG_TYPE_INT:
  case CONFIG_TYPE_INT64: return "an integer";
  case CONFIG_TYPE_FLOAT: return "a float";
  case CONFIG_TYPE_STRING: return "a string";
  case CONFIG_TYPE_BOOL: return "a boolean";
  case CONFIG_TYPE_ARRAY: return "an array";
  case CONFIG_TYPE_LIST: return "a list";
  }
  return "nothing";
}

/* Writes "FILE:LINE: " followed by the formatted text, once. */
static int fail(loader *L, const config_setting_t *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(loader *L, const config_setting_t *s, const char *fmt, ...) {
  if (L->err && L->err->len == 0) {
    const char *file = s && config_setting_source_file(s) ? config_setting_source_file(s)
                                                          : L->path;
    unsigned line = s ? config_setting_source_line(s) : 0;
    if (line)
      ps_buf_printf(L->err, "%s:%u: ", file, line);
    else
      ps_buf_printf(L->err, "%s: ", file);
    va_list ap;
    va_start(ap, fmt);
    ps_buf_vprintf(L->err, fmt, ap);
    va_end(ap);
  }
  return -EINVAL;
}

/* The dotted name of a setting for messages: "batch.max_points",
 * "sources[2].format", "tags.host". */
static void setting_path(ps_buf *b, const config_setting_t *s) {
  if (!s || config_setting_is_root(s))
    return;
  const config_setting_t *parent = config_setting_parent(s);
  setting_path(b, parent);
  if (config_setting_name(s)) {
    if (b->len)
      ps_buf_putc(b, '.');
    ps_buf_puts(b, config_setting_name(s));
  } else {
    ps_buf_printf(b, "[%d]", config_setting_index(s) + 1);
  }
}

static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64)
    return SIZE_MAX;
  size_t prev[65], cur[65];
  for (size_t j = 0; j <= lb; j++)
    prev[j] = j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
      size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
      cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
    memcpy(prev, cur, (lb + 1) * sizeof *prev);
  }
  return prev[lb];
}

static const char *nearest_key(const key_spec *table, const char *name) {
  const char *best = NULL;
  size_t best_d = SIZE_MAX;
  for (const key_spec *k = table; k->name; k++) {
    size_t d = edit_distance(name, k->name);
    if (d < best_d) {
      best_d = d;
      best = k->name;
    }
  }
  size_t len = strlen(name);
  size_t limit = len < 6 ? 2 : len / 3 + 1;
  return best_d <= limit ? best : NULL;
}

static int fail_unknown(loader *L, const config_setting_t *s, const key_spec *table,
                        const char *where) {
  const char *name = config_setting_name(s);
  const char *near = nearest_key(table, name);
  ps_buf known;
  ps_buf_init(&known, 0);
  if (!near)
    for (const key_spec *k = table; k->name; k++)
      ps_buf_printf(&known, "%s%s", k == table ? "" : ", ", k->name);
  int rc;
  if (near)
    rc = fail(L, s, "unknown key '%s' in %s; did you mean '%s'?", name, where, near);
  else
    rc = fail(L, s, "unknown key '%s' in %s; known keys: %s", name, where,
              known.data ? known.data : "");
  ps_buf_free(&known);
  return rc;
}

static char **str_at(void *base, size_t off) { return (char **)((char *)base + off); }

static int set_string(loader *L, char **dst, const char *v) {
  char *copy = strdup(v);
  if (!copy)
    return fail(L, NULL, "out of memory");
  free(*dst);
  *dst = copy;
  return 0;
}

/* libconfig 1.5 keeps only 32 bits of a plain integer literal; find the
 * literal after "name =" or "name:" on the setting's line and read it whole. */
static int reread_int(const loader *L, const config_setting_t *s, int64_t *out) {
  const char *file = config_setting_source_file(s);
  const char *name = config_setting_name(s);
  unsigned line = config_setting_source_line(s);
  if (!L->text || !file || strcmp(file, L->path) != 0 || !name || line == 0)
    return -ENOENT;
  const char *p = L->text, *end = L->text + L->text_len;
  for (unsigned n = 1; n < line && p < end; n++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      return -ENOENT;
    p = nl + 1;
  }
  const char *eol = memchr(p, '\n', (size_t)(end - p));
  if (!eol)
    eol = end;
  size_t nlen = strlen(name);
  for (const char *q = p; q + nlen <= eol; q++) {
    if (memcmp(q, name, nlen) != 0)
      continue;
    if (q > p && (q[-1] == '_' || q[-1] == '-' || (q[-1] >= '0' && q[-1] <= '9') ||
                  ((q[-1] | 0x20) >= 'a' && (q[-1] | 0x20) <= 'z')))
      continue;
    const char *r = q + nlen;
    while (r < eol && (*r == ' ' || *r == '\t'))
      r++;
    if (r >= eol || (*r != '=' && *r != ':'))
      continue;
    r++;
    while (r < eol && (*r == ' ' || *r == '\t'))
      r++;
    char num[40];
    size_t k = 0;
    while (r < eol && k + 1 < sizeof num &&
           (*r == '-' || *r == '+' || *r == 'x' || *r == 'X' ||
            (*r >= '0' && *r <= '9') || ((*r | 0x20) >= 'a' && (*r | 0x20) <= 'f')))
      num[k++] = *r++;
    num[k] = '\0';
    /* libconfig reads "010" as ten, not as octal: only 0x switches base */
    const char *digits = num + (num[0] == '-' || num[0] == '+');
    int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
    char *stop;
    errno = 0;
    long long v = strtoll(num, &stop, base);
    if (k == 0 || *stop != '\0' || errno)
      return -ERANGE;
    *out = v;
    return 0;
  }
  return -ENOENT;
}

static int get_int(loader *L, const config_setting_t *s, const key_spec *k,
                   const char *key, int64_t *out) {
  int t = config_setting_type(s);
  if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
    return fail(L, s, "key '%s': expected an integer (%s), got %s; write a whole "
                "number without quotes, e.g. %s = %lld;",
                key, k->doc, type_word(t), k->name,
                (long long)(k->min > 1000 ? k->min : 1000));
  int64_t v = config_setting_get_int64(s);
  if (t == CONFIG_TYPE_INT) {
    int64_t whole = 0;
    int rc = reread_int(L, s, &whole);
    if (rc == -ERANGE)
      return fail(L, s, "key '%s': the number is out of range; use a value between "
                  "%lld and %lld", key, (long long)k->min, (long long)k->max);
    if (rc == 0)
      v = whole;
  }
  if (v < k->min || v > k->max) {
    if (k->max == I64MAX)
      return fail(L, s, "key '%s': %lld is too small; use at least %lld (%s)", key,
                  (long long)v, (long long)k->min, k->doc);
    return fail(L, s, "key '%s': %lld is out of range; use a value from %lld to %lld "
                "(%s)", key, (long long)v, (long long)k->min, (long long)k->max, k->doc);
  }
  *out = v;
  return 0;
}

static int want_string(loader *L, const config_setting_t *s, const key_spec *k,
                       const char *key, const char **out) {
  int t = config_setting_type(s);
  if (t != CONFIG_TYPE_STRING)
    return fail(L, s, "key '%s': expected a string (%s), got %s; put the value in "
                "double quotes", key, k->doc, type_word(t));
  *out = config_setting_get_string(s);
  return 0;
}

static int apply_enum(loader *L, const config_setting_t *s, const key_spec *k,
                      const char *key, int *out) {
  /* gzip = true / false reads as naturally as the strings do */
  if (config_setting_type(s) == CONFIG_TYPE_BOOL && k->names == gzip_names) {
    *out = config_setting_get_bool(s) ? PS_GZIP_ON : PS_GZIP_OFF;
    return 0;
  }
  const char *v = NULL;
  int rc = want_string(L, s, k, key, &v);
  if (rc)
    return rc;
  if (enum_lookup(k->names, v, out) == 0)
    return 0;
  ps_buf choices;
  ps_buf_init(&choices, 0);
  enum_list(&choices, k->names);
  rc = fail(L, s, "key '%s': \"%s\" is not valid (%s); use %s", key, v, k->doc,
            choices.data ? choices.data : "");
  ps_buf_free(&choices);
  return rc;
}

static int apply_strlist(loader *L, const config_setting_t *s, const key_spec *k,
                         const char *key, void *base) {
  int t = config_setting_type(s);
  if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
    return fail(L, s, "key '%s': expected %s, got %s", key, k->doc, type_word(t));
  char ***vec = (char ***)((char *)base + k->offset);
  size_t *count = (size_t *)((char *)base + k->offset2);
  int n = config_setting_length(s);
  for (int i = 0; i < n; i++) {
    const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
    if (config_setting_type(e) != CONFIG_TYPE_STRING)
      return fail(L, e, "key '%s': element %d is %s; every element must be a string "
                  "in double quotes (%s)", key, i + 1, type_word(config_setting_type(e)),
                  k->doc);
    const char *v = config_setting_get_string(e);
    if (!v[0])
      return fail(L, e, "key '%s': element %d is empty; remove it", key, i + 1);
  }
  free_strv(*vec, *count);
  *vec = NULL;
  *count = 0;
  if (n == 0)
    return 0;
  char **v = calloc((size_t)n, sizeof *v);
  if (!v)
    return fail(L, s, "out of memory");
  *vec = v;
  for (int i = 0; i < n; i++) {
    v[i] = strdup(config_setting_get_string(config_setting_get_elem(s, (unsigned)i)));
    if (!v[i])
      return fail(L, s, "out of memory");
    *count = (size_t)i + 1;
  }
  return 0;
}

/* A list of names of `k->names` into a bit set: ["run_failed", ...]. */
static int apply_enumlist(loader *L, const config_setting_t *s, const key_spec *k,
                          const char *key, void *base) {
  int t = config_setting_type(s);
  if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
    return fail(L, s, "key '%s': expected %s, got %s", key, k->doc, type_word(t));
  unsigned bits = 0;
  for (int i = 0; i < config_setting_length(s); i++) {
    const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
    int v = 0;
    const char *name = config_setting_type(e) == CONFIG_TYPE_STRING
                           ? config_setting_get_string(e)
                           : NULL;
    if (name && enum_lookup(k->names, name, &v) == 0) {
      bits |= 1u << (unsigned)v;
      continue;
    }
    ps_buf choices;
    ps_buf_init(&choices, 0);
    enum_list(&choices, k->names);
    int rc = name ? fail(L, e, "key '%s': \"%s\" is not a known name; use %s", key, name,
                         choices.data ? choices.data : "")
                  : fail(L, e, "key '%s': element %d is %s; use %s", key, i + 1,
                         type_word(config_setting_type(e)), choices.data ? choices.data : "");
    ps_buf_free(&choices);
    return rc;
  }
  *(unsigned *)((char *)base + k->offset) = bits;
  return 0;
}

static int apply_types(loader *L, const config_setting_t *s, const key_spec *k,
                       const char *key, void *base) {
  if (config_setting_type(s) != CONFIG_TYPE_GROUP)
    return fail(L, s, "key '%s': expected %s, e.g. types = { count = \"integer\"; }, "
                "got %s", key, k->doc, type_word(config_setting_type(s)));
  ps_type_decl **vec = (ps_type_decl **)((char *)base + k->offset);
  size_t *count = (size_t *)((char *)base + k->offset2);
  int n = config_setting_length(s);
  ps_type_decl *v = n ? calloc((size_t)n, sizeof *v) : NULL;
  if (n && !v)
    return fail(L, s, "out of memory");
  for (size_t i = 0; *vec && i < *count; i++)
    free((*vec)[i].key);
  free(*vec);
  *vec = v;
  *count = 0;
  for (int i = 0; i < n; i++) {
    const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
    if (config_setting_type(e) != CONFIG_TYPE_STRING)
      return fail(L, e, "key '%s.%s': expected a type name in double quotes, got %s; "
                  "use \"integer\", \"unsigned\", \"float\", \"string\" or \"boolean\"",
                  key, config_setting_name(e), type_word(config_setting_type(e)));
    const char *tn = config_setting_get_string(e);
    if (ps_ftype_from_name(tn, &v[i].type))
      return fail(L, e, "key '%s.%s': \"%s\" is not a field type; use \"integer\", "
                  "\"unsigned\", \"float\", \"string\" or \"boolean\"",
                  key, config_setting_name(e), tn);
    v[i].key = strdup(config_setting_name(e));
    if (!v[i].key)
      return fail(L, e, "out of memory");
    *count = (size_t)i + 1;
  }
  return 0;
}

/* What follows "http://" or "https://" in v; NULL for any other scheme. */
static const char *after_http_scheme(const char *v) {
  if (strncmp(v, "http://", 7) == 0)
    return v + 7;
  if (strncmp(v, "https://", 8) == 0)
    return v + 8;
  return NULL;
}

static int check_url(loader *L, const config_setting_t *s, const char *key,
                     const char *v) {
  const char *rest = after_http_scheme(v);
  if (!rest || !rest[0] || rest[0] == '/' || strpbrk(v, " \t\r\n?#"))
    return fail(L, s, "key '%s': \"%s\" is not an http(s) URL; write it as "
                "\"http://HOST:PORT\" (or https://), without a path or query",
                key, v);
  /* The URL is printed by check, mark and the unreachable-server messages:
   * a password inside it would reach every log. */
  size_t host_len = strcspn(rest, "/");
  if (memchr(rest, '@', host_len))
    return fail(L, s, "key '%s': the URL holds credentials (USER:PASSWORD@); "
                "they would be printed in messages; write the URL without them "
                "and use influxdb.username with password_file (v1) or "
                "token_file (v2)", key);
  return 0;
}

/* A webhook URL may have a path and a query (Slack's are all path); it is
 * a secret, so messages never repeat it. */
static int check_hook_url(loader *L, const config_setting_t *s, const char *key,
                          const char *v) {
  const char *rest = after_http_scheme(v);
  if (!rest || !rest[0] || rest[0] == '/' || strpbrk(v, " \t\r\n"))
    return fail(L, s, "key '%s': not an http(s) URL (the value is not repeated: a "
                "webhook URL is a secret); write it as \"https://HOST/PATH\" without "
                "spaces", key);
  return 0;
}

static int walk_group(loader *L, const config_setting_t *g, const key_spec *table,
                      void *base, const char *where);
static int get_float(loader *L, const config_setting_t *s, const key_spec *k,
                     const char *key, double *out);
static int apply_verdict_metrics(loader *L, const config_setting_t *s, const key_spec *k,
                                 const char *key);

static int apply_tags(loader *L, const config_setting_t *s, const char *key) {
  if (config_setting_type(s) != CONFIG_TYPE_GROUP)
    return fail(L, s, "key '%s': expected a group of strings, e.g. tags = { host = "
                "\"bench-1\"; };, got %s", key, type_word(config_setting_type(s)));
  ps_config *c = L->c;
  for (size_t i = 0; c->tags && i < c->ntags; i++) {
    free(c->tags[i].key);
    free(c->tags[i].value);
  }
  free(c->tags);
  c->tags = NULL;
  c->ntags = 0;
  int n = config_setting_length(s);
  if (n == 0)
    return 0;
  c->tags = calloc((size_t)n, sizeof *c->tags);
  if (!c->tags)
    return fail(L, s, "out of memory");
  for (int i = 0; i < n; i++) {
    const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
    const char *name = config_setting_name(e);
    if (config_setting_type(e) != CONFIG_TYPE_STRING)
      return fail(L, e, "key 'tags.%s': expected a string, got %s; tag values are "
                  "strings: %s = \"...\";", name, type_word(config_setting_type(e)),
                  name);
    const char *v = config_setting_get_string(e);
    if (strcmp(name, "time") == 0)
      return fail(L, e, "key 'tags.time': InfluxDB does not accept a tag named "
                  "'time'; rename it");
    if (!v[0])
      return fail(L, e, "key 'tags.%s': the value is empty and InfluxDB drops empty "
                  "tags; give it a value or remove it", name);
    if (v[strlen(v) - 1] == '\\' || strpbrk(v, "\r\n"))
      return fail(L, e, "key 'tags.%s': a tag value cannot end in a backslash or "
                  "hold a line break; change the value", name);
    c->tags[i].key = strdup(name);
    c->tags[i].value = strdup(v);
    c->ntags = (size_t)i + 1;
    if (!c->tags[i].key || !c->tags[i].value)
      return fail(L, e, "out of memory");
  }
  return 0;
}

static int check_source(loader *L, const config_setting_t *g, ps_source_cfg *src,
                        const char *where) {
  int has_format = 0;
  for (int i = 0; i < config_setting_length(g); i++) {
    const config_setting_t *e = config_setting_get_elem(g, (unsigned)i);
    if (strcmp(config_setting_name(e), "format") == 0)
      has_format = 1;
  }
  if (!src->path || !src->path[0])
    return fail(L, g, "%s has no 'path'; add path = \"/dir/of/results\"; (a "
                "directory, a file or a glob)", where);
  if (!has_format)
    return fail(L, g, "%s (%s) has no 'format'; add format = \"...\"; with one of "
                "\"jsonl\", \"lp\", \"loadgen\", \"dss-bench\" or \"locust\"",
                where, src->path);
  if (src->format != PS_FMT_JSONL) {
    for (int i = 0; i < config_setting_length(g); i++) {
      const config_setting_t *e = config_setting_get_elem(g, (unsigned)i);
      for (const key_spec *k = source_keys; k->name; k++)
        if (k->jsonl_only && strcmp(k->name, config_setting_name(e)) == 0)
          return fail(L, e, "key '%s' in %s: only jsonl sources use it, this one is "
                      "\"%s\"; remove the key or set format = \"jsonl\"",
                      k->name, where, ps_format_name(src->format));
    }
  } else if (!src->time_key) {
    return fail(L, g, "%s (%s) is jsonl but has no 'time_key'; every point needs its "
                "time from the data: add time_key = \"ts\"; (and time_unit if it is "
                "not seconds)", where, src->path);
  }
  if (src->no_new_run_after_s >= 0 && src->format != PS_FMT_LOADGEN &&
      src->format != PS_FMT_DSS_BENCH)
    return fail(L, config_setting_get_member(g, "no_new_run_after_s"),
                "key 'no_new_run_after_s' in %s: only loadgen and dss-bench sources "
                "have runs, this one is \"%s\"; remove the key",
                where, ps_format_name(src->format));
  return 0;
}

static int apply_sources(loader *L, const config_setting_t *s, const char *key) {
  int t = config_setting_type(s);
  if (t != CONFIG_TYPE_LIST) {
    if (t == CONFIG_TYPE_GROUP)
      return fail(L, s, "key '%s': expected a list of groups, got a single group; "
                  "wrap it in parentheses: sources = ( { ... } );", key);
    return fail(L, s, "key '%s': expected a list of groups, e.g. sources = ( { path "
                "= \"/srv/loadgen/results\"; format = \"loadgen\"; } );, got %s",
                key, type_word(t));
  }
  ps_config *c = L->c;
  for (size_t i = 0; c->sources && i < c->nsources; i++)
    ps_source_free(&c->sources[i]);
  free(c->sources);
  c->sources = NULL;
  c->nsources = 0;
  int n = config_setting_length(s);
  if (n == 0)
    return 0;
  c->sources = calloc((size_t)n, sizeof *c->sources);
  if (!c->sources)
    return fail(L, s, "out of memory");
  for (int i = 0; i < n; i++) {
    const config_setting_t *g = config_setting_get_elem(s, (unsigned)i);
    char where[48];
    snprintf(where, sizeof where, "source %d", i + 1);
    if (config_setting_type(g) != CONFIG_TYPE_GROUP)
      return fail(L, g, "%s: expected a group { path = ...; format = ...; }, got %s",
                  where, type_word(config_setting_type(g)));
    ps_source_cfg *src = &c->sources[i];
    ps_source_defaults(src);
    c->nsources = (size_t)i + 1;
    src->line = (int)config_setting_source_line(g);
    int rc = walk_group(L, g, source_keys, src, where);
    if (!rc)
      rc = check_source(L, g, src, where);
    if (rc)
      return rc;
  }
  return 0;
}

static int apply_key(loader *L, const config_setting_t *s, const key_spec *k,
                     void *base) {
  ps_buf kb;
  ps_buf_init(&kb, 0);
  setting_path(&kb, s);
  const char *key = kb.data ? kb.data : k->name;
  int rc = 0;
  switch (k->kind) {
  case K_STR:
  case K_URL:
  case K_HOOK_URL: {
    const char *v = NULL;
    rc = want_string(L, s, k, key, &v);
    if (!rc && k->min > 0 && !v[0])
      rc = fail(L, s, "key '%s': must not be empty; give %s", key, k->doc);
    if (!rc && k->kind == K_URL)
      rc = check_url(L, s, key, v);
    if (!rc && k->kind == K_HOOK_URL)
      rc = check_hook_url(L, s, key, v);
    if (!rc)
      rc = set_string(L, str_at(base, k->offset), v);
    break;
  }
  case K_INT: {
    int64_t v = 0;
    rc = get_int(L, s, k, key, &v);
    if (!rc)
      *(int64_t *)((char *)base + k->offset) = v;
    break;
  }
  case K_BOOL:
    if (config_setting_type(s) != CONFIG_TYPE_BOOL)
      rc = fail(L, s, "key '%s': expected true or false (without quotes), got %s; "
                "write %s = true; or %s = false;", key,
                type_word(config_setting_type(s)), k->name, k->name);
    else
      *(int *)((char *)base + k->offset) = config_setting_get_bool(s) ? 1 : 0;
    break;
  case K_ENUM: {
    int v = 0;
    rc = apply_enum(L, s, k, key, &v);
    if (!rc)
      *(int *)((char *)base + k->offset) = v;
    break;
  }
  case K_STRLIST:
    rc = apply_strlist(L, s, k, key, base);
    break;
  case K_ENUMLIST:
    rc = apply_enumlist(L, s, k, key, base);
    break;
  case K_TYPES:
    rc = apply_types(L, s, k, key, base);
    break;
  case K_GROUP:
    if (config_setting_type(s) != CONFIG_TYPE_GROUP)
      rc = fail(L, s, "key '%s': expected a group %s = { ... };, got %s", key, key,
                type_word(config_setting_type(s)));
    else
      rc = walk_group(L, s, k->sub, base, key);
    break;
  case K_TAGS:
    rc = apply_tags(L, s, key);
    break;
  case K_SOURCES:
    rc = apply_sources(L, s, key);
    break;
  case K_FLOAT:
    rc = get_float(L, s, k, key, (double *)((char *)base + k->offset));
    break;
  case K_VMETRICS:
    rc = apply_verdict_metrics(L, s, k, key);
    break;
  }
  ps_buf_free(&kb);
  return rc;
}

static int walk_group(loader *L, const config_setting_t *g, const key_spec *table,
                      void *base, const char *where) {
  int n = config_setting_length(g);
  for (int i = 0; i < n; i++) {
    const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
    const char *name = config_setting_name(s);
    const key_spec *k = table;
    while (k->name && strcmp(k->name, name) != 0)
      k++;
    if (!k->name)
      return fail_unknown(L, s, table, where);
    int rc = apply_key(L, s, k, base);
    if (rc)
      return rc;
  }
  return 0;
}

/* ---- verdicts ------------------------------------------------------------ */

/* The loadgen_run fields a verdict can judge: the run rows of the figures
 * table (core/figures.h), as a key table, so that a misspelt metric gets
 * the same suggestion as a misspelt key. Filled once; the same every time. */
static const key_spec *verdict_metric_fields(void) {
  static key_spec fields[64];
  if (!fields[0].name) {
    size_t n = 0;
    for (size_t i = 0; i < ps_nfigures && n + 1 < sizeof fields / sizeof fields[0]; i++)
      if (ps_figures[i].scope == PS_FIG_RUN)
        fields[n++].name = ps_figures[i].name;
  }
  return fields;
}

static void verdicts_defaults(ps_verdicts_cfg *v) {
  memset(v, 0, sizeof *v);
  v->significance = 0.05;
  v->min_runs = 5;
  v->window_runs = 60;
  v->stage_drift_pct = 10.0;
  v->dss.min_change_pct = 5.0;
  v->dss.reference_arm = strdup("");
  /* The headline figures, with their defaults (core/figures.h). */
  size_t n = PS_FIGURES_NHEADLINE;
  v->metrics = calloc(n, sizeof *v->metrics);
  for (size_t i = 0; v->metrics && i < n; i++) {
    ps_verdict_metric_cfg *m = &v->metrics[v->nmetrics];
    m->name = strdup(ps_figures[i].name);
    if (!m->name)
      break;
    m->worse = ps_figures[i].worse;
    m->min_change = ps_figures[i].min_change;
    m->unit = ps_figures[i].change_unit;
    m->enabled = 1;
    v->nmetrics++;
  }
}

static void verdicts_free(ps_verdicts_cfg *v) {
  for (size_t i = 0; v->metrics && i < v->nmetrics; i++)
    free(v->metrics[i].name);
  free(v->metrics);
  free(v->dss.reference_arm);
  memset(v, 0, sizeof *v);
}

const ps_verdict_metric_cfg *ps_verdict_metric_find(const ps_verdicts_cfg *v,
                                                    const char *name) {
  for (size_t i = 0; v && name && i < v->nmetrics; i++)
    if (strcmp(v->metrics[i].name, name) == 0)
      return &v->metrics[i];
  return NULL;
}

static int get_float(loader *L, const config_setting_t *s, const key_spec *k,
                     const char *key, double *out) {
  int t = config_setting_type(s);
  double lo = (double)k->min / 1e6, hi = (double)k->max / 1e6, v = 0;
  if (t == CONFIG_TYPE_FLOAT) {
    v = config_setting_get_float(s);
  } else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
    int64_t whole = config_setting_get_int64(s);
    if (t == CONFIG_TYPE_INT && reread_int(L, s, &whole) == -ERANGE)
      return fail(L, s, "key '%s': the number is out of range; use a value from %g "
                  "to %g (%s)", key, lo, hi, k->doc);
    v = (double)whole;
  } else {
    return fail(L, s, "key '%s': expected a number (%s), got %s; write the number "
                "without quotes", key, k->doc, type_word(t));
  }
  if (!isfinite(v) || v < lo || v > hi)
    return fail(L, s, "key '%s': %g is out of range; use a value from %g to %g (%s)",
                key, v, lo, hi, k->doc);
  *out = v;
  return 0;
}

/* verdicts.metrics = { NAME = { ... }; ... }: a name among the defaults
 * changes only the keys given; another loadgen_run field is added, and must
 * then say which direction is worse. */
static int apply_verdict_metrics(loader *L, const config_setting_t *s, const key_spec *k,
                                 const char *key) {
  if (config_setting_type(s) != CONFIG_TYPE_GROUP)
    return fail(L, s, "key '%s': expected %s, e.g. metrics = { cycleAvgDuration = { "
                "min_change = 8.0; }; };, got %s", key, k->doc,
                type_word(config_setting_type(s)));
  ps_verdicts_cfg *v = &L->c->verdicts;
  for (int i = 0; i < config_setting_length(s); i++) {
    const config_setting_t *g = config_setting_get_elem(s, (unsigned)i);
    const char *name = config_setting_name(g);
    ps_buf where;
    ps_buf_init(&where, 0);
    ps_buf_printf(&where, "%s.%s", key, name);
    const char *w = where.data ? where.data : name;
    int rc = 0;
    ps_verdict_metric_cfg *m = (ps_verdict_metric_cfg *)ps_verdict_metric_find(v, name);
    const key_spec *field = verdict_metric_fields();
    while (field->name && strcmp(field->name, name) != 0)
      field++;
    if (!field->name) {
      const char *near = nearest_key(verdict_metric_fields(), name);
      if (near)
        rc = fail(L, g, "key '%s': '%s' is not a loadgen_run field a verdict can "
                  "judge; did you mean '%s'?", w, name, near);
      else
        rc = fail(L, g, "key '%s': '%s' is not a loadgen_run field a verdict can "
                  "judge; use one of the numeric run fields of docs/schema.md "
                  "(e.g. live_avgLag)", w, name);
    } else if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
      rc = fail(L, g, "key '%s': expected a group, e.g. %s = { worse = \"higher\"; "
                "min_change = 5.0; };, got %s", w, name,
                type_word(config_setting_type(g)));
    } else if (!m && !config_setting_get_member(g, "worse")) {
      rc = fail(L, g, "key '%s': %s is not judged by default, so say which "
                "direction is a regression: add worse = \"higher\"; or worse = "
                "\"lower\";", w, name);
    } else if (!m) {
      ps_verdict_metric_cfg *grown =
          realloc(v->metrics, (v->nmetrics + 1) * sizeof *v->metrics);
      if (!grown) {
        rc = fail(L, g, "out of memory");
      } else {
        v->metrics = grown;
        m = &v->metrics[v->nmetrics];
        memset(m, 0, sizeof *m);
        m->name = strdup(name);
        m->min_change = 5.0;
        m->enabled = 1;
        if (m->name)
          v->nmetrics++;
        else
          rc = fail(L, g, "out of memory");
      }
    }
    if (!rc)
      rc = walk_group(L, g, k->sub, m, w);
    ps_buf_free(&where);
    if (rc)
      return rc;
  }
  return 0;
}

static int check_verdicts(loader *L, const config_setting_t *root) {
  const ps_verdicts_cfg *v = &L->c->verdicts;
  if (v->window_runs < v->min_runs)
    return fail(L, config_setting_get_member(root, "verdicts"),
                "key 'verdicts.window_runs': %lld is less than verdicts.min_runs "
                "(%lld), so no run would ever get a verdict; raise window_runs or "
                "lower min_runs", (long long)v->window_runs, (long long)v->min_runs);
  return 0;
}

/* alerts: a webhook needs exactly one of url and url_file. */
static int check_alerts(loader *L, const config_setting_t *root) {
  ps_config *c = L->c;
  const config_setting_t *hook = config_setting_lookup(
      (config_setting_t *)root, "alerts.webhook");
  if (!hook)
    return 0;
  c->alerts.webhook.given = 1;
  int has_url = c->alerts.webhook.url && c->alerts.webhook.url[0];
  int has_file = c->alerts.webhook.url_file && c->alerts.webhook.url_file[0];
  if (has_url && has_file)
    return fail(L, hook, "key 'alerts.webhook': both url and url_file are set; keep "
                "url_file (the URL is a secret) and remove url");
  if (!has_url && !has_file)
    return fail(L, hook, "key 'alerts.webhook': needs url_file = \"/etc/perfship/"
                "webhook_url\"; (a file holding the URL, mode 600) or url = \"...\";");
  return 0;
}

/* Checks that involve more than one key. */
static int check_whole(loader *L, const config_setting_t *root) {
  ps_config *c = L->c;
  const config_setting_t *influx = config_setting_get_member(root, "influxdb");
  const config_setting_t *batch = config_setting_get_member(root, "batch");
  if (c->influxdb.api == PS_API_V1 && (!c->influxdb.database || !c->influxdb.database[0]))
    return fail(L, influx, "key 'influxdb.database': is empty but api is \"v1\"; set "
                "database = \"perf\"; (or api = \"v2\" with a bucket)");
  if (c->influxdb.api == PS_API_V2 && (!c->influxdb.bucket || !c->influxdb.bucket[0]))
    return fail(L, influx, "key 'influxdb.bucket': is empty but api is \"v2\"; set "
                "bucket = \"perf\"; (and org if the server needs one)");
  if (c->report.path && c->report.path[0] && c->report.path[0] != '/')
    return fail(L, config_setting_get_member(root, "report"),
                "key 'report.path': \"%s\" is not an absolute path; the agent's working "
                "directory is not yours: write the whole path, e.g. "
                "\"/var/lib/perfship/report/index.html\"", c->report.path);
  if (c->batch.max_pending_bytes < c->batch.max_bytes)
    return fail(L, batch, "key 'batch.max_pending_bytes': %lld is less than "
                "batch.max_bytes (%lld), so not even one batch could be held; raise "
                "max_pending_bytes or lower max_bytes",
                (long long)c->batch.max_pending_bytes, (long long)c->batch.max_bytes);
  int rc = check_verdicts(L, root);
  return rc ? rc : check_alerts(L, root);
}

static int load_file(ps_config *c, const char *path, ps_buf *err);

int ps_config_load(ps_config *c, const char *path, ps_buf *err) {
  ps_buf discard;
  ps_buf_init(&discard, 4096);
  int rc = load_file(c, path, err ? err : &discard);
  ps_buf_free(&discard);
  return rc;
}

static int load_file(ps_config *c, const char *path, ps_buf *err) {
  loader L = {c, err, path, NULL, 0};
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
    rc = walk_group(&L, root, top_keys, c, "the top level");
    if (!rc)
      rc = check_whole(&L, root);
  }
  config_destroy(&cf);
  free(dir);
  free(L.text);
  return rc;
}

/* ---- secrets ----------------------------------------------------------- */

/* Frees a buffer that held a secret, zeroed first. */
static void wipe(ps_buf *b) {
  if (b->data)
    explicit_bzero(b->data, b->cap);
  ps_buf_free(b);
}

static int read_secret(const char *key, const char *path, const char *cfgfile,
                       char **out, ps_buf *err) {
  /* Symlinks are followed: mounted secrets (Kubernetes, Docker) are links
   * into a timestamped folder. What is checked below (a regular file, mode
   * without group/other access) is the target, through the open fd. */
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    ps_buf_printf(err, "%s: cannot open the file named by %s in %s: %s; %s",
                  path, key, cfgfile, strerror(e),
                  e == ENOENT ? "create it (mode 600) or fix the path"
                              : "make it readable by the user perfship runs as");
    return -e;
  }
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    ps_buf_printf(err, "%s: %s must name a regular file; fix the path in %s",
                  path, key, cfgfile);
    return -EINVAL;
  }
  if (st.st_mode & 077) {
    close(fd);
    ps_buf_printf(err, "%s: group or others may access this secret (mode %03o); run "
                  "`chmod 600 %s` (named by %s in %s)",
                  path, (unsigned)(st.st_mode & 0777), path, key, cfgfile);
    return -EPERM;
  }
  /* One allocation that is never copied by a realloc (ps_read_whole asks
   * for at most limit + 1 bytes), so wiping it wipes every copy. */
  ps_buf text;
  ps_buf_init(&text, 0);
  int rc = ps_read_whole(fd, MAX_SECRET_BYTES, &text);
  close(fd);
  if (rc == -EFBIG) {
    wipe(&text);
    ps_buf_printf(err, "%s: longer than %d bytes, which is not a password or token; "
                  "check %s in %s", path, MAX_SECRET_BYTES, key, cfgfile);
    return -EFBIG;
  }
  if (rc < 0) {
    wipe(&text);
    ps_buf_printf(err, "%s: cannot read the file named by influxdb.%s in %s: %s", path,
                  key, cfgfile, strerror(-rc));
    return rc;
  }
  char *buf = text.data;
  size_t got = text.len;
  while (got && (buf[got - 1] == '\n' || buf[got - 1] == '\r'))
    got--;
  if (got == 0 || memchr(buf, '\n', got) || memchr(buf, '\r', got) ||
      memchr(buf, '\0', got)) {
    wipe(&text);
    ps_buf_printf(err, "%s: %s; the file must hold the secret alone on one line "
                  "(%s in %s)", path, got == 0 ? "is empty" : "holds more than one line",
                  key, cfgfile);
    return -EINVAL;
  }
  char *s = malloc(got + 1);
  if (s) {
    memcpy(s, buf, got);
    s[got] = '\0';
  }
  wipe(&text);
  if (!s)
    return -ENOMEM;
  free_secret(out);
  *out = s;
  return 0;
}

int ps_config_load_secrets(ps_config *c, ps_buf *err) {
  const char *cfgfile = c->file ? c->file : "the built-in defaults";
  int rc;
  if (c->influxdb.password_file && c->influxdb.password_file[0]) {
    rc = read_secret("influxdb.password_file", c->influxdb.password_file, cfgfile,
                     &c->influxdb.password, err);
    if (rc)
      return rc;
  }
  const char *env = getenv("PERFSHIP_TOKEN");
  if (env && env[0]) {
    /* The token becomes an HTTP header line: a control character (the
     * newline of `export PERFSHIP_TOKEN="$(cat file)"`-style mistakes)
     * would end that line and forge others. */
    for (const char *q = env; *q; q++)
      if ((unsigned char)*q < 0x20 || *q == 0x7f) {
        ps_buf_printf(err, "PERFSHIP_TOKEN holds a control character (a line "
                      "break?); set it to the token alone");
        return -EINVAL;
      }
    char *t = strdup(env);
    if (!t)
      return -ENOMEM;
    free_secret(&c->influxdb.token);
    c->influxdb.token = t;
  } else if (c->influxdb.token_file && c->influxdb.token_file[0]) {
    rc = read_secret("influxdb.token_file", c->influxdb.token_file, cfgfile,
                     &c->influxdb.token, err);
    if (rc)
      return rc;
  }
  return ps_config_load_alert_secrets(c, err);
}

int ps_config_load_alert_secrets(ps_config *c, ps_buf *err) {
  const char *cfgfile = c->file ? c->file : "the built-in defaults";
  const char *path = c->alerts.webhook.url_file;
  if (!c->alerts.webhook.given || !path || !path[0])
    return 0;
  int rc = read_secret("alerts.webhook.url_file", path, cfgfile,
                       &c->alerts.webhook.url_from_file, err);
  if (rc)
    return rc;
  /* The file's content passes the loader's URL check too, without being
   * repeated in the message. */
  const char *u = c->alerts.webhook.url_from_file;
  const char *rest = after_http_scheme(u);
  if (!rest || !rest[0] || rest[0] == '/') {
    ps_buf_printf(err, "%s: does not hold an http(s) URL (alerts.webhook.url_file in "
                  "%s); write the webhook's URL alone on one line", path, cfgfile);
    free_secret(&c->alerts.webhook.url_from_file);
    return -EINVAL;
  }
  return 0;
}

const char *ps_config_webhook_url(const ps_config *c) {
  if (!c->alerts.webhook.given)
    return NULL;
  if (c->alerts.webhook.url_file && c->alerts.webhook.url_file[0])
    return c->alerts.webhook.url_from_file;
  return c->alerts.webhook.url && c->alerts.webhook.url[0] ? c->alerts.webhook.url : NULL;
}
