/*
 * test_gzlines: the gzip line reader on streams as the loadgen leaves them:
 * whole, without a trailer and with a cut last line, growing while read,
 * several members, a corrupt stretch, lines far longer than the window.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#define AUX_TMPDIR_TAG "gzlines"
#include "aux_tmpdir.h"
#include "input/gzlines.h"

/* `text` gzipped; `finish` 0 leaves the stream without its end (a sync
 * flush, as a running loadgen's file). Appends to `out`; returns bytes. */
static size_t gz(unsigned char *out, size_t cap, const char *text, size_t n, int finish) {
  z_stream z;
  memset(&z, 0, sizeof z);
  assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  z.next_in = (unsigned char *)text;
  z.avail_in = (uInt)n;
  z.next_out = out;
  z.avail_out = (uInt)cap;
  assert_int_not_equal(deflate(&z, finish ? Z_FINISH : Z_SYNC_FLUSH), Z_STREAM_ERROR);
  size_t got = cap - z.avail_out;
  deflateEnd(&z);
  return got;
}

static int file_with(const char *name, const unsigned char *p, size_t n) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, p, n), (ssize_t)n);
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  return fd;
}

static unsigned char buf[1 << 20];

static void whole_stream_and_last_line_without_newline(void **st) {
  (void)st;
  const char *t = "one\ntwo\n\nthree";
  size_t n = gz(buf, sizeof buf, t, strlen(t), 1);
  int fd = file_with("whole.gz", buf, n);
  ps_gzlines *g;
  assert_int_equal(ps_gzlines_open(&g, fd, 0), 0);
  ps_gzline l;
  const char *want[] = {"one", "two", "", "three"};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(ps_gzlines_next(g, &l), 1);
    assert_int_equal(l.line_no, (uint64_t)i + 1);
    assert_int_equal(l.len, strlen(want[i]));
    assert_memory_equal(l.head, want[i], l.len);
    assert_null(l.tail);
  }
  assert_int_equal(ps_gzlines_next(g, &l), 0);
  const ps_gzlines_status *s = ps_gzlines_end(g);
  assert_true(s->complete);
  assert_int_equal(s->cut_bytes, 0);
  assert_int_equal(s->members, 1);
  ps_gzlines_free(g);
  close(fd);
}

static void no_trailer_cut_line_then_grows(void **st) {
  (void)st;
  const char *t = "a\nbb\ncc";
  z_stream z;
  memset(&z, 0, sizeof z);
  assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  z.next_in = (unsigned char *)t;
  z.avail_in = (uInt)strlen(t);
  z.next_out = buf;
  z.avail_out = sizeof buf;
  deflate(&z, Z_SYNC_FLUSH);
  size_t first = sizeof buf - z.avail_out;
  int fd = file_with("grow.gz", buf, first);
  ps_gzlines *g;
  assert_int_equal(ps_gzlines_open(&g, fd, 0), 0);
  ps_gzline l;
  assert_int_equal(ps_gzlines_next(g, &l), 1);
  assert_int_equal(ps_gzlines_next(g, &l), 1);
  assert_memory_equal(l.head, "bb", 2);
  assert_int_equal(ps_gzlines_next(g, &l), 0);
  assert_false(ps_gzlines_end(g)->complete);
  assert_true(ps_gzlines_end(g)->no_trailer);
  assert_int_equal(ps_gzlines_end(g)->cut_bytes, 2); /* "cc": never handed out */
  /* the producer goes on: the cut line ends, another follows, then the end */
  const char *more = "c\nd\n";
  z.next_in = (unsigned char *)more;
  z.avail_in = (uInt)strlen(more);
  z.next_out = buf;
  z.avail_out = sizeof buf;
  deflate(&z, Z_FINISH);
  size_t second = sizeof buf - z.avail_out;
  deflateEnd(&z);
  off_t at = lseek(fd, 0, SEEK_CUR);
  assert_int_equal(pwrite(fd, buf, second, (off_t)first), (ssize_t)second);
  assert_int_equal(lseek(fd, at, SEEK_SET), at);
  ps_gzlines_again(g);
  assert_int_equal(ps_gzlines_next(g, &l), 1);
  assert_int_equal(l.line_no, 3);
  assert_int_equal(l.len, 3);
  assert_memory_equal(l.head, "ccc", 3);
  assert_int_equal(ps_gzlines_next(g, &l), 1);
  assert_memory_equal(l.head, "d", 1);
  assert_int_equal(ps_gzlines_next(g, &l), 0);
  assert_true(ps_gzlines_end(g)->complete);
  ps_gzlines_free(g);
  close(fd);
}

static void members_and_a_corrupt_one(void **st) {
  (void)st;
  size_t n = gz(buf, sizeof buf, "m1a\nm1b\n", 8, 1);
  size_t bad_at = n;
  n += gz(buf + n, sizeof buf - n, "lost1\nlost2\nlost3\n", 18, 1);
  buf[bad_at + 12] ^= 0x55; /* inside the second member's deflate data */
  buf[bad_at + 13] ^= 0x55;
  n += gz(buf + n, sizeof buf - n, "m3\n", 3, 1);
  int fd = file_with("members.gz", buf, n);
  ps_gzlines *g;
  assert_int_equal(ps_gzlines_open(&g, fd, 0), 0);
  ps_gzline l;
  char got[256] = "";
  while (ps_gzlines_next(g, &l) == 1) {
    strncat(got, l.head, l.len);
    strcat(got, "|");
  }
  const ps_gzlines_status *s = ps_gzlines_end(g);
  /* the member after the break is read; nothing of the broken one is
   * handed out, and the break is where line 3 would have been */
  assert_string_equal(got, "m1a|m1b|m3|");
  assert_int_equal(s->corrupt, 1);
  assert_int_equal(s->corrupt_line, 3);
  assert_false(s->complete);
  assert_int_equal(s->members, 3);
  ps_gzlines_free(g);
  close(fd);
}

/* Reads the whole stream; returns the lines handed out, checks they are
 * numbered 1.. and that each is `line_fmt` of its number. */
static uint64_t read_all(int fd, const char *line_fmt, const ps_gzlines_status **out,
                         ps_gzlines **g) {
  assert_int_equal(ps_gzlines_open(g, fd, 0), 0);
  ps_gzline l;
  uint64_t n = 0;
  char want[64];
  while (ps_gzlines_next(*g, &l) == 1) {
    n++;
    assert_int_equal(l.line_no, n);
    snprintf(want, sizeof want, line_fmt, (unsigned long long)n);
    assert_int_equal(l.len, strlen(want));
    assert_memory_equal(l.head, want, l.len);
  }
  *out = ps_gzlines_end(*g);
  return n;
}

static size_t numbered_lines(char *text, size_t cap, const char *fmt, unsigned count) {
  size_t n = 0;
  for (unsigned i = 1; i <= count; i++) {
    n += (size_t)snprintf(text + n, cap - n, fmt, (unsigned long long)i);
    text[n++] = '\n';
  }
  return n;
}

/* One flipped byte of the CRC (or of the length) at the member's end:
 * every line was inflated and zcat writes every one, so every one is
 * handed out and the break is numbered after the last (docs/loadgen.md
 * "Slogs"; a 248-line stage lost all its lines, a 74,400-line one its
 * last ~2,000). */
static void crc_error_keeps_every_line(void **st) {
  (void)st;
  static const char fmt[] = "{\"type\":\"deliver\",\"crankNum\":%llu,\"vatID\":\"v1\"}";
  static char text[8 << 20];
  static const unsigned counts[] = {248, 74400};
  for (size_t c = 0; c < 2; c++)
    for (int which = 0; which < 2; which++) {
      size_t tn = numbered_lines(text, sizeof text, fmt, counts[c]);
      size_t n = gz(buf, sizeof buf, text, tn, 1);
      assert_true(n < sizeof buf / 2);
      buf[n - (which ? 1 : 8)] ^= 0x01; /* the CRC's first byte, or ISIZE's last */
      int fd = file_with("crc.gz", buf, n);
      ps_gzlines *g;
      const ps_gzlines_status *s;
      assert_int_equal(read_all(fd, fmt, &s, &g), counts[c]);
      assert_int_equal(s->corrupt, 1);
      assert_int_equal(s->corrupt_line, (uint64_t)counts[c] + 1);
      assert_string_equal(s->message, which ? "incorrect length check" : "incorrect data check");
      assert_false(s->complete);
      assert_int_equal(s->out_bytes, tn);
      ps_gzlines_free(g);
      close(fd);
    }
}

/* A break inside the deflate data: the lines before it are handed out,
 * the one it cuts is not, and the next member is read. */
static void a_break_drops_only_the_line_it_cuts(void **st) {
  (void)st;
  size_t n = gz(buf, sizeof buf, "l1\nl2\nl3-cut-by-the-break", 26, 0);
  buf[n++] = 0x07; /* a final block of the reserved type: "invalid block type" */
  n += gz(buf + n, sizeof buf - n, "next\n", 5, 1);
  int fd = file_with("break.gz", buf, n);
  ps_gzlines *g;
  assert_int_equal(ps_gzlines_open(&g, fd, 0), 0);
  ps_gzline l;
  char got[256] = "";
  while (ps_gzlines_next(g, &l) == 1) {
    strncat(got, l.head, l.len);
    strcat(got, "|");
  }
  const ps_gzlines_status *s = ps_gzlines_end(g);
  assert_string_equal(got, "l1|l2|next|");
  assert_int_equal(s->corrupt, 1);
  assert_int_equal(s->corrupt_line, 3);
  assert_string_equal(s->message, "invalid block type");
  assert_int_equal(s->members, 2);
  ps_gzlines_free(g);
  close(fd);

  /* a member right after a trailer whose CRC is wrong is read too */
  n = gz(buf, sizeof buf, "a1\na2\n", 6, 1);
  buf[n - 6] ^= 0x80;
  n += gz(buf + n, sizeof buf - n, "b1\n", 3, 1);
  fd = file_with("crc-then-member.gz", buf, n);
  assert_int_equal(ps_gzlines_open(&g, fd, 0), 0);
  got[0] = '\0';
  while (ps_gzlines_next(g, &l) == 1) {
    strncat(got, l.head, l.len);
    strcat(got, "|");
  }
  s = ps_gzlines_end(g);
  assert_string_equal(got, "a1|a2|b1|");
  assert_int_equal(s->corrupt_line, 3);
  assert_int_equal(s->members, 2);
  ps_gzlines_free(g);
  close(fd);
}

static void long_line_head_and_tail(void **st) {
  (void)st;
  static char text[300000 + 16];
  size_t line = 300000; /* "HEAD" x... "TAIL", then '\n', then "next\n" */
  memset(text, 'x', line);
  memcpy(text, "HEAD", 4);
  memcpy(text + line - 4, "TAIL", 4);
  memcpy(text + line, "\nnext\n", 6);
  size_t n = gz(buf, sizeof buf, text, line + 6, 1);
  int fd = file_with("long.gz", buf, n);
  ps_gzlines *g;
  assert_int_equal(ps_gzlines_open(&g, fd, 1000), 0);
  ps_gzline l;
  assert_int_equal(ps_gzlines_next(g, &l), 1);
  assert_int_equal(l.len, line);
  assert_int_equal(l.head_len, 1000);
  assert_memory_equal(l.head, "HEAD", 4);
  assert_non_null(l.tail);
  assert_int_equal(l.tail_len, PS_GZLINES_TAIL);
  assert_memory_equal(l.tail + l.tail_len - 4, "TAIL", 4);
  assert_int_equal(ps_gzlines_next(g, &l), 1);
  assert_int_equal(l.len, 4);
  assert_memory_equal(l.head, "next", 4);
  ps_gzlines_free(g);
  close(fd);
}

static void not_gzip_at_all(void **st) {
  (void)st;
  int fd = file_with("plain.gz", (const unsigned char *)"hello\nworld\n", 12);
  ps_gzlines *g;
  assert_int_equal(ps_gzlines_open(&g, fd, 0), 0);
  ps_gzline l;
  assert_int_equal(ps_gzlines_next(g, &l), 0);
  assert_int_equal(ps_gzlines_end(g)->corrupt, 1);
  assert_int_equal(ps_gzlines_end(g)->corrupt_line, 1);
  assert_false(ps_gzlines_end(g)->complete);
  ps_gzlines_free(g);
  close(fd);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(whole_stream_and_last_line_without_newline),
      cmocka_unit_test(no_trailer_cut_line_then_grows),
      cmocka_unit_test(members_and_a_corrupt_one),
      cmocka_unit_test(long_line_head_and_tail),
      cmocka_unit_test(crc_error_keeps_every_line),
      cmocka_unit_test(a_break_drops_only_the_line_it_cuts),
      cmocka_unit_test(not_gzip_at_all),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
