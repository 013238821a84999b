/*
 * stage_test: is a stage's figure different from the first loadgen
 * stage's, given the variation of the samples behind each? Batch means
 * over autocorrelated samples (blocks, cycles) and a Welch t-test of the
 * two stages' estimates (docs/verdicts.md, "Within a run (stage drift)",
 * "How sure").
 *
 * Contract
 * - A figure is a ratio of sums over a stage's units in time order:
 *   sum(num) / sum(den); den NULL means every unit counts 1 (a plain mean,
 *   e.g. a block's swingset time), else e.g. BOYD seconds over delivery
 *   seconds per block. Units whose num or den is not finite are skipped.
 * - ps_batch_means(): consecutive units are grouped into batches of
 *   b = floor(sqrt(n)) units (the last batch takes the remainder), and the
 *   variance of the ratio is the batches' (ratio-estimator form):
 *     z_j = N_j - R D_j,  var(R) = k / (k - 1) * sum z_j^2 / (sum D_j)^2
 *   with N_j, D_j the batch sums and k the number of batches; for den
 *   NULL and equal batches that is the textbook s^2(batch means) / k.
 *   Fewer than 2 batches (n < 2) or a sum(den) of 0: -EDOM.
 * - ps_stage_change_test(): relative (PS_STAGE_TEST_LOG: the log of the
 *   ratios, variances by the delta method var / R^2; both ratios must be
 *   above 0) or absolute (PS_STAGE_TEST_POINTS: the difference); t = the
 *   difference over the root of the summed variances, degrees of freedom
 *   Welch-Satterthwaite with k - 1 per stage; p two-sided Student t. Both
 *   variances 0: p 1 when the ratios are equal, else 0. -EDOM when either
 *   estimate cannot be tested.
 * - ps_student_t_sf2(): P(|T| >= t) for T Student-t with df degrees of
 *   freedom (df > 0, fractional allowed), by the regularized incomplete
 *   beta function.
 * - The stage family of a run (docs/verdicts.md, "The error of a night"):
 *   every stage test of a run shares one budget, PS_STAGE_FAMILY_ALPHA,
 *   by Bonferroni over a count fixed in advance:
 *   ps_stage_family_size() is PS_STAGE_TESTS_PER_STAGE tests for each
 *   stage judged against the first loadgen stage (at least 1), whatever
 *   number of them is actually made (a stage with fewer vats makes fewer),
 *   so a stage's decision never waits for the other stages' p-values.
 *   ps_stage_p_adjusted() is min(1, p x size) (NaN with p), and a change
 *   is significant when that is below PS_STAGE_FAMILY_ALPHA.
 * - Pure functions: no I/O, no globals, no allocation.
 */
#ifndef PS_VERDICT_STAGE_TEST_H
#define PS_VERDICT_STAGE_TEST_H

#include <stddef.h>

/* The stage tests' share of a night's error budget: the chance that a
 * steady run shows any significant stage change by noise, whatever its
 * number of stages (docs/verdicts.md "The error of a night"). */
#define PS_STAGE_FAMILY_ALPHA 0.01
/* The tests a judged stage may make: the three stage figures, the BOYD
 * share and the top vats (slog_drift.h, PS_SLOG_DRIFT_TOP_VATS). */
#define PS_STAGE_TESTS_PER_STAGE 9

typedef struct ps_batch_estimate {
  double ratio;   /* sum(num) / sum(den) */
  double var;     /* the ratio's variance, by batch means */
  size_t batches; /* k */
  size_t units;   /* n: units taken (finite num and den) */
} ps_batch_estimate;

typedef enum ps_stage_test_scale {
  PS_STAGE_TEST_LOG = 0, /* relative change: percent thresholds */
  PS_STAGE_TEST_POINTS,  /* absolute change: points thresholds */
} ps_stage_test_scale;

typedef struct ps_stage_change {
  double t, df, p_value;
} ps_stage_change;

int ps_batch_means(const double *num, const double *den, size_t n, ps_batch_estimate *out);

int ps_stage_change_test(const ps_batch_estimate *base, const ps_batch_estimate *stage,
                         ps_stage_test_scale scale, ps_stage_change *out);

double ps_student_t_sf2(double t, double df);

long ps_stage_family_size(size_t judged_stages);
double ps_stage_p_adjusted(double p_value, long family_size);
/* Whether an adjusted p-value is a significant change (NaN: not). */
int ps_stage_significant(double p_adjusted);

#endif
