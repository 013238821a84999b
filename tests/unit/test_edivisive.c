/*
 * test_edivisive: the change-point test (agent/verdict/edivisive.c) against
 * cases small enough to compute by hand: the divergence Q of a split, the
 * exact permutation p-value of a tiny series, where the splits land, that
 * one value is never a segment, and that the same seed always gives the
 * same answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/edivisive.h"

static ps_cp_ws *ws;

static int setup(void **state) {
  (void)state;
  return ps_cp_ws_new(&ws, 512);
}

static int teardown(void **state) {
  (void)state;
  ps_cp_ws_free(ws);
  return 0;
}

static void test_q_by_hand(void **state) {
  (void)state;
  /* [0 0 | 1 1]: B = 4 pairs at 1 -> 2*4/(2*2) = 2; no spread inside:
   * Q = 2*2/4 * 2 = 2 */
  double step[] = {0, 0, 1, 1};
  assert_float_equal(ps_edivisive_q(step, 4, 2), 2.0, 1e-12);
  /* [0 1 | 0 1]: between 2*2/4 = 1, inside 2*1/2 = 1 each: Q = 1 * (1-1-1) */
  double alt[] = {0, 1, 0, 1};
  assert_float_equal(ps_edivisive_q(alt, 4, 2), -1.0, 1e-12);
  /* [1 2 3 | 10 11]: B = 9+10+8+9+7+8 = 51 -> 2*51/6 = 17; left 2*4/6 =
   * 4/3; right 2*1/2 = 1; Q = 6/5 * (17 - 4/3 - 1) = 17.6 */
  double five[] = {1, 2, 3, 10, 11};
  assert_float_equal(ps_edivisive_q(five, 5, 3), 17.6, 1e-12);
  /* a side with fewer than two values has no statistic */
  assert_true(isnan(ps_edivisive_q(five, 5, 1)));
  assert_true(isnan(ps_edivisive_q(five, 5, 4)));
}

static double uniform(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0;
}

/* The fast scan picks the split the definition says is best, with the
 * same Q, on series with ties, steps and outliers. */
static void test_scan_matches_definition(void **state) {
  (void)state;
  uint64_t rng = 42;
  ps_cp_params params = {.significance = 0.2, .permutations = 9, .max_points = 1};
  for (int trial = 0; trial < 200; trial++) {
    size_t n = 4 + (size_t)(uniform(&rng) * 60);
    double x[64];
    for (size_t i = 0; i < n; i++) {
      x[i] = floor(uniform(&rng) * 8); /* many ties */
      if (trial % 3 == 0 && i >= n / 2)
        x[i] += 5;
    }
    double best = -INFINITY;
    size_t best_tau = 0;
    for (size_t t = 2; t + 2 <= n; t++) {
      double q = ps_edivisive_q(x, n, t);
      if (q > best + 1e-9 * fabs(best)) {
        best = q;
        best_tau = t;
      }
    }
    ps_cp_result r;
    assert_int_equal(ps_edivisive(ws, x, n, &params, 7, &r), 0);
    ps_cp cand = r.npoints ? r.points[0] : r.rejected_cp;
    assert_true(r.npoints == 1 || r.rejected);
    assert_float_equal(cand.q, best, 1e-9 * (1 + fabs(best)));
    /* equal statistics may pick another split of the same value */
    assert_float_equal(ps_edivisive_q(x, n, cand.at), ps_edivisive_q(x, n, best_tau),
                       1e-9 * (1 + fabs(best)));
  }
}

/* [0 0 0 1 1 1]: of the 20 orders of three 0s and three 1s, only 000111
 * and 111000 reach the observed Q = 3, so the exact permutation p-value is
 * 2/20 = 0.1. */
static void test_exact_p_value(void **state) {
  (void)state;
  double x[] = {0, 0, 0, 1, 1, 1};
  assert_float_equal(ps_edivisive_q(x, 6, 3), 3.0, 1e-12);
  ps_cp_params params = {.significance = 0.5, .permutations = 19999};
  ps_cp_result r;
  assert_int_equal(ps_edivisive(ws, x, 6, &params, 1, &r), 0);
  /* 0.1 is not <= 0.5? it is: the split is accepted */
  assert_int_equal(r.npoints, 1);
  assert_int_equal(r.points[0].at, 3);
  assert_float_equal(r.points[0].p_value, 0.1, 0.01);
  /* at the usual level it is not significant; the test stops at its 10th
   * exceedance and says so with the sequential p = 10 / permutations run */
  params.significance = 0.05;
  params.permutations = 0;
  assert_int_equal(ps_edivisive(ws, x, 6, &params, 1, &r), 0);
  assert_int_equal(r.npoints, 0);
  assert_true(r.rejected);
  assert_int_equal(r.rejected_cp.at, 3);
  assert_true(r.permutations_run < 199);
  assert_float_equal(r.rejected_cp.p_value, 10.0 / (double)r.permutations_run, 1e-12);
  assert_in_range((uint64_t)(r.rejected_cp.p_value * 1000), 50, 250);
}

/* Two steps up, 10 runs apart; then a new level of two runs at the end. */
static void test_steps_are_found_where_they_are(void **state) {
  (void)state;
  double x[30];
  uint64_t rng = 9;
  for (int i = 0; i < 30; i++)
    x[i] = (i >= 10 ? 5.0 : 0.0) + (i >= 20 ? 5.0 : 0.0) + uniform(&rng);
  ps_cp_params params = {.significance = 0.05};
  ps_cp_result r;
  assert_int_equal(ps_edivisive(ws, x, 30, &params, 3, &r), 0);
  assert_int_equal(r.npoints, 2);
  assert_int_equal(r.points[0].at, 10);
  assert_int_equal(r.points[1].at, 20);
  /* no permutation of 10 high among 30 values comes near: the smallest p */
  assert_float_equal(r.points[0].p_value, 1.0 / 200.0, 1e-12);
  assert_float_equal(r.points[1].p_value, 1.0 / 200.0, 1e-12);
  assert_true(r.rejected); /* the third candidate was not significant */
  assert_true(r.rejected_cp.p_value > 0.05);

  /* two runs at a new level at the end are enough */
  double end[22];
  for (int i = 0; i < 22; i++)
    end[i] = (i >= 20 ? 1.1 : 1.0) + 0.01 * uniform(&rng);
  assert_int_equal(ps_edivisive(ws, end, 22, &params, 3, &r), 0);
  assert_int_equal(r.npoints, 1);
  assert_int_equal(r.points[0].at, 20);
  assert_true(r.points[0].p_value <= 0.05);
}

static void test_one_value_is_never_a_segment(void **state) {
  (void)state;
  double x[21];
  uint64_t rng = 5;
  for (int i = 0; i < 21; i++)
    x[i] = 24.0 + uniform(&rng);
  x[20] = 40.0; /* the newest run alone far off */
  ps_cp_params params = {.significance = 0.05};
  ps_cp_result r;
  assert_int_equal(ps_edivisive(ws, x, 21, &params, 11, &r), 0);
  for (size_t k = 0; k < r.npoints; k++)
    assert_true(r.points[k].at <= 19);
  assert_int_equal(r.npoints, 0);
  /* also in the middle: the outlier next to an ordinary value does not
   * make a segment of two */
  x[20] = 24.5;
  x[10] = 40.0;
  assert_int_equal(ps_edivisive(ws, x, 21, &params, 11, &r), 0);
  assert_int_equal(r.npoints, 0);

  /* too short to split at all: nothing tested */
  assert_int_equal(ps_edivisive(ws, x, 3, &params, 11, &r), 0);
  assert_int_equal(r.npoints, 0);
  assert_false(r.rejected);
  assert_int_equal(r.permutations_run, 0);
}

static void test_constant_series_is_never_split(void **state) {
  (void)state;
  double x[40];
  for (int i = 0; i < 40; i++)
    x[i] = 100.0;
  ps_cp_params params = {.significance = 0.05};
  ps_cp_result r;
  assert_int_equal(ps_edivisive(ws, x, 40, &params, 1, &r), 0);
  assert_int_equal(r.npoints, 0);
  assert_true(r.rejected);
  assert_float_equal(r.rejected_cp.p_value, 1.0, 0); /* every permutation ties */
}

static void test_deterministic(void **state) {
  (void)state;
  double x[60];
  uint64_t rng = 77;
  for (int i = 0; i < 60; i++)
    x[i] = 10.0 + (i >= 40 ? 0.3 : 0.0) + uniform(&rng) * 0.6;
  ps_cp_params params = {.significance = 0.05};
  ps_cp_result a, b, c;
  assert_int_equal(ps_edivisive(ws, x, 60, &params, 1234, &a), 0);
  assert_int_equal(ps_edivisive(ws, x, 60, &params, 1234, &b), 0);
  assert_memory_equal(&a, &b, sizeof a);
  /* another seed draws other permutations: same decision here, and the
   * p-values differ only by the Monte Carlo error */
  assert_int_equal(ps_edivisive(ws, x, 60, &params, 99, &c), 0);
  assert_int_equal(a.npoints, c.npoints);
  for (size_t k = 0; k < a.npoints; k++) {
    assert_int_equal(a.points[k].at, c.points[k].at);
    assert_float_equal(a.points[k].p_value, c.points[k].p_value, 0.03);
  }

  /* the seed of a (series, metric, run): FNV-1a 64 over the three names,
   * each ended by 0xff. Pinned, because changing it changes verdicts. */
  assert_true(ps_cp_seed("daily-perf", "cycleAvgDuration", "daily-perf-9eb37164f6f7") ==
              0x01f9241f2039ba89ULL);
  assert_true(ps_cp_seed("a", "bc", "d") != ps_cp_seed("ab", "c", "d"));
}

static void test_parameters(void **state) {
  (void)state;
  assert_int_equal(ps_cp_default_permutations(0.05), 199);
  assert_int_equal(ps_cp_default_permutations(0.01), 999);
  assert_int_equal(ps_cp_default_permutations(0.2), 49);
  double x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ps_cp_result r;
  ps_cp_params bad = {.significance = 0.0};
  assert_int_equal(ps_edivisive(ws, x, 8, &bad, 1, &r), -EINVAL);
  bad.significance = 0.05;
  bad.min_segment = 1;
  assert_int_equal(ps_edivisive(ws, x, 8, &bad, 1, &r), -EINVAL);
  ps_cp_params ok = {.significance = 0.05};
  assert_int_equal(ps_edivisive(ws, x, 513, &ok, 1, &r), -EINVAL); /* beyond capacity */
  x[3] = NAN;
  assert_int_equal(ps_edivisive(ws, x, 8, &ok, 1, &r), -EINVAL);
  ps_cp_ws *none = NULL;
  assert_int_equal(ps_cp_ws_new(&none, 0), -EINVAL);
  assert_null(none);
  ps_cp_ws_free(NULL);
}

/* ps_edivisive_tail_p, the newest-two-runs test, against hand-computed cases. */
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_q_by_hand),
      cmocka_unit_test(test_scan_matches_definition),
      cmocka_unit_test(test_exact_p_value),
      cmocka_unit_test(test_steps_are_found_where_they_are),
      cmocka_unit_test(test_one_value_is_never_a_segment),
      cmocka_unit_test(test_constant_series_is_never_split),
      cmocka_unit_test(test_deterministic),
      cmocka_unit_test(test_parameters),
      cmocka_unit_test(test_tail_p_hand_cases),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
