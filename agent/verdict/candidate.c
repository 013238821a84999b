/*
 * candidate.c: a run against the current level of another series
 * (include/verdict/candidate.h; the method and its measured rates in
 * docs/verdicts.md, "Candidates").
 *
 * DESIGN
 * - The level comes from the judge itself (ps_verdict_judge() on the
 *   reference series' newest run before the candidate), so a candidate is
 *   compared with the level the nightly verdicts speak of, not with a
 *   window that straddles a change.
 * - Median and MAD, not mean and standard deviation: one spoiled nightly
 *   run in the level must not move the comparison or widen the interval.
 *   The standard error of the difference is s * sqrt(1/ny + pi/(2 nx)): a
 *   new observation's own noise (averaged over the sample) plus the
 *   uncertainty of the level's median (its asymptotic variance is
 *   pi/2 s^2 / n under normal noise).
 */
#include "verdict/candidate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 / Phi^-1(3/4): MAD times this estimates the standard deviation of
 * normal noise. */
#define MAD_TO_SD 1.4826

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Sorts v in place. */
static double median_sorting(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2.0;
}

int ps_candidate_test(const ps_verdict_metric_cfg *mc, const double *x, size_t nx,
                      const double *y, size_t ny, ps_verdict_kind *kind, double *value,
                      double *baseline, double *p_value) {
  if (!mc || !x || !y || nx == 0 || ny == 0)
    return -EINVAL;
  size_t cap = nx > ny ? nx : ny;
  double *w = malloc(cap * sizeof *w);
  if (!w)
    return -ENOMEM;
  memcpy(w, x, nx * sizeof *w);
  double m = median_sorting(w, nx);
  for (size_t i = 0; i < nx; i++)
    w[i] = fabs(x[i] - m);
  double sd = MAD_TO_SD * median_sorting(w, nx);
  memcpy(w, y, ny * sizeof *w);
  double c = median_sorting(w, ny);
  free(w);

  double se = sd * sqrt(1.0 / (double)ny + M_PI / 2.0 / (double)nx);
  *value = c;
  *baseline = m;
  *p_value = se > 0.0 ? erfc(fabs(c - m) / se / M_SQRT2) : NAN;
  *kind = PS_VERDICT_NONE;
  if (ps_verdict_beyond(c, m, mc->min_change, mc->unit) &&
      fabs(c - m) >= PS_CANDIDATE_GATE * se)
    *kind = ps_verdict_direction(c, m, mc->worse);
  return 0;
}

static int sorted(const ps_verdict_series *s) {
  for (size_t i = 1; i < s->nruns; i++)
    if (ps_verdict_run_cmp(&s->runs[i - 1], &s->runs[i]) > 0)
      return 0;
  return 1;
}

/* The newest reference run started no later than `start_ns`, or -1. */
static long newest_before(const ps_verdict_series *ref, int64_t start_ns) {
  long at = -1;
  for (size_t i = 0; i < ref->nruns && ref->runs[i].start_ns <= start_ns; i++)
    at = (long)i;
  return at;
}

/* The level of metric mi at reference position `last`: x gets the values of
 * the successful runs of the level, *good the newest of them. */
static size_t level_values(const ps_verdicts_cfg *cfg, const ps_verdict_series *ref, long last,
                           size_t mi, const char *change_run, int changed, double *x,
                           const ps_verdict_run **good) {
  size_t n = 0, window = (size_t)cfg->window_runs;
  *good = NULL;
  for (long i = last; i >= 0 && n < window; i--) {
    const ps_verdict_run *r = &ref->runs[i];
    if (r->status != PS_RUN_STATUS_SUCCESS || !isfinite(r->values[mi]))
      continue;
    if (!*good)
      *good = r;
    x[n++] = r->values[mi];
    if (changed && change_run && !strcmp(r->name, change_run))
      break;
  }
  return n;
}

static int judge_run(const ps_verdicts_cfg *cfg, const ps_verdict_series *ref,
                     const ps_verdict_series *cand, size_t k, double *x, double *y,
                     ps_verdict_list *out) {
  const ps_verdict_run *run = &cand->runs[k];
  long last = newest_before(ref, run->start_ns);
  if (last < 0)
    return 0;
  ps_verdict_series upto = *ref;
  upto.nruns = (size_t)last + 1;
  ps_verdict_list lv;
  ps_verdict_list_init(&lv);
  int rc = ps_verdict_judge(cfg, &upto, (size_t)last, &lv);
  for (size_t mi = 0; !rc && mi < cfg->nmetrics; mi++) {
    const ps_verdict_metric_cfg *mc = &cfg->metrics[mi];
    if (!mc->enabled || !isfinite(run->values[mi]))
      continue;
    /* What the judge said of the newest reference run for this metric: a
     * change (now or reported earlier) begins the level at change_run. */
    const ps_verdict *at = NULL;
    for (size_t i = 0; i < lv.n; i++)
      if (!strcmp(lv.v[i].metric, mc->name))
        at = &lv.v[i];
    if (!at)
      continue; /* the reference series has no verdicts yet: no level */
    int changed = at->verdict != PS_VERDICT_NONE ||
                  (at->change_run && strcmp(at->change_run, at->run));
    const ps_verdict_run *good;
    size_t nx = level_values(cfg, ref, last, mi, at->change_run, changed, x, &good);
    if (nx < (size_t)cfg->min_runs)
      continue;
    size_t ny = 0;
    for (size_t i = 0; i <= k; i++) {
      const ps_verdict_run *r = &cand->runs[i];
      int same = i == k || (run->revision && r->revision && !strcmp(r->revision, run->revision));
      if (same && r->status == PS_RUN_STATUS_SUCCESS && isfinite(r->values[mi]))
        y[ny++] = r->values[mi];
    }
    ps_verdict v = ps_verdict_blank();
    rc = ps_candidate_test(mc, x, nx, y, ny, &v.verdict, &v.value, &v.baseline, &v.p_value);
    if (rc)
      break;
    v.source = cand->source;
    v.series = cand->series;
    v.against = ref->series;
    v.metric = mc->name;
    v.run = run->name;
    v.host = run->host;
    v.method = PS_METHOD_CANDIDATE;
    v.change_run = run->name;
    v.baseline_runs = (int64_t)nx;
    v.revision = run->revision;
    v.backfill = run->backfill;
    v.time_ns = run->start_ns;
    if (v.verdict != PS_VERDICT_NONE) {
      v.good_run = good->name;
      v.good_revision = good->revision;
      v.bad_run = run->name;
      v.bad_revision = run->revision;
    }
    rc = ps_verdict_list_push(out, &v);
  }
  ps_verdict_list_free(&lv);
  return rc;
}

int ps_verdict_candidate(const ps_verdicts_cfg *cfg, const ps_verdict_series *against,
                         const ps_verdict_series *cand, size_t from, ps_verdict_list *out) {
  if (!cfg || !against || !cand || !out || !sorted(against) || !sorted(cand))
    return -EINVAL;
  for (size_t i = 0; i < cand->nruns; i++)
    if (!cand->runs[i].name || (cfg->nmetrics && !cand->runs[i].values))
      return -EINVAL;
  if (from >= cand->nruns || against->nruns == 0)
    return 0;
  size_t window = (size_t)cfg->window_runs;
  double *x = malloc((window ? window : 1) * sizeof *x);
  double *y = malloc(cand->nruns * sizeof *y);
  int rc = x && y ? 0 : -ENOMEM;
  for (size_t k = from; !rc && k < cand->nruns; k++)
    if (cand->runs[k].status == PS_RUN_STATUS_SUCCESS)
      rc = judge_run(cfg, against, cand, k, x, y, out);
  free(x);
  free(y);
  return rc;
}
