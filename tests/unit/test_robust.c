/*
 * test_robust: the robust estimators of the verdicts (agent/verdict/robust.c)
 * on inputs small enough to work out by hand: the median, the MAD scale,
 * the pooled MAD and winsorised standard deviation of levels, and that one
 * value far off moves none of them far.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "verdict/robust.h"

static void test_median_by_hand(void **state) {
  (void)state;
  double odd[] = {5, 1, 3};
  assert_float_equal(ps_robust_median(odd, 3), 3.0, 0);
  double even[] = {4, 1, 3, 2}; /* middle values 2 and 3 */
  assert_float_equal(ps_robust_median(even, 4), 2.5, 0);
  double one[] = {7};
  assert_float_equal(ps_robust_median(one, 1), 7.0, 0);
  assert_true(isnan(ps_robust_median(one, 0)));
}

static void test_mad_by_hand(void **state) {
  (void)state;
  double scratch[8];
  /* median 4; deviations 3 2 0 1 4 sorted 0 1 2 3 4: MAD 2 */
  double x[] = {1, 2, 4, 5, 8};
  assert_float_equal(ps_robust_mad_sd(x, 5, scratch), 1.4826 * 2.0, 1e-12);
  assert_float_equal(x[4], 8.0, 0); /* the input is left as it was */
  /* the 8 spoiled to 800: median and MAD stay */
  double spoiled[] = {1, 2, 4, 5, 800};
  assert_float_equal(ps_robust_mad_sd(spoiled, 5, scratch), 1.4826 * 2.0, 1e-12);
  /* more than half equal: no spread */
  double flat[] = {3, 3, 3, 9};
  assert_float_equal(ps_robust_mad_sd(flat, 4, scratch), 0.0, 0);
}

static void test_pooled_mad_by_hand(void **state) {
  (void)state;
  double scratch[8];
  /* [10 11 13 | 20 22]: medians 11 and 21; deviations 1 (0 left out) 2 |
   * 1 1: sorted 1 1 1 2, MAD 1 */
  double x[] = {10, 11, 13, 20, 22};
  size_t starts[] = {0, 3, 5};
  assert_float_equal(ps_robust_pooled_mad_sd(x, starts, 2, scratch), 1.4826, 1e-12);
  /* every segment a single value: nothing to tell */
  size_t singles[] = {0, 1, 2};
  assert_true(isnan(ps_robust_pooled_mad_sd(x, singles, 2, scratch)));
}

static void test_pooled_sd_by_hand(void **state) {
  (void)state;
  double scratch[8];
  /* Clean: [1 2 3 | 11 13], nothing is 3 MADs off, so the result is the
   * pooled standard deviation around the means 2 and 12: squares
   * 1 0 1 | 1 1 = 4 over 5 - 2 degrees of freedom. */
  double x[] = {1, 2, 3, 11, 13};
  size_t starts[] = {0, 3, 5};
  assert_float_equal(ps_robust_pooled_sd(x, starts, 2, scratch), sqrt(4.0 / 3.0), 1e-12);
  /* Spoiled: [1 2 3 2 30]: median 2, deviations -1 0 1 0 28; MAD of
   * 1 1 0 28 (the middle 0 left out) is the mean of 1 and 1 = 1, scale
   * 1.4826; the 28 counts as 3 x 1.4826 = 4.4478. Deviations -1 0 1 0
   * 4.4478, mean 0.88956: sum of squares
   * 2 x 0 + 1 + 1 + 4.4478^2 - 5 x 0.88956^2, over 4. */
  double s[] = {1, 2, 3, 2, 30};
  size_t one[] = {0, 5};
  double w = 3.0 * 1.4826, mean = w / 5.0;
  double want = sqrt((1.0 + 1.0 + w * w - 5.0 * mean * mean) / 4.0);
  assert_float_equal(ps_robust_pooled_sd(s, one, 1, scratch), want, 1e-12);
  /* the plain standard deviation of the same values is 12.3: the spoiled
   * value alone would set the noise gate */
  assert_true(want < 2.3);
}

static void test_clip(void **state) {
  (void)state;
  double x[] = {0, 9, -9, 2, 5};
  ps_robust_clip(x, 1, 4, 1.0, 2.0, 1.5); /* to [1 - 3, 1 + 3], x[1..3] only */
  assert_float_equal(x[0], 0, 0);
  assert_float_equal(x[1], 4, 0);
  assert_float_equal(x[2], -2, 0);
  assert_float_equal(x[3], 2, 0);
  assert_float_equal(x[4], 5, 0);
  /* no scale: nothing is pulled */
  ps_robust_clip(x, 0, 5, 0.0, 3.0, 0.0);
  assert_float_equal(x[4], 5, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_median_by_hand),
      cmocka_unit_test(test_mad_by_hand),
      cmocka_unit_test(test_pooled_mad_by_hand),
      cmocka_unit_test(test_pooled_sd_by_hand),
      cmocka_unit_test(test_clip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
