/*
 * Unit tests of the alerting stage (agent/judging/alerting*.c) on a real
 * loop, with its real exec channel (a script that appends what it reads to
 * a file, and copies the state file it finds when it runs) and its
 * perfship_alert points captured in place of the delivery (pl_aux_out),
 * acknowledged by the test. Run events are given as the run tracker gives
 * them; DSS markers and verdict points as the delivery's tap shows them.
 *
 * What a user would check: which events reach the notifier, once, with
 * which ids; that an event is in the state file before the notifier runs;
 * the catch-up rule; stalls and recoveries; repeats held back and said;
 * one event per run for its verdicts; a silent source said once per
 * silence; what a failed notifier leaves for the next start; --once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "influx/lp_encode.h"
#include "judging/alerting.h"
#include "pipeline/gens.h"

#include "aux_capture.h"

#include "aux_loop.h"
#include "aux_tmpdir.h"

#define MAX_SENT 64
#define S 1000000000LL

typedef struct sent {
  ps_pbatch *b;
  void (*on_done)(void *arg, int acked);
  void *arg;
} sent;

typedef struct fixture {
  char root[64];
  char state_dir[96];
  char got[128];
  uv_loop_t loop;
  ps_config cfg;
  pl_shared sh;
  pl_gens gens;
  ps_state saved;
  pl_registry reg;
  pl_commit commit;
  jd_alerting al;
  int started;
  sent sent[MAX_SENT];
  size_t nsent;
  char lines[MAX_SENT][1024]; /* the point lines sent */
  size_t nlines;
  int settled;
} fixture;

static int cap_send(void *ctx, ps_pbatch *b, void (*on_done)(void *, int), void *arg) {
  fixture *fx = ctx;
  assert_true(fx->nsent < MAX_SENT);
  snprintf(fx->lines[fx->nlines++], sizeof fx->lines[0], "%s", b->b.body.data);
  fx->sent[fx->nsent++] = (sent){b, on_done, arg};
  return 0;
}

/* InfluxDB acknowledges (or not) every point sent so far. */
static void ack_all(fixture *fx, int acked) {
  size_t n = fx->nsent;
  fx->nsent = 0;
  for (size_t i = 0; i < n; i++) {
    ps_pbatch_free(fx->sent[i].b);
    fx->sent[i].on_done(fx->sent[i].arg, acked);
  }
}

static void on_settled(void *ctx) {
  fixture *fx = ctx;
  fx->settled++;
}

static void write_file(const char *path, const char *text, int mode) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  assert_int_equal(chmod(path, (mode_t)mode), 0);
}

/* The notifier: appends its input to got.jsonl, keeps the state file it
 * found, and fails while a file named `fail` exists. */
static void make_notifier(fixture *fx) {
  char path[128], body[1024];
  snprintf(path, sizeof path, "%s/notify", fx->root);
  snprintf(body, sizeof body,
           "#!/bin/sh\ncd '%s' || exit 9\n"
           "if [ -e fail ]; then cat > /dev/null; echo 'receiver down' >&2; exit 1; fi\n"
           "cp .state/state.json state-when-notified.json\ncat >> got.jsonl\n",
           fx->root);
  write_file(path, body, 0755);
  fx->cfg.alerts.exec = calloc(2, sizeof(char *));
  fx->cfg.alerts.exec[0] = strdup(path);
  fx->cfg.alerts.nexec = 1;
}

static void start_stage(fixture *fx) {
  pl_aux_out out = {aux_encode_plain, cap_send, fx};
  jd_alerting_hooks h = {on_settled, fx, NULL};
  assert_int_equal(jd_alerting_init(&fx->al, &fx->sh, NULL, NULL, NULL, &fx->commit, &out, &h), 0);
  ps_state_free(&fx->saved);
  ps_state_init(&fx->saved);
  ps_buf warn;
  ps_buf_init(&warn, 0);
  ps_state_load(&fx->saved, fx->state_dir, &warn);
  ps_buf_free(&warn);
  jd_alerting_from_json(&fx->al, ps_state_section(&fx->saved, "alerts"));
  fx->commit.nsections = 0;
  pl_commit_add_section(&fx->commit, "alerts", (char *(*)(void *))jd_alerting_to_json, &fx->al);
  jd_alerting_start(&fx->al);
  fx->started = 1;
}

static void stop_stage(fixture *fx) {
  if (!fx->started)
    return;
  jd_alerting_close(&fx->al);
  ack_all(fx, 0);
  uv_run(&fx->loop, UV_RUN_DEFAULT);
  pl_commit_save(&fx->commit);
  jd_alerting_free(&fx->al);
  fx->started = 0;
}

static int setup(void **state) {
  fixture *fx = calloc(1, sizeof *fx);
  assert_non_null(fx);
  assert_int_equal(aux_tmpdir_make(fx->root, sizeof fx->root, "alerting"), 0);
  snprintf(fx->state_dir, sizeof fx->state_dir, "%s/.state", fx->root);
  snprintf(fx->got, sizeof fx->got, "%s/got.jsonl", fx->root);
  assert_int_equal(mkdir(fx->state_dir, 0700), 0);
  uv_loop_init(&fx->loop);
  ps_config_defaults(&fx->cfg);
  free(fx->cfg.state_dir);
  fx->cfg.state_dir = strdup(fx->state_dir);
  fx->cfg.tags = calloc(1, sizeof *fx->cfg.tags);
  fx->cfg.tags[0].key = strdup("host");
  fx->cfg.tags[0].value = strdup("bench-1");
  fx->cfg.ntags = 1;
  fx->cfg.sources = calloc(2, sizeof *fx->cfg.sources);
  ps_source_defaults(&fx->cfg.sources[0]);
  fx->cfg.sources[0].format = PS_FMT_LOADGEN;
  fx->cfg.sources[0].path = strdup("/srv/loadgen/results");
  ps_source_defaults(&fx->cfg.sources[1]);
  fx->cfg.sources[1].format = PS_FMT_DSS_BENCH;
  fx->cfg.sources[1].path = strdup("/srv/dss");
  fx->cfg.nsources = 2;
  fx->cfg.alerts.min_interval_s = 0;
  make_notifier(fx);
  fx->sh.loop = &fx->loop;
  fx->sh.cfg = &fx->cfg;
  pl_gens_init(&fx->gens, &fx->cfg);
  ps_state_init(&fx->saved);
  pl_registry_init(&fx->reg, &fx->sh, &fx->gens, &fx->saved);
  pl_commit_hooks ch = {NULL, NULL};
  pl_commit_init(&fx->commit, &fx->sh, &fx->reg, &fx->saved, &ch);
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  fixture *fx = *state;
  stop_stage(fx);
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

/* Lets the loop run until `pred` holds or `ms` passed. */
static void run_until(fixture *fx, int (*pred)(fixture *), int ms) {
  uv_update_time(&fx->loop);
  uint64_t until = uv_now(&fx->loop) + (uint64_t)ms;
  while (!(pred && pred(fx)) && uv_now(&fx->loop) < until) {
    uv_run(&fx->loop, UV_RUN_NOWAIT);
    usleep(5000);
    uv_update_time(&fx->loop);
  }
}

static int idle(fixture *fx) { return jd_alerting_busy(&fx->al) == 0 && fx->nsent == 0; }

/* Lets deliveries finish, InfluxDB acknowledging every point. */
static void settle(fixture *fx) {
  uv_update_time(&fx->loop);
  uint64_t until = uv_now(&fx->loop) + 5000;
  do {
    run_until(fx, NULL, 20);
    ack_all(fx, 1);
  } while (!idle(fx) && uv_now(&fx->loop) < until);
}

/* The events the notifier received, parsed. */
static cJSON *received(fixture *fx) {
  cJSON *arr = cJSON_CreateArray();
  FILE *f = fopen(fx->got, "r");
  char line[8192];
  while (f && fgets(line, sizeof line, f))
    cJSON_AddItemToArray(arr, cJSON_Parse(line));
  if (f)
    fclose(f);
  return arr;
}

static size_t count_received(fixture *fx, const char *event) {
  cJSON *arr = received(fx);
  size_t n = 0;
  const cJSON *o;
  cJSON_ArrayForEach(o, arr) {
    const cJSON *e = cJSON_GetObjectItem(o, "event");
    n += !event || (cJSON_IsString(e) && strcmp(e->valuestring, event) == 0);
  }
  cJSON_Delete(arr);
  return n;
}

static cJSON *last_received(fixture *fx) {
  cJSON *arr = received(fx);
  int n = cJSON_GetArraySize(arr);
  cJSON *o = n ? cJSON_DetachItemFromArray(arr, n - 1) : NULL;
  cJSON_Delete(arr);
  return o;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItem(o, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}

/* A run's view as the run tracker judges it. */
static void view(ps_run_view *v, const char *name, ps_run_state state, ps_run_status status,
                 int64_t start_s, int64_t end_s) {
  memset(v, 0, sizeof *v);
  ps_run_id_from_name(name, &v->id);
  v->state = state;
  v->status = status;
  v->have_start = 1;
  v->start_ns = start_s * S;
  v->have_end = state != PS_RUN_RUNNING;
  v->end_ns = end_s * S;
  v->newest_mtime_ns = (end_s - 1800) * S;
  v->have_exit_code = state == PS_RUN_ENDED;
  v->exit_code = status == PS_RUN_STATUS_SUCCESS ? 0 : 2;
  v->have_duration = 1;
  v->duration_s = (double)(end_s - start_s);
  if (status == PS_RUN_STATUS_FAILED)
    snprintf(v->error_line, sizeof v->error_line, "Error: Loadgen vault task 25 failed");
}

static void run_event(fixture *fx, pl_run_event_kind kind, const ps_run_view *v, int backfill,
                      int after_stall) {
  char folder[300];
  snprintf(folder, sizeof folder, "/srv/loadgen/results/%s", v->id.run);
  pl_run_event ev = {kind, folder, v, backfill, after_stall};
  jd_alerting_run_event(&fx->al, &ev);
}

static void test_failed_run_reaches_the_notifier_once(void **state) {
  fixture *fx = *state;
  start_stage(fx);
  int64_t now = (int64_t)time(NULL);
  ps_run_view v;
  view(&v, "daily-perf-ba4674aa5495", PS_RUN_ENDED, PS_RUN_STATUS_FAILED, now - 2257, now);
  run_event(fx, PL_RUN_STARTED, &v, 0, 0);
  run_event(fx, PL_RUN_ENDED, &v, 0, 0);
  settle(fx);
  cJSON *o = last_received(fx);
  assert_non_null(o);
  assert_string_equal(str(o, "event"), "run_failed");
  assert_string_equal(str(o, "source"), "loadgen");
  assert_string_equal(str(o, "run"), "daily-perf-ba4674aa5495");
  assert_string_equal(str(o, "series"), "daily-perf");
  assert_string_equal(str(o, "test_type"), "daily-perf");
  assert_string_equal(str(o, "revision"), "ba4674aa5495");
  assert_string_equal(str(o, "status"), "failed");
  assert_string_equal(str(o, "host"), "bench-1");
  assert_string_equal(str(o, "text"), "daily-perf-ba4674aa5495 failed after 37m37s (exit code "
                                      "2): Error: Loadgen vault task 25 failed");
  char id[PS_ALERT_ID_LEN + 1];
  ps_alert_id(id, PS_ALERT_RUN_FAILED, "bench-1", "loadgen", "daily-perf-ba4674aa5495",
              v.start_ns);
  assert_string_equal(str(o, "id"), id);
  /* the event was in the state file before the notifier ran */
  char path[128];
  snprintf(path, sizeof path, "%s/state-when-notified.json", fx->root);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char buf[16384] = "";
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  assert_non_null(strstr(buf, id));
  /* and as a perfship_alert point: tags event and source, fields run, text, id */
  assert_int_equal(fx->nlines, 1);
  assert_non_null(strstr(fx->lines[0], "perfship_alert,event=run_failed,source=loadgen "));
  assert_non_null(strstr(fx->lines[0], "id=\""));
  assert_non_null(strstr(fx->lines[0], id));
  assert_non_null(strstr(fx->lines[0], "run=\"daily-perf-ba4674aa5495\""));
  /* delivered everywhere: nothing waits */
  assert_int_equal(fx->al.raiser.box.n, 0);
  assert_int_equal(fx->sh.n.alerts_raised, 1);
  /* the run tracker reports it again (after a crash): not raised twice */
  run_event(fx, PL_RUN_ENDED, &v, 0, 0);
  settle(fx);
  assert_int_equal(count_received(fx, NULL), 1);
  cJSON_Delete(o);
  /* a successful run raises nothing */
  view(&v, "daily-perf-9eb37164f6f7", PS_RUN_ENDED, PS_RUN_STATUS_SUCCESS, now - 100, now);
  run_event(fx, PL_RUN_ENDED, &v, 0, 0);
  view(&v, "manual-7102939", PS_RUN_ENDED, PS_RUN_STATUS_INTERRUPTED, now - 100, now);
  run_event(fx, PL_RUN_ENDED, &v, 0, 0);
  settle(fx);
  assert_int_equal(count_received(fx, NULL), 2);
  assert_int_equal(count_received(fx, "run_interrupted"), 1);
}

static void test_catch_up(void **state) {
  fixture *fx = *state;
  start_stage(fx);
  int64_t now = (int64_t)time(NULL);
  ps_run_view v;
  /* found already ended, long ago (a first backfill): nothing */
  view(&v, "daily-perf-aaaaaaaaaaaa", PS_RUN_ENDED, PS_RUN_STATUS_FAILED, 1647389043,
       1647391305);
  run_event(fx, PL_RUN_ENDED, &v, 1, 0);
  /* found already ended an hour ago (a restart, a cron --once): raised */
  view(&v, "daily-perf-bbbbbbbbbbbb", PS_RUN_ENDED, PS_RUN_STATUS_FAILED, now - 7200,
       now - 3600);
  run_event(fx, PL_RUN_ENDED, &v, 1, 0);
  /* an old abandoned run found stalled: nothing */
  view(&v, "daily-perf-cccccccccccc", PS_RUN_STALLED, PS_RUN_STATUS_STALLED, 1647389043,
       1647391305);
  run_event(fx, PL_RUN_STALLED, &v, 0, 0);
  settle(fx);
  assert_int_equal(count_received(fx, NULL), 1);
  cJSON *o = last_received(fx);
  assert_string_equal(str(o, "run"), "daily-perf-bbbbbbbbbbbb");
  cJSON_Delete(o);
}

static void test_stall_and_recovery(void **state) {
  fixture *fx = *state;
  start_stage(fx);
  int64_t now = (int64_t)time(NULL);
  ps_run_view v;
  /* a resumption with no stall said before: nothing to recover from */
  view(&v, "daily-perf-dddddddddddd", PS_RUN_RUNNING, PS_RUN_STATUS_NONE, now - 9000, now);
  run_event(fx, PL_RUN_RESUMED, &v, 0, 1);
  view(&v, "daily-perf-eeeeeeeeeeee", PS_RUN_STALLED, PS_RUN_STATUS_STALLED, now - 9000, now);
  run_event(fx, PL_RUN_STALLED, &v, 0, 0);
  settle(fx);
  assert_int_equal(count_received(fx, "run_stalled"), 1);
  cJSON *o = last_received(fx);
  assert_string_equal(str(o, "text"), "daily-perf-eeeeeeeeeeee stalled: no file changed for 30m0s");
  cJSON_Delete(o);
  /* it finishes (successfully) after the stall */
  view(&v, "daily-perf-eeeeeeeeeeee", PS_RUN_ENDED, PS_RUN_STATUS_SUCCESS, now - 9000, now);
  run_event(fx, PL_RUN_ENDED, &v, 0, 1);
  settle(fx);
  assert_int_equal(count_received(fx, "run_recovered"), 1);
  assert_int_equal(count_received(fx, NULL), 2);
  o = last_received(fx);
  assert_string_equal(str(o, "status"), "success");
  assert_non_null(strstr(str(o, "text"), "ended after a stall: success"));
  cJSON_Delete(o);
}

static void test_dss_markers_and_repeats(void **state) {
  fixture *fx = *state;
  fx->cfg.alerts.min_interval_s = 2;
  start_stage(fx);
  int64_t now = (int64_t)time(NULL);
  const char *text = "DSS bench run out-1 ended: failed, no successful request in any of its 4 "
                     "data points.";
  ps_tag tags[4] = {{"source", "dss_bench"}, {"run", "out-1"}, {"event", "end"},
                    {"status", "failed"}};
  ps_field f[2] = {ps_field_string("text", text, strlen(text)), ps_field_bool("backfill", 0)};
  ps_point p = {"runs", tags, 4, f, 2, now * S};
  jd_alerting_tap(&fx->al, &p, &fx->cfg.sources[1], "/srv/dss/out-1/results.json");
  /* the same results file read again (an offset not yet saved): once */
  jd_alerting_tap(&fx->al, &p, &fx->cfg.sources[1], "/srv/dss/out-1/results.json");
  settle(fx);
  assert_int_equal(count_received(fx, "run_failed"), 1);
  cJSON *o = last_received(fx);
  assert_string_equal(str(o, "source"), "dss_bench");
  assert_string_equal(str(o, "text"), text);
  cJSON_Delete(o);
  /* the folder reused for a new run that fails too, within min_interval_s:
   * a new id, held back and counted */
  p.time_ns += 10 * S;
  jd_alerting_tap(&fx->al, &p, &fx->cfg.sources[1], "/srv/dss/out-1/results.json");
  settle(fx);
  assert_int_equal(count_received(fx, "run_failed"), 1);
  assert_int_equal(fx->sh.n.alerts_suppressed, 1);
  /* the next one after the interval says so */
  usleep(2100000);
  p.time_ns += 10 * S;
  jd_alerting_tap(&fx->al, &p, &fx->cfg.sources[1], "/srv/dss/out-1/results.json");
  settle(fx);
  assert_int_equal(count_received(fx, "run_failed"), 2);
  o = last_received(fx);
  assert_int_equal(cJSON_GetObjectItem(o, "suppressed")->valueint, 1);
  assert_non_null(strstr(str(o, "text"), "(and 1 more like it not sent since the last)"));
  cJSON_Delete(o);
  /* a successful or a starting marker, and other measurements: nothing */
  tags[3].value = "success";
  jd_alerting_tap(&fx->al, &p, &fx->cfg.sources[1], "/srv/dss/out-1/results.json");
  ps_point other = {"dss_bench", tags, 4, f, 2, now * S};
  jd_alerting_tap(&fx->al, &other, &fx->cfg.sources[1], "/srv/dss/out-1/results.json");
  settle(fx);
  assert_int_equal(count_received(fx, NULL), 2);
}

static void tap_verdict(fixture *fx, const char *run, const char *metric, const char *verdict,
                        double value, double baseline, int64_t t) {
  ps_tag tags[4] = {{"source", "loadgen"}, {"series", "daily-perf"}, {"metric", metric},
                    {"run", run}};
  ps_field f[6] = {ps_field_string("verdict", verdict, strlen(verdict)),
                   ps_field_float("value", value), ps_field_float("baseline", baseline),
                   ps_field_float("change_pct", (value - baseline) / baseline * 100),
                   ps_field_string("change_run", run, strlen(run)),
                   ps_field_bool("backfill", 0)};
  ps_point p = {"perfship_verdict", tags, 4, f, 6, t};
  jd_alerting_tap(&fx->al, &p, &fx->cfg.sources[0], "/srv/verdicts.lp");
}

static void test_verdicts_one_event_per_run(void **state) {
  fixture *fx = *state;
  start_stage(fx);
  int64_t t = (int64_t)time(NULL) * S;
  const char *run = "daily-perf-1cb7c2d80874";
  tap_verdict(fx, run, "cycleAvgDuration", "regression", 27.8, 24.33, t);
  tap_verdict(fx, run, "chainBootstrapDuration", "none", 10, 10, t);
  tap_verdict(fx, run, "live_avgSwingsetTime", "regression", 0.56, 0.5, t);
  tap_verdict(fx, run, "walletDeployDuration", "improvement", 8, 10, t);
  settle(fx);
  assert_int_equal(count_received(fx, NULL), 0); /* gathering the run's points */
  run_until(fx, NULL, 1300);
  settle(fx);
  /* one regression event with both metrics; improvement is off by default */
  assert_int_equal(count_received(fx, NULL), 1);
  cJSON *o = last_received(fx);
  assert_string_equal(str(o, "event"), "regression");
  assert_string_equal(str(o, "run"), run);
  assert_string_equal(str(o, "series"), "daily-perf");
  cJSON *m = cJSON_GetObjectItem(o, "metrics");
  assert_int_equal(cJSON_GetArraySize(m), 2);
  assert_string_equal(str(cJSON_GetArrayItem(m, 1), "metric"), "live_avgSwingsetTime");
  assert_true(cJSON_GetObjectItem(cJSON_GetArrayItem(m, 0), "baseline")->valuedouble == 24.33);
  char id[PS_ALERT_ID_LEN + 1];
  ps_alert_id(id, PS_ALERT_REGRESSION, "bench-1", "loadgen", run, t);
  assert_string_equal(str(o, "id"), id);
  cJSON_Delete(o);
  /* the verdict stage's own call: the same run again is not raised twice */
  ps_alert_metric mm = {.metric = "cycleAvgDuration", .have_value = 1, .value = 27.8};
  jd_alert_verdicts vv = {"loadgen", "daily-perf", run, "1cb7c2d80874", t, 0, &mm, 1, NULL};
  jd_alerting_verdicts(&fx->al, &vv);
  settle(fx);
  assert_int_equal(count_received(fx, NULL), 1);
}

static void test_no_new_run_once_per_silence(void **state) {
  fixture *fx = *state;
  fx->cfg.alerts.no_new_run_after_s = 1;
  fx->cfg.sources[1].no_new_run_after_s = 0; /* DSS runs are irregular: off */
  start_stage(fx);
  run_until(fx, NULL, 1600);
  settle(fx);
  assert_int_equal(count_received(fx, "no_new_run"), 1);
  cJSON *o = last_received(fx);
  assert_string_equal(str(o, "source"), "loadgen");
  assert_string_equal(str(o, "run"), "/srv/loadgen/results");
  assert_non_null(strstr(str(o, "text"), "no loadgen run in /srv/loadgen/results for"));
  cJSON_Delete(o);
  /* said once for this silence, also across a restart */
  run_until(fx, NULL, 1300);
  stop_stage(fx);
  start_stage(fx);
  run_until(fx, NULL, 1300);
  settle(fx);
  assert_int_equal(count_received(fx, "no_new_run"), 1);
  /* a run starts: a new silence, said again when it lasts */
  ps_run_view v;
  int64_t now = (int64_t)time(NULL);
  view(&v, "daily-perf-ffffffffffff", PS_RUN_RUNNING, PS_RUN_STATUS_NONE, now, now);
  run_event(fx, PL_RUN_STARTED, &v, 0, 0);
  run_until(fx, NULL, 300);
  settle(fx);
  assert_int_equal(count_received(fx, "no_new_run"), 1);
  run_until(fx, NULL, 1800);
  settle(fx);
  assert_int_equal(count_received(fx, "no_new_run"), 2);
  o = last_received(fx);
  assert_non_null(strstr(str(o, "text"), "no new loadgen run"));
  cJSON_Delete(o);
}

/* Which sources a run is expected of, and how their silence is said, come
 * from the format: a DSS bench folder in its own words, an lp file never. */
static void test_no_new_run_follows_the_format(void **state) {
  fixture *fx = *state;
  fx->cfg.sources[0].format = PS_FMT_LP; /* points, not runs */
  fx->cfg.sources[0].no_new_run_after_s = 1;
  fx->cfg.sources[1].no_new_run_after_s = 1;
  start_stage(fx);
  run_until(fx, NULL, 2600);
  settle(fx);
  assert_int_equal(count_received(fx, "no_new_run"), 1);
  cJSON *o = last_received(fx);
  assert_string_equal(str(o, "source"), "dss_bench");
  assert_string_equal(str(o, "run"), "/srv/dss");
  assert_non_null(strstr(str(o, "text"), "no DSS bench run in /srv/dss for"));
  cJSON_Delete(o);
}

static void test_undelivered_waits_for_the_next_start(void **state) {
  fixture *fx = *state;
  char fail[128];
  snprintf(fail, sizeof fail, "%s/fail", fx->root);
  write_file(fail, "", 0644);
  start_stage(fx);
  int64_t now = (int64_t)time(NULL);
  ps_run_view v;
  view(&v, "daily-perf-abababababab", PS_RUN_ENDED, PS_RUN_STATUS_FAILED, now - 60, now);
  run_event(fx, PL_RUN_ENDED, &v, 0, 0);
  settle(fx);
  assert_int_equal(count_received(fx, NULL), 0);
  assert_int_equal(fx->al.raiser.box.n, 1); /* the point is stored, the notifier failed */
  assert_true(fx->sh.n.alerts_failed >= 1);
  /* a crash now: what the state file says is what the next agent sends */
  stop_stage(fx);
  unlink(fail);
  start_stage(fx);
  assert_int_equal(fx->al.raiser.box.n, 1);
  settle(fx);
  assert_int_equal(count_received(fx, "run_failed"), 1);
  assert_int_equal(fx->al.raiser.box.n, 0);
  assert_int_equal(fx->nlines, 1); /* InfluxDB had it already: not sent again */
}

/* Runs start_stage() with stderr going to `log` (read back NUL-terminated). */
static double start_stage_logged(fixture *fx, char *log, size_t cap) {
  char path[160];
  snprintf(path, sizeof path, "%s/stderr.log", fx->root);
  fflush(stderr);
  int saved = dup(2);
  FILE *f = fopen(path, "w+");
  assert_non_null(f);
  dup2(fileno(f), 2);
  /* CPU time: the machine may be shared with other work */
  struct timespec a, b;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  start_stage(fx);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(f);
  size_t n = fread(log, 1, cap - 1, f);
  log[n] = '\0';
  fclose(f);
  return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

static size_t count_lines_with(const char *log, const char *what) {
  size_t n = 0;
  for (const char *p = log; (p = strstr(p, what)); p++)
    n++;
  return n;
}

/* The sizes that took 11 to 13 s each to load when every entry was
 * searched for among all those before it: read to the caps the agent
 * keeps while running, in one walk, said in one line. */
static void test_large_state_loads_bounded(void **state) {
  fixture *fx = *state;
  ps_buf b;
  ps_buf_init(&b, 0);
  ps_buf_puts(&b, "{\"version\":1,\"files\":[],\"errors\":[],\"alerts\":{\"sources\":[");
  for (int i = 0; i < 80000; i++)
    ps_buf_printf(&b, "%s{\"key\":\"loadgen:/srv/r%d\",\"since\":1}", i ? "," : "", i);
  ps_buf_puts(&b, "],\"seen\":[");
  for (int i = 0; i < 100000; i++)
    ps_buf_printf(&b, "%s{\"id\":\"%032x\",\"at\":%lld}", i ? "," : "", i,
                  (long long)time(NULL));
  ps_buf_puts(&b, "],\"throttle\":[");
  for (int i = 0; i < 50000; i++)
    ps_buf_printf(&b, "%s{\"event\":\"run_failed\",\"key\":\"k%d\",\"last_ns\":1}",
                  i ? "," : "", i);
  /* pending for the webhook only, which this configuration has not: none
   * is sent, all are said */
  ps_buf_puts(&b, "],\"outbox\":[");
  for (int i = 0; i < 10000; i++)
    ps_buf_printf(&b,
                  "%s{\"alert\":{\"id\":\"%032x\",\"event\":\"run_failed\",\"source\":"
                  "\"loadgen\",\"run\":\"r\",\"text\":\"t\"},\"time_us\":\"1\","
                  "\"pending\":[\"webhook\"]}",
                  i ? "," : "", i);
  ps_buf_puts(&b, "]}}");
  char path[160];
  snprintf(path, sizeof path, "%s/state.json", fx->state_dir);
  write_file(path, b.data, 0600);
  ps_buf_free(&b);
  static char log[16384];
  double took = start_stage_logged(fx, log, sizeof log);
#if defined(__SANITIZE_ADDRESS__)
  const double bound = 3.0; /* the sanitizers' own cost */
#else
  const double bound = 1.0;
#endif
  fprintf(stderr, "a state of 80,000 sources, 100,000 seen ids, 50,000 throttle keys and "
                  "10,000 outbox entries started the stage in %.3f s\n", took);
  assert_true(took < bound);
  /* the kept ones, and the two this configuration watches */
  assert_int_equal(jd_alerting_clock_nsources(&fx->al.clock), JD_ALERTING_CLOCK_SOURCES_MAX + 2);
  assert_int_equal(fx->al.raiser.ledger.n, PS_ALERT_DECIDED_MAX);
  assert_int_equal(fx->al.raiser.throttle.n, PS_ALERT_THROTTLE_MAX);
  assert_int_equal(fx->al.raiser.box.n, 0);
  /* the newest were kept */
  char newest[PS_ALERT_ID_LEN + 1];
  snprintf(newest, sizeof newest, "%032x", 99999);
  assert_true(ps_alert_decided_has(&fx->al.raiser.ledger, newest));
  assert_int_equal(count_lines_with(log, "alerts section"), 1);
  assert_non_null(strstr(log, "outbox: 9744 over its cap of 256 (the oldest), 256 for channels "
                              "no longer configured"));
  assert_non_null(strstr(log, "throttle: 48976 over its cap of 1024"));
  assert_non_null(strstr(log, "seen: 97952 over its cap of 2048"));
  assert_non_null(strstr(log, "sources: 78976 over its cap of 1024"));
}

/* A section named twice: the later replaces the earlier, as it did when
 * the file was one tree, though the earlier is the larger. */
static void test_a_later_section_of_one_name_replaces(void **state) {
  fixture *fx = *state;
  ps_buf b;
  ps_buf_init(&b, 0);
  ps_buf_puts(&b, "{\"version\":1,\"files\":[],\"alerts\":{\"sources\":[");
  for (int i = 0; i < 3000; i++)
    ps_buf_printf(&b, "%s{\"key\":\"k%d\",\"since\":1}", i ? "," : "", i);
  ps_buf_puts(&b, "]},\"alerts\":{\"sources\":[]}}");
  char path[160];
  snprintf(path, sizeof path, "%s/state.json", fx->state_dir);
  write_file(path, b.data, 0600);
  ps_buf_free(&b);
  static char log[4096];
  start_stage_logged(fx, log, sizeof log);
  assert_int_equal(count_lines_with(log, "alerts section"), 0);
  assert_int_equal(jd_alerting_clock_nsources(&fx->al.clock), 2);
}

/* The sources list is cut before its tree is built where the clock would
 * stop reading it: repeated and unreadable keys do not count toward the
 * cap, so the cut and the count over it are the clock's own. */
static void test_sources_cut_counts_as_the_clock(void **state) {
  fixture *fx = *state;
  ps_buf b;
  ps_buf_init(&b, 0);
  ps_buf_puts(&b, "{\"version\":1,\"files\":[],\"alerts\":{\"sources\":[");
  for (int i = 0; i < 3000; i++) {
    if (i)
      ps_buf_putc(&b, ',');
    if (i < 1000)
      ps_buf_printf(&b, "{\"key\":\"k%d\",\"since\":1}", i / 2);
    else if (i < 1100)
      ps_buf_puts(&b, i % 2 ? "{\"key\":5}" : "{\"key\":\"\"}");
    else
      ps_buf_printf(&b, "{\"key\":\"k%d\",\"since\":1}", i);
  }
  ps_buf_puts(&b, "],\"health\":{\"server_since\":7},\"outbox\":[],\"seen\":[]}}");
  char path[160];
  snprintf(path, sizeof path, "%s/state.json", fx->state_dir);
  write_file(path, b.data, 0600);
  ps_buf_free(&b);
  static char log[4096];
  start_stage_logged(fx, log, sizeof log);
  assert_int_equal(jd_alerting_clock_nsources(&fx->al.clock), JD_ALERTING_CLOCK_SOURCES_MAX + 2);
  assert_int_equal(fx->al.clock.health.server_since_s, 7);
  assert_int_equal(count_lines_with(log, "alerts section"), 1);
  if (!strstr(log, "sources: 1376 over its cap of 1024 (the oldest), 100 unreadable"))
    fail_msg("%s", log);
}

/* Members of the wrong type are said, not silently dropped. */
static void test_wrong_types_in_the_state_are_said(void **state) {
  fixture *fx = *state;
  char path[160];
  snprintf(path, sizeof path, "%s/state.json", fx->state_dir);
  write_file(path,
             "{\"version\":1,\"files\":[],\"errors\":[],\"runs\":\"garbage\","
             "\"alerts\":{\"outbox\":5,\"seen\":\"zz\",\"throttle\":[7,{\"key\":1}]}}",
             0600);
  ps_state s;
  ps_buf warn;
  ps_buf_init(&warn, 0);
  assert_int_equal(ps_state_load(&s, fx->state_dir, &warn), 0);
  assert_non_null(warn.data);
  assert_non_null(strstr(warn.data, "'runs' (a string)"));
  ps_buf_free(&warn);
  ps_state_free(&s);
  static char log[4096];
  start_stage_logged(fx, log, sizeof log);
  assert_int_equal(count_lines_with(log, "alerts section"), 1);
  assert_non_null(strstr(log, "outbox: a number, not a list (ignored)"));
  assert_non_null(strstr(log, "seen: a string, not a list (ignored)"));
  assert_non_null(strstr(log, "throttle: 2 unreadable"));
}

static void test_once_tries_everything_once(void **state) {
  fixture *fx = *state;
  char fail[128];
  snprintf(fail, sizeof fail, "%s/fail", fx->root);
  write_file(fail, "", 0644);
  fx->sh.once = 1;
  start_stage(fx);
  int64_t now = (int64_t)time(NULL);
  ps_run_view v;
  view(&v, "daily-perf-acacacacacac", PS_RUN_ENDED, PS_RUN_STATUS_FAILED, now - 60, now);
  run_event(fx, PL_RUN_ENDED, &v, 0, 0);
  fx->sh.n.records_rejected = 3; /* and some input was rejected */
  jd_alerting_finish(&fx->al);
  settle(fx);
  assert_true(jd_alerting_done(&fx->al));
  assert_true(fx->settled > 0);
  /* both failed on the notifier: the service exits 69; not retried here */
  assert_true(jd_alerting_undelivered(&fx->al));
  assert_int_equal(fx->al.raiser.box.n, 2);
  assert_int_equal(fx->sh.n.alerts_raised, 2);
  run_until(fx, NULL, 1500);
  assert_int_equal(count_received(fx, NULL), 0);
  /* the next --once delivers them */
  stop_stage(fx);
  unlink(fail);
  start_stage(fx);
  jd_alerting_finish(&fx->al);
  settle(fx);
  assert_true(jd_alerting_done(&fx->al));
  assert_false(jd_alerting_undelivered(&fx->al));
  assert_int_equal(count_received(fx, "run_failed"), 1);
  assert_int_equal(count_received(fx, "agent_unhealthy"), 1);
  cJSON *o = last_received(fx);
  assert_string_equal(str(o, "status"), "input_rejected");
  assert_non_null(strstr(str(o, "text"), "3 input records rejected"));
  cJSON_Delete(o);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_failed_run_reaches_the_notifier_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_catch_up, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stall_and_recovery, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dss_markers_and_repeats, setup, teardown),
      cmocka_unit_test_setup_teardown(test_verdicts_one_event_per_run, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_new_run_once_per_silence, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_new_run_follows_the_format, setup, teardown),
      cmocka_unit_test_setup_teardown(test_undelivered_waits_for_the_next_start, setup, teardown),
      cmocka_unit_test_setup_teardown(test_once_tries_everything_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_large_state_loads_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(test_a_later_section_of_one_name_replaces, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sources_cut_counts_as_the_clock, setup, teardown),
      cmocka_unit_test_setup_teardown(test_wrong_types_in_the_state_are_said, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
