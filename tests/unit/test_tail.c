/*
 * test_tail: line framing and file identity (include/input/tail.h), on real
 * files in a temporary directory.
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

#include "input/tail.h"

#define AUX_TMPDIR_TAG "tail"
#include "aux_tmpdir.h"

static void path_of(char *out, const char *name) { sprintf(out, "%s/%s", dir, name); }

static void write_file(const char *path, const char *data, size_t n, const char *mode) {
  FILE *f = fopen(path, mode);
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, n, f), n);
  fclose(f);
}

/* Reads every complete line available now into `lines` (joined by '|'). */
static void drain(ps_tail *t, char *out, size_t cap, size_t chunk) {
  out[0] = '\0';
  for (;;) {
    ps_tail_line ln;
    int r = ps_tail_next(t, &ln);
    if (r == PS_TAIL_LINE) {
      strncat(out, ln.data, ln.len < cap - strlen(out) - 2 ? ln.len : 0);
      strcat(out, "|");
      ps_tail_consume(t);
    } else if (r == PS_TAIL_TOO_LONG) {
      strcat(out, "<long>|");
    } else if (r == PS_TAIL_SKIPPED) {
      continue;
    } else if (ps_tail_fill(t, chunk) <= 0) {
      return;
    }
  }
}

static void partial_last_line_waits(void **st) {
  (void)st;
  char p[128], got[256];
  path_of(p, "partial");
  write_file(p, "a\nb\r\nc", 6, "w");
  int fd = open(p, O_RDONLY);
  ps_tail t;
  ps_tail_init(&t, fd, 0, 1, 1024);
  drain(&t, got, sizeof got, 3);    /* tiny chunks: lines cross reads */
  assert_string_equal(got, "a|b|"); /* CR stripped, "c" waits */
  assert_int_equal(ps_tail_offset(&t), 5);
  assert_int_equal(ps_tail_buffered(&t), 1);
  write_file(p, "d\n", 2, "a");
  drain(&t, got, sizeof got, 3);
  assert_string_equal(got, "cd|");
  assert_int_equal(ps_tail_offset(&t), 8);
  assert_int_equal(t.line_no, 4);
  ps_tail_free(&t);
  close(fd);
}

/* A reader going from file to file reads into one buffer: an emptied
 * buffer goes to the spare, whatever its size, and the next tail that has
 * none, or needs a larger one, reads into it; a spare already held stays,
 * and the buffer let go is freed. */
static void an_emptied_buffer_serves_the_next_file(void **st) {
  (void)st;
  char pa[128], pb[128], pc[128], got[256];
  path_of(pa, "spare-a");
  path_of(pb, "spare-b");
  path_of(pc, "spare-c");
  write_file(pa, "one\ntwo\n", 8, "w");
  write_file(pb, "three\nfour", 10, "w");
  size_t big = (size_t)5 << 20;
  char *line = malloc(big + 1);
  assert_non_null(line);
  memset(line, 'x', big);
  line[big] = '\n';
  write_file(pc, line, big + 1, "w");
  free(line);
  int fa = open(pa, O_RDONLY), fb = open(pb, O_RDONLY), fc = open(pc, O_RDONLY);
  ps_tail a, b, c;
  ps_buf spare;
  ps_buf_init(&spare, 0);
  ps_tail_init(&a, fa, 0, 1, 1024);
  ps_tail_init(&b, fb, 0, 1, 1024);
  ps_tail_init(&c, fc, 0, 1, big + 1);

  /* b holds "four" (no newline yet) in a buffer of its own */
  drain(&b, got, sizeof got, 1 << 20);
  assert_string_equal(got, "three|");
  char *b_buf = b.buf.data;
  assert_non_null(b_buf);

  drain(&c, got, sizeof got, 1 << 20);
  assert_string_equal(got, "|"); /* the line, cut by drain's buffer */
  char *c_buf = c.buf.data;
  size_t c_cap = c.buf.cap;
  assert_true(c_cap > big);
  ps_tail_trim(&c, &spare);
  assert_null(c.buf.data);
  assert_ptr_equal(spare.data, c_buf);
  assert_int_equal(spare.len, 0);
  assert_int_equal(ps_tail_offset(&c), big + 1);

  /* no buffer: a takes the spare */
  ps_tail_adopt(&a, &spare, 1 << 20);
  assert_ptr_equal(a.buf.data, c_buf);
  assert_int_equal(a.buf.cap, c_cap);
  assert_null(spare.data);
  drain(&a, got, sizeof got, 1 << 20);
  assert_string_equal(got, "one|two|");
  assert_int_equal(ps_tail_offset(&a), 8);
  ps_tail_trim(&a, &spare);
  assert_ptr_equal(spare.data, c_buf);

  /* b's buffer holds "four" and a 1 MiB read: it keeps its own */
  ps_tail_adopt(&b, &spare, 1 << 20);
  assert_ptr_equal(b.buf.data, b_buf);
  assert_ptr_equal(spare.data, c_buf);
  /* but not "four" and a 3 MiB read: it moves into the larger spare */
  ps_tail_adopt(&b, &spare, (size_t)3 << 20);
  assert_ptr_equal(b.buf.data, c_buf);
  assert_null(spare.data);
  write_file(pb, "\nfive\n", 6, "a");
  drain(&b, got, sizeof got, (size_t)3 << 20);
  assert_string_equal(got, "four|five|");
  assert_int_equal(ps_tail_offset(&b), 16);
  assert_int_equal(b.line_no, 4);

  /* a second emptied buffer is freed: the spare already holds one */
  write_file(pa, "six\n", 4, "a");
  drain(&a, got, sizeof got, 1 << 20);
  assert_string_equal(got, "six|");
  ps_tail_trim(&b, &spare);
  assert_ptr_equal(spare.data, c_buf);
  ps_tail_trim(&a, &spare);
  assert_null(a.buf.data);
  assert_ptr_equal(spare.data, c_buf);
  assert_int_equal(ps_tail_offset(&a), 12);
  ps_buf_free(&spare);

  ps_tail_free(&a);
  ps_tail_free(&b);
  ps_tail_free(&c);
  close(fa);
  close(fb);
  close(fc);
}

static void trim_gives_memory_back(void **st) {
  (void)st;
  char p[128], got[256];
  path_of(p, "trim");
  write_file(p, "a\nbcd", 5, "w");
  int fd = open(p, O_RDONLY);
  ps_tail t;
  ps_tail_init(&t, fd, 0, 1, 1024);
  drain(&t, got, sizeof got, 1 << 20);
  assert_string_equal(got, "a|");
  assert_true(t.buf.cap > 1000000);
  ps_tail_trim(&t, NULL); /* the partial line survives giving memory back */
  assert_true(t.buf.cap <= 16);
  assert_int_equal(ps_tail_offset(&t), 2);
  write_file(p, "e\nf\n", 4, "a");
  drain(&t, got, sizeof got, 1 << 20);
  assert_string_equal(got, "bcde|f|");
  ps_tail_trim(&t, NULL);
  assert_int_equal(t.buf.cap, 0);
  assert_int_equal(ps_tail_offset(&t), 9);
  write_file(p, "g\n", 2, "a");
  drain(&t, got, sizeof got, 1 << 20);
  assert_string_equal(got, "g|");
  ps_tail_free(&t);
  close(fd);
}

static void next_without_consume_repeats(void **st) {
  (void)st;
  char p[128];
  path_of(p, "repeat");
  write_file(p, "one\ntwo\n", 8, "w");
  int fd = open(p, O_RDONLY);
  ps_tail t;
  ps_tail_init(&t, fd, 0, 1, 1024);
  ps_tail_line a, b;
  assert_int_equal(ps_tail_fill(&t, 4096), 8);
  assert_int_equal(ps_tail_next(&t, &a), PS_TAIL_LINE);
  assert_int_equal(ps_tail_next(&t, &b), PS_TAIL_LINE);
  assert_int_equal(a.start, b.start);
  assert_int_equal(a.line_no, 1);
  assert_int_equal(ps_tail_fill(&t, 4096), -EBUSY); /* the line is still lent out */
  ps_tail_consume(&t);
  assert_int_equal(ps_tail_next(&t, &b), PS_TAIL_LINE);
  assert_int_equal(b.line_no, 2);
  assert_int_equal(b.end, 8);
  assert_memory_equal(b.data, "two", 3);
  ps_tail_free(&t);
  close(fd);
}

static void resume_at_offset(void **st) {
  (void)st;
  char p[128], got[256];
  path_of(p, "resume");
  write_file(p, "l1\nl2\nl3\n", 9, "w");
  int fd = open(p, O_RDONLY);
  ps_tail t;
  ps_tail_init(&t, fd, 3, 2, 1024);
  drain(&t, got, sizeof got, 4096);
  assert_string_equal(got, "l2|l3|");
  ps_tail_free(&t);
  close(fd);
}

static void huge_line_is_linear_and_exact(void **st) {
  (void)st;
  char p[128];
  path_of(p, "huge");
  size_t n = 12u << 20; /* 12 MB, read in 64 KiB chunks */
  char *big = malloc(n + 1);
  assert_non_null(big);
  for (size_t i = 0; i < n; i++)
    big[i] = (char)('a' + i % 26);
  big[n] = '\n';
  write_file(p, big, n + 1, "w");
  write_file(p, "next\n", 5, "a");
  int fd = open(p, O_RDONLY);
  ps_tail t;
  ps_tail_init(&t, fd, 0, 1, 64u << 20);
  ps_tail_line ln;
  int r;
  size_t reads = 0;
  while ((r = ps_tail_next(&t, &ln)) == PS_TAIL_NONE) {
    assert_true(ps_tail_fill(&t, 65536) > 0);
    reads++;
  }
  assert_int_equal(r, PS_TAIL_LINE);
  assert_int_equal(ln.len, n);
  assert_memory_equal(ln.data, big, n);
  assert_true(reads <= n / 65536 + 2);
  /* Buffer growth is geometric: capacity within 2x of the line. */
  assert_true(t.buf.cap <= 2 * (n + 65536) + 256);
  ps_tail_consume(&t);
  while ((r = ps_tail_next(&t, &ln)) == PS_TAIL_NONE)
    assert_true(ps_tail_fill(&t, 65536) > 0);
  assert_int_equal(ln.len, 4);
  assert_int_equal(ln.line_no, 2);
  free(big);
  ps_tail_free(&t);
  close(fd);
}

static void over_long_line_is_skipped_with_bounded_memory(void **st) {
  (void)st;
  char p[128];
  path_of(p, "toolong");
  write_file(p, "ok\n", 3, "w");
  size_t n = 3u << 20;
  char *big = malloc(n);
  assert_non_null(big);
  memset(big, 'x', n);
  write_file(p, big, n, "a");
  write_file(p, "\nafter\n", 7, "a");
  free(big);
  int fd = open(p, O_RDONLY);
  ps_tail t;
  ps_tail_init(&t, fd, 0, 1, 1000); /* limit 1000 bytes */
  ps_tail_line ln;
  int r, saw_long = 0, saw_skip = 0;
  char last[16] = "";
  uint64_t last_line = 0;
  size_t max_cap = 0;
  for (;;) {
    r = ps_tail_next(&t, &ln);
    if (r == PS_TAIL_NONE) {
      if (ps_tail_fill(&t, 4096) <= 0)
        break;
      if (t.buf.cap > max_cap)
        max_cap = t.buf.cap;
      continue;
    }
    if (r == PS_TAIL_TOO_LONG) {
      saw_long++;
      assert_int_equal(ln.line_no, 2);
      assert_int_equal(ln.start, 3);
    } else if (r == PS_TAIL_SKIPPED) {
      saw_skip++;
      assert_int_equal(ln.end, 3 + n + 1);
    } else {
      snprintf(last, sizeof last, "%.*s", (int)ln.len, ln.data);
      last_line = ln.line_no;
      ps_tail_consume(&t);
    }
  }
  assert_int_equal(saw_long, 1);
  assert_int_equal(saw_skip, 1);
  assert_string_equal(last, "after");
  assert_int_equal(last_line, 3);
  assert_true(max_cap < 16384); /* never the 3 MB line */
  ps_tail_free(&t);
  close(fd);
}

static void complete_line_over_limit_is_skipped(void **st) {
  (void)st;
  char p[128], got[256];
  path_of(p, "overlimit");
  write_file(p, "0123456789ABCDEF\nshort\n", 23, "w");
  int fd = open(p, O_RDONLY);
  ps_tail t;
  ps_tail_init(&t, fd, 0, 1, 10);
  drain(&t, got, sizeof got, 4096);
  assert_string_equal(got, "<long>|short|");
  assert_int_equal(ps_tail_offset(&t), 23);
  ps_tail_free(&t);
  close(fd);
}

static void identity_survives_growth_and_rename(void **st) {
  (void)st;
  char p[128], q[128];
  path_of(p, "ident");
  path_of(q, "ident.1");
  write_file(p, "first line\n", 11, "w");
  int fd = open(p, O_RDONLY);
  struct stat s;
  fstat(fd, &s);
  ps_file_id id, now;
  assert_int_equal(ps_file_identify(fd, &s, &id), 0);
  assert_int_equal(id.fp_len, 11);
  char more[600];
  memset(more, 'm', sizeof more);
  more[sizeof more - 1] = '\n';
  write_file(p, more, sizeof more, "a");
  assert_int_equal(rename(p, q), 0);
  fstat(fd, &s);
  assert_int_equal(ps_file_id_check(fd, &s, &id, &now), PS_ID_SAME);
  assert_int_equal(now.fp_len, PS_FP_MAX); /* widened as the file grew */
  close(fd);
}

/* A reused inode whose new file starts with the same bytes looks the same
 * to the fingerprint; the birth time tells them apart (where the file
 * system keeps one: unknown birth times never refuse). */
static void reused_inode_is_told_apart_by_birth(void **st) {
  (void)st;
  char p[128];
  path_of(p, "born");
  write_file(p, "same first bytes\n", 17, "w");
  int fd = open(p, O_RDONLY);
  struct stat s;
  fstat(fd, &s);
  ps_file_id id;
  assert_int_equal(ps_file_identify(fd, &s, &id), 0);
  assert_true(ps_file_same_birth(fd, &id));
  ps_file_id older = id;
  older.btime_ns = id.btime_ns ? id.btime_ns - 1 : 0;
  /* the fingerprint cannot see it ... */
  assert_int_equal(ps_file_id_check(fd, &s, &older, NULL), PS_ID_SAME);
  /* ... the birth time can, when it is known */
  assert_int_equal(ps_file_same_birth(fd, &older), id.btime_ns == 0);
  older.btime_ns = 0; /* a state saved before birth times: no verdict */
  assert_true(ps_file_same_birth(fd, &older));
  close(fd);
}

static void truncation_and_copytruncate_change_identity(void **st) {
  (void)st;
  char p[128];
  path_of(p, "trunc");
  write_file(p, "aaaa\nbbbb\n", 10, "w");
  int fd = open(p, O_RDONLY);
  struct stat s;
  fstat(fd, &s);
  ps_file_id id;
  ps_file_identify(fd, &s, &id);
  /* Truncated (shorter than the fingerprint). */
  assert_int_equal(truncate(p, 0), 0);
  write_file(p, "cc\n", 3, "a");
  fstat(fd, &s);
  assert_int_equal(ps_file_id_check(fd, &s, &id, NULL), PS_ID_REWRITTEN);
  /* Same-length copytruncate: same inode, same size, other contents. */
  write_file(p, "aaaa\nbbbb\n", 10, "w");
  fstat(fd, &s);
  ps_file_identify(fd, &s, &id);
  write_file(p, "xxxx\nyyyy\n", 10, "w");
  fstat(fd, &s);
  assert_int_equal(s.st_size, 10);
  assert_int_equal(ps_file_id_check(fd, &s, &id, NULL), PS_ID_REWRITTEN);
  close(fd);
  /* Replaced by another file at the same path. */
  char q[128];
  path_of(q, "trunc.new");
  write_file(q, "aaaa\nbbbb\n", 10, "w");
  fd = open(p, O_RDONLY);
  fstat(fd, &s);
  ps_file_identify(fd, &s, &id);
  close(fd);
  assert_int_equal(rename(q, p), 0);
  fd = open(p, O_RDONLY);
  fstat(fd, &s);
  assert_int_equal(ps_file_id_check(fd, &s, &id, NULL), PS_ID_OTHER);
  close(fd);
}

/* A pipe (convert's stdin) cannot pread: the tail reads it in order, with
 * the same framing and offsets as a file, in small chunks across lines. */
static void pipe_is_read_in_order(void **st) {
  (void)st;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  const char text[] = "one\ntwo\r\nthree\nfour";
  assert_int_equal(write(fds[1], text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fds[1]);
  ps_tail t;
  ps_tail_init(&t, fds[0], 0, 1, 64);
  char got[128];
  drain(&t, got, sizeof got, 3);
  assert_string_equal(got, "one|two|three|");
  assert_true(t.stream);
  assert_int_equal(ps_tail_offset(&t), 15);
  ps_tail_line ln;
  assert_int_equal(ps_tail_partial(&t, &ln), PS_TAIL_LINE);
  assert_int_equal(ln.len, 4);
  assert_memory_equal(ln.data, "four", 4);
  assert_int_equal(ln.line_no, 4);
  ps_tail_free(&t);
  close(fds[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(pipe_is_read_in_order),
      cmocka_unit_test(partial_last_line_waits),
      cmocka_unit_test(next_without_consume_repeats),
      cmocka_unit_test(trim_gives_memory_back),
      cmocka_unit_test(an_emptied_buffer_serves_the_next_file),
      cmocka_unit_test(resume_at_offset),
      cmocka_unit_test(huge_line_is_linear_and_exact),
      cmocka_unit_test(over_long_line_is_skipped_with_bounded_memory),
      cmocka_unit_test(complete_line_over_limit_is_skipped),
      cmocka_unit_test(identity_survives_growth_and_rename),
      cmocka_unit_test(truncation_and_copytruncate_change_identity),
      cmocka_unit_test(reused_inode_is_told_apart_by_birth),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
