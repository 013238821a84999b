/*
 * judge.c: the verdicts of a loadgen series across revisions
 * (include/verdict/judge.h; the rules and their reasons in
 * docs/verdicts.md).
 *
 * DESIGN
 * - One metric at a time. The metric's series is the successful runs that
 *   have a value for it; everything below works on positions in that
 *   series, so a failed run cannot reach a window or a baseline.
 * - evaluate() looks at one run's window (the newest window_runs runs up
 *   to it) alone. E-Divisive finds the significant change points; then
 *   neighbouring segments are merged, the closest pair first, until every
 *   boundary left is a change worth reporting: the medians of the two
 *   levels differ by the metric's minimum effect and by NOISE_GATE times
 *   the run-to-run noise. For these decisions a level is measured by its
 *   median, and a level of an even number of runs by the middle run nearer
 *   the level before, so two runs at a new level count only as far as the
 *   less extreme of them: one outlier next to an ordinary run is not a
 *   change. What is left says where the run's level began and what the
 *   level before was; the baseline a verdict reports is that level's
 *   median, the number the decision compared against (docs/schema.md): a
 *   mean would let one outlier of the history move it wherever it likes.
 * - Whether a change is new is decided from the evaluations of the earlier
 *   runs at the same level, not from what was written before: a run
 *   reports a change unless one of those runs already showed a change in
 *   the same direction that began after the previous level began (the
 *   same change, even when noise placed its start a run earlier or later).
 *   Every evaluation is a pure function of its window, so no verdict
 *   depends on arrival order; evaluations are memoised per series
 *   position, so judging a whole year evaluates each run once, and judging
 *   one new run evaluates it and the runs of its level.
 * - The metrics judged on one run are a family (docs/verdicts.md, "The
 *   error of a night"): a change is reported only when its p-value,
 *   adjusted by Holm's step-down over the run's p-values, reaches the
 *   significance level. Every metric keeps its own memo of evaluations,
 *   and a run's family is computed once, from the evaluations of every
 *   metric at that run, so a verdict still depends only on the windows.
 */
#include "verdict/judge.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/edivisive.h"
#include "verdict/robust.h"

/* How many times the run-to-run noise two levels must be apart to be a
 * change (docs/verdicts.md, "How well it works", measures the trade-off). */
#define NOISE_GATE 2.5

/* How far from its level's median, in noise scales, a value of the level
 * before the newest runs still counts at full weight in their permutation
 * test; farther ones are pulled in to this distance. 3: normal noise
 * reaches it in 3 runs of 1,000, a spoiled night 35 % off at 2 % noise is
 * 17 scales out. */
#define CLIP_SCALES 3.0

int ps_verdict_run_cmp(const ps_verdict_run *a, const ps_verdict_run *b) {
  if (a->start_ns != b->start_ns)
    return a->start_ns < b->start_ns ? -1 : 1;
  return strcmp(a->name ? a->name : "", b->name ? b->name : "");
}

static int cmp_run(const void *a, const void *b) { return ps_verdict_run_cmp(a, b); }

void ps_verdict_runs_sort(ps_verdict_run *runs, size_t n) {
  qsort(runs, n, sizeof *runs, cmp_run);
}

/* What one run's window says about the level it is at. */
typedef struct level {
  unsigned char done;       /* evaluated */
  unsigned char judged;     /* had min_runs values: has a verdict */
  unsigned char has_change; /* its level began with a reportable change */
  ps_verdict_kind dir;      /* of that change */
  size_t start;             /* series position where the level began */
  size_t prev_start;        /* and where the level before it began */
  double baseline;          /* median of the level before, or of the window before the run */
  int64_t baseline_runs;
  double p;
  /* without the change (when the run's family does not let it through):
   * the median of the window before the run, and its runs */
  double plain_baseline;
  int64_t plain_runs;
  /* the run's family (docs/verdicts.md, "The error of a night") */
  unsigned char family_done;
  unsigned char passes; /* has_change, and its Holm-adjusted p reaches significance */
  double p_floor;       /* the smallest p the newest runs' test could give, or NaN */
  int64_t family_size;
  double p_adjusted;
} level;

typedef struct metric_ctx metric_ctx;

/* One member of a run's family: a metric's evaluation of the run. */
typedef struct member {
  metric_ctx *c;
  size_t j;
  double p;
} member;

struct metric_ctx {
  metric_ctx *all; /* every metric's context, cfg->nmetrics of them */
  member *family;  /* room for cfg->nmetrics members */
  const ps_verdicts_cfg *cfg;
  const ps_verdict_metric_cfg *mc;
  size_t mi;
  const ps_verdict_series *s;
  size_t *pos;    /* series position -> index in s->runs */
  size_t n;
  level *lv;
  double *x;      /* one window's values */
  double *sorted; /* a segment of them, sorted, for its median */
  double *clipped; /* the window with the far-off values of a level pulled in */
  size_t window;
  ps_cp_ws *ws;
  ps_cp_params params;
  unsigned fine_permutations; /* for a family of every enabled metric */
  double family_alpha;        /* significance / that family's size */
};

static double value_at(const metric_ctx *c, size_t j) {
  return c->s->runs[c->pos[j]].values[c->mi];
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The level of window values [a, b): their median. With `toward` (the
 * level before; not NaN) the level counts only as far as it is past that
 * level: a level shorter than min_runs whose values all moved the same way
 * counts as its value nearest to `toward` (two spoiled nights among three
 * runs are not a level), a level of two runs on both sides of `toward` as
 * `toward` itself (two neighbours spoiled opposite ways are not one), and
 * otherwise a level of an even count as the middle value nearer to
 * `toward` instead of the mean of the two middle values. */
static double median_of(metric_ctx *c, size_t a, size_t b, double toward) {
  size_t n = b - a;
  memcpy(c->sorted, c->x + a, n * sizeof *c->sorted);
  qsort(c->sorted, n, sizeof *c->sorted, cmp_double);
  if (!isnan(toward) && n < (size_t)c->cfg->min_runs) {
    double lo = c->sorted[0], hi = c->sorted[n - 1];
    if (toward < lo || toward > hi)
      return lo > toward ? lo : hi;
    if (n == 2)
      return toward;
  }
  if (n % 2)
    return c->sorted[n / 2];
  double lo = c->sorted[n / 2 - 1], hi = c->sorted[n / 2];
  if (isnan(toward))
    return lo + (hi - lo) / 2.0;
  return fabs(lo - toward) <= fabs(hi - toward) ? lo : hi;
}

/* The run-to-run noise of the window: 1.4826 x the median absolute
 * deviation of the values from the median of their segment, pooled over
 * the segments, so a change between segments is not noise, and a spoiled
 * night neither widens it (hiding a real change) nor narrows it
 * (docs/verdicts.md, "Spoiled nights"). 0 when it cannot be told. */
static double noise_sd(metric_ctx *c, const size_t *starts, size_t nseg) {
  double s = ps_robust_pooled_sd(c->x, starts, nseg, c->sorted);
  return isnan(s) ? 0.0 : s;
}

/* How far apart two levels are, in the metric's unit (the merge order). */
static double effect_size(const ps_verdict_metric_cfg *mc, double cur, double prev) {
  double d = fabs(cur - prev);
  if (mc->unit == PS_CHANGE_POINTS)
    return d;
  return prev == 0.0 ? (d == 0.0 ? 0.0 : INFINITY) : d / fabs(prev) * 100.0;
}

/* Removes boundary k of the segments (merging segments k-1 and k). */
static void merge_at(size_t *starts, double *p_at, size_t *nseg, size_t k) {
  memmove(&starts[k], &starts[k + 1], (*nseg - k) * sizeof *starts);
  memmove(&p_at[k], &p_at[k + 1], (*nseg - k) * sizeof *p_at);
  (*nseg)--;
}

/* Merges neighbouring segments, the closest pair first, until every
 * boundary left is a change worth reporting (docs/verdicts.md, Step 2). */
static void merge_small(metric_ctx *c, size_t *starts, double *p_at, size_t *nseg) {
  double gate = NOISE_GATE * noise_sd(c, starts, *nseg);
  while (*nseg >= 2) {
    size_t merge = 0;
    double smallest = INFINITY;
    for (size_t k = 1; k < *nseg; k++) {
      double prev = median_of(c, starts[k - 1], starts[k], NAN);
      double cur = median_of(c, starts[k], starts[k + 1], prev);
      if (ps_verdict_beyond(cur, prev, c->mc->min_change, c->mc->unit) && fabs(cur - prev) >= gate)
        continue;
      double e = effect_size(c->mc, cur, prev);
      if (merge == 0 || e < smallest) {
        merge = k;
        smallest = e;
      }
    }
    if (merge == 0)
      break;
    merge_at(starts, p_at, nseg, merge);
  }
}

/* The newest two runs at a level of their own (docs/verdicts.md, "The
 * newest runs"). E-Divisive looks for the best split anywhere in the
 * window, and its permutation test pays for all the places a change could
 * have been: two runs at a new level at the very end rarely reach
 * significance that way, though a change is news only there. So the last
 * two runs are tested against the level before them at that one split:
 * the less extreme of the two must be past that level's median by the
 * metric's minimum effect and by NOISE_GATE times the noise (a single
 * outlier next to an ordinary run never is), and the split's exact
 * permutation p-value must reach the significance level. When the
 * segmentation already ends with them, their level carries the smaller of
 * the search's p-value and this one: both test the same split, and the
 * exact one is often the finer (the family's correction, family(), asks
 * for a p-value several times smaller than the significance level). */
static void tail_test(metric_ctx *c, size_t *starts, double *p_at, size_t *nseg, size_t n,
                      double *floor) {
  int own = *nseg >= 2 && starts[*nseg - 1] == n - 2;
  size_t base = starts[*nseg - (own ? 2 : 1)];
  if (n < 2 || base + (size_t)c->cfg->min_runs > n - 2 || (!own && *nseg > PS_CP_MAX_POINTS))
    return; /* too little level before them */
  double prev = median_of(c, base, n - 2, NAN);
  double cur = median_of(c, n - 2, n, prev);
  if (!own) {
    starts[*nseg + 1] = n;
    starts[*nseg] = n - 2;
  }
  double noise = noise_sd(c, starts, *nseg + !own);
  if (!own)
    starts[*nseg] = n;
  if (!ps_verdict_beyond(cur, prev, c->mc->min_change, c->mc->unit) ||
      fabs(cur - prev) < NOISE_GATE * noise)
    return;
  /* A spoiled night in the level before would be the far end of many of
   * the splits the permutation test scores and lift the p-value of the
   * real one; one of the newest two would make them look far apart from
   * each other: its distance counts only as far as CLIP_SCALES noise
   * scales from its level (for the newest two, from the less extreme of
   * them, the value the level is measured by). */
  memcpy(c->clipped, c->x, n * sizeof *c->clipped);
  ps_robust_clip(c->clipped, base, n - 2, prev, CLIP_SCALES, noise);
  ps_robust_clip(c->clipped, n - 2, n, cur, CLIP_SCALES, noise);
  double p = ps_edivisive_tail_p(c->clipped + base, n - base);
  double m = (double)(n - base);
  if (own) {
    if (p < p_at[*nseg - 1])
      *floor = 2.0 / (m * (m - 1.0));
    p_at[*nseg - 1] = fmin(p_at[*nseg - 1], p);
    return;
  }
  if (!(p <= c->cfg->significance))
    return;
  *floor = 2.0 / (m * (m - 1.0));
  starts[*nseg] = n - 2;
  starts[*nseg + 1] = n;
  p_at[*nseg] = p;
  (*nseg)++;
}

/* Whether the search's p-values are too coarse for the run's family: Holm
 * asks the smallest of k p-values to reach significance / k, and the
 * default permutations (199 at 0.05) cannot tell a p-value below 0.005. A
 * clear change's p-value is that smallest one, enough for a family of up
 * to 10; a change point accepted with a larger one is searched again with
 * as many permutations as the family needs (c->fine_permutations). Only
 * those: the finer search costs ten times as much and would make a year's
 * judging ten times as slow (docs/benchmarks.md, "Verdicts"). */
static int needs_finer(const metric_ctx *c, const ps_cp_result *res) {
  if (c->fine_permutations <= ps_cp_default_permutations(c->cfg->significance))
    return 0;
  for (size_t k = 0; k < res->npoints; k++)
    if (res->points[k].p_value > c->family_alpha)
      return 1;
  return 0;
}

static int evaluate(metric_ctx *c, size_t j) {
  level *lv = &c->lv[j];
  if (lv->done)
    return 0;
  size_t lo = j + 1 > c->window ? j + 1 - c->window : 0;
  size_t n = j - lo + 1;
  lv->done = 1;
  if (n < (size_t)c->cfg->min_runs)
    return 0;
  lv->judged = 1;
  for (size_t i = 0; i < n; i++)
    c->x[i] = value_at(c, lo + i);
  const ps_verdict_run *run = &c->s->runs[c->pos[j]];
  ps_cp_result res;
  uint64_t seed = ps_cp_seed(c->s->series, c->mc->name, run->name);
  int rc = ps_edivisive(c->ws, c->x, n, &c->params, seed, &res);
  if (!rc && needs_finer(c, &res)) {
    ps_cp_params fine = c->params;
    fine.permutations = c->fine_permutations;
    rc = ps_edivisive(c->ws, c->x, n, &fine, seed, &res);
  }
  if (rc)
    return rc;

  /* segment k is [starts[k], starts[k + 1]); p_at[k] is the p-value of the
   * change point that starts it */
  size_t starts[PS_CP_MAX_POINTS + 2];
  double p_at[PS_CP_MAX_POINTS + 2];
  size_t nseg = 1;
  starts[0] = 0;
  p_at[0] = NAN;
  for (size_t k = 0; k < res.npoints; k++) {
    starts[nseg] = res.points[k].at;
    p_at[nseg] = res.points[k].p_value;
    nseg++;
  }
  starts[nseg] = n;
  /* A level cut off by the window's (or the series') start is a baseline
   * only with as many runs as a series needs before its first verdict: the
   * first two runs of a series being low is not a level. */
  while (nseg >= 2 && starts[1] + 1 < (size_t)c->cfg->min_runs)
    merge_at(starts, p_at, &nseg, 1);
  merge_small(c, starts, p_at, &nseg);
  double floor = NAN;
  tail_test(c, starts, p_at, &nseg, n, &floor);
  lv->p_floor = floor;
  if (nseg >= 2) {
    size_t last = starts[nseg - 1], prev = starts[nseg - 2];
    double prev_level = median_of(c, prev, last, NAN);
    lv->has_change = 1;
    lv->dir = ps_verdict_direction(median_of(c, last, n, prev_level), prev_level,
                                   c->mc->worse);
    lv->baseline = prev_level;
    lv->start = lo + last;
    lv->prev_start = lo + prev;
    lv->baseline_runs = (int64_t)(last - prev);
    lv->p = p_at[nseg - 1];
  } else {
    lv->start = lo;
    lv->p = res.rejected ? res.rejected_cp.p_value : NAN;
  }
  lv->plain_baseline = n > 1 ? median_of(c, 0, n - 1, NAN) : NAN;
  lv->plain_runs = (int64_t)(n - 1);
  if (!lv->has_change) {
    lv->baseline = lv->plain_baseline;
    lv->baseline_runs = lv->plain_runs;
  }
  return 0;
}

/* The position of run index r in c's series, or c->n when the metric has
 * no value there. */
static size_t position_of(const metric_ctx *c, size_t r) {
  size_t lo = 0, hi = c->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->pos[mid] < r)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < c->n && c->pos[lo] == r ? lo : c->n;
}

static int cmp_member(const void *a, const void *b) {
  double x = ((const member *)a)->p, y = ((const member *)b)->p;
  if (isnan(x) || isnan(y))
    return isnan(x) - isnan(y);
  return x < y ? -1 : x > y;
}

/* The family of the run at c's position j: every enabled metric judged on
 * that run. Holm's step-down over their p-values: the i-th smallest of k
 * (from 0) is adjusted to the largest (k - h) p_(h) for h <= i, at most 1;
 * a change lets its run report it only when its adjusted p reaches the
 * significance level. The chance that a stable night shows any false
 * change among them is then at most the significance level, whatever the
 * metrics' correlation (Holm 1979), where each metric at its own level
 * would allow up to k times that. */
static int family(metric_ctx *c, size_t j) {
  if (c->lv[j].family_done)
    return 0;
  size_t r = c->pos[j], k = 0;
  for (size_t mi = 0; mi < c->cfg->nmetrics; mi++) {
    metric_ctx *m = &c->all[mi];
    if (!m->cfg->metrics[mi].enabled)
      continue;
    size_t q = position_of(m, r);
    if (q == m->n)
      continue;
    int rc = evaluate(m, q);
    if (rc)
      return rc;
    if (m->lv[q].judged)
      c->family[k++] = (member){m, q, m->lv[q].p};
  }
  qsort(c->family, k, sizeof *c->family, cmp_member);
  double running = 0.0;
  for (size_t i = 0; i < k; i++) {
    level *l = &c->family[i].c->lv[c->family[i].j];
    double adj = (double)(k - i) * c->family[i].p;
    running = isnan(adj) ? NAN : fmax(running, fmin(adj, 1.0));
    l->family_done = 1;
    l->family_size = (int64_t)k;
    l->p_adjusted = running;
    /* 10 x 0.005 must pass at 0.05 whatever the rounding; a p-value at
     * the smallest the newest runs' exact test can give (two runs after a
     * short level) passes too: the data cannot say more, and a family must
     * not make a change unreportable until its level before is long */
    l->passes = l->has_change && (running <= c->cfg->significance * (1.0 + 1e-9) ||
                                  l->p <= l->p_floor * (1.0 + 1e-9));
  }
  return 0;
}

/* The first earlier run at j's level whose window already showed j's
 * change: the run that reported it. *found is its position, or j itself
 * when there is none (j reports the change). */
static int first_shown(metric_ctx *c, size_t j, size_t *found) {
  *found = j;
  for (size_t u = c->lv[j].start; u < j; u++) {
    int rc = evaluate(c, u);
    if (rc)
      return rc;
    const level *lu = &c->lv[u], *lv = &c->lv[j];
    if (!(lu->judged && lu->has_change && lu->dir == lv->dir && lu->start > lv->prev_start))
      continue;
    rc = family(c, u);
    if (rc)
      return rc;
    if (lu->passes) {
      *found = u;
      break;
    }
  }
  return 0;
}

static int judge_metric(metric_ctx *c, size_t from, ps_verdict_list *out) {
  size_t j = 0;
  while (j < c->n && c->pos[j] < from)
    j++;
  for (; j < c->n; j++) {
    int rc = evaluate(c, j);
    if (rc)
      return rc;
    if (!c->lv[j].judged)
      continue;
    rc = family(c, j);
    if (rc)
      return rc;
    const level *lv = &c->lv[j];
    const ps_verdict_run *r = &c->s->runs[c->pos[j]];
    ps_verdict v = ps_verdict_blank();
    v.source = c->s->source;
    v.series = c->s->series;
    v.metric = c->mc->name;
    v.run = r->name;
    v.host = r->host;
    v.method = PS_METHOD_EDIVISIVE;
    v.value = value_at(c, j);
    v.revision = r->revision;
    v.backfill = r->backfill;
    v.time_ns = r->start_ns;
    v.change_run = r->name;
    v.baseline = lv->baseline;
    v.baseline_runs = lv->baseline_runs;
    v.p_value = lv->p;
    v.family_size = lv->family_size;
    v.p_adjusted = lv->p_adjusted;
    size_t reporter = j;
    if (lv->has_change) {
      /* Reported once, by the first run that showed it and whose family
       * let it through; the runs after it name the run where that report
       * said the change began, so noise moving the estimate by a run does
       * not make the level jump. */
      rc = first_shown(c, j, &reporter);
      if (rc)
        return rc;
    }
    if (lv->has_change && reporter == j && !lv->passes) {
      /* not yet a change for the night's family: the window as a whole */
      v.baseline = lv->plain_baseline;
      v.baseline_runs = lv->plain_runs;
    } else if (lv->has_change) {
      v.verdict = reporter == j ? lv->dir : PS_VERDICT_NONE;
      v.change_run = c->s->runs[c->pos[c->lv[reporter].start]].name;
      if (v.verdict != PS_VERDICT_NONE && lv->start > 0) {
        /* The revision range (docs/verdicts.md, "The revision range"):
         * the level before began at prev_start and ended just before the
         * new one, so its last run is the last good one. */
        const ps_verdict_run *good = &c->s->runs[c->pos[c->lv[j].start - 1]];
        const ps_verdict_run *bad = &c->s->runs[c->pos[c->lv[j].start]];
        v.good_run = good->name;
        v.good_revision = good->revision;
        v.bad_run = bad->name;
        v.bad_revision = bad->revision;
      }
    }
    rc = ps_verdict_list_push(out, &v);
    if (rc)
      return rc;
  }
  return 0;
}

int ps_verdict_judge(const ps_verdicts_cfg *cfg, const ps_verdict_series *s, size_t from,
                     ps_verdict_list *out) {
  if (!cfg || !s || !(cfg->significance > 0.0 && cfg->significance < 1.0) ||
      cfg->min_runs < 1 || cfg->window_runs < 2)
    return -EINVAL;
  for (size_t i = 0; i < s->nruns; i++) {
    if (!s->runs[i].name || (cfg->nmetrics && !s->runs[i].values))
      return -EINVAL;
    if (i && ps_verdict_run_cmp(&s->runs[i - 1], &s->runs[i]) > 0)
      return -EINVAL;
  }
  if (from >= s->nruns)
    return 0;
  size_t window = (size_t)cfg->window_runs;
  size_t cap = window < s->nruns ? window : s->nruns;
  size_t nm = cfg->nmetrics, enabled = 0;
  /* the metrics this series can have: a default list names other sources'
   * figures too (a benchmarker's peak is never a loadgen run's), and a
   * metric without a value is in no run's family */
  for (size_t mi = 0; mi < nm; mi++) {
    int measured = 0;
    for (size_t i = 0; cfg->metrics[mi].enabled && !measured && i < s->nruns; i++)
      measured = s->runs[i].values && isfinite(s->runs[i].values[mi]);
    enabled += measured;
  }
  /* Holm asks the smallest p-value of a family of k to reach
   * significance / k: a finer search needs room for that (10 / (alpha / k)
   * - 1 permutations, 1,999 for 10 metrics at 0.05; needs_finer()). */
  double family_alpha = cfg->significance / (double)(enabled ? enabled : 1);
  unsigned perms = ps_cp_default_permutations(family_alpha);
  metric_ctx *all = calloc(nm ? nm : 1, sizeof *all);
  member *fam = malloc((nm ? nm : 1) * sizeof *fam);
  double *x = malloc(cap * sizeof *x), *sorted = malloc(cap * sizeof *sorted);
  double *clipped = malloc(cap * sizeof *clipped);
  ps_cp_ws *ws = NULL;
  int rc = all && fam && x && sorted && clipped ? ps_cp_ws_new(&ws, cap) : -ENOMEM;
  for (size_t mi = 0; !rc && mi < nm; mi++) {
    metric_ctx *c = &all[mi];
    *c = (metric_ctx){.all = all,
                      .family = fam,
                      .cfg = cfg,
                      .mc = &cfg->metrics[mi],
                      .mi = mi,
                      .s = s,
                      .x = x,
                      .sorted = sorted,
                      .clipped = clipped,
                      .window = window,
                      .ws = ws};
    c->params.significance = cfg->significance;
    c->fine_permutations = perms;
    c->family_alpha = family_alpha;
    c->pos = malloc(s->nruns * sizeof *c->pos);
    c->lv = calloc(s->nruns, sizeof *c->lv);
    if (!c->pos || !c->lv) {
      rc = -ENOMEM;
      break;
    }
    for (size_t i = 0; i < s->nruns; i++)
      if (s->runs[i].status == PS_RUN_STATUS_SUCCESS && isfinite(s->runs[i].values[mi]))
        c->pos[c->n++] = i;
  }
  for (size_t mi = 0; !rc && mi < nm; mi++)
    if (cfg->metrics[mi].enabled)
      rc = judge_metric(&all[mi], from, out);
  for (size_t mi = 0; all && mi < nm; mi++) {
    free(all[mi].pos);
    free(all[mi].lv);
  }
  ps_cp_ws_free(ws);
  free(all);
  free(fam);
  free(x);
  free(sorted);
  free(clipped);
  return rc;
}
