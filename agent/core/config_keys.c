/*
 * config_keys.c: the names of the enums and one row per configuration key,
 * each with its default (agent/core/config_private.h). The defaults are the
 * ones perfship.cfg(5) and config/perfship.cfg show; tests/unit/test_config.c
 * holds the three to each other.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config_private.h"

/* ---- names ------------------------------------------------------------- */

static const ps_cfg_enum api_names[] = {{"v1", PS_API_V1}, {"v2", PS_API_V2}, {NULL, 0}};
static const ps_cfg_enum gzip_names[] = {
    {"auto", PS_GZIP_AUTO}, {"true", PS_GZIP_ON}, {"on", PS_GZIP_ON},
    {"false", PS_GZIP_OFF}, {"off", PS_GZIP_OFF}, {NULL, 0}};
static const ps_cfg_enum start_at_names[] = {
    {"beginning", PS_START_BEGINNING}, {"end", PS_START_END}, {NULL, 0}};
static const ps_cfg_enum log_level_names[] = {
    {"error", PS_LOG_ERROR}, {"warning", PS_LOG_WARNING},
    {"info", PS_LOG_INFO},   {"debug", PS_LOG_DEBUG},   {NULL, 0}};
const ps_cfg_enum ps_cfg_format_names[] = {{"jsonl", PS_FMT_JSONL},
                                           {"lp", PS_FMT_LP},
                                           {"loadgen", PS_FMT_LOADGEN},
                                           {"dss-bench", PS_FMT_DSS_BENCH},
                                           {"locust", PS_FMT_LOCUST},
                                           {"benchmarker", PS_FMT_BENCHMARKER},
                                           {NULL, 0}};
static const ps_cfg_enum ftype_names[] = {
    {"integer", PS_F_INT}, {"unsigned", PS_F_UINT}, {"float", PS_F_FLOAT},
    {"string", PS_F_STRING}, {"boolean", PS_F_BOOL}, {NULL, 0}};
static const ps_cfg_enum time_unit_names[] = {
    {"s", 0}, {"ms", -3}, {"us", -6}, {"ns", -9}, {NULL, 0}};
/* alerts: the event names (alerts.on, the perfship_alert tag) and the
 * webhook's body formats. */
static const ps_cfg_enum alert_kind_names[] = {
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
static const ps_cfg_enum webhook_format_names[] = {
    {"json", PS_WEBHOOK_JSON}, {"slack", PS_WEBHOOK_SLACK}, {NULL, 0}};
/* verdicts (docs/verdicts.md) */
static const ps_cfg_enum worse_names[] = {
    {"higher", PS_WORSE_HIGHER}, {"lower", PS_WORSE_LOWER}, {NULL, 0}};
static const ps_cfg_enum change_unit_names[] = {
    {"percent", PS_CHANGE_PERCENT}, {"points", PS_CHANGE_POINTS}, {NULL, 0}};
static const ps_cfg_enum series_by_names[] = {
    {"host", PS_SERIES_BY_HOST}, {"test_type", PS_SERIES_BY_TEST_TYPE}, {NULL, 0}};

const char *ps_format_name(ps_format_id f) {
  return ps_cfg_enum_name_of(ps_cfg_format_names, (int)f);
}

int ps_format_from_name(const char *name, ps_format_id *out) {
  int v = 0;
  int rc = ps_cfg_enum_lookup(ps_cfg_format_names, name, &v);
  if (!rc)
    *out = (ps_format_id)v;
  return rc;
}

int ps_ftype_from_name(const char *name, ps_ftype *out) {
  int v = 0;
  int rc = ps_cfg_enum_lookup(ftype_names, name, &v);
  if (!rc)
    *out = (ps_ftype)v;
  return rc;
}

int ps_time_unit_from_name(const char *name, int *exp_out) {
  return ps_cfg_enum_lookup(time_unit_names, name, exp_out);
}

const char *ps_alert_kind_name(ps_alert_kind k) {
  return ps_cfg_enum_name_of(alert_kind_names, (int)k);
}

int ps_alert_kind_from_name(const char *name, ps_alert_kind *out) {
  int v = 0;
  int rc = ps_cfg_enum_lookup(alert_kind_names, name, &v);
  if (!rc)
    *out = (ps_alert_kind)v;
  return rc;
}

/* ---- the key tables ---------------------------------------------------- */

#define CFG(m) offsetof(ps_config, m)
#define SRC(m) offsetof(ps_source_cfg, m)
#define VMC(m) offsetof(ps_verdict_metric_cfg, m)
#define MILLIONTHS(x) ((int64_t)((x) * 1000000.0))
/* Upper bounds for durations. Their users turn them into nanoseconds
 * (stall detection) or add them to uv_now() (deadlines, settling): an
 * unbounded value overflowed there, into undefined behaviour or a deadline
 * in the past. Ten years, and a day between two timer ticks, are far beyond
 * any useful setting. */
#define MAX_SECONDS ((int64_t)10 * 365 * 86400)
#define MAX_MS ((int64_t)86400000)
#define GROUP(key, table) \
  {.name = key, .kind = PS_K_GROUP, .sub = table, .doc = "a group { ... }"}
#define END {.name = NULL}

static const ps_cfg_key influxdb_keys[] = {
    {.name = "url", .kind = PS_K_URL, .offset = CFG(influxdb.url),
     .def_str = PS_INFLUX_DEFAULT_URL,
     .doc = "the server's base URL, e.g. \"" PS_INFLUX_DEFAULT_URL "\""},
    {.name = "api", .kind = PS_K_ENUM, .offset = CFG(influxdb.api), .names = api_names,
     .def_int = PS_API_V1, .doc = "the write API"},
    {.name = "database", .kind = PS_K_STR, .offset = CFG(influxdb.database),
     .def_str = "perf", .doc = "a database name"},
    {.name = "retention_policy", .kind = PS_K_STR, .offset = CFG(influxdb.retention_policy),
     .def_str = "", .doc = "a retention policy name (\"\" for the default)"},
    {.name = "username", .kind = PS_K_STR, .offset = CFG(influxdb.username),
     .def_str = "", .doc = "a user name"},
    {.name = "password_file", .kind = PS_K_STR, .offset = CFG(influxdb.password_file),
     .def_str = "", .doc = "the path of a file holding the password"},
    {.name = "org", .kind = PS_K_STR, .offset = CFG(influxdb.org),
     .def_str = "", .doc = "an organisation name"},
    {.name = "bucket", .kind = PS_K_STR, .offset = CFG(influxdb.bucket),
     .def_str = "", .doc = "a bucket name"},
    {.name = "token_file", .kind = PS_K_STR, .offset = CFG(influxdb.token_file),
     .def_str = "", .doc = "the path of a file holding the API token"},
    /* gzip = true / false reads as naturally as the strings do */
    {.name = "gzip", .kind = PS_K_ENUM, .offset = CFG(influxdb.gzip), .names = gzip_names,
     .takes_bool = 1, .def_int = PS_GZIP_AUTO, .doc = "when to compress request bodies"},
    {.name = "timeout_ms", .kind = PS_K_INT, .offset = CFG(influxdb.timeout_ms),
     .min = 1, .max = 3600000, .def_int = 10000, .doc = "milliseconds"},
    {.name = "tls_ca_file", .kind = PS_K_STR, .offset = CFG(influxdb.tls_ca_file),
     .def_str = "", .doc = "the path of a CA bundle"},
    {.name = "tls_verify", .kind = PS_K_BOOL, .offset = CFG(influxdb.tls_verify),
     .def_int = 1, .doc = "true or false"},
    {.name = "create_database", .kind = PS_K_BOOL, .offset = CFG(influxdb.create_database),
     .def_int = 1, .doc = "true or false"},
    {.name = "unreachable_deadline_s", .kind = PS_K_INT,
     .offset = CFG(influxdb.unreachable_deadline_s), .min = 1, .max = MAX_SECONDS,
     .def_int = 300, .doc = "seconds"},
    END};

/* one row a key, as the tables around it */
/* clang-format off */
static const ps_cfg_key batch_keys[] = {
    {.name = "max_points", .kind = PS_K_INT, .offset = CFG(batch.max_points),
     .min = 1, .max = 1000000, .def_int = 5000, .doc = "points per request"},
    {.name = "max_bytes", .kind = PS_K_INT, .offset = CFG(batch.max_bytes),
     .min = 1024, .max = (int64_t)1 << 30, .def_int = 1048576, .doc = "bytes per request"},
    {.name = "flush_interval_ms", .kind = PS_K_INT, .offset = CFG(batch.flush_interval_ms),
     .min = 1, .max = 3600000, .def_int = 1000, .doc = "milliseconds"},
    {.name = "max_pending_bytes", .kind = PS_K_INT, .offset = CFG(batch.max_pending_bytes),
     .min = 1024, .max = INT64_MAX, .def_int = 4194304, .doc = "bytes"},
    END};
/* clang-format on */

static const ps_cfg_key watch_keys[] = {
    {.name = "rescan_interval_ms", .kind = PS_K_INT, .offset = CFG(watch.rescan_interval_ms),
     .min = 1, .max = MAX_MS, .def_int = 30000, .doc = "milliseconds"},
    {.name = "settle_ms", .kind = PS_K_INT, .offset = CFG(watch.settle_ms),
     .min = 0, .max = MAX_MS, .def_int = 2000, .doc = "milliseconds"},
    {.name = "max_line_bytes", .kind = PS_K_INT, .offset = CFG(watch.max_line_bytes),
     .min = 1024, .max = (int64_t)1 << 40, .def_int = 67108864, .doc = "bytes"},
    {.name = "start_at", .kind = PS_K_ENUM, .offset = CFG(watch.start_at),
     .names = start_at_names, .def_int = PS_START_BEGINNING,
     .doc = "where to start reading files found at start"},
    END};

static const ps_cfg_key selfstats_keys[] = {
    {.name = "interval_ms", .kind = PS_K_INT, .offset = CFG(selfstats.interval_ms),
     .min = 1, .max = MAX_MS, .def_int = 10000, .doc = "milliseconds"},
    END};

/* alerts (docs/alerts.md). */
static const ps_cfg_key webhook_keys[] = {
    {.name = "url", .kind = PS_K_HOOK_URL, .offset = CFG(alerts.webhook.url),
     .def_str = "", .doc = "the URL to POST each event to"},
    {.name = "url_file", .kind = PS_K_STR, .offset = CFG(alerts.webhook.url_file),
     .nonempty = 1, .def_str = "", .doc = "the path of a file holding the URL"},
    {.name = "tls_ca_file", .kind = PS_K_STR, .offset = CFG(alerts.webhook.tls_ca_file),
     .def_str = "", .doc = "the path of a CA bundle"},
    {.name = "format", .kind = PS_K_ENUM, .offset = CFG(alerts.webhook.format),
     .names = webhook_format_names, .def_int = PS_WEBHOOK_JSON, .doc = "the body posted"},
    {.name = "timeout_ms", .kind = PS_K_INT, .offset = CFG(alerts.webhook.timeout_ms),
     .min = 1, .max = 600000, .def_int = 5000, .doc = "milliseconds"},
    END};

static const ps_cfg_key alerts_keys[] = {
    {.name = "stall_after_s", .kind = PS_K_INT, .offset = CFG(alerts.stall_after_s),
     .min = 1, .max = MAX_SECONDS, .def_int = 1800, .doc = "seconds"},
    {.name = "no_new_run_after_s", .kind = PS_K_INT, .offset = CFG(alerts.no_new_run_after_s),
     .min = 0, .max = MAX_SECONDS, .def_int = 93600, .doc = "seconds, 0 for off"},
    {.name = "unhealthy_after_s", .kind = PS_K_INT, .offset = CFG(alerts.unhealthy_after_s),
     .min = 1, .max = MAX_SECONDS, .def_int = 600, .doc = "seconds"},
    {.name = "catch_up_s", .kind = PS_K_INT, .offset = CFG(alerts.catch_up_s),
     .min = 0, .max = MAX_SECONDS, .def_int = 21600, .doc = "seconds"},
    {.name = "min_interval_s", .kind = PS_K_INT, .offset = CFG(alerts.min_interval_s),
     .min = 0, .max = MAX_SECONDS, .def_int = 300, .doc = "seconds"},
    {.name = "exec", .kind = PS_K_STRLIST, .offset = CFG(alerts.exec),
     .offset2 = CFG(alerts.nexec),
     .doc = "the notifier's argv, e.g. [\"/usr/local/bin/notify\", \"--channel\", \"perf\"]"},
    {.name = "exec_timeout_ms", .kind = PS_K_INT, .offset = CFG(alerts.exec_timeout_ms),
     .min = 1, .max = 600000, .def_int = 10000, .doc = "milliseconds"},
    GROUP("webhook", webhook_keys),
    {.name = "on", .kind = PS_K_ENUMLIST, .offset = CFG(alerts.on), .names = alert_kind_names,
     .def_int = PS_ALERT_ON_DEFAULT,
     .doc = "a list of event names, e.g. [\"run_failed\", \"no_new_run\"]"},
    END};

/* verdicts = { ... } (docs/verdicts.md). A metric the file adds takes these
 * defaults, and must say `worse` itself (config_verdicts.c). */
static const ps_cfg_key verdict_metric_keys[] = {
    {.name = "worse", .kind = PS_K_ENUM, .offset = VMC(worse), .names = worse_names,
     .def_int = PS_WORSE_HIGHER, .doc = "which direction is a regression"},
    {.name = "min_change", .kind = PS_K_FLOAT, .offset = VMC(min_change),
     .min = 0, .max = MILLIONTHS(1e6), .def_num = 5.0,
     .doc = "the smallest change reported, in `unit`"},
    {.name = "unit", .kind = PS_K_ENUM, .offset = VMC(unit), .names = change_unit_names,
     .def_int = PS_CHANGE_PERCENT, .doc = "the unit of min_change"},
    {.name = "enabled", .kind = PS_K_BOOL, .offset = VMC(enabled), .def_int = 1,
     .doc = "true or false"},
    END};

static const ps_cfg_key verdicts_dss_keys[] = {
    {.name = "min_change_pct", .kind = PS_K_FLOAT, .offset = CFG(verdicts.dss.min_change_pct),
     .min = 0, .max = MILLIONTHS(1000), .def_num = 5.0, .doc = "percent"},
    {.name = "reference_arm", .kind = PS_K_STR, .offset = CFG(verdicts.dss.reference_arm),
     .def_str = "", .doc = "an arm's label (\"\" = the first arm)"},
    END};

static const ps_cfg_key verdicts_candidates_keys[] = {
    {.name = "series", .kind = PS_K_STRLIST, .offset = CFG(verdicts.candidates.series),
     .offset2 = CFG(verdicts.candidates.nseries),
     .doc = "the series (test types) whose runs are candidates, e.g. [\"manual\"]"},
    {.name = "against", .kind = PS_K_STR, .offset = CFG(verdicts.candidates.against),
     .def_str = "", .doc = "the series they are judged against, e.g. \"daily-perf\""},
    END};

/* "Want 0" (docs/verdicts.md, "Kernel growth against a limit"): 1 per
 * cycle is a starting point that lets a counter's rounding through a cycle
 * end pass and catches a leak of one object per cycle or more. */
static const ps_cfg_key verdicts_growth_keys[] = {
    {.name = "kernel_objects", .kind = PS_K_FLOAT,
     .offset = CFG(verdicts.max_growth_per_cycle[PS_GROWTH_KERNEL_OBJECTS]), .min = 0,
     .max = MILLIONTHS(1e6), .def_num = 1.0, .doc = "kernel objects per cycle"},
    {.name = "kp_unresolved", .kind = PS_K_FLOAT,
     .offset = CFG(verdicts.max_growth_per_cycle[PS_GROWTH_KP_UNRESOLVED]), .min = 0,
     .max = MILLIONTHS(1e6), .def_num = 1.0, .doc = "unresolved kernel promises per cycle"},
    {.name = "clist_entries", .kind = PS_K_FLOAT,
     .offset = CFG(verdicts.max_growth_per_cycle[PS_GROWTH_CLIST_ENTRIES]), .min = 0,
     .max = MILLIONTHS(1e6), .def_num = 1.0, .doc = "c-list entries per cycle"},
    END};

/* significance: the permutation count grows as 10 / significance, so the
 * bounds keep one test between 50 and 10,000 permutations. window_runs:
 * the test is O(n log n) per permutation; a thousand runs is years of
 * nightly runs. */
static const ps_cfg_key verdicts_keys[] = {
    {.name = "significance",
     .kind = PS_K_FLOAT,
     .offset = CFG(verdicts.significance),
     .min = MILLIONTHS(0.001),
     .max = MILLIONTHS(0.2),
     .def_num = 0.05,
     .doc = "the p-value at or below which a change counts"},
    {.name = "min_runs",
     .kind = PS_K_INT,
     .offset = CFG(verdicts.min_runs),
     .min = 4,
     .max = 1000,
     .def_int = 5,
     .doc = "successful runs before the first verdict"},
    {.name = "window_runs",
     .kind = PS_K_INT,
     .offset = CFG(verdicts.window_runs),
     .min = 4,
     .max = 1000,
     .def_int = 60,
     .doc = "the newest runs a verdict looks at"},
    {.name = "series_by",
     .kind = PS_K_ENUM,
     .offset = CFG(verdicts.series_by),
     .names = series_by_names,
     .def_int = PS_SERIES_BY_HOST,
     .doc = "\"host\" (a series per host) or \"test_type\" (every host together)"},
    {.name = "metrics",
     .kind = PS_K_VMETRICS,
     .offset = CFG(verdicts),
     .sub = verdict_metric_keys,
     .apply = ps_cfg_apply_verdict_metrics,
     .set_default = ps_cfg_verdict_metrics_defaults,
     .release = ps_cfg_verdict_metrics_free,
     .doc = "a group of metric = { worse = ...; min_change = ...; } groups"},
    {.name = "stage_drift_pct",
     .kind = PS_K_FLOAT,
     .offset = CFG(verdicts.stage_drift_pct),
     .min = 0,
     .max = MILLIONTHS(1000),
     .def_num = 10.0,
     .doc = "percent"},
    {.name = "stage_drift_boyd_points",
     .kind = PS_K_FLOAT,
     .offset = CFG(verdicts.stage_drift_boyd_points),
     .min = 0,
     .max = MILLIONTHS(100),
     .def_num = 5.0,
     .doc = "percentage points of the BOYD share"},
    GROUP("max_growth_per_cycle", verdicts_growth_keys),
    GROUP("dss", verdicts_dss_keys),
    GROUP("candidates", verdicts_candidates_keys),
    {.name = "compare_url",
     .kind = PS_K_STR,
     .offset = CFG(verdicts.compare_url),
     .def_str = "",
     .doc = "an http(s) URL with {good} and {bad}, e.g. "
            "\"https://github.com/Agoric/agoric-sdk/compare/{good}...{bad}\" (\"\" = none)"},
    END};

static const ps_cfg_key report_keys[] = {
    {.name = "path", .kind = PS_K_STR, .offset = CFG(report.path), .def_str = "",
     .doc = "the HTML file to keep current, e.g. \"/var/lib/perfship/report/index.html\" "
            "(\"\" = none)"},
    {.name = "since_days", .kind = PS_K_INT, .offset = CFG(report.since_days),
     .min = 1, .max = 3660, .def_int = 90, .doc = "days of runs the page shows"},
    {.name = "min_interval_s", .kind = PS_K_INT, .offset = CFG(report.min_interval_s),
     .min = 0, .max = MAX_SECONDS, .def_int = 300, .doc = "seconds between two regenerations"},
    {.name = "chart_js", .kind = PS_K_STR, .offset = CFG(report.chart_js), .nonempty = 1,
     .def_str = PS_REPORT_DEFAULT_CHART_JS, .doc = "the path of Chart.js (chart.min.js)"},
    END};

const ps_cfg_key ps_cfg_top_keys[] = {
    GROUP("influxdb", influxdb_keys),
    GROUP("batch", batch_keys),
    GROUP("watch", watch_keys),
    GROUP("selfstats", selfstats_keys),
    GROUP("alerts", alerts_keys),
    GROUP("verdicts", verdicts_keys),
    GROUP("report", report_keys),
    {.name = "state_dir",
     .kind = PS_K_STR,
     .offset = CFG(state_dir),
     .nonempty = 1,
     .def_str = "/var/lib/perfship",
     .doc = "a directory path"},
    {.name = "triage_file",
     .kind = PS_K_STR,
     .offset = CFG(triage_file),
     .def_str = "",
     .doc = "the path of a file of triage decisions, one a line (\"\" = none)"},
    {.name = "tags",
     .kind = PS_K_TAGS,
     .offset = CFG(tags),
     .offset2 = CFG(ntags),
     .apply = ps_cfg_apply_tags,
     .doc = "a group of strings"},
    {.name = "sources",
     .kind = PS_K_SOURCES,
     .offset = CFG(sources),
     .offset2 = CFG(nsources),
     .sub = ps_cfg_source_keys,
     .apply = ps_cfg_apply_sources,
     .doc = "a list of groups ( { ... }, ... )"},
    {.name = "log_level",
     .kind = PS_K_ENUM,
     .offset = CFG(log_level),
     .names = log_level_names,
     .def_int = PS_LOG_INFO,
     .doc = "the log level"},
    END};

/* A source's path and format have no default: the loader requires both.
 * no_new_run_after_s defaults to -1, outside its range: "take alerts' own". */
const ps_cfg_key ps_cfg_source_keys[] = {
    {.name = "path",
     .kind = PS_K_STR,
     .offset = SRC(path),
     .nonempty = 1,
     .doc = "a directory, a file or a glob"},
    {.name = "format",
     .kind = PS_K_ENUM,
     .offset = SRC(format),
     .names = ps_cfg_format_names,
     .def_int = PS_FMT_JSONL,
     .doc = "the format"},
    {.name = "measurement",
     .kind = PS_K_STR,
     .offset = SRC(measurement),
     .nonempty = 1,
     .mapping = 1,
     .def_str = "jsonl",
     .doc = "a measurement name"},
    {.name = "tag_keys",
     .kind = PS_K_STRLIST,
     .offset = SRC(tag_keys),
     .offset2 = SRC(ntag_keys),
     .mapping = 1,
     .doc = "a list of key names, e.g. [\"stage\"]"},
    {.name = "field_keys",
     .kind = PS_K_STRLIST,
     .offset = SRC(field_keys),
     .offset2 = SRC(nfield_keys),
     .mapping = 1,
     .doc = "a list of key names, e.g. [\"latency\"]"},
    {.name = "time_key",
     .kind = PS_K_STR,
     .offset = SRC(time_key),
     .nonempty = 1,
     .mapping = 1,
     .doc = "the key holding the timestamp"},
    {.name = "time_unit",
     .kind = PS_K_ENUM,
     .offset = SRC(time_unit_exp),
     .names = time_unit_names,
     .mapping = 1,
     .def_int = 0,
     .doc = "the unit of time_key"},
    {.name = "types",
     .kind = PS_K_TYPES,
     .offset = SRC(types),
     .offset2 = SRC(ntypes),
     .names = ftype_names,
     .mapping = 1,
     .doc = "a group of key = \"type\""},
    {.name = "no_new_run_after_s",
     .kind = PS_K_INT,
     .offset = SRC(no_new_run_after_s),
     .min = 0,
     .max = MAX_SECONDS,
     .def_int = -1,
     .doc = "seconds, 0 for off (alerts.no_new_run_after_s for this source)"},
    {.name = "arm",
     .kind = PS_K_STR,
     .offset = SRC(arm),
     .def_str = "",
     .doc = "the arm of a scenario that names none (benchmarker)"},
    END};
