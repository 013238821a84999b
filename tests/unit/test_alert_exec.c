/*
 * Unit tests of the exec channel (agent/alert/exec.c) with real programs
 * (small shell scripts in a scratch folder) on a real loop: the event
 * reaches the program as JSON on stdin, unchanged, however hostile the run
 * name; nothing reaches a shell; the token stays out of its environment; a
 * failure is reported with what the program said; a program that hangs is
 * killed with everything it started; one that does not read its input
 * cannot kill the agent; a stop kills what still runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "alert/exec.h"

#include "aux_loop.h"
#include "aux_tmpdir.h"

#define HOSTILE "daily-perf-$(touch PWNED)'\";rm -rf ~;`id`|&<>\\n\xC3\xA9"

typedef struct fixture {
  char dir[64];
  uv_loop_t loop;
  int answers;
  ps_alert_answer last;
} fixture;

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  assert_int_equal(aux_tmpdir_make(fx->dir, sizeof fx->dir, "alert-exec"), 0);
  uv_loop_init(&fx->loop);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture *fx = *state;
  aux_loop_close(&fx->loop);
  assert_int_equal(aux_tmpdir_remove(fx->dir), 0);
  free(fx);
  return 0;
}

static char *script(fixture *fx, const char *name, const char *body) {
  static char path[128];
  snprintf(path, sizeof path, "%s/%s", fx->dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "#!/bin/sh\ncd '%s' || exit 9\n%s\n", fx->dir, body);
  fclose(f);
  assert_int_equal(chmod(path, 0755), 0);
  return path;
}

static void on_answer(void *arg, const ps_alert_answer *a) {
  fixture *fx = arg;
  fx->answers++;
  fx->last = *a;
}

static void event(ps_alert_event *ev, const char *run) {
  ps_alert_event_init(ev, PS_ALERT_RUN_FAILED);
  ps_alert_set(&ev->source, "loadgen");
  ps_alert_set(&ev->run, run);
  ps_alert_set(&ev->text, "it failed");
  ps_alert_id(ev->id, PS_ALERT_RUN_FAILED, "bench-1", "loadgen", run, 1);
  ev->time_ns = 1700000000000000000LL;
}

/* Runs the loop until the answer came (or 10 s passed). */
static void wait_answer(fixture *fx, int n) {
  for (int i = 0; i < 1000 && fx->answers < n; i++)
    uv_run(&fx->loop, UV_RUN_ONCE);
  assert_int_equal(fx->answers, n);
}

static char *slurp(fixture *fx, const char *name) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", fx->dir, name);
  FILE *f = fopen(path, "r");
  if (!f)
    return NULL;
  char *buf = calloc(1, 65536);
  size_t n = fread(buf, 1, 65535, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static void test_event_on_stdin_unchanged(void **state) {
  fixture *fx = *state;
  char *argv[] = {script(fx, "notify", "cat >> got.jsonl\n"
                                       "echo \"$PERFSHIP_ALERT_EVENT $PERFSHIP_ALERT_ID\" > env\n"
                                       "env | grep -c PERFSHIP_TOKEN >> env\n"
                                       "echo \"args: $#\" >> env"),
                  "--channel", "perf; echo injected > INJECTED"};
  setenv("PERFSHIP_TOKEN", "s3cret", 1);
  ps_alert_exec *x;
  assert_int_equal(ps_alert_exec_new(&x, &fx->loop, argv, 3, 5000), 0);
  ps_alert_event ev;
  event(&ev, HOSTILE);
  assert_int_equal(ps_alert_exec_send(x, &ev, on_answer, fx), 0);
  assert_int_equal(fx->answers, 0); /* never from inside the call */
  wait_answer(fx, 1);
  unsetenv("PERFSHIP_TOKEN");
  assert_true(fx->last.delivered);
  assert_non_null(strstr(fx->last.text, "exit 0"));
  char *got = slurp(fx, "got.jsonl");
  assert_non_null(got);
  assert_int_equal(got[strlen(got) - 1], '\n'); /* one line, then EOF */
  cJSON *o = cJSON_Parse(got);
  assert_non_null(o);
  assert_string_equal(cJSON_GetObjectItem(o, "run")->valuestring, HOSTILE);
  assert_string_equal(cJSON_GetObjectItem(o, "id")->valuestring, ev.id);
  cJSON_Delete(o);
  free(got);
  char *env = slurp(fx, "env");
  char expect[128];
  snprintf(expect, sizeof expect, "run_failed %s\n0\nargs: 2\n", ev.id);
  assert_string_equal(env, expect); /* the token stayed with the agent */
  free(env);
  /* nothing of the data, nor of an argument, reached a shell */
  char probe[128];
  snprintf(probe, sizeof probe, "%s/PWNED", fx->dir);
  assert_int_equal(access(probe, F_OK), -1);
  snprintf(probe, sizeof probe, "%s/INJECTED", fx->dir);
  assert_int_equal(access(probe, F_OK), -1);
  ps_alert_event_free(&ev);
  ps_alert_exec_close(x);
}

static void test_failure_is_quoted(void **state) {
  fixture *fx = *state;
  char *argv[] = {script(fx, "fails", "cat > /dev/null\necho 'curl: (22) 403 Forbidden' >&2\n"
                                      "exit 3")};
  ps_alert_exec *x;
  assert_int_equal(ps_alert_exec_new(&x, &fx->loop, argv, 1, 5000), 0);
  ps_alert_event ev;
  event(&ev, "r");
  assert_int_equal(ps_alert_exec_send(x, &ev, on_answer, fx), 0);
  wait_answer(fx, 1);
  assert_false(fx->last.delivered);
  assert_non_null(strstr(fx->last.text, "exit 3"));
  assert_non_null(strstr(fx->last.text, "curl: (22) 403 Forbidden"));
  ps_alert_event_free(&ev);
  ps_alert_exec_close(x);
}

/* Whether `pid` still runs within 2 s (a zombie waiting for init does not). */
static int process_lives(pid_t pid) {
  int alive = 1;
  for (int i = 0; i < 100 && alive; i++) {
    char path[64], st[512] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    alive = f && fgets(st, sizeof st, f) && !strstr(st, ") Z ");
    if (f)
      fclose(f);
    if (alive)
      usleep(20000);
  }
  return alive;
}

static void test_hang_is_killed_with_its_children(void **state) {
  fixture *fx = *state;
  char *argv[] = {script(fx, "hangs", "sleep 60 &\necho $! > child\nsleep 60")};
  ps_alert_exec *x;
  assert_int_equal(ps_alert_exec_new(&x, &fx->loop, argv, 1, 300), 0);
  ps_alert_event ev;
  event(&ev, "r");
  uint64_t t0 = uv_now(&fx->loop);
  assert_int_equal(ps_alert_exec_send(x, &ev, on_answer, fx), 0);
  wait_answer(fx, 1);
  uv_update_time(&fx->loop);
  assert_true(uv_now(&fx->loop) - t0 < 3000);
  assert_false(fx->last.delivered);
  assert_non_null(strstr(fx->last.text, "no exit after 300 ms; killed"));
  char *child = slurp(fx, "child");
  assert_non_null(child);
  pid_t pid = (pid_t)atoi(child);
  free(child);
  /* the background sleep went with its group (gone, or a zombie for init) */
  assert_false(process_lives(pid));
  ps_alert_event_free(&ev);
  ps_alert_exec_close(x);
}

/* A notifier that exits 0 and leaves a child behind: delivered, and the
 * child does not outlive the notifier (docs/alerts.md "exec"). */
static void test_children_end_with_the_program(void **state) {
  fixture *fx = *state;
  char *argv[] = {script(fx, "leaves", "sleep 60 >/dev/null 2>&1 &\necho $! > child\nexit 0")};
  ps_alert_exec *x;
  assert_int_equal(ps_alert_exec_new(&x, &fx->loop, argv, 1, 5000), 0);
  ps_alert_event ev;
  event(&ev, "r");
  assert_int_equal(ps_alert_exec_send(x, &ev, on_answer, fx), 0);
  wait_answer(fx, 1);
  assert_true(fx->last.delivered);
  char *child = slurp(fx, "child");
  assert_non_null(child);
  pid_t pid = (pid_t)atoi(child);
  free(child);
  assert_false(process_lives(pid));
  ps_alert_event_free(&ev);
  ps_alert_exec_close(x);
}

static void test_not_reading_stdin_is_harmless(void **state) {
  fixture *fx = *state;
  char *argv[] = {"/bin/true"};
  ps_alert_exec *x;
  assert_int_equal(ps_alert_exec_new(&x, &fx->loop, argv, 1, 5000), 0);
  ps_alert_event ev;
  event(&ev, "r");
  /* more than a pipe holds, so the write meets a closed pipe */
  char *big = malloc(300000);
  memset(big, 'a', 299999);
  big[299999] = '\0';
  free(ev.text);
  ev.text = big;
  assert_int_equal(ps_alert_exec_send(x, &ev, on_answer, fx), 0);
  wait_answer(fx, 1);
  assert_true(fx->last.delivered);
  ps_alert_event_free(&ev);
  ps_alert_exec_close(x);
}

static void test_missing_program_fails_the_call(void **state) {
  fixture *fx = *state;
  char *argv[] = {"/nonexistent/notify"};
  ps_alert_exec *x;
  assert_int_equal(ps_alert_exec_new(&x, &fx->loop, argv, 1, 5000), 0);
  ps_alert_event ev;
  event(&ev, "r");
  assert_int_equal(ps_alert_exec_send(x, &ev, on_answer, fx), -ENOENT);
  uv_run(&fx->loop, UV_RUN_NOWAIT);
  assert_int_equal(fx->answers, 0); /* a failed call never calls back */
  ps_alert_event_free(&ev);
  ps_alert_exec_close(x);
  char *empty[] = {""};
  assert_int_equal(ps_alert_exec_new(&x, &fx->loop, empty, 1, 5000), -EINVAL);
}

static void test_close_kills_what_runs(void **state) {
  fixture *fx = *state;
  char *argv[] = {script(fx, "slow", "sleep 60")};
  ps_alert_exec *x;
  assert_int_equal(ps_alert_exec_new(&x, &fx->loop, argv, 1, 60000), 0);
  ps_alert_event ev;
  event(&ev, "r");
  assert_int_equal(ps_alert_exec_send(x, &ev, on_answer, fx), 0);
  uv_run(&fx->loop, UV_RUN_NOWAIT);
  ps_alert_exec_close(x);
  wait_answer(fx, 1);
  assert_false(fx->last.delivered);
  assert_non_null(strstr(fx->last.text, "shutting down"));
  ps_alert_event_free(&ev);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_event_on_stdin_unchanged, setup, teardown),
      cmocka_unit_test_setup_teardown(test_failure_is_quoted, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hang_is_killed_with_its_children, setup, teardown),
      cmocka_unit_test_setup_teardown(test_children_end_with_the_program, setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_reading_stdin_is_harmless, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_program_fails_the_call, setup, teardown),
      cmocka_unit_test_setup_teardown(test_close_kills_what_runs, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
