/*
 * Unit tests of the series ledger (agent/verdict/ledger.c): run order,
 * replacing a run, the cap, the saved form read back under another metric
 * list, and a state saved before runs had hosts.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

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
  ps_ledger_put(&l, s, HA, "r2", NULL, 1700086400123456000LL, PS_RUN_STATUS_INTERRUPTED, 0, NULL);
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
  assert_string_equal(s->runs[0].host, "bench-a");           /* saved hosts win over the defaults */
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ledger_order_and_replace),
      cmocka_unit_test(test_ledger_cap),
      cmocka_unit_test(test_ledger_json_under_another_metric_list),
      cmocka_unit_test(test_ledger_json_from_before_hosts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
