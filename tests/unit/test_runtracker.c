/*
 * Unit tests of the pipeline's run tracker (agent/pipeline/runtracker.c):
 * which paths make a run folder, when a run is judged (never before its
 * perf.jsonl was read to the end), the backfill rule, which markers go when
 * (start, end, a stall once and the real end later), that events are
 * reported only once their markers are acknowledged and a refused batch is
 * sent again, and that a restart from the saved JSON neither re-sends
 * markers nor reports events again. Markers go to a capture standing in for
 * the delivery (pl_aux_out), acknowledged by the test.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <uv.h>

#include "formats/format.h"
#include "influx/lp_encode.h"
#include "pipeline/commit.h"
#include "pipeline/runtracker.h"

#include "aux_capture.h"

#include "aux_loop.h"
#include "aux_tmpdir.h"

#define T0 1647216131.81362
#define MAX_SENT 16
#define MAX_EVENTS 16

typedef struct sent {
  ps_pbatch *b;
  void (*on_done)(void *arg, int acked);
  void *arg;
} sent;

typedef struct event {
  pl_run_event_kind kind;
  char run[256];
  ps_run_status status;
  int backfill, after_stall;
} event;

typedef struct fixture {
  char root[64];
  char state_dir[96];
  uv_loop_t loop;
  ps_config cfg;
  ps_source_cfg *src;
  pl_shared sh;
  pl_gens gens;
  ps_state saved;
  pl_registry reg;
  pl_commit commit;
  pl_runs runs;
  sent sent[MAX_SENT];
  size_t nsent;
  event events[MAX_EVENTS];
  size_t nevents;
} fixture;

static int cap_send(void *ctx, ps_pbatch *b, void (*on_done)(void *, int), void *arg) {
  fixture *fx = ctx;
  assert_true(fx->nsent < MAX_SENT);
  fx->sent[fx->nsent++] = (sent){b, on_done, arg};
  return 0;
}

static void on_event(void *ctx, const pl_run_event *ev) {
  fixture *fx = ctx;
  assert_true(fx->nevents < MAX_EVENTS);
  event *e = &fx->events[fx->nevents++];
  e->kind = ev->kind;
  snprintf(e->run, sizeof e->run, "%s", ev->view->id.run);
  e->status = ev->view->status;
  e->backfill = ev->backfill;
  e->after_stall = ev->after_stall;
}

static void start_tracker(fixture *fx, const char *saved_json) {
  pl_aux_out out = {aux_encode_plain, cap_send, fx};
  pl_runs_hooks hooks = {on_event, fx};
  pl_runs_init(&fx->runs, &fx->sh, &fx->reg, NULL, &out, &fx->commit, &hooks);
  pl_runs_from_json(&fx->runs, saved_json);
}

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  assert_non_null(fx);
  assert_int_equal(aux_tmpdir_make(fx->root, sizeof fx->root, "runtracker"), 0);
  snprintf(fx->state_dir, sizeof fx->state_dir, "%s/.state", fx->root);
  assert_int_equal(mkdir(fx->state_dir, 0700), 0);
  uv_loop_init(&fx->loop);
  ps_config_defaults(&fx->cfg);
  free(fx->cfg.state_dir);
  fx->cfg.state_dir = strdup(fx->state_dir);
  fx->cfg.sources = calloc(1, sizeof *fx->cfg.sources);
  ps_source_defaults(&fx->cfg.sources[0]);
  fx->cfg.sources[0].format = PS_FMT_LOADGEN;
  fx->cfg.nsources = 1;
  fx->src = &fx->cfg.sources[0];
  fx->sh.loop = &fx->loop;
  fx->sh.cfg = &fx->cfg;
  pl_gens_init(&fx->gens, &fx->cfg);
  ps_state_init(&fx->saved);
  pl_registry_init(&fx->reg, &fx->sh, &fx->gens, &fx->saved);
  pl_commit_hooks ch = {NULL, NULL};
  pl_commit_init(&fx->commit, &fx->sh, &fx->reg, &fx->saved, &ch);
  start_tracker(fx, NULL);
  *state = fx;
  return 0;
}

static void drop_sent(fixture *fx) {
  for (size_t i = 0; i < fx->nsent; i++)
    ps_pbatch_free(fx->sent[i].b);
  fx->nsent = 0;
}

static void stop_tracker(fixture *fx) {
  pl_runs_close(&fx->runs);
  uv_run(&fx->loop, UV_RUN_NOWAIT);
  pl_runs_free(&fx->runs);
}

static int teardown(void **state) {
  fixture *fx = *state;
  drop_sent(fx);
  stop_tracker(fx);
  fx->sh.stopping = 2;
  pl_commit_close(&fx->commit);
  aux_loop_close(&fx->loop);
  pl_registry_free(&fx->reg);
  ps_state_free(&fx->saved);
  ps_config_free(&fx->cfg);
  assert_int_equal(aux_tmpdir_remove(fx->root), 0);
  free(fx);
  return 0;
}

static char *run_dir(fixture *fx, const char *name) {
  static char p[200];
  snprintf(p, sizeof p, "%s/%s", fx->root, name);
  return p;
}

static void put(fixture *fx, const char *run, const char *file, const char *text) {
  char path[300];
  snprintf(path, sizeof path, "%s/%s", run_dir(fx, run), file);
  mkdir(run_dir(fx, run), 0755);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void age(fixture *fx, const char *run, const char *file, time_t t) {
  char path[300];
  snprintf(path, sizeof path, "%s/%s", run_dir(fx, run), file);
  struct timespec ts[2] = {{t, 0}, {t, 0}};
  assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void note(fixture *fx, const char *run, const char *file) {
  char path[300];
  snprintf(path, sizeof path, "%s/%s", run_dir(fx, run), file);
  pl_runs_note_path(&fx->runs, fx->src, path, 0);
}

/* Lets the tracker's evaluation timer fire (it never judges inline). */
static void settle(fixture *fx) {
  uint64_t until = uv_now(&fx->loop) + 1000;
  size_t before = fx->nsent;
  while (uv_now(&fx->loop) < until && fx->nsent == before) {
    uv_run(&fx->loop, UV_RUN_NOWAIT);
    usleep(10000);
    uv_update_time(&fx->loop);
  }
}

static void ack(fixture *fx, size_t i, int acked) {
  sent s = fx->sent[i];
  fx->sent[i].b = NULL;
  ps_pbatch_free(s.b);
  s.on_done(s.arg, acked);
}

static int body_has(const fixture *fx, size_t i, const char *text) {
  const ps_buf *b = &fx->sent[i].b->b.body;
  return b->data && strstr(b->data, text) != NULL;
}

/* A finished run's facts as its perf.jsonl would have given them. */
static char *facts_json(int finished) {
  ps_run_facts f;
  memset(&f, 0, sizeof f);
  f.have_origin = f.have_first_wall = f.have_last_wall = 1;
  f.origin_s = T0;
  f.first_wall_s = T0 + 3.768029;
  f.last_wall_s = T0 + 1000.25;
  if (finished) {
    f.finish_seen = f.have_started_at = f.have_ended_at = f.have_duration = 1;
    f.started_at_s = T0 + 3.77;
    f.ended_at_s = T0 + 3395.25;
    f.duration_s = 3391.486817;
  }
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_run_facts_to_json(&f, &b), 0);
  return b.data;
}

/* The saved state of a run seen before with its facts, nothing acked. */
static char *seen_before(const char *folder, int finished, int backfill) {
  char *facts = facts_json(finished);
  char *json = NULL;
  assert_true(asprintf(&json,
                       "{\"%s\":{\"first_seen\":1,\"backfill\":%s,\"start_acked\":false,"
                       "\"end_acked\":\"\",\"stall_acked\":false,\"facts\":%s}}",
                       folder, backfill ? "true" : "false", facts) > 0);
  free(facts);
  return json;
}

static void restart_with(fixture *fx, const char *json) {
  drop_sent(fx);
  stop_tracker(fx);
  start_tracker(fx, json);
}

static void test_only_run_folders_are_tracked(void **state) {
  fixture *fx = *state;
  put(fx, "notes", "readme.txt", "hello");
  note(fx, "notes", "readme.txt");
  size_t runs, done;
  pl_runs_progress(&fx->runs, &runs, &done);
  assert_int_equal(runs, 0);
  put(fx, "daily-perf-aaaaaaaaaaaa", "exit_code", "");
  note(fx, "daily-perf-aaaaaaaaaaaa", "exit_code");
  pl_runs_progress(&fx->runs, &runs, &done);
  assert_int_equal(runs, 1);
  /* other formats have no run folders */
  fx->src->format = PS_FMT_JSONL;
  put(fx, "daily-perf-bbbbbbbbbbbb", "exit_code", "");
  note(fx, "daily-perf-bbbbbbbbbbbb", "exit_code");
  pl_runs_progress(&fx->runs, &runs, &done);
  assert_int_equal(runs, 1);
}

static void test_ended_run_markers_then_events(void **state) {
  fixture *fx = *state;
  const char *name = "daily-perf-9eb37164f6f7";
  put(fx, name, "perf.jsonl", "{}\n");
  put(fx, name, "exit_code", "0\n");
  char *json = seen_before(run_dir(fx, name), 1, 1);
  restart_with(fx, json);
  free(json);
  note(fx, name, "exit_code");
  assert_int_equal(fx->nsent, 0); /* never judged inline */
  settle(fx);
  assert_int_equal(fx->nsent, 1);
  assert_true(body_has(fx, 0, "event=start"));
  assert_true(body_has(fx, 0, "event=end"));
  assert_true(body_has(fx, 0, "status=success"));
  assert_true(body_has(fx, 0, "backfill=true"));
  assert_int_equal(fx->nevents, 0); /* nothing before the acknowledgement */
  assert_true(pl_runs_in_flight(&fx->runs)); /* the judges wait for the end */
  size_t runs, done;
  pl_runs_progress(&fx->runs, &runs, &done);
  assert_int_equal(done, 0);
  ack(fx, 0, 1);
  assert_false(pl_runs_in_flight(&fx->runs));
  assert_int_equal(fx->nevents, 2);
  assert_int_equal(fx->events[0].kind, PL_RUN_STARTED);
  assert_int_equal(fx->events[1].kind, PL_RUN_ENDED);
  assert_string_equal(fx->events[1].run, name);
  assert_int_equal(fx->events[1].status, PS_RUN_STATUS_SUCCESS);
  assert_true(fx->events[1].backfill);
  assert_false(fx->events[1].after_stall);
  settle(fx); /* an acknowledged run is looked at once more, then done */
  assert_int_equal(fx->nsent, 1);
  pl_runs_progress(&fx->runs, &runs, &done);
  assert_int_equal(done, 1);
  /* judged again (a rescan): nothing new is sent or reported */
  note(fx, name, "exit_code");
  pl_runs_evaluate_all(&fx->runs);
  settle(fx);
  assert_int_equal(fx->nsent, 1);
  assert_int_equal(fx->nevents, 2);
}

static void test_failed_run_and_refused_markers(void **state) {
  fixture *fx = *state;
  const char *name = "daily-perf-ba4674aa5495";
  put(fx, name, "perf.jsonl", "{}\n");
  put(fx, name, "exit_code", "2\n");
  put(fx, name, "docker.log", "Error: Loadgen vault task 25 failed\n");
  char *json = seen_before(run_dir(fx, name), 0, 0);
  restart_with(fx, json);
  free(json);
  note(fx, name, "exit_code");
  settle(fx);
  assert_int_equal(fx->nsent, 1);
  assert_true(body_has(fx, 0, "status=failed"));
  assert_true(body_has(fx, 0, "Loadgen vault task 25 failed"));
  assert_true(body_has(fx, 0, "backfill=false"));
  ack(fx, 0, 0); /* the server refused: nothing is reported, sent again later */
  assert_int_equal(fx->nevents, 0);
  pl_runs_evaluate_all(&fx->runs);
  assert_int_equal(fx->nsent, 2);
  assert_true(body_has(fx, 1, "status=failed"));
  ack(fx, 1, 1);
  assert_int_equal(fx->nevents, 2);
  assert_int_equal(fx->events[1].kind, PL_RUN_ENDED);
  assert_int_equal(fx->events[1].status, PS_RUN_STATUS_FAILED);
  assert_false(fx->events[1].backfill);
}

static void test_stall_resume_and_real_end(void **state) {
  fixture *fx = *state;
  const char *name = "daily-perf-cccccccccccc";
  put(fx, name, "perf.jsonl", "{}\n");
  put(fx, name, "exit_code", "");
  time_t old = time(NULL) - 2 * 3600; /* silent for longer than 1800 s */
  age(fx, name, "perf.jsonl", old);
  age(fx, name, "exit_code", old);
  char *json = seen_before(run_dir(fx, name), 0, 0);
  restart_with(fx, json);
  free(json);
  note(fx, name, "perf.jsonl");
  settle(fx);
  assert_int_equal(fx->nsent, 1);
  assert_true(body_has(fx, 0, "status=stalled"));
  ack(fx, 0, 1);
  assert_int_equal(fx->nevents, 2);
  assert_int_equal(fx->events[1].kind, PL_RUN_STALLED);
  /* it was only slow: new data, then it ends */
  put(fx, name, "perf.jsonl", "{}\n{}\n");
  pl_runs_evaluate_all(&fx->runs);
  assert_int_equal(fx->nevents, 3);
  assert_int_equal(fx->events[2].kind, PL_RUN_RESUMED);
  assert_int_equal(fx->nsent, 1); /* a resumption sends no marker */
  put(fx, name, "exit_code", "1\n");
  pl_runs_evaluate_all(&fx->runs);
  assert_int_equal(fx->nsent, 2);
  assert_true(body_has(fx, 1, "status=failed"));
  ack(fx, 1, 1);
  assert_int_equal(fx->nevents, 4);
  assert_int_equal(fx->events[3].kind, PL_RUN_ENDED);
  assert_false(fx->events[3].after_stall); /* it had resumed in between */
  assert_int_equal(fx->nevents, 4);
}

static void test_restart_neither_resends_nor_reports(void **state) {
  fixture *fx = *state;
  const char *name = "daily-perf-9eb37164f6f7";
  put(fx, name, "perf.jsonl", "{}\n");
  put(fx, name, "exit_code", "0\n");
  char *json = seen_before(run_dir(fx, name), 1, 1);
  restart_with(fx, json);
  free(json);
  note(fx, name, "exit_code");
  settle(fx);
  ack(fx, 0, 1);
  assert_int_equal(fx->nevents, 2);
  char *saved = pl_runs_to_json(&fx->runs);
  assert_non_null(saved);
  assert_non_null(strstr(saved, "\"end_acked\":\"success\""));
  assert_non_null(strstr(saved, "\"backfill\":true"));
  assert_non_null(strstr(saved, "\"facts\""));
  restart_with(fx, saved);
  free(saved);
  fx->nevents = 0;
  note(fx, name, "exit_code");
  pl_runs_evaluate_all(&fx->runs);
  settle(fx);
  assert_int_equal(fx->nsent, 0);
  assert_int_equal(fx->nevents, 0);
}

static void test_not_judged_before_perf_jsonl_is_read(void **state) {
  fixture *fx = *state;
  const char *name = "daily-perf-dddddddddddd";
  put(fx, name, "perf.jsonl", "{\"type\":\"perf-start\"}\n{}\n");
  put(fx, name, "exit_code", "0\n");
  char path[300];
  snprintf(path, sizeof path, "%s/perf.jsonl", run_dir(fx, name));
  pl_file *f = pl_registry_track_lines(&fx->reg, fx->src, ps_format_ops_get(PS_FMT_LOADGEN),
                                       path, 0);
  assert_non_null(f);
  note(fx, name, "exit_code");
  pl_runs_evaluate_all(&fx->runs);
  settle(fx);
  assert_int_equal(fx->nsent, 0); /* its lines are still unread */
  size_t runs, done;
  pl_runs_progress(&fx->runs, &runs, &done);
  assert_int_equal(runs, 1);
  assert_int_equal(done, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_only_run_folders_are_tracked, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ended_run_markers_then_events, setup, teardown),
      cmocka_unit_test_setup_teardown(test_failed_run_and_refused_markers, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stall_resume_and_real_end, setup, teardown),
      cmocka_unit_test_setup_teardown(test_restart_neither_resends_nor_reports, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_not_judged_before_perf_jsonl_is_read, setup,
                                      teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
