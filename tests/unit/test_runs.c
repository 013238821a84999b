/*
 * Unit tests of the run lifecycle (agent/runs/runs.c) and of converting run
 * folders (agent/input/feed_run.c, what `convert -f loadgen` runs): status
 * rules on temp folders with controlled modification times, marker shapes,
 * the unterminated-last-line rule and the stall threshold on copies of the
 * fixture runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "formats/format.h"
#include "influx/lp_encode.h"
#include "input/feed_run.h"
#include "runs/runs.h"

#include "capture.h"
#include "aux_tmpdir.h"

#define T0 1647216131.81362

static char *g_root;

static int setup(void **state) {
  (void)state;
  char root[64];
  if (aux_tmpdir_make(root, sizeof root, "runs"))
    return -1;
  g_root = strdup(root);
  return g_root ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  int rc = aux_tmpdir_remove(g_root);
  free(g_root);
  return rc;
}

static char *mkrun(const char *name) {
  char *dir = NULL;
  assert_true(asprintf(&dir, "%s/%s", g_root, name) > 0);
  assert_int_equal(mkdir(dir, 0755), 0);
  return dir;
}

static void put(const char *dir, const char *file, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void set_mtime(const char *dir, const char *file, time_t t) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  struct timespec ts[2] = {{t, 0}, {t, 0}};
  assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static ps_run_facts facts_running(void) {
  ps_run_facts f;
  memset(&f, 0, sizeof f);
  f.have_origin = f.have_first_wall = f.have_last_wall = 1;
  f.origin_s = T0;
  f.first_wall_s = T0 + 3.768029;
  f.last_wall_s = T0 + 1000.25;
  return f;
}

static ps_run_facts facts_finished(int success) {
  ps_run_facts f = facts_running();
  f.finish_seen = 1;
  f.have_started_at = 1;
  f.started_at_s = T0 + 3.77;
  snprintf(f.profile, sizeof f.profile, "local");
  if (success) {
    f.have_ended_at = f.have_duration = 1;
    f.ended_at_s = T0 + 3395.25;
    f.duration_s = 3391.486817;
  }
  return f;
}

static void evaluate(const char *dir, int64_t now, const ps_run_facts *f,
                     ps_run_view *v) {
  ps_buf err;
  ps_buf_init(&err, 0);
  assert_int_equal(ps_run_evaluate(dir, now, 1800, f, v, &err), 0);
  ps_buf_free(&err);
}

static void marks(const ps_run_view *v, int backfill, capture *c) {
  ps_emitter em = cap_emitter(c, "perf.jsonl");
  assert_int_equal(
      ps_run_emit_markers(v, backfill, PS_RUN_MARK_START | PS_RUN_MARK_END,
                          &em),
      0);
}

static void test_running(void **state) {
  (void)state;
  char *dir = mkrun("daily-perf-aaaaaaaaaaaa");
  put(dir, "perf.jsonl", "{}\n");
  put(dir, "exit_code", "");
  ps_run_facts f = facts_running();
  ps_run_view v;
  evaluate(dir, (int64_t)time(NULL), &f, &v);
  assert_int_equal(v.state, PS_RUN_RUNNING);
  assert_int_equal(v.status, PS_RUN_STATUS_NONE);
  assert_true(v.have_exit_file);
  assert_false(v.have_exit_code);
  capture c = {0};
  marks(&v, 0, &c);
  assert_int_equal(c.npoints, 1);
  assert_string_equal(
      c.points[0].text,
      "runs|event=start,revision=aaaaaaaaaaaa,run=daily-perf-aaaaaaaaaaaa,"
      "source=loadgen,status=running|text:s=daily-perf-aaaaaaaaaaaa started,"
      "backfill:b=false|1647216135581649000");
  cap_free(&c);
  /* no exit_code file at all and no perf-finish: running too */
  char *dir2 = mkrun("run-1647216131000");
  put(dir2, "perf.jsonl", "{}\n");
  evaluate(dir2, (int64_t)time(NULL), &f, &v);
  assert_int_equal(v.state, PS_RUN_RUNNING);
  assert_false(v.have_exit_file);
  /* garbage in exit_code is not a number: still running */
  put(dir, "exit_code", "oops\n");
  evaluate(dir, (int64_t)time(NULL), &f, &v);
  assert_int_equal(v.state, PS_RUN_RUNNING);
  /* the runner writes `echo $?`: padding is fine up to 64 bytes, a longer
   * file is no exit code (a folder is not ended by it) */
  char padded[80];
  snprintf(padded, sizeof padded, "  0%61s", "\n");
  assert_int_equal(strlen(padded), 64);
  put(dir, "exit_code", padded);
  evaluate(dir, (int64_t)time(NULL), &f, &v);
  assert_int_equal(v.state, PS_RUN_ENDED);
  assert_true(v.have_exit_code);
  assert_int_equal(v.exit_code, 0);
  snprintf(padded, sizeof padded, "  0%62s", "\n");
  put(dir, "exit_code", padded);
  evaluate(dir, (int64_t)time(NULL), &f, &v);
  assert_int_equal(v.state, PS_RUN_RUNNING);
  assert_true(v.have_exit_file);
  assert_false(v.have_exit_code);
  free(dir);
  free(dir2);
}

static void test_stalled(void **state) {
  (void)state;
  char *dir = mkrun("daily-perf-bbbbbbbbbbbb");
  put(dir, "perf.jsonl", "{}\n");
  put(dir, "chain-stage-2.slog.gz", "x");
  put(dir, "exit_code", "");
  set_mtime(dir, "perf.jsonl", 1647217000);
  set_mtime(dir, "chain-stage-2.slog.gz", 1647218000); /* the newest */
  set_mtime(dir, "exit_code", 1647216100);
  ps_run_facts f = facts_running();
  ps_run_view v;
  /* exactly stall_after_s after the newest change: not yet stalled */
  evaluate(dir, 1647218000 + 1800, &f, &v);
  assert_int_equal(v.state, PS_RUN_RUNNING);
  evaluate(dir, 1647218000 + 1801, &f, &v);
  assert_int_equal(v.state, PS_RUN_STALLED);
  assert_int_equal(v.status, PS_RUN_STATUS_STALLED);
  assert_int_equal(v.end_ns, (1647218000LL + 1800) * 1000000000LL);
  capture c = {0};
  marks(&v, 0, &c);
  assert_int_equal(c.npoints, 2); /* start and stalled end; no loadgen_run status */
  assert_non_null(strstr(c.points[1].text, "event=end,"));
  assert_non_null(strstr(c.points[1].text, "status=stalled|"));
  assert_non_null(strstr(c.points[1].text, "no file changed for 30m0s"));
  assert_non_null(strstr(c.points[1].text, "|1647219800000000000"));
  cap_free(&c);
  /* a file grows again: running once more */
  set_mtime(dir, "chain-stage-2.slog.gz", 1647219900);
  evaluate(dir, 1647219900 + 60, &f, &v);
  assert_int_equal(v.state, PS_RUN_RUNNING);
  free(dir);
}

static void test_success(void **state) {
  (void)state;
  char *dir = mkrun("daily-perf-cccccccccccc");
  put(dir, "perf.jsonl", "{}\n");
  put(dir, "exit_code", "0\n");
  put(dir, "docker.log", "summary: fine\n");
  ps_run_facts f = facts_finished(1);
  ps_run_view v;
  evaluate(dir, (int64_t)time(NULL), &f, &v);
  assert_int_equal(v.state, PS_RUN_ENDED);
  assert_int_equal(v.status, PS_RUN_STATUS_SUCCESS);
  assert_true(v.have_exit_code);
  assert_int_equal(v.exit_code, 0);
  assert_int_equal(v.end_ns, 1647219527063620000LL); /* stats.endedAt */
  capture c = {0};
  marks(&v, 1, &c);
  assert_int_equal(c.npoints, 3);
  assert_string_equal(
      c.points[1].text,
      "runs|event=end,revision=cccccccccccc,run=daily-perf-cccccccccccc,"
      "source=loadgen,status=success|text:s=daily-perf-cccccccccccc ended: "
      "success after 56m31s,backfill:b=true,exitCode:i=0,duration:f="
      "3391.486817|1647219527063620000");
  assert_string_equal(c.points[2].text,
                      "loadgen_run|profile=local,revision=cccccccccccc,run="
                      "daily-perf-cccccccccccc,test_type=daily-perf|status:s="
                      "success,exitCode:i=0|1647216135583620000");
  cap_free(&c);
  /* without the queue's exit_code file, a read perf-finish ends the run */
  char *dir2 = mkrun("plain");
  put(dir2, "perf.jsonl", "{}\n");
  evaluate(dir2, (int64_t)time(NULL), &f, &v);
  assert_int_equal(v.state, PS_RUN_ENDED);
  assert_int_equal(v.status, PS_RUN_STATUS_SUCCESS);
  assert_false(v.have_exit_code);
  free(dir);
  free(dir2);
}

static const char FAILED_LOG[] =
    "+ exec ./runner/bin/loadgen-runner --stages=6\n"
    "stage-3: runner: Stopping chain\n"
    "summary: Cycles stats: { cycleCount: 214 }\n"
    "Error: Loadgen vault task 25 failed\n"
    "    at Object.finish (file:///app/runner/lib/main.js:778:31)\n"
    "    at monitorLoadgen (file:///app/runner/lib/monitor/loadgen-monitor.js:43:29)\n";

static void test_failed(void **state) {
  (void)state;
  char *dir = mkrun("daily-perf-dddddddddddd");
  put(dir, "perf.jsonl", "{}\n");
  put(dir, "exit_code", "2\n");
  put(dir, "docker.log", FAILED_LOG);
  ps_run_facts f = facts_finished(0);
  ps_run_view v;
  evaluate(dir, (int64_t)time(NULL), &f, &v);
  assert_int_equal(v.state, PS_RUN_ENDED);
  assert_int_equal(v.status, PS_RUN_STATUS_FAILED);
  assert_string_equal(v.error_line, "Error: Loadgen vault task 25 failed");
  /* no endedAt: the wall time of the last line read */
  assert_int_equal(v.end_ns, 1647217132063620000LL);
  capture c = {0};
  marks(&v, 0, &c);
  assert_int_equal(c.npoints, 3);
  assert_non_null(strstr(c.points[1].text, "status=failed|"));
  assert_non_null(strstr(
      c.points[1].text, "text:s=daily-perf-dddddddddddd ended: failed after 16m36s "
                "(exit code 2): Error: Loadgen vault task 25 failed,"));
  assert_non_null(strstr(c.points[1].text, "exitCode:i=2"));
  assert_non_null(strstr(c.points[2].text, "status:s=failed,exitCode:i=2|"));
  cap_free(&c);
  /* endedAt present but a non-zero exit: not a success */
  ps_run_facts ok = facts_finished(1);
  evaluate(dir, (int64_t)time(NULL), &ok, &v);
  assert_int_equal(v.status, PS_RUN_STATUS_FAILED);
  /* killed (exit 137) with no perf-finish: failed, and success=false on
   * the loadgen_run row since no runner verdict exists */
  put(dir, "exit_code", "137");
  put(dir, "docker.log", "stage-1: runner: Running chain\n");
  ps_run_facts killed = facts_running();
  evaluate(dir, (int64_t)time(NULL), &killed, &v);
  assert_int_equal(v.status, PS_RUN_STATUS_FAILED);
  assert_string_equal(v.error_line, "");
  capture k = {0};
  marks(&v, 0, &k);
  assert_non_null(strstr(k.points[1].text, "failed after 16m36s (exit code 137),"));
  assert_non_null(strstr(k.points[2].text, "loadgen_run|revision=dddddddddddd,run="
                                   "daily-perf-dddddddddddd,test_type=daily-"
                                   "perf|status:s=failed,exitCode:i=137,"
                                   "success:b=false|1647216135581649000"));
  cap_free(&k);
  free(dir);
}

static void test_interrupted(void **state) {
  (void)state;
  char *dir = mkrun("manual-7102939");
  put(dir, "perf.jsonl", "{}\n");
  put(dir, "exit_code", "2\n");
  put(dir, "docker.log",
      "summary: Cycles stats: { cycleCount: 0 }\n"
      "Error: Interrupted\n"
      "    at process.onInterrupt (file:///app/runner/lib/main.js:127:19) {\n"
      "  code: 'ERR_SCRIPT_EXECUTION_INTERRUPTED'\n"
      "}\n");
  ps_run_facts f = facts_finished(0);
  ps_run_view v;
  evaluate(dir, (int64_t)time(NULL), &f, &v);
  assert_int_equal(v.status, PS_RUN_STATUS_INTERRUPTED);
  assert_string_equal(v.error_line, "Error: Interrupted");
  assert_string_equal(v.id.revision, "7102939");
  free(dir);
}

/* docker.log: only its tail is read; terminal escapes go; a long line is
 * cut on a UTF-8 boundary so the marker stays valid. */
static void test_docker_log_cleaning(void **state) {
  (void)state;
  char *dir = mkrun("daily-perf-eeeeeeeeeeee");
  put(dir, "perf.jsonl", "{}\n");
  put(dir, "exit_code", "2");
  ps_buf log;
  ps_buf_init(&log, 0);
  for (int i = 0; i < 5000; i++)
    ps_buf_puts(&log, "Error: an early failure that is not the last one\n");
  ps_buf_puts(&log, "\x1b[31mTypeError: bad \xc3\xa9");
  for (int i = 0; i < 300; i++)
    ps_buf_puts(&log, "\xc3\xa9");
  ps_buf_puts(&log, "\x1b[0m\n    at x (y.js:1:1)\n");
  put(dir, "docker.log", log.data);
  ps_buf_free(&log);
  ps_run_facts f = facts_finished(0);
  ps_run_view v;
  evaluate(dir, (int64_t)time(NULL), &f, &v);
  assert_int_equal(v.status, PS_RUN_STATUS_FAILED);
  assert_true(strncmp(v.error_line, "TypeError: bad \xc3\xa9", 17) == 0);
  size_t n = strlen(v.error_line);
  assert_true(n <= 511 && n > 400);
  /* ends on a whole character */
  assert_int_equal((unsigned char)v.error_line[n - 1], 0xa9);
  free(dir);
}

/* ---- converting copies of the fixture runs -------------------------------- */

static char *copy_fixture(const char *name) {
  static int seq;
  char *parent = NULL, *run = NULL;
  assert_true(asprintf(&parent, "%s/fx-%d", g_root, ++seq) > 0);
  assert_int_equal(mkdir(parent, 0755), 0);
  assert_true(asprintf(&run, "%s/%s", parent, name) > 0);
  assert_int_equal(mkdir(run, 0755), 0);
  char cmd[1024];
  /* cp without -p: fresh modification times, so the run is not stalled */
  snprintf(cmd, sizeof cmd, "cp %s/loadgen/synth/%s/* '%s'/", PS_TEST_DATA,
           name, run);
  assert_int_equal(system(cmd), 0);
  free(parent);
  return run;
}

static int convert_at(const char *path, int64_t now, int64_t stall_after_s, capture *c,
                      ps_buf *err) {
  ps_emitter em = cap_emitter(c, "perf.jsonl");
  return ps_run_convert_path(&ps_format_loadgen, NULL, path, now, stall_after_s, 0, &em,
                             err);
}

static void convert(const char *path, capture *c) {
  ps_buf err;
  ps_buf_init(&err, 0);
  int rc = convert_at(path, (int64_t)time(NULL), PS_RUN_STALL_AFTER_DEFAULT_S, c, &err);
  if (rc)
    fail_msg("ps_run_convert_path(%s): %d %s", path, rc, err.data ? err.data : "");
  ps_buf_free(&err);
}

static size_t count_marker(const capture *c, const char *event) {
  size_t n = 0;
  for (size_t i = 0; i < c->npoints; i++)
    if (!strncmp(c->points[i].text, "runs|", 5) && strstr(c->points[i].text, event))
      n++;
  return n;
}

static void test_convert_in_progress(void **state) {
  (void)state;
  char *run = copy_fixture("daily-perf-31400797d904");
  capture c = {0};
  convert(run, &c);
  assert_int_equal(c.nrejects, 0);
  assert_int_equal(count_marker(&c, "event=start"), 1);
  assert_int_equal(count_marker(&c, "event=end"), 0);
  assert_null(cap_find_text(&c, "loadgen_run", NULL, NULL));
  size_t storage_before = cap_count(&c, "loadgen_storage");
  /* the unterminated last line (a storage snapshot) was not read */
  cap_free(&c);
  /* the container is killed: exit_code filled in; now it is read */
  put(run, "exit_code", "137\n");
  capture k = {0};
  convert(run, &k);
  assert_int_equal(k.nrejects, 0);
  assert_true(cap_count(&k, "loadgen_storage") > storage_before);
  assert_int_equal(count_marker(&k, "event=end"), 1);
  assert_non_null(cap_find_text(&k, "runs", "status=failed", "backfill:b=true"));
  cap_free(&k);
  /* a torn last line of an ended run does not parse: one reject, the rest
   * stands */
  char path[600];
  snprintf(path, sizeof path, "%s/perf.jsonl", run);
  FILE *f = fopen(path, "a");
  fputs("\n{\"timestamp\":9999,\"type\":\"perf-sta", f);
  fclose(f);
  capture t = {0};
  convert(path, &t); /* the perf.jsonl path works as well as the folder */
  assert_int_equal(t.nrejects, 1);
  assert_int_equal(count_marker(&t, "event=end"), 1);
  cap_free(&t);
  free(run);
}

static void test_convert_ended_runs(void **state) {
  (void)state;
  static const struct {
    const char *name, *status;
  } runs[] = {
      {"daily-perf-9eb37164f6f7", "success"},
      {"daily-perf-1cb7c2d80874", "success"},
      {"daily-perf-ba4674aa5495", "failed"},
      {"manual-7102939", "interrupted"},
  };
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    char *run = copy_fixture(runs[i].name);
    capture c = {0}, again = {0};
    convert(run, &c);
    assert_int_equal(c.nrejects, 0);
    assert_int_equal(count_marker(&c, "event=start"), 1);
    assert_int_equal(count_marker(&c, "event=end"), 1);
    char want[64];
    snprintf(want, sizeof want, "status=%s|", runs[i].status);
    assert_non_null(cap_find_text(&c, "runs", "event=end", want));
    snprintf(want, sizeof want, "status:s=%s", runs[i].status);
    assert_non_null(cap_find_text(&c, "loadgen_run", want, NULL));
    /* convert twice: identical */
    convert(run, &again);
    assert_int_equal(c.npoints, again.npoints);
    for (size_t j = 0; j < c.npoints; j++)
      assert_string_equal(c.points[j].text, again.points[j].text);
    cap_free(&c);
    cap_free(&again);
    free(run);
  }
  /* a folder that does not exist is an error, not a crash */
  capture c = {0};
  ps_buf err;
  ps_buf_init(&err, 0);
  assert_int_equal(convert_at("/nonexistent/x", 0, 1800, &c, &err), -ENOENT);
  assert_string_equal(err.data, "No such file or directory");
  ps_buf_free(&err);
  /* a results folder of run folders: every run, in name order */
  char parent[600];
  snprintf(parent, sizeof parent, "%s/results", g_root);
  assert_int_equal(mkdir(parent, 0755), 0);
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "cp -r %s/loadgen/synth/manual-7102939 %s/loadgen/synth/"
           "daily-perf-9eb37164f6f7 '%s'/ && mkdir '%s'/empty",
           PS_TEST_DATA, PS_TEST_DATA, parent, parent);
  assert_int_equal(system(cmd), 0);
  capture all = {0};
  convert(parent, &all);
  assert_int_equal(count_marker(&all, "event=end"), 2);
  size_t first_manual = SIZE_MAX, last_daily = 0;
  for (size_t j = 0; j < all.npoints; j++) {
    if (strstr(all.points[j].text, "run=manual-7102939") && first_manual == SIZE_MAX)
      first_manual = j;
    if (strstr(all.points[j].text, "run=daily-perf-9eb37164f6f7"))
      last_daily = j;
  }
  assert_true(last_daily < first_manual);
  cap_free(&all);
  ps_buf_init(&err, 0);
  snprintf(parent, sizeof parent, "%s/results/empty", g_root);
  assert_int_equal(convert_at(parent, 0, 1800, &c, &err), -ENOENT);
  assert_string_equal(err.data, "no perf.jsonl in it or in its subfolders");
  ps_buf_free(&err);
}

/* The stall threshold is the caller's (convert -c FILE passes
 * alerts.stall_after_s): the same running run is stalled for one caller and
 * running for another, and the stall marker's time moves with it. */
static void test_convert_stall_threshold(void **state) {
  (void)state;
  char *run = copy_fixture("daily-perf-31400797d904");
  int64_t now = (int64_t)time(NULL);
  capture wide = {0}, tight = {0};
  ps_buf err;
  ps_buf_init(&err, 0);
  assert_int_equal(convert_at(run, now + 600, 3600, &wide, &err), 0);
  assert_int_equal(count_marker(&wide, "event=end"), 0);
  assert_int_equal(convert_at(run, now + 600, 60, &tight, &err), 0);
  assert_int_equal(count_marker(&tight, "event=end"), 1);
  assert_non_null(cap_find_text(&tight, "runs", "status=stalled", NULL));
  /* everything but the marker is the same */
  assert_int_equal(tight.npoints, wide.npoints + 1);
  ps_buf_free(&err);
  cap_free(&wide);
  cap_free(&tight);
  free(run);
}

/* A run folder holds perf.jsonl or exit_code (either may come first). */
static void test_is_folder(void **state) {
  (void)state;
  char *a = mkrun("only-perf");
  char *b = mkrun("only-exit");
  char *c = mkrun("only-slog");
  put(a, "perf.jsonl", "");
  put(b, "exit_code", "");
  put(c, "chain-stage-0.slog.gz", "");
  assert_true(ps_run_is_folder(a));
  assert_true(ps_run_is_folder(b));
  assert_false(ps_run_is_folder(c));
  assert_false(ps_run_is_folder("/nonexistent/run"));
  free(a);
  free(b);
  free(c);
}

/* Times come from the data; one far outside InfluxDB's range must come out
 * as a timestamp the encoder refuses, not as undefined behaviour. */
static void test_seconds_out_of_range(void **state) {
  (void)state;
  assert_true(ps_seconds_to_ns(1647216131.81362) == 1647216131813620000LL);
  assert_true(ps_seconds_to_ns(-1.5) == -1500000000LL);
  assert_true(ps_seconds_to_ns(1e30) == INT64_MIN);
  assert_true(ps_seconds_to_ns(-1e30) == INT64_MIN);
  assert_true(ps_seconds_to_ns(NAN) == INT64_MIN);
  ps_field f = ps_field_float("x", 1.0);
  ps_point p = {"m", NULL, 0, &f, 1, ps_seconds_to_ns(1e30)};
  ps_buf out;
  ps_buf_init(&out, 0);
  const char *reason = NULL;
  assert_true(ps_lp_encode(&out, &p, NULL, 0, &reason) < 0);
  assert_non_null(strstr(reason, "timestamp outside"));
  ps_buf_free(&out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seconds_out_of_range),
      cmocka_unit_test(test_running),
      cmocka_unit_test(test_stalled),
      cmocka_unit_test(test_success),
      cmocka_unit_test(test_failed),
      cmocka_unit_test(test_interrupted),
      cmocka_unit_test(test_docker_log_cleaning),
      cmocka_unit_test(test_convert_in_progress),
      cmocka_unit_test(test_convert_ended_runs),
      cmocka_unit_test(test_convert_stall_threshold),
      cmocka_unit_test(test_is_folder),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
