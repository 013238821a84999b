/*
 * test_explain: the cause beside a verdict (agent/verdict/explain.c) and a
 * stage's kernel growth against its limit (agent/verdict/growth_limit.c),
 * on small hand-made slog rows whose answers are worked out here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/config.h"
#include "verdict/explain.h"
#include "verdict/growth_limit.h"

#include "aux_defaults.h"

#define G0 {NAN, NAN, NAN}

/* Run "new": 10 cycles in stage 1; v1 spends 3 s (0.3 per cycle), v2 1 s.
 * Old runs a (10 cycles) and b (20 cycles): v1 1 s and 2 s (0.1 per cycle
 * both), v2 1 s and 2 s (0.1). Stage 0 and the partial stage of "new" are
 * left out whatever they hold. */
static const ps_explain_stage_row stages[] = {
    {"new", 0, 0, 5, 100, 50, {40, 40, 40}},
    {"new", 1, 0, 10, 4, 1, {2, 0, 0.5}},
    {"new", 2, 1, 10, 99, 99, {9, 9, 9}},
    {"a", 1, 0, 10, 2, 0.2, G0},
    {"b", 1, 0, 20, 4, 0.2, G0},
};
static const ps_explain_vat_row vats[] = {
    {"new", 0, "v1", "boot", 99}, {"new", 1, "v1", NULL, 3}, {"new", 1, "v2", "amm", 1},
    {"new", 2, "v2", "amm", 99},  {"a", 1, "v1", "bank", 1}, {"a", 1, "v2", "amm", 1},
    {"b", 1, "v1", "bank", 2},    {"b", 1, "v2", "amm", 2},  {"b", 1, "v3", "gone", 2},
};

static void vats_by_change_against_the_old_level(void **state) {
  (void)state;
  const char *old[] = {"a", "b", "never-ran"};
  ps_explanation e;
  assert_int_equal(ps_explain("new", old, 3, stages, 5, vats, 9, &e), 0);
  assert_int_equal(e.old_runs, 2);
  assert_int_equal(e.ntop, 3);
  /* v1: 0.1 -> 0.3 (its name from the old runs: "new" named it in stage
   * 0 only); v3, only in b (2 s / 20 cycles), 0.1 -> 0: a vat that went
   * away moved too; v2: 0.1 -> 0.1 */
  assert_string_equal(e.top[0].vat, "v1");
  assert_string_equal(e.top[0].name, "bank");
  assert_true(fabs(e.top[0].then - 0.1) < 1e-12);
  assert_true(fabs(e.top[0].now - 0.3) < 1e-12);
  assert_string_equal(e.top[1].vat, "v3");
  assert_true(fabs(e.top[1].then - 0.1) < 1e-12);
  assert_true(e.top[1].now == 0);
  assert_string_equal(e.top[2].vat, "v2");
  /* BOYD: now 1/4; then the mean of 0.1 and 0.05 */
  assert_true(fabs(e.boyd_now - 0.25) < 1e-12);
  assert_true(fabs(e.boyd_then - 0.075) < 1e-12);
  assert_true(e.growth[PS_GROWTH_KERNEL_OBJECTS] == 2);
  assert_true(e.growth[PS_GROWTH_CLIST_ENTRIES] == 0.5);
}

static void nothing_to_compare(void **state) {
  (void)state;
  ps_explanation e;
  assert_int_equal(ps_explain("none", NULL, 0, stages, 5, vats, 9, &e), 0);
  assert_int_equal(e.ntop, 0);
  assert_int_equal(e.old_runs, 0);
  assert_true(isnan(e.boyd_now) && isnan(e.boyd_then));
  assert_true(isnan(e.growth[0]));
}

static void growth_above_the_limit_is_a_regression(void **state) {
  (void)state;
  ps_growth_stage s = {"loadgen", "daily-perf", "r", "rev", 1, 0, 0, 42, {2, 1, NAN}};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_growth_limit(&cfg.verdicts, &s, &l), 0);
  assert_int_equal(l.n, 2); /* no verdict for the figure the stage lacks */
  assert_int_equal(l.v[0].verdict, PS_VERDICT_REGRESSION);
  assert_int_equal(l.v[0].method, PS_METHOD_LIMIT);
  assert_true(l.v[0].baseline == 1.0);
  assert_int_equal(l.v[0].stage, 1);
  assert_int_equal(l.v[1].verdict, PS_VERDICT_NONE); /* exactly at the limit passes */
  ps_verdict_list_free(&l);
  /* stage 0 and a partial stage are not judged */
  s.stage = 0;
  assert_int_equal(ps_growth_limit(&cfg.verdicts, &s, &l), 0);
  s.stage = 2;
  s.partial = 1;
  assert_int_equal(ps_growth_limit(&cfg.verdicts, &s, &l), 0);
  assert_int_equal(l.n, 0);
  ps_verdict_list_free(&l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(vats_by_change_against_the_old_level),
      cmocka_unit_test(nothing_to_compare),
      cmocka_unit_test_setup_teardown(growth_above_the_limit_is_a_regression, defaults_setup,
                                      defaults_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
