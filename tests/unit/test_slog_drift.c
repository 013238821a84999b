/*
 * test_slog_drift: the slog's stage drift (agent/verdict/slog_drift.c):
 * BOYD share in points, the busiest vats' delivery seconds per cycle
 * against the first loadgen stage and against the rest of the stage, which
 * stages and vats take part. The figures are small hand-made stages whose
 * verdicts can be worked out on paper (docs/verdicts.md, "Within a run").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/config.h"
#include "verdict/slog_drift.h"

#include "aux_defaults.h"

#define T1 1647216512000000000LL
#define T2 1647217009000000000LL

static const ps_slog_drift_run RUN = {"loadgen", "daily-perf",          "daily-perf-abc",
                                      "abc",     PS_RUN_STATUS_SUCCESS, 1};

/* stage 0 setup, 1 and 2 loadgen (10 s of deliveries over 10 cycles in
 * stage 1), 3 the restart */
static void stages4(ps_slog_drift_stage *s, double boyd2, double secs2, double cycles2) {
  s[0] = (ps_slog_drift_stage){0, 0, 0, NAN, 30.0, 0.03, T1 - 1000};
  s[1] = (ps_slog_drift_stage){1, 1, 0, 10, 10.0, 0.04, T1};
  s[2] = (ps_slog_drift_stage){2, 1, 0, cycles2, secs2, boyd2, T2};
  s[3] = (ps_slog_drift_stage){3, 0, 0, NAN, 0.0, NAN, T2 + 1000};
}

static const ps_verdict *find(const ps_verdict_list *l, const char *metric, const char *vat) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->v[i].metric, metric) == 0 &&
        ((!vat && !l->v[i].vat) || (vat && l->v[i].vat && strcmp(l->v[i].vat, vat) == 0)))
      return &l->v[i];
  return NULL;
}

/* Every vat slows by the same 30 %: the chain as a whole, no vat named;
 * the BOYD share moves 2 points: none. */
static void test_uniform_slowdown_names_no_vat(void **state) {
  (void)state;
  ps_slog_drift_stage s[4];
  stages4(s, 0.06, 13.0, 10);
  ps_slog_drift_vat v[] = {
      {1, "v11", "zoe", 5.0}, {1, "v16", "zcf-amm", 3.0}, {1, "v6", "bank", 2.0},
      {2, "v11", "zoe", 6.5}, {2, "v16", "zcf-amm", 3.9}, {2, "v6", "bank", 2.6},
  };
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, 6, NULL, &l), 0);
  assert_int_equal(l.n, 4); /* BOYD + three vats, stage 2 only */
  for (size_t i = 0; i < l.n; i++) {
    assert_int_equal(l.v[i].verdict, PS_VERDICT_NONE);
    assert_int_equal(l.v[i].stage, 2);
    assert_int_equal(l.v[i].method, PS_METHOD_STAGE_DRIFT);
    assert_true(l.v[i].time_ns == T2);
    assert_int_equal(l.v[i].backfill, 1);
  }
  const ps_verdict *b = find(&l, "stage_boydShare", NULL);
  assert_non_null(b);
  assert_true(fabs(b->value - 6.0) < 1e-9 && fabs(b->baseline - 4.0) < 1e-9);
  const ps_verdict *amm = find(&l, "stage_vatSecondsPerCycle", "v16");
  assert_true(fabs(amm->value - 0.39) < 1e-9 && fabs(amm->baseline - 0.3) < 1e-9);
  assert_string_equal(amm->vat_name, "zcf-amm");
  ps_verdict_list_free(&l);
}

/* One vat twice as slow, the others as they were: it alone is a
 * regression; a BOYD share 5 points up is one too (the default). */
static void test_slowing_vat_and_boyd(void **state) {
  (void)state;
  ps_slog_drift_stage s[4];
  stages4(s, 0.09, 13.0, 10);
  ps_slog_drift_vat v[] = {
      {1, "v11", "zoe", 5.0}, {1, "v16", "zcf-amm", 3.0}, {1, "v6", "bank", 2.0},
      {2, "v11", "zoe", 5.0}, {2, "v16", "zcf-amm", 6.0}, {2, "v6", "bank", 2.0},
  };
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, 6, NULL, &l), 0);
  assert_int_equal(find(&l, "stage_vatSecondsPerCycle", "v16")->verdict, PS_VERDICT_REGRESSION);
  assert_int_equal(find(&l, "stage_vatSecondsPerCycle", "v11")->verdict, PS_VERDICT_NONE);
  assert_int_equal(find(&l, "stage_boydShare", NULL)->verdict, PS_VERDICT_REGRESSION);
  ps_verdict_list_free(&l);
  /* 4.9 points is not 5 */
  stages4(s, 0.089, 13.0, 10);
  ps_verdict_list_init(&l);
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, 6, NULL, &l), 0);
  assert_int_equal(find(&l, "stage_boydShare", NULL)->verdict, PS_VERDICT_NONE);
  ps_verdict_list_free(&l);
}

/* A vat that got faster while the rest did not: an improvement; per
 * cycle, so more cycles with the same seconds is faster too. */
static void test_per_cycle_and_improvement(void **state) {
  (void)state;
  ps_slog_drift_stage s[4];
  stages4(s, 0.04, 20.0, 20); /* twice the cycles, twice the seconds */
  ps_slog_drift_vat v[] = {
      {1, "v11", "zoe", 5.0},  {1, "v16", "zcf-amm", 3.0}, {1, "v6", "bank", 2.0},
      {2, "v11", "zoe", 12.0}, {2, "v16", "zcf-amm", 3.0}, {2, "v6", "bank", 5.0},
  };
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, 6, NULL, &l), 0);
  const ps_verdict *amm = find(&l, "stage_vatSecondsPerCycle", "v16");
  assert_true(fabs(amm->value - 0.15) < 1e-9);
  assert_int_equal(amm->verdict, PS_VERDICT_IMPROVEMENT);
  /* v11: +20 % per cycle while the other vats' time per cycle fell 20 %:
   * its own change, a regression */
  assert_int_equal(find(&l, "stage_vatSecondsPerCycle", "v11")->verdict, PS_VERDICT_REGRESSION);
  ps_verdict_list_free(&l);
}

/* At most five vats, each with 5 % of the stage's delivery seconds; a vat
 * new in the stage has no baseline. */
static void test_vats_taking_part(void **state) {
  (void)state;
  ps_slog_drift_stage s[4];
  stages4(s, 0.04, 10.0, 10);
  ps_slog_drift_vat v[20];
  size_t n = 0;
  static const char *ids[] = {"v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"};
  /* stage 2: v1..v6 with 1.6 s each (9.6 s), v7 0.3 s (3 %), v8 new */
  for (int i = 0; i < 8; i++) {
    if (i < 7)
      v[n++] = (ps_slog_drift_vat){1, ids[i], NULL, i < 6 ? 1.6 : 0.3};
    v[n++] = (ps_slog_drift_vat){2, ids[i], NULL, i < 6 ? 1.6 : i == 6 ? 0.3 : 2.0};
  }
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, n, NULL, &l), 0);
  size_t vats = 0;
  for (size_t i = 0; i < l.n; i++)
    if (l.v[i].vat) {
      vats++;
      assert_string_not_equal(l.v[i].vat, "v7"); /* below 5 % */
      assert_string_not_equal(l.v[i].vat, "v8"); /* the largest, but new */
    }
  assert_int_equal(vats, 4); /* the top five are v8 and four of v1..v6 */
  ps_verdict_list_free(&l);
}

/* Nothing before the first loadgen stage is complete; partial stages and
 * stages without cycles are not judged; only a successful run is. */
static void test_what_is_judged(void **state) {
  (void)state;
  ps_slog_drift_stage s[4];
  ps_slog_drift_vat v[] = {{1, "v11", NULL, 5.0}, {2, "v11", NULL, 5.0}};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  stages4(s, 0.04, 10.0, 10);
  s[1].partial = 1;
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, 2, NULL, &l), 0);
  assert_int_equal(l.n, 0);
  stages4(s, 0.04, 10.0, 10);
  s[1].time_ns = -1; /* loadgen_stage known, its slog not read yet */
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, 2, NULL, &l), 0);
  assert_int_equal(l.n, 0);
  stages4(s, 0.04, 10.0, 10);
  s[2].partial = 1;
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, 2, NULL, &l), 0);
  assert_int_equal(l.n, 0);
  ps_slog_drift_run failed = RUN;
  failed.status = PS_RUN_STATUS_FAILED;
  stages4(s, 0.04, 10.0, 10);
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &failed, s, 4, v, 2, NULL, &l), 0);
  assert_int_equal(l.n, 0);
  /* in any order: the same verdicts */
  ps_slog_drift_stage r[4] = {s[3], s[2], s[0], s[1]};
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, r, 4, v, 2, NULL, &l), 0);
  assert_int_equal(l.n, 2);
  assert_int_equal(l.v[0].stage, 2);
  ps_verdict_list_free(&l);
}

/* With the per-block figures, a vat's own change must be significant.
 * Stage 1: four blocks of 2.5 s, zoe (v11) and the AMM (v16) 1.25 s each
 * in every block; stage 2: four blocks, zoe 1.25 s each, the AMM 0.5,
 * 0.5, 4.5, 4.5 s. The AMM per cycle doubled (0.5 to 1.0 s) and doubled
 * beyond zoe: a regression by the threshold alone. Its share of the rest,
 * by batch means (2 batches of 2 blocks): stage 1 R = 1, variance 0;
 * stage 2 R = 10 / 5 = 2, z = 1 - 2 x 2.5 = -4 and 9 - 5 = 4, variance
 * 2 x 32 / 5^2 = 2.56, log variance 2.56 / 4 = 0.64; t = ln 2 / 0.8, df
 * 1 (all from stage 2's one degree of freedom): p = 1 - 2/pi atan t =
 * 0.545, none. The same total spread evenly over stage 2's blocks: no
 * variance, p 0, the regression stands. */
static void test_blocks_weigh_the_change(void **state) {
  (void)state;
  ps_slog_drift_stage s[4];
  stages4(s, 0.04, 15.0, 10);
  ps_slog_drift_vat v[] = {
      {1, "v11", "zoe", 5.0},
      {1, "v16", "zcf-amm", 5.0},
      {2, "v11", "zoe", 5.0},
      {2, "v16", "zcf-amm", 10.0},
  };
  ps_slog_drift_block b[8];
  ps_slog_drift_block_vat bv[16];
  double amm2[] = {0.5, 0.5, 4.5, 4.5};
  size_t nbv = 0;
  for (int i = 0; i < 4; i++) {
    /* stage 2's rows first: the order rows come in does not matter */
    b[i] = (ps_slog_drift_block){2, T2 + 4 - i, 1.25 + amm2[3 - i], 0.15};
    b[4 + i] = (ps_slog_drift_block){1, T1 + i, 2.5, 0.1};
    bv[nbv++] = (ps_slog_drift_block_vat){2, T2 + 4 - i, "v16", amm2[3 - i]};
    bv[nbv++] = (ps_slog_drift_block_vat){2, T2 + 4 - i, "v11", 1.25};
    bv[nbv++] = (ps_slog_drift_block_vat){1, T1 + i, "v16", 1.25};
    bv[nbv++] = (ps_slog_drift_block_vat){1, T1 + i, "v11", 1.25};
  }
  ps_slog_drift_blocks blocks = {b, 8, bv, nbv};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, 4, NULL, &l), 0);
  assert_int_equal(find(&l, "stage_vatSecondsPerCycle", "v16")->verdict, PS_VERDICT_REGRESSION);
  assert_true(isnan(find(&l, "stage_vatSecondsPerCycle", "v16")->p_value));
  ps_verdict_list_free(&l);

  ps_verdict_list_init(&l);
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, 4, &blocks, &l), 0);
  const ps_verdict *amm = find(&l, "stage_vatSecondsPerCycle", "v16");
  assert_int_equal(amm->verdict, PS_VERDICT_NONE);
  assert_true(fabs(amm->value - 1.0) < 1e-12 && fabs(amm->baseline - 0.5) < 1e-12);
  double p = 1 - 2 / M_PI * atan(log(2) / 0.8);
  assert_true(fabs(amm->p_value - p) < 1e-12);
  assert_true(fabs(amm->p_value - 0.5455) < 1e-4);
  /* one stage judged (stage 3 neither ran the load generator nor is
   * complete): a family of 9, p 0.55 adjusted to 1 */
  assert_int_equal(amm->family_size, 9);
  assert_true(amm->p_adjusted == 1.0);
  /* the BOYD share stayed at 4 %, block by block: p 1 */
  assert_true(find(&l, "stage_boydShare", NULL)->p_value == 1.0);
  ps_verdict_list_free(&l);

  for (int i = 0; i < 4; i++) {
    b[i].delivery_s = 3.75;
    bv[4 * i].delivery_s = 2.5;
  }
  ps_verdict_list_init(&l);
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, 4, &blocks, &l), 0);
  amm = find(&l, "stage_vatSecondsPerCycle", "v16");
  assert_int_equal(amm->verdict, PS_VERDICT_REGRESSION);
  assert_true(amm->p_value == 0.0);
  assert_true(amm->p_adjusted == 0.0);
  ps_verdict_list_free(&l);

  /* a stage without blocks cannot show a change: none, no p-value */
  blocks.nblocks = 4; /* stage 2's only */
  ps_verdict_list_init(&l);
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, 4, v, 4, &blocks, &l), 0);
  amm = find(&l, "stage_vatSecondsPerCycle", "v16");
  assert_int_equal(amm->verdict, PS_VERDICT_NONE);
  assert_true(isnan(amm->p_value));
  ps_verdict_list_free(&l);
}

/* A long run: 100 stages with their blocks, each stage's rows found once;
 * every stage after the first is tested with its blocks (a p-value). */
static void test_many_stages_with_blocks(void **state) {
  (void)state;
  enum { NS = 100, NB = 4 };
  static ps_slog_drift_stage s[NS];
  static ps_slog_drift_block b[NS * NB];
  for (int k = 0; k < NS; k++) {
    int64_t t = T1 + (int64_t)k * 1000000000LL;
    s[k] = (ps_slog_drift_stage){k, k > 0, 0, 10, 10.0, 0.04 + (k % 3) * 0.001, t};
    for (int i = 0; i < NB; i++)
      b[k * NB + i] = (ps_slog_drift_block){k, t + i, 2.5, 0.1 + 0.01 * ((i + k) % 2)};
  }
  ps_slog_drift_blocks blocks = {b, NS * NB, NULL, 0};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_slog_drift(&cfg.verdicts, &RUN, s, NS, NULL, 0, &blocks, &l), 0);
  assert_int_equal(l.n, NS - 2); /* the BOYD share of stages 2 to 99 */
  for (size_t i = 0; i < l.n; i++) {
    assert_int_equal(l.v[i].stage, (int)i + 2);
    assert_false(isnan(l.v[i].p_value));
  }
  ps_verdict_list_free(&l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_uniform_slowdown_names_no_vat, defaults_setup,
                                      defaults_teardown),
      cmocka_unit_test_setup_teardown(test_slowing_vat_and_boyd, defaults_setup, defaults_teardown),
      cmocka_unit_test_setup_teardown(test_per_cycle_and_improvement, defaults_setup,
                                      defaults_teardown),
      cmocka_unit_test_setup_teardown(test_vats_taking_part, defaults_setup, defaults_teardown),
      cmocka_unit_test_setup_teardown(test_what_is_judged, defaults_setup, defaults_teardown),
      cmocka_unit_test_setup_teardown(test_many_stages_with_blocks, defaults_setup,
                                      defaults_teardown),
      cmocka_unit_test_setup_teardown(test_blocks_weigh_the_change, defaults_setup,
                                      defaults_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
