/*
 * test_log: the status line (run --once's progress on a terminal) and log
 * lines never mix: a log line erases the status line, ends with its own
 * newline and draws the status line again below itself; a status line
 * that is done stays on screen with a newline. Control characters from
 * data still cannot forge lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

static int saved_stderr = -1;
static int pipe_rd = -1;

/* stderr goes to a pipe for the test; `drain` returns what was written. */
static void capture(void) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  fcntl(p[0], F_SETFL, O_NONBLOCK);
  saved_stderr = dup(STDERR_FILENO);
  dup2(p[1], STDERR_FILENO);
  close(p[1]);
  pipe_rd = p[0];
}

static const char *drain(void) {
  static char buf[8192];
  ssize_t n = read(pipe_rd, buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = '\0';
  return buf;
}

static void release(void) {
  dup2(saved_stderr, STDERR_FILENO);
  close(saved_stderr);
  close(pipe_rd);
}

static int setup(void **st) {
  (void)st;
  unsetenv("JOURNAL_STREAM");
  ps_log_set_level(PS_LOG_INFO);
  capture();
  return 0;
}

static int teardown(void **st) {
  (void)st;
  ps_log_status_done();
  /* A failed assertion's message went into the pipe: show it. */
  const char *left = drain();
  release();
  if (strcmp(left, "\n") != 0 && left[0])
    fprintf(stderr, "%s\n", left);
  return 0;
}

static void test_log_line_redraws_the_status_line_below_itself(void **st) {
  (void)st;
  ps_log_status("runs 1/3");
  assert_string_equal(drain(), "\r\033[Kruns 1/3");
  ps_log_status("runs 2/3");
  assert_string_equal(drain(), "\r\033[Kruns 2/3");
  PS_INFO("runs", "a message");
  char want[128];
  snprintf(want, sizeof want, "\r\033[Kperfship[%ld]: info runs: a message\nruns 2/3",
           (long)getpid());
  assert_string_equal(drain(), want);
  ps_log_status_done();
  assert_string_equal(drain(), "\n");
  /* Without a status line a log line is just itself. */
  PS_WARN("x", "plain");
  snprintf(want, sizeof want, "perfship[%ld]: warning x: plain\n", (long)getpid());
  assert_string_equal(drain(), want);
  ps_log_status_done(); /* nothing on screen: nothing written */
  assert_string_equal(drain(), "");
}

static void test_control_characters_are_still_blanked(void **st) {
  (void)st;
  ps_log_status("files 0/1");
  drain();
  PS_INFO("tail", "%s", "bad\nname\r");
  char want[128];
  snprintf(want, sizeof want, "\r\033[Kperfship[%ld]: info tail: bad name \nfiles 0/1",
           (long)getpid());
  assert_string_equal(drain(), want);
}

static void test_long_message_keeps_the_status_line(void **st) {
  (void)st;
  ps_log_status("runs 9/9");
  drain();
  char big[4000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  PS_INFO("m", "%s", big);
  const char *out = drain();
  size_t n = strlen(out);
  assert_true(n > 2000);
  assert_string_equal(out + n - strlen("\nruns 9/9"), "\nruns 9/9");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_log_line_redraws_the_status_line_below_itself,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_control_characters_are_still_blanked, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_long_message_keeps_the_status_line, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
