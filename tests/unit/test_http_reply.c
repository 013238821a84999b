/*
 * test_http_reply.c: answers as servers send them, read by
 * net/http_reply.h whole and byte by byte: InfluxDB 1.x's 204 and 400,
 * chunked bodies, HTTP/1.0, interim 100s, Retry-After, bodies past the
 * limit, and what must be refused (a cut answer, two lengths, a broken
 * chunk). The sink's own connection reads every answer through this.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "net/http_reply.h"

/* Begins an answer kept in `body` (NULL: none) up to `limit`, and feeds
 * it `text` in pieces of `step` bytes (0: whole); returns the last feed's
 * result (r->received: the bytes used). */
static long read_answer(ps_http_reply *r, ps_buf *body, size_t limit, const char *text,
                        size_t step) {
  ps_http_reply_begin(r, body, limit);
  size_t n = strlen(text), at = 0;
  long rc = 0;
  while (at < n) {
    size_t take = step && step < n - at ? step : n - at;
    rc = ps_http_reply_feed(r, text + at, take);
    if (rc < 0)
      return rc;
    at += take;
    if (r->done)
      break;
  }
  return rc;
}

static const char INFLUX_204[] = "HTTP/1.1 204 No Content\r\n"
                                 "Content-Type: application/json\r\n"
                                 "Request-Id: 5f6c8a3e-5c1e-11ef-8001-000000000000\r\n"
                                 "X-Influxdb-Build: OSS\r\n"
                                 "X-Influxdb-Version: 1.6.7~rc0\r\n"
                                 "Date: Sat, 05 Dec 2026 15:00:00 GMT\r\n"
                                 "\r\n";

static void test_influx_204_any_split(void **state) {
  (void)state;
  ps_buf body;
  ps_buf_init(&body, 0);
  for (size_t step = 0; step < 9; step++) {
    ps_http_reply r;
    assert_true(read_answer(&r, &body, 1024, INFLUX_204, step) >= 0);
    assert_true(r.done);
    assert_int_equal(r.received, strlen(INFLUX_204));
    assert_int_equal(r.status, 204);
    assert_false(r.close);
    assert_int_equal(body.len, 0);
  }
  ps_buf_free(&body);
}

static void test_influx_400_body_by_length(void **state) {
  (void)state;
  const char *msg =
      "{\"error\":\"partial write: unable to parse 'x': missing fields dropped=0\"}\n";
  char text[512];
  snprintf(text, sizeof text,
           "HTTP/1.1 400 Bad Request\r\ncontent-length: %zu\r\nX-Influxdb-Error: x\r\n\r\n%s",
           strlen(msg), msg);
  ps_buf body;
  ps_buf_init(&body, 0);
  for (size_t step = 0; step < 4; step++) {
    ps_http_reply r;
    assert_true(read_answer(&r, &body, 1024, text, step) >= 0);
    assert_true(r.done);
    assert_int_equal(r.status, 400);
    assert_string_equal(body.data, msg);
  }
  ps_buf_free(&body);
}

static void test_chunked_with_extensions_and_trailers(void **state) {
  (void)state;
  const char *text = "HTTP/1.1 503 Service Unavailable\r\n"
                     "Transfer-Encoding: gzip, chunked\r\n"
                     "Retry-After: 7\r\n"
                     "\r\n"
                     "5;name=x\r\nhello\r\n"
                     "1\r\n \r\n"
                     "5\r\nworld\r\n"
                     "0\r\nX-Trailer: y\r\n\r\n";
  ps_buf body;
  ps_buf_init(&body, 0);
  for (size_t step = 0; step < 5; step++) {
    ps_http_reply r;
    assert_true(read_answer(&r, &body, 1024, text, step) >= 0);
    assert_true(r.done);
    assert_int_equal(r.received, strlen(text));
    assert_int_equal(r.status, 503);
    assert_int_equal(r.retry_after_s, 7);
    assert_string_equal(body.data, "hello world");
  }
  ps_buf_free(&body);
}

static void test_interim_100_is_skipped(void **state) {
  (void)state;
  const char *text = "HTTP/1.1 100 Continue\r\n\r\n"
                     "HTTP/1.1 204 No Content\r\n\r\n";
  ps_http_reply r;
  assert_true(read_answer(&r, NULL, 0, text, 3) >= 0);
  assert_true(r.done);
  assert_int_equal(r.status, 204);
}

/* HTTP/1.0 without keep-alive and a body without a length: both end with
 * the connection; bare LFs are read as line ends. */
static void test_http10_body_until_close(void **state) {
  (void)state;
  ps_buf body;
  ps_buf_init(&body, 0);
  ps_http_reply r;
  assert_true(read_answer(&r, &body, 1024, "HTTP/1.0 500 Oops\nServer: x\n\nboom", 0) >= 0);
  assert_false(r.done);
  assert_true(r.close);
  assert_int_equal(ps_http_reply_eof(&r), 0);
  assert_true(r.done);
  assert_int_equal(r.status, 500);
  assert_string_equal(body.data, "boom");

  assert_true(read_answer(&r, &body, 1024,
                          "HTTP/1.0 204 No Content\r\nConnection: keep-alive\r\n\r\n", 0) >= 0);
  assert_true(r.done);
  assert_false(r.close);
  ps_buf_free(&body);
}

static void test_connection_close_and_status_without_reason(void **state) {
  (void)state;
  ps_http_reply r;
  assert_true(
      read_answer(&r, NULL, 0, "HTTP/1.1 204\r\nConnection: Keep-Alive, Close\r\n\r\n", 0) >= 0);
  assert_true(r.done);
  assert_true(r.close);
  assert_int_equal(r.status, 204);
}

static void test_retry_after_as_a_date(void **state) {
  (void)state;
  char text[256];
  time_t at = time(NULL) + 120;
  struct tm tm;
  gmtime_r(&at, &tm);
  char date[64];
  strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  snprintf(text, sizeof text,
           "HTTP/1.1 429 Too Many\r\nRetry-After: %s\r\nContent-Length: 0\r\n\r\n", date);
  ps_http_reply r;
  assert_true(read_answer(&r, NULL, 0, text, 0) >= 0);
  assert_true(r.done);
  assert_true(r.retry_after_s >= 118 && r.retry_after_s <= 120);

  assert_true(read_answer(&r, NULL, 0,
                          "HTTP/1.1 503 x\r\nRetry-After: Thu, 01 Jan 1970 00:00:00 GMT\r\n"
                          "Content-Length: 0\r\n\r\n",
                          0) >= 0);
  assert_int_equal(r.retry_after_s, 0);
}

/* A body past the limit is read whole (the next answer starts after it)
 * but only `limit` bytes are kept. */
static void test_body_past_the_limit(void **state) {
  (void)state;
  ps_buf body;
  ps_buf_init(&body, 0);
  ps_http_reply r;
  ps_http_reply_begin(&r, &body, 4);
  const char *text = "HTTP/1.1 400 Bad\r\nContent-Length: 10\r\n\r\n0123456789"
                     "HTTP/1.1 204 No Content\r\n\r\n";
  long used = ps_http_reply_feed(&r, text, strlen(text));
  assert_true(r.done);
  assert_true(r.answer.truncated);
  assert_string_equal(body.data, "0123");
  /* what follows belongs to no answer, and is not used */
  assert_int_equal(used, (long)(strchr(text, '9') - text + 1));
  ps_buf_free(&body);
}

static void test_refused(void **state) {
  (void)state;
  static const char *bad[] = {
      "HTTP/2 200 OK\r\n\r\n",
      "ICY 200 OK\r\n\r\n",
      "HTTP/1.1 20 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n",
      "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n",
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
      "HTTP/1.1 101 Switching Protocols\r\n\r\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ps_http_reply r;
    assert_int_equal(read_answer(&r, NULL, 0, bad[i], 0), -EPROTO);
    assert_non_null(r.error);
    assert_false(r.done);
  }
  /* a header line past the bound */
  char big[PS_HTTP_REPLY_LINE_MAX + 64];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
  ps_http_reply r;
  ps_http_reply_begin(&r, NULL, 0);
  assert_int_equal(ps_http_reply_feed(&r, big, strlen(big)), -EPROTO);
}

static void test_eof_cuts(void **state) {
  (void)state;
  ps_http_reply r;
  ps_http_reply_begin(&r, NULL, 0);
  assert_int_equal(ps_http_reply_eof(&r), -ECONNRESET); /* nothing came */
  ps_http_reply_begin(&r, NULL, 0);
  assert_int_equal(ps_http_reply_feed(&r, "HTTP/1.1 204 No", 15), 15);
  assert_int_equal(ps_http_reply_eof(&r), -EPROTO);
  assert_non_null(r.error);
  const char *text = "HTTP/1.1 400 Bad\r\nContent-Length: 10\r\n\r\n01234";
  ps_http_reply_begin(&r, NULL, 0);
  assert_int_equal(ps_http_reply_feed(&r, text, strlen(text)), (long)strlen(text));
  assert_int_equal(ps_http_reply_eof(&r), -EPROTO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_influx_204_any_split),
      cmocka_unit_test(test_influx_400_body_by_length),
      cmocka_unit_test(test_chunked_with_extensions_and_trailers),
      cmocka_unit_test(test_interim_100_is_skipped),
      cmocka_unit_test(test_http10_body_until_close),
      cmocka_unit_test(test_connection_close_and_status_without_reason),
      cmocka_unit_test(test_retry_after_as_a_date),
      cmocka_unit_test(test_body_past_the_limit),
      cmocka_unit_test(test_refused),
      cmocka_unit_test(test_eof_cuts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
