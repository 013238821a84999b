/*
 * test_candidate: a run judged against the current level of another series
 * (agent/verdict/candidate.c, docs/verdicts.md "Candidates"), on generated
 * nightly histories with a known noise: a candidate 12 % slower than the
 * level is a regression naming the good and bad revisions, one within the
 * noise is not, the level is the one after the nightly series' last change,
 * a level too new to know its noise gives nothing, and runs of one revision
 * are judged together.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/config.h"
#include "verdict/candidate.h"
#include "verdict/judge.h"
#include "verdict/verdict.h"

#include "aux_defaults.h"

#define NMAX 80
#define DAY_NS 86400000000000LL
#define T0_NS 1647216135581548000LL

typedef struct hist {
  size_t n;
  char names[NMAX][40];
  char revs[NMAX][16];
  double values[NMAX][16];
  ps_verdict_run runs[NMAX];
} hist;

static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static double noise(uint64_t *s) { return (double)(next_u64(s) >> 11) / 4503599627370496.0 - 1.0; }

/* Metric 0 (cycleAvgDuration, higher is worse, 5 %) around 24.33 with
 * uniform noise of +-3 %, times `level` from run `step_at` on; the other
 * metrics absent. */
static void nightly(hist *h, size_t n, uint64_t seed, size_t step_at, double level) {
  memset(h, 0, sizeof *h);
  h->n = n;
  uint64_t rng = seed * 7919 + 1;
  for (size_t i = 0; i < n; i++) {
    snprintf(h->revs[i], sizeof h->revs[i], "n%04u", (unsigned)(i % 10000));
    snprintf(h->names[i], sizeof h->names[i], "daily-perf-%s", h->revs[i]);
    for (size_t m = 0; m < cfg.verdicts.nmetrics; m++)
      h->values[i][m] = NAN;
    h->values[i][0] = 24.33 * (i >= step_at ? level : 1.0) * (1.0 + 0.03 * noise(&rng));
    h->runs[i] = (ps_verdict_run){h->names[i], h->revs[i], T0_NS + (int64_t)i * DAY_NS,
                                  PS_RUN_STATUS_SUCCESS, 0, h->values[i], NULL};
  }
}

/* A candidate run `k` of revision `rev`, after the nightly history. */
static void candidate(hist *c, size_t k, const char *rev, double value, size_t after) {
  if (c->n <= k)
    c->n = k + 1;
  snprintf(c->revs[k], sizeof c->revs[k], "%s", rev);
  snprintf(c->names[k], sizeof c->names[k], "manual-%s-%zu", rev, k);
  for (size_t m = 0; m < cfg.verdicts.nmetrics; m++)
    c->values[k][m] = NAN;
  c->values[k][0] = value;
  c->runs[k] = (ps_verdict_run){c->names[k], c->revs[k],
                                T0_NS + (int64_t)after * DAY_NS + (int64_t)k * 1000,
                                PS_RUN_STATUS_SUCCESS, 0, c->values[k], NULL};
}

static int judge(const hist *h, const hist *c, size_t from, ps_verdict_list *out) {
  ps_verdict_series ref = {"loadgen", "daily-perf", h->runs, h->n};
  ps_verdict_series cs = {"loadgen", "manual", c->runs, c->n};
  ps_verdict_list_init(out);
  return ps_verdict_candidate(&cfg.verdicts, &ref, &cs, from, out);
}

static void test_twelve_percent_slower_is_a_regression(void **state) {
  (void)state;
  for (uint64_t seed = 1; seed <= 30; seed++) {
    hist h, c;
    nightly(&h, 30, seed, 99, 1.0);
    memset(&c, 0, sizeof c);
    candidate(&c, 0, "pr1523", 24.33 * 1.12, 30);
    ps_verdict_list l;
    assert_int_equal(judge(&h, &c, 0, &l), 0);
    assert_int_equal(l.n, 1);
    const ps_verdict *v = &l.v[0];
    assert_int_equal(v->verdict, PS_VERDICT_REGRESSION);
    assert_int_equal(v->method, PS_METHOD_CANDIDATE);
    assert_string_equal(ps_verdict_method_name(v->method), "candidate");
    assert_string_equal(v->series, "manual");
    assert_string_equal(v->against, "daily-perf");
    assert_string_equal(v->run, c.names[0]);
    assert_int_equal(v->baseline_runs, 30);
    assert_float_equal(v->baseline, 24.33, 24.33 * 0.03);
    assert_true(v->p_value < 0.01);
    /* good: the newest nightly run of the level; bad: the candidate */
    assert_string_equal(v->good_run, h.names[29]);
    assert_string_equal(v->good_revision, "n0029");
    assert_string_equal(v->bad_run, c.names[0]);
    assert_string_equal(v->bad_revision, "pr1523");
    ps_verdict_list_free(&l);
  }
}

static void test_within_noise_is_not(void **state) {
  (void)state;
  const double within[] = {0.97, 1.0, 1.02, 1.03};
  for (uint64_t seed = 1; seed <= 30; seed++) {
    for (size_t k = 0; k < sizeof within / sizeof *within; k++) {
      hist h, c;
      nightly(&h, 30, seed, 99, 1.0);
      memset(&c, 0, sizeof c);
      candidate(&c, 0, "pr1", 24.33 * within[k], 30);
      ps_verdict_list l;
      assert_int_equal(judge(&h, &c, 0, &l), 0);
      assert_int_equal(l.n, 1);
      assert_int_equal(l.v[0].verdict, PS_VERDICT_NONE);
      assert_null(l.v[0].good_run);
      assert_string_equal(l.v[0].change_run, c.names[0]);
      ps_verdict_list_free(&l);
    }
  }
}

static void test_faster_is_an_improvement(void **state) {
  (void)state;
  hist h, c;
  nightly(&h, 20, 3, 99, 1.0);
  memset(&c, 0, sizeof c);
  candidate(&c, 0, "fast", 24.33 * 0.85, 20);
  ps_verdict_list l;
  assert_int_equal(judge(&h, &c, 0, &l), 0);
  assert_int_equal(l.n, 1);
  assert_int_equal(l.v[0].verdict, PS_VERDICT_IMPROVEMENT);
  ps_verdict_list_free(&l);
}

/* After the nightly series moved up 10 % (a change its own verdicts
 * reported), the level is the new one: a candidate at the new level is
 * none, one at the old level an improvement. */
static void test_level_after_the_nightly_change(void **state) {
  (void)state;
  hist h, c;
  nightly(&h, 40, 5, 20, 1.10);
  memset(&c, 0, sizeof c);
  candidate(&c, 0, "a", 24.33 * 1.10, 40);
  candidate(&c, 1, "b", 24.33, 40);
  ps_verdict_list l;
  assert_int_equal(judge(&h, &c, 0, &l), 0);
  assert_int_equal(l.n, 2);
  assert_int_equal(l.v[0].verdict, PS_VERDICT_NONE);
  assert_int_equal(l.v[0].baseline_runs, 20);
  assert_float_equal(l.v[0].baseline, 24.33 * 1.10, 24.33 * 0.04);
  assert_int_equal(l.v[1].verdict, PS_VERDICT_IMPROVEMENT);
  ps_verdict_list_free(&l);
}

/* Three days after a nightly change the new level has 3 runs: its noise is
 * not known, so nothing is said; a candidate that started before the
 * change is judged against the level it started at. */
static void test_new_level_and_time_order(void **state) {
  (void)state;
  hist h, c;
  nightly(&h, 23, 7, 20, 1.10);
  memset(&c, 0, sizeof c);
  candidate(&c, 0, "late", 24.33 * 1.12, 23);
  ps_verdict_list l;
  assert_int_equal(judge(&h, &c, 0, &l), 0);
  assert_int_equal(l.n, 0);
  ps_verdict_list_free(&l);

  memset(&c, 0, sizeof c);
  candidate(&c, 0, "early", 24.33 * 1.12, 18);
  assert_int_equal(judge(&h, &c, 0, &l), 0);
  assert_int_equal(l.n, 1);
  assert_int_equal(l.v[0].verdict, PS_VERDICT_REGRESSION);
  assert_int_equal(l.v[0].baseline_runs, 19); /* runs 0..18: 18 started with it */
  assert_string_equal(l.v[0].good_run, h.names[18]);
  ps_verdict_list_free(&l);

  /* no nightly run before it, or too few: no level */
  memset(&c, 0, sizeof c);
  candidate(&c, 0, "first", 30.0, 3);
  assert_int_equal(judge(&h, &c, 0, &l), 0);
  assert_int_equal(l.n, 0);
  ps_verdict_list_free(&l);
}

/* Runs of one revision are one sample: one run 6 % slower with noise of
 * +-3 % is not enough; three of them are. */
static void test_runs_of_one_revision_together(void **state) {
  (void)state;
  hist h, c;
  nightly(&h, 30, 11, 99, 1.0);
  memset(&c, 0, sizeof c);
  candidate(&c, 0, "pr9", 24.33 * 1.06, 30);
  candidate(&c, 1, "pr9", 24.33 * 1.065, 30);
  candidate(&c, 2, "pr9", 24.33 * 1.07, 30);
  ps_verdict_list l;
  assert_int_equal(judge(&h, &c, 0, &l), 0);
  assert_int_equal(l.n, 3);
  assert_int_equal(l.v[0].verdict, PS_VERDICT_NONE);
  assert_int_equal(l.v[2].verdict, PS_VERDICT_REGRESSION);
  assert_float_equal(l.v[2].value, 24.33 * 1.065, 1e-9);
  ps_verdict_list_free(&l);
  /* judging from 2 on gives the third verdict alone, the same */
  assert_int_equal(judge(&h, &c, 2, &l), 0);
  assert_int_equal(l.n, 1);
  assert_int_equal(l.v[0].verdict, PS_VERDICT_REGRESSION);
  ps_verdict_list_free(&l);
}

static void test_the_test_on_numbers(void **state) {
  (void)state;
  const ps_verdict_metric_cfg *mc = &cfg.verdicts.metrics[0];
  double x[] = {10, 10.1, 9.9, 10.2, 9.8, 10, 10.1, 9.9, 10, 30 /* a spoiled run */};
  double y1[] = {10.6}, y2[] = {11.0}, value, baseline, p;
  ps_verdict_kind k;
  assert_int_equal(ps_candidate_test(mc, x, 10, y1, 1, &k, &value, &baseline, &p), 0);
  assert_float_equal(baseline, 10.0, 1e-9); /* the median: the outlier does not move it */
  assert_float_equal(value, 10.6, 1e-9);
  assert_int_equal(k, PS_VERDICT_REGRESSION); /* 6 % and well past the noise */
  /* within the minimum effect, however tight the level */
  double y3[] = {10.4};
  assert_int_equal(ps_candidate_test(mc, x, 10, y3, 1, &k, &value, &baseline, &p), 0);
  assert_int_equal(k, PS_VERDICT_NONE);
  /* a noisy level: 10 % is within 3 standard errors */
  double noisy[] = {10, 12, 8, 11, 9, 10, 12.5, 7.5, 10, 10};
  assert_int_equal(ps_candidate_test(mc, noisy, 10, y2, 1, &k, &value, &baseline, &p), 0);
  assert_int_equal(k, PS_VERDICT_NONE);
  assert_true(p > 0.05);
  /* no spread: the minimum effect alone decides, p is absent */
  double flat[] = {10, 10, 10, 10, 10};
  assert_int_equal(ps_candidate_test(mc, flat, 5, y2, 1, &k, &value, &baseline, &p), 0);
  assert_int_equal(k, PS_VERDICT_REGRESSION);
  assert_true(isnan(p));
  assert_int_equal(ps_candidate_test(mc, flat, 0, y2, 1, &k, &value, &baseline, &p), -22);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_twelve_percent_slower_is_a_regression,
                                      defaults_setup, defaults_teardown),
      cmocka_unit_test_setup_teardown(test_within_noise_is_not, defaults_setup,
                                      defaults_teardown),
      cmocka_unit_test_setup_teardown(test_faster_is_an_improvement, defaults_setup,
                                      defaults_teardown),
      cmocka_unit_test_setup_teardown(test_level_after_the_nightly_change, defaults_setup,
                                      defaults_teardown),
      cmocka_unit_test_setup_teardown(test_new_level_and_time_order, defaults_setup,
                                      defaults_teardown),
      cmocka_unit_test_setup_teardown(test_runs_of_one_revision_together, defaults_setup,
                                      defaults_teardown),
      cmocka_unit_test_setup_teardown(test_the_test_on_numbers, defaults_setup,
                                      defaults_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
