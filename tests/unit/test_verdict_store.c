/*
 * Unit tests of what the verdict stage keeps and reads: the series ledger
 * (agent/verdict/ledger.c: run order, replacing a run, the cap, the saved
 * form read back under another metric list), the newest-two-runs test
 * (ps_edivisive_tail_p against hand-computed cases), the server's history
 * answer (pl_history_parse on a real InfluxDB 1.6.7 answer shape) and the
 * figures picked out of passing points (judging/verdicts_collect.c), and
 * the measurements the judges subscribe to (judging/judging.c).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/buf.h"
#include "core/figures.h"
#include "judging/judging.h"
#include "judging/verdicts_collect.h"
#include "judging/verdicts_history.h"
#include "verdict/edivisive.h"
#include "verdict/ledger.h"

static const char *const METRICS[] = {"cycleAvgDuration", "cycleSuccessRate"};
#define HA "bench-a" /* the host of the ledger tests' runs */

static void test_ledger_order_and_replace(void **state) {
  (void)state;
  ps_ledger l;
  assert_int_equal(ps_ledger_init(&l, METRICS, 2), 0);
  ps_ledger_series *s = ps_ledger_series_get(&l, "loadgen", "daily-perf", HA, 1);
  assert_non_null(s);
  assert_ptr_equal(ps_ledger_series_get(&l, "loadgen", "daily-perf", HA, 0), s);
  assert_null(ps_ledger_series_get(&l, "loadgen", "other", "bench-a", 0));
  double v[2] = {24.0, 100.0};
  /* arrival order is not time order */
  assert_int_equal(ps_ledger_put(&l, s, HA, "c", "ccc", 3000, PS_RUN_STATUS_SUCCESS, 1, v), 0);
  assert_int_equal(ps_ledger_put(&l, s, HA, "a", "aaa", 1000, PS_RUN_STATUS_SUCCESS, 1, v), 0);
  assert_int_equal(ps_ledger_put(&l, s, HA, "b", NULL, 2000, PS_RUN_STATUS_FAILED, 0, NULL), 1);
  /* same time: by name */
  assert_int_equal(ps_ledger_put(&l, s, HA, "a2", NULL, 1000, PS_RUN_STATUS_SUCCESS, 1, v), 1);
  assert_int_equal(s->nruns, 4);
  assert_string_equal(s->runs[0].name, "a");
  assert_string_equal(s->runs[1].name, "a2");
  assert_string_equal(s->runs[2].name, "b");
  assert_string_equal(s->runs[3].name, "c");
  assert_true(isnan(s->runs[2].values[0])); /* no values: absent */
  assert_null(s->runs[2].revision);
  /* put again: replaced (status and time may change), and moved */
  s->runs[0].judged = 1;
  uint64_t judged_seq = s->runs[0].put_seq;
  double w[2] = {30.0, NAN};
  assert_int_equal(ps_ledger_put(&l, s, HA, "a", "aaa", 4000, PS_RUN_STATUS_SUCCESS, 0, w), 3);
  assert_int_equal(s->nruns, 4);
  assert_string_equal(s->runs[3].name, "a");
  assert_false(s->runs[3].judged);
  /* a pass that judged the old entry can tell it is not this one */
  assert_true(s->runs[3].put_seq != judged_seq);
  assert_true(s->runs[3].put_seq > s->runs[2].put_seq);
  assert_true(s->runs[3].values[0] == 30.0);
  assert_int_equal(ps_ledger_find(s, HA, "b"), 1);
  assert_int_equal(ps_ledger_find(s, HA, "nope"), -1);
  /* a run is (host, name): another machine's run of the same name is
   * another run, and the view says whose each is */
  assert_int_equal(ps_ledger_find(s, "bench-b", "b"), -1);
  assert_int_equal(ps_ledger_put(&l, s, "bench-b", "b", NULL, 2000, PS_RUN_STATUS_SUCCESS, 1, v),
                   2);
  assert_int_equal(s->nruns, 5);
  assert_int_equal(ps_ledger_find(s, HA, "b"), 1);
  assert_int_equal(ps_ledger_find(s, "bench-b", "b"), 2);
  assert_int_equal(s->runs[1].status, PS_RUN_STATUS_FAILED);
  ps_verdict_run view[5];
  ps_ledger_view(s, view);
  assert_string_equal(view[2].host, "bench-b");
  assert_string_equal(view[1].host, "bench-a");
  assert_string_equal(view[3].name, "c");
  assert_int_equal(view[3].start_ns, 3000);
  /* the same test type on another host is another series */
  assert_null(ps_ledger_series_get(&l, "loadgen", "daily-perf", "bench-b", 0));
  assert_ptr_not_equal(ps_ledger_series_get(&l, "loadgen", "daily-perf", "", 1), s);
  ps_ledger_free(&l);
}

static void test_ledger_cap(void **state) {
  (void)state;
  ps_ledger l;
  assert_int_equal(ps_ledger_init(&l, METRICS, 2), 0);
  ps_ledger_series *s = ps_ledger_series_get(&l, "loadgen", "t", HA, 1);
  char name[32];
  for (int i = 0; i < PS_LEDGER_MAX_RUNS + 10; i++) {
    snprintf(name, sizeof name, "run-%05d", i);
    assert_true(ps_ledger_put(&l, s, HA, name, NULL, 1000 + i, PS_RUN_STATUS_SUCCESS, 0, NULL) >=
                0);
  }
  assert_int_equal(s->nruns, PS_LEDGER_MAX_RUNS);
  assert_string_equal(s->runs[0].name, "run-00010"); /* the oldest went */
  ps_ledger_free(&l);
}

static void test_ledger_json_under_another_metric_list(void **state) {
  (void)state;
  ps_ledger l;
  assert_int_equal(ps_ledger_init(&l, METRICS, 2), 0);
  ps_ledger_series *s = ps_ledger_series_get(&l, "loadgen", "daily-perf", HA, 1);
  double v[2] = {24.5, 98.0};
  ps_ledger_put(&l, s, HA, "r1", "abc1234", 1700000000123456000LL, PS_RUN_STATUS_SUCCESS, 1, v);
  ps_ledger_put(&l, s, HA, "r2", NULL, 1700086400123456000LL, PS_RUN_STATUS_INTERRUPTED, 0,
                NULL);
  s->runs[0].judged = 1;
  cJSON *j = ps_ledger_to_json(&l);
  ps_ledger_free(&l);
  /* read with one metric renamed away and one added */
  static const char *const OTHER[] = {"cycleSuccessRate", "walletDeployDuration"};
  assert_int_equal(ps_ledger_init(&l, OTHER, 2), 0);
  ps_ledger_from_json(&l, j, "bench-x", "bench-x");
  cJSON_Delete(j);
  s = ps_ledger_series_get(&l, "loadgen", "daily-perf", HA, 0);
  assert_non_null(s);
  assert_int_equal(s->nruns, 2);
  assert_string_equal(s->runs[0].name, "r1");
  assert_string_equal(s->runs[0].host, "bench-a"); /* saved hosts win over the defaults */
  assert_true(s->runs[0].start_ns == 1700000000123456000LL); /* exact, not through a double */
  assert_string_equal(s->runs[0].revision, "abc1234");
  assert_true(s->runs[0].values[0] == 98.0);
  assert_true(isnan(s->runs[0].values[1]));
  assert_true(s->runs[0].judged);
  assert_true(s->runs[0].backfill);
  assert_int_equal(s->runs[1].status, PS_RUN_STATUS_INTERRUPTED);
  assert_false(s->runs[1].judged);
  /* garbage is skipped, not fatal, and counted (the caller says it): a
   * damaged entry costs that entry, the good run beside it is read */
  cJSON *bad = cJSON_Parse("[{\"source\":\"loadgen\"},{\"source\":1,\"series\":[]},"
                           "{\"source\":\"x\",\"series\":\"y\",\"runs\":[{\"name\":3},"
                           "{\"name\":\"ok\",\"host\":\"bench-a\",\"start_ns\":\"5\"}]},"
                           "{\"source\":\"x\",\"series\":\"z\",\"runs\":5}]");
  assert_int_equal(ps_ledger_from_json(&l, bad, "bench-a", "bench-a"), 4);
  cJSON_Delete(bad);
  ps_ledger_series *y = ps_ledger_series_get(&l, "x", "y", "bench-a", 0);
  assert_non_null(y);
  assert_int_equal(y->nruns, 1);
  assert_string_equal(y->runs[0].name, "ok");
  ps_ledger_free(&l);
}

/* A state saved before runs had hosts: its judged runs may be other
 * machines' runs read from the server, so they go (the server gives them
 * again with their hosts); its unjudged runs are this agent's own, waiting. */
static void test_ledger_json_from_before_hosts(void **state) {
  (void)state;
  ps_ledger l;
  assert_int_equal(ps_ledger_init(&l, METRICS, 2), 0);
  cJSON *old = cJSON_Parse(
      "[{\"source\":\"loadgen\",\"series\":\"daily-perf\",\"runs\":["
      "{\"name\":\"r1\",\"start_ns\":\"1000\",\"status\":\"success\",\"judged\":true},"
      "{\"name\":\"r2\",\"start_ns\":\"2000\",\"status\":\"success\",\"judged\":false}]}]");
  ps_ledger_from_json(&l, old, "bench-a", "bench-a");
  cJSON_Delete(old);
  ps_ledger_series *s = ps_ledger_series_get(&l, "loadgen", "daily-perf", HA, 0);
  assert_non_null(s);
  assert_int_equal(s->nruns, 1);
  assert_string_equal(s->runs[0].name, "r2");
  assert_string_equal(s->runs[0].host, "bench-a");
  assert_false(s->runs[0].judged);
  ps_ledger_free(&l);
}

static void test_tail_p_hand_cases(void **state) {
  (void)state;
  /* two values far from four equal ones: only the observed choice is as
   * extreme, so p = 1 / C(6, 2) */
  double a[] = {1, 1, 1, 1, 5, 5};
  assert_true(fabs(ps_edivisive_tail_p(a, 6) - 1.0 / 15.0) < 1e-12);
  /* 1 2 3 4: {3,4} and {1,2} split alike: p = 2 / 6 */
  double b[] = {1, 2, 3, 4};
  assert_true(fabs(ps_edivisive_tail_p(b, 4) - 2.0 / 6.0) < 1e-12);
  /* the newest two in the middle of the others: far from significant (3
   * of the 15 choices split at least as well) */
  double c[] = {1, 5, 1, 5, 3, 3};
  assert_true(fabs(ps_edivisive_tail_p(c, 6) - 3.0 / 15.0) < 1e-12);
  /* all equal: every choice ties: p = 1 */
  double d[] = {2, 2, 2, 2, 2};
  assert_true(ps_edivisive_tail_p(d, 5) == 1.0);
  assert_true(isnan(ps_edivisive_tail_p(a, 3)));
  /* agrees with Q by the definition: the observed split has the largest Q */
  assert_true(ps_edivisive_q(a, 6, 4) > ps_edivisive_q(c, 6, 4));
}

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
  assert_int_equal(pl_history_query_text("daily-perf", "a", 5, 9, GROWTH, 2, &q), 0);
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
  assert_int_equal(pl_history_parse(answer, GROWTH, 2, on_no_row, on_growth_row, &g, NULL), 0);
  assert_int_equal(g.rows, 1);
  assert_string_equal(g.run, "r1");
  assert_true(isnan(g.v[0]) && g.v[1] == 3.0);
}

static void test_history_query_and_answer(void **state) {
  (void)state;
  ps_buf q;
  ps_buf_init(&q, 0);
  assert_int_equal(
      pl_history_query_text("daily'perf", "bench'a", 1647216135581548000LL, 0, METRICS, 2, &q),
      0);
  assert_string_equal(q.data, "SELECT \"status\", \"cycleAvgDuration\", \"cycleSuccessRate\" "
                              "FROM \"loadgen_run\" WHERE \"test_type\" = 'daily\\'perf' "
                              "AND \"host\" = 'bench\\'a' AND time >= 1647216135581548000 "
                              "GROUP BY \"host\", \"run\", \"revision\"");
  ps_buf_free(&q);
  /* verdicts.series_by = "test_type": every host, still bounded in time */
  ps_buf_init(&q, 0);
  /* ... and a further read takes only the slice before the last one */
  assert_int_equal(pl_history_query_text("daily-perf", NULL, 5, 9, METRICS, 1, &q), 0);
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
  assert_int_equal(pl_history_parse(answer, METRICS, 2, on_row, NULL, rows, NULL), 0);
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
  assert_int_equal(pl_history_parse("{\"error\":\"x\"}", METRICS, 2, on_row, NULL, rows, NULL), -EPROTO);
  assert_int_equal(pl_history_parse("not json", METRICS, 2, on_row, NULL, rows, NULL), -EPROTO);
  memset(rows, 0, sizeof rows);
  assert_int_equal(pl_history_parse("{\"results\":[{\"statement_id\":0}]}", METRICS, 2, on_row,
                                     NULL, rows, NULL),
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
      {"{\"results\":[{\"series\":[{\"columns\":[\"status\"],\"values\":[]}]}]}",
       "no time column"},
      {"{\"results\":[{\"error\":\"database not found\"}]}", "the server said: database"},
      {"{\"results\":\"none\"}", "no list of results"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(rows, 0, sizeof rows);
    ps_buf why;
    ps_buf_init(&why, 0);
    assert_int_equal(pl_history_parse(bad[i].body, METRICS, 2, on_row, NULL, rows, &why), -EPROTO);
    assert_non_null(why.data);
    if (!strstr(why.data, bad[i].why))
      fail_msg("%zu: %s", i, why.data);
    assert_int_equal(rows[0].run[0], 0);
    ps_buf_free(&why);
  }
}

static ps_point pt(const char *m, ps_tag *tags, size_t nt, ps_field *f, size_t nf, int64_t t) {
  ps_point p = {m, tags, nt, f, nf, t};
  return p;
}

static void test_collect_loadgen_and_dss(void **state) {
  (void)state;
  pl_collect c;
  pl_collect_init(&c, METRICS, 2);
  pl_dss_doc *doc = NULL;
  ps_tag rt[] = {{"run", "r1"}, {"test_type", "daily-perf"}, {"revision", "abc1234"}};
  ps_field rf[] = {ps_field_float("cycleAvgDuration", 24.5), ps_field_int("totalBlockCount", 9),
                   ps_field_float("cycleSuccessRate", 100.0)};
  ps_point p = pt("loadgen_run", rt, 3, rf, 3, 1700000000000000000LL);
  assert_int_equal(pl_collect_point(&c, &p, &doc), PL_COLLECT_NONE);
  ps_tag st[] = {{"run", "r1"}, {"stage", "2"}, {"task", "all"}};
  ps_field sf[] = {ps_field_float("avgDuration", 21.0)};
  p = pt("loadgen_stage_cycles", st, 3, sf, 1, 1);
  pl_collect_point(&c, &p, &doc);
  ps_tag st2[] = {{"run", "r1"}, {"stage", "2"}, {"task", "vault"}}; /* not task=all */
  ps_field sf2[] = {ps_field_float("avgDuration", 99.0)};
  p = pt("loadgen_stage_cycles", st2, 3, sf2, 1, 1);
  pl_collect_point(&c, &p, &doc);
  ps_tag bt[] = {{"run", "r1"}, {"stage", "2"}, {"summary", "onlyLive"}};
  ps_field bf[] = {ps_field_float("avgSwingsetTime", 0.2), ps_field_float("avgBlockDuration", 5.2)};
  p = pt("loadgen_stage_blocks", bt, 3, bf, 2, 1);
  pl_collect_point(&c, &p, &doc);
  ps_tag gt[] = {{"run", "r1"}, {"stage", "2"}};
  ps_field gf[] = {ps_field_bool("loadgen", 1)};
  p = pt("loadgen_stage", gt, 2, gf, 1, 1);
  pl_collect_point(&c, &p, &doc);
  pl_lg_run *r = pl_collect_find_run(&c, "r1");
  assert_non_null(r);
  assert_string_equal(r->series, "daily-perf");
  assert_string_equal(r->revision, "abc1234");
  assert_true(r->start_ns == 1700000000000000000LL);
  assert_true(r->values[0] == 24.5 && r->values[1] == 100.0);
  assert_int_equal(r->nstages, 1);
  assert_int_equal(r->stages[0].stage, 2);
  assert_true(r->stages[0].loadgen);
  assert_true(r->stages[0].avg_duration == 21.0);
  assert_true(r->stages[0].avg_swingset_time == 0.2);

  /* DSS: arms in file order, variants by index, the marker ends the file */
  const char *arms[] = {"ref:1", "pr:2"};
  for (int a = 0; a < 2; a++)
    for (int v = 0; v < 3; v++) {
      ps_tag dt[] = {{"run", "cmp"}, {"test", "rid_isa"}, {"arm", arms[a]}};
      ps_field df[] = {ps_field_int("variantIndex", v),
                       ps_field_float("rps_total", 10.0 * (v + 1) * (a ? 0.8 : 1.0)),
                       ps_field_int("errors", a)};
      p = pt("dss_bench", dt, 3, df, 3, 5);
      assert_int_equal(pl_collect_point(&c, &p, &doc), PL_COLLECT_NONE);
    }
  ps_tag mt[] = {{"source", "dss_bench"}, {"run", "cmp"}, {"event", "end"}};
  ps_field mf[] = {ps_field_bool("backfill", 1)};
  p = pt("runs", mt, 3, mf, 1, 1795970018000000000LL);
  assert_int_equal(pl_collect_point(&c, &p, &doc), PL_COLLECT_DSS_ENDED);
  assert_non_null(doc);
  assert_true(doc->ended && doc->backfill);
  assert_int_equal(doc->ntests, 1);
  assert_int_equal(doc->tests[0].narms, 2);
  assert_int_equal(doc->tests[0].nvariants, 3);
  assert_string_equal(doc->tests[0].arms[0].label, "ref:1");
  assert_true(doc->tests[0].arms[1].rps_total[2] == 24.0);
  assert_true(isnan(doc->tests[0].arms[1].p95_ms[0]));
  /* a loadgen marker is not the end of a DSS file */
  ps_tag lt[] = {{"source", "loadgen"}, {"run", "r1"}};
  p = pt("runs", lt, 2, mf, 1, 1);
  assert_int_equal(pl_collect_point(&c, &p, &doc), PL_COLLECT_NONE);

  /* saved and read back */
  cJSON *j = pl_collect_to_json(&c);
  pl_collect d;
  pl_collect_init(&d, METRICS, 2);
  pl_collect_from_json(&d, j);
  cJSON_Delete(j);
  pl_lg_run *r2 = pl_collect_find_run(&d, "r1");
  assert_non_null(r2);
  assert_true(r2->start_ns == 1700000000000000000LL);
  assert_int_equal(r2->nstages, 1);
  assert_true(r2->stages[0].avg_block_duration == 5.2);
  assert_non_null(d.docs);
  assert_int_equal(d.docs->tests[0].nvariants, 3);
  assert_true(d.docs->tests[0].arms[1].errors[1] == 1.0);
  assert_true(d.docs->time_ns == 1795970018000000000LL);
  pl_collect_drop_run(&d, r2);
  assert_null(pl_collect_find_run(&d, "r1"));
  pl_collect_drop_dss(&d, d.docs);
  assert_null(d.docs);
  pl_collect_free(&d);
  pl_collect_free(&c);
}

static int has(const char *const *list, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(list[i], name) == 0)
      return 1;
  return 0;
}

/* The delivery hands the judges only what they subscribed to: every
 * figure's measurement must be among it, once, and all of it must fit the
 * delivery's set (the service subscribes what this returns). */
static void test_judges_subscribe_to_their_figures(void **state) {
  (void)state;
  const char *m[PL_TAP_MAX + 4];
  size_t n = pl_judging_measurements(m, PL_TAP_MAX + 4);
  assert_true(n <= PL_TAP_MAX);
  for (size_t i = 0; i < ps_nfigures; i++)
    assert_true(has(m, n, ps_figures[i].measurement));
  assert_true(has(m, n, "dss_bench"));
  assert_true(has(m, n, "runs"));
  assert_true(has(m, n, "perfship_verdict"));
  assert_false(has(m, n, "loadgen_block")); /* thousands per run, judged by nobody */
  for (size_t i = 0; i < n; i++)
    assert_false(has(m, i, m[i]));
  /* the table's own promises */
  assert_string_equal(ps_stage_figure(PS_STAGE_FIG_SWINGSET_TIME)->tag_value, "onlyLive");
  for (int i = 0; i < PS_STAGE_NFIGURES; i++)
    assert_int_equal(ps_stage_figure((ps_stage_figure_id)i)->scope, PS_FIG_STAGE);
  for (size_t i = 0; i < PS_FIGURES_NHEADLINE; i++) {
    assert_int_equal(ps_figures[i].scope, PS_FIG_RUN);
    assert_non_null(ps_figures[i].label);
    assert_ptr_equal(ps_figure_find(ps_figures[i].name), &ps_figures[i]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ledger_order_and_replace),
      cmocka_unit_test(test_ledger_cap),
      cmocka_unit_test(test_ledger_json_under_another_metric_list),
      cmocka_unit_test(test_ledger_json_from_before_hosts),
      cmocka_unit_test(test_tail_p_hand_cases),
      cmocka_unit_test(test_history_query_and_answer),
      cmocka_unit_test(test_history_growth_statement),
      cmocka_unit_test(test_collect_loadgen_and_dss),
      cmocka_unit_test(test_judges_subscribe_to_their_figures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
