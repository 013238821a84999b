/*
 * test_arm_compare: DSS bench arms against the reference arm
 * (agent/verdict/arm_compare.c): a small case computed by hand, and the
 * bundled samples compared in both orders, which must give mirrored
 * verdicts (docs/verdicts.md, "DSS bench: between arms").
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
#include "verdict/arm_compare.h"

#include "capture.h"

#include "aux_defaults.h"

static const ps_verdict *find(const ps_verdict_list *l, const char *metric, const char *arm) {
  for (size_t k = 0; k < l->n; k++)
    if (strcmp(l->v[k].metric, metric) == 0 && strcmp(l->v[k].arm, arm) == 0)
      return &l->v[k];
  return NULL;
}

static void test_by_hand(void **state) {
  (void)state;
  /* variant 3: the reference had no successful request (rps 0, p95 0) */
  double ref_rps[] = {100, 50, 0}, arm_rps[] = {110, 55, 20};
  double ref_p95[] = {200, 400, 0}, arm_p95[] = {220, 360, 300};
  double ref_err[] = {0, 1, 5}, arm_err[] = {0, 3, 19};
  ps_dss_arm arms[] = {{"interuss/dss:v0.22.0", ref_rps, ref_p95, ref_err},
                       {"local/dss:pr-1523", arm_rps, arm_p95, arm_err}};
  ps_dss_test t = {"rid_isa", "bench_out", 1795970018000000000LL, 0, arms, 2, 3};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_arm_compare(&cfg.verdicts, "dss_bench", &t, &l), 0);
  assert_int_equal(l.n, 3);
  /* rps: ratios 1.1 and 1.1 -> +10 %, more is better */
  const ps_verdict *v = find(&l, "rps_total", "local/dss:pr-1523");
  assert_int_equal(v->verdict, PS_VERDICT_IMPROVEMENT);
  assert_float_equal(ps_verdict_change_pct(v->value, v->baseline), 10.0, 1e-9);
  assert_float_equal(v->value, sqrt(110.0 * 55.0), 1e-9);
  assert_float_equal(v->baseline, sqrt(100.0 * 50.0), 1e-9);
  assert_int_equal(v->variants, 2);
  assert_int_equal(v->variants_skipped, 1);
  assert_int_equal(v->variants_agree, 2);
  /* p95: ratios 1.1 and 0.9 -> sqrt(0.99) - 1 = -0.5 %: none; one variant
   * moved the way of the average */
  v = find(&l, "p95_ms", "local/dss:pr-1523");
  assert_int_equal(v->verdict, PS_VERDICT_NONE);
  assert_float_equal(ps_verdict_change_pct(v->value, v->baseline),
                     (sqrt(0.99) - 1.0) * 100.0, 1e-9);
  assert_int_equal(v->variants, 2);
  assert_int_equal(v->variants_agree, 1);
  /* errors: 22 against 6, counted over all three variants: 16 more is
   * beyond 5 % of 22 and beyond 2 sqrt(28) = 10.6 */
  v = find(&l, "errors", "local/dss:pr-1523");
  assert_int_equal(v->verdict, PS_VERDICT_REGRESSION);
  assert_float_equal(v->value, 22.0, 0);
  assert_float_equal(v->baseline, 6.0, 0);
  assert_int_equal(v->variants, 3);
  assert_int_equal(v->variants_skipped, 0);
  assert_int_equal(v->variants_agree, 2);

  /* the point */
  capture cap = {0};
  ps_emitter em = cap_emitter(&cap, "results.json");
  assert_int_equal(ps_verdict_emit(&em, v), 0);
  const cap_point *p = &cap.points[0];
  assert_string_equal(cap_tag(p, "source"), "dss_bench");
  assert_string_equal(cap_tag(p, "series"), "rid_isa");
  assert_string_equal(cap_tag(p, "run"), "bench_out");
  assert_string_equal(cap_tag(p, "arm"), "local/dss:pr-1523");
  assert_string_equal(cap_tag(p, "reference"), "interuss/dss:v0.22.0");
  assert_null(cap_tag(p, "stage"));
  assert_string_equal(cap_field_of(p, "method")->s, "arm_compare");
  assert_string_equal(cap_field_of(p, "change_run")->s, "bench_out");
  assert_int_equal(cap_int(p, "variants"), 3);
  assert_int_equal(cap_int(p, "variants_agree"), 2);
  assert_int_equal(cap_int(p, "variants_skipped"), 0);
  assert_float_equal(cap_float(p, "change_pct"), 16.0 / 6.0 * 100.0, 1e-9);
  assert_null(cap_field_of(p, "p_value"));
  assert_null(cap_field_of(p, "revision"));
  assert_null(cap_field_of(p, "baseline_runs"));
  assert_true(p->time_ns == 1795970018000000000LL);
  cap_free(&cap);
  ps_verdict_list_free(&l);

  /* errors from none to five count (5 >= 2 sqrt(5)); one, or 16 against
   * 13, is noise; equal counts never count */
  double zero[] = {0, 0, 0}, five[] = {0, 5, 0}, one[] = {0, 1, 0};
  double thirteen[] = {4, 4, 5}, sixteen[] = {5, 5, 6};
  const double *pairs[][2] = {{zero, five}, {zero, one}, {thirteen, sixteen}, {zero, zero}};
  ps_verdict_kind want[] = {PS_VERDICT_REGRESSION, PS_VERDICT_NONE, PS_VERDICT_NONE,
                            PS_VERDICT_NONE};
  for (size_t k = 0; k < 4; k++) {
    arms[0].errors = pairs[k][0];
    arms[1].errors = pairs[k][1];
    ps_verdict_list_init(&l);
    assert_int_equal(ps_arm_compare(&cfg.verdicts, "dss_bench", &t, &l), 0);
    v = find(&l, "errors", "local/dss:pr-1523");
    assert_int_equal(v->verdict, want[k]);
    if (k == 0)
      assert_true(isnan(ps_verdict_change_pct(v->value, v->baseline)));
    ps_verdict_list_free(&l);
  }
  ps_verdict_list_init(&l);
  assert_int_equal(ps_arm_compare(&cfg.verdicts, "dss_bench", &t, &l), 0);
  v = find(&l, "errors", "local/dss:pr-1523");
  assert_int_equal(v->verdict, PS_VERDICT_NONE);
  assert_int_equal(v->variants_agree, 0);
  ps_verdict_list_free(&l);

  /* an arm without a single comparable variant gets no rps or p95 verdict */
  double none[] = {0, 0, 0};
  arms[1].rps_total = none;
  arms[1].p95_ms = none;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_arm_compare(&cfg.verdicts, "dss_bench", &t, &l), 0);
  assert_null(find(&l, "rps_total", "local/dss:pr-1523"));
  assert_null(find(&l, "p95_ms", "local/dss:pr-1523"));
  assert_non_null(find(&l, "errors", "local/dss:pr-1523"));
  ps_verdict_list_free(&l);
}

/* One results.json, every test, its arms in file order. */
typedef struct sample {
  cJSON *root;
  size_t ntests;
  ps_dss_test tests[8];
  ps_dss_arm arms[8][4];
  double values[8][4][3][32];
} sample;

static void load_sample(sample *s, const char *name) {
  char path[512];
  snprintf(path, sizeof path, PS_TEST_DATA "/dss/synth/%s/results.json", name);
  size_t len;
  char *text = cap_slurp(path, &len);
  memset(s, 0, sizeof *s);
  s->root = cJSON_Parse(text);
  free(text);
  assert_non_null(s->root);
  const cJSON *test;
  cJSON_ArrayForEach(test, cJSON_GetObjectItemCaseSensitive(s->root, "by_test")) {
    size_t t = s->ntests++;
    ps_dss_test *dt = &s->tests[t];
    dt->test = test->string;
    dt->run = name;
    dt->time_ns = 1795970018000000000LL;
    dt->arms = s->arms[t];
    const cJSON *arm;
    cJSON_ArrayForEach(arm, test) {
      size_t a = dt->narms++;
      ps_dss_arm *da = &s->arms[t][a];
      da->label = arm->string;
      size_t v = 0;
      const cJSON *dp;
      cJSON_ArrayForEach(dp, arm) {
        /* every arm has the same variants in the same order */
        const char *label = cJSON_GetObjectItemCaseSensitive(dp, "label")->valuestring;
        const cJSON *first = cJSON_GetArrayItem(test->child, (int)v);
        assert_string_equal(label,
                            cJSON_GetObjectItemCaseSensitive(first, "label")->valuestring);
        s->values[t][a][0][v] = cJSON_GetObjectItemCaseSensitive(dp, "rps_total")->valuedouble;
        s->values[t][a][1][v] = cJSON_GetObjectItemCaseSensitive(dp, "p95_ms")->valuedouble;
        s->values[t][a][2][v] = cJSON_GetObjectItemCaseSensitive(dp, "errors")->valuedouble;
        v++;
      }
      da->rps_total = s->values[t][a][0];
      da->p95_ms = s->values[t][a][1];
      da->errors = s->values[t][a][2];
      dt->nvariants = v;
    }
  }
}

static ps_verdict_kind mirror(ps_verdict_kind k) {
  return k == PS_VERDICT_REGRESSION    ? PS_VERDICT_IMPROVEMENT
         : k == PS_VERDICT_IMPROVEMENT ? PS_VERDICT_REGRESSION
                                       : PS_VERDICT_NONE;
}

static void test_samples_mirror(void **state) {
  (void)state;
  const char *files[] = {"latency_compare_images", "datastores_with_errors"};
  size_t changed = 0, skipped = 0;
  for (size_t f = 0; f < 2; f++) {
    sample *s = malloc(sizeof *s);
    load_sample(s, files[f]);
    assert_int_equal(s->ntests, 2);
    for (size_t t = 0; t < s->ntests; t++) {
      const ps_dss_test *dt = &s->tests[t];
      assert_int_equal(dt->narms, 2);
      const char *a = dt->arms[0].label, *b = dt->arms[1].label;
      ps_verdict_list ab, ba;
      ps_verdict_list_init(&ab);
      ps_verdict_list_init(&ba);
      /* B against A (the first arm is the reference)... */
      free(cfg.verdicts.dss.reference_arm);
      cfg.verdicts.dss.reference_arm = strdup("");
      assert_int_equal(ps_arm_compare(&cfg.verdicts, "dss_bench", dt, &ab), 0);
      /* ...and A against B */
      free(cfg.verdicts.dss.reference_arm);
      cfg.verdicts.dss.reference_arm = strdup(b);
      assert_int_equal(ps_arm_compare(&cfg.verdicts, "dss_bench", dt, &ba), 0);
      assert_int_equal(ab.n, 3);
      assert_int_equal(ba.n, 3);
      const char *metrics[] = {"rps_total", "p95_ms", "errors"};
      for (size_t m = 0; m < 3; m++) {
        const ps_verdict *x = find(&ab, metrics[m], b), *y = find(&ba, metrics[m], a);
        assert_non_null(x);
        assert_non_null(y);
        assert_string_equal(x->reference, a);
        assert_string_equal(y->reference, b);
        assert_int_equal(y->verdict, mirror(x->verdict));
        assert_true(x->value == y->baseline && x->baseline == y->value);
        assert_int_equal(x->variants, y->variants);
        assert_int_equal(x->variants_agree, y->variants_agree);
        assert_int_equal(x->variants_skipped, y->variants_skipped);
        double cx = ps_verdict_change_pct(x->value, x->baseline);
        double cy = ps_verdict_change_pct(y->value, y->baseline);
        if (!isnan(cx) && !isnan(cy))
          assert_float_equal((1 + cx / 100) * (1 + cy / 100), 1.0, 1e-12);
        changed += x->verdict != PS_VERDICT_NONE;
        skipped += (size_t)x->variants_skipped;
      }
      ps_verdict_list_free(&ab);
      ps_verdict_list_free(&ba);
    }
    cJSON_Delete(s->root);
    free(s);
  }
  /* the samples hold real differences (raft is much faster than crdb) and
   * a variant without a successful request (crdb, rid_isa_sub, 100ms) */
  assert_true(changed >= 4);
  assert_int_equal(skipped, 2);
}

static void test_reference_arm_and_single_arm(void **state) {
  (void)state;
  sample *s = malloc(sizeof *s);
  load_sample(s, "datastores_with_errors");
  /* rid_isa: raft against crdb: more throughput, lower p95, both better */
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  assert_int_equal(ps_arm_compare(&cfg.verdicts, "dss_bench", &s->tests[0], &l), 0);
  assert_string_equal(s->tests[0].test, "rid_isa");
  const ps_verdict *v = find(&l, "rps_total", "raft");
  assert_string_equal(v->reference, "crdb");
  assert_int_equal(v->verdict, PS_VERDICT_IMPROVEMENT);
  assert_int_equal(v->variants, 11);
  assert_int_equal(v->variants_agree, 11);
  assert_int_equal(find(&l, "p95_ms", "raft")->verdict, PS_VERDICT_IMPROVEMENT);
  ps_verdict_list_free(&l);
  /* a reference_arm this test does not have: the first arm */
  free(cfg.verdicts.dss.reference_arm);
  cfg.verdicts.dss.reference_arm = strdup("ybdb");
  ps_verdict_list_init(&l);
  assert_int_equal(ps_arm_compare(&cfg.verdicts, "dss_bench", &s->tests[0], &l), 0);
  assert_string_equal(find(&l, "rps_total", "raft")->reference, "crdb");
  ps_verdict_list_free(&l);
  cJSON_Delete(s->root);

  /* one arm: nothing to compare */
  load_sample(s, "baseline_single");
  assert_int_equal(s->tests[0].narms, 1);
  ps_verdict_list_init(&l);
  assert_int_equal(ps_arm_compare(&cfg.verdicts, "dss_bench", &s->tests[0], &l), 0);
  assert_int_equal(l.n, 0);
  ps_verdict_list_free(&l);
  cJSON_Delete(s->root);
  free(s);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, defaults_setup, defaults_teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      TEST(test_by_hand),
      TEST(test_samples_mirror),
      TEST(test_reference_arm_and_single_arm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
