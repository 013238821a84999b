/*
 * test_locust.c: the locust parser against the synthetic --csv fixtures and
 * hand-made edge cases: quoted cells (commas, quotes, line breaks), N/A,
 * integer columns, the Aggregated row, a history parser opened mid-file,
 * back-pressure resume.
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

#define LOCUST_DIR PS_TEST_DATA "/dss/synth/locust_isa/"

static const ps_format_ops *ops = &ps_format_locust;

static int64_t mtime_ns(const char *path) {
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  return (int64_t)st.st_mtime * 1000000000LL;
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void convert_document(const char *path, capture *cap) {
  cap_convert_document(ops, path, cap);
}

/* Feeds lines from byte offset `from` the way the tailer does: without the
 * '\n', the '\r' stripped. */
static void convert_lines(const char *path, size_t from, capture *cap) {
  ps_parser *p = cap_open(ops, path, PS_INPUT_LINES);
  size_t len;
  char *data = cap_slurp(path, &len);
  ps_emitter em = cap_emitter(cap, path);
  uint64_t line = 1;
  for (size_t i = 0; i < from; i++)
    line += data[i] == '\n';
  size_t pos = from;
  while (pos < len) {
    char *nl = memchr(data + pos, '\n', len - pos);
    if (!nl)
      break;
    size_t n = (size_t)(nl - (data + pos));
    if (n && data[pos + n - 1] == '\r')
      n--;
    em.origin.line = line++;
    assert_int_equal(ops->line(p, data + pos, n, &em), 0);
    pos = (size_t)(nl - data) + 1;
  }
  free(data);
  ops->free(p);
}

static const cap_point *find2(const capture *c, const char *m,
                              const char *type, const char *name) {
  char t[160], n[512];
  snprintf(t, sizeof t, "type=%s", type);
  snprintf(n, sizeof n, "name=%s", name);
  const char *kv[] = {t, n, NULL};
  return cap_find_nth(c, m, 0, kv);
}

static void test_stats_fixture(void **state) {
  (void)state;
  const char *path = LOCUST_DIR "isa_stats.csv";
  capture cap = {0};
  convert_document(path, &cap);
  assert_int_equal(cap.nrejects, 0);
  assert_int_equal(cap_count(&cap, "locust_stats"), 5);
  const cap_point *p =
      find2(&cap, "locust_stats", "GET", "/identification_service_areas/[target_isa]");
  assert_non_null(p);
  assert_string_equal(cap_tag(p, "run"), "isa");
  assert_int_equal(cap_int(p, "request_count"), 2751);
  assert_int_equal(cap_int(p, "failure_count"), 10);
  assert_true(cap_float(p, "median_response_time") == 36);
  assert_true(cap_float(p, "average_response_time") == 38.79199729580063);
  assert_true(cap_float(p, "requests_per_s") == 15.283333333333333);
  assert_true(cap_float(p, "failures_per_s") == 0.05555555555555555);
  assert_true(cap_float(p, "p50") == 36);
  assert_true(cap_float(p, "p99_9") == 120);
  assert_true(cap_float(p, "p99_99") == 130);
  assert_true(cap_float(p, "p100") == 130);
  assert_true(cap_float(p, "average_content_size") == 569.2733551435841);
  assert_int_equal(p->time_ns, mtime_ns(path));

  /* the Aggregated row: no type tag at all */
  const char *kv[] = {"name=Aggregated", NULL};
  p = cap_find_nth(&cap, "locust_stats", 0, kv);
  assert_non_null(p);
  assert_null(cap_tag(p, "type"));
  assert_int_equal(cap_int(p, "request_count"), 3188);
  assert_true(cap_float(p, "p95") == 240);
  cap_free(&cap);
}

static void test_failures_fixture(void **state) {
  (void)state;
  const char *path = LOCUST_DIR "isa_failures.csv";
  capture cap = {0};
  convert_document(path, &cap);
  assert_int_equal(cap.nrejects, 0);
  assert_int_equal(cap_count(&cap, "locust_failures"), 22);
  /* rows with the same tags stay apart by a nanosecond row offset */
  for (size_t i = 0; i < cap.npoints; i++) {
    assert_int_equal(cap.points[i].time_ns, mtime_ns(path) + (int64_t)i);
    assert_int_equal(cap.points[i].line, i + 2);
  }
  const cap_point *p = &cap.points[0];
  assert_string_equal(cap_tag(p, "type"), "PUT");
  assert_string_equal(cap_tag(p, "name"), "/identification_service_areas/[isa_uuid]");
  assert_int_equal(cap_int(p, "occurrences"), 1);
  const cap_field *e = cap_field_of(p, "error");
  assert_int_equal(e->type, PS_F_STRING);
  assert_string_equal(e->s, "HTTPError('409 Client Error: Conflict for url: "
                            "http://dss.lb.localutm/rid/v2/dss/"
                            "identification_service_areas/"
                            "005ab498-0ff7-4095-884a-1167306fe005')");
  cap_free(&cap);
}

static void test_history_fixture_and_restart(void **state) {
  (void)state;
  const char *path = LOCUST_DIR "isa_stats_history.csv";
  capture cap = {0};
  convert_lines(path, 0, &cap);
  assert_int_equal(cap.nrejects, 0);
  assert_int_equal(cap_count(&cap, "locust_history"), 180);
  const cap_point *p = &cap.points[3];
  /* its Timestamp plus its line number (5) in ns */
  assert_int_equal(p->time_ns, 1781000003LL * 1000000000LL + 5);
  assert_null(cap_tag(p, "type"));
  assert_string_equal(cap_tag(p, "name"), "Aggregated");
  assert_string_equal(cap_tag(p, "run"), "isa");
  assert_int_equal(cap_int(p, "user_count"), 4);
  assert_true(cap_float(p, "requests_per_s") == 0.3);
  assert_int_equal(cap_int(p, "total_request_count"), 19);
  assert_int_equal(cap_int(p, "total_failure_count"), 0);
  assert_true(cap_float(p, "total_median_response_time") == 32);
  assert_true(cap_float(p, "total_average_content_size") == 581.7894736842105);
  assert_null(cap_field_of(p, "timestamp"));

  /* after a restart the parser starts mid-file: the header read in open()
   * still names every column */
  size_t len;
  char *data = cap_slurp(path, &len);
  size_t from = 0;
  for (int nl = 0; nl < 100; from++)
    nl += data[from] == '\n';
  free(data);
  capture again = {0};
  convert_lines(path, from, &again);
  assert_int_equal(again.nrejects, 0);
  assert_int_equal(again.npoints, 81);
  assert_int_equal(again.points[0].nfields, cap.points[99].nfields);
  assert_int_equal(again.points[0].time_ns, cap.points[99].time_ns);
  assert_int_equal(cap_int(&again.points[0], "total_request_count"),
                   cap_int(&cap.points[99], "total_request_count"));
  cap_free(&cap);
  cap_free(&again);
}

static void test_quoting_na_and_bad_rows(void **state) {
  (void)state;
  char dir[64];
  assert_int_equal(aux_tmpdir_make(dir, sizeof dir, "locust"), 0);
  char path[256];
  snprintf(path, sizeof path, "%s/run 7_failures.csv", dir);
  write_file(path,
             "Method,Name,Error,Occurrences\r\n"
             "POST,/a,\"ValueError('x, y')\",3\r\n"
             "GET,\"/b,c\",\"said \"\"no\"\"\",2\r\n"
             "GET,/d,\"two\r\nlines\",1\r\n"
             "GET,/e,oops,many\r\n"
             "GET,/f\r\n"
             "\r\n"
             "DELETE,/g,plain,1.0\r\n");
  capture cap = {0};
  convert_document(path, &cap);
  assert_int_equal(cap_count(&cap, "locust_failures"), 4);
  assert_string_equal(cap_tag(&cap.points[0], "run"), "run 7");
  assert_string_equal(cap_field_of(&cap.points[0], "error")->s,
                      "ValueError('x, y')");
  assert_int_equal(cap_int(&cap.points[0], "occurrences"), 3);
  assert_string_equal(cap_tag(&cap.points[1], "name"), "/b,c");
  assert_string_equal(cap_field_of(&cap.points[1], "error")->s,
                      "said \"no\"");
  assert_string_equal(cap_field_of(&cap.points[2], "error")->s,
                      "two\r\nlines");
  assert_int_equal(cap.points[2].line, 4);
  assert_string_equal(cap_tag(&cap.points[3], "name"), "/g");
  assert_int_equal(cap.points[3].line, 9);
  assert_int_equal(cap_int(&cap.points[3], "occurrences"), 1);
  /* row offsets count rejected rows too, so times never depend on them */
  assert_int_equal(cap.points[3].time_ns - cap.points[0].time_ns, 5);
  assert_int_equal(cap.nrejects, 2);
  assert_int_equal(cap.rejects[0].line, 6);
  assert_non_null(strstr(cap.rejects[0].reason, "occurrences"));
  assert_int_equal(cap.rejects[1].line, 7);
  assert_non_null(strstr(cap.rejects[1].reason, "columns"));
  cap_free(&cap);

  /* N/A and empty cells are absent, not zero */
  snprintf(path, sizeof path, "%s/x_stats.csv", dir);
  write_file(path,
             "Type,Name,Request Count,Failure Count,Median Response Time,"
             "Requests/s,50%,99.9%\n"
             "GET,/none,0,0,N/A,0.0,N/A,\n");
  convert_document(path, &cap);
  assert_int_equal(cap.nrejects, 0);
  assert_int_equal(cap.npoints, 1);
  const cap_point *p = &cap.points[0];
  assert_int_equal(cap_int(p, "request_count"), 0);
  assert_true(cap_float(p, "requests_per_s") == 0.0);
  assert_null(cap_field_of(p, "median_response_time"));
  assert_null(cap_field_of(p, "p50"));
  assert_null(cap_field_of(p, "p99_9"));
  cap_free(&cap);
  assert_int_equal(aux_tmpdir_remove(dir), 0);
}

/* A history file still without a complete first line: the driver gives no
 * first line, and the header is taken from line 1 when it comes. */
static void test_history_without_header_yet(void **state) {
  (void)state;
  const char *path = "/nonexistent/h_stats_history.csv"; /* never opened */
  ps_input_head head = {.path = path, .mtime_ns = 1781000000000000000LL};
  ps_parser *p = NULL;
  ps_buf err;
  ps_buf_init(&err, 0);
  assert_int_equal(ops->open(&p, NULL, &head, &err), 0);
  capture cap = {0};
  ps_emitter em = cap_emitter(&cap, path);
  const char row[] = "1781000000,1,,Aggregated,0.5,0,N/A";
  em.origin.line = 1;
  assert_int_equal(ops->line(p, row, strlen(row), &em), 0);
  assert_int_equal(cap.nrejects, 1); /* no header known */
  const char hdr[] = "Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%\r";
  assert_int_equal(ops->line(p, hdr, strlen(hdr), &em), 0);
  assert_int_equal(ops->line(p, row, strlen(row), &em), 0);
  assert_int_equal(cap.npoints, 1);
  assert_int_equal(cap_int(&cap.points[0], "user_count"), 1);
  assert_null(cap_field_of(&cap.points[0], "p50"));
  const char bad[] = "soon,1,,Aggregated,0.5,0,1";
  assert_int_equal(ops->line(p, bad, strlen(bad), &em), 0);
  assert_int_equal(cap.nrejects, 2);
  ops->free(p);
  cap_free(&cap);

  /* a first line that is no history header is refused at open */
  head.first_line = "a,b,c";
  head.first_len = 5;
  p = NULL;
  assert_true(ops->open(&p, NULL, &head, &err) < 0);
  assert_null(p);
  assert_non_null(strstr(err.data, "line 1: not a Locust"));
  /* and so is a header longer than any Locust writes */
  size_t n = 70000;
  char *huge = malloc(n + 1);
  memcpy(huge, "Timestamp,", 10);
  memset(huge + 10, 'x', n - 10);
  huge[n] = '\0';
  head.first_line = huge;
  head.first_len = n;
  ps_buf_reset(&err);
  assert_true(ops->open(&p, NULL, &head, &err) < 0);
  assert_null(p);
  assert_non_null(strstr(err.data, "line 1: header longer than 65536 bytes"));
  free(huge);
  ps_buf_free(&err);
}

/* Real histories (docs/dss-locust.md): Locust writes a name's last sample
 * and its final row in the same second; files written on Windows end their
 * lines in \r\r\n. Both read as the \n file does, every row its own point. */
static void test_same_second_rows_and_windows_line_ends(void **state) {
  (void)state;
  static const char *const ends[] = {"\n", "\r\n", "\r\r\n"};
  char dir[] = "/tmp/perfship-locust-XXXXXX";
  assert_non_null(mkdtemp(dir));
  int64_t first[3][3];
  for (size_t e = 0; e < 3; e++) {
    char hist[96], stats[96], text[1024];
    snprintf(hist, sizeof hist, "%s/w%zu_stats_history.csv", dir, e);
    snprintf(stats, sizeof stats, "%s/w%zu_stats.csv", dir, e);
    snprintf(text, sizeof text,
             "\"Timestamp\",\"User Count\",\"Type\",\"Name\",\"Requests/s\"%s"
             "\"1597569274\",\"1\",\"\",\"Aggregated\",0.00%s"
             "\"1597569276\",\"10\",\"\",\"Aggregated\",0.00%s"
             "\"1597569276\",\"0\",\"\",\"Aggregated\",0.00%s",
             ends[e], ends[e], ends[e], ends[e]);
    write_file(hist, text);
    snprintf(text, sizeof text, "Type,Name,Request Count%sGET,/a,123%sGET,/b,12x%s", ends[e],
             ends[e], ends[e]);
    write_file(stats, text);
    capture cap = {0};
    convert_lines(hist, 0, &cap);
    assert_int_equal(cap.nrejects, 0);
    assert_int_equal(cap.npoints, 3);
    for (size_t i = 0; i < 3; i++)
      first[e][i] = cap.points[i].time_ns;
    assert_int_equal(cap_int(&cap.points[1], "user_count"), 10);
    assert_int_equal(cap_int(&cap.points[2], "user_count"), 0);
    assert_true(cap.points[1].time_ns != cap.points[2].time_ns);
    assert_int_equal(cap.points[2].time_ns, 1597569276LL * 1000000000LL + 4);
    cap_free(&cap);
    capture doc = {0};
    convert_document(stats, &doc);
    assert_int_equal(doc.npoints, 1);
    assert_int_equal(cap_int(&doc.points[0], "request_count"), 123);
    assert_int_equal(doc.nrejects, 1);
    assert_int_equal(doc.rejects[0].line, 3);
    assert_string_equal(doc.rejects[0].reason, "column request_count: not a number: \"12x\"");
    cap_free(&doc);
    unlink(hist);
    unlink(stats);
  }
  assert_memory_equal(first[0], first[1], sizeof first[0]);
  assert_memory_equal(first[0], first[2], sizeof first[0]);
  /* a control character in a refused cell is shown as its escape */
  char bad[96];
  snprintf(bad, sizeof bad, "%s/c_stats.csv", dir);
  write_file(bad, "Type,Name,Request Count\nGET,/a,\"1\r2\"\n");
  capture doc = {0};
  convert_document(bad, &doc);
  assert_int_equal(doc.nrejects, 1);
  assert_string_equal(doc.rejects[0].reason, "column request_count: not a number: \"1\\u000d2\"");
  cap_free(&doc);
  unlink(bad);
  rmdir(dir);
}

static void test_resume_after_eagain(void **state) {
  (void)state;
  const char *path = LOCUST_DIR "isa_failures.csv";
  capture all = {0}, part = {0};
  convert_document(path, &all);
  part.refuse_every = 4;
  convert_document(path, &part);
  assert_int_equal(all.npoints, part.npoints);
  for (size_t i = 0; i < all.npoints; i++) {
    assert_int_equal(all.points[i].time_ns, part.points[i].time_ns);
    assert_string_equal(cap_field_of(&all.points[i], "error")->s,
                        cap_field_of(&part.points[i], "error")->s);
  }
  cap_free(&all);
  cap_free(&part);
}

static void test_input_kind(void **state) {
  (void)state;
  assert_int_equal(ops->input_kind(NULL, "/x/isa_stats.csv"), PS_INPUT_DOCUMENT);
  assert_int_equal(ops->input_kind(NULL, "/x/isa_failures.csv"),
                   PS_INPUT_DOCUMENT);
  assert_int_equal(ops->input_kind(NULL, "/x/isa_stats_history.csv"),
                   PS_INPUT_LINES);
  assert_int_equal(ops->input_kind(NULL, "/x/isa_exceptions.csv"),
                   PS_INPUT_IGNORE);
  assert_int_equal(ops->input_kind(NULL, "/x/report.html"), PS_INPUT_IGNORE);
  /* the exceptions file is Locust's own output without points: `convert`
   * notes it instead of failing; other files get no note */
  assert_string_equal(ops->not_converted("/x/isa_exceptions.csv"), "Locust exceptions file");
  assert_null(ops->not_converted("/x/isa_stats.csv"));
  assert_null(ops->not_converted("/x/report.html"));
  ops->free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stats_fixture),
      cmocka_unit_test(test_failures_fixture),
      cmocka_unit_test(test_history_fixture_and_restart),
      cmocka_unit_test(test_quoting_na_and_bad_rows),
      cmocka_unit_test(test_history_without_header_yet),
      cmocka_unit_test(test_same_second_rows_and_windows_line_ends),
      cmocka_unit_test(test_resume_after_eagain),
      cmocka_unit_test(test_input_kind),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
