/*
 * Unit tests of the verdicts' history read (judging/verdicts_history.c):
 * the statements jd_verdicts_history_query_text builds, bounded in time and quoted,
 * and jd_verdicts_history_parse on a real InfluxDB 1.6.7 answer shape, with the
 * growth read beside it.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/buf.h"
#include "judging/verdicts_history.h"

static const char *const METRICS[] = {"cycleAvgDuration", "cycleSuccessRate"};

typedef struct got_row {
  char host[32], run[32], rev[32];
  int64_t start;
  ps_run_status status;
  double v0, v1;
} got_row;

static void on_row(void *ctx, const char *host, const char *run, const char *revision,
                   int64_t start_ns, ps_run_status status, const double *values) {
  got_row *g = ctx;
  while (g->run[0])
    g++;
  snprintf(g->host, sizeof g->host, "%s", host ? host : "-");
  snprintf(g->run, sizeof g->run, "%s", run);
  snprintf(g->rev, sizeof g->rev, "%s", revision ? revision : "-");
  g->start = start_ns;
  g->status = status;
  g->v0 = values[0];
  g->v1 = values[1];
}

/* Growth per cycle across revisions: a second statement reads each run's
 * largest stage growth from loadgen_slog_stage, and its rows go to the
 * growth callback, never to the run rows (docs/verdicts.md). */
typedef struct got_growth {
  char run[64];
  double v[2];
  int rows;
} got_growth;

static void on_growth_row(void *ctx, const char *host, const char *run, const double *values) {
  got_growth *g = ctx;
  (void)host;
  snprintf(g->run, sizeof g->run, "%s", run);
  g->v[0] = values[0];
  g->v[1] = values[1];
  g->rows++;
}

static void on_no_row(void *ctx, const char *host, const char *run, const char *revision,
                      int64_t start_ns, ps_run_status status, const double *values) {
  (void)ctx, (void)host, (void)run, (void)revision, (void)start_ns, (void)status, (void)values;
  fail_msg("a growth row taken for a run row");
}

static void test_history_growth_statement(void **state) {
  (void)state;
  static const char *const GROWTH[] = {"cycleAvgDuration", "kernelObjectsPerCycle"};
  ps_buf q;
  ps_buf_init(&q, 0);
  assert_int_equal(jd_verdicts_history_query_text("daily-perf", "a", 5, 9, GROWTH, 2, &q), 0);
  assert_string_equal(
      q.data,
      "SELECT \"status\", \"cycleAvgDuration\" FROM \"loadgen_run\" WHERE \"test_type\" = "
      "'daily-perf' AND \"host\" = 'a' AND time >= 5 AND time < 9 GROUP BY \"host\", \"run\", "
      "\"revision\"; SELECT max(\"kernelObjectsPerCycle\") AS \"kernelObjectsPerCycle\" FROM "
      "\"loadgen_slog_stage\" WHERE \"test_type\" = 'daily-perf' AND \"host\" = 'a' AND "
      "\"partial\" = false AND \"finishedCycles\" > 0 AND \"stage\" != '0' AND time >= 5 AND "
      "time < 604800000000009 GROUP BY \"host\", \"run\"");
  ps_buf_free(&q);
  /* InfluxDB 1.6.7's answer to that (an empty first statement) */
  const char *answer =
      "{\"results\":[{\"statement_id\":0},{\"statement_id\":1,\"series\":[{\"name\":"
      "\"loadgen_slog_stage\",\"tags\":{\"host\":\"a\",\"run\":\"r1\"},\"columns\":"
      "[\"time\",\"kernelObjectsPerCycle\"],\"values\":[[5,3]]}]}]}";
  got_growth g;
  memset(&g, 0, sizeof g);
  assert_int_equal(jd_verdicts_history_parse(answer, GROWTH, 2, on_no_row, on_growth_row, &g, NULL),
                   0);
  assert_int_equal(g.rows, 1);
  assert_string_equal(g.run, "r1");
  assert_true(isnan(g.v[0]) && g.v[1] == 3.0);
}

static void test_history_query_and_answer(void **state) {
  (void)state;
  ps_buf q;
  ps_buf_init(&q, 0);
  assert_int_equal(jd_verdicts_history_query_text("daily'perf", "bench'a", 1647216135581548000LL, 0,
                                                  METRICS, 2, &q),
                   0);
  assert_string_equal(q.data, "SELECT \"status\", \"cycleAvgDuration\", \"cycleSuccessRate\" "
                              "FROM \"loadgen_run\" WHERE \"test_type\" = 'daily\\'perf' "
                              "AND \"host\" = 'bench\\'a' AND time >= 1647216135581548000 "
                              "GROUP BY \"host\", \"run\", \"revision\"");
  ps_buf_free(&q);
  /* verdicts.series_by = "test_type": every host, still bounded in time */
  ps_buf_init(&q, 0);
  /* ... and a further read takes only the slice before the last one */
  assert_int_equal(jd_verdicts_history_query_text("daily-perf", NULL, 5, 9, METRICS, 1, &q), 0);
  assert_string_equal(q.data, "SELECT \"status\", \"cycleAvgDuration\" FROM \"loadgen_run\" "
                              "WHERE \"test_type\" = 'daily-perf' AND time >= 5 AND time < 9 "
                              "GROUP BY \"host\", \"run\", \"revision\"");
  ps_buf_free(&q);
  /* InfluxDB 1.6.7's answer shape: a series per group, its last row wins;
   * a time near 1.7e18 ns comes back exactly after the microsecond rounding */
  const char *answer =
      "{\"results\":[{\"statement_id\":0,\"series\":["
      "{\"name\":\"loadgen_run\",\"tags\":{\"host\":\"bench-b\",\"revision\":"
      "\"9eb37164f6f7\",\"run\":\"daily-perf-9eb37164f6f7\"},"
      "\"columns\":[\"time\",\"status\",\"cycleAvgDuration\","
      "\"cycleSuccessRate\"],\"values\":[[1647216135581548000,\"success\",24.330188,100]]},"
      "{\"name\":\"loadgen_run\",\"tags\":{\"revision\":\"\",\"run\":\"manual-x\"},"
      "\"columns\":[\"time\",\"cycleSuccessRate\",\"status\"],\"values\":"
      "[[1,90,\"running\"],[1647302702000001000,null,\"failed\"]]}]}]}";
  got_row rows[4];
  memset(rows, 0, sizeof rows);
  assert_int_equal(jd_verdicts_history_parse(answer, METRICS, 2, on_row, NULL, rows, NULL), 0);
  assert_string_equal(rows[0].host, "bench-b");
  assert_string_equal(rows[0].run, "daily-perf-9eb37164f6f7");
  assert_string_equal(rows[0].rev, "9eb37164f6f7");
  assert_true(rows[0].start == 1647216135581548000LL);
  assert_int_equal(rows[0].status, PS_RUN_STATUS_SUCCESS);
  assert_true(rows[0].v0 == 24.330188 && rows[0].v1 == 100.0);
  assert_string_equal(rows[1].host, "-"); /* points without a host tag */
  assert_string_equal(rows[1].run, "manual-x");
  assert_string_equal(rows[1].rev, "-");
  assert_true(rows[1].start == 1647302702000001000LL);
  assert_int_equal(rows[1].status, PS_RUN_STATUS_FAILED);
  assert_true(isnan(rows[1].v0) && isnan(rows[1].v1));
  assert_int_equal(rows[2].run[0], 0);
  assert_int_equal(
      jd_verdicts_history_parse("{\"error\":\"x\"}", METRICS, 2, on_row, NULL, rows, NULL),
      -EPROTO);
  assert_int_equal(jd_verdicts_history_parse("not json", METRICS, 2, on_row, NULL, rows, NULL),
                   -EPROTO);
  memset(rows, 0, sizeof rows);
  assert_int_equal(jd_verdicts_history_parse("{\"results\":[{\"statement_id\":0}]}", METRICS, 2,
                                             on_row, NULL, rows, NULL),
                   0);
  assert_int_equal(rows[0].run[0], 0);
  /* A 200 whose rows are not what was asked: an error that says why, and
   * no row taken from it, not even from its good series */
  const struct {
    const char *body, *why;
  } bad[] = {
      {"{\"results\":[{\"series\":[{\"tags\":{\"run\":\"a\"},\"columns\":[\"time\","
       "\"status\"],\"values\":[[1,\"success\"]]},{\"tags\":{\"run\":\"b\"},\"columns\":"
       "[\"time\",\"status\"],\"values\":[[\"yesterday\",\"success\"]]}]}]}",
       "row 1: time is not a time in nanoseconds"},
      /* beyond an int64 of nanoseconds (found by tests/fuzz/fuzz_history.c) */
      {"{\"results\":[{\"series\":[{\"tags\":{\"run\":\"a\"},\"columns\":[\"time\","
       "\"status\"],\"values\":[[160047302702000001000,\"success\"]]}]}]}",
       "row 1: time is not a time in nanoseconds"},
      {"{\"results\":[{\"series\":[{\"tags\":{\"run\":\"a\"},\"columns\":[\"time\","
       "\"cycleAvgDuration\"],\"values\":[[1,\"fast\"]]}]}]}",
       "row 1: cycleAvgDuration is not a number"},
      {"{\"results\":[{\"series\":[{\"tags\":{\"run\":\"a\"},\"columns\":[\"time\","
       "\"status\"],\"values\":[[1,7]]}]}]}",
       "row 1: status is not a string"},
      {"{\"results\":[{\"series\":[{\"columns\":[\"time\"],\"values\":[[1,2]]}]}]}",
       "row 1 is not a list of 1 values"},
      {"{\"results\":[{\"series\":[{\"columns\":[\"status\"],\"values\":[]}]}]}", "no time column"},
      {"{\"results\":[{\"error\":\"database not found\"}]}", "the server said: database"},
      {"{\"results\":\"none\"}", "no list of results"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(rows, 0, sizeof rows);
    ps_buf why;
    ps_buf_init(&why, 0);
    assert_int_equal(jd_verdicts_history_parse(bad[i].body, METRICS, 2, on_row, NULL, rows, &why),
                     -EPROTO);
    assert_non_null(why.data);
    if (!strstr(why.data, bad[i].why))
      fail_msg("%zu: %s", i, why.data);
    assert_int_equal(rows[0].run[0], 0);
    ps_buf_free(&why);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_history_query_and_answer),
      cmocka_unit_test(test_history_growth_statement),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
