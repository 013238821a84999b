/*
 * robust: location and noise estimates that one or two spoiled values
 * cannot move far (docs/verdicts.md, "Spoiled nights").
 *
 * Contract
 * - Pure: no I/O, no globals, no allocation; the caller hands in scratch
 *   space of the input's size. Inputs are finite doubles.
 * - ps_robust_median() of an even count is the mean of the two middle
 *   values; of nothing, NaN.
 * - ps_robust_mad_sd() is 1.4826 x the median absolute deviation from
 *   the median: the standard deviation for normal noise, and unmoved by
 *   any values short of half of them (breakdown point 50 %). 0 when half
 *   the values or more are equal; NaN of nothing.
 * - ps_robust_pooled_mad_sd() is the same scale of values split into
 *   segments (levels): each value's deviation from its own segment's
 *   median, pooled, so a change between segments is not noise. The zero
 *   deviation of an odd segment's middle value carries no information and
 *   is left out (else a window of short segments would look quieter than
 *   it is). NaN when no deviation is left (every segment of one value).
 * - ps_robust_pooled_sd() is the pooled standard deviation of the values
 *   around their segments' means (n - segments degrees of freedom), each
 *   value's deviation from its segment's median first pulled in to at most
 *   PS_ROBUST_WINSOR_SCALES x ps_robust_pooled_mad_sd(): on normal noise
 *   the plain pooled standard deviation, while a value far off counts as
 *   one 3 scales off. NaN when n <= nseg or the MAD is NaN.
 * - ps_robust_clip() pulls every value of x[a, b) farther than `k` scales
 *   from `center` back to that distance: a value far off keeps its side
 *   but loses its weight (a winsorised copy, for tests whose statistic is
 *   a sum of distances).
 */
#ifndef PS_VERDICT_ROBUST_H
#define PS_VERDICT_ROBUST_H

#include <stddef.h>

/* 1 / Phi^-1(3/4): the MAD times this estimates the standard deviation of
 * normal noise. */
#define PS_ROBUST_MAD_TO_SD 1.4826

/* Sorts v in place. */
double ps_robust_median(double *v, size_t n);

/* scratch: n doubles (x is not changed). */
double ps_robust_mad_sd(const double *x, size_t n, double *scratch);

/* Where ps_robust_pooled_sd() stops counting a deviation, in MAD scales. */
#define PS_ROBUST_WINSOR_SCALES 3.0

/* Segment k is x[starts[k], starts[k + 1]), k < nseg; starts[0] = 0 and
 * starts[nseg] = n. scratch: n doubles. */
double ps_robust_pooled_mad_sd(const double *x, const size_t *starts, size_t nseg, double *scratch);
double ps_robust_pooled_sd(const double *x, const size_t *starts, size_t nseg, double *scratch);

void ps_robust_clip(double *x, size_t a, size_t b, double center, double k, double scale);

#endif
