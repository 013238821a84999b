/*
 * verdicts_history.c: a loadgen series' runs read back from the server.
 * See include/judging/verdicts.history.h.
 */
#include "judging/verdicts_history.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/figures.h"
#include "readback/answer.h"
#include "readback/statement.h"
#include "readback/status.h"

static int is_growth(const char *metric) {
  const ps_figure *f = ps_figure_find(metric);
  return f && f->scope == PS_FIG_GROWTH;
}

static int where_series(ps_buf *out, const char *series, const char *host) {
  int rc = ps_buf_puts(out, " WHERE \"test_type\" = ");
  if (rc == 0)
    rc = ps_rb_string(out, series);
  if (rc == 0 && host) {
    rc = ps_buf_puts(out, " AND \"host\" = ");
    if (rc == 0)
      rc = ps_rb_string(out, host);
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
      rc = ps_rb_ident(out, metrics[i]);
    if (rc == 0)
      rc = ps_buf_puts(out, ") AS ");
    if (rc == 0)
      rc = ps_rb_ident(out, metrics[i]);
  }
  if (rc == 0)
    rc = ps_buf_puts(out, " FROM \"loadgen_slog_stage\"");
  if (rc == 0)
    rc = where_series(out, series, host);
  if (rc == 0)
    rc = ps_buf_puts(out, " AND \"partial\" = false AND \"finishedCycles\" > 0 AND "
                          "\"stage\" != '0'");
  if (rc == 0)
    rc = ps_rb_and_time_range(out, since_ns,
                              until_ns > 0 ? until_ns + (int64_t)7 * 86400 * 1000000000 : 0);
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
      rc = ps_rb_ident(out, metrics[i]);
  }
  if (rc == 0)
    rc = ps_buf_puts(out, " FROM \"loadgen_run\"");
  if (rc == 0)
    rc = where_series(out, series, host);
  if (rc == 0)
    rc = ps_rb_and_time_range(out, since_ns, until_ns);
  if (rc == 0)
    rc = ps_buf_puts(out, " GROUP BY \"host\", \"run\", \"revision\"");
  if (rc == 0 && growth)
    rc = growth_statement(out, series, host, since_ns, until_ns, metrics, nmetrics);
  return rc;
}

/* --- reading the answer ----------------------------------------------------- */

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
  ps_rb_answer a;
  int rc = values ? ps_rb_answer_parse(&a, json, strlen(json)) : -ENOMEM;
  for (const ps_rb_row *r; rc == 0 && (r = ps_rb_answer_next_series(&a));) {
    const char *run = ps_rb_tag(r, "run");
    if (!run)
      continue; /* a point without a run name */
    for (size_t m = 0; m < nmetrics; m++)
      values[m] = ps_rb_num(r, metrics[m]);
    if (r->statement > 0) { /* the second statement's */
      if (growth)
        growth(ctx, ps_rb_tag(r, "host"), run, values);
      continue;
    }
    /* rounded to the microsecond, the point's time exactly: a verdict
     * must land on it to overwrite the earlier verdict */
    row(ctx, ps_rb_tag(r, "host"), run, ps_rb_tag(r, "revision"), ps_rb_time_us(r),
        ps_rb_run_status(ps_rb_status_named(ps_rb_str(r, "status"))), values);
  }
  if (values)
    ps_rb_answer_free(&a);
  free(values);
  cJSON_Delete(root);
  return rc;
}
