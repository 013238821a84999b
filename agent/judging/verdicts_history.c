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

#include "core/figures.h"
#include "readback/answer.h"
#include "readback/statement.h"
#include "readback/status.h"

static int is_growth(const char *metric) {
  const ps_figure *f = ps_figure_find(metric);
  return f && f->scope == PS_FIG_GROWTH;
}

/* A benchmarker figure is no loadgen_run field: its series are the
 * benchmarker's, never read from loadgen_run. */
static int is_benchmarker(const char *metric) {
  const ps_figure *f = ps_figure_find(metric);
  return f && f->scope == PS_FIG_BENCHMARKER;
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

int jd_verdicts_history_query_text(const char *series, const char *host, int64_t since_ns,
                                   int64_t until_ns, const char *const *metrics, size_t nmetrics,
                                   ps_buf *out) {
  int rc = ps_buf_puts(out, "SELECT \"status\"");
  size_t growth = 0;
  for (size_t i = 0; rc == 0 && i < nmetrics; i++) {
    if (is_growth(metrics[i])) {
      growth++;
      continue;
    }
    if (is_benchmarker(metrics[i]))
      continue;
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

int jd_verdicts_history_parse(const char *json, const char *const *metrics, size_t nmetrics,
                              jd_verdicts_history_row_cb row, jd_verdicts_history_growth_cb growth,
                              void *ctx, ps_buf *why) {
  double *values = malloc((nmetrics ? nmetrics : 1) * sizeof *values);
  ps_rb_answer a;
  int rc = values ? ps_rb_answer_parse(&a, json, strlen(json)) : -ENOMEM;
  /* The whole answer is checked before a row is taken: half an answer
   * merged would be a history with holes, judged as if it were whole. */
  static const char *const strings[] = {"status", NULL};
  if (rc == 0 && ps_rb_answer_check(&a, strings, why) < 0)
    rc = -EPROTO;
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
  return rc;
}
