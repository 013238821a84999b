/*
 * test_verdict: verdicts of a loadgen series across revisions
 * (agent/verdict/judge.c) and their perfship_verdict points
 * (agent/verdict/verdict.c), on generated histories: each run's metrics are
 * a base value times the run's level times a seeded noise of up to +-3 %
 * (uniform), the noise the acceptance rules name. The rules checked
 * are those of docs/verdicts.md: a 10 % step is reported once, at the run
 * where it began or the next; later runs at the new level are `none`
 * pointing back; a return is an improvement; stable histories and single
 * outliers give nothing; failed runs are in no baseline; and the points do
 * not depend on arrival order or repetition.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/figures.h"
#include "verdict/judge.h"
#include "verdict/verdict.h"

#include "capture.h"

#define MAXRUNS 400
#define NMETRICS 7
#define DAY_NS 86400000000000LL
#define T0_NS 1647216135581548000LL

enum { CYCLE_AVG = 0, SUCCESS_RATE, SWINGSET, BLOCK_DUR, BOOTSTRAP, WALLET, LOADGEN };
static const double base_value[NMETRICS] = {24.33, 100.0, 0.1875, 5.2477, 24.54, 125.4, 121.3};

typedef struct history {
  size_t n;
  char names[MAXRUNS][40];
  char revs[MAXRUNS][16];
  double values[MAXRUNS][NMETRICS];
  ps_verdict_run runs[MAXRUNS];
} history;

#include "aux_defaults.h"

/* Every test starts from the default configuration, with the seven
 * headline metrics these tests count on first; the growth per cycle and
 * the benchmarker's fit after them (judged in
 * tests/integration/test_slog_judged.py and test_benchmarker_releases.py)
 * are left out. */
static int setup(void **state) {
  int rc = defaults_setup(state);
  if (rc != 0 || cfg.verdicts.nmetrics != NMETRICS + PS_GROWTH_NFIGURES + PS_BENCHMARKER_NFIGURES ||
      strcmp(cfg.verdicts.metrics[NMETRICS].name, "kernelObjectsPerCycle") != 0)
    return -1;
  while (cfg.verdicts.nmetrics > NMETRICS)
    free(cfg.verdicts.metrics[--cfg.verdicts.nmetrics].name);
  return 0;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, defaults_teardown)

static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* uniform in [-1, 1) */
static double noise(uint64_t *s) { return (double)(next_u64(s) >> 11) / 4503599627370496.0 - 1.0; }

/* n daily runs; level[m][i] scales metric m of run i (NULL: 1); the
 * success rate has no noise (it is 100 in a healthy run). */
static void make_history(history *h, size_t n, uint64_t seed, double (*level)(int m, size_t i)) {
  memset(h, 0, sizeof *h);
  h->n = n;
  uint64_t rng = seed * 7919 + 1;
  for (size_t i = 0; i < n; i++) {
    uint64_t rev = next_u64(&rng);
    snprintf(h->revs[i], sizeof h->revs[i], "%012llx",
             (unsigned long long)(rev & 0xffffffffffffULL));
    snprintf(h->names[i], sizeof h->names[i], "daily-perf-%s", h->revs[i]);
    for (int m = 0; m < NMETRICS; m++) {
      double lv = level ? level(m, i) : 1.0;
      h->values[i][m] = m == SUCCESS_RATE ? base_value[m] * lv
                                          : base_value[m] * lv * (1.0 + 0.03 * noise(&rng));
    }
    h->runs[i] = (ps_verdict_run){h->names[i], h->revs[i], T0_NS + (int64_t)i * DAY_NS,
                                  PS_RUN_STATUS_SUCCESS, 0, h->values[i], NULL};
  }
}

static void judge(const history *h, size_t from, ps_verdict_list *out) {
  ps_verdict_series s = {"loadgen", "daily-perf", h->runs, h->n};
  ps_verdict_list_init(out);
  assert_int_equal(ps_verdict_judge(&cfg.verdicts, &s, from, out), 0);
}

static const ps_verdict *find(const ps_verdict_list *l, int metric, const char *run) {
  for (size_t k = 0; k < l->n; k++)
    if (strcmp(l->v[k].metric, cfg.verdicts.metrics[metric].name) == 0 &&
        strcmp(l->v[k].run, run) == 0)
      return &l->v[k];
  return NULL;
}

/* the runs (indexes into h) whose verdict for `metric` is `kind` */
static size_t runs_with(const history *h, const ps_verdict_list *l, int metric,
                        ps_verdict_kind kind, size_t *idx, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < h->n; i++) {
    const ps_verdict *v = find(l, metric, h->names[i]);
    if (v && v->verdict == kind && n < cap)
      idx[n++] = i;
  }
  return n;
}

static double step_up_at_20(int m, size_t i) {
  return (m == CYCLE_AVG || m == SWINGSET) && i >= 20 ? 1.10 : 1.0;
}

static void test_step_up_is_reported_once(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    history h;
    make_history(&h, 40, seed, step_up_at_20);
    ps_verdict_list l;
    judge(&h, 0, &l);
    for (int m = 0; m < NMETRICS; m++) {
      size_t idx[40];
      size_t nreg = runs_with(&h, &l, m, PS_VERDICT_REGRESSION, idx, 40);
      size_t nimp = runs_with(&h, &l, m, PS_VERDICT_IMPROVEMENT, idx + 20, 20);
      assert_int_equal(nimp, 0);
      if (m != CYCLE_AVG && m != SWINGSET) {
        assert_int_equal(nreg, 0);
        continue;
      }
      /* once, at the run where it began or the next one */
      assert_int_equal(nreg, 1);
      assert_in_range(idx[0], 20, 21);
      const ps_verdict *v = find(&l, m, h.names[idx[0]]);
      assert_string_equal(v->change_run, h.names[20]);
      /* the revision range: the last run at the old level, the first at
       * the new one */
      assert_string_equal(v->good_run, h.names[19]);
      assert_string_equal(v->good_revision, h.revs[19]);
      assert_string_equal(v->bad_run, h.names[20]);
      assert_string_equal(v->bad_revision, h.revs[20]);
      assert_true(v->p_value <= cfg.verdicts.significance);
      assert_int_equal(v->baseline_runs, 20);
      assert_float_equal(v->baseline, base_value[m], base_value[m] * 0.03);
      /* every later run: none, pointing back, against the old level */
      for (size_t i = idx[0] + 1; i < 40; i++) {
        v = find(&l, m, h.names[i]);
        assert_non_null(v);
        assert_int_equal(v->verdict, PS_VERDICT_NONE);
        assert_null(v->good_run);
        assert_string_equal(v->change_run, h.names[20]);
        assert_float_equal(ps_verdict_change_pct(v->value, v->baseline), 10.0, 7.0);
      }
    }
    ps_verdict_list_free(&l);
  }
}

static double step_down_at_20(int m, size_t i) {
  if (i < 20)
    return 1.0;
  return m == CYCLE_AVG || m == BOOTSTRAP ? 0.90 : m == SUCCESS_RATE ? 0.9 : 1.0;
}

static void test_step_down_and_success_rate_in_points(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    history h;
    make_history(&h, 40, seed, step_down_at_20);
    ps_verdict_list l;
    judge(&h, 0, &l);
    size_t idx[40];
    /* faster is better: an improvement */
    assert_int_equal(runs_with(&h, &l, CYCLE_AVG, PS_VERDICT_IMPROVEMENT, idx, 40), 1);
    assert_in_range(idx[0], 20, 21);
    assert_int_equal(runs_with(&h, &l, CYCLE_AVG, PS_VERDICT_REGRESSION, idx, 40), 0);
    assert_int_equal(runs_with(&h, &l, BOOTSTRAP, PS_VERDICT_IMPROVEMENT, idx, 40), 1);
    /* a success rate from 100 to 90 is a regression of 10 points */
    assert_int_equal(runs_with(&h, &l, SUCCESS_RATE, PS_VERDICT_REGRESSION, idx, 40), 1);
    assert_in_range(idx[0], 20, 21);
    const ps_verdict *v = find(&l, SUCCESS_RATE, h.names[idx[0]]);
    assert_float_equal(v->value, 90.0, 1e-9);
    assert_float_equal(v->baseline, 100.0, 1e-9);
    assert_float_equal(ps_verdict_change_pct(v->value, v->baseline), -10.0, 1e-9);
    ps_verdict_list_free(&l);
  }
  /* 100 -> 99 is one point: below the 2-point minimum, however certain */
  history h;
  make_history(&h, 40, 3, NULL);
  for (size_t i = 20; i < 40; i++)
    h.values[i][SUCCESS_RATE] = 99.0;
  ps_verdict_list l;
  judge(&h, 0, &l);
  size_t idx[40];
  assert_int_equal(runs_with(&h, &l, SUCCESS_RATE, PS_VERDICT_REGRESSION, idx, 40), 0);
  ps_verdict_list_free(&l);
}

static void test_stable_history_has_no_alarm(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 30; seed++) {
    history h;
    make_history(&h, seed == 1 ? 120 : 40, seed, NULL);
    ps_verdict_list l;
    judge(&h, 0, &l);
    size_t first = (size_t)cfg.verdicts.min_runs - 1;
    assert_int_equal(l.n, NMETRICS * (h.n - first));
    for (size_t k = 0; k < l.n; k++)
      if (l.v[k].verdict != PS_VERDICT_NONE)
        fail_msg("seed %llu: %s %s: %s", (unsigned long long)seed, l.v[k].run,
                 l.v[k].metric, ps_verdict_kind_name(l.v[k].verdict));
    ps_verdict_list_free(&l);
  }
}

static void test_min_runs_and_window(void **state) {
  (void)state;
  history h;
  make_history(&h, 40, 4, step_up_at_20);
  ps_verdict_list l;
  judge(&h, 0, &l);
  /* the first verdict is on the fifth run, against the four before it */
  for (size_t i = 0; i < 4; i++)
    assert_null(find(&l, CYCLE_AVG, h.names[i]));
  const ps_verdict *v = find(&l, CYCLE_AVG, h.names[4]);
  assert_non_null(v);
  assert_int_equal(v->baseline_runs, 4);
  assert_string_equal(v->change_run, h.names[4]);
  ps_verdict_list_free(&l);

  /* with a window of 20 runs, the old level has left it by run 40: the
   * current level is the only one, and the baseline is it */
  make_history(&h, 50, 4, step_up_at_20);
  cfg.verdicts.window_runs = 20;
  judge(&h, 0, &l);
  size_t idx[50];
  assert_int_equal(runs_with(&h, &l, CYCLE_AVG, PS_VERDICT_REGRESSION, idx, 50), 1);
  assert_in_range(idx[0], 20, 21);
  v = find(&l, CYCLE_AVG, h.names[35]); /* 4 old runs left: still a baseline */
  assert_string_equal(v->change_run, h.names[20]);
  assert_int_equal(v->baseline_runs, 4);
  v = find(&l, CYCLE_AVG, h.names[45]);
  assert_int_equal(v->verdict, PS_VERDICT_NONE);
  assert_string_equal(v->change_run, h.names[45]);
  assert_int_equal(v->baseline_runs, 19);
  assert_float_equal(v->baseline, base_value[CYCLE_AVG] * 1.1, base_value[CYCLE_AVG] * 0.04);
  ps_verdict_list_free(&l);
}

static double outliers(int m, size_t i) {
  (void)m;
  return i == 20 ? 1.30 : i == 30 ? 0.70 : 1.0;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of metric m over runs [a, b) (the mean of the middle two of
 * an even count). */
static double median_of_runs(const history *h, int m, size_t a, size_t b) {
  double v[MAXRUNS];
  size_t n = b - a;
  for (size_t i = 0; i < n; i++)
    v[i] = h->values[a + i][m];
  qsort(v, n, sizeof v[0], cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* One value of 1e300 in the history: the verdict is none and the baseline
 * stays where the runs are (a mean gave 7.14e298 next to a correct none). */
static void test_baseline_is_the_median(void **state) {
  (void)state;
  history h;
  make_history(&h, 30, 3, NULL);
  h.values[10][CYCLE_AVG] = 1e300;
  ps_verdict_list l;
  judge(&h, 0, &l);
  for (size_t i = 11; i < h.n; i++) {
    const ps_verdict *v = find(&l, CYCLE_AVG, h.names[i]);
    assert_non_null(v);
    assert_int_equal(v->verdict, PS_VERDICT_NONE);
    assert_true(v->baseline > base_value[CYCLE_AVG] * 0.95 &&
                v->baseline < base_value[CYCLE_AVG] * 1.05);
    assert_true(fabs(ps_verdict_change_pct(v->value, v->baseline)) < 10.0);
  }
  /* without a change: the runs before it in the window */
  const ps_verdict *v = find(&l, CYCLE_AVG, h.names[h.n - 1]);
  size_t lo = h.n > (size_t)cfg.verdicts.window_runs ? h.n - (size_t)cfg.verdicts.window_runs : 0;
  assert_float_equal(v->baseline, median_of_runs(&h, CYCLE_AVG, lo, h.n - 1), 1e-9);
  ps_verdict_list_free(&l);
}

static void test_single_outlier_is_not_a_change(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    history h;
    make_history(&h, 40, seed, outliers);
    ps_verdict_list l;
    judge(&h, 0, &l);
    for (size_t k = 0; k < l.n; k++)
      if (l.v[k].verdict != PS_VERDICT_NONE)
        fail_msg("seed %llu: %s %s: %s", (unsigned long long)seed, l.v[k].run,
                 l.v[k].metric, ps_verdict_kind_name(l.v[k].verdict));
    /* the outlier has its (none) point, and the next run's baseline is the
     * median of the 21 runs before it: the outlier is in it but does not
     * move it */
    const ps_verdict *v = find(&l, CYCLE_AVG, h.names[20]);
    assert_non_null(v);
    assert_float_equal(ps_verdict_change_pct(v->value, v->baseline), 30.0, 7.0);
    v = find(&l, CYCLE_AVG, h.names[21]);
    assert_float_equal(v->baseline, median_of_runs(&h, CYCLE_AVG, 0, 21), 1e-9);
    assert_int_equal(v->baseline_runs, 21);
    ps_verdict_list_free(&l);
  }
}

static double up_then_back(int m, size_t i) {
  return m == CYCLE_AVG && i >= 20 && i < 35 ? 1.10 : 1.0;
}

static void test_return_to_old_level_is_an_improvement(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    history h;
    make_history(&h, 50, seed, up_then_back);
    ps_verdict_list l;
    judge(&h, 0, &l);
    size_t reg[50], imp[50];
    assert_int_equal(runs_with(&h, &l, CYCLE_AVG, PS_VERDICT_REGRESSION, reg, 50), 1);
    assert_in_range(reg[0], 20, 21);
    assert_int_equal(runs_with(&h, &l, CYCLE_AVG, PS_VERDICT_IMPROVEMENT, imp, 50), 1);
    /* by the next run, though after a level of 15 runs two runs back can
     * be at best 1 in C(17, 2) = 136 splits, more than a family of 7
     * metrics lets through (Holm asks 0.05 / 7): at the smallest p-value
     * its test can give, a change passes */
    assert_in_range(imp[0], 35, 36);
    const ps_verdict *v = find(&l, CYCLE_AVG, h.names[imp[0]]);
    assert_string_equal(v->change_run, h.names[35]);
    /* against the raised level it left */
    assert_float_equal(v->baseline, base_value[CYCLE_AVG] * 1.1, base_value[CYCLE_AVG] * 0.03);
    assert_int_equal(v->baseline_runs, 15);
    ps_verdict_list_free(&l);
  }
}

/* Renders each verdict as its point, for comparing whole outcomes. */
static void render_all(const ps_verdict_list *l, capture *cap) {
  ps_emitter em = cap_emitter(cap, "verdicts");
  for (size_t k = 0; k < l->n; k++)
    assert_int_equal(ps_verdict_emit(&em, &l->v[k]), 0);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The points as sorted text lines, one string. */
static char *point_set(const capture *cap) {
  char **lines = malloc((cap->npoints + 1) * sizeof *lines);
  for (size_t i = 0; i < cap->npoints; i++)
    lines[i] = cap->points[i].text;
  qsort(lines, cap->npoints, sizeof *lines, cmp_str);
  ps_buf b;
  ps_buf_init(&b, 0);
  for (size_t i = 0; i < cap->npoints; i++)
    ps_buf_printf(&b, "%s\n", lines[i]);
  free(lines);
  return b.data ? b.data : strdup("");
}

static void test_failed_runs_are_in_no_baseline(void **state) {
  (void)state;
  history with, without;
  make_history(&with, 40, 8, step_up_at_20);
  make_history(&without, 40, 8, step_up_at_20);
  /* runs 10 and 25 failed (and 30 was interrupted) with absurd figures */
  size_t bad[] = {10, 25, 30};
  for (size_t k = 0; k < 3; k++) {
    with.runs[bad[k]].status = k == 2 ? PS_RUN_STATUS_INTERRUPTED : PS_RUN_STATUS_FAILED;
    for (int m = 0; m < NMETRICS; m++)
      with.values[bad[k]][m] *= 3.0;
  }
  /* the same history without them */
  size_t w = 0;
  for (size_t i = 0; i < 40; i++) {
    if (i == 10 || i == 25 || i == 30)
      continue;
    without.runs[w] = without.runs[i];
    w++;
  }
  without.n = w;
  ps_verdict_list a, b;
  judge(&with, 0, &a);
  judge(&without, 0, &b);
  for (size_t k = 0; k < 3; k++)
    for (int m = 0; m < NMETRICS; m++)
      assert_null(find(&a, m, with.names[bad[k]]));
  capture ca = {0}, cb = {0};
  render_all(&a, &ca);
  render_all(&b, &cb);
  char *sa = point_set(&ca), *sb = point_set(&cb);
  assert_string_equal(sa, sb);
  assert_true(ca.npoints > 200);
  free(sa);
  free(sb);
  cap_free(&ca);
  cap_free(&cb);
  ps_verdict_list_free(&a);
  ps_verdict_list_free(&b);
}

/* What the agent does as runs arrive: keep the series sorted, judge from
 * the new run's position, and write the points, each replacing the point
 * of the same run and metric (as InfluxDB does for the same series and
 * time). */
typedef struct arrival {
  ps_verdict_run runs[MAXRUNS];
  size_t n;
  capture cap;  /* every point written, in order */
  size_t rejudged; /* runs judged again because an older run arrived */
} arrival;

static void arrive(arrival *a, const ps_verdict_run *r) {
  size_t k = 0;
  while (k < a->n && ps_verdict_run_cmp(&a->runs[k], r) < 0)
    k++;
  if (k < a->n && strcmp(a->runs[k].name, r->name) == 0) {
    a->runs[k] = *r; /* the same run again */
  } else {
    memmove(&a->runs[k + 1], &a->runs[k], (a->n - k) * sizeof *a->runs);
    a->runs[k] = *r;
    a->n++;
  }
  a->rejudged += a->n - 1 - k;
  ps_verdict_series s = {"loadgen", "daily-perf", a->runs, a->n};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_verdict_judge(&cfg.verdicts, &s, k, &l), 0);
  render_all(&l, &a->cap);
  ps_verdict_list_free(&l);
}

/* The last point written per (run, metric): what the database holds. */
static char *stored(const capture *cap) {
  capture last = {0};
  for (size_t i = cap->npoints; i-- > 0;) {
    const cap_point *p = &cap->points[i];
    int seen = 0;
    for (size_t j = 0; j < last.npoints && !seen; j++)
      seen = strcmp(cap_tag(&last.points[j], "run"), cap_tag(p, "run")) == 0 &&
             strcmp(cap_tag(&last.points[j], "metric"), cap_tag(p, "metric")) == 0;
    if (seen)
      continue;
    if (last.npoints == last.cap) {
      last.cap = last.cap ? last.cap * 2 : 64;
      last.points = realloc(last.points, last.cap * sizeof *last.points);
    }
    last.points[last.npoints++] = *p;
  }
  char *s = point_set(&last);
  free(last.points); /* the points themselves belong to cap */
  return s;
}

static void test_same_points_whatever_the_order(void **state) {
  (void)state;
  history h;
  make_history(&h, 45, 12, up_then_back);
  h.runs[15].status = PS_RUN_STATUS_FAILED;
  ps_verdict_list all;
  judge(&h, 0, &all);
  capture once = {0};
  render_all(&all, &once);
  char *expect = point_set(&once);

  static arrival fwd, rev, shuf, twice;
  memset(&fwd, 0, sizeof fwd);
  memset(&rev, 0, sizeof rev);
  memset(&shuf, 0, sizeof shuf);
  memset(&twice, 0, sizeof twice);
  for (size_t i = 0; i < h.n; i++)
    arrive(&fwd, &h.runs[i]);
  for (size_t i = h.n; i-- > 0;)
    arrive(&rev, &h.runs[i]);
  /* name order, which is what a backfill reads: not time order */
  size_t order[MAXRUNS];
  for (size_t i = 0; i < h.n; i++)
    order[i] = i;
  for (size_t i = 0; i < h.n; i++)
    for (size_t j = i + 1; j < h.n; j++)
      if (strcmp(h.names[order[j]], h.names[order[i]]) < 0) {
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
  for (size_t i = 0; i < h.n; i++)
    arrive(&shuf, &h.runs[order[i]]);
  for (int round = 0; round < 2; round++)
    for (size_t i = 0; i < h.n; i++)
      arrive(&twice, &h.runs[i]);

  assert_int_equal(fwd.rejudged, 0);
  assert_true(rev.rejudged > 500); /* every arrival rewrote the later runs */
  assert_true(shuf.rejudged > 0);
  const arrival *all4[] = {&fwd, &rev, &shuf, &twice};
  for (size_t k = 0; k < 4; k++) {
    char *got = stored(&all4[k]->cap);
    assert_string_equal(got, expect);
    free(got);
  }
  /* and the outcome is not trivial */
  assert_non_null(cap_find_text(&once, PS_VERDICT_MEASUREMENT, "s=regression", NULL));
  assert_non_null(cap_find_text(&once, PS_VERDICT_MEASUREMENT, "s=improvement", NULL));
  free(expect);
  cap_free(&once);
  cap_free(&fwd.cap);
  cap_free(&rev.cap);
  cap_free(&shuf.cap);
  cap_free(&twice.cap);
  ps_verdict_list_free(&all);
}

static void test_point_shape(void **state) {
  (void)state;
  history h;
  make_history(&h, 30, 2, step_up_at_20);
  h.runs[21].backfill = 1;
  ps_verdict_list l;
  judge(&h, 0, &l);
  const ps_verdict *v = find(&l, CYCLE_AVG, h.names[21]);
  if (v->verdict != PS_VERDICT_REGRESSION)
    v = find(&l, CYCLE_AVG, h.names[20]);
  assert_int_equal(v->verdict, PS_VERDICT_REGRESSION);
  capture cap = {0};
  ps_emitter em = cap_emitter(&cap, "verdicts");
  assert_int_equal(ps_verdict_emit(&em, v), 0);
  const cap_point *p = &cap.points[0];
  assert_string_equal(p->measurement, "perfship_verdict");
  assert_int_equal(p->ntags, 4);
  assert_string_equal(cap_tag(p, "source"), "loadgen");
  assert_string_equal(cap_tag(p, "series"), "daily-perf");
  assert_string_equal(cap_tag(p, "metric"), "cycleAvgDuration");
  assert_string_equal(cap_tag(p, "run"), v->run);
  const char *order[] = {"verdict",       "value",         "baseline",     "change_pct",
                         "change_run",    "baseline_runs", "method",       "p_value",
                         "family_size",   "p_adjusted",    "revision",     "good_run",
                         "good_revision", "bad_run",       "bad_revision", "backfill"};
  assert_int_equal(p->nfields, 16);
  for (size_t i = 0; i < 16; i++)
    assert_string_equal(p->fields[i].key, order[i]);
  assert_string_equal(cap_field_of(p, "good_run")->s, h.names[19]);
  assert_string_equal(cap_field_of(p, "bad_revision")->s, h.revs[20]);
  assert_string_equal(cap_field_of(p, "verdict")->s, "regression");
  assert_string_equal(cap_field_of(p, "method")->s, "edivisive");
  assert_string_equal(cap_field_of(p, "change_run")->s, h.names[20]);
  assert_string_equal(cap_field_of(p, "revision")->s, v->revision);
  assert_int_equal(cap_int(p, "baseline_runs"), 20);
  double value = cap_float(p, "value"), baseline = cap_float(p, "baseline");
  assert_float_equal(cap_float(p, "change_pct"), (value - baseline) / baseline * 100.0, 1e-9);
  assert_true(cap_float(p, "p_value") <= 0.05);
  /* the run's family: the 7 metrics judged on it, and the p-value
   * adjusted for them (Holm: at least the p-value, at most 7 times it) */
  assert_int_equal(cap_int(p, "family_size"), 7);
  assert_true(cap_float(p, "p_adjusted") >= cap_float(p, "p_value"));
  assert_true(cap_float(p, "p_adjusted") <= 7.0 * cap_float(p, "p_value") + 1e-12);
  assert_true(cap_float(p, "p_adjusted") <= 0.05);
  assert_int_equal(cap_field_of(p, "backfill")->type, PS_F_BOOL);
  assert_int_equal(cap_field_of(p, "backfill")->b, v == find(&l, CYCLE_AVG, h.names[21]));
  assert_true(p->time_ns == v->time_ns);
  assert_true(p->time_ns == T0_NS + (v == find(&l, CYCLE_AVG, h.names[21]) ? 21 : 20) * DAY_NS);

  /* absent parts are left out: no change_pct on a baseline of 0, no
   * p_value when nothing was tested, no revision when unknown */
  ps_verdict z = *v;
  z.baseline = 0.0;
  z.p_value = NAN;
  z.p_adjusted = NAN;
  z.revision = NULL;
  assert_int_equal(ps_verdict_emit(&em, &z), 0);
  p = &cap.points[1];
  assert_null(cap_field_of(p, "change_pct"));
  assert_null(cap_field_of(p, "p_value"));
  assert_null(cap_field_of(p, "p_adjusted"));
  assert_null(cap_field_of(p, "revision"));
  assert_float_equal(cap_float(p, "baseline"), 0.0, 0);
  /* a none: the range written empty, so it replaces a regression's */
  z = *v;
  z.verdict = PS_VERDICT_NONE;
  assert_int_equal(ps_verdict_emit(&em, &z), 0);
  assert_string_equal(cap_field_of(&cap.points[2], "good_run")->s, "");
  assert_string_equal(cap_field_of(&cap.points[2], "bad_revision")->s, "");
  p = &cap.points[1];
  /* the emitter's back-pressure reaches the caller */
  cap.refuse_every = 1;
  assert_int_equal(ps_verdict_emit(&em, v), -EAGAIN);
  cap_free(&cap);
  ps_verdict_list_free(&l);
}

static void test_effect_helpers(void **state) {
  (void)state;
  assert_true(ps_verdict_beyond(105.0, 100.0, 5.0, PS_CHANGE_PERCENT));
  assert_false(ps_verdict_beyond(104.9, 100.0, 5.0, PS_CHANGE_PERCENT));
  assert_true(ps_verdict_beyond(-105.0, -100.0, 5.0, PS_CHANGE_PERCENT));
  assert_true(ps_verdict_beyond(90.0, 100.0, 10.0, PS_CHANGE_POINTS));
  assert_false(ps_verdict_beyond(99.0, 100.0, 2.0, PS_CHANGE_POINTS));
  assert_true(ps_verdict_beyond(0.1, 0.0, 50.0, PS_CHANGE_PERCENT));
  assert_false(ps_verdict_beyond(1.0, 1.0, 0.0, PS_CHANGE_PERCENT));
  assert_true(ps_verdict_beyond(1.0001, 1.0, 0.0, PS_CHANGE_PERCENT));
  assert_false(ps_verdict_beyond(NAN, 1.0, 0.0, PS_CHANGE_PERCENT));
  assert_int_equal(ps_verdict_direction(2, 1, PS_WORSE_HIGHER), PS_VERDICT_REGRESSION);
  assert_int_equal(ps_verdict_direction(2, 1, PS_WORSE_LOWER), PS_VERDICT_IMPROVEMENT);
  assert_int_equal(ps_verdict_direction(1, 2, PS_WORSE_LOWER), PS_VERDICT_REGRESSION);
  assert_int_equal(ps_verdict_direction(1, 1, PS_WORSE_LOWER), PS_VERDICT_NONE);
  assert_float_equal(ps_verdict_change_pct(27.8, 24.33), 14.262228, 1e-6);
  assert_float_equal(ps_verdict_change_pct(-1.5, -1.0), -50.0, 1e-12);
  assert_true(isnan(ps_verdict_change_pct(1.0, 0.0)));
}

static void test_bad_input(void **state) {
  (void)state;
  history h;
  make_history(&h, 10, 1, NULL);
  ps_verdict_run t = h.runs[3];
  h.runs[3] = h.runs[4];
  h.runs[4] = t;
  ps_verdict_series s = {"loadgen", "daily-perf", h.runs, h.n};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_verdict_judge(&cfg.verdicts, &s, 0, &l), -EINVAL);
  /* sorting repairs it; equal start times are ordered by name */
  h.runs[5].start_ns = h.runs[6].start_ns;
  ps_verdict_runs_sort(h.runs, h.n);
  for (size_t i = 1; i < h.n; i++)
    assert_true(ps_verdict_run_cmp(&h.runs[i - 1], &h.runs[i]) < 0);
  assert_int_equal(ps_verdict_judge(&cfg.verdicts, &s, 0, &l), 0);
  assert_int_equal(l.n, NMETRICS * 6);
  /* a disabled metric is not judged */
  cfg.verdicts.metrics[WALLET].enabled = 0;
  ps_verdict_list_free(&l);
  assert_int_equal(ps_verdict_judge(&cfg.verdicts, &s, 0, &l), 0);
  assert_int_equal(l.n, (NMETRICS - 1) * 6);
  cfg.verdicts.metrics[WALLET].enabled = 1;
  /* judging from beyond the end adds nothing */
  ps_verdict_list_free(&l);
  assert_int_equal(ps_verdict_judge(&cfg.verdicts, &s, h.n, &l), 0);
  assert_int_equal(l.n, 0);
  ps_verdict_list_free(&l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_step_up_is_reported_once),
      TEST(test_step_down_and_success_rate_in_points),
      TEST(test_stable_history_has_no_alarm),
      TEST(test_min_runs_and_window),
      TEST(test_single_outlier_is_not_a_change),
      TEST(test_baseline_is_the_median),
      TEST(test_return_to_old_level_is_an_improvement),
      TEST(test_failed_runs_are_in_no_baseline),
      TEST(test_same_points_whatever_the_order),
      TEST(test_point_shape),
      TEST(test_effect_helpers),
      TEST(test_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
