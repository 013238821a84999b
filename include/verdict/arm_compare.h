/*
 * arm_compare: the arms of one DSS bench test (images or datastores)
 * against the reference arm, over the whole sweep (docs/verdicts.md,
 * "DSS bench: between arms").
 *
 * Contract
 * - Input: one test of one results file: its arms in file order, each with
 *   one value per sweep variant (the same variants, in sweep order, for
 *   every arm). A variant where an arm has no successful request has NaN
 *   (or 0, as the tool writes it) for rps_total and p95_ms; errors is NaN
 *   only when absent.
 * - The reference is the arm named cfg->dss.reference_arm when this test
 *   has one, else the first arm. Every other arm gets one verdict per
 *   metric (method arm_compare), with `variants` compared, how many of them
 *   moved the way of the verdict (`variants_agree`; for none, the way of
 *   the average) and `variants_skipped`:
 *   - rps_total (lower is worse) and p95_ms (higher is worse): the arm's
 *     change is the geometric mean of its per-variant ratios to the
 *     reference, over the variants where both have a value; value and
 *     baseline are the two arms' geometric means over those variants. It
 *     counts when the ratio is at least 1 + min_change_pct/100 or at most
 *     its inverse, so comparing B with A mirrors comparing A with B
 *     exactly (same variants, inverse ratio, opposite verdict).
 *   - errors: absolute counts summed over the variants where both have
 *     one; a difference counts when it is at least min_change_pct percent
 *     of the larger sum and at least twice sqrt(a + b), the standard
 *     deviation of the difference of two Poisson counts (0 against 5
 *     counts, 13 against 16 does not).
 *   - No verdict for a metric with no variant to compare.
 * - Strings are borrowed from the input (verdict.h). Returns 0 or -ENOMEM.
 */
#ifndef PS_VERDICT_ARM_COMPARE_H
#define PS_VERDICT_ARM_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "verdict/verdict.h"

typedef struct ps_dss_arm {
  const char *label;       /* the image or datastore */
  const double *rps_total; /* per variant */
  const double *p95_ms;
  const double *errors;
} ps_dss_arm;

typedef struct ps_dss_test {
  const char *test;  /* the series */
  const char *run;   /* the results folder, as its `runs` marker names it */
  int64_t time_ns;   /* the time of that marker */
  int backfill;      /* as on that marker */
  const ps_dss_arm *arms;
  size_t narms;
  size_t nvariants;
} ps_dss_test;

int ps_arm_compare(const ps_verdicts_cfg *cfg, const char *source, const ps_dss_test *t,
                   ps_verdict_list *out);

#endif
