/*
 * readback/query.c: one InfluxQL request and what its answer means
 * (include/readback/query.h).
 *
 * DESIGN
 * - The transport (influx/client.c) only carries the request; every
 *   meaning of an answer is decided here, once, for every reader.
 * - VictoriaMetrics accepts /query but answers every query with the same
 *   canned SHOW DATABASES result (for Grafana's data source check). A
 *   SELECT is never answered with a "databases" series whose only column
 *   is "name" (InfluxDB's SELECT results always start with "time"), so that
 *   answer to anything but SHOW DATABASES means: no InfluxQL here.
 * - InfluxDB 3 refuses a query over more Parquet files than its limit
 *   ("too many files", "query would exceed file limit") and answers
 *   statements it lacks with "not supported"/"unsupported": the first asks
 *   for less (-E2BIG), the second is no InfluxQL for that statement
 *   (-EOPNOTSUPP), neither is "the server broke".
 */
#include "readback/query.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "influx/client.h"
#include "influx/endpoint.h"

static int url_len(const char *url) { return (int)strcspn(url, "?"); }

static int refused(long status) { return status == 401 || status == 403; }

static int ok(long status) { return status >= 200 && status <= 299; }

static int says(const char *text, const char *words) {
  return text && strcasestr(text, words) != NULL;
}

int ps_rb_error_of(long http_status, const char *server_text) {
  if (refused(http_status))
    return -EACCES;
  if (http_status == 404)
    return -EOPNOTSUPP;
  if (says(server_text, "database not found"))
    return -ENOENT;
  if (says(server_text, "too many files") || says(server_text, "file limit"))
    return -E2BIG;
  if (says(server_text, "not supported") || says(server_text, "unsupported"))
    return -EOPNOTSUPP;
  return ok(http_status) && !server_text ? 0 : -EPROTO;
}

/* The first "error" of the answer: top level (a query that did not parse)
 * or of any statement's result. */
static const cJSON *first_error(const cJSON *j) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
  if (e)
    return e;
  const cJSON *r;
  cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(j, "results")) {
    if ((e = cJSON_GetObjectItemCaseSensitive(r, "error")))
      return e;
  }
  return NULL;
}

/* Does the statement text start with SHOW DATABASES? */
static int is_show_databases(const char *q) {
  static const char *words[] = {"SHOW", "DATABASES"};
  for (int i = 0; i < 2; i++) {
    while (isspace((unsigned char)*q))
      q++;
    size_t n = strlen(words[i]);
    if (strncasecmp(q, words[i], n) || isalnum((unsigned char)q[n]) || q[n] == '_')
      return 0;
    q += n;
  }
  return 1;
}

/* VictoriaMetrics' canned answer (see the design comment at the top). */
static int canned_database_list(const cJSON *j) {
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(j, "results");
  const cJSON *series = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(results, 0), "series");
  const cJSON *s0 = cJSON_GetArrayItem(series, 0);
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(s0, "name");
  const cJSON *cols = cJSON_GetObjectItemCaseSensitive(s0, "columns");
  const cJSON *c0 = cJSON_GetArrayItem(cols, 0);
  return cJSON_GetArraySize(results) == 1 && cJSON_GetArraySize(series) == 1 &&
         cJSON_IsString(name) && !strcmp(name->valuestring, "databases") &&
         cJSON_GetArraySize(cols) == 1 && cJSON_IsString(c0) && !strcmp(c0->valuestring, "name");
}

static const char *what_to_check(const ps_config *cfg) {
  return cfg->influxdb.api == PS_API_V2
             ? "check influxdb.token_file (or PERFSHIP_TOKEN) and that the token may "
               "read the bucket"
             : "check influxdb.username and influxdb.password_file, and that the user "
               "may read the database";
}

/* The database a read names: influxdb.database (v1), or the bucket's
 * database part (v2; influx/endpoint.h reads "db/rp" as db and rp). */
static void read_database(const ps_config *cfg, ps_buf *out) {
  if (cfg->influxdb.api != PS_API_V2) {
    ps_buf_puts(out, cfg->influxdb.database ? cfg->influxdb.database : "");
    return;
  }
  const char *b = cfg->influxdb.bucket ? cfg->influxdb.bucket : "";
  ps_buf_append(out, b, strcspn(b, "/"));
}

/* "database not found" on a read: an error that names the database and
 * what to do, never "nothing yet" (docs/operations.md, "Reads"). For the
 * v2 API the usual cause is a bucket without a DBRP mapping: InfluxDB 2.x
 * answers InfluxQL only for mapped buckets, and the same words. */
static void say_not_found(const ps_config *cfg, const char *where, long status, const char *text,
                          ps_buf *err) {
  if (!err)
    return;
  ps_buf db;
  ps_buf_init(&db, 0);
  read_database(cfg, &db);
  const char *name = db.data ? db.data : "";
  ps_buf_printf(err, "database \"%s\" not found on %.*s (HTTP %ld: ", name, url_len(where), where,
                status);
  if (text)
    ps_influx_redact(cfg, text, strlen(text), err);
  if (cfg->influxdb.api == PS_API_V2) {
    const char *slash = cfg->influxdb.bucket ? strchr(cfg->influxdb.bucket, '/') : NULL;
    ps_buf_printf(err,
                  "); InfluxQL reads need bucket \"%s\" mapped to a database and "
                  "retention policy: on InfluxDB 2.x `influx v1 dbrp create --db %s --rp "
                  "%s --bucket-id <bucket-id> --default`; on InfluxDB 1.8 write the bucket "
                  "as \"database/retention-policy\"",
                  cfg->influxdb.bucket ? cfg->influxdb.bucket : "", name,
                  slash && slash[1] ? slash + 1 : "autogen");
  } else {
    ps_buf_printf(err, "); check influxdb.database, or create it (CREATE DATABASE \"%s\")", name);
  }
  ps_buf_free(&db);
}

/* The sentence for an answer that is an error (`rc`, from ps_rb_error_of). */
static void say_error(const ps_config *cfg, int rc, const ps_influx_reply *r, const cJSON *j,
                      const char *text, ps_buf *err) {
  const char *where = r->url.data ? r->url.data : "";
  if (rc == -ENOENT) {
    say_not_found(cfg, where, r->status, text, err);
  } else if (!err) {
    return;
  } else if (rc == -EACCES) {
    ps_buf_printf(err, "%.*s refused the credentials (HTTP %ld: ", url_len(where), where,
                  r->status);
    ps_influx_answer_text(cfg, r->body.data, r->body.len, err);
    ps_buf_printf(err, "); %s", what_to_check(cfg));
  } else if (rc == -EOPNOTSUPP && r->status == 404) {
    ps_buf_printf(err,
                  "%.*s answered HTTP 404: the server has no InfluxQL query "
                  "endpoint",
                  url_len(where), where);
  } else {
    ps_buf_printf(err, "%.*s answered HTTP %ld: ", url_len(where), where, r->status);
    if (text)
      ps_influx_redact(cfg, text, strlen(text), err);
    else
      ps_influx_answer_text(cfg, r->body.data, r->body.len, err);
    if (!j && ok(r->status))
      ps_buf_puts(err, " (not JSON: is influxdb.url an InfluxDB server?)");
    else if (rc == -E2BIG)
      ps_buf_puts(err, " (the server's limit of files a query reads: ask for a shorter "
                       "time range)");
  }
}

/* Whether the answer could be what is decided on here (an error, the
 * canned database list, no JSON object): if not, it is not parsed, for its
 * reader parses it again. Parsing a backfill's large slog answers twice was
 * a third of its judging reads' CPU (docs/benchmarks.md). The server
 * writes these members' names unescaped. */
static int answer_to_check(const ps_influx_reply *r) {
  if (!ok(r->status) || !r->body.data)
    return 1;
  const char *p = r->body.data, *end = p + r->body.len;
  while (p < end && isspace((unsigned char)*p))
    p++;
  return p == end || *p != '{' || memmem(p, (size_t)(end - p), "\"error\"", 7) ||
         memmem(p, (size_t)(end - p), "\"databases\"", 11);
}

int ps_rb_query(const ps_config *cfg, const char *influxql, ps_buf *json, ps_buf *err) {
  if (!influxql || !json)
    return -EINVAL;
  ps_influx_reply r;
  cJSON *j = NULL;
  int rc = ps_influx_query_post(cfg, influxql, &r, err);
  const char *where = r.url.data ? r.url.data : "";
  if (rc)
    goto out;
  if (refused(r.status) || r.status == 404) {
    rc = ps_rb_error_of(r.status, NULL);
    say_error(cfg, rc, &r, NULL, NULL, err);
    goto out;
  }
  if (r.truncated) {
    rc = -E2BIG;
    if (err)
      ps_buf_printf(err,
                    "the answer of %.*s is over %u MiB; ask for less (a shorter "
                    "time range, fewer fields, or GROUP BY time)",
                    url_len(where), where, PS_INFLUX_QUERY_MAX_BYTES / (1024 * 1024));
    goto out;
  }
  if (!answer_to_check(&r)) /* its reader parses it, and says if it is no answer */
    goto keep;
  j = r.body.data ? cJSON_ParseWithLength(r.body.data, r.body.len) : NULL;
  const cJSON *e = j ? first_error(j) : NULL;
  if (e || !ok(r.status) || !j) {
    const char *text = cJSON_IsString(e) ? e->valuestring : NULL;
    rc = ps_rb_error_of(r.status, text);
    if (rc == 0 || rc == -EACCES)
      rc = -EPROTO; /* no JSON, or an error that is not a string */
    say_error(cfg, rc, &r, j, text, err);
    goto out;
  }
  if (canned_database_list(j) && !is_show_databases(influxql)) {
    rc = -EOPNOTSUPP;
    if (err)
      ps_buf_printf(err,
                    "%.*s answered a query with a fixed database list: the server "
                    "(VictoriaMetrics?) has no InfluxQL",
                    url_len(where), where);
    goto out;
  }
keep:
  rc = ps_buf_append(json, r.body.data, r.body.len);
out:
  cJSON_Delete(j);
  ps_influx_reply_free(&r);
  return rc;
}

/* --- on the threadpool --------------------------------------------------- */

typedef struct reads_req {
  uv_work_t work;
  ps_rb_reads_fn reads;
  ps_rb_reads_done_fn done;
  void *arg;
  int rc;
} reads_req;

static void reads_work(uv_work_t *w) {
  reads_req *r = w->data;
  r->rc = r->reads(r->arg);
}

static void reads_done(uv_work_t *w, int status) {
  reads_req *r = w->data;
  r->done(r->arg, status < 0 ? -ECANCELED : r->rc);
  free(r);
}

int ps_rb_run_reads(uv_loop_t *loop, ps_rb_reads_fn reads, ps_rb_reads_done_fn done, void *arg) {
  reads_req *r = calloc(1, sizeof *r);
  if (!r)
    return -ENOMEM;
  *r = (reads_req){.reads = reads, .done = done, .arg = arg};
  r->work.data = r;
  int rc = uv_queue_work(loop, &r->work, reads_work, reads_done);
  if (rc < 0)
    free(r);
  return rc;
}

/* One statement: the request and its answer. */
typedef struct run_req {
  ps_config cfg; /* shallow copy: the caller's strings outlive us */
  char *influxql;
  ps_rb_done_fn done;
  void *arg;
  ps_buf json, err;
} run_req;

static int run_work(void *arg) {
  run_req *r = arg;
  return ps_rb_query(&r->cfg, r->influxql, &r->json, &r->err);
}

static void run_free(run_req *r) {
  ps_buf_free(&r->json);
  ps_buf_free(&r->err);
  free(r->influxql);
  free(r);
}

static void run_done(void *arg, int rc) {
  run_req *r = arg;
  r->done(r->arg, rc, r->json.data ? r->json.data : "", r->json.len,
          r->err.data ? r->err.data : NULL);
  run_free(r);
}

int ps_rb_run(uv_loop_t *loop, const ps_config *cfg, const char *influxql, ps_rb_done_fn done,
              void *arg) {
  run_req *r = calloc(1, sizeof *r);
  if (!r || !(r->influxql = strdup(influxql))) {
    free(r);
    return -ENOMEM;
  }
  r->cfg = *cfg;
  r->done = done;
  r->arg = arg;
  ps_buf_init(&r->json, PS_INFLUX_QUERY_MAX_BYTES);
  ps_buf_init(&r->err, 2048);
  int rc = ps_rb_run_reads(loop, run_work, run_done, r);
  if (rc < 0)
    run_free(r);
  return rc;
}
