/*
 * test_benchmarker.c: the benchmarker format (formats/benchmarker*.c), its
 * push tokenizer (formats/json_stream.c) and the USL fit (core/usl.c).
 * What a user checks: figures of a small hand-made report worked out by
 * hand (docs/schema.md "Benchmarker"); the same points whatever the piece
 * sizes the report arrives in and whatever the emitter pushes back; the
 * fit recovering a known curve and dropping an outlier.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture.h"
#include "core/usl.h"
#include "formats/json_stream.h"

/* ---- json_stream ---------------------------------------------------------- */

typedef struct tok_log {
  ps_buf text;
} tok_log;

static int log_token(void *ctx, const ps_js_token *t) {
  tok_log *l = ctx;
  ps_buf_printf(&l->text, "%d@%llu:%s%s;", (int)t->kind, (unsigned long long)t->offset,
                t->text ? t->text : "", t->truncated ? "..." : "");
  return 0;
}

static const char DOC[] =
    "{\"a\": [1, -2.5e3, true, false, null], \"s\\u00e9\\n\": \"x\\\"y\\ud83d\\ude00\","
    " \"o\": {}, \"e\": []}";

static void feed_in_pieces(const char *doc, size_t len, size_t piece, tok_log *l, int *rc) {
  ps_json_stream js;
  ps_js_init(&js);
  ps_buf_init(&l->text, 0);
  *rc = PS_JS_OK;
  for (size_t i = 0; i < len && *rc == PS_JS_OK; i += piece)
    *rc = ps_js_feed(&js, doc + i, len - i < piece ? len - i : piece, log_token, l);
  if (*rc == PS_JS_OK)
    *rc = ps_js_finish(&js, log_token, l);
}

static void test_tokens_same_in_any_pieces(void **state) {
  (void)state;
  tok_log whole, bytes;
  int rc;
  feed_in_pieces(DOC, strlen(DOC), strlen(DOC), &whole, &rc);
  assert_int_equal(rc, PS_JS_OK);
  assert_non_null(strstr(whole.text.data, "4@38:s\xc3\xa9\n;"));
  assert_non_null(strstr(whole.text.data, "5@51:x\"y\xf0\x9f\x98\x80;"));
  assert_non_null(strstr(whole.text.data, "6@10:-2.5e3;"));
  for (size_t piece = 1; piece < 9; piece++) {
    feed_in_pieces(DOC, strlen(DOC), piece, &bytes, &rc);
    assert_int_equal(rc, PS_JS_OK);
    assert_string_equal(bytes.text.data, whole.text.data);
    ps_buf_free(&bytes.text);
  }
  ps_buf_free(&whole.text);
}

static void test_syntax_errors_have_offsets(void **state) {
  (void)state;
  static const struct {
    const char *doc;
    const char *why;
    uint64_t at;
  } cases[] = {
      {"{\"a\": [1, 2", "unexpected end", 11},
      {"{\"a\" 1}", "expected ':'", 5},
      {"[01]", "invalid number", 1},
      {"[1,]", "unexpected character", 3},
      {"{\"a\": \"\\x\"}", "invalid escape in a string", 8},
      {"[1] 2", "text after the document", 4},
      {"[tru]", "invalid literal", 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ps_json_stream js;
    tok_log l;
    ps_buf_init(&l.text, 0);
    ps_js_init(&js);
    int rc = ps_js_feed(&js, cases[i].doc, strlen(cases[i].doc), log_token, &l);
    if (rc == PS_JS_OK)
      rc = ps_js_finish(&js, log_token, &l);
    assert_int_equal(rc, PS_JS_ERROR);
    assert_string_equal(js.why, cases[i].why);
    assert_int_equal(js.err_offset, cases[i].at);
    ps_buf_free(&l.text);
  }
}

static void test_long_string_costs_no_memory(void **state) {
  (void)state;
  size_t n = 3 * PS_JS_TEXT_MAX;
  char *doc = malloc(n + 3);
  doc[0] = '"';
  memset(doc + 1, 'z', n);
  doc[n + 1] = '"';
  doc[n + 2] = '\0';
  tok_log l;
  int rc;
  feed_in_pieces(doc, n + 2, 1000, &l, &rc);
  assert_int_equal(rc, PS_JS_OK);
  assert_non_null(strstr(l.text.data, "..."));
  ps_buf_free(&l.text);
  free(doc);
}

/* ---- the fit -------------------------------------------------------------- */

static void test_fit_recovers_a_known_curve(void **state) {
  (void)state;
  double x[12], y[12];
  int kept[12];
  for (int i = 0; i < 12; i++) {
    x[i] = 2 + 3 * i;
    y[i] = ps_usl_throughput(2.0, 0.05, 0.002, x[i]);
  }
  ps_usl_fit_result r;
  assert_int_equal(ps_usl_fit(x, y, 12, kept, &r), 0);
  assert_true(fabs(r.gamma / 2.0 - 1) < 1e-4);
  assert_true(fabs(r.alpha / 0.05 - 1) < 1e-3);
  assert_true(fabs(r.beta / 0.002 - 1) < 1e-3);
  assert_int_equal(r.kept_count, 12);
  assert_true(r.has_peak);
  assert_true(fabs(r.n_star - sqrt(0.95 / 0.002)) < 0.05);
}

static void test_fit_drops_the_outlier(void **state) {
  (void)state;
  double x[10], y[10];
  int kept[10];
  for (int i = 0; i < 10; i++) {
    x[i] = 1 + 2 * i;
    y[i] = ps_usl_throughput(3.0, 0.02, 0.004, x[i]) * (1 + 0.01 * ((i % 3) - 1));
  }
  y[6] *= 1.6;
  ps_usl_fit_result r;
  assert_int_equal(ps_usl_fit(x, y, 10, kept, &r), 0);
  assert_int_equal(kept[6], 0);
  assert_int_equal(r.kept_count, 9);
  assert_true(fabs(r.gamma / 3.0 - 1) < 0.05);
}

static void test_fit_refuses_bad_points(void **state) {
  (void)state;
  double x[3] = {1, 0, 3}, y[3] = {1, 2, 3};
  int kept[3];
  ps_usl_fit_result r;
  assert_int_equal(ps_usl_fit(x, y, 3, kept, &r), -EINVAL);
  assert_int_equal(ps_usl_fit(x, y, 0, kept, &r), -EINVAL);
}

/* ---- the format ------------------------------------------------------------ */

/* Two steps; step 1's window [10 s, 12 s] holds three successful
 * operations (one at each end) and one unsuccessful; one operation
 * completes before the window and one after. Step 2 never got stable. */
static const char REPORT[] =
    "{\"codebase_version\": \"v1\", \"commit_hash\": \"abc\", \"configuration\": {"
    "\"actions\": [{\"name\": \"up\", \"run_command\": {\"command\": \"make\", \"env\": "
    "{\"DB_TYPE\": \"ybdb\", \"DSS_IMAGE\": \"dss:1\"}, \"path\": \".\"}}], "
    "\"loads\": [], \"scenarios\": [{\"load\": \"l\", \"name\": \"S one\", \"setup\": [\"up\"]}],"
    " \"user_types\": []}, \"report\": {\"scenarios\": [{\"metadata\": {}, \"operations\": [{"
    "\"origins\": [{\"origin\": \"u1\", \"outcomes\": [{\"successful\": ["
    "{\"t0\": \"2026-01-01T00:00:09Z\", \"t1\": \"2026-01-01T00:00:10Z\"},"
    "{\"t0\": \"2026-01-01T00:00:10.5Z\", \"t1\": \"2026-01-01T00:00:11Z\"},"
    "{\"query\": {\"big\": [1, {\"x\": \"y\"}]}, \"t0\": \"2026-01-01T00:00:11Z\", "
    "\"t1\": \"2026-01-01T00:00:12Z\"},"
    "{\"t0\": \"2026-01-01T00:00:08Z\", \"t1\": \"2026-01-01T00:00:09.999999Z\"},"
    "{\"t0\": \"2026-01-01T00:00:11Z\", \"t1\": \"2026-01-01T00:00:12.000001Z\"}],"
    " \"unsuccessful\": [{\"t0\": \"2026-01-01T00:00:09Z\", \"t1\": \"2026-01-01T02:00:11+02:00\"}]"
    "}]}], \"type\": \"workflow.flight_planner.flight\"}], \"steps\": ["
    "{\"end_time\": \"2026-01-01T00:00:12Z\", \"load_factor\": 3, \"start_time\": "
    "\"2026-01-01T00:00:00Z\", \"termination_reason\": \"Completed\", "
    "\"throughput_stability_time\": \"2026-01-01T00:00:10Z\"},"
    "{\"end_time\": \"2026-01-01T00:00:20Z\", \"load_factor\": 4, \"start_time\": "
    "\"2026-01-01T00:00:13Z\", \"termination_reason\": \"StabilityNotAchieved\", "
    "\"throughput_stability_time\": null}]}]}}";

#define T_2026 1767225600LL /* 2026-01-01T00:00:00Z */

static ps_parser *open_report(void) {
  ps_input_head head = {.path = "/runs/isas/report.json"};
  ps_parser *p = NULL;
  ps_buf err;
  ps_buf_init(&err, 0);
  assert_int_equal(ps_format_benchmarker.open(&p, NULL, &head, &err), 0);
  ps_buf_free(&err);
  return p;
}

static void stream_report(const char *doc, size_t len, size_t piece, capture *cap) {
  ps_parser *p = open_report();
  ps_emitter em = cap_emitter(cap, "report.json");
  for (size_t i = 0; i < len; i += piece)
    assert_int_equal(
        ps_format_benchmarker.stream(p, doc + i, len - i < piece ? len - i : piece, 0, &em), 0);
  int rc, rounds = 0;
  while ((rc = ps_format_benchmarker.stream(p, NULL, 0, 1, &em)) == -EAGAIN)
    assert_true(++rounds < 1000);
  assert_int_equal(rc, 0);
  ps_format_benchmarker.free(p);
}

static void test_step_figures_by_hand(void **state) {
  (void)state;
  capture cap = {0};
  stream_report(REPORT, strlen(REPORT), strlen(REPORT), &cap);
  assert_int_equal(cap.nrejects, 0);
  /* named by its setup only, with nothing to tell it from: the image */
  const char *all[] = {"operation=all", "scenario=S one", "arm=dss:1",      "configuration=isas",
                       "commit=abc",    "image=dss:1",    "datastore=ybdb", NULL};
  const cap_point *s1 = cap_find_nth(&cap, "benchmarker_step", 0, all);
  assert_non_null(s1);
  assert_int_equal(s1->time_ns, (T_2026 + 12) * 1000000000LL);
  assert_int_equal(cap_int(s1, "step"), 1);
  assert_true(cap_float(s1, "stable_s") == 2.0);
  assert_int_equal(cap_int(s1, "successful"), 3);
  assert_int_equal(cap_int(s1, "unsuccessful"), 1); /* 02:00:11+02:00 is 00:00:11Z */
  assert_true(cap_float(s1, "throughput") == 1.5);
  assert_true(cap_float(s1, "unsuccessful_share") == 0.25);
  /* latencies 0.5, 1, 1, 2: every outcome, as the analysis's latency_of_step */
  assert_true(fabs(cap_float(s1, "latency_mean_s") - 1.125) < 1e-12);
  assert_true(fabs(cap_float(s1, "latency_p50_s") - 1.0) < 1e-12);
  assert_true(fabs(cap_float(s1, "latency_p95_s") - 1.85) < 1e-12);
  assert_true(fabs(cap_float(s1, "latency_p99_s") - 1.97) < 1e-12);
  assert_true(cap_float(s1, "latency_max_s") == 2.0);
  const cap_point *s2 = cap_find_nth(&cap, "benchmarker_step", 1, all);
  assert_non_null(s2);
  assert_null(cap_field_of(s2, "throughput"));
  assert_string_equal(cap_field_of(s2, "termination_reason")->s, "StabilityNotAchieved");
  assert_int_equal(cap_count(&cap, "benchmarker_fit"), 0); /* one Completed step: no fit */
  assert_non_null(cap_find_text(&cap, "runs", "status=not_stable", "step 2 (load 4)"));
  cap_free(&cap);
}

static void test_same_points_in_any_pieces_and_pushback(void **state) {
  (void)state;
  capture whole = {0};
  stream_report(REPORT, strlen(REPORT), strlen(REPORT), &whole);
  for (size_t piece = 1; piece < 40; piece += 7) {
    capture cap = {.refuse_every = 2};
    stream_report(REPORT, strlen(REPORT), piece, &cap);
    assert_int_equal(cap.npoints, whole.npoints);
    for (size_t i = 0; i < cap.npoints; i++)
      assert_string_equal(cap.points[i].text, whole.points[i].text);
    cap_free(&cap);
  }
  cap_free(&whole);
}

static void test_bad_parts_rejected_with_byte(void **state) {
  (void)state;
  char *doc = strdup(REPORT);
  /* the second operation ends before it starts */
  char *op = strstr(doc, "\"2026-01-01T00:00:10.5Z\"");
  memcpy(op + 18, "12", 2); /* t0 00:00:12.5 > t1 00:00:11 */
  capture cap = {0};
  stream_report(doc, strlen(doc), 64, &cap);
  char want[128];
  snprintf(want, sizeof want,
           "byte %zu: scenario 1: an operation ends (t1) before it starts "
           "(t0); dropped",
           (size_t)(op - doc) - 7);
  assert_int_equal(cap.nrejects, 1);
  assert_string_equal(cap.rejects[0].reason, want);
  const char *all[] = {"operation=all", NULL};
  assert_int_equal(cap_int(cap_find_nth(&cap, "benchmarker_step", 0, all), "successful"), 2);
  cap_free(&cap);
  /* truncated: one reject at the end, no points */
  capture cut = {0};
  stream_report(REPORT, 300, 50, &cut);
  assert_int_equal(cut.npoints, 0);
  assert_int_equal(cut.nrejects, 1);
  assert_string_equal(cut.rejects[0].reason, "byte 300: invalid JSON: unexpected end; the "
                                             "report gives no points");
  cap_free(&cut);
  free(doc);
}

static void test_a_name_with_nul_is_refused(void **state) {
  (void)state;
  char *doc = strdup(REPORT);
  char *type = strstr(doc, "workflow.flight_planner.flight");
  memcpy(type, "wo\\u0000", 8); /* "wo\u0000light_planner.flight" */
  capture cap = {0};
  stream_report(doc, strlen(doc), 16, &cap);
  assert_int_equal(cap.nrejects, 2);
  char want[128];
  snprintf(want, sizeof want, "byte %zu: scenario 1: a name holding \\u0000; ignored",
           (size_t)(type - doc) - 1);
  assert_string_equal(cap.rejects[0].reason, want);
  assert_non_null(strstr(cap.rejects[1].reason, "operations of an unusable type; 6 dropped"));
  const char *all[] = {"operation=all", NULL};
  assert_int_equal(cap_int(cap_find_nth(&cap, "benchmarker_step", 0, all), "successful"), 0);
  cap_free(&cap);
  free(doc);
}

static void test_rejects_listed_up_to_a_hundred(void **state) {
  (void)state;
  ps_buf doc;
  ps_buf_init(&doc, 0);
  ps_buf_puts(&doc, "{\"report\": {\"scenarios\": [{\"operations\": [{\"origins\": "
                    "[{\"outcomes\": [{\"successful\": [");
  for (int i = 0; i < 150; i++)
    ps_buf_printf(&doc, "%s{\"t0\": \"2026-01-01T00:00:02Z\", \"t1\": \"2026-01-01T00:00:01Z\"}",
                  i ? ", " : "");
  ps_buf_puts(&doc, "]}]}], \"type\": \"x\"}], \"steps\": []}]}}");
  capture cap = {0};
  stream_report(doc.data, doc.len, 4096, &cap);
  assert_int_equal(cap.nrejects, 101);
  assert_string_equal(cap.rejects[100].reason, "50 more problems in this report, not listed");
  cap_free(&cap);
  ps_buf_free(&doc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tokens_same_in_any_pieces),
      cmocka_unit_test(test_syntax_errors_have_offsets),
      cmocka_unit_test(test_long_string_costs_no_memory),
      cmocka_unit_test(test_fit_recovers_a_known_curve),
      cmocka_unit_test(test_fit_drops_the_outlier),
      cmocka_unit_test(test_fit_refuses_bad_points),
      cmocka_unit_test(test_step_figures_by_hand),
      cmocka_unit_test(test_same_points_in_any_pieces_and_pushback),
      cmocka_unit_test(test_bad_parts_rejected_with_byte),
      cmocka_unit_test(test_rejects_listed_up_to_a_hundred),
      cmocka_unit_test(test_a_name_with_nul_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
