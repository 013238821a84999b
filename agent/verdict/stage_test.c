/*
 * stage_test.c: batch means and the two-stage t-test of stage drift
 * (include/verdict/stage_test.h; docs/verdicts.md "Within a run").
 *
 * Design
 * - Batch means, not a block bootstrap: consecutive blocks (and cycles)
 *   are correlated (a busy block leaves work for the next), so the units
 *   themselves are not independent; sums over batches of sqrt(n) units are
 *   nearly so once a batch is longer than the correlation, and the batch
 *   size grows with the stage, so a longer stage is judged more finely.
 *   It is closed-form and deterministic (the same run gives the same
 *   verdict at every judging, which the sent-verdict ring relies on), and
 *   small enough to be checked by hand; a bootstrap needs random draws
 *   and thousands of resamples per figure.
 * - The t distribution with few degrees of freedom (a 4-minute stage has
 *   6 batches of blocks, 3 or 4 of cycles) is what keeps short stages
 *   honest: a normal approximation would call their swings significant.
 * - The stage family by Bonferroni over a count fixed in advance, not
 *   Holm over the tests made: the stage figures are judged at the run's
 *   end, the slog's as each stage's slog is acknowledged, in any order;
 *   Holm would need every p-value of the run at once, and a stage's
 *   verdict would change as later stages arrive. With the count fixed,
 *   each decision is its own p-value against a known level.
 */
#include "verdict/stage_test.h"

#include <errno.h>
#include <math.h>

static int usable(const double *num, const double *den, size_t i) {
  return isfinite(num[i]) && (!den || isfinite(den[i]));
}

int ps_batch_means(const double *num, const double *den, size_t n, ps_batch_estimate *out) {
  size_t units = 0;
  double sum_n = 0, sum_d = 0;
  for (size_t i = 0; i < n; i++)
    if (usable(num, den, i)) {
      units++;
      sum_n += num[i];
      sum_d += den ? den[i] : 1.0;
    }
  *out = (ps_batch_estimate){NAN, NAN, 0, units};
  if (units < 2 || sum_d == 0.0)
    return -EDOM;
  size_t b = (size_t)floor(sqrt((double)units));
  size_t k = units / b;
  double r = sum_n / sum_d, zz = 0, bn = 0, bd = 0;
  size_t taken = 0, batch = 0;
  for (size_t i = 0; i < n; i++) {
    if (!usable(num, den, i))
      continue;
    bn += num[i];
    bd += den ? den[i] : 1.0;
    taken++;
    /* a batch closes every b units; the last one takes the rest */
    if ((taken % b == 0 && batch + 1 < k) || taken == units) {
      double z = bn - r * bd;
      zz += z * z;
      bn = bd = 0;
      batch++;
    }
  }
  out->ratio = r;
  out->batches = k;
  out->var = (double)k / (double)(k - 1) * zz / (sum_d * sum_d);
  return 0;
}

/* The continued fraction of the incomplete beta function (modified
 * Lentz), good for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  d = fabs(d) < tiny ? tiny : d;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 300; m++) {
    double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
    for (int half = 0; half < 2; half++) {
      d = 1.0 + aa * d;
      d = fabs(d) < tiny ? tiny : d;
      c = 1.0 + aa / c;
      c = fabs(c) < tiny ? tiny : c;
      d = 1.0 / d;
      h *= d * c;
      aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
    }
    if (fabs(d * c - 1.0) < 1e-15)
      break;
  }
  return h;
}

/* I_x(a, b), the regularized incomplete beta function. */
static double incomplete_beta(double a, double b, double x) {
  if (x <= 0.0)
    return 0.0;
  if (x >= 1.0)
    return 1.0;
  double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
  if (x < (a + 1.0) / (a + b + 2.0))
    return front * beta_cf(a, b, x) / a;
  return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

double ps_student_t_sf2(double t, double df) {
  if (isnan(t) || !(df > 0))
    return NAN;
  if (isinf(t))
    return 0.0;
  return incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
}

int ps_stage_change_test(const ps_batch_estimate *base, const ps_batch_estimate *stage,
                         ps_stage_test_scale scale, ps_stage_change *out) {
  *out = (ps_stage_change){NAN, NAN, NAN};
  if (base->batches < 2 || stage->batches < 2 || !isfinite(base->ratio) ||
      !isfinite(stage->ratio) || !isfinite(base->var) || !isfinite(stage->var))
    return -EDOM;
  double diff = stage->ratio - base->ratio, v1 = base->var, v2 = stage->var;
  if (scale == PS_STAGE_TEST_LOG) {
    if (!(base->ratio > 0) || !(stage->ratio > 0))
      return -EDOM;
    diff = log(stage->ratio / base->ratio);
    v1 /= base->ratio * base->ratio;
    v2 /= stage->ratio * stage->ratio;
  }
  double var = v1 + v2;
  if (var == 0.0) {
    out->p_value = diff == 0.0 ? 1.0 : 0.0;
    return 0;
  }
  double k1 = (double)base->batches - 1.0, k2 = (double)stage->batches - 1.0;
  out->df = var * var / (v1 * v1 / k1 + v2 * v2 / k2);
  out->t = diff / sqrt(var);
  out->p_value = ps_student_t_sf2(out->t, out->df);
  return 0;
}

long ps_stage_family_size(size_t judged_stages) {
  return judged_stages ? (long)judged_stages * PS_STAGE_TESTS_PER_STAGE : 1;
}

double ps_stage_p_adjusted(double p_value, long family_size) {
  if (isnan(p_value))
    return NAN;
  return fmin(1.0, p_value * (double)family_size);
}

int ps_stage_significant(double p_adjusted) { return p_adjusted < PS_STAGE_FAMILY_ALPHA; }
