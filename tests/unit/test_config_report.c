/*
 * test_config_report: the `report` group of the configuration (the page the
 * agent keeps current, docs/report.md): its defaults, every key read, and
 * each mistake reported at FILE:LINE with the key named. Kept apart from
 * test_config.c so that groups added at the same time do not collide.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "formats/format.h"
#include "aux_tmpdir.h"

static char tmpdir[256];

static int setup_dir(void **state) {
  (void)state;
  return aux_tmpdir_make(tmpdir, sizeof tmpdir, "config-report");
}

static int teardown_dir(void **state) {
  (void)state;
  return aux_tmpdir_remove(tmpdir);
}

/* Loads `text`; returns the loader's code, its message in err. */
static int load(const char *text, ps_config *c, ps_buf *err) {
  char path[300];
  snprintf(path, sizeof path, "%s/perfship.cfg", tmpdir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  ps_config_defaults(c);
  ps_buf_init(err, 4096);
  return ps_config_load(c, path, ps_format_source_rules, err);
}

static void expect_error(const char *text, const char *line, const char *needle) {
  ps_config c;
  ps_buf err;
  if (load(text, &c, &err) >= 0)
    fail_msg("expected an error for:\n%s", text);
  if (!strstr(err.data, line) || !strstr(err.data, needle))
    fail_msg("message \"%s\" lacks \"%s\" or \"%s\"", err.data, line, needle);
  ps_buf_free(&err);
  ps_config_free(&c);
}

static void test_defaults_write_no_page(void **state) {
  (void)state;
  ps_config c;
  ps_config_defaults(&c);
  assert_string_equal(c.report.path, "");
  assert_int_equal(c.report.since_days, 90);
  assert_int_equal(c.report.min_interval_s, 300);
  assert_string_equal(c.report.chart_js, "/usr/share/javascript/chart.js/chart.min.js");
  ps_config_free(&c);
}

static void test_every_key_read(void **state) {
  (void)state;
  ps_config c;
  ps_buf err;
  int rc = load("report = { path = \"/srv/www/perf/index.html\"; since_days = 30;\n"
                "  min_interval_s = 0; chart_js = \"/opt/chart.js/chart.min.js\"; };\n",
                &c, &err);
  if (rc < 0)
    fail_msg("unexpected error: %s", err.data);
  assert_string_equal(c.report.path, "/srv/www/perf/index.html");
  assert_int_equal(c.report.since_days, 30);
  assert_int_equal(c.report.min_interval_s, 0);
  assert_string_equal(c.report.chart_js, "/opt/chart.js/chart.min.js");
  ps_buf_free(&err);
  ps_config_free(&c);
}

static void test_mistakes_named(void **state) {
  (void)state;
  expect_error("report = {\n  path = \"/x/index.html\";\n  since_day = 3;\n};\n",
               "perfship.cfg:3:", "did you mean 'since_days'?");
  expect_error("report = {\n  since_days = 0;\n};\n", "perfship.cfg:2:", "report.since_days");
  expect_error("report = {\n  min_interval_s = \"300\";\n};\n", "perfship.cfg:2:",
               "expected an integer");
  expect_error("report = {\n  chart_js = \"\";\n};\n", "perfship.cfg:2:", "must not be empty");
  /* the service runs in /, so a relative page would land in the wrong place */
  expect_error("report = {\n  path = \"report/index.html\";\n};\n", "perfship.cfg:1:",
               "not an absolute path");
  expect_error("report = \"/x/index.html\";\n", "perfship.cfg:1:", "expected a group");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults_write_no_page),
      cmocka_unit_test(test_every_key_read),
      cmocka_unit_test(test_mistakes_named),
  };
  return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
