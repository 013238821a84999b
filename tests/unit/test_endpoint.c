/*
 * test_endpoint.c: where and how perfship talks to the server
 * (influx/endpoint.h): write and query URLs per API, the default URL, and
 * what server text may be shown (secrets scrubbed, one line). The requests
 * themselves are tested against a real InfluxDB in
 * tests/integration/test_sink.py, test_check_mark.py and
 * test_influx_client.py.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "influx/endpoint.h"

/* Built by hand rather than by ps_config_defaults(), whose strings would
 * then be owned here: unset strings are NULL, which must be accepted. */
static ps_config base_config(void) {
  ps_config c;
  memset(&c, 0, sizeof c);
  c.influxdb.api = PS_API_V1;
  c.influxdb.tls_verify = 1;
  c.influxdb.timeout_ms = 2000;
  return c;
}

static void test_write_url_v1(void **state) {
  (void)state;
  ps_config c = base_config();
  char url[] = "http://db.example:8086//", db[] = "perf data", rp[] = "a&b";
  c.influxdb.url = url;
  c.influxdb.database = db;
  c.influxdb.retention_policy = rp;
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_influx_write_url(&c, &b), 0);
  assert_string_equal(b.data,
                      "http://db.example:8086/write?precision=n&db=perf%20data&rp=a%26b");
  ps_buf_free(&b);
}

static void test_write_url_v2(void **state) {
  (void)state;
  ps_config c = base_config();
  char url[] = "https://h", org[] = "my org", bucket[] = "b/rp";
  c.influxdb.api = PS_API_V2;
  c.influxdb.url = url;
  c.influxdb.org = org;
  c.influxdb.bucket = bucket;
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_influx_write_url(&c, &b), 0);
  assert_string_equal(b.data,
                      "https://h/api/v2/write?precision=ns&org=my%20org&bucket=b%2Frp");
  ps_buf_free(&b);
}

static void test_query_url(void **state) {
  (void)state;
  ps_config c = base_config();
  char url[] = "http://h:8086/", db[] = "perf", rp[] = "", rp2[] = "week ly",
       bucket[] = "b&x";
  c.influxdb.url = url;
  c.influxdb.database = db;
  c.influxdb.retention_policy = rp;
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_influx_query_url(&c, 1, &b), 0);
  assert_string_equal(b.data, "http://h:8086/query?epoch=ns&db=perf");
  ps_buf_reset(&b);
  c.influxdb.retention_policy = rp2;
  assert_int_equal(ps_influx_query_url(&c, 1, &b), 0);
  assert_string_equal(b.data, "http://h:8086/query?epoch=ns&db=perf&rp=week%20ly");
  ps_buf_reset(&b);
  /* CREATE DATABASE runs without a database */
  assert_int_equal(ps_influx_query_url(&c, 0, &b), 0);
  assert_string_equal(b.data, "http://h:8086/query?epoch=ns");
  ps_buf_reset(&b);
  /* v2: the bucket is the database of the v1-compatible endpoint */
  c.influxdb.api = PS_API_V2;
  c.influxdb.bucket = bucket;
  assert_int_equal(ps_influx_query_url(&c, 1, &b), 0);
  assert_string_equal(b.data, "http://h:8086/query?epoch=ns&db=b%26x");
  ps_buf_free(&b);
}

static void test_default_url(void **state) {
  (void)state;
  ps_config c = base_config();
  size_t n;
  const char *base = ps_influx_base_url(&c, &n);
  assert_int_equal(n, strlen(PS_INFLUX_DEFAULT_URL));
  assert_memory_equal(base, PS_INFLUX_DEFAULT_URL, n);
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_influx_write_url(&c, &b), 0);
  assert_string_equal(b.data, PS_INFLUX_DEFAULT_URL "/write?precision=n&db=");
  ps_buf_free(&b);
}

static void test_headers(void **state) {
  (void)state;
  ps_config c = base_config();
  char token[] = "s3cret-token";
  c.influxdb.token = token;
  ps_influx_headers h;
  /* v1 never sends the token, even when one is configured */
  assert_int_equal(ps_influx_headers_init(&h, &c, PS_INFLUX_CONTENT_LP, 0), 0);
  for (struct curl_slist *l = h.list; l; l = l->next)
    assert_null(strstr(l->data, token));
  ps_influx_headers_free(&h);
  assert_null(h.list);

  c.influxdb.api = PS_API_V2;
  assert_int_equal(ps_influx_headers_init(&h, &c, PS_INFLUX_CONTENT_FORM, 1), 0);
  int saw_token = 0, saw_gzip = 0, saw_type = 0;
  for (struct curl_slist *l = h.list; l; l = l->next) {
    saw_token += !strcmp(l->data, "Authorization: Token s3cret-token");
    saw_gzip += !strcmp(l->data, "Content-Encoding: gzip");
    saw_type += !strcmp(l->data, "Content-Type: application/x-www-form-urlencoded");
  }
  assert_int_equal(saw_token + saw_gzip + saw_type, 3);
  ps_influx_headers_free(&h);
}

static void test_redact_and_answer_text(void **state) {
  (void)state;
  ps_config c = base_config();
  char password[] = "hunter2", token[] = "tok";
  c.influxdb.password = password;
  c.influxdb.token = token;
  ps_buf out;
  ps_buf_init(&out, 0);
  const char *text = "user x with hunter2 and tok, hunter2tok";
  ps_influx_redact(&c, text, strlen(text), &out);
  assert_string_equal(out.data, "user x with *** and ***, ******");
  ps_buf_reset(&out);

  /* InfluxDB's JSON: the error member, newline cut, scrubbed */
  const char *j1 = "{\"error\":\"authorization failed for hunter2\\n\"}\n";
  ps_influx_answer_text(&c, j1, strlen(j1), &out);
  assert_string_equal(out.data, "authorization failed for ***");
  ps_buf_reset(&out);
  const char *j2 = "{\"results\":[{\"statement_id\":0,\"error\":\"database not found: x\"}]}";
  ps_influx_answer_text(&c, j2, strlen(j2), &out);
  assert_string_equal(out.data, "database not found: x");
  ps_buf_reset(&out);
  const char *plain = "<html>bad gateway</html>\r\n";
  ps_influx_answer_text(&c, plain, strlen(plain), &out);
  assert_string_equal(out.data, "<html>bad gateway</html>");
  ps_buf_reset(&out);
  ps_influx_answer_text(&c, NULL, 0, &out);
  assert_int_equal(out.len, 0);
  ps_buf_free(&out);
}

static void test_tls_hint(void **state) {
  (void)state;
  assert_string_equal(ps_influx_tls_hint(CURLE_COULDNT_CONNECT, "x"), "");
  assert_non_null(strstr(ps_influx_tls_hint(CURLE_PEER_FAILED_VERIFICATION,
                                            "SSL: no alternative certificate subject name "
                                            "matches target host name"),
                         "another name"));
  assert_non_null(strstr(ps_influx_tls_hint(CURLE_PEER_FAILED_VERIFICATION, ""),
                         "tls_ca_file"));
}

/* The head the sink's own connection sends: what curl would have sent
 * (Basic auth from the username, the token, the content type), without
 * the "Expect:" line that only tells curl to drop a header. */
static void test_request_head(void **state) {
  (void)state;
  ps_config c = base_config();
  char user[] = "Aladdin", pw[] = "open sesame";
  c.influxdb.username = user;
  c.influxdb.password = pw;
  ps_influx_headers h;
  assert_int_equal(ps_influx_headers_init(&h, &c, PS_INFLUX_CONTENT_LP, 1), 0);
  ps_buf head;
  ps_buf_init(&head, 0);
  assert_int_equal(ps_influx_request_head(&c, &h, "POST", "h:8086", "/write?db=x", &head), 0);
  assert_string_equal(head.data, "POST /write?db=x HTTP/1.1\r\n"
                                 "Host: h:8086\r\n"
                                 "Content-Type: text/plain; charset=utf-8\r\n"
                                 "Content-Encoding: gzip\r\n"
                                 /* RFC 7617's own example */
                                 "Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n"
                                 "Content-Length: ");
  ps_influx_head_free(&head);
  assert_null(head.data);
  ps_influx_headers_free(&h);

  /* v2: the token, no Basic auth; base64 of one and two leftover bytes */
  char token[] = "t0k";
  c.influxdb.api = PS_API_V2;
  c.influxdb.token = token;
  assert_int_equal(ps_influx_headers_init(&h, &c, PS_INFLUX_CONTENT_LP, 0), 0);
  ps_buf_init(&head, 0);
  assert_int_equal(ps_influx_request_head(&c, &h, "POST", "[::1]", "/api/v2/write", &head), 0);
  assert_non_null(strstr(head.data, "\r\nAuthorization: Token t0k\r\n"));
  assert_null(strstr(head.data, "Basic"));
  assert_null(strstr(head.data, "Expect"));
  ps_influx_head_free(&head);
  ps_influx_headers_free(&h);
  c.influxdb.api = PS_API_V1;
  char u1[] = "a", p1[] = "";
  c.influxdb.username = u1;
  c.influxdb.password = p1;
  ps_buf_init(&head, 0);
  assert_int_equal(ps_influx_request_head(&c, NULL, "POST", "h", "/", &head), 0);
  assert_non_null(strstr(head.data, "Authorization: Basic YTo=\r\n"));
  ps_influx_head_free(&head);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_write_url_v1), cmocka_unit_test(test_write_url_v2),
      cmocka_unit_test(test_query_url),    cmocka_unit_test(test_default_url),
      cmocka_unit_test(test_headers),      cmocka_unit_test(test_redact_and_answer_text),
      cmocka_unit_test(test_tls_hint),     cmocka_unit_test(test_request_head),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
