/*
 * config: perfship's configuration, loaded from a libconfig file.
 *
 * Contract (perfship.cfg(5), config/perfship.cfg)
 * - ps_config_defaults() fills every setting with its default; loading a file
 *   only overrides what the file sets. A config with no file is valid.
 * - ps_config_load() rejects unknown keys, wrong types and bad values. On
 *   error it returns a negative errno and writes one message to `err`, of the
 *   form "FILE:LINE: what is wrong; what to do", naming the key.
 * - What depends on a source's format (which keys it takes, whether its
 *   files are runs) is asked of the caller's ps_source_rules_fn; core names
 *   no format but by its id and name.
 * - All strings in ps_config are owned by it (copied out of libconfig) and
 *   freed by ps_config_free(), which accepts NULL and half-loaded configs.
 * - Secrets (password, token) are read from the files named here or from
 *   PERFSHIP_TOKEN by ps_config_load_secrets(); they are never printed.
 */
#ifndef PS_CORE_CONFIG_H
#define PS_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/figures.h"
#include "core/point.h"

typedef enum { PS_API_V1 = 1, PS_API_V2 = 2 } ps_api;
typedef enum { PS_GZIP_AUTO = 0, PS_GZIP_ON, PS_GZIP_OFF } ps_gzip_mode;
typedef enum { PS_START_BEGINNING = 0, PS_START_END } ps_start_at;
typedef enum {
  PS_LOG_ERROR = 0,
  PS_LOG_WARNING,
  PS_LOG_INFO,
  PS_LOG_DEBUG
} ps_log_level;

typedef enum {
  PS_FMT_JSONL = 0,
  PS_FMT_LP,
  PS_FMT_LOADGEN,
  PS_FMT_DSS_BENCH,
  PS_FMT_LOCUST,
  PS_FMT_BENCHMARKER,
} ps_format_id;

/* A key -> declared type, for jsonl sources ("types" map). */
typedef struct ps_type_decl {
  char *key;
  ps_ftype type;
} ps_type_decl;

typedef struct ps_kv {
  char *key;
  char *value;
} ps_kv;

typedef struct ps_source_cfg {
  char *path;            /* a directory, a file, or a glob */
  ps_format_id format;
  /* jsonl mapping (also used by `convert -f jsonl`) */
  char *measurement;     /* default: "jsonl" */
  char **tag_keys;
  size_t ntag_keys;
  char **field_keys;     /* NULL/0: every scalar that is not a tag or the time */
  size_t nfield_keys;
  char *time_key;        /* NULL: no time key -> line rejected (no timestamp) */
  int time_unit_exp;     /* seconds per unit as power of ten: s=0 ms=-3 us=-6 ns=-9 */
  ps_type_decl *types;
  size_t ntypes;
  /* alerts: this source's no_new_run_after_s; -1 takes alerts' own */
  int64_t no_new_run_after_s;
  /* benchmarker: the arm of a scenario whose metadata and setup name none;
   * "" for none (docs/dss-locust.md) */
  char *arm;
  int line;              /* where the source was defined, for messages */
} ps_source_cfg;

/* influxdb.url when the file does not set it; the InfluxDB client
 * (influx/endpoint.h) falls back to it too, for configurations built in
 * code. The one place this address is written. */
#define PS_INFLUX_DEFAULT_URL "http://127.0.0.1:8086"
/* report.chart_js when the file does not set it: Debian's libjs-chart.js. */
#define PS_REPORT_DEFAULT_CHART_JS "/usr/share/javascript/chart.js/chart.min.js"

/* verdicts = { ... } (docs/verdicts.md). Kept in its own block: the alerts
 * and report settings grow beside it. */
/* ps_worse, ps_change_unit: core/figures.h, with the figures' defaults. */
/* What a series across revisions is: the test type (loadgen) or the test
 * (DSS) on one host, the default because the hardware is part of what is
 * measured, or the test type over every host. */
typedef enum { PS_SERIES_BY_HOST = 0, PS_SERIES_BY_TEST_TYPE } ps_series_by;

/* One loadgen_run field judged across revisions. */
typedef struct ps_verdict_metric_cfg {
  char *name;            /* the loadgen_run field, e.g. "cycleAvgDuration" */
  ps_worse worse;        /* which direction is a regression */
  double min_change;     /* the smallest change reported, in `unit` */
  ps_change_unit unit;   /* percent of the baseline, or absolute points */
  int enabled;
} ps_verdict_metric_cfg;

typedef struct ps_verdicts_cfg {
  double significance;   /* a change point counts when its p-value is <= this */
  int64_t min_runs;      /* successful runs a series needs before any verdict */
  int64_t window_runs;   /* the newest runs a verdict looks at */
  ps_series_by series_by; /* a series per host (default) or per test type */
  ps_verdict_metric_cfg *metrics; /* the seven defaults, then the file's own */
  size_t nmetrics;
  double stage_drift_pct; /* a stage this far from the first loadgen stage */
  /* A stage whose BOYD share (in percent of its delivery seconds) is this
   * many points from the first loadgen stage's (docs/verdicts.md). */
  double stage_drift_boyd_points;
  /* A loadgen stage whose kernel counter grows more per cycle than this
   * is a regression (in ps_growth_figure_id order, core/figures.h). */
  double max_growth_per_cycle[PS_GROWTH_NFIGURES];
  struct {
    double min_change_pct; /* geometric-mean change of an arm that counts */
    char *reference_arm;   /* "" = the first arm of each test */
  } dss;
  /* Runs of these series judged against the current level of `against`
   * too (docs/verdicts.md, "Candidates"); none when nseries is 0. */
  struct {
    char **series;
    size_t nseries;
    char *against;
  } candidates;
  /* A verdict's revision range as a link: {good} and {bad} replaced by
   * the URL-encoded revisions; "" = none. Only http(s) (checked). */
  char *compare_url;
} ps_verdicts_cfg;

/* The events perfship raises itself (docs/alerts.md). Their names are the
 * `event` tag of perfship_alert and the words of alerts.on. */
typedef enum ps_alert_kind {
  PS_ALERT_RUN_FAILED = 0,
  PS_ALERT_RUN_INTERRUPTED,
  PS_ALERT_RUN_STALLED,
  PS_ALERT_RUN_RECOVERED,
  PS_ALERT_NO_NEW_RUN,
  PS_ALERT_REGRESSION,
  PS_ALERT_IMPROVEMENT,
  PS_ALERT_AGENT_UNHEALTHY,
  PS_ALERT_AGENT_RECOVERED,
  PS_ALERT_NKINDS
} ps_alert_kind;

#define PS_ALERT_BIT(k) (1u << (unsigned)(k))
/* alerts.on by default: every event but improvement. */
#define PS_ALERT_ON_DEFAULT                                                    \
  (((1u << PS_ALERT_NKINDS) - 1u) & ~PS_ALERT_BIT(PS_ALERT_IMPROVEMENT))

typedef enum { PS_WEBHOOK_JSON = 0, PS_WEBHOOK_SLACK } ps_webhook_format;

typedef struct ps_config {
  char *file; /* the file loaded, or NULL for built-in defaults */

  struct {
    char *url;
    ps_api api;
    char *database;
    char *retention_policy;
    char *username;
    char *password_file;
    char *org;
    char *bucket;
    char *token_file;
    ps_gzip_mode gzip;
    int64_t timeout_ms;
    char *tls_ca_file;
    int tls_verify;
    int create_database;
    int64_t unreachable_deadline_s;
    /* filled by ps_config_load_secrets(); never logged */
    char *password;
    char *token;
  } influxdb;

  struct {
    int64_t max_points;
    int64_t max_bytes;
    int64_t flush_interval_ms;
    int64_t max_pending_bytes;
  } batch;

  struct {
    int64_t rescan_interval_ms;
    int64_t settle_ms;
    int64_t max_line_bytes;
    ps_start_at start_at;
  } watch;

  struct {
    int64_t interval_ms;
  } selfstats;

  char *state_dir;
  /* triage decisions kept in a file, one a line (docs/verdicts.md "Triage"):
   * "" = none */
  char *triage_file;
  ps_kv *tags;
  size_t ntags;
  ps_source_cfg *sources;
  size_t nsources;

  /* alerts: what perfship says itself and how (docs/alerts.md). */
  struct {
    int64_t stall_after_s;
    int64_t no_new_run_after_s; /* 0: off */
    int64_t unhealthy_after_s;
    int64_t catch_up_s;
    int64_t min_interval_s;
    char **exec; /* argv of the exec channel; NULL/0: none */
    size_t nexec;
    int64_t exec_timeout_ms;
    unsigned on; /* PS_ALERT_BIT of each event raised */
    struct {
      int given; /* the webhook group is there */
      char *url;
      char *url_file;
      char *tls_ca_file;
      ps_webhook_format format;
      int64_t timeout_ms;
      /* filled by ps_config_load_secrets() from url_file; never logged */
      char *url_from_file;
    } webhook;
  } alerts;

  ps_verdicts_cfg verdicts;
  /* report: the HTML page the agent keeps current (docs/report.md). */
  struct {
    char *path;             /* "" = the agent writes no report */
    int64_t since_days;     /* the page shows runs of this many days */
    int64_t min_interval_s; /* at most one regeneration per interval */
    char *chart_js;         /* Chart.js, inlined into every page */
  } report;

  ps_log_level log_level;
} ps_config;

/* What a source's format says of its configuration. The loader names no
 * format: it asks this of the caller, and the formats' ops tables answer
 * (formats/format.h: ps_format_source_rules), so core stays below formats. */
typedef struct ps_source_rules {
  int mapping;  /* the jsonl mapping keys (measurement ... types) are this
                   format's, and its sources need a time_key */
  int has_runs; /* its files are runs: no_new_run_after_s applies */
  int arm;      /* its scenarios have arms: `arm` applies (benchmarker) */
} ps_source_rules;
typedef void (*ps_source_rules_fn)(ps_format_id format, ps_source_rules *out);

void ps_config_defaults(ps_config *c);
/* `rules` answers for each source's format; NULL skips the checks that
 * depend on a format (for callers that load no sources' formats). */
int ps_config_load(ps_config *c, const char *path, ps_source_rules_fn rules, ps_buf *err);
/* Reads password_file / token_file / PERFSHIP_TOKEN. Refuses a secret file
 * that group or others can read or write (mode & 077), naming the file. */
int ps_config_load_secrets(ps_config *c, ps_buf *err);
void ps_config_free(ps_config *c);
/* Reads alerts.webhook.url_file alone (ps_config_load_secrets() does it
 * too), for commands that need no server. Same checks as the others. */
int ps_config_load_alert_secrets(ps_config *c, ps_buf *err);
/* The webhook's URL (from url_file when given), or NULL when there is no
 * webhook. A secret: log it only through ps_alert_url_redact(). */
const char *ps_config_webhook_url(const ps_config *c);

const char *ps_alert_kind_name(ps_alert_kind k);
int ps_alert_kind_from_name(const char *name, ps_alert_kind *out);

const char *ps_format_name(ps_format_id f);
int ps_format_from_name(const char *name, ps_format_id *out);
int ps_ftype_from_name(const char *name, ps_ftype *out);
/* "s" "ms" "us" "ns" -> exponent; -EINVAL otherwise */
int ps_time_unit_from_name(const char *name, int *exp_out);
/* A source's default values (measurement "jsonl", unit s, ...). */
void ps_source_defaults(ps_source_cfg *s);
void ps_source_free(ps_source_cfg *s);
/* The host this agent's points are about: the `host` of the global tags,
 * else the machine's name (gethostname(); "unknown" when it has none),
 * written into `buf` (`n` bytes) when it is not the configuration's. */
const char *ps_config_host(const ps_config *c, char *buf, size_t n);
/* The tags added to every point shipped: the global tags, and `host` = the
 * machine's name (into `host_buf`) when they have no `host` key at all.
 * *out is calloc'ed (the caller frees it; its strings are the
 * configuration's and `host_buf`). 0 or -ENOMEM. */
int ps_config_global_tags(const ps_config *c, char *host_buf, size_t n, ps_tag **out, size_t *nout);
/* The configured metric named `name`, or NULL. */
const ps_verdict_metric_cfg *ps_verdict_metric_find(const ps_verdicts_cfg *v,
                                                    const char *name);

#endif
