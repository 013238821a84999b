/*
 * Unit tests of the figures the verdict stage picks out of passing points
 * (judging/verdicts_collect.c), for loadgen and DSS runs.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/figures.h"
#include "judging/verdicts_collect.h"

static const char *const METRICS[] = {"cycleAvgDuration", "cycleSuccessRate"};

static ps_point pt(const char *m, ps_tag *tags, size_t nt, ps_field *f, size_t nf, int64_t t) {
  ps_point p = {m, tags, nt, f, nf, t};
  return p;
}

static void test_collect_loadgen_and_dss(void **state) {
  (void)state;
  jd_verdicts_collect c;
  jd_verdicts_collect_init(&c, METRICS, 2);
  jd_dss_doc *doc = NULL;
  ps_tag rt[] = {{"run", "r1"}, {"test_type", "daily-perf"}, {"revision", "abc1234"}};
  ps_field rf[] = {ps_field_float("cycleAvgDuration", 24.5), ps_field_int("totalBlockCount", 9),
                   ps_field_float("cycleSuccessRate", 100.0)};
  ps_point p = pt("loadgen_run", rt, 3, rf, 3, 1700000000000000000LL);
  assert_int_equal(jd_verdicts_collect_point(&c, &p, &doc), JD_VERDICTS_COLLECT_NONE);
  ps_tag st[] = {{"run", "r1"}, {"stage", "2"}, {"task", "all"}};
  ps_field sf[] = {ps_field_float("avgDuration", 21.0)};
  p = pt("loadgen_stage_cycles", st, 3, sf, 1, 1);
  jd_verdicts_collect_point(&c, &p, &doc);
  ps_tag st2[] = {{"run", "r1"}, {"stage", "2"}, {"task", "vault"}}; /* not task=all */
  ps_field sf2[] = {ps_field_float("avgDuration", 99.0)};
  p = pt("loadgen_stage_cycles", st2, 3, sf2, 1, 1);
  jd_verdicts_collect_point(&c, &p, &doc);
  ps_tag bt[] = {{"run", "r1"}, {"stage", "2"}, {"summary", "onlyLive"}};
  ps_field bf[] = {ps_field_float("avgSwingsetTime", 0.2), ps_field_float("avgBlockDuration", 5.2)};
  p = pt("loadgen_stage_blocks", bt, 3, bf, 2, 1);
  jd_verdicts_collect_point(&c, &p, &doc);
  ps_tag gt[] = {{"run", "r1"}, {"stage", "2"}};
  ps_field gf[] = {ps_field_bool("loadgen", 1)};
  p = pt("loadgen_stage", gt, 2, gf, 1, 1);
  jd_verdicts_collect_point(&c, &p, &doc);
  jd_lg_run *r = jd_verdicts_collect_find_run(&c, "r1");
  assert_non_null(r);
  assert_string_equal(r->series, "daily-perf");
  assert_string_equal(r->revision, "abc1234");
  assert_true(r->start_ns == 1700000000000000000LL);
  assert_true(r->values[0] == 24.5 && r->values[1] == 100.0);
  assert_int_equal(r->nstages, 1);
  assert_int_equal(r->stages[0].stage, 2);
  assert_true(r->stages[0].loadgen);
  assert_true(r->stages[0].avg_duration == 21.0);
  assert_true(r->stages[0].avg_swingset_time == 0.2);

  /* DSS: arms in file order, variants by index, the marker ends the file */
  const char *arms[] = {"ref:1", "pr:2"};
  for (int a = 0; a < 2; a++)
    for (int v = 0; v < 3; v++) {
      ps_tag dt[] = {{"run", "cmp"}, {"test", "rid_isa"}, {"arm", arms[a]}};
      ps_field df[] = {ps_field_int("variantIndex", v),
                       ps_field_float("rps_total", 10.0 * (v + 1) * (a ? 0.8 : 1.0)),
                       ps_field_int("errors", a)};
      p = pt("dss_bench", dt, 3, df, 3, 5);
      assert_int_equal(jd_verdicts_collect_point(&c, &p, &doc), JD_VERDICTS_COLLECT_NONE);
    }
  ps_tag mt[] = {{"source", "dss_bench"}, {"run", "cmp"}, {"event", "end"}};
  ps_field mf[] = {ps_field_bool("backfill", 1)};
  p = pt("runs", mt, 3, mf, 1, 1795970018000000000LL);
  assert_int_equal(jd_verdicts_collect_point(&c, &p, &doc), JD_VERDICTS_COLLECT_DSS_ENDED);
  assert_non_null(doc);
  assert_true(doc->ended && doc->backfill);
  assert_int_equal(doc->ntests, 1);
  assert_int_equal(doc->tests[0].narms, 2);
  assert_int_equal(doc->tests[0].nvariants, 3);
  assert_string_equal(doc->tests[0].arms[0].label, "ref:1");
  assert_true(doc->tests[0].arms[1].rps_total[2] == 24.0);
  assert_true(isnan(doc->tests[0].arms[1].p95_ms[0]));
  /* a loadgen marker is not the end of a DSS file */
  ps_tag lt[] = {{"source", "loadgen"}, {"run", "r1"}};
  p = pt("runs", lt, 2, mf, 1, 1);
  assert_int_equal(jd_verdicts_collect_point(&c, &p, &doc), JD_VERDICTS_COLLECT_NONE);

  /* saved and read back */
  cJSON *j = jd_verdicts_collect_to_json(&c);
  jd_verdicts_collect d;
  jd_verdicts_collect_init(&d, METRICS, 2);
  jd_verdicts_collect_from_json(&d, j);
  cJSON_Delete(j);
  jd_lg_run *r2 = jd_verdicts_collect_find_run(&d, "r1");
  assert_non_null(r2);
  assert_true(r2->start_ns == 1700000000000000000LL);
  assert_int_equal(r2->nstages, 1);
  assert_true(r2->stages[0].avg_block_duration == 5.2);
  assert_non_null(d.docs);
  assert_int_equal(d.docs->tests[0].nvariants, 3);
  assert_true(d.docs->tests[0].arms[1].errors[1] == 1.0);
  assert_true(d.docs->time_ns == 1795970018000000000LL);
  jd_verdicts_collect_drop_run(&d, r2);
  assert_null(jd_verdicts_collect_find_run(&d, "r1"));
  jd_verdicts_collect_drop_dss(&d, d.docs);
  assert_null(d.docs);
  jd_verdicts_collect_free(&d);
  jd_verdicts_collect_free(&c);
}

/* The samples behind the stage figures: live blocks only, successful
 * cycles only, in time order whatever order they came in, a replayed
 * point once; the block gaps from consecutive beginAt (2 s and 3 s). */
static void test_collect_stage_samples(void **state) {
  (void)state;
  jd_verdicts_collect c;
  jd_verdicts_collect_init(&c, METRICS, 2);
  jd_dss_doc *doc = NULL;
  const int64_t s = 1000000000LL;
  struct {
    const char *live;
    double swingset;
    int64_t t;
  } blocks[] = {
      {"true", 0.3, 12 * s}, {"true", 0.1, 7 * s},  {"false", 9.0, 1 * s},
      {"true", 0.2, 9 * s},  {"true", 0.3, 12 * s}, /* replayed */
  };
  for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
    ps_tag bt[] = {{"run", "r1"}, {"stage", "1"}, {"live", blocks[i].live}};
    ps_field bf[] = {ps_field_float("swingsetTime", blocks[i].swingset)};
    ps_point p = pt("loadgen_block", bt, 3, bf, 1, blocks[i].t);
    assert_int_equal(jd_verdicts_collect_point(&c, &p, &doc), JD_VERDICTS_COLLECT_NONE);
  }
  struct {
    int ok;
    double duration;
    int64_t t;
  } cycles[] = {{1, 20.0, 30 * s}, {0, 99.0, 10 * s}, {1, 18.0, 20 * s}};
  for (size_t i = 0; i < sizeof cycles / sizeof cycles[0]; i++) {
    ps_tag ct[] = {{"run", "r1"}, {"stage", "1"}, {"task", "vault"}};
    ps_field cf[] = {ps_field_bool("success", cycles[i].ok),
                     ps_field_float("duration", cycles[i].duration)};
    ps_point p = pt("loadgen_cycle", ct, 3, cf, 2, cycles[i].t);
    jd_verdicts_collect_point(&c, &p, &doc);
  }
  /* a stage with one live block and no cycle: no array for its cycles */
  ps_tag bt2[] = {{"run", "r1"}, {"stage", "2"}, {"live", "true"}};
  ps_field bf2[] = {ps_field_float("swingsetTime", 0.5)};
  ps_point p2 = pt("loadgen_block", bt2, 3, bf2, 1, 40 * s);
  jd_verdicts_collect_point(&c, &p2, &doc);
  jd_lg_run *r = jd_verdicts_collect_find_run(&c, "r1");
  assert_non_null(r);
  ps_stage_samples *v;
  size_t n;
  double *store;
  assert_int_equal(jd_verdicts_collect_stage_samples(r, &v, &n, &store), 0);
  assert_int_equal(n, 2);
  assert_int_equal(v[1].stage, 2);
  assert_int_equal(v[1].nswingset, 1);
  assert_int_equal(v[1].ngaps, 0);
  assert_int_equal(v[1].ncycles, 0);
  assert_int_equal(v[0].stage, 1);
  assert_int_equal(v[0].nswingset, 3);
  assert_true(v[0].swingset_time[0] == 0.1 && v[0].swingset_time[1] == 0.2 &&
              v[0].swingset_time[2] == 0.3);
  assert_int_equal(v[0].ngaps, 2);
  assert_true(v[0].block_gap[0] == 2.0 && v[0].block_gap[1] == 3.0);
  assert_int_equal(v[0].ncycles, 2);
  assert_true(v[0].cycle_duration[0] == 18.0 && v[0].cycle_duration[1] == 20.0);
  free(v);
  free(store);
  jd_verdicts_collect_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_collect_loadgen_and_dss),
      cmocka_unit_test(test_collect_stage_samples),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
