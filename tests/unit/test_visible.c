/*
 * test_visible: core/visible.h, what a terminal, a log line or a chat
 * message shows of a name from the data: direction controls and other
 * controls as their escapes, everything else as it is, and a fixed buffer
 * never cut inside an escape or a character.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/visible.h"

static void shown_is(const char *in, int flags, const char *want) {
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_visible(&b, in, flags), 0);
  assert_string_equal(b.data ? b.data : "", want);
  ps_buf_free(&b);
}

static void trojan_source_names(void **st) {
  (void)st;
  /* what the report of the issue showed as "daily-perf-not-failed" */
  shown_is("daily-perf-\xe2\x80\xae" "deliaf-ton", 0, "daily-perf-\\u202edeliaf-ton");
  shown_is("Error: \xe2\x80\xaeretfa deliaf-ton", 0, "Error: \\u202eretfa deliaf-ton");
  shown_is("\xe2\x80\xae" "exe.gnp-evil\xe2\x80\xac", 0, "\\u202eexe.gnp-evil\\u202c");
  const char *const controls[][2] = {
      {"\xe2\x80\xaa", "\\u202a"}, {"\xe2\x80\xab", "\\u202b"}, {"\xe2\x80\xad", "\\u202d"},
      {"\xe2\x81\xa6", "\\u2066"}, {"\xe2\x81\xa7", "\\u2067"}, {"\xe2\x81\xa8", "\\u2068"},
      {"\xe2\x81\xa9", "\\u2069"}, {"\xe2\x80\x8e", "\\u200e"}, {"\xe2\x80\x8f", "\\u200f"},
      {"\xd8\x9c", "\\u061c"},     {"\x1b[2J", "\\u001b[2J"},   {"\x7f", "\\u007f"},
      {"\xc2\x85", "\\u0085"},     {"a\x08" "b", "a\\u0008b"},
  };
  for (size_t i = 0; i < sizeof controls / sizeof controls[0]; i++)
    shown_is(controls[i][0], 0, controls[i][1]);
  assert_true(ps_visible_needed("x\xe2\x80\xaey"));
  assert_false(ps_visible_needed("plain \xc3\xa9 \xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xe2\x80\x94"));
}

static void lines_tabs_and_the_rest(void **st) {
  (void)st;
  shown_is("a\nb\rc\td", 0, "a b c\td");
  shown_is("a\nb\rc\td", PS_VISIBLE_KEEP_LINES, "a\nb\rc\td");
  /* right-to-left letters, a no-break space, an em dash, invalid UTF-8 */
  shown_is("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d a\xc2\xa0" "b \xe2\x80\x94 \xff\xfe", 0,
           "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d a\xc2\xa0" "b \xe2\x80\x94 \xff\xfe");
  /* a sequence cut short by the end is copied, not read past */
  shown_is("x\xe2\x80", 0, "x\xe2\x80");
  shown_is(NULL, 0, "");
}

static void fixed_buffer_never_cut_inside(void **st) {
  (void)st;
  char out[16];
  /* "ab" then an escape of six that does not fit in the 5 bytes left */
  memset(out, 'Z', sizeof out);
  assert_int_equal(ps_visible_into(out, 8, "ab\xe2\x80\xae" "c", 6, 0), 2);
  assert_string_equal(out, "ab");
  assert_int_equal(ps_visible_into(out, 9, "ab\xe2\x80\xae" "c", 6, 0), 8);
  assert_string_equal(out, "ab\\u202e");
  /* a character of three bytes is not split either */
  assert_int_equal(ps_visible_into(out, 4, "a\xe2\x80\x94", 4, 0), 1);
  assert_string_equal(out, "a");
  assert_int_equal(ps_visible_into(out, 1, "abc", 3, 0), 0);
  assert_string_equal(out, "");
}

static char *written(FILE *f) {
  static char text[8192];
  rewind(f);
  size_t n = fread(text, 1, sizeof text - 1, f);
  text[n] = '\0';
  fclose(f);
  return text;
}

/* The commands' one writer: a column cut and padded, a whole string of any
 * length, a message quoting data with its own newline kept. */
static void terminal_writers(void **state) {
  (void)state;
  FILE *f = tmpfile();
  assert_int_equal(ps_visible_put(f, "t\x1b]0;pwned\x07", 8), 0);
  assert_int_equal(ps_visible_put(f, "ok", 4), 0);
  assert_int_equal(ps_visible_put(f, NULL, 0), 0);
  assert_string_equal(written(f), "t\\u001b]ok  ");
  char long_run[3000];
  memset(long_run, 'x', sizeof long_run - 2);
  long_run[sizeof long_run - 2] = 0x7f;
  long_run[sizeof long_run - 1] = '\0';
  f = tmpfile();
  assert_int_equal(ps_visible_put(f, long_run, 0), 0);
  const char *text = written(f);
  assert_int_equal(strlen(text), sizeof long_run - 2 + 6); /* whole, not cut at 1 KiB */
  assert_string_equal(text + sizeof long_run - 2, "\\u007f");
  f = tmpfile();
  assert_int_equal(ps_visible_say(f, "run %s: %d\n", "a\rb\xe2\x80\xae", 7), 0);
  assert_string_equal(written(f), "run a b\\u202e: 7\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(trojan_source_names),
      cmocka_unit_test(lines_tabs_and_the_rest),
      cmocka_unit_test(fixed_buffer_never_cut_inside),
      cmocka_unit_test(terminal_writers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
