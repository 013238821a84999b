/*
 * core/usl.c: the USL fit of the benchmarker's analysis (include/core/usl.h).
 *
 * DESIGN
 * - GSL's nmsimplex2 is the minimiser; the first simplex is the one scipy's
 *   Nelder-Mead builds (each coordinate moved by 5 %, or 0.00025 when it is
 *   0), so both walk from the same corners and land on the same minimum.
 * - scipy keeps gamma >= 0 by clipping the simplex; here the objective
 *   reads a negative gamma as 0 and the result is clipped the same way.
 * - It stops when the simplex is smaller than 1e-10 or after 20000
 *   iterations: tighter than analysis's 1e-9 so the two agree to 1e-3.
 */
#include "core/usl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multimin.h>

#define USL_ITER_MAX 20000
#define USL_SIZE_TOL 1e-10
#define USL_DISCARD_P 0.05

typedef struct usl_data {
  const double *x, *y;
  size_t n;
} usl_data;

double ps_usl_throughput(double gamma, double alpha, double beta, double n) {
  double denom = 1.0 + alpha * (n - 1.0) + beta * n * (n - 1.0);
  if (denom < 1e-12)
    denom = 1e-12;
  return gamma * n / denom;
}

static double rmse_of(const usl_data *d, double gamma, double alpha, double beta) {
  double sum = 0.0;
  for (size_t i = 0; i < d->n; i++) {
    double e = d->y[i] - ps_usl_throughput(gamma, alpha, beta, d->x[i]);
    sum += e * e;
  }
  return sqrt(sum / (double)d->n);
}

static double objective(const gsl_vector *v, void *params) {
  const usl_data *d = params;
  double gamma = gsl_vector_get(v, 0);
  if (gamma < 0.0)
    gamma = 0.0;
  double r = rmse_of(d, gamma, pow(10.0, gsl_vector_get(v, 1)), pow(10.0, gsl_vector_get(v, 2)));
  /* A corner far out (10^400) gives inf * 0; GSL's simplex must see a
   * value it can order, and such a corner is never the minimum. */
  return isfinite(r) ? r : 1e300;
}

/* One Nelder-Mead run from (gamma0, a0, b0); the point in `best`. */
static int minimise(usl_data *d, const double start[3], double best[3]) {
  gsl_multimin_fminimizer *m = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, 3);
  gsl_vector *x = gsl_vector_alloc(3), *step = gsl_vector_alloc(3);
  if (!m || !x || !step) {
    gsl_multimin_fminimizer_free(m);
    gsl_vector_free(x);
    gsl_vector_free(step);
    return -ENOMEM;
  }
  for (size_t k = 0; k < 3; k++) {
    gsl_vector_set(x, k, start[k]);
    gsl_vector_set(step, k, start[k] != 0.0 ? 0.05 * start[k] : 0.00025);
  }
  gsl_multimin_function fn = {objective, 3, d};
  gsl_multimin_fminimizer_set(m, &fn, x, step);
  for (int it = 0; it < USL_ITER_MAX; it++) {
    if (gsl_multimin_fminimizer_iterate(m))
      break;
    if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), USL_SIZE_TOL) == GSL_SUCCESS)
      break;
  }
  for (size_t k = 0; k < 3; k++)
    best[k] = gsl_vector_get(m->x, k);
  gsl_multimin_fminimizer_free(m);
  gsl_vector_free(x);
  gsl_vector_free(step);
  return 0;
}

static int fit_single(usl_data *d, ps_usl_fit_result *out) {
  static const double starts[4][2] = {{-3, -5}, {-5, -3}, {-1, -1}, {-7, -7}};
  double gamma_guess = 0.0;
  for (size_t i = 0; i < d->n; i++)
    if (i == 0 || d->y[i] / d->x[i] > gamma_guess)
      gamma_guess = d->y[i] / d->x[i];
  double best_score = INFINITY, best[3] = {0, 0, 0};
  for (size_t s = 0; s < 4; s++) {
    double start[3] = {gamma_guess, starts[s][0], starts[s][1]}, at[3];
    int rc = minimise(d, start, at);
    if (rc)
      return rc;
    if (at[0] < 0.0)
      at[0] = 0.0;
    double score = rmse_of(d, at[0], pow(10.0, at[1]), pow(10.0, at[2]));
    if (score < best_score) {
      best_score = score;
      memcpy(best, at, sizeof best);
    }
  }
  out->gamma = best[0];
  out->alpha = pow(10.0, best[1]);
  out->beta = pow(10.0, best[2]);
  out->rmse = best_score;
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* numpy.median: the mean of the two middle values of an even count. */
static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The residuals' sigma as analysis.py estimates it; `tmp` holds n doubles. */
static double residual_sigma(const double *res, size_t n, double *tmp) {
  memcpy(tmp, res, n * sizeof *tmp);
  double med = median(tmp, n);
  for (size_t i = 0; i < n; i++)
    tmp[i] = fabs(res[i] - med);
  double sigma = 1.4826 * median(tmp, n);
  if (sigma > 1e-12)
    return sigma;
  size_t ddof = n - 1 < 3 ? n - 1 : 3;
  double mean = 0.0, ss = 0.0;
  for (size_t i = 0; i < n; i++)
    mean += res[i];
  mean /= (double)n;
  for (size_t i = 0; i < n; i++)
    ss += (res[i] - mean) * (res[i] - mean);
  return n > ddof ? sqrt(ss / (double)(n - ddof)) : 0.0;
}

/* The index (into the kept subset) of the point to drop, or -1. */
static long worst_outlier(const usl_data *d, const ps_usl_fit_result *f, double *res, double *tmp) {
  double ymax = 0.0;
  for (size_t i = 0; i < d->n; i++) {
    res[i] = d->y[i] - ps_usl_throughput(f->gamma, f->alpha, f->beta, d->x[i]);
    if (fabs(d->y[i]) > ymax)
      ymax = fabs(d->y[i]);
  }
  double sigma = residual_sigma(res, d->n, tmp);
  if (sigma < 1e-12)
    return -1;
  double p = (1.0 + pow(1.0 - USL_DISCARD_P, 1.0 / (double)d->n)) / 2.0;
  double k = gsl_cdf_ugaussian_Pinv(p);
  double limit = fmax(k * sigma, fmax(1e-6, 1e-3 * ymax));
  long worst = -1;
  int any = 0;
  for (size_t i = 0; i < d->n; i++) {
    if (fabs(res[i]) > limit)
      any = 1;
    if (worst < 0 || fabs(res[i]) > fabs(res[worst]))
      worst = (long)i;
  }
  return any ? worst : -1;
}

static int valid_points(const double *x, const double *y, size_t n) {
  if (n == 0)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i]) || !isfinite(y[i]) || x[i] <= 0.0 || y[i] < 0.0)
      return 0;
  return 1;
}

int ps_usl_fit(const double *load, const double *throughput, size_t n, int *kept,
               ps_usl_fit_result *out) {
  memset(out, 0, sizeof *out);
  /* GSL aborts on an error by default; here every error is a return code. */
  gsl_set_error_handler_off();
  if (!valid_points(load, throughput, n))
    return -EINVAL;
  double *buf = malloc(4 * n * sizeof *buf);
  if (!buf)
    return -ENOMEM;
  double *xs = buf, *ys = buf + n, *res = buf + 2 * n, *tmp = buf + 3 * n;
  for (size_t i = 0; i < n; i++)
    kept[i] = 1;
  int rc;
  for (;;) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
      if (kept[i]) {
        xs[m] = load[i];
        ys[m++] = throughput[i];
      }
    usl_data d = {xs, ys, m};
    rc = fit_single(&d, out);
    out->kept_count = m;
    if (rc || m <= 3)
      break;
    long worst = worst_outlier(&d, out, res, tmp);
    if (worst < 0)
      break;
    for (size_t i = 0, j = 0; i < n; i++)
      if (kept[i] && j++ == (size_t)worst)
        kept[i] = 0;
  }
  free(buf);
  if (rc)
    return rc;
  out->has_peak = out->alpha < 1.0 && out->beta > 0.0;
  if (out->has_peak) {
    out->n_star = sqrt((1.0 - out->alpha) / out->beta);
    out->x_n_star = ps_usl_throughput(out->gamma, out->alpha, out->beta, out->n_star);
  }
  return 0;
}
