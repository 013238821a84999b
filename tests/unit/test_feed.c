/*
 * test_feed: the synchronous reader of include/input/feed.h on real files
 * (and a pipe) in a temporary directory: what a parser is handed, line by
 * line, and the head its open() gets. The parser here keeps every line it
 * is given, so a test compares them with the bytes of the file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/feed.h"

#include "capture.h"

#define AUX_TMPDIR_TAG "feed"
#include "aux_tmpdir.h"

/* ---- a parser that keeps its lines -------------------------------------- */

#define MAX_SEEN 20000

struct ps_parser {
  char *lines[MAX_SEEN];
  size_t lens[MAX_SEEN];
  uint64_t line_no[MAX_SEEN];
  size_t n;
  int refuse_next; /* answer -EAGAIN this many times first */
  int offers;
  int fail_at;     /* return -EIO for this line number */
};

static int keep_line(ps_parser *p, const char *data, size_t len, ps_emitter *em) {
  p->offers++;
  if (p->refuse_next > 0) {
    p->refuse_next--;
    return -EAGAIN;
  }
  if (p->fail_at && em->origin.line == (uint64_t)p->fail_at)
    return -EIO;
  assert_true(p->n < MAX_SEEN);
  p->lines[p->n] = malloc(len + 1);
  memcpy(p->lines[p->n], data, len);
  p->lines[p->n][len] = '\0';
  p->lens[p->n] = len;
  p->line_no[p->n] = em->origin.line;
  p->n++;
  return 0;
}

static const ps_format_ops keeper = {.name = "keeper", .line = keep_line};
static const ps_format_ops keeper_head = {
    .name = "keeper", .needs = PS_FMT_NEEDS_FIRST_LINE | PS_FMT_NEEDS_REAL_PATH, .line = keep_line};

static void forget(ps_parser *p) {
  for (size_t i = 0; i < p->n; i++)
    free(p->lines[i]);
  memset(p, 0, sizeof *p);
}

static int put(char *path, const char *name, const char *data, size_t n) {
  sprintf(path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, n, f), n);
  fclose(f);
  int fd = open(path, O_RDONLY);
  assert_true(fd >= 0);
  return fd;
}

static int feed(int fd, ps_parser *p, capture *c, uint64_t end, size_t max_line,
                ps_feed_last *last) {
  ps_emitter em = cap_emitter(c, "f");
  return ps_feed_fd(fd, &keeper, p, &em, end, max_line, last);
}

/* ---- lines ---------------------------------------------------------------- */

/* 3 MB of lines of every length up to 3,000 bytes: many cross the reader's
 * 1 MiB reads; each arrives whole, once, in order, with its number. */
static void lines_across_reads(void **st) {
  (void)st;
  ps_buf text;
  ps_buf_init(&text, 0);
  size_t nlines = 0;
  while (text.len < 3u << 20) {
    size_t len = (nlines * 7919) % 3000;
    ps_buf_printf(&text, "%zu:", nlines);
    for (size_t i = 0; i < len; i++)
      ps_buf_putc(&text, (char)('a' + (nlines + i) % 26));
    ps_buf_putc(&text, '\n');
    nlines++;
  }
  char path[128];
  int fd = put(path, "big", text.data, text.len);
  static ps_parser p;
  capture c = {0};
  ps_feed_last last;
  ps_buf_init(&last.text, 0);
  assert_int_equal(feed(fd, &p, &c, UINT64_MAX, 0, &last), 0);
  assert_int_equal(p.n, nlines);
  const char *s = text.data;
  for (size_t i = 0; i < p.n; i++) {
    const char *nl = strchr(s, '\n');
    assert_int_equal(p.lens[i], (size_t)(nl - s));
    assert_memory_equal(p.lines[i], s, p.lens[i]);
    assert_int_equal(p.line_no[i], i + 1);
    s = nl + 1;
  }
  assert_int_equal(last.text.len, 0);
  assert_int_equal(c.nrejects, 0);
  forget(&p);
  ps_buf_free(&last.text);
  ps_buf_free(&text);
  cap_free(&c);
  close(fd);
}

/* CRLF and LF mixed: the '\r' is stripped as the agent strips it; an empty
 * line is handed over (the parser decides). The unterminated last line is
 * not parsed but handed back with its number. */
static void crlf_empty_and_last_line(void **st) {
  (void)st;
  char path[128];
  const char text[] = "a\r\nb\n\r\n\nc\rd\nlast\r";
  int fd = put(path, "crlf", text, sizeof text - 1);
  ps_parser p = {0};
  capture c = {0};
  ps_feed_last last;
  ps_buf_init(&last.text, 0);
  assert_int_equal(feed(fd, &p, &c, UINT64_MAX, 0, &last), 0);
  assert_int_equal(p.n, 5);
  assert_string_equal(p.lines[0], "a");
  assert_string_equal(p.lines[1], "b");
  assert_string_equal(p.lines[2], "");
  assert_string_equal(p.lines[3], "");
  assert_string_equal(p.lines[4], "c\rd"); /* only a trailing '\r' goes */
  assert_int_equal(last.line_no, 6);
  assert_int_equal(last.text.len, 4);
  assert_string_equal(last.text.data, "last");
  /* the caller parses it when the file is finished */
  ps_emitter em = cap_emitter(&c, "f");
  assert_int_equal(ps_feed_line(&keeper, &p, &em, last.text.data, last.text.len,
                                last.line_no),
                   0);
  assert_string_equal(p.lines[5], "last");
  assert_int_equal(p.line_no[5], 6);
  forget(&p);
  ps_buf_free(&last.text);
  cap_free(&c);
  close(fd);
}

/* An over-long line is rejected with its own line number, skipped whole
 * (also when its '\n' is far past the limit), and numbering goes on; an
 * over-long unterminated last line is rejected, not handed back. */
static void over_long_line_is_reported_and_skipped(void **st) {
  (void)st;
  char path[128];
  ps_buf text;
  ps_buf_init(&text, 0);
  ps_buf_puts(&text, "ok1\n0123456789abcdefXYZ\nok3\n");
  for (int i = 0; i < 100000; i++)
    ps_buf_putc(&text, 'z');
  ps_buf_puts(&text, "\nok5\n0123456789abcdefXYZ");
  int fd = put(path, "long", text.data, text.len);
  ps_parser p = {0};
  capture c = {0};
  ps_feed_last last;
  ps_buf_init(&last.text, 0);
  assert_int_equal(feed(fd, &p, &c, UINT64_MAX, 16, &last), 0);
  assert_int_equal(p.n, 3);
  assert_string_equal(p.lines[0], "ok1");
  assert_string_equal(p.lines[1], "ok3");
  assert_int_equal(p.line_no[1], 3);
  assert_string_equal(p.lines[2], "ok5");
  assert_int_equal(p.line_no[2], 5);
  assert_int_equal(c.nrejects, 3);
  static const uint64_t at[] = {2, 4, 6};
  for (int i = 0; i < 3; i++) {
    assert_int_equal(c.rejects[i].line, at[i]);
    assert_string_equal(c.rejects[i].reason, "line longer than 16 bytes; skipped");
  }
  assert_int_equal(last.text.len, 0);
  forget(&p);
  ps_buf_free(&last.text);
  ps_buf_free(&text);
  cap_free(&c);
  close(fd);
}

/* Only lines that end before end_offset are read (the agent re-derives
 * facts up to its committed offset); a line cut by it comes back as the
 * unterminated rest. */
static void end_offset_is_respected(void **st) {
  (void)st;
  char path[128];
  const char text[] = "one\ntwo\nthree\nfour\n";
  int fd = put(path, "end", text, sizeof text - 1);
  ps_parser p = {0};
  capture c = {0};
  ps_feed_last last;
  ps_buf_init(&last.text, 0);
  assert_int_equal(feed(fd, &p, &c, 8, 0, &last), 0); /* just past "two\n" */
  assert_int_equal(p.n, 2);
  assert_string_equal(p.lines[1], "two");
  assert_int_equal(last.text.len, 0);
  forget(&p);
  assert_int_equal(feed(fd, &p, &c, 11, 0, &last), 0); /* inside "three" */
  assert_int_equal(p.n, 2);
  assert_string_equal(last.text.data, "thr");
  assert_int_equal(last.line_no, 3);
  forget(&p);
  assert_int_equal(feed(fd, &p, &c, 0, 0, &last), 0);
  assert_int_equal(p.n, 0);
  forget(&p);
  ps_buf_free(&last.text);
  cap_free(&c);
  close(fd);
}

/* -EAGAIN from a synchronous emitter: the same line is offered again; an
 * error from the parser stops the feed and is returned. */
static void eagain_repeats_and_errors_stop(void **st) {
  (void)st;
  char path[128];
  const char text[] = "x\ny\nz\n";
  int fd = put(path, "again", text, sizeof text - 1);
  ps_parser p = {0};
  p.refuse_next = 3;
  capture c = {0};
  assert_int_equal(feed(fd, &p, &c, UINT64_MAX, 0, NULL), 0);
  assert_int_equal(p.n, 3);
  assert_int_equal(p.offers, 6);
  forget(&p);
  p.fail_at = 2;
  assert_int_equal(feed(fd, &p, &c, UINT64_MAX, 0, NULL), -EIO);
  assert_int_equal(p.n, 1);
  forget(&p);
  cap_free(&c);
  close(fd);
  /* a read error (not a readable descriptor) is returned too */
  assert_int_equal(feed(-1, &p, &c, UINT64_MAX, 0, NULL), -EBADF);
}

/* ---- the head -------------------------------------------------------------- */

static void head_first_line_mtime_and_path(void **st) {
  (void)st;
  char path[128];
  const char text[] = "{\"type\":\"perf-start\"}\r\nsecond\n";
  int fd = put(path, "head", text, sizeof text - 1);
  struct timespec ts[2] = {{1600000000, 0}, {1600000000, 250000000}};
  assert_int_equal(futimens(fd, ts), 0);
  assert_int_equal(lseek(fd, 3, SEEK_SET), 3);
  ps_head_buf hb;
  assert_int_equal(ps_input_read_head(fd, path, &keeper_head, PS_INPUT_LINES, &hb), 0);
  assert_string_equal(hb.head.path, path);
  assert_int_equal(hb.head.first_len, 21); /* without "\r\n" */
  assert_memory_equal(hb.head.first_line, "{\"type\":\"perf-start\"}", 21);
  assert_true(hb.head.mtime_ns == 1600000000250000000LL);
  assert_non_null(hb.head.real_path);
  assert_int_equal(hb.head.real_path[0], '/');
  assert_non_null(strstr(hb.head.real_path, "/head"));
  assert_int_equal(lseek(fd, 0, SEEK_CUR), 3); /* the position is untouched */
  ps_head_buf_free(&hb);
  /* a document's parser gets all of it: no first line; a format that asks
   * for nothing gets the mtime alone */
  assert_int_equal(ps_input_read_head(fd, path, &keeper_head, PS_INPUT_DOCUMENT, &hb), 0);
  assert_null(hb.head.first_line);
  assert_non_null(hb.head.real_path);
  ps_head_buf_free(&hb);
  assert_int_equal(ps_input_read_head(fd, path, &keeper, PS_INPUT_LINES, &hb), 0);
  assert_null(hb.head.first_line);
  assert_null(hb.head.real_path);
  assert_true(hb.head.mtime_ns == 1600000000250000000LL);
  ps_head_buf_free(&hb);
  close(fd);
}

/* No first line yet (empty, or still being written), or one too long for a
 * head: none is given; a line just within the limit is. A pipe is not read
 * at all (its bytes belong to the lines). */
static void head_without_a_first_line(void **st) {
  (void)st;
  char path[128];
  ps_head_buf hb;
  int fd = put(path, "empty", "", 0);
  assert_int_equal(ps_input_read_head(fd, path, &keeper_head, PS_INPUT_LINES, &hb), 0);
  assert_null(hb.head.first_line);
  ps_head_buf_free(&hb);
  close(fd);
  fd = put(path, "partial", "{\"type\":\"perf-st", 16);
  assert_int_equal(ps_input_read_head(fd, path, &keeper_head, PS_INPUT_LINES, &hb), 0);
  assert_null(hb.head.first_line);
  ps_head_buf_free(&hb);
  close(fd);
  char *big = malloc(PS_INPUT_HEAD_MAX + 2);
  memset(big, 'h', PS_INPUT_HEAD_MAX + 2);
  big[PS_INPUT_HEAD_MAX] = '\n'; /* a line of exactly the limit */
  fd = put(path, "at-limit", big, PS_INPUT_HEAD_MAX + 2);
  assert_int_equal(ps_input_read_head(fd, path, &keeper_head, PS_INPUT_LINES, &hb), 0);
  assert_non_null(hb.head.first_line);
  assert_int_equal(hb.head.first_len, PS_INPUT_HEAD_MAX);
  ps_head_buf_free(&hb);
  close(fd);
  big[PS_INPUT_HEAD_MAX] = 'h';
  big[PS_INPUT_HEAD_MAX + 1] = '\n'; /* one byte over */
  fd = put(path, "over-limit", big, PS_INPUT_HEAD_MAX + 2);
  assert_int_equal(ps_input_read_head(fd, path, &keeper_head, PS_INPUT_LINES, &hb), 0);
  assert_null(hb.head.first_line);
  ps_head_buf_free(&hb);
  close(fd);
  free(big);
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  assert_int_equal(write(fds[1], "a\nb\n", 4), 4);
  assert_int_equal(ps_input_read_head(fds[0], "/dev/stdin", &keeper_head, PS_INPUT_LINES, &hb),
                   0);
  assert_null(hb.head.first_line);
  ps_head_buf_free(&hb);
  close(fds[1]);
  ps_parser p = {0};
  capture c = {0};
  assert_int_equal(feed(fds[0], &p, &c, UINT64_MAX, 0, NULL), 0);
  assert_int_equal(p.n, 2); /* both lines still there for the feed */
  forget(&p);
  cap_free(&c);
  close(fds[0]);
  assert_int_equal(ps_input_read_head(-1, "x", &keeper_head, PS_INPUT_LINES, &hb), -EBADF);
  ps_head_buf_free(&hb);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lines_across_reads),
      cmocka_unit_test(crlf_empty_and_last_line),
      cmocka_unit_test(over_long_line_is_reported_and_skipped),
      cmocka_unit_test(end_offset_is_respected),
      cmocka_unit_test(eagain_repeats_and_errors_stop),
      cmocka_unit_test(head_first_line_mtime_and_path),
      cmocka_unit_test(head_without_a_first_line),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
