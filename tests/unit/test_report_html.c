/*
 * test_report_html: the report page's writer (report/html.h): hostile
 * names in the page and its JSON block, the Content-Security-Policy
 * hashes, the numbers the charts get, and sections without data. The page is checked
 * in a real browser by tests/integration/test_report.py; this is what can
 * be pinned byte for byte.
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

#include <cjson/cJSON.h>

#include "core/sha256.h"
#include "report/assets.h"
#include "report/html.h"
#include "report/model.h"

#define HOSTILE "<img src=x onerror=alert(1)>"
#define HOSTILE2 "x</script><script>alert(2)</script>-abcdef1"
#define FAKE_CHART_JS "/* Chart.js stand-in */ window.Chart = function () {};"

/* The escapes and the inline check alone are tests/unit/test_html_escape.c;
 * here: the page's own script and style pass, as built into the binary. */
static void test_page_assets_can_be_inlined(void **state) {
  (void)state;
  assert_true(ps_report_script_ok(ps_report_page_js, ps_report_page_js_len));
  assert_true(ps_report_script_ok(ps_report_page_css, ps_report_page_css_len));
  assert_int_equal(strlen(ps_report_page_js), ps_report_page_js_len);
}

/* A model as the query side would leave it: two successful runs of one
 * test type (the newer a regression), a failed run with a hostile name. */
static void model(ps_report_data *d) {
  ps_report_data_init(d, 1800000000000000000LL, 1600000000000000000LL, NULL);
  ps_rrun *r = ps_report_add_run(d, "daily-aaaaaaa");
  r->test_type = strdup("daily");
  r->revision = strdup("aaaaaaa");
  r->status = PS_RS_SUCCESS;
  r->start_ns = r->run_point_ns = 1700000000123456000LL;
  r->metric[0] = 24.330188;
  r->metric[1] = 100.0;
  r = ps_report_add_run(d, "daily-bbbbbbb");
  r->test_type = strdup("daily");
  r->revision = strdup("bbbbbbb");
  r->status = PS_RS_SUCCESS;
  r->start_ns = r->run_point_ns = 1700086400000000000LL;
  r->metric[0] = 0.1 + 0.2; /* a double with a long shortest form */
  r = ps_report_add_run(d, HOSTILE2);
  r->test_type = strdup(HOSTILE);
  r->status = PS_RS_FAILED;
  r->text = strdup("Error: " HOSTILE);
  r->start_ns = 1700090000000000000LL;
  ps_rverdict *v = ps_report_add_verdict(d);
  v->source = strdup("loadgen");
  v->series = strdup("daily");
  v->metric = strdup("cycleAvgDuration");
  v->run = strdup("daily-bbbbbbb");
  v->verdict = strdup("regression");
  v->value = 0.3;
  v->baseline = 0.25;
  v->change_pct = 20.0;
  assert_int_equal(ps_report_finish(d), 0);
}

/* The text between `open` and the next "</script>", in `page`. */
static char *between(const char *page, const char *open) {
  const char *s = strstr(page, open);
  assert_non_null(s);
  s += strlen(open);
  const char *e = strstr(s, "</script>");
  assert_non_null(e);
  return strndup(s, (size_t)(e - s));
}

static void test_page(void **state) {
  (void)state;
  ps_report_data d;
  model(&d);
  ps_buf out;
  ps_buf_init(&out, 0);
  ps_report_assets a = {FAKE_CHART_JS, strlen(FAKE_CHART_JS), "perfship test", "perf"};
  assert_int_equal(ps_report_render(&d, &a, &out), 0);
  const char *page = out.data;

  /* the data never appears raw */
  assert_null(strstr(page, HOSTILE));
  assert_null(strstr(page, "</script><script>alert(2)"));
  assert_non_null(strstr(page, "&lt;img src=x onerror=alert(1)&gt;"));
  assert_non_null(strstr(page, "x&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;-abcdef1"));
  /* three script elements: the data, Chart.js, the page's script */
  size_t n = 0;
  for (const char *p = page; (p = strstr(p, "<script")); p++)
    n++;
  assert_int_equal(n, 3);

  /* the policy allows exactly the two inline scripts and the style */
  char h[PS_SHA256_B64_LEN + 1], want[128];
  const char *csp = strstr(page, "Content-Security-Policy\" content=\"");
  assert_non_null(csp);
  assert_non_null(strstr(csp, "default-src 'none'"));
  assert_null(strstr(page, "unsafe-inline"));
  char *lib = between(page, "</script>\n<script>");
  assert_string_equal(lib, FAKE_CHART_JS);
  ps_sha256_base64(lib, strlen(lib), h);
  snprintf(want, sizeof want, "script-src 'sha256-%s'", h);
  assert_non_null(strstr(csp, want));
  free(lib);
  ps_sha256_base64(ps_report_page_js, ps_report_page_js_len, h);
  snprintf(want, sizeof want, "'sha256-%s';", h);
  assert_non_null(strstr(csp, want));
  ps_sha256_base64(ps_report_page_css, ps_report_page_css_len, h);
  snprintf(want, sizeof want, "style-src 'sha256-%s'", h);
  assert_non_null(strstr(csp, want));

  /* the data block has no '<' at all, and holds the exact doubles */
  char *json = between(page, "<script type=\"application/json\" id=\"perfship-data\">");
  assert_null(strchr(json, '<'));
  cJSON *j = cJSON_Parse(json);
  assert_non_null(j);
  const cJSON *trend = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "trends"), 0);
  assert_string_equal(cJSON_GetObjectItem(trend, "series")->valuestring, "daily");
  const cJSON *y = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(trend, "metrics"), 0), "y");
  assert_true(cJSON_GetArrayItem(y, 0)->valuedouble == 24.330188);
  assert_true(cJSON_GetArrayItem(y, 1)->valuedouble == 0.1 + 0.2);
  const cJSON *v = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(trend, "metrics"), 0), "v");
  assert_int_equal(cJSON_GetArrayItem(v, 0)->valueint, 0);
  assert_int_equal(cJSON_GetArrayItem(v, 1)->valueint, 1); /* the regression */
  /* an absent metric is null, not 0 */
  const cJSON *wallet = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(trend, "metrics"), 5), "y");
  assert_true(cJSON_IsNull(cJSON_GetArrayItem(wallet, 0)));
  /* the x axis: the run point's time in ms */
  assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(trend, "x"), 0)->valuedouble ==
              1700000000123.456);
  cJSON_Delete(j);
  free(json);

  /* the headline names the newest run, failed, in words */
  const char *head = strstr(page, "id=\"headline-loadgen\"");
  assert_non_null(head);
  assert_non_null(strstr(head, "<span class=\"st st-failed\">failed</span>"));
  ps_buf_free(&out);
  ps_report_data_free(&d);
}

static void test_sections_without_data_say_so(void **state) {
  (void)state;
  ps_report_data d;
  ps_report_data_init(&d, 1800000000000000000LL, 1600000000000000000LL, NULL);
  assert_int_equal(ps_report_finish(&d), 0);
  ps_buf out;
  ps_buf_init(&out, 0);
  ps_report_assets a = {FAKE_CHART_JS, strlen(FAKE_CHART_JS), "perfship test", NULL};
  assert_int_equal(ps_report_render(&d, &a, &out), 0);
  /* no empty axes: not one canvas before the scripts */
  char *scripts = strstr(out.data, "<script");
  assert_non_null(scripts);
  *scripts = '\0';
  assert_null(strstr(out.data, "<canvas"));
  assert_non_null(strstr(out.data, "No loadgen run in this range."));
  assert_non_null(strstr(out.data, "No successful loadgen run in this range, so no trend."));
  assert_non_null(strstr(out.data, "No run in this range has stage data yet."));
  assert_non_null(strstr(out.data, "No DSS bench results in this range."));
  assert_non_null(strstr(out.data, "No self-metrics"));
  ps_buf_free(&out);
  ps_report_data_free(&d);
}

static void test_refuses_what_would_end_its_script(void **state) {
  (void)state;
  ps_report_data d;
  model(&d);
  ps_buf out;
  ps_buf_init(&out, 0);
  const char *lib = "var s = '</script><script>alert(1)';";
  ps_report_assets a = {lib, strlen(lib), "perfship test", NULL};
  assert_int_equal(ps_report_render(&d, &a, &out), -EINVAL);
  ps_buf_free(&out);
  ps_report_data_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_page_assets_can_be_inlined),
      cmocka_unit_test(test_page),
      cmocka_unit_test(test_sections_without_data_say_so),
      cmocka_unit_test(test_refuses_what_would_end_its_script),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
