/*
 * Unit tests of the judging layer's subscriptions (judging/judging.c): the
 * measurements the judges ask the delivery for cover every figure's.
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

#include "core/figures.h"
#include "judging/judging.h"

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
  size_t n = jd_judging_measurements(m, PL_TAP_MAX + 4);
  assert_true(n <= PL_TAP_MAX);
  for (size_t i = 0; i < ps_nfigures; i++)
    assert_true(has(m, n, ps_figures[i].measurement));
  assert_true(has(m, n, "dss_bench"));
  assert_true(has(m, n, "runs"));
  assert_true(has(m, n, "perfship_verdict"));
  /* the samples behind the stage figures: how sure a stage's change is */
  assert_true(has(m, n, "loadgen_block"));
  assert_true(has(m, n, "loadgen_cycle"));
  assert_false(has(m, n, "loadgen_slog_block_vat")); /* read back from the server */
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
      cmocka_unit_test(test_judges_subscribe_to_their_figures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
