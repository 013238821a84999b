/*
 * test_dss.c: the dss-bench parser against the synthetic fixtures (both file
 * eras, compared images and datastores, an error-heavy run, a truncated
 * file) and hand-made edge cases (a fully failed run, bad data points,
 * back-pressure resume).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "formats/format.h"

#include "capture.h"
#include "aux_tmpdir.h"

#define SYNTH PS_TEST_DATA "/dss/synth/"

static int64_t mtime_ns(const char *path) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  return (int64_t)st.st_mtime * 1000000000LL;
}

/* Runs the whole document through the parser the way the driver does,
 * calling again after every -EAGAIN. */
static void convert(const char *path, capture *cap) {
  cap_convert_document(&ps_format_dss_bench, path, cap);
}

static const cap_point *find(const capture *c, const char *m,
                             const char *test, const char *arm,
                             const char *variant) {
  char t[128], a[128], v[128];
  snprintf(t, sizeof t, "test=%s", test);
  snprintf(a, sizeof a, "arm=%s", arm);
  snprintf(v, sizeof v, "variant=%s", variant);
  const char *kv[] = {t, a, v, NULL};
  return cap_find_nth(c, m, 0, kv);
}

static void test_baseline_single(void **state) {
  (void)state;
  const char *path = SYNTH "baseline_single/results.json";
  capture cap = {0};
  convert(path, &cap);
  assert_int_equal(cap.nrejects, 0);
  assert_int_equal(cap_count(&cap, "dss_bench"), 11);
  assert_int_equal(cap_count(&cap, "dss_bench_target"), 11);
  assert_int_equal(cap_count(&cap, "runs"), 1);

  const cap_point *p = find(&cap, "dss_bench", "rid_isa", "baseline", "30ms");
  assert_non_null(p);
  assert_string_equal(cap_tag(p, "run"), "baseline_single");
  assert_string_equal(cap_tag(p, "sweep"), "inter_latency");
  assert_string_equal(cap_tag(p, "base_datastore"), "crdb");
  assert_string_equal(cap_tag(p, "base_image"), "interuss/dss:v0.22.0");
  assert_int_equal(cap_int(p, "variantIndex"), 3);
  assert_true(cap_float(p, "rps_total") == 28.37);
  assert_true(cap_float(p, "p50_ms") == 269.35);
  assert_true(cap_float(p, "p95_ms") == 470.91);
  assert_int_equal(cap_int(p, "errors"), 0);
  /* no errors: the tool's 0.0 error percentiles are "no data" */
  assert_null(cap_field_of(p, "err_p50_ms"));
  assert_null(cap_field_of(p, "err_p95_ms"));
  assert_true(cap_float(p, "p95_all_ms") == 470.91);
  assert_int_equal(cap_int(p, "processes"), 8);
  assert_int_equal(cap_int(p, "num_uss"), 3);
  assert_int_equal(cap_int(p, "num_nodes"), 3);
  assert_true(cap_float(p, "duration_s") == 30.0);
  assert_int_equal(p->time_ns, mtime_ns(path));
  assert_int_equal(p->time_ns % 1000000000LL, 0);

  /* a variant with one error keeps its error latencies */
  p = find(&cap, "dss_bench", "rid_isa", "baseline", "0ms");
  assert_int_equal(cap_int(p, "variantIndex"), 0);
  assert_int_equal(cap_int(p, "errors"), 1);
  assert_true(cap_float(p, "err_p50_ms") == 19.98);
  p = find(&cap, "dss_bench", "rid_isa", "baseline", "100ms");
  assert_int_equal(cap_int(p, "variantIndex"), 10);

  p = find(&cap, "dss_bench_target", "rid_isa", "baseline", "60ms");
  assert_non_null(p);
  assert_string_equal(cap_tag(p, "target"), "http://localhost:8090");
  assert_string_equal(cap_tag(p, "run"), "baseline_single");
  assert_true(cap_float(p, "rps") == 17.0);

  const char *kv[] = {"source=dss_bench", "run=baseline_single", "event=end",
                      "status=success", NULL};
  p = cap_find_nth(&cap, "runs", 0, kv);
  assert_non_null(p);
  assert_int_equal(p->time_ns, mtime_ns(path));
  /* A parser as `convert` opens it: the run ended before we saw it. */
  const cap_field *f = cap_field_of(p, "backfill");
  assert_non_null(f);
  assert_int_equal(f->type, PS_F_BOOL);
  assert_true(f->b);
  f = cap_field_of(p, "text");
  assert_non_null(f);
  assert_int_equal(f->type, PS_F_STRING);
  assert_non_null(strstr(f->s, "baseline_single"));
  cap_free(&cap);
}

static void test_datastores_with_errors(void **state) {
  (void)state;
  capture cap = {0};
  convert(SYNTH "datastores_with_errors/results.json", &cap);
  assert_int_equal(cap.nrejects, 0);
  /* the fully failed point: errors, error latencies, no 0 ms latency */
  const cap_point *p =
      find(&cap, "dss_bench", "rid_isa_sub", "crdb", "100ms");
  assert_non_null(p);
  assert_string_equal(cap_tag(p, "base_datastore"), "crdb");
  assert_string_equal(cap_tag(p, "base_image"), "local/dss:raft-1587");
  assert_true(cap_float(p, "rps_total") == 0.0);
  assert_null(cap_field_of(p, "p50_ms"));
  assert_null(cap_field_of(p, "p95_ms"));
  assert_int_equal(cap_int(p, "errors"), 108);
  assert_true(cap_float(p, "err_p50_ms") == 10027.6);
  assert_true(cap_float(p, "err_p95_ms") == 10058.36);
  assert_true(cap_float(p, "p50_all_ms") == 10027.6);
  assert_int_equal(cap_int(p, "variantIndex"), 10);

  p = find(&cap, "dss_bench", "rid_isa_sub", "crdb", "90ms");
  assert_true(cap_float(p, "rps_total") == 0.47);
  assert_true(cap_float(p, "p50_ms") == 1379.84);
  assert_int_equal(cap_int(p, "errors"), 102);

  /* the other arm is there too, with its own label */
  assert_non_null(find(&cap, "dss_bench", "rid_isa_sub", "raft", "100ms"));
  const char *kv[] = {"status=success", NULL};
  assert_non_null(cap_find_nth(&cap, "runs", 0, kv));
  cap_free(&cap);
}

static void test_compare_images(void **state) {
  (void)state;
  capture cap = {0};
  convert(SYNTH "latency_compare_images/results.json", &cap);
  assert_int_equal(cap.nrejects, 0);
  /* 2 tests x 2 arms x 11 variants */
  assert_int_equal(cap_count(&cap, "dss_bench"), 44);
  const cap_point *a =
      find(&cap, "dss_bench", "rid_isa", "interuss/dss:v0.23.0-rc2", "50ms");
  const cap_point *b =
      find(&cap, "dss_bench", "rid_isa", "local/dss:pr-1523", "50ms");
  assert_non_null(a);
  assert_non_null(b);
  assert_int_equal(cap_int(a, "processes"), 9);
  assert_true(cap_float(a, "duration_s") == 60.0);
  /* base_image is the base configuration, not the compared image */
  assert_string_equal(cap_tag(a, "base_image"), cap_tag(b, "base_image"));
  cap_free(&cap);
}

static void test_legacy_era(void **state) {
  (void)state;
  capture cap = {0};
  convert(SYNTH "legacy_dss_bench_per_dss/results.json", &cap);
  assert_int_equal(cap.nrejects, 0);
  const cap_point *p = find(&cap, "dss_bench", "rid_isa", "baseline", "0ms");
  assert_non_null(p);
  assert_string_equal(cap_tag(p, "sweep"), "inter_latency");
  assert_string_equal(cap_tag(p, "run"), "legacy_dss_bench_per_dss");
  /* processes/DSS 4 x 3 USS x 3 nodes = 36 workers in total */
  assert_int_equal(cap_int(p, "processes"), 36);
  assert_true(cap_float(p, "rps_total") == 329.47);
  assert_true(cap_float(p, "err_p95_ms") == 85.17);
  assert_int_equal(cap_count(&cap, "dss_bench_target"), 9 * 11);
  const char *kv[] = {"test=rid_isa", "variant=0ms",
                      "target=http://localhost:8005", NULL};
  p = cap_find_nth(&cap, "dss_bench_target", 0, kv);
  assert_non_null(p);
  assert_true(cap_float(p, "rps") == 35.77);
  cap_free(&cap);
}

static void test_truncated(void **state) {
  (void)state;
  capture cap = {0};
  const char *path = SYNTH "truncated/results.json";
  convert(path, &cap);
  assert_int_equal(cap.npoints, 0);
  assert_int_equal(cap.nrejects, 1);
  const char *r = cap.rejects[0].reason;
  size_t len;
  char *data = cap_slurp(path, &len);
  unsigned lines = 1;
  for (size_t i = 0; i < len; i++)
    lines += data[i] == '\n';
  free(data);
  char want[96];
  snprintf(want, sizeof want, "invalid JSON at line %u, column ", lines);
  assert_non_null(strstr(r, want));
  snprintf(want, sizeof want, "(byte %zu): unexpected end", len);
  assert_non_null(strstr(r, want));
  cap_free(&cap);
}

static void test_bad_character_position(void **state) {
  (void)state;
  const char *path = "/nonexistent/run/results.json"; /* never opened */
  const char doc[] = "{\n  \"meta\": {},\n  \"by_test\": x\n}";
  ps_parser *p;
  ps_buf err;
  ps_buf_init(&err, 0);
  ps_input_head head = {.path = path, .mtime_ns = 1600000000000000000LL};
  assert_int_equal(ps_format_dss_bench.open(&p, NULL, &head, &err), 0);
  capture cap = {0};
  ps_emitter em = cap_emitter(&cap, path);
  assert_int_equal(ps_format_dss_bench.document(p, doc, strlen(doc), &em), 0);
  assert_int_equal(cap.nrejects, 1);
  assert_non_null(strstr(cap.rejects[0].reason,
                         "line 3, column 14 (byte 29): unexpected character"));
  ps_format_dss_bench.free(p);
  ps_buf_free(&err);
  cap_free(&cap);
}

/* The parser never looks at the file: the time of every point is the
 * head's modification time in whole seconds (also before 1970), the run is
 * the folder of the resolved path when the driver gave one, and the marker's
 * backfill is what the driver set through the ops. */
static void test_time_run_and_backfill_from_driver(void **state) {
  (void)state;
  size_t len;
  char *doc = cap_slurp(SYNTH "baseline_single/results.json", &len);
  static const struct {
    int64_t mtime_ns, want_s;
    const char *real_path, *want_run;
    int backfill;
  } cases[] = {
      {1600000000999999999LL, 1600000000, NULL, "given", 1},
      {-1500000000LL, -2, "/srv/real-run/results.json", "real-run", 0},
  };
  assert_non_null(ps_format_dss_bench.set_backfill);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ps_input_head head = {.path = "/nonexistent/given/results.json",
                          .real_path = cases[i].real_path,
                          .mtime_ns = cases[i].mtime_ns};
    ps_parser *p = NULL;
    assert_int_equal(ps_format_dss_bench.open(&p, NULL, &head, NULL), 0);
    if (!cases[i].backfill)
      ps_format_dss_bench.set_backfill(p, 0);
    capture cap = {0};
    ps_emitter em = cap_emitter(&cap, head.path);
    assert_int_equal(ps_format_dss_bench.document(p, doc, len, &em), 0);
    assert_true(cap.npoints > 10);
    for (size_t k = 0; k < cap.npoints; k++) {
      assert_int_equal(cap.points[k].time_ns, cases[i].want_s * 1000000000LL);
      assert_string_equal(cap_tag(&cap.points[k], "run"), cases[i].want_run);
    }
    const char *kv[] = {"event=end", NULL};
    const cap_point *m = cap_find_nth(&cap, "runs", 0, kv);
    assert_non_null(m);
    assert_int_equal(cap_field_of(m, "backfill")->b, cases[i].backfill);
    ps_format_dss_bench.free(p);
    cap_free(&cap);
  }
  free(doc);
}

/* Every point failed: marker says failed; odd entries are rejected without
 * losing the good points around them. */
static void test_failed_run_and_bad_points(void **state) {
  (void)state;
  char dir[64];
  assert_int_equal(aux_tmpdir_make(dir, sizeof dir, "dss"), 0);
  char sub[256], path[300];
  snprintf(sub, sizeof sub, "%s/nightly-7", dir);
  assert_int_equal(mkdir(sub, 0700), 0);
  snprintf(path, sizeof path, "%s/results.json", sub);
  const char doc[] =
      "{\"meta\": {\"sweep\": \"s\", \"processes\": 2},\n"
      " \"by_test\": {\"t\": {\"ybdb\": [\n"
      "  {\"label\": \"a\", \"rps_total\": 0.0, \"p50_ms\": 0.0,"
      "   \"p95_ms\": 0.0, \"errors\": 0, \"err_p50_ms\": 0.0,"
      "   \"err_p95_ms\": 0.0, \"p50_all_ms\": 0.0, \"p95_all_ms\": 0.0,"
      "   \"rps_per_target\": {\"http://x\": 0.0}},\n"
      "  42,\n"
      "  {\"rps_total\": 1.0},\n"
      "  {\"label\": \"c\", \"rps_total\": 0.0, \"p50_ms\": null,"
      "   \"errors\": 3.5, \"err_p50_ms\": 0.0}\n"
      " ], \"x\": 7}}}";
  FILE *f = fopen(path, "w");
  fputs(doc, f);
  fclose(f);
  capture cap = {0};
  convert(path, &cap);
  assert_int_equal(cap_count(&cap, "dss_bench"), 2);
  assert_int_equal(cap.nrejects, 3);
  assert_non_null(strstr(cap.rejects[0].reason, "by_test.t.ybdb[1]"));
  assert_non_null(strstr(cap.rejects[1].reason, "by_test.t.ybdb[2]"));
  assert_non_null(strstr(cap.rejects[2].reason, "by_test.t.x"));

  const cap_point *p = find(&cap, "dss_bench", "t", "ybdb", "a");
  assert_string_equal(cap_tag(p, "run"), "nightly-7");
  assert_null(cap_tag(p, "base_image")); /* missing in meta: no tag */
  assert_true(cap_float(p, "rps_total") == 0.0);
  assert_int_equal(cap_int(p, "errors"), 0);
  assert_int_equal(cap_int(p, "processes"), 2);
  const char *absent[] = {"p50_ms",     "p95_ms",     "err_p50_ms",
                          "err_p95_ms", "p50_all_ms", "p95_all_ms"};
  for (size_t i = 0; i < 6; i++)
    assert_null(cap_field_of(p, absent[i]));
  /* the third entry keeps its position in sweep order */
  p = find(&cap, "dss_bench", "t", "ybdb", "c");
  assert_int_equal(cap_int(p, "variantIndex"), 3);
  assert_null(cap_field_of(p, "p50_ms"));
  assert_null(cap_field_of(p, "errors")); /* 3.5 is no integer */

  const char *kv[] = {"run=nightly-7", "status=failed", "event=end", NULL};
  p = cap_find_nth(&cap, "runs", 0, kv);
  assert_non_null(p);
  assert_non_null(strstr(cap_field_of(p, "text")->s, "failed"));
  cap_free(&cap);
  assert_int_equal(aux_tmpdir_remove(dir), 0);
}

/* Refusing every 3rd point must neither lose nor repeat any. */
static void test_resume_after_eagain(void **state) {
  (void)state;
  const char *path = SYNTH "latency_compare_images/results.json";
  capture all = {0}, part = {0};
  convert(path, &all);
  part.refuse_every = 3;
  convert(path, &part);
  assert_int_equal(all.npoints, part.npoints);
  for (size_t i = 0; i < all.npoints; i++) {
    assert_string_equal(all.points[i].measurement, part.points[i].measurement);
    assert_int_equal(all.points[i].nfields, part.points[i].nfields);
    for (size_t t = 0; t < all.points[i].ntags; t++)
      assert_string_equal(all.points[i].tag_values[t],
                          part.points[i].tag_values[t]);
  }
  cap_free(&all);
  cap_free(&part);
}

static void test_input_kind(void **state) {
  (void)state;
  assert_int_equal(ps_format_dss_bench.input_kind(NULL, "/a/b/results.json"),
                   PS_INPUT_DOCUMENT);
  assert_int_equal(ps_format_dss_bench.input_kind(NULL, "results.json"),
                   PS_INPUT_DOCUMENT);
  assert_int_equal(ps_format_dss_bench.input_kind(NULL, "/a/rid_isa.png"),
                   PS_INPUT_IGNORE);
  assert_int_equal(ps_format_dss_bench.input_kind(NULL, "/a/my_results.json"),
                   PS_INPUT_IGNORE);
  ps_format_dss_bench.free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_baseline_single),
      cmocka_unit_test(test_datastores_with_errors),
      cmocka_unit_test(test_compare_images),
      cmocka_unit_test(test_legacy_era),
      cmocka_unit_test(test_truncated),
      cmocka_unit_test(test_bad_character_position),
      cmocka_unit_test(test_time_run_and_backfill_from_driver),
      cmocka_unit_test(test_failed_run_and_bad_points),
      cmocka_unit_test(test_resume_after_eagain),
      cmocka_unit_test(test_input_kind),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
