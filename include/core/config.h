/*
 * config: perfship's configuration, loaded from a libconfig file.
 *
 * Contract (DESIGN.md "Configuration")
 * - ps_config_defaults() fills every setting with its default; loading a file
 *   only overrides what the file sets. A config with no file is valid.
 * - ps_config_load() rejects unknown keys, wrong types and bad values. On
 *   error it returns a negative errno and writes one message to `err`, of the
 *   form "FILE:LINE: what is wrong; what to do", naming the key.
 * - All strings in ps_config are owned by it (copied out of libconfig) and
 *   freed by ps_config_free(), which accepts NULL and half-loaded configs.
 * - Secrets (password, token) are read from the files named here or from
 *   PERFSHIP_TOKEN by ps_config_load_secrets(); they are never printed.
 */
#ifndef PS_CONFIG_H
#define PS_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "formats/point.h"

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
  int line;              /* where the source was defined, for messages */
} ps_source_cfg;

/* influxdb.url when the file does not set it; the InfluxDB client
 * (influx/endpoint.h) falls back to it too, for configurations built in
 * code. The one place this address is written. */
#define PS_INFLUX_DEFAULT_URL "http://127.0.0.1:8086"
/* report.chart_js when the file does not set it: Debian's libjs-chart.js. */
#define PS_REPORT_DEFAULT_CHART_JS "/usr/share/javascript/chart.js/chart.min.js"

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
  ps_kv *tags;
  size_t ntags;
  ps_source_cfg *sources;
  size_t nsources;

  struct {
    int64_t stall_after_s;
  } alerts;

  /* report: the HTML page the agent keeps current (docs/report.md). */
  struct {
    char *path;             /* "" = the agent writes no report */
    int64_t since_days;     /* the page shows runs of this many days */
    int64_t min_interval_s; /* at most one regeneration per interval */
    char *chart_js;         /* Chart.js, inlined into every page */
  } report;

  ps_log_level log_level;
} ps_config;

void ps_config_defaults(ps_config *c);
int ps_config_load(ps_config *c, const char *path, ps_buf *err);
/* Reads password_file / token_file / PERFSHIP_TOKEN. Refuses a secret file
 * that group or others can read or write (mode & 077), naming the file. */
int ps_config_load_secrets(ps_config *c, ps_buf *err);
void ps_config_free(ps_config *c);

const char *ps_format_name(ps_format_id f);
int ps_format_from_name(const char *name, ps_format_id *out);
int ps_ftype_from_name(const char *name, ps_ftype *out);
/* "s" "ms" "us" "ns" -> exponent; -EINVAL otherwise */
int ps_time_unit_from_name(const char *name, int *exp_out);
/* A source's default values (measurement "jsonl", unit s, ...). */
void ps_source_defaults(ps_source_cfg *s);
void ps_source_free(ps_source_cfg *s);

#endif
