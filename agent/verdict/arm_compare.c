/*
 * arm_compare.c: DSS bench arms against the reference arm
 * (include/verdict/arm_compare.h; docs/verdicts.md, "DSS bench").
 *
 * DESIGN
 * - Ratios are averaged as logarithms: the geometric mean is the only mean
 *   of ratios for which A against B is exactly the inverse of B against A,
 *   and the threshold is applied to |log ratio|, so the verdicts mirror
 *   too. The log sums are taken in variant order for both directions, and
 *   IEEE subtraction is antisymmetric, so the mirror is exact in floating
 *   point, not only on paper.
 * - Errors are counts, often 0, so a ratio means nothing there; their
 *   threshold is relative to the larger of the two sums, which keeps it
 *   symmetric as well. Failed actions come and go like Poisson counts (16
 *   against 13 is noise), so the difference must also be twice its
 *   standard deviation, sqrt(a + b), also symmetric.
 */
#include "verdict/arm_compare.h"

#include <math.h>
#include <string.h>

/* Standard deviations of the difference of two Poisson counts that an
 * error difference must reach (about 95 %, two-sided). */
#define POISSON_Z 2.0

static int present(const double *v, size_t i, int positive) {
  return v && isfinite(v[i]) && (!positive || v[i] > 0.0);
}

/* The sign of the change from r to a (-1, 0, 1). */
static int sign_of(double a, double r) { return (a > r) - (a < r); }

static ps_verdict_kind kind_of(int sign, ps_worse worse) {
  if (sign == 0)
    return PS_VERDICT_NONE;
  return ps_verdict_direction(sign > 0 ? 1.0 : -1.0, 0.0, worse);
}

static int compare_ratio(const ps_verdicts_cfg *cfg, ps_verdict *v, const double *arm,
                         const double *ref, size_t nvariants, ps_worse worse) {
  double sum_arm = 0, sum_ref = 0;
  int64_t compared = 0, skipped = 0;
  for (size_t i = 0; i < nvariants; i++) {
    if (!present(arm, i, 1) || !present(ref, i, 1)) {
      skipped++;
      continue;
    }
    compared++;
    sum_arm += log(arm[i]);
    sum_ref += log(ref[i]);
  }
  if (compared == 0)
    return 0;
  double log_ratio = (sum_arm - sum_ref) / (double)compared;
  int sign = log_ratio > 0 ? 1 : log_ratio < 0 ? -1 : 0;
  int64_t agree = 0;
  for (size_t i = 0; i < nvariants; i++)
    if (present(arm, i, 1) && present(ref, i, 1) && sign != 0 &&
        sign_of(arm[i], ref[i]) == sign)
      agree++;
  v->value = exp(sum_arm / (double)compared);
  v->baseline = exp(sum_ref / (double)compared);
  v->variants = compared;
  v->variants_skipped = skipped;
  v->variants_agree = agree;
  v->verdict = fabs(log_ratio) >= log1p(cfg->dss.min_change_pct / 100.0) && sign != 0
                   ? kind_of(sign, worse)
                   : PS_VERDICT_NONE;
  return 1;
}

static int compare_counts(const ps_verdicts_cfg *cfg, ps_verdict *v, const double *arm,
                          const double *ref, size_t nvariants) {
  double sum_arm = 0, sum_ref = 0;
  int64_t compared = 0, skipped = 0;
  for (size_t i = 0; i < nvariants; i++) {
    if (!present(arm, i, 0) || !present(ref, i, 0)) {
      skipped++;
      continue;
    }
    compared++;
    sum_arm += arm[i];
    sum_ref += ref[i];
  }
  if (compared == 0)
    return 0;
  int sign = sign_of(sum_arm, sum_ref);
  int64_t agree = 0;
  for (size_t i = 0; i < nvariants; i++)
    if (present(arm, i, 0) && present(ref, i, 0) && sign != 0 &&
        sign_of(arm[i], ref[i]) == sign)
      agree++;
  double larger = sum_arm > sum_ref ? sum_arm : sum_ref;
  double diff = fabs(sum_arm - sum_ref);
  v->value = sum_arm;
  v->baseline = sum_ref;
  v->variants = compared;
  v->variants_skipped = skipped;
  v->variants_agree = agree;
  v->verdict = sign != 0 && diff >= cfg->dss.min_change_pct / 100.0 * larger &&
                       diff >= POISSON_Z * sqrt(sum_arm + sum_ref)
                   ? kind_of(sign, PS_WORSE_HIGHER)
                   : PS_VERDICT_NONE;
  return 1;
}

int ps_arm_compare(const ps_verdicts_cfg *cfg, const char *source, const ps_dss_test *t,
                   ps_verdict_list *out) {
  if (t->narms < 2)
    return 0;
  size_t ref = 0;
  const char *want = cfg->dss.reference_arm;
  for (size_t i = 0; want && want[0] && i < t->narms; i++)
    if (t->arms[i].label && strcmp(t->arms[i].label, want) == 0) {
      ref = i;
      break;
    }
  const ps_dss_arm *r = &t->arms[ref];
  for (size_t a = 0; a < t->narms; a++) {
    if (a == ref)
      continue;
    const ps_dss_arm *arm = &t->arms[a];
    for (int m = 0; m < 3; m++) {
      ps_verdict v = ps_verdict_blank();
      v.source = source;
      v.series = t->test;
      v.run = t->run;
      v.arm = arm->label;
      v.reference = r->label;
      v.method = PS_METHOD_ARM_COMPARE;
      v.change_run = t->run;
      v.backfill = t->backfill;
      v.time_ns = t->time_ns;
      int have;
      if (m == 0) {
        v.metric = "rps_total";
        have = compare_ratio(cfg, &v, arm->rps_total, r->rps_total, t->nvariants,
                             PS_WORSE_LOWER);
      } else if (m == 1) {
        v.metric = "p95_ms";
        have = compare_ratio(cfg, &v, arm->p95_ms, r->p95_ms, t->nvariants,
                             PS_WORSE_HIGHER);
      } else {
        v.metric = "errors";
        have = compare_counts(cfg, &v, arm->errors, r->errors, t->nvariants);
      }
      if (have) {
        int rc = ps_verdict_list_push(out, &v);
        if (rc)
          return rc;
      }
    }
  }
  return 0;
}
