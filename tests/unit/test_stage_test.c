/*
 * test_stage_test: batch means and the two-stage t-test of stage drift
 * (agent/verdict/stage_test.c), on series small enough to work out on
 * paper; the p-values are closed forms of Student's t (df 2: 1 - t /
 * sqrt(2 + t^2); df 4: 1 - 3/2 u (1 - u^2 / 3) with u = t / sqrt(4 + t^2)).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>

#include "verdict/stage_test.h"

/* 1..9: batches of 3 (b = floor(sqrt 9)), means 2, 5, 8; R = 5; the
 * batch means' variance (9 + 0 + 9) / 2 = 9, over k = 3 batches: 3. */
static void test_batch_means_plain(void **state) {
  (void)state;
  double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  ps_batch_estimate e;
  assert_int_equal(ps_batch_means(x, NULL, 9, &e), 0);
  assert_int_equal(e.batches, 3);
  assert_int_equal(e.units, 9);
  assert_float_equal(e.ratio, 5.0, 1e-12);
  assert_float_equal(e.var, 3.0, 1e-12);
  /* a missing sample is skipped, not counted as 0 */
  double y[] = {1, 2, NAN, 3, 4, 5, 6, 7, 8, 9};
  assert_int_equal(ps_batch_means(y, NULL, 10, &e), 0);
  assert_int_equal(e.units, 9);
  assert_float_equal(e.var, 3.0, 1e-12);
}

/* 2, 4, 6, 8, 10: b = 2, k = 2, the last batch takes the rest: {2, 4}
 * and {6, 8, 10}; R = 6; z = 6 - 2 x 6 = -6 and 24 - 3 x 6 = 6; var =
 * 2 / 1 x 72 / 5^2 = 5.76. */
static void test_batch_means_remainder(void **state) {
  (void)state;
  double x[] = {2, 4, 6, 8, 10};
  ps_batch_estimate e;
  assert_int_equal(ps_batch_means(x, NULL, 5, &e), 0);
  assert_int_equal(e.batches, 2);
  assert_float_equal(e.ratio, 6.0, 1e-12);
  assert_float_equal(e.var, 5.76, 1e-12);
}

/* A share: BOYD seconds 1, 1, 2, 2 of delivery seconds 2 each. R = 6 / 8
 * = 0.75; batches (2 of 4) and (4 of 4): z = 2 - 3 = -1 and 4 - 3 = 1;
 * var = 2 x 2 / 8^2 = 0.0625. */
static void test_batch_means_ratio(void **state) {
  (void)state;
  double num[] = {1, 1, 2, 2}, den[] = {2, 2, 2, 2};
  ps_batch_estimate e;
  assert_int_equal(ps_batch_means(num, den, 4, &e), 0);
  assert_float_equal(e.ratio, 0.75, 1e-12);
  assert_float_equal(e.var, 0.0625, 1e-12);
  /* a block without delivery seconds has no share: skipped */
  double num2[] = {1, 1, NAN, 2, 2}, den2[] = {2, 2, 0, 2, 2};
  den2[2] = NAN;
  assert_int_equal(ps_batch_means(num2, den2, 5, &e), 0);
  assert_float_equal(e.var, 0.0625, 1e-12);
}

static void test_batch_means_too_few(void **state) {
  (void)state;
  double x[] = {1, NAN}, zero[] = {0, 0, 0};
  ps_batch_estimate e;
  assert_int_equal(ps_batch_means(x, NULL, 2, &e), -EDOM);
  assert_int_equal(ps_batch_means(x, zero, 1, &e), -EDOM);
  assert_int_equal(ps_batch_means(zero, zero, 3, &e), -EDOM); /* no delivery seconds */
}

static void test_student_t(void **state) {
  (void)state;
  assert_float_equal(ps_student_t_sf2(1.0, 1.0), 0.5, 1e-12); /* Cauchy */
  assert_float_equal(ps_student_t_sf2(1.0, 2.0), 1 - 1 / sqrt(3), 1e-12);
  assert_float_equal(ps_student_t_sf2(-2.0, 2.0), 1 - 2 / sqrt(6), 1e-12);
  assert_float_equal(ps_student_t_sf2(0.0, 5.0), 1.0, 1e-12);
  assert_float_equal(ps_student_t_sf2(2.5, 7.3), 0.0396502346656005, 1e-10);
  assert_float_equal(ps_student_t_sf2(INFINITY, 3.0), 0.0, 0);
  assert_true(isnan(ps_student_t_sf2(1.0, 0.0)));
  /* the normal limit: 1.96 at 1e6 degrees of freedom */
  assert_float_equal(ps_student_t_sf2(1.959963984540054, 1e6), 0.05, 1e-5);
}

/* Points: 10 -> 14 with variances 2 and 2 over 2 batches each: t = 4 / 2
 * = 2, df = 16 / (4 + 4) = 2, p = 1 - 2 / sqrt 6 = 0.1835. */
static void test_change_points(void **state) {
  (void)state;
  ps_batch_estimate a = {10, 2, 2, 8}, b = {14, 2, 2, 8};
  ps_stage_change c;
  assert_int_equal(ps_stage_change_test(&a, &b, PS_STAGE_TEST_POINTS, &c), 0);
  assert_float_equal(c.t, 2.0, 1e-12);
  assert_float_equal(c.df, 2.0, 1e-12);
  assert_float_equal(c.p_value, 0.183503419072274, 1e-12);
  /* the other way round: the same p, t negative */
  assert_int_equal(ps_stage_change_test(&b, &a, PS_STAGE_TEST_POINTS, &c), 0);
  assert_float_equal(c.t, -2.0, 1e-12);
  assert_float_equal(c.p_value, 0.183503419072274, 1e-12);
}

/* Log: 10 (var 1) -> 10 e^0.2 (var (10 e^0.2)^2 / 100): each log variance
 * 0.01, t = 0.2 / sqrt 0.02 = sqrt 2, df 2, p = 1 - sqrt 2 / 2. */
static void test_change_log(void **state) {
  (void)state;
  double r = 10 * exp(0.2);
  ps_batch_estimate a = {10, 1, 2, 4}, b = {r, r * r / 100, 2, 4};
  ps_stage_change c;
  assert_int_equal(ps_stage_change_test(&a, &b, PS_STAGE_TEST_LOG, &c), 0);
  assert_float_equal(c.t, sqrt(2), 1e-12);
  assert_float_equal(c.df, 2.0, 1e-12);
  assert_float_equal(c.p_value, 1 - sqrt(2) / 2, 1e-12);
  ps_batch_estimate zero = {0, 1, 2, 4};
  assert_int_equal(ps_stage_change_test(&zero, &b, PS_STAGE_TEST_LOG, &c), -EDOM);
  assert_true(isnan(c.p_value));
}

/* End to end: 1..9 (R 5, var 3, k 3) against 4..12 (R 8, var 3, k 3):
 * t = 3 / sqrt 6, df = 36 / (9/2 + 9/2) = 4, u = t / sqrt(4 + t^2) =
 * sqrt(1.5 / 5.5), p = 1 - 3/2 u (1 - u^2/3) = 0.287864. */
static void test_batches_then_test(void **state) {
  (void)state;
  double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, y[] = {4, 5, 6, 7, 8, 9, 10, 11, 12};
  ps_batch_estimate a, b;
  ps_stage_change c;
  assert_int_equal(ps_batch_means(x, NULL, 9, &a), 0);
  assert_int_equal(ps_batch_means(y, NULL, 9, &b), 0);
  assert_int_equal(ps_stage_change_test(&a, &b, PS_STAGE_TEST_POINTS, &c), 0);
  assert_float_equal(c.df, 4.0, 1e-12);
  double u = sqrt(1.5 / 5.5);
  assert_float_equal(c.p_value, 1 - 1.5 * u * (1 - u * u / 3), 1e-12);
  assert_float_equal(c.p_value, 0.287864134726691, 1e-12);
  /* no spread at all: equal is p 1, different p 0 */
  double k5[] = {5, 5, 5, 5}, k6[] = {6, 6, 6, 6};
  assert_int_equal(ps_batch_means(k5, NULL, 4, &a), 0);
  assert_int_equal(ps_batch_means(k6, NULL, 4, &b), 0);
  assert_int_equal(ps_stage_change_test(&a, &b, PS_STAGE_TEST_LOG, &c), 0);
  assert_float_equal(c.p_value, 0.0, 0);
  assert_int_equal(ps_stage_change_test(&a, &a, PS_STAGE_TEST_LOG, &c), 0);
  assert_float_equal(c.p_value, 1.0, 0);
}

/* The run's stage family: 9 tests a judged stage, so a run of four
 * loadgen stages (three judged) is a family of 27 and each test's level
 * 0.01 / 27 = 0.00037: a p of 0.0005 (0.0135 adjusted) is no longer a
 * change, one of 0.0003 (0.0081) still is. */
static void test_stage_family(void **state) {
  (void)state;
  assert_int_equal(ps_stage_family_size(0), 1);
  assert_int_equal(ps_stage_family_size(3), 27);
  assert_float_equal(ps_stage_p_adjusted(0.0005, 27), 0.0135, 1e-15);
  assert_false(ps_stage_significant(ps_stage_p_adjusted(0.0005, 27)));
  assert_float_equal(ps_stage_p_adjusted(0.0003, 27), 0.0081, 1e-15);
  assert_true(ps_stage_significant(ps_stage_p_adjusted(0.0003, 27)));
  assert_float_equal(ps_stage_p_adjusted(0.2, 27), 1.0, 0);
  assert_true(isnan(ps_stage_p_adjusted(NAN, 27)));
  assert_false(ps_stage_significant(NAN));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batch_means_plain), cmocka_unit_test(test_batch_means_remainder),
      cmocka_unit_test(test_batch_means_ratio), cmocka_unit_test(test_batch_means_too_few),
      cmocka_unit_test(test_student_t),         cmocka_unit_test(test_change_points),
      cmocka_unit_test(test_change_log),        cmocka_unit_test(test_batches_then_test),
      cmocka_unit_test(test_stage_family),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
