/*
 * verdicts_history.c: a loadgen series' runs read back from the server.
 * See include/judging/verdicts.history.h.
 */
#include "judging/verdicts_history.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/figures.h"
#include "influx/client.h"
#include "influx/influxql.h"

static int is_growth(const char *metric) {
  const ps_figure *f = ps_figure_find(metric);
  return f && f->scope == PS_FIG_GROWTH;
}

static int where_series(ps_buf *out, const char *series, const char *host) {
  int rc = ps_buf_puts(out, " WHERE \"test_type\" = ");
  if (rc == 0)
    rc = ps_influxql_quote_string(out, series);
  if (rc == 0 && host) {
    rc = ps_buf_puts(out, " AND \"host\" = ");
    if (rc == 0)
      rc = ps_influxql_quote_string(out, host);
  }
  return rc;
}

/* The second statement: each run's largest growth per cycle over its
 * stages that are judged against the limit (after stage 0, complete, with
 * finished cycles: docs/verdicts.md, "Kernel growth across revisions").
 * A stage's point is at its first line, after the run's start: the slice
 * reaches a week past `until_ns`, as a stage may end that much later. */
static int growth_statement(ps_buf *out, const char *series, const char *host, int64_t since_ns,
                            int64_t until_ns, const char *const *metrics, size_t nmetrics) {
  int rc = ps_buf_puts(out, "; SELECT ");
  for (size_t i = 0, n = 0; rc == 0 && i < nmetrics; i++) {
    if (!is_growth(metrics[i]))
      continue;
    rc = ps_buf_puts(out, n++ ? ", max(" : "max(");
    if (rc == 0)
      rc = ps_influxql_quote_ident(out, metrics[i]);
    if (rc == 0)
      rc = ps_buf_puts(out, ") AS ");
    if (rc == 0)
      rc = ps_influxql_quote_ident(out, metrics[i]);
  }
  if (rc == 0)
    rc = ps_buf_puts(out, " FROM \"loadgen_slog_stage\"");
  if (rc == 0)
    rc = where_series(out, series, host);
  if (rc == 0)
    rc = ps_buf_printf(out, " AND \"partial\" = false AND \"finishedCycles\" > 0 AND "
                       "\"stage\" != '0' AND time >= %" PRId64, since_ns > 0 ? since_ns : 0);
  if (rc == 0 && until_ns > 0)
    rc = ps_buf_printf(out, " AND time < %" PRId64, until_ns + (int64_t)7 * 86400 * 1000000000);
  if (rc == 0)
    rc = ps_buf_puts(out, " GROUP BY \"host\", \"run\"");
  return rc;
}

int pl_history_query_text(const char *series, const char *host, int64_t since_ns,
                          int64_t until_ns, const char *const *metrics, size_t nmetrics,
                          ps_buf *out) {
  int rc = ps_buf_puts(out, "SELECT \"status\"");
  size_t growth = 0;
  for (size_t i = 0; rc == 0 && i < nmetrics; i++) {
    if (is_growth(metrics[i])) {
      growth++;
      continue;
    }
    rc = ps_buf_puts(out, ", ");
    if (rc == 0)
      rc = ps_influxql_quote_ident(out, metrics[i]);
  }
  if (rc == 0)
    rc = ps_buf_puts(out, " FROM \"loadgen_run\"");
  if (rc == 0)
    rc = where_series(out, series, host);
  char bounds[96];
  int n = snprintf(bounds, sizeof bounds, " AND time >= %" PRId64, since_ns > 0 ? since_ns : 0);
  if (until_ns > 0)
    snprintf(bounds + n, sizeof bounds - (size_t)n, " AND time < %" PRId64, until_ns);
  if (rc == 0)
    rc = ps_buf_puts(out, bounds);
  if (rc == 0)
    rc = ps_buf_puts(out, " GROUP BY \"host\", \"run\", \"revision\"");
  if (rc == 0 && growth)
    rc = growth_statement(out, series, host, since_ns, until_ns, metrics, nmetrics);
  return rc;
}

/* --- on the threadpool --------------------------------------------------- */

typedef struct fetch_req {
  uv_work_t work;
  ps_config cfg; /* shallow copy of the sink's: its strings outlive us */
  char *influxql;
  pl_history_done_cb done;
  void *arg;
  int rc;
  ps_buf json, err;
} fetch_req;

static void fetch_work(uv_work_t *w) {
  fetch_req *r = w->data;
  r->rc = ps_influx_query(&r->cfg, r->influxql, &r->json, &r->err);
}

static void fetch_done(uv_work_t *w, int status) {
  fetch_req *r = w->data;
  int rc = status < 0 ? -ECANCELED : r->rc;
  r->done(r->arg, rc, r->json.data ? r->json.data : "", r->json.len,
          r->err.data ? r->err.data : NULL);
  ps_buf_free(&r->json);
  ps_buf_free(&r->err);
  free(r->influxql);
  free(r);
}

int pl_history_fetch(uv_loop_t *loop, const ps_config *cfg, const char *influxql,
                     pl_history_done_cb done, void *arg) {
  fetch_req *r = calloc(1, sizeof *r);
  if (!r || !(r->influxql = strdup(influxql))) {
    free(r);
    return -ENOMEM;
  }
  r->cfg = *cfg;
  r->done = done;
  r->arg = arg;
  ps_buf_init(&r->json, PS_INFLUX_QUERY_MAX_BYTES);
  ps_buf_init(&r->err, 2048);
  r->work.data = r;
  int rc = uv_queue_work(loop, &r->work, fetch_work, fetch_done);
  if (rc < 0) {
    free(r->influxql);
    free(r);
  }
  return rc;
}

/* --- reading the answer ----------------------------------------------------- */

static ps_run_status status_named(const char *s) {
  if (!s)
    return PS_RUN_STATUS_NONE;
  if (strcmp(s, "success") == 0)
    return PS_RUN_STATUS_SUCCESS;
  if (strcmp(s, "failed") == 0)
    return PS_RUN_STATUS_FAILED;
  if (strcmp(s, "interrupted") == 0)
    return PS_RUN_STATUS_INTERRUPTED;
  if (strcmp(s, "stalled") == 0)
    return PS_RUN_STATUS_STALLED;
  return PS_RUN_STATUS_NONE;
}

static const char *tag_of(const cJSON *series, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(series, "tags"), key);
  return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

/* Whether one series of the answer is what the query asked for: a
 * "columns" list of names with "time" among them, rows of as many cells,
 * each time a number (the client asks for epoch nanoseconds), the status a
 * string or null, each metric a number or null. `why` says what is not. */
static int series_ok(const cJSON *series, ps_buf *why) {
  const cJSON *cols = cJSON_GetObjectItemCaseSensitive(series, "columns");
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(series, "values");
  const cJSON *tags = cJSON_GetObjectItemCaseSensitive(series, "tags");
  if (!cJSON_IsObject(series) || !cJSON_IsArray(cols) || (rows && !cJSON_IsArray(rows)) ||
      (tags && !cJSON_IsObject(tags))) {
    ps_buf_puts(why, "a series without a list of columns and of rows");
    return 0;
  }
  long time_col = -1, status_col = -1, n = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, cols) {
    if (!cJSON_IsString(c)) {
      ps_buf_puts(why, "a column name that is not a string");
      return 0;
    }
    if (strcmp(c->valuestring, "time") == 0)
      time_col = n;
    else if (strcmp(c->valuestring, "status") == 0)
      status_col = n;
    n++;
  }
  if (time_col < 0) {
    ps_buf_puts(why, "no time column");
    return 0;
  }
  const cJSON *tag;
  cJSON_ArrayForEach(tag, tags) if (!cJSON_IsString(tag) && !cJSON_IsNull(tag)) {
    ps_buf_printf(why, "the tag '%.40s' is not a string", tag->string ? tag->string : "?");
    return 0;
  }
  const cJSON *r;
  long k = 0;
  cJSON_ArrayForEach(r, rows) {
    if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != n) {
      ps_buf_printf(why, "row %ld is not a list of %ld values", k + 1, n);
      return 0;
    }
    long i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, r) {
      const char *col = cJSON_GetArrayItem(cols, (int)i)->valuestring;
      /* a time no int64 of nanoseconds holds is none (the fuzz target
       * found 1.6e20 overflowing the microsecond rounding) */
      int ok = i == time_col ? cJSON_IsNumber(v) && fabs(v->valuedouble) < 9.2e18
               : i == status_col ? cJSON_IsString(v) || cJSON_IsNull(v)
                                 : cJSON_IsNumber(v) || cJSON_IsNull(v);
      if (!ok) {
        ps_buf_printf(why, "row %ld: %s is not %s", k + 1, col,
                      i == time_col     ? "a time in nanoseconds"
                      : i == status_col ? "a string"
                                        : "a number");
        return 0;
      }
      i++;
    }
    k++;
  }
  return 1;
}

int pl_history_parse(const char *json, const char *const *metrics, size_t nmetrics,
                     pl_history_row_cb row, pl_history_growth_cb growth, void *ctx,
                     ps_buf *why) {
  ps_buf ignored;
  ps_buf_init(&ignored, 256);
  if (!why)
    why = &ignored;
  cJSON *root = cJSON_Parse(json);
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(root, "results");
  const cJSON *res;
  int ok = cJSON_IsArray(results);
  const cJSON *checked = ok ? results : NULL;
  if (!ok)
    ps_buf_puts(why, root ? "no list of results" : "not JSON");
  /* The whole answer is checked before a row is taken: half an answer
   * merged would be a history with holes, judged as if it were whole. */
  cJSON_ArrayForEach(res, checked) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(res, "error");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(res, "series");
    if (!cJSON_IsObject(res) || e || (list && !cJSON_IsArray(list))) {
      if (cJSON_IsString(e))
        ps_buf_printf(why, "the server said: %.200s", e->valuestring);
      else
        ps_buf_puts(why, "a result that is not an object with a list of series");
      ok = 0;
      break;
    }
    const cJSON *series;
    cJSON_ArrayForEach(series, list) if (!(ok = series_ok(series, why))) break;
    if (!ok)
      break;
  }
  if (!ok) {
    cJSON_Delete(root);
    ps_buf_free(&ignored);
    return -EPROTO;
  }
  ps_buf_free(&ignored);
  double *values = malloc((nmetrics ? nmetrics : 1) * sizeof *values);
  long *col = malloc((nmetrics ? nmetrics : 1) * sizeof *col);
  if (!values || !col) {
    free(values);
    free(col);
    cJSON_Delete(root);
    return -ENOMEM;
  }
  size_t statement = 0;
  cJSON_ArrayForEach(res, results) {
    const cJSON *series;
    int of_growth = statement++ > 0; /* the second statement's */
    cJSON_ArrayForEach(series, cJSON_GetObjectItemCaseSensitive(res, "series")) {
      const char *run = tag_of(series, "run");
      const cJSON *cols = cJSON_GetObjectItemCaseSensitive(series, "columns");
      const cJSON *rows = cJSON_GetObjectItemCaseSensitive(series, "values");
      const cJSON *last = rows ? cJSON_GetArrayItem(rows, cJSON_GetArraySize(rows) - 1) : NULL;
      if (!run || !last)
        continue; /* a point without a run name, a series without rows */
      long time_col = -1, status_col = -1, i = 0;
      for (size_t m = 0; m < nmetrics; m++)
        col[m] = -1;
      const cJSON *c;
      cJSON_ArrayForEach(c, cols) {
        if (strcmp(c->valuestring, "time") == 0)
          time_col = i;
        else if (strcmp(c->valuestring, "status") == 0)
          status_col = i;
        for (size_t m = 0; m < nmetrics; m++)
          if (strcmp(c->valuestring, metrics[m]) == 0)
            col[m] = i;
        i++;
      }
      const cJSON *t = cJSON_GetArrayItem(last, (int)time_col);
      const cJSON *st = status_col >= 0 ? cJSON_GetArrayItem(last, (int)status_col) : NULL;
      for (size_t m = 0; m < nmetrics; m++) {
        const cJSON *v = col[m] >= 0 ? cJSON_GetArrayItem(last, (int)col[m]) : NULL;
        values[m] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
      }
      /* A JSON number is a double: near 1.7e18 ns it is off by up to 128.
       * Times from the data are whole microseconds (core/point.h), so
       * rounding to the microsecond gives the point's time back exactly:
       * a verdict must land on it to overwrite the earlier verdict. */
      int64_t start_ns = (int64_t)llround(t->valuedouble / 1000.0) * 1000;
      if (of_growth) {
        if (growth)
          growth(ctx, tag_of(series, "host"), run, values);
        continue;
      }
      row(ctx, tag_of(series, "host"), run, tag_of(series, "revision"), start_ns,
          status_named(cJSON_IsString(st) ? st->valuestring : NULL), values);
    }
  }
  free(values);
  free(col);
  cJSON_Delete(root);
  return 0;
}
