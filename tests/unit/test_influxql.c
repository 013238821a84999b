/*
 * test_influxql.c: quoting data-derived names and values into InfluxQL
 * (influx/influxql.h). Expected texts are written out by hand from the
 * scanner's four escapes; tests/integration/test_influx_client.py sends
 * such queries to a real InfluxDB and checks they select exactly the
 * planted rows.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "influx/influxql.h"

static void check(int (*quote)(ps_buf *, const char *), const char *in, const char *want) {
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_buf_puts(&b, "x="), 0);
  assert_int_equal(quote(&b, in), 0);
  assert_string_equal(b.data + 2, want);
  ps_buf_free(&b);
}

static void test_ident(void **state) {
  (void)state;
  check(ps_influxql_quote_ident, "cpu", "\"cpu\"");
  check(ps_influxql_quote_ident, "", "\"\"");
  /* a keyword or spaces are fine inside quotes */
  check(ps_influxql_quote_ident, "select from", "\"select from\"");
  check(ps_influxql_quote_ident, "a\"b", "\"a\\\"b\"");
  check(ps_influxql_quote_ident, "a\\b", "\"a\\\\b\"");
  /* a trailing backslash must not escape the closing quote */
  check(ps_influxql_quote_ident, "tail\\", "\"tail\\\\\"");
  /* the other quote character needs no escape */
  check(ps_influxql_quote_ident, "it's", "\"it's\"");
  check(ps_influxql_quote_ident, "two\nlines", "\"two\\nlines\"");
  check(ps_influxql_quote_ident, "caf\xc3\xa9", "\"caf\xc3\xa9\"");
}

static void test_string(void **state) {
  (void)state;
  check(ps_influxql_quote_string, "run-1", "'run-1'");
  check(ps_influxql_quote_string, "it's", "'it\\'s'");
  check(ps_influxql_quote_string, "say \"hi\"", "'say \"hi\"'");
  check(ps_influxql_quote_string, "C:\\runs\\", "'C:\\\\runs\\\\'");
  /* the classic: a value that tries to end the literal and add a clause */
  check(ps_influxql_quote_string, "x' OR 'a'='a",
        "'x\\' OR \\'a\\'=\\'a'");
  check(ps_influxql_quote_string, "x'; DROP DATABASE perf; --",
        "'x\\'; DROP DATABASE perf; --'");
  check(ps_influxql_quote_string, "\\'", "'\\\\\\''");
}

static void test_refused(void **state) {
  (void)state;
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_buf_puts(&b, "keep"), 0);
  assert_int_equal(ps_influxql_quote_string(&b, "a\rb"), -EINVAL);
  assert_int_equal(ps_influxql_quote_ident(&b, "a\r\nb"), -EINVAL);
  assert_int_equal(ps_influxql_quote_ident(&b, NULL), -EINVAL);
  assert_string_equal(b.data, "keep");
  ps_buf_free(&b);

  /* A buffer at its limit takes nothing, not half a literal. */
  ps_buf_init(&b, 8);
  assert_int_equal(ps_buf_puts(&b, "abc"), 0);
  assert_int_equal(ps_influxql_quote_string(&b, "longer than it fits"), -E2BIG);
  assert_string_equal(b.data, "abc");
  assert_int_equal(b.len, 3);
  ps_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ident),
      cmocka_unit_test(test_string),
      cmocka_unit_test(test_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
