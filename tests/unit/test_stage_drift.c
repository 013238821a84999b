/*
 * test_stage_drift: a loadgen run's stages against its first loadgen stage
 * (agent/verdict/stage_drift.c). The figures come from the bundled
 * successful run's perf-finish line, read here with cJSON the way
 * docs/schema.md maps them (loadgen_stage_cycles task=all avgDuration,
 * loadgen_stage_blocks summary=onlyLive avgSwingsetTime and
 * avgBlockDuration); docs/verdicts.md says that run's swingset time drifts
 * about +18 % from stage 1 to stage 4 and is reported.
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
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/config.h"
#include "verdict/stage_drift.h"

#include "capture.h"

#define RUN "daily-perf-9eb37164f6f7"

#include "aux_defaults.h"

static double number_at(const cJSON *o, const char *a, const char *b, const char *c) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
  x = x ? cJSON_GetObjectItemCaseSensitive(x, b) : NULL;
  x = x ? cJSON_GetObjectItemCaseSensitive(x, c) : NULL;
  return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* The stages of the fixture run, from the last line of its perf.jsonl. */
static size_t fixture_stages(ps_stage_figures *out, size_t cap) {
  size_t len;
  char *text = cap_slurp(PS_TEST_DATA "/loadgen/synth/" RUN "/perf.jsonl", &len);
  while (len && text[len - 1] == '\n')
    text[--len] = '\0';
  char *last = strrchr(text, '\n');
  cJSON *finish = cJSON_Parse(last ? last + 1 : text);
  assert_non_null(finish);
  const cJSON *stages = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(finish, "stats"), "stages");
  size_t n = 0;
  const cJSON *st;
  cJSON_ArrayForEach(st, stages) {
    assert_true(n < cap);
    const cJSON *conf = cJSON_GetObjectItemCaseSensitive(st, "stageConfig");
    const cJSON *chain_only = cJSON_GetObjectItemCaseSensitive(conf, "chainOnly");
    const cJSON *dur = cJSON_GetObjectItemCaseSensitive(conf, "durationConfig");
    ps_stage_figures *f = &out[n++];
    f->stage = cJSON_GetObjectItemCaseSensitive(st, "stageIndex")->valueint;
    f->loadgen = !cJSON_IsTrue(chain_only) && cJSON_IsNumber(dur) && dur->valuedouble != 0;
    f->avg_duration = number_at(st, "cyclesSummaries", "all", "avgDuration");
    f->avg_swingset_time = number_at(st, "blocksSummaries", "onlyLive", "avgSwingsetTime");
    f->avg_block_duration = number_at(st, "blocksSummaries", "onlyLive", "avgBlockDuration");
  }
  cJSON_Delete(finish);
  free(text);
  return n;
}

static const ps_verdict *find(const ps_verdict_list *l, const char *metric, int stage) {
  for (size_t k = 0; k < l->n; k++)
    if (strcmp(l->v[k].metric, metric) == 0 && l->v[k].stage == stage)
      return &l->v[k];
  return NULL;
}

static const ps_verdict_run fixture_run = {
    RUN, "9eb37164f6f7", 1647216135581548000LL, PS_RUN_STATUS_SUCCESS, 1, NULL, NULL};

static void test_fixture_run_drifts_in_swingset_time(void **state) {
  (void)state;
  ps_stage_figures st[16];
  size_t n = fixture_stages(st, 16);
  assert_int_equal(n, 6); /* setup stage 0, loadgen stages 1-4, restart stage 5 */
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(
      ps_stage_drift(&cfg.verdicts, "loadgen", "daily-perf", &fixture_run, st, n, NULL, 0, &l), 0);
  /* stages 2, 3 and 4 against stage 1, three figures each; stage 0 (setup
   * only) and 5 (chain only) are not loadgen stages */
  assert_int_equal(l.n, 9);
  assert_null(find(&l, "stage_avgSwingsetTime", 5));
  assert_null(find(&l, "stage_avgSwingsetTime", 1));
  const ps_verdict *v = find(&l, "stage_avgSwingsetTime", 4);
  assert_int_equal(v->verdict, PS_VERDICT_REGRESSION);
  double drift = ps_verdict_change_pct(v->value, v->baseline);
  assert_in_range((int)drift, 17, 19); /* about +18 % */
  assert_float_equal(v->baseline, st[1].avg_swingset_time, 0);
  /* every stage against the first, by the documented threshold (10 %) */
  for (size_t k = 0; k < l.n; k++) {
    double pct = ps_verdict_change_pct(l.v[k].value, l.v[k].baseline);
    ps_verdict_kind want = pct >= 10.0    ? PS_VERDICT_REGRESSION
                           : pct <= -10.0 ? PS_VERDICT_IMPROVEMENT
                                          : PS_VERDICT_NONE;
    assert_int_equal(l.v[k].verdict, want);
    assert_int_equal(l.v[k].method, PS_METHOD_STAGE_DRIFT);
  }
  /* cycles and block time stay within it in this run */
  assert_int_equal(find(&l, "stage_avgDuration", 4)->verdict, PS_VERDICT_NONE);
  assert_int_equal(find(&l, "stage_avgBlockDuration", 4)->verdict, PS_VERDICT_NONE);
  assert_int_equal(find(&l, "stage_avgSwingsetTime", 2)->verdict, PS_VERDICT_NONE);

  /* the point: a stage tag, no p_value or baseline_runs */
  capture cap = {0};
  ps_emitter em = cap_emitter(&cap, RUN);
  assert_int_equal(ps_verdict_emit(&em, v), 0);
  const cap_point *p = &cap.points[0];
  assert_string_equal(cap_tag(p, "stage"), "4");
  assert_string_equal(cap_tag(p, "metric"), "stage_avgSwingsetTime");
  assert_string_equal(cap_tag(p, "run"), RUN);
  assert_string_equal(cap_field_of(p, "method")->s, "stage_drift");
  assert_string_equal(cap_field_of(p, "change_run")->s, RUN);
  assert_string_equal(cap_field_of(p, "revision")->s, "9eb37164f6f7");
  assert_true(cap_field_of(p, "backfill")->b);
  assert_null(cap_field_of(p, "p_value"));
  assert_null(cap_field_of(p, "baseline_runs"));
  assert_true(p->time_ns == fixture_run.start_ns);
  cap_free(&cap);
  ps_verdict_list_free(&l);

  /* with a threshold of 20 %, nothing in this run is reported */
  cfg.verdicts.stage_drift_pct = 20.0;
  ps_verdict_list_init(&l);
  assert_int_equal(
      ps_stage_drift(&cfg.verdicts, "loadgen", "daily-perf", &fixture_run, st, n, NULL, 0, &l), 0);
  for (size_t k = 0; k < l.n; k++)
    assert_int_equal(l.v[k].verdict, PS_VERDICT_NONE);
  ps_verdict_list_free(&l);
}

static void test_order_gaps_and_status(void **state) {
  (void)state;
  /* stages in any order; the first loadgen stage is the lowest index */
  ps_stage_figures st[] = {
      {3, 1, 12.0, NAN, 5.0},
      {1, 1, 10.0, 0.0, 5.0},
      {0, 0, NAN, 0.5, 5.0},
      {2, 1, 8.9, 0.2, NAN},
  };
  ps_verdict_run run = {"manual-7102939", NULL, 1, PS_RUN_STATUS_SUCCESS, 0, NULL, NULL};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_stage_drift(&cfg.verdicts, "loadgen", "manual", &run, st, 4, NULL, 0, &l), 0);
  /* stage 2: duration -11 % (improvement), swingset against a 0 baseline
   * (none, no change_pct); stage 3: duration +20 % (regression),
   * block duration unchanged; absent figures give no verdict */
  assert_int_equal(l.n, 4);
  assert_int_equal(l.v[0].stage, 2);
  assert_string_equal(l.v[0].metric, "stage_avgDuration");
  assert_int_equal(l.v[0].verdict, PS_VERDICT_IMPROVEMENT);
  assert_string_equal(l.v[1].metric, "stage_avgSwingsetTime");
  assert_int_equal(l.v[1].verdict, PS_VERDICT_NONE);
  assert_true(isnan(ps_verdict_change_pct(l.v[1].value, l.v[1].baseline)));
  assert_int_equal(l.v[2].stage, 3);
  assert_int_equal(l.v[2].verdict, PS_VERDICT_REGRESSION);
  assert_string_equal(l.v[3].metric, "stage_avgBlockDuration");
  assert_int_equal(l.v[3].verdict, PS_VERDICT_NONE);
  ps_verdict_list_free(&l);

  /* running, failed, interrupted, stalled: nothing */
  const ps_run_status others[] = {PS_RUN_STATUS_NONE, PS_RUN_STATUS_FAILED,
                                  PS_RUN_STATUS_INTERRUPTED, PS_RUN_STATUS_STALLED};
  for (size_t s = 0; s < 4; s++) {
    run.status = others[s];
    ps_verdict_list_init(&l);
    assert_int_equal(ps_stage_drift(&cfg.verdicts, "loadgen", "manual", &run, st, 4, NULL, 0, &l),
                     0);
    assert_int_equal(l.n, 0);
    ps_verdict_list_free(&l);
  }
  /* a run with one loadgen stage has nothing to compare */
  run.status = PS_RUN_STATUS_SUCCESS;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_stage_drift(&cfg.verdicts, "loadgen", "manual", &run, st + 1, 2, NULL, 0, &l),
                   0);
  assert_int_equal(l.n, 0);
  ps_verdict_list_free(&l);
}

/* The samples decide whether a change beyond the threshold stands. Cycle
 * durations 1..9 s in stage 1 and 1.3 times them in stage 2: the figure
 * rose 30 %, but batch means (3 of 3, R 5 and 6.5, variances 3 and 5.07)
 * give log variances 0.12 each, t = ln 1.3 / sqrt 0.24, df 4, and p =
 * 1 - 3/2 u (1 - u^2 / 3) with u = t / sqrt(4 + t^2): 0.62, none. The
 * swingset time rose 30 % too, from samples without spread: p 0, a
 * regression. The block gaps of stage 2 are one too few for 2 batches:
 * none, no p-value. A stage without samples is judged by the threshold
 * alone, without a p-value. Stages 2 and 3 are judged: a stage family of
 * 2 x 9 tests, so p 0.62 is 1 adjusted and p 0 stays 0. */
static void test_samples_decide(void **state) {
  (void)state;
  ps_stage_figures st[] = {
      {1, 1, 5.0, 0.10, 5.0},
      {2, 1, 6.5, 0.13, 6.0},
      {3, 1, 6.5, 0.13, 5.0},
  };
  double c1[] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, c2[9];
  for (int i = 0; i < 9; i++)
    c2[i] = 1.3 * c1[i];
  double s1[] = {0.10, 0.10, 0.10, 0.10}, s2[] = {0.13, 0.13, 0.13, 0.13};
  double g1[] = {5, 5, 5}, g2[] = {6};
  ps_stage_samples sm[] = {
      {1, s1, 4, g1, 3, c1, 9},
      {2, s2, 4, g2, 1, c2, 9},
  };
  ps_verdict_run run = {"manual-1", NULL, 1, PS_RUN_STATUS_SUCCESS, 0, NULL, NULL};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_stage_drift(&cfg.verdicts, "loadgen", "manual", &run, st, 3, sm, 2, &l), 0);
  assert_int_equal(l.n, 6);
  double t = log(1.3) / sqrt(0.24), u = t / sqrt(4 + t * t);
  assert_string_equal(l.v[0].metric, "stage_avgDuration");
  assert_int_equal(l.v[0].verdict, PS_VERDICT_NONE);
  assert_float_equal(l.v[0].p_value, 1 - 1.5 * u * (1 - u * u / 3), 1e-12);
  assert_float_equal(l.v[0].p_value, 0.62066, 1e-5);
  /* two loadgen stages judged: a family of 18 tests */
  assert_int_equal(l.v[0].family_size, 18);
  assert_float_equal(l.v[0].p_adjusted, 1.0, 0);
  assert_float_equal(l.v[1].p_adjusted, 0.0, 0);
  assert_int_equal(l.v[3].family_size, 18);
  assert_true(isnan(l.v[3].p_adjusted));
  assert_string_equal(l.v[1].metric, "stage_avgSwingsetTime");
  assert_int_equal(l.v[1].verdict, PS_VERDICT_REGRESSION);
  assert_float_equal(l.v[1].p_value, 0.0, 0);
  assert_string_equal(l.v[2].metric, "stage_avgBlockDuration");
  assert_int_equal(l.v[2].verdict, PS_VERDICT_NONE);
  assert_true(isnan(l.v[2].p_value));
  /* stage 3 has no samples: the threshold alone */
  assert_int_equal(l.v[3].stage, 3);
  assert_int_equal(l.v[3].verdict, PS_VERDICT_REGRESSION);
  assert_true(isnan(l.v[3].p_value));
  ps_verdict_list_free(&l);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, defaults_setup, defaults_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_fixture_run_drifts_in_swingset_time),
      TEST(test_order_gaps_and_status),
      TEST(test_samples_decide),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
