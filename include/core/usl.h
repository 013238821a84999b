/*
 * usl: the Universal Scalability Law fitted to (load, throughput) points
 * exactly as the InterUSS benchmarker's analysis does (docs/schema.md
 * "Benchmarker", `benchmarker_fit`).
 *
 * Contract
 * - X(N) = gamma N / (1 + alpha (N-1) + beta N (N-1)).
 * - ps_usl_fit() minimises the RMSE of X over the points with alpha and
 *   beta on a log10 scale, by GSL's Nelder-Mead simplex from four starting
 *   points (log10 alpha, log10 beta) = (-3,-5), (-5,-3), (-1,-1), (-7,-7)
 *   and gamma = max(y/x), keeping the best; then, while more than three
 *   points remain, drops the single worst point when any residual lies
 *   beyond max(k sigma, 1e-3 max|y|, 1e-6), sigma = 1.4826 MAD of the
 *   residuals (their standard deviation with ddof min(3, m-1) when the MAD
 *   is 0), k the normal quantile of (1 + 0.95^(1/m)) / 2 (Dunn-Sidak).
 * - Loads must be positive and throughputs not negative (else -EINVAL);
 *   `kept[i]` says whether point i stayed in the final fit.
 * - Pure: no I/O, no global state; safe to call from any thread.
 */
#ifndef PS_CORE_USL_H
#define PS_CORE_USL_H

#include <stddef.h>

typedef struct ps_usl_fit_result {
  double gamma, alpha, beta;
  double rmse; /* of the final fit over the kept points */
  size_t kept_count;
  int has_peak;    /* alpha < 1 and beta > 0: N* exists */
  double n_star;   /* sqrt((1 - alpha) / beta) */
  double x_n_star; /* X(N*) */
} ps_usl_fit_result;

double ps_usl_throughput(double gamma, double alpha, double beta, double n);
/* 0, or -EINVAL (no points, a load <= 0, a throughput < 0 or not finite),
 * -ENOMEM. `kept` has n entries. */
int ps_usl_fit(const double *load, const double *throughput, size_t n, int *kept,
               ps_usl_fit_result *out);

#endif
