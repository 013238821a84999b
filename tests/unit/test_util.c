/*
 * test_util: the helpers of include/core/util.h on real files, a directory,
 * a FIFO and a pipe in a temporary directory: what a caller relies on is
 * the limit, the terminator, the refusals of what is not a regular file,
 * and that a pipe (convert's stdin) is read like a file.
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

#include "core/util.h"

#define AUX_TMPDIR_TAG "util"
#include "aux_tmpdir.h"

static void put(char *path, const char *name, const char *data, size_t n) {
  sprintf(path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, n, f), n);
  fclose(f);
}

static void whole_file_and_limit(void **st) {
  (void)st;
  char p[128];
  ps_buf b;
  ps_buf_init(&b, 0);
  /* larger than one read chunk, with a NUL inside: every byte, terminated */
  size_t n = 200000;
  char *data = malloc(n);
  for (size_t i = 0; i < n; i++)
    data[i] = (char)('a' + i % 26);
  data[70000] = '\0';
  put(p, "big", data, n);
  struct stat sb;
  assert_int_equal(ps_read_file(p, 0, &b, &sb), 0);
  assert_int_equal(b.len, n);
  assert_memory_equal(b.data, data, n);
  assert_int_equal(b.data[n], '\0');
  assert_int_equal((size_t)sb.st_size, n);
  /* exactly at the limit is fine; one byte over is -EFBIG */
  assert_int_equal(ps_read_file(p, n, &b, NULL), 0);
  assert_int_equal(ps_read_file(p, n - 1, &b, NULL), -EFBIG);
  int fd = open(p, O_RDONLY);
  assert_int_equal(ps_read_whole(fd, n - 1, &b), -EFBIG);
  assert_true(b.len <= n); /* read no more than limit + 1 bytes */
  /* the file position is neither used nor moved */
  assert_int_equal(lseek(fd, 5, SEEK_SET), 5);
  assert_int_equal(ps_read_whole(fd, 0, &b), 0);
  assert_int_equal(b.len, n);
  assert_int_equal(lseek(fd, 0, SEEK_CUR), 5);
  close(fd);
  /* an empty file: "" with its terminator, not NULL */
  put(p, "empty", "", 0);
  ps_buf_free(&b);
  ps_buf_init(&b, 0);
  assert_int_equal(ps_read_file(p, 10, &b, NULL), 0);
  assert_non_null(b.data);
  assert_int_equal(b.len, 0);
  assert_string_equal(b.data, "");
  ps_buf_free(&b);
  free(data);
}

static void not_regular_files(void **st) {
  (void)st;
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_read_file(dir, 0, &b, NULL), -EISDIR);
  char p[128];
  sprintf(p, "%s/fifo", dir);
  assert_int_equal(mkfifo(p, 0600), 0);
  int keep = open(p, O_RDWR); /* so opening it for reading does not block */
  assert_true(keep >= 0);
  assert_int_equal(ps_read_file(p, 0, &b, NULL), -EINVAL);
  close(keep);
  sprintf(p, "%s/missing", dir);
  assert_int_equal(ps_read_file(p, 0, &b, NULL), -ENOENT);
  ps_buf_free(&b);
}

/* A FIFO nobody writes to is refused at once, not waited on (a FIFO named
 * like a stage's slog hung convert for good); a regular file comes
 * blocking, as any reader expects. The alarm ends a wait that would be
 * the bug. */
static void fifo_without_writer_is_not_waited_on(void **st) {
  (void)st;
  char p[128];
  sprintf(p, "%s/lonely-fifo", dir);
  assert_int_equal(mkfifo(p, 0600), 0);
  alarm(10);
  assert_int_equal(ps_open_regular(p, NULL), -EINVAL);
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_read_file(p, 0, &b, NULL), -EINVAL);
  ps_buf_free(&b);
  alarm(0);
  assert_int_equal(ps_open_regular(dir, NULL), -EISDIR);
  sprintf(p, "%s/plain", dir);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs("x\n", f);
  fclose(f);
  struct stat sb;
  int fd = ps_open_regular(p, &sb);
  assert_true(fd >= 0);
  assert_int_equal(sb.st_size, 2);
  assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  close(fd);
}

/* A pipe cannot pread: it is read in order (convert -). */
static void pipe_is_read_whole(void **st) {
  (void)st;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  const char text[] = "line one\nline two";
  assert_int_equal(write(fds[1], text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fds[1]);
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_read_whole(fds[0], 100, &b), 0);
  assert_string_equal(b.data, text);
  close(fds[0]);
  assert_int_equal(pipe(fds), 0);
  assert_int_equal(write(fds[1], text, sizeof text - 1), (ssize_t)(sizeof text - 1));
  close(fds[1]);
  assert_int_equal(ps_read_whole(fds[0], 4, &b), -EFBIG);
  close(fds[0]);
  ps_buf_free(&b);
}

static void pread_full_stops_at_end(void **st) {
  (void)st;
  char p[128], got[16];
  put(p, "short", "0123456789", 10);
  int fd = open(p, O_RDONLY);
  assert_int_equal(ps_pread_full(fd, got, 4, 3), 4);
  assert_memory_equal(got, "3456", 4);
  assert_int_equal(ps_pread_full(fd, got, sizeof got, 8), 2);
  assert_int_equal(ps_pread_full(fd, got, sizeof got, 20), 0);
  close(fd);
  assert_true(ps_pread_full(-1, got, 1, 0) == -EBADF);
}

/* FNV-1a 64 with perfship's seed (not FNV's published offset basis: one
 * digit shorter). Saved states hold these hashes (fingerprints, document
 * contents), so the values are pinned: a changed hash would make every
 * tracked file look rewritten after an upgrade. Hashing in pieces equals
 * hashing at once. */
static void hash_and_clock(void **st) {
  (void)st;
  assert_true(ps_hash64(PS_HASH_SEED, "", 0) == PS_HASH_SEED);
  assert_true(ps_hash64(PS_HASH_SEED, "foobar", 6) == 0x88fad7c0a8ff07f2ULL);
  assert_true(ps_hash64(ps_hash64(PS_HASH_SEED, "foo", 3), "bar", 3) ==
              ps_hash64(PS_HASH_SEED, "foobar", 6));
  uint64_t a = ps_now_ms();
  usleep(20000);
  uint64_t b = ps_now_ms();
  assert_true(b >= a + 15 && b < a + 5000);
  struct stat s = {0};
  s.st_mtim.tv_sec = 1600000000;
  s.st_mtim.tv_nsec = 250000000;
  assert_true(ps_stat_mtime_ns(&s) == 1600000000250000000LL);
}

static void durations_as_people_write_them(void **state) {
  (void)state;
  int64_t s = 0;
  assert_int_equal(ps_parse_duration_s("90m", &s), 0);
  assert_int_equal(s, 5400);
  assert_int_equal(ps_parse_duration_s("36h", &s), 0);
  assert_int_equal(s, 129600);
  assert_int_equal(ps_parse_duration_s("7d", &s), 0);
  assert_int_equal(s, 604800);
  assert_int_equal(ps_parse_duration_s("2w", &s), 0);
  assert_int_equal(s, 1209600);
  assert_int_equal(ps_parse_duration_s("45", &s), 0); /* seconds */
  assert_int_equal(s, 45);
  s = 7;
  const char *bad[] = {"", "d", "0d", "-1d", "+3d", "3x", "3dd", "1.5h", " 3d", "3 d", NULL};
  for (size_t i = 0; bad[i]; i++)
    assert_int_equal(ps_parse_duration_s(bad[i], &s), -EINVAL);
  assert_int_equal(ps_parse_duration_s("99999999w", &s), -ERANGE);
  assert_int_equal(ps_parse_duration_s("99999999999999999999", &s), -EINVAL);
  assert_int_equal(s, 7); /* untouched on failure */
}

/* A revision from the data cannot leave its place in the link: every byte
 * outside the unreserved set is percent-encoded; a template that is not
 * http(s), or a missing revision, gives no link. */
static void compare_url_encodes_revisions(void **state) {
  (void)state;
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_compare_url(&b, "https://github.com/Agoric/agoric-sdk/compare/{good}...{bad}",
                                  "4c709a2979f9", "19bb4e82222a"), 0);
  assert_string_equal(b.data, "https://github.com/Agoric/agoric-sdk/compare/4c709a2979f9...19bb4e82222a");
  b.len = 0;
  assert_int_equal(ps_compare_url(&b, "http://git/?a={good}&b={bad}", "v1.0/x", "a\"><script>&#?"), 0);
  assert_string_equal(b.data, "http://git/?a=v1.0%2Fx&b=a%22%3E%3Cscript%3E%26%23%3F");
  b.len = 0;
  assert_int_equal(ps_compare_url(&b, "javascript:alert({good}{bad})", "a", "b"), -ENOENT);
  assert_int_equal(ps_compare_url(&b, "https://x/{good}...{bad}", "a", NULL), -ENOENT);
  assert_int_equal(ps_compare_url(&b, "https://x/{good}...{bad}", "", "b"), -ENOENT);
  assert_int_equal(ps_compare_url(&b, NULL, "a", "b"), -ENOENT);
  assert_int_equal(b.len, 0);
  /* long revisions give no link, not a link of megabytes (a 40 MB webhook
   * body), and what the buffer held stays as it was */
  char rev[2000];
  memset(rev, 'a', sizeof rev - 1);
  rev[sizeof rev - 1] = '\0';
  ps_buf_puts(&b, "before ");
  assert_int_equal(ps_compare_url(&b, "https://x/{good}...{bad}", rev, rev), 0);
  assert_true(b.len <= 7 + PS_COMPARE_URL_MAX);
  b.len = 7;
  rev[1500] = '/'; /* percent-encoded: 3 bytes each would pass 4 KiB */
  memset(rev, '/', 1400);
  assert_int_equal(ps_compare_url(&b, "https://x/{good}...{bad}", rev, rev), -E2BIG);
  assert_int_equal(b.len, 7);
  assert_string_equal(b.data, "before ");
  ps_buf_free(&b);
}

static void array_room_doubles_and_keeps_items(void **state) {
  int *a = NULL;
  size_t n = 0, cap = 0;
  for (int i = 0; i < 100; i++) {
    assert_int_equal(ps_array_room((void **)&a, n, &cap, sizeof *a, 4), 0);
    a[n++] = i;
  }
  assert_int_equal(cap, 128); /* 4, 8, ... 128 */
  for (int i = 0; i < 100; i++)
    assert_int_equal(a[i], i);
  /* a capacity whose bytes overflow size_t: refused before any allocation */
  size_t big = 1;
  assert_int_equal(ps_array_room((void **)&a, 1, &big, SIZE_MAX / 2 + 1, 1), -ENOMEM);
  assert_int_equal(big, 1);
  assert_int_equal(a[99], 99);
  free(a);
}

static void stage_numbers_as_tags_carry_them(void **state) {
  assert_int_equal(ps_stage_number("0"), 0);
  assert_int_equal(ps_stage_number("12"), 12);
  assert_int_equal(ps_stage_number("100000"), 100000);
  const char *bad[] = {NULL, "", "-1", "+5", " 5", "100001", "3a", "x"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(ps_stage_number(bad[i]), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(whole_file_and_limit),
      cmocka_unit_test(not_regular_files),
      cmocka_unit_test(fifo_without_writer_is_not_waited_on),
      cmocka_unit_test(pipe_is_read_whole),
      cmocka_unit_test(pread_full_stops_at_end),
      cmocka_unit_test(hash_and_clock),
      cmocka_unit_test(durations_as_people_write_them),
      cmocka_unit_test(compare_url_encodes_revisions),
      cmocka_unit_test(array_room_doubles_and_keeps_items),
      cmocka_unit_test(stage_numbers_as_tags_carry_them),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
