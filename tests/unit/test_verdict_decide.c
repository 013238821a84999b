/*
 * test_verdict_decide: where a regression is decided (agent/verdict/
 * decide.c, docs/verdicts.md "Triage", "Candidates"): a series' newest runs
 * judged from its ledger under the triage decisions. On a generated nightly
 * history that gets 20 % slower at run STEP: with no decision the call is
 * the judge's verdicts; an excluded run shows "excluded" and leaves the
 * window; a baseline decision starts the series anew, its first runs shown
 * as "baseline"; only this host's runs get verdicts; a candidate series is
 * also judged against its reference series' level.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/decide.h"
#include "verdict/judge.h"
#include "verdict/ledger.h"
#include "verdict/triage.h"

#include "aux_defaults.h"

#define N 14
#define STEP 9
#define DAY_NS 86400000000000LL
#define T0_NS 1647216135581548000LL

static ps_ledger ledger;
static ps_triage_set triage;

static int setup(void **state) {
  defaults_setup(state);
  const char *names[64];
  for (size_t m = 0; m < cfg.verdicts.nmetrics; m++)
    names[m] = cfg.verdicts.metrics[m].name;
  ps_triage_set_init(&triage);
  return ps_ledger_init(&ledger, names, cfg.verdicts.nmetrics);
}

static int teardown(void **state) {
  ps_ledger_free(&ledger);
  ps_triage_set_free(&triage);
  return defaults_teardown(state);
}

/* `n` nightly runs of `series` on `host`: metric 0 around 24.33 (+-1 %),
 * 20 % higher from run STEP on; the other metrics absent. */
static ps_ledger_series *nightly(const char *series, const char *host, size_t n, int64_t t0) {
  ps_ledger_series *s = ps_ledger_series_get(&ledger, "loadgen", series, host, 1);
  assert_non_null(s);
  static const double wiggle[] = {0.004, -0.006, 0.002, -0.001, 0.007, -0.004, 0.0};
  for (size_t i = 0; i < n; i++) {
    double v[64];
    for (size_t m = 0; m < cfg.verdicts.nmetrics; m++)
      v[m] = NAN;
    v[0] = 24.33 * (i >= STEP ? 1.2 : 1.0) * (1.0 + wiggle[i % 7]);
    char name[64], rev[24];
    snprintf(rev, sizeof rev, "r%02zu", i);
    snprintf(name, sizeof name, "%s-%02zu", series, i);
    assert_true(ps_ledger_put(&ledger, s, host, name, rev, t0 + (int64_t)i * DAY_NS,
                              PS_RUN_STATUS_SUCCESS, 0, v) >= 0);
  }
  return s;
}

static void decide(const ps_ledger_series *s, const ps_ledger_series *against,
                   ps_verdict_list *out) {
  ps_verdict_case c = {&cfg.verdicts, s, 0, &triage, against, "h1"};
  ps_verdict_list_init(out);
  assert_int_equal(ps_verdict_decide_series(&c, out), 0);
}

static void decision(const char *id, ps_triage_action a, const char *run) {
  ps_triage_decision d = {0};
  d.id = (char *)id;
  d.action = a;
  d.run = (char *)run;
  d.who = "test";
  d.reason = "test";
  assert_int_equal(ps_triage_add(&triage, &d), 0);
}

/* The verdict of `run` for metric 0 and `method`, or NULL. */
static const ps_verdict *of(const ps_verdict_list *l, const char *run, ps_verdict_method m) {
  for (size_t i = 0; i < l->n; i++)
    if (!strcmp(l->v[i].run, run) && !strcmp(l->v[i].metric, cfg.verdicts.metrics[0].name) &&
        l->v[i].method == m)
      return &l->v[i];
  return NULL;
}

static void test_no_decision_is_the_judge(void **state) {
  (void)state;
  ps_ledger_series *s = nightly("daily", "h1", N, T0_NS);
  ps_verdict_list got, want;
  decide(s, NULL, &got);
  ps_verdict_run view[N];
  ps_ledger_view(s, view);
  ps_verdict_series vs = {s->source, s->series, view, s->nruns};
  ps_verdict_list_init(&want);
  assert_int_equal(ps_verdict_judge(&cfg.verdicts, &vs, 0, &want), 0);
  assert_int_equal(got.n, want.n);
  for (size_t i = 0; i < got.n; i++) {
    assert_string_equal(got.v[i].run, want.v[i].run);
    assert_int_equal(got.v[i].verdict, want.v[i].verdict);
  }
  /* the step is told once it is confirmed, naming the run it began at */
  const ps_verdict *v = of(&got, "daily-10", PS_METHOD_EDIVISIVE);
  assert_non_null(v);
  assert_int_equal(v->verdict, PS_VERDICT_REGRESSION);
  assert_string_equal(v->change_run, "daily-09");
  ps_verdict_list_free(&got);
  ps_verdict_list_free(&want);
}

static void test_excluded_run(void **state) {
  (void)state;
  ps_ledger_series *s = nightly("daily", "h1", N, T0_NS);
  decision("t1", PS_TRIAGE_EXCLUDE, "daily-09");
  ps_verdict_list l;
  decide(s, NULL, &l);
  const ps_verdict *v = of(&l, "daily-09", PS_METHOD_EDIVISIVE);
  assert_non_null(v);
  assert_int_equal(v->verdict, PS_VERDICT_EXCLUDED);
  assert_string_equal(v->change_run, "daily-09");
  size_t n = 0;
  for (size_t i = 0; i < l.n; i++)
    n += !strcmp(l.v[i].run, "daily-09");
  assert_int_equal(n, 1); /* only what the decision says of it */
  /* the step is still seen, beginning at the next run */
  int seen = 0;
  for (size_t i = 0; i < l.n; i++)
    seen |= l.v[i].verdict == PS_VERDICT_REGRESSION && !strcmp(l.v[i].change_run, "daily-10");
  assert_true(seen);
  ps_verdict_list_free(&l);
}

static void test_baseline_starts_the_series_anew(void **state) {
  (void)state;
  ps_ledger_series *s = nightly("daily", "h1", N, T0_NS);
  decision("t2", PS_TRIAGE_BASELINE, "daily-09");
  ps_verdict_list l;
  decide(s, NULL, &l);
  const ps_verdict *v = of(&l, "daily-09", PS_METHOD_EDIVISIVE);
  assert_non_null(v);
  assert_int_equal(v->verdict, PS_VERDICT_BASELINE);
  for (size_t i = STEP + 1; i < N; i++) {
    char run[32];
    snprintf(run, sizeof run, "daily-%02zu", i);
    v = of(&l, run, PS_METHOD_EDIVISIVE);
    assert_non_null(v);
    assert_int_not_equal(v->verdict, PS_VERDICT_REGRESSION); /* the new level is the level */
    if (v->verdict == PS_VERDICT_BASELINE)
      assert_string_equal(v->change_run, "daily-09");
  }
  /* the runs before it keep what they were told */
  v = of(&l, "daily-08", PS_METHOD_EDIVISIVE);
  assert_non_null(v);
  assert_int_not_equal(v->verdict, PS_VERDICT_BASELINE);
  ps_verdict_list_free(&l);
}

static void test_only_this_hosts_runs(void **state) {
  (void)state;
  /* verdicts.series_by = "test_type": one series of every host's runs */
  ps_ledger_series *s = ps_ledger_series_get(&ledger, "loadgen", "daily", "", 1);
  nightly("daily", "", 0, T0_NS);
  for (size_t i = 0; i < N; i++) {
    double v[64];
    for (size_t m = 0; m < cfg.verdicts.nmetrics; m++)
      v[m] = NAN;
    v[0] = 24.33 * (1.0 + 0.002 * (double)(i % 3));
    char name[32];
    snprintf(name, sizeof name, "run-%02zu", i);
    assert_true(ps_ledger_put(&ledger, s, i % 2 ? "h2" : "h1", name, "r",
                              T0_NS + (int64_t)i * DAY_NS, PS_RUN_STATUS_SUCCESS, 0, v) >= 0);
  }
  ps_verdict_list l;
  decide(s, NULL, &l);
  assert_true(l.n > 0);
  for (size_t i = 0; i < l.n; i++)
    assert_string_equal(l.v[i].host, "h1");
  ps_verdict_list_free(&l);
}

static void test_candidate_against_its_reference(void **state) {
  (void)state;
  ps_ledger_series *ref = nightly("nightly", "h1", STEP, T0_NS);
  ps_ledger_series *cand = nightly("manual", "h1", STEP + 2, T0_NS + DAY_NS / 2);
  ps_verdict_list l;
  decide(cand, ref, &l);
  const ps_verdict *v = of(&l, "manual-10", PS_METHOD_CANDIDATE);
  assert_non_null(v);
  assert_int_equal(v->verdict, PS_VERDICT_REGRESSION);
  assert_string_equal(v->against, "nightly");
  ps_verdict_list_free(&l);
  /* a reference run kept out is in no level: with all of them out, none */
  for (size_t i = 0; i < STEP; i++) {
    char id[32], run[32];
    snprintf(id, sizeof id, "x%zu", i);
    snprintf(run, sizeof run, "nightly-%02zu", i);
    decision(id, PS_TRIAGE_EXCLUDE, run);
  }
  decide(cand, ref, &l);
  assert_null(of(&l, "manual-10", PS_METHOD_CANDIDATE));
  ps_verdict_list_free(&l);
}

/* A benchmarker series: each run kept its steps; the newest went Unstable
 * at 10 users, which every run before completed, and never got stable at
 * 12, which none of them ran (docs/verdicts.md "Benchmarker: across
 * releases"). Its verdicts say so, naming the release that held the load;
 * the others say nothing, and the steps survive the state file. */
static void test_step_note(void **state) {
  (void)state;
  ps_ledger_series *s = nightly("bm", "h1", N, T0_NS);
  ps_ledger_step held[] = {{2, PS_STEP_COMPLETED}, {10, PS_STEP_COMPLETED}};
  ps_ledger_step lost[] = {
      {2, PS_STEP_COMPLETED}, {10, PS_STEP_UNSTABLE}, {12, PS_STEP_NOT_STABLE}};
  for (size_t i = 0; i + 1 < N; i++)
    assert_int_equal(ps_ledger_set_steps(&s->runs[i], held, 2), 0);
  assert_int_equal(ps_ledger_set_steps(&s->runs[N - 1], lost, 3), 0);
  ps_verdict_list got;
  decide(s, NULL, &got);
  const ps_verdict *newest = of(&got, "bm-13", PS_METHOD_EDIVISIVE);
  const ps_verdict *before = of(&got, "bm-12", PS_METHOD_EDIVISIVE);
  assert_non_null(newest);
  assert_non_null(before);
  assert_true(newest->has_note && before->has_note);
  assert_string_equal(newest->note, "step at 10 users went Unstable; r12 was stable there");
  assert_string_equal(before->note, "");
  ps_verdict_list_free(&got);
  /* the run before it kept out (unstable at 10 itself): the one before
   * that is the predecessor */
  assert_int_equal(ps_ledger_set_steps(&s->runs[N - 2], lost, 2), 0);
  decision("x", PS_TRIAGE_EXCLUDE, "bm-12");
  decide(s, NULL, &got);
  assert_string_equal(of(&got, "bm-13", PS_METHOD_EDIVISIVE)->note,
                      "step at 10 users went Unstable; r11 was stable there");
  /* and the excluded run itself says nothing, a note written as "" */
  const ps_verdict *excluded = of(&got, "bm-12", PS_METHOD_EDIVISIVE);
  assert_int_equal(excluded->verdict, PS_VERDICT_EXCLUDED);
  assert_true(excluded->has_note);
  assert_string_equal(excluded->note, "");
  ps_verdict_list_free(&got);
  /* the same release benchmarked again: the report is named, not itself */
  free(s->runs[N - 2].revision);
  s->runs[N - 2].revision = NULL;
  assert_int_equal(ps_ledger_set_steps(&s->runs[N - 2], held, 2), 0);
  ps_triage_set_free(&triage);
  ps_triage_set_init(&triage);
  decide(s, NULL, &got);
  assert_string_equal(of(&got, "bm-13", PS_METHOD_EDIVISIVE)->note,
                      "step at 10 users went Unstable; the previous report, bm-12, was stable "
                      "there");
  ps_verdict_list_free(&got);
  /* saved and read back */
  cJSON *json = ps_ledger_to_json(&ledger);
  ps_ledger back;
  const char *names[64];
  for (size_t m = 0; m < cfg.verdicts.nmetrics; m++)
    names[m] = cfg.verdicts.metrics[m].name;
  assert_int_equal(ps_ledger_init(&back, names, cfg.verdicts.nmetrics), 0);
  assert_int_equal(ps_ledger_from_json(&back, json, "h1", "h1"), 0);
  const ps_ledger_series *bs = ps_ledger_series_get(&back, "loadgen", "bm", "h1", 0);
  assert_non_null(bs);
  assert_int_equal(bs->runs[N - 1].nsteps, 3);
  assert_true(bs->runs[N - 1].steps[1].load == 10);
  assert_int_equal(bs->runs[N - 1].steps[1].end, PS_STEP_UNSTABLE);
  assert_int_equal(bs->runs[N - 1].steps[2].end, PS_STEP_NOT_STABLE);
  ps_ledger_free(&back);
  cJSON_Delete(json);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_no_decision_is_the_judge, setup, teardown),
      cmocka_unit_test_setup_teardown(test_excluded_run, setup, teardown),
      cmocka_unit_test_setup_teardown(test_baseline_starts_the_series_anew, setup, teardown),
      cmocka_unit_test_setup_teardown(test_only_this_hosts_runs, setup, teardown),
      cmocka_unit_test_setup_teardown(test_candidate_against_its_reference, setup, teardown),
      cmocka_unit_test_setup_teardown(test_step_note, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
