/*
 * test_http_conn.c: which URLs the agent's own connection serves
 * (net/http_conn.h: plain http, no credentials in the URL, no proxy set),
 * how it names the host, the Host header and the path, and which URLs
 * name this machine. The
 * connection itself carries every write of tests/integration/test_sink.py
 * and test_faults.py, against a real InfluxDB behind a fault-injecting
 * proxy; its answers' parsing is tested in test_http_reply.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/http_conn.h"

static int setup(void **state) {
  (void)state;
  unsetenv("http_proxy");
  unsetenv("all_proxy");
  unsetenv("ALL_PROXY");
  return 0;
}

static void expect_target(const char *url, const char *host, const char *port,
                          const char *authority, const char *path) {
  ps_http_target t;
  assert_int_equal(ps_http_target_parse(url, &t), 1);
  assert_string_equal(t.host, host);
  assert_string_equal(t.port, port);
  assert_string_equal(t.authority, authority);
  assert_string_equal(t.path, path);
  ps_http_target_free(&t);
  assert_null(t.host);
}

static void test_plain_http_is_served(void **state) {
  (void)state;
  expect_target("http://127.0.0.1:8086/write?precision=n&db=perf%20data", "127.0.0.1", "8086",
                "127.0.0.1:8086", "/write?precision=n&db=perf%20data");
  expect_target("http://localhost/write?db=x", "localhost", "80", "localhost", "/write?db=x");
  expect_target("http://[::1]:9/influx/api/v2/write?org=o", "::1", "9", "[::1]:9",
                "/influx/api/v2/write?org=o");
  expect_target("http://h", "h", "80", "h", "/");
}

static void test_what_curl_must_serve(void **state) {
  (void)state;
  static const char *curl_only[] = {
      "https://127.0.0.1:8086/write",
      "http://u:p@127.0.0.1/write",
      "http://u@h/write",
      "ftp://h/x",
      "not a url",
  };
  for (size_t i = 0; i < sizeof curl_only / sizeof *curl_only; i++) {
    ps_http_target t;
    assert_int_equal(ps_http_target_parse(curl_only[i], &t), 0);
    assert_null(t.host);
  }
  const char *proxies[] = {"http_proxy", "all_proxy", "ALL_PROXY"};
  for (size_t i = 0; i < 3; i++) {
    setenv(proxies[i], "http://proxy:3128", 1);
    ps_http_target t;
    assert_int_equal(ps_http_target_parse("http://127.0.0.1:8086/write", &t), 0);
    unsetenv(proxies[i]);
  }
  /* set but empty: no proxy, as for curl */
  setenv("http_proxy", "", 1);
  expect_target("http://h:1/", "h", "1", "h:1", "/");
  unsetenv("http_proxy");
}

static void test_loopback_urls(void **state) {
  (void)state;
  static const char *here[] = {"http://localhost:8086", "https://LOCALHOST./x",
                               "http://127.0.0.1:1/write", "http://127.9.8.7",
                               "https://[::1]:8086/"};
  static const char *there[] = {"http://db.example:8086", "http://10.0.0.1", "http://[::2]:8086",
                                "http://128.0.0.1", "not a url"};
  for (size_t i = 0; i < 5; i++) {
    assert_int_equal(ps_http_url_is_loopback(here[i]), 1);
    assert_int_equal(ps_http_url_is_loopback(there[i]), 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_plain_http_is_served, setup),
      cmocka_unit_test_setup(test_what_curl_must_serve, setup),
      cmocka_unit_test(test_loopback_urls),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
