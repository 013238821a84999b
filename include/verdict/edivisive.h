/*
 * edivisive: change points of a short series, by E-Divisive means with a
 * permutation significance test (Matteson & James, "A Nonparametric
 * Approach for Multiple Change Point Analysis of Multivariate Data", JASA
 * 2014), the method MongoDB's performance CI uses (Daly et al., ICPE 2020).
 * docs/verdicts.md explains it and its parameters.
 *
 * Contract
 * - Pure: no I/O, no globals. All memory is in a workspace made for series
 *   of up to `capacity` values; one workspace serves one caller at a time
 *   and any number of calls.
 * - Deterministic: the permutations are drawn from a splitmix64 stream
 *   started at `seed`, so the same values and seed always give the same
 *   result, bit for bit (IEEE-754 doubles, no fused multiply-add in ISO C
 *   mode).
 * - The divergence is the energy statistic with exponent 1 and the segment
 *   end fixed (kappa = the end of the segment, as MongoDB's and Hunter's
 *   implementations do): for a split of a segment into a left part of m
 *   values and a right part of r values,
 *     Q = m r / (m + r) * (2 B / (m r) - 2 WL / (m (m-1)) - 2 WR / (r (r-1)))
 *   where B sums |a - b| over the pairs across the split, WL over the pairs
 *   within the left part, WR within the right part. ps_edivisive_q()
 *   computes it by this definition. With the end fixed, a block in the
 *   middle of a segment with the same level on both sides shows less than
 *   the same block at an end; a verdict's newest runs are always at the
 *   end, where the test is strongest.
 * - Splits leave at least `min_segment` (>= 2) values on each side, so a
 *   single value is never a segment of its own: one outlier cannot be a
 *   change, and a change needs two values at its new level to be found.
 * - Hierarchical: the best split over all current segments is tested
 *   against `permutations` random permutations within those segments; when
 *   its p-value is <= `significance` it is accepted and the search goes on,
 *   else it stops. p = (1 + exceedances) / (permutations + 1); the test
 *   stops early at the exceedance that makes significance impossible and
 *   then reports Besag & Clifford's sequential p = exceedances / permutations
 *   run (Biometrika 1991), which is exact for the decision.
 * - Returns 0, or -EINVAL (n above the capacity, bad parameters).
 */
#ifndef PS_VERDICT_EDIVISIVE_H
#define PS_VERDICT_EDIVISIVE_H

#include <stddef.h>
#include <stdint.h>

#define PS_CP_MAX_POINTS 16

typedef struct ps_cp_params {
  double significance;    /* in (0, 1) */
  unsigned permutations;  /* 0: the default, ps_cp_default_permutations() */
  size_t min_segment;     /* 0: 2; otherwise at least 2 */
  size_t max_points;      /* 0: PS_CP_MAX_POINTS; at most that */
} ps_cp_params;

typedef struct ps_cp {
  size_t at;       /* the first index of the new segment */
  double p_value;
  double q;        /* the divergence of the split */
} ps_cp;

typedef struct ps_cp_result {
  ps_cp points[PS_CP_MAX_POINTS]; /* accepted change points, sorted by `at` */
  size_t npoints;
  int rejected;        /* the search ended on a candidate that was not significant */
  ps_cp rejected_cp;   /* that candidate */
  uint64_t permutations_run; /* for the cost figures */
} ps_cp_result;

typedef struct ps_cp_ws ps_cp_ws;

/* 10 / significance - 1 permutations: a significant result then has room
 * for 9 exceedances, and the smallest p-value possible is a tenth of the
 * significance level (199 for 0.05). */
unsigned ps_cp_default_permutations(double significance);

int ps_cp_ws_new(ps_cp_ws **out, size_t capacity);
void ps_cp_ws_free(ps_cp_ws *ws);

int ps_edivisive(ps_cp_ws *ws, const double *x, size_t n, const ps_cp_params *params,
                 uint64_t seed, ps_cp_result *out);

/* Q of splitting x[0..n) before index tau, by the definition (quadratic
 * time); NaN when either side has fewer than 2 values. For tests and for
 * checking the fast scan. */
double ps_edivisive_q(const double *x, size_t n, size_t tau);

/* The exact permutation p-value of splitting x[0..n) before its last two
 * values: the share of all C(n, 2) ways of choosing which two values form
 * the right part whose Q (the divergence above, at that one split) is at
 * least the observed one. No randomness: each choice is scored in O(1)
 * from the values' distance sums, O(n^2) in all. NaN when n < 4.
 * docs/verdicts.md ("The newest runs") says why the newest two runs get a
 * test of their own. */
double ps_edivisive_tail_p(const double *x, size_t n);

/* The seed of the evaluation of (series, metric, run): FNV-1a 64 over the
 * three strings, each followed by a 0xff byte (which UTF-8 never holds). */
uint64_t ps_cp_seed(const char *series, const char *metric, const char *run);

#endif
