/*
 * test_readback.c: the read-back layer's pure parts (readback/answer.h,
 * statement.h, status.h, query.h's ps_rb_error_of): the answer walk over
 * statements, series, rows and chunks, typed cells and tags, the quoting
 * and time bounds of statements, the mapping of server answers to codes,
 * the run-status table. Sending statements to a real server is the
 * integration tests' part (test_reads, test_report, test_verdicts).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "readback/answer.h"
#include "readback/query.h"
#include "readback/statement.h"
#include "readback/status.h"

static size_t count_rows(const char *json) {
  ps_rb_answer a;
  assert_int_equal(ps_rb_answer_parse(&a, json, strlen(json)), 0);
  size_t n = 0;
  while (ps_rb_answer_next(&a))
    n++;
  ps_rb_answer_free(&a);
  return n;
}

static void test_rows_of_every_statement_and_series(void **state) {
  (void)state;
  const char *json =
      "{\"results\":[{\"statement_id\":0,\"series\":["
      "{\"name\":\"loadgen_run\",\"tags\":{\"run\":\"r1\",\"host\":\"\"},"
      "\"columns\":[\"time\",\"status\",\"x\",\"ok\"],"
      "\"values\":[[1700000000000001000,\"success\",1.5,true],[2,null,\"s\",false]]},"
      "{\"name\":\"loadgen_run\",\"tags\":{\"run\":\"r2\"},\"columns\":[\"time\",\"x\"],"
      "\"values\":[[3,7]]}]},"
      "{\"statement_id\":1,\"series\":[{\"columns\":[\"time\",\"run\"],"
      "\"values\":[[4,\"r3\"]]}]}]}";
  ps_rb_answer a;
  assert_int_equal(ps_rb_answer_parse(&a, json, strlen(json)), 0);
  assert_true(ps_rb_answer_whole(&a));
  assert_null(ps_rb_answer_error(&a));
  const ps_rb_row *r = ps_rb_answer_next(&a);
  assert_non_null(r);
  assert_int_equal(r->statement, 0);
  assert_string_equal(r->name, "loadgen_run");
  assert_string_equal(ps_rb_tag(r, "run"), "r1");
  assert_null(ps_rb_tag(r, "host")); /* GROUP BY's "" is no tag */
  assert_string_equal(ps_rb_str(r, "status"), "success");
  assert_true(ps_rb_num(r, "x") == 1.5);
  assert_int_equal(ps_rb_bool(r, "ok"), 1);
  assert_int_equal(ps_rb_time_us(r), 1700000000000001000LL);
  r = ps_rb_answer_next(&a);
  assert_null(ps_rb_str(r, "status"));
  assert_true(isnan(ps_rb_num(r, "x"))); /* a string is no number */
  assert_int_equal(ps_rb_bool(r, "ok"), 0);
  assert_int_equal(ps_rb_bool(r, "missing"), -1);
  assert_null(ps_rb_cell(r, "missing"));
  r = ps_rb_answer_next(&a);
  assert_string_equal(ps_rb_tag(r, "run"), "r2");
  assert_int_equal(ps_rb_time_ns(r), 3);
  r = ps_rb_answer_next(&a);
  assert_int_equal(r->statement, 1);
  assert_string_equal(ps_rb_tag(r, "run"), "r3"); /* a tag as a column */
  assert_null(ps_rb_answer_next(&a));
  assert_null(ps_rb_answer_next(&a));
  ps_rb_answer_rewind(&a); /* the same rows again */
  r = ps_rb_answer_next(&a);
  assert_non_null(r);
  assert_string_equal(ps_rb_tag(r, "run"), "r1");
  ps_rb_answer_free(&a);
}

static void test_last_row_of_each_series(void **state) {
  (void)state;
  const char *json = "{\"results\":[{\"series\":["
                     "{\"columns\":[\"time\"],\"values\":[[1],[2]]},"
                     "{\"columns\":[\"time\"],\"values\":[]},"
                     "{\"columns\":[\"time\"],\"values\":[[5]]}]}]}";
  ps_rb_answer a;
  assert_int_equal(ps_rb_answer_parse(&a, json, strlen(json)), 0);
  assert_int_equal(ps_rb_time_ns(ps_rb_answer_next_series(&a)), 2);
  assert_int_equal(ps_rb_time_ns(ps_rb_answer_next_series(&a)), 5);
  assert_null(ps_rb_answer_next_series(&a));
  ps_rb_answer_free(&a);
}

/* A chunked answer is documents one after another; a statement's series
 * goes on in the next. */
static void test_chunked_answer(void **state) {
  (void)state;
  const char *json = "{\"results\":[{\"statement_id\":0,\"series\":[{\"columns\":[\"time\"],"
                     "\"values\":[[1],[2]],\"partial\":true}],\"partial\":true}]}\n"
                     "{\"results\":[{\"statement_id\":0,\"series\":[{\"columns\":[\"time\"],"
                     "\"values\":[[3]]}]}]}\n";
  ps_rb_answer a;
  assert_int_equal(ps_rb_answer_parse(&a, json, strlen(json)), 0);
  assert_int_equal(a.ndocs, 2);
  int64_t want = 1;
  for (const ps_rb_row *r; (r = ps_rb_answer_next(&a)); want++) {
    assert_int_equal(r->statement, 0);
    assert_int_equal(ps_rb_time_ns(r), want);
  }
  assert_int_equal(want, 4);
  ps_rb_answer_free(&a);
}

static void test_shapes_that_are_no_rows(void **state) {
  (void)state;
  assert_int_equal(count_rows(""), 0);
  assert_int_equal(count_rows("not json"), 0);
  assert_int_equal(count_rows("[1,2]"), 0);
  assert_int_equal(count_rows("{\"results\":{}}"), 0);
  assert_int_equal(count_rows("{\"results\":[1,{\"series\":{}},{\"series\":[1]}]}"), 0);
  assert_int_equal(count_rows("{\"results\":[{\"series\":[{\"values\":[[1]]}]}]}"), 0);
  assert_int_equal(
      count_rows("{\"results\":[{\"series\":[{\"columns\":[\"time\"],\"values\":[1,[2],{}]}]}]}"),
      1);
  const char *bad = "{\"results\":[{\"statement_id\":0,\"error\":\"database not found: x\"}]}";
  ps_rb_answer a;
  assert_int_equal(ps_rb_answer_parse(&a, bad, strlen(bad)), 0);
  assert_false(ps_rb_answer_whole(&a));
  assert_string_equal(ps_rb_answer_error(&a), "database not found: x");
  ps_rb_answer_free(&a);
  assert_int_equal(ps_rb_answer_parse(&a, "{}", 2), 0);
  assert_false(ps_rb_answer_whole(&a));
  ps_rb_answer_free(&a);
}

static void test_times_beyond_what_influxdb_stores(void **state) {
  (void)state;
  const char *json = "{\"results\":[{\"series\":[{\"columns\":[\"time\"],"
                     "\"values\":[[1.6e20],[\"2024-01-01T00:00:00Z\"]]}]}]}";
  ps_rb_answer a;
  assert_int_equal(ps_rb_answer_parse(&a, json, strlen(json)), 0);
  const ps_rb_row *r = ps_rb_answer_next(&a);
  assert_int_equal(ps_rb_time_ns(r), 0);
  assert_int_equal(ps_rb_time_us(r), 0);
  r = ps_rb_answer_next(&a);
  assert_int_equal(ps_rb_time_ns(r), 0);
  ps_rb_answer_free(&a);
}

/* The strict reading takes the whole answer or says the first thing
 * wrong. */
static void check_says(const char *json, const char *want) {
  static const char *const strings[] = {"status", NULL};
  ps_rb_answer a;
  ps_buf why;
  ps_buf_init(&why, 0);
  assert_int_equal(ps_rb_answer_parse(&a, json, strlen(json)), 0);
  int rc = ps_rb_answer_check(&a, strings, &why);
  if (want) {
    assert_int_equal(rc, -EPROTO);
    assert_non_null(strstr(why.data, want));
  } else {
    assert_int_equal(rc, 0);
  }
  ps_rb_answer_free(&a);
  ps_buf_free(&why);
}

static void test_strict_check(void **state) {
  (void)state;
  check_says("{\"results\":[{\"series\":[{\"tags\":{\"run\":\"a\"},"
             "\"columns\":[\"time\",\"status\",\"x\"],"
             "\"values\":[[1,\"success\",2.5],[2,null,null]]}]},{}]}",
             NULL);
  check_says("", "not JSON");
  check_says("{}", "no list of results");
  check_says("{\"results\":[{\"error\":\"boom\"}]}", "the server said: boom");
  check_says("{\"results\":[{\"series\":[{\"columns\":[\"x\"]}]}]}", "no time column");
  check_says("{\"results\":[{\"series\":[{\"columns\":[\"time\",\"x\"],"
             "\"values\":[[1]]}]}]}",
             "row 1 is not a list of 2 values");
  check_says("{\"results\":[{\"series\":[{\"columns\":[\"time\",\"status\"],"
             "\"values\":[[1,3]]}]}]}",
             "row 1: status is not a string");
  check_says("{\"results\":[{\"series\":[{\"columns\":[\"time\",\"x\"],"
             "\"values\":[[1,\"s\"]]}]}]}",
             "row 1: x is not a number");
  check_says("{\"results\":[{\"series\":[{\"columns\":[\"time\"],"
             "\"values\":[[1.6e20]]}]}]}",
             "not a time in nanoseconds");
  check_says("{\"results\":[{\"series\":[{\"tags\":{\"run\":1},\"columns\":[\"time\"]}]}]}",
             "the tag 'run' is not a string");
  /* a chunked answer is checked in every chunk */
  check_says("{\"results\":[]}\n{\"results\":[{\"error\":\"late\"}]}", "late");
}

static void test_statement_pieces(void **state) {
  (void)state;
  ps_buf q;
  ps_buf_init(&q, 0);
  assert_int_equal(ps_buf_puts(&q, "SELECT "), 0);
  assert_int_equal(ps_rb_ident(&q, "a\"b"), 0);
  assert_int_equal(ps_buf_puts(&q, " FROM \"m\""), 0);
  assert_int_equal(ps_rb_time_range(&q, -5, 0), 0);
  assert_int_equal(ps_rb_tag_is(&q, "run", "it's"), 0);
  assert_int_equal(ps_rb_tag_is(&q, "host", NULL), 0);
  assert_int_equal(ps_rb_and_time_range(&q, 10, 20), 0);
  assert_string_equal(q.data, "SELECT \"a\\\"b\" FROM \"m\" WHERE time >= 0 AND \"run\" = "
                              "'it\\'s' AND time >= 10 AND time < 20");
  assert_int_equal(ps_rb_string(&q, "a\rb"), -EINVAL);
  assert_int_equal(ps_rb_tag_is(&q, "run", "a\rb"), -EINVAL);
  assert_int_equal(ps_rb_ident(&q, NULL), -EINVAL);
  ps_buf_free(&q);
}

static void test_server_answers_to_codes(void **state) {
  (void)state;
  assert_int_equal(ps_rb_error_of(200, NULL), 0);
  assert_int_equal(ps_rb_error_of(401, "authorization failed"), -EACCES);
  assert_int_equal(ps_rb_error_of(403, NULL), -EACCES);
  assert_int_equal(ps_rb_error_of(404, NULL), -EOPNOTSUPP);
  assert_int_equal(ps_rb_error_of(200, "database not found: perf"), -ENOENT);
  assert_int_equal(ps_rb_error_of(400, "Query would exceed file limit of 432 parquet files"),
                   -E2BIG);
  assert_int_equal(ps_rb_error_of(400, "too many files"), -E2BIG);
  assert_int_equal(ps_rb_error_of(400, "SHOW SERIES is not supported"), -EOPNOTSUPP);
  assert_int_equal(ps_rb_error_of(400, "error parsing query: found EOF"), -EPROTO);
  assert_int_equal(ps_rb_error_of(500, NULL), -EPROTO);
}

static void test_status_names(void **state) {
  (void)state;
  const char *names[] = {"running", "success", "failed", "interrupted", "stalled"};
  for (size_t i = 0; i < 5; i++) {
    ps_rb_status s = ps_rb_status_named(names[i]);
    assert_int_not_equal(s, PS_RB_UNKNOWN);
    assert_string_equal(ps_rb_status_name(s), names[i]);
  }
  assert_int_equal(ps_rb_status_named(NULL), PS_RB_UNKNOWN);
  assert_int_equal(ps_rb_status_named("Success"), PS_RB_UNKNOWN);
  assert_string_equal(ps_rb_status_name(PS_RB_UNKNOWN), "unknown");
  assert_int_equal(ps_rb_run_status(PS_RB_SUCCESS), PS_RUN_STATUS_SUCCESS);
  assert_int_equal(ps_rb_run_status(PS_RB_STALLED), PS_RUN_STATUS_STALLED);
  assert_int_equal(ps_rb_run_status(PS_RB_RUNNING), PS_RUN_STATUS_NONE);
  assert_int_equal(ps_rb_run_status(PS_RB_UNKNOWN), PS_RUN_STATUS_NONE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows_of_every_statement_and_series),
      cmocka_unit_test(test_last_row_of_each_series),
      cmocka_unit_test(test_chunked_answer),
      cmocka_unit_test(test_shapes_that_are_no_rows),
      cmocka_unit_test(test_times_beyond_what_influxdb_stores),
      cmocka_unit_test(test_strict_check),
      cmocka_unit_test(test_statement_pieces),
      cmocka_unit_test(test_server_answers_to_codes),
      cmocka_unit_test(test_status_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
