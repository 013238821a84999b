/*
 * Unit tests of the alert modules that need no loop (agent/alert/): the
 * event's id and JSON (what a receiver gets), the Slack body, the texts
 * people read, min_interval_s, the ledger of ids, the catch-up rule, the
 * outbox's retries, bound and saved form, when a silent source is said
 * (no_new_run) and when the agent is unwell or well again.
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

#include <cjson/cJSON.h>

#include "alert/event.h"
#include "alert/health.h"
#include "alert/decided.h"
#include "alert/outbox.h"
#include "alert/policy.h"
#include "alert/silence.h"
#include "alert/text.h"
#include "alert/throttle.h"
#include "alert/webhook.h"

#define S 1000000000LL
#define T0 (1700000000LL * S)

static void make_event(ps_alert_event *ev, ps_alert_kind kind, const char *run) {
  ps_alert_event_init(ev, kind);
  ps_alert_set(&ev->source, "loadgen");
  ps_alert_set(&ev->run, run);
  ps_alert_set(&ev->text, "daily-perf-x failed");
  ps_alert_id(ev->id, kind, "bench-1", "loadgen", run, T0);
  ev->time_ns = T0 + 123456000;
}

static void test_id_is_stable_and_tells_apart(void **state) {
  (void)state;
  char a[PS_ALERT_ID_LEN + 1], b[PS_ALERT_ID_LEN + 1];
  ps_alert_id(a, PS_ALERT_RUN_FAILED, "bench-1", "loadgen", "daily-perf-ba4674aa5495", T0);
  ps_alert_id(b, PS_ALERT_RUN_FAILED, "bench-1", "loadgen", "daily-perf-ba4674aa5495", T0);
  assert_string_equal(a, b); /* the same event re-sent: the same id */
  assert_int_equal(strlen(a), PS_ALERT_ID_LEN);
  assert_int_equal(strspn(a, "0123456789abcdef"), PS_ALERT_ID_LEN);
  /* a DSS results folder reused for a new run has a new marker time */
  ps_alert_id(b, PS_ALERT_RUN_FAILED, "bench-1", "loadgen", "daily-perf-ba4674aa5495", T0 + S);
  assert_string_not_equal(a, b);
  ps_alert_id(b, PS_ALERT_RUN_STALLED, "bench-1", "loadgen", "daily-perf-ba4674aa5495", T0);
  assert_string_not_equal(a, b);
  ps_alert_id(b, PS_ALERT_RUN_FAILED, "bench-1", "dss_bench", "daily-perf-ba4674aa5495", T0);
  assert_string_not_equal(a, b);
  /* two machines' runs of one name (same revisions, same folder names):
   * a receiver that drops repeated ids must keep both */
  ps_alert_id(b, PS_ALERT_RUN_FAILED, "bench-2", "loadgen", "daily-perf-ba4674aa5495", T0);
  assert_string_not_equal(a, b);
  /* the parts are kept apart: ("ab", "c") is not ("a", "bc") */
  ps_alert_id(a, PS_ALERT_RUN_FAILED, "bench-1", "ab", "c", T0);
  ps_alert_id(b, PS_ALERT_RUN_FAILED, "bench-1", "a", "bc", T0);
  assert_string_not_equal(a, b);
}

static void test_event_object(void **state) {
  (void)state;
  ps_alert_event ev;
  make_event(&ev, PS_ALERT_RUN_FAILED, "we'ird \"run\"; $(touch x) `y` \\ <z>");
  ps_alert_set(&ev.host, "bench-1");
  ps_alert_set(&ev.series, "daily-perf");
  ps_alert_set(&ev.status, "failed");
  char *json = ps_alert_event_json(&ev);
  assert_non_null(json);
  cJSON *o = cJSON_Parse(json);
  assert_non_null(o);
  /* what the receiver reads back is exactly what the data said */
  assert_string_equal(cJSON_GetObjectItem(o, "run")->valuestring,
                      "we'ird \"run\"; $(touch x) `y` \\ <z>");
  assert_string_equal(cJSON_GetObjectItem(o, "event")->valuestring, "run_failed");
  assert_string_equal(cJSON_GetObjectItem(o, "time")->valuestring, "2023-11-14T22:13:20Z");
  assert_string_equal(cJSON_GetObjectItem(o, "id")->valuestring, ev.id);
  assert_string_equal(cJSON_GetObjectItem(o, "host")->valuestring, "bench-1");
  /* what is not known is left out, not sent empty */
  assert_null(cJSON_GetObjectItem(o, "revision"));
  assert_null(cJSON_GetObjectItem(o, "metrics"));
  assert_null(cJSON_GetObjectItem(o, "suppressed"));
  /* and it reads back the same (the outbox in the state file) */
  ps_alert_event back;
  assert_int_equal(ps_alert_event_from_cjson(&back, o), 0);
  back.time_ns = ev.time_ns;
  char *again = ps_alert_event_json(&back);
  assert_string_equal(json, again);
  free(again);
  ps_alert_event_free(&back);
  /* an object without a known event, a good id, a run or a text is refused */
  cJSON_ReplaceItemInObject(o, "event", cJSON_CreateString("run_exploded"));
  assert_int_equal(ps_alert_event_from_cjson(&back, o), -EINVAL);
  cJSON_ReplaceItemInObject(o, "event", cJSON_CreateString("run_failed"));
  cJSON_ReplaceItemInObject(o, "id", cJSON_CreateString("../../etc"));
  assert_int_equal(ps_alert_event_from_cjson(&back, o), -EINVAL);
  cJSON_ReplaceItemInObject(o, "id", cJSON_CreateString(ev.id));
  cJSON_ReplaceItemInObject(o, "run", cJSON_CreateString(""));
  assert_int_equal(ps_alert_event_from_cjson(&back, o), -EINVAL);
  assert_int_equal(ps_alert_event_from_cjson(&back, NULL), -EINVAL);
  cJSON_Delete(o);
  free(json);
  ps_alert_event_free(&ev);
}

static void test_verdict_event_and_slack(void **state) {
  (void)state;
  ps_alert_event ev;
  make_event(&ev, PS_ALERT_REGRESSION, "daily-perf-1cb7c2d80874");
  ps_alert_set(&ev.series, "daily-perf");
  ps_alert_metric m = {.metric = "cycleAvgDuration", .have_value = 1, .have_baseline = 1,
                       .have_change_pct = 1, .value = 27.8, .baseline = 24.33,
                       .change_pct = 14.26};
  assert_int_equal(ps_alert_event_add_metric(&ev, &m), 0);
  ps_alert_metric m2 = {.metric = "live_avgSwingsetTime", .have_value = 1, .value = 0.5,
                        .change_run = "daily-perf-9eb37164f6f7"};
  assert_int_equal(ps_alert_event_add_metric(&ev, &m2), 0);
  ps_buf t;
  ps_buf_init(&t, 0);
  assert_int_equal(ps_alert_text_verdict(&t, &ev), 0);
  assert_string_equal(t.data,
                      "daily-perf-1cb7c2d80874: regression against earlier daily-perf runs in 2 "
                      "metrics: cycleAvgDuration +14.3% (27.8 against 24.33), "
                      "live_avgSwingsetTime; the change began with daily-perf-9eb37164f6f7");
  ps_buf_free(&t);

  /* a candidate: against another series' level, with its revision range
   * and the link */
  ps_alert_event cand;
  make_event(&cand, PS_ALERT_REGRESSION, "manual-pr1523");
  ps_alert_set(&cand.series, "manual");
  ps_alert_metric c1 = {.metric = "cycleAvgDuration", .against = "daily-perf",
                        .good_revision = "1cb7c2d80874", .bad_revision = "pr1523",
                        .compare_url = "https://git/compare/1cb7c2d80874...pr1523",
                        .have_value = 1, .have_baseline = 1, .have_change_pct = 1,
                        .value = 27.3, .baseline = 24.35, .change_pct = 12.1};
  assert_int_equal(ps_alert_event_add_metric(&cand, &c1), 0);
  ps_buf_init(&t, 0);
  assert_int_equal(ps_alert_text_verdict(&t, &cand), 0);
  assert_string_equal(t.data, "manual-pr1523: regression against the current daily-perf level in "
                              "cycleAvgDuration +12.1% (27.3 against 24.35); revisions "
                              "1cb7c2d80874..pr1523: https://git/compare/1cb7c2d80874...pr1523");
  ps_buf_free(&t);
  char *cj = ps_alert_event_json(&cand);
  cJSON *co = cJSON_Parse(cj);
  cJSON *cm = cJSON_GetArrayItem(cJSON_GetObjectItem(co, "metrics"), 0);
  assert_string_equal(cJSON_GetObjectItem(cm, "against")->valuestring, "daily-perf");
  assert_string_equal(cJSON_GetObjectItem(cm, "good_revision")->valuestring, "1cb7c2d80874");
  assert_string_equal(cJSON_GetObjectItem(cm, "bad_revision")->valuestring, "pr1523");
  assert_string_equal(cJSON_GetObjectItem(cm, "compare_url")->valuestring,
                      "https://git/compare/1cb7c2d80874...pr1523");
  /* and back from the saved event, as after a restart */
  ps_alert_event back;
  assert_int_equal(ps_alert_event_from_cjson(&back, co), 0);
  assert_string_equal(back.metrics[0].compare_url, "https://git/compare/1cb7c2d80874...pr1523");
  assert_string_equal(back.metrics[0].against, "daily-perf");
  ps_alert_event_free(&back);
  cJSON_Delete(co);
  free(cj);
  ps_alert_event_free(&cand);

  /* DSS: arms of one run against the reference arm, in the test named */
  ps_alert_event dss;
  make_event(&dss, PS_ALERT_REGRESSION, "2026-11-30_dss");
  ps_alert_set(&dss.series, "rid_isa");
  ps_alert_metric a1 = {.metric = "rps_total", .arm = "local/dss:pr-1523",
                        .reference = "interuss/dss:v0.22.0", .have_value = 1,
                        .have_baseline = 1, .have_change_pct = 1, .value = 880,
                        .baseline = 1000, .change_pct = -12.0};
  assert_int_equal(ps_alert_event_add_metric(&dss, &a1), 0);
  ps_buf_init(&t, 0);
  assert_int_equal(ps_alert_text_verdict(&t, &dss), 0);
  assert_string_equal(t.data, "2026-11-30_dss: regression in test rid_isa against the "
                              "reference arm interuss/dss:v0.22.0 in rps_total of "
                              "local/dss:pr-1523 -12.0% (880 against 1000)");
  ps_buf_free(&t);
  /* two references: each metric names its own */
  ps_alert_metric a2 = a1;
  a2.metric = "p95_ms";
  a2.reference = "interuss/dss:v0.21.0";
  assert_int_equal(ps_alert_event_add_metric(&dss, &a2), 0);
  ps_buf_init(&t, 0);
  assert_int_equal(ps_alert_text_verdict(&t, &dss), 0);
  assert_null(strstr(t.data, "earlier"));
  assert_non_null(strstr(t.data, "in test rid_isa in 2 metrics: "));
  assert_non_null(strstr(t.data, "(880 against 1000 of interuss/dss:v0.21.0)"));
  ps_buf_free(&t);
  ps_alert_event_free(&dss);

  /* a benchmarker release that went Unstable where the one before held:
   * said once, whatever the number of metrics, and kept over a restart */
  ps_alert_event bm;
  make_event(&bm, PS_ALERT_REGRESSION, "isas_images 2026-03-06T09:06:14Z / ISAs crdb");
  ps_alert_set(&bm.series, "isas_images / ISAs crdb / crdb");
  const char *note = "step at 10 users went Unstable; interuss/dss:v0.23.0-rc4 was stable there";
  ps_alert_metric b1 = {.metric = "x_n_star",
                        .note = (char *)note,
                        .have_value = 1,
                        .have_baseline = 1,
                        .have_change_pct = 1,
                        .value = 30,
                        .baseline = 36,
                        .change_pct = -16.7};
  ps_alert_metric b2 = b1;
  b2.metric = "gamma";
  assert_int_equal(ps_alert_event_add_metric(&bm, &b1), 0);
  assert_int_equal(ps_alert_event_add_metric(&bm, &b2), 0);
  ps_buf_init(&t, 0);
  assert_int_equal(ps_alert_text_verdict(&t, &bm), 0);
  const char *said = strstr(t.data, "; step at 10 users went Unstable; "
                                    "interuss/dss:v0.23.0-rc4 was stable there");
  assert_non_null(said);
  assert_null(strstr(said + 3, "step at 10 users"));
  ps_buf_free(&t);
  char *bj = ps_alert_event_json(&bm);
  cJSON *bo = cJSON_Parse(bj);
  ps_alert_event bback;
  assert_int_equal(ps_alert_event_from_cjson(&bback, bo), 0);
  assert_string_equal(bback.metrics[1].note, note);
  ps_alert_event_free(&bback);
  cJSON_Delete(bo);
  free(bj);
  ps_alert_event_free(&bm);

  char *json = ps_alert_event_json(&ev);
  cJSON *o = cJSON_Parse(json);
  cJSON *metrics = cJSON_GetObjectItem(o, "metrics");
  assert_int_equal(cJSON_GetArraySize(metrics), 2);
  cJSON *first = cJSON_GetArrayItem(metrics, 0);
  assert_string_equal(cJSON_GetObjectItem(first, "metric")->valuestring, "cycleAvgDuration");
  assert_true(cJSON_GetObjectItem(first, "baseline")->valuedouble == 24.33);
  assert_true(cJSON_GetObjectItem(first, "change_pct")->valuedouble == 14.26);
  assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(metrics, 1), "baseline"));
  cJSON_Delete(o);
  free(json);

  /* Slack: a run name cannot mention the channel nor hide a link */
  free(ev.text);
  ev.text = strdup("run <!channel> & <http://x|y> failed");
  char *slack = ps_alert_event_slack(&ev);
  o = cJSON_Parse(slack);
  assert_non_null(o);
  const char *text = cJSON_GetObjectItem(o, "text")->valuestring;
  assert_null(strchr(text, '<'));
  assert_non_null(strstr(text, "&lt;!channel&gt; &amp; &lt;http://x|y&gt;"));
  assert_non_null(strstr(text, "*regression*"));
  assert_non_null(strstr(text, "cycleAvgDuration: 27.8 against 24.33 (+14.3 %)"));
  cJSON_Delete(o);
  free(slack);
  /* ... nor read backwards: direction controls are shown, not obeyed */
  free(ev.text);
  ev.text = strdup("daily-perf-\xe2\x80\xae" "deliaf-ton failed: Error: \xe2\x80\xaeretfa");
  free(ev.host);
  ev.host = strdup("\xe2\x80\xae" "exe.gnp-evil\xe2\x80\xac");
  slack = ps_alert_event_slack(&ev);
  o = cJSON_Parse(slack);
  text = cJSON_GetObjectItem(o, "text")->valuestring;
  assert_null(strstr(text, "\xe2\x80\xae"));
  assert_non_null(strstr(text, "on \\u202eexe.gnp-evil\\u202c: daily-perf-\\u202edeliaf-ton "
                               "failed: Error: \\u202eretfa"));
  cJSON_Delete(o);
  free(slack);
  ps_alert_event_free(&ev);
}

static void test_run_texts(void **state) {
  (void)state;
  ps_run_view v;
  memset(&v, 0, sizeof v);
  ps_run_id_from_name("/r/daily-perf-ba4674aa5495", &v.id);
  v.state = PS_RUN_ENDED;
  v.status = PS_RUN_STATUS_FAILED;
  v.have_duration = 1;
  v.duration_s = 2257.11632;
  v.have_exit_code = 1;
  v.exit_code = 2;
  snprintf(v.error_line, sizeof v.error_line, "Error: Loadgen vault task 25 failed");
  ps_buf t;
  ps_buf_init(&t, 0);
  ps_alert_text_run(&t, PS_ALERT_RUN_FAILED, &v);
  /* the example, word for word */
  assert_string_equal(t.data, "daily-perf-ba4674aa5495 failed after 37m37s (exit code 2): "
                              "Error: Loadgen vault task 25 failed");
  ps_buf_reset(&t);
  v.state = PS_RUN_STALLED;
  v.newest_mtime_ns = T0;
  v.end_ns = T0 + 1800 * S;
  ps_alert_text_run(&t, PS_ALERT_RUN_STALLED, &v);
  assert_string_equal(t.data, "daily-perf-ba4674aa5495 stalled: no file changed for 30m0s");
  ps_buf_reset(&t);
  v.state = PS_RUN_RUNNING;
  ps_alert_text_run(&t, PS_ALERT_RUN_RECOVERED, &v);
  assert_string_equal(t.data, "daily-perf-ba4674aa5495 is writing again after a stall");
  ps_buf_reset(&t);
  ps_alert_text_no_new_run(&t, "loadgen", "/srv/loadgen/results", 93600, 1700000000, 1600000000);
  assert_string_equal(t.data, "no new loadgen run in /srv/loadgen/results for 26h0m0s (the "
                              "last one started 2023-11-14T22:13:20Z)");
  ps_buf_free(&t);
}

static void test_throttle(void **state) {
  (void)state;
  ps_alert_throttle t;
  ps_alert_throttle_init(&t);
  uint64_t said = 99;
  assert_int_equal(ps_alert_throttle_pass(&t, PS_ALERT_RUN_FAILED, "r1", T0, 300, &said), 1);
  assert_int_equal(said, 0);
  /* the same (event, key) within 300 s: dropped and counted */
  assert_int_equal(ps_alert_throttle_pass(&t, PS_ALERT_RUN_FAILED, "r1", T0 + 10 * S, 300, &said), 0);
  assert_int_equal(ps_alert_throttle_pass(&t, PS_ALERT_RUN_FAILED, "r1", T0 + 20 * S, 300, &said), 0);
  /* another key, another event: not held back */
  assert_int_equal(ps_alert_throttle_pass(&t, PS_ALERT_RUN_FAILED, "r2", T0 + 20 * S, 300, &said), 1);
  assert_int_equal(ps_alert_throttle_pass(&t, PS_ALERT_RUN_STALLED, "r1", T0 + 20 * S, 300, &said), 1);
  /* saved and restored, the count survives a restart ... */
  cJSON *j = ps_alert_throttle_to_cjson(&t);
  ps_alert_throttle_free(&t);
  ps_alert_throttle_init(&t);
  ps_alert_throttle_from_cjson(&t, j, NULL);
  cJSON_Delete(j);
  assert_int_equal(ps_alert_throttle_pass(&t, PS_ALERT_RUN_FAILED, "r1", T0 + 200 * S, 300, &said), 0);
  /* ... and is said with the next one that goes */
  assert_int_equal(ps_alert_throttle_pass(&t, PS_ALERT_RUN_FAILED, "r1", T0 + 301 * S, 300, &said), 1);
  assert_int_equal(said, 3);
  assert_int_equal(ps_alert_throttle_pass(&t, PS_ALERT_RUN_FAILED, "r1", T0 + 700 * S, 300, &said), 1);
  assert_int_equal(said, 0);
  /* quiet keys are forgotten; 0 passes everything */
  ps_alert_throttle_prune(&t, T0 + 5000 * S, 300);
  assert_int_equal(t.n, 0);
  for (int i = 0; i < 3; i++)
    assert_int_equal(ps_alert_throttle_pass(&t, PS_ALERT_RUN_FAILED, "r1", T0, 0, &said), 1);
  /* garbage in the state file is skipped */
  cJSON *bad = cJSON_Parse("[{\"event\":\"nope\",\"key\":\"a\",\"last_ns\":1},{\"key\":3},7,"
                           "{\"event\":\"run_failed\",\"key\":\"k\",\"last_ns\":1e300}]");
  ps_alert_recall r = {0};
  ps_alert_throttle_from_cjson(&t, bad, &r);
  cJSON_Delete(bad);
  assert_int_equal(t.n, 0);
  assert_int_equal(r.bad, 4);
  ps_alert_throttle_free(&t);
}

static void test_ledger(void **state) {
  (void)state;
  ps_alert_decided l;
  ps_alert_decided_init(&l);
  char id[PS_ALERT_ID_LEN + 1];
  ps_alert_id(id, PS_ALERT_RUN_FAILED, "bench-1", "loadgen", "r", T0);
  assert_false(ps_alert_decided_has(&l, id));
  assert_int_equal(ps_alert_decided_add(&l, id, 1000), 0);
  assert_true(ps_alert_decided_has(&l, id));
  assert_int_equal(ps_alert_decided_add(&l, "short", 1000), -EINVAL);
  cJSON *j = ps_alert_decided_to_cjson(&l);
  ps_alert_decided_free(&l);
  ps_alert_decided_init(&l);
  ps_alert_decided_from_cjson(&l, j, NULL);
  cJSON_Delete(j);
  assert_true(ps_alert_decided_has(&l, id));
  /* bounded by age and by count */
  ps_alert_decided_prune(&l, 1000 + 86400, 86400);
  assert_true(ps_alert_decided_has(&l, id));
  ps_alert_decided_prune(&l, 1001 + 86400, 86400);
  assert_false(ps_alert_decided_has(&l, id));
  for (int i = 0; i < PS_ALERT_DECIDED_MAX + 10; i++) {
    ps_alert_id(id, PS_ALERT_RUN_FAILED, "bench-1", "loadgen", "r", T0 + i);
    ps_alert_decided_add(&l, id, 2000 + i);
  }
  assert_int_equal(l.n, PS_ALERT_DECIDED_MAX);
  assert_true(ps_alert_decided_has(&l, id));
  ps_alert_id(id, PS_ALERT_RUN_FAILED, "bench-1", "loadgen", "r", T0);
  assert_false(ps_alert_decided_has(&l, id)); /* the oldest went first */
  ps_alert_decided_free(&l);
}

static void test_catch_up_rule(void **state) {
  (void)state;
  unsigned on = PS_ALERT_ON_DEFAULT;
  int64_t now = T0, six_h = 21600;
  /* this morning's failure, found by a restart: raised */
  assert_int_equal(ps_alert_decide(on, six_h, PS_ALERT_RUN_FAILED, 1, now - 3600 * S, now),
                   PS_ALERT_RAISE);
  /* a year of history: nothing old */
  assert_int_equal(ps_alert_decide(on, six_h, PS_ALERT_RUN_FAILED, 1, now - 86400 * S * 365, now),
                   PS_ALERT_TOO_OLD);
  assert_int_equal(ps_alert_decide(on, six_h, PS_ALERT_RUN_FAILED, 1, now - six_h * S, now),
                   PS_ALERT_TOO_OLD);
  /* a run seen live is not judged by its age */
  assert_int_equal(ps_alert_decide(on, six_h, PS_ALERT_RUN_FAILED, 0, 0, now), PS_ALERT_RAISE);
  /* a clock ahead of ours counts as recent */
  assert_int_equal(ps_alert_decide(on, six_h, PS_ALERT_RUN_FAILED, 1, now + 60 * S, now),
                   PS_ALERT_RAISE);
  assert_int_equal(ps_alert_decide(on, six_h, PS_ALERT_IMPROVEMENT, 0, 0, now),
                   PS_ALERT_NOT_WANTED);
  assert_int_equal(ps_alert_decide(0, six_h, PS_ALERT_RUN_FAILED, 0, 0, now),
                   PS_ALERT_NOT_WANTED);
}

static const char *const names[3] = {"exec", "webhook", "influxdb"};

static void test_outbox_retries(void **state) {
  (void)state;
  assert_int_equal(ps_outbox_backoff_ms(1), 1000);
  assert_int_equal(ps_outbox_backoff_ms(2), 2000);
  assert_int_equal(ps_outbox_backoff_ms(5), 16000);
  assert_int_equal(ps_outbox_backoff_ms(100), 300000);
  ps_outbox o;
  ps_outbox_init(&o, names, 3, 0);
  ps_alert_event ev;
  make_event(&ev, PS_ALERT_RUN_FAILED, "r1");
  ps_outbox_entry *e = ps_outbox_add(&o, &ev, 0x7, 10000);
  assert_non_null(e);
  assert_null(ev.run); /* taken over */
  make_event(&ev, PS_ALERT_RUN_FAILED, "r2");
  ps_outbox_entry *e2 = ps_outbox_add(&o, &ev, 0x2, 10000);
  /* nothing is offered before the state holding it was saved */
  assert_int_equal(ps_outbox_unsaved(&o), 2);
  assert_null(ps_outbox_due(&o, 1, 10000, 0));
  assert_null(ps_outbox_due(&o, 1, 0, 1));
  assert_int_equal(ps_outbox_next_ms(&o, 0x7), INT64_MAX);
  assert_int_equal(ps_outbox_untried(&o, 0x7), 0);
  ps_outbox_saved(&o);
  assert_int_equal(ps_outbox_unsaved(&o), 0);
  /* oldest first, and one attempt at a time per entry and channel */
  assert_ptr_equal(ps_outbox_due(&o, 1, 10000, 0), e);
  ps_outbox_begin(e, 1);
  assert_ptr_equal(ps_outbox_due(&o, 1, 10000, 0), e2);
  /* the webhook answered 500: tried again after the back-off */
  assert_int_equal(ps_outbox_result(&o, e, 1, 0, 10000), 0);
  assert_ptr_equal(ps_outbox_due(&o, 1, 10500, 0), e2);
  assert_int_equal(ps_outbox_next_ms(&o, 0x2), 10000);
  ps_outbox_begin(e2, 1);
  assert_int_equal(ps_outbox_next_ms(&o, 0x2), 11000);
  assert_ptr_equal(ps_outbox_due(&o, 1, 11000, 0), e);
  assert_int_equal(ps_outbox_result(&o, e2, 1, 1, 11000), 1); /* delivered: gone */
  assert_int_equal(o.n, 1);
  assert_int_equal(ps_outbox_failed(&o, 0x2), 1); /* e: tried, still waiting */
  /* --once: every entry once, whatever its back-off, never twice */
  e->tried = 0;
  assert_ptr_equal(ps_outbox_due(&o, 1, 0, 1), e);
  ps_outbox_begin(e, 1);
  ps_outbox_result(&o, e, 1, 0, 11000);
  assert_null(ps_outbox_due(&o, 1, 0, 1));
  assert_int_equal(ps_outbox_failed(&o, 0x2), 1);
  assert_int_equal(ps_outbox_untried(&o, 0x7), 1); /* exec and influxdb never tried */
  /* delivered everywhere: removed */
  assert_int_equal(ps_outbox_result(&o, e, 0, 1, 0), 0);
  assert_int_equal(ps_outbox_result(&o, e, 2, 1, 0), 0);
  assert_int_equal(ps_outbox_result(&o, e, 1, 1, 0), 1);
  assert_int_equal(o.n, 0);
  ps_outbox_free(&o);
}

static void test_outbox_saved_and_bounded(void **state) {
  (void)state;
  ps_outbox o;
  ps_outbox_init(&o, names, 3, 4);
  ps_alert_event ev;
  for (int i = 0; i < 6; i++) {
    char run[16];
    snprintf(run, sizeof run, "r%d", i);
    make_event(&ev, PS_ALERT_RUN_FAILED, run);
    ev.time_ns = T0 + i * 1000;
    assert_non_null(ps_outbox_add(&o, &ev, 0x6, 0));
  }
  /* a receiver down for a month cannot grow the state without end */
  assert_int_equal(o.n, 4);
  assert_int_equal(o.dropped, 2);
  assert_string_equal(o.v[0]->ev.run, "r2");
  ps_outbox_begin(o.v[0], 1);
  ps_outbox_result(&o, o.v[0], 1, 0, 0);
  ps_outbox_result(&o, o.v[0], 1, 0, 0);
  cJSON *j = ps_outbox_to_cjson(&o);
  ps_outbox_free(&o);
  /* restored with the webhook still configured: attempts and times kept */
  ps_outbox_init(&o, names, 3, 0);
  ps_alert_recall r = {0};
  ps_outbox_from_cjson(&o, j, 5000, &r);
  assert_int_equal(r.bad + r.over, 0);
  assert_int_equal(o.n, 4);
  assert_int_equal(o.v[0]->attempts[1], 2);
  assert_int_equal(o.v[0]->next_ms[1], 5000); /* a restart tries at once */
  assert_int_equal(o.v[3]->ev.time_ns, T0 + 5000);
  assert_int_equal(o.v[3]->pending, 0x6);
  /* the webhook was removed from the configuration: only the point is left */
  assert_int_equal(ps_outbox_keep_channels(&o, 0x5), 0);
  assert_int_equal(o.v[0]->pending, 0x4);
  assert_int_equal(ps_outbox_keep_channels(&o, 0x1), 4);
  assert_int_equal(o.n, 0);
  ps_outbox_free(&o);
  /* unreadable entries are skipped, not fatal */
  cJSON_AddItemToArray(j, cJSON_CreateString("junk"));
  cJSON *item = cJSON_Duplicate(cJSON_GetArrayItem(j, 0), 1);
  cJSON_ReplaceItemInObject(item, "pending", cJSON_CreateStringArray((const char *[]){"smoke"}, 1));
  cJSON_AddItemToArray(j, item);
  ps_outbox_init(&o, names, 3, 0);
  ps_outbox_from_cjson(&o, j, 0, &r);
  assert_int_equal(o.n, 4);
  assert_int_equal(r.bad, 2);
  ps_outbox_free(&o);
  cJSON_Delete(j);
}

static void test_url_redact(void **state) {
  (void)state;
  char out[128];
  ps_alert_url_redact("https://hooks.slack.com/services/T0/B0/xyz", out, sizeof out);
  assert_string_equal(out, "https://hooks.slack.com");
  ps_alert_url_redact("http://u:pw@127.0.0.1:8080/hook?token=abc#x", out, sizeof out);
  assert_string_equal(out, "http://127.0.0.1:8080");
  ps_alert_url_redact("https://h?secret=1", out, sizeof out);
  assert_string_equal(out, "https://h");
  ps_alert_url_redact("not a url", out, sizeof out);
  assert_string_equal(out, "(a URL)");
}

#define W 1700000000LL /* wall clock, seconds */

static void test_silence_said_once_per_silence(void **state) {
  (void)state;
  ps_alert_silence s = {.watching_since_s = W};
  int64_t began, due;
  /* no run known: the silence counts from when watching began */
  assert_int_equal(ps_alert_silence_check(&s, 100, W + 99, &began, &due), 0);
  assert_int_equal(due, W + 100);
  assert_int_equal(ps_alert_silence_check(&s, 100, W + 100, &began, &due), 1);
  assert_int_equal(began, W);
  /* said once: not again, and no deadline left to wake for */
  assert_int_equal(ps_alert_silence_check(&s, 100, W + 5000, &began, &due), 0);
  assert_int_equal(due, 0);
  /* a run starts: a new silence, said when it lasted as long */
  assert_int_equal(ps_alert_silence_run_started(&s, W + 5000), 1);
  assert_int_equal(ps_alert_silence_run_started(&s, W + 4000), 0); /* an older run read late */
  assert_int_equal(s.last_start_s, W + 5000);
  assert_int_equal(ps_alert_silence_check(&s, 100, W + 5050, &began, &due), 0);
  assert_int_equal(due, W + 5100);
  /* what the caller saved and read back after a restart goes on counting */
  ps_alert_silence restarted = s;
  assert_int_equal(ps_alert_silence_check(&restarted, 100, W + 5100, &began, &due), 1);
  assert_int_equal(began, W + 5000);
  assert_int_equal(ps_alert_silence_check(&restarted, 100, W + 9000, &began, &due), 0);
}

static void test_silence_off_and_old_runs(void **state) {
  (void)state;
  int64_t began, due;
  ps_alert_silence s = {.watching_since_s = W};
  /* no_new_run_after_s = 0: off, however long */
  assert_int_equal(ps_alert_silence_check(&s, 0, W + 999999, &began, &due), 0);
  assert_int_equal(due, 0);
  assert_int_equal(s.said_for_s, 0);
  /* a run that started before the agent watched: silence counts from
   * watching, not from a start a backfill found */
  assert_int_equal(ps_alert_silence_run_started(&s, W - 86400), 1);
  assert_int_equal(ps_alert_silence_check(&s, 100, W + 50, &began, &due), 0);
  assert_int_equal(due, W + 100);
}

static void test_server_down_ms(void **state) {
  (void)state;
  /* unreachable: from the first failed attempt, whatever waits */
  ps_alert_server_view v = {.now_ms = 100000, .unreachable_since_ms = 40000};
  assert_int_equal(ps_alert_server_down_ms(&v), 60000);
  /* it answers and nothing waits: not down, however old the last ack */
  v = (ps_alert_server_view){.now_ms = 100000, .last_answer_ms = 1000};
  assert_int_equal(ps_alert_server_down_ms(&v), 0);
  /* it answers but takes nothing (401, 5xx): since the last ack ... */
  v.waiting = 3;
  assert_int_equal(ps_alert_server_down_ms(&v), 99000);
  /* ... but no longer than the oldest batch in flight has waited */
  v.inflight = 1;
  v.oldest_ms = 20000;
  assert_int_equal(ps_alert_server_down_ms(&v), 20000);
  v.oldest_ms = 200000;
  assert_int_equal(ps_alert_server_down_ms(&v), 99000);
}

static void test_health_server_outage_and_recovery(void **state) {
  (void)state;
  ps_alert_health h = {0};
  int64_t since;
  /* shorter than unhealthy_after_s: nothing */
  assert_int_equal(ps_alert_health_server(&h, 600000, 5, 600, W, &since), PS_HEALTH_SAME);
  /* longer: said once, from when it began */
  assert_int_equal(ps_alert_health_server(&h, 612000, 5, 600, W, &since),
                   PS_HEALTH_SERVER_DOWN);
  assert_int_equal(since, W - 612);
  assert_int_equal(h.server_since_s, W - 612);
  assert_int_equal(ps_alert_health_server(&h, 900000, 5, 600, W + 300, &since),
                   PS_HEALTH_SAME);
  /* it answers again but took no write since: not recovered yet */
  assert_int_equal(ps_alert_health_server(&h, 0, 5, 600, W + 400, &since), PS_HEALTH_SAME);
  /* a write acknowledged: recovered, naming the outage's start */
  assert_int_equal(ps_alert_health_server(&h, 0, 6, 600, W + 410, &since),
                   PS_HEALTH_SERVER_BACK);
  assert_int_equal(since, W - 612);
  assert_int_equal(h.server_since_s, 0);
  assert_int_equal(ps_alert_health_server(&h, 0, 7, 600, W + 500, &since), PS_HEALTH_SAME);
}

static void test_health_rejected_input_episodes(void **state) {
  (void)state;
  ps_alert_health h = {0};
  uint64_t fresh;
  assert_int_equal(ps_alert_health_input(&h, 0, 600, W, &fresh), PS_HEALTH_SAME);
  /* the first rejections: an episode, said with its count */
  assert_int_equal(ps_alert_health_input(&h, 3, 600, W, &fresh), PS_HEALTH_INPUT_BAD);
  assert_int_equal(fresh, 3);
  /* more of them: the same episode, not said again */
  assert_int_equal(ps_alert_health_input(&h, 5, 600, W + 100, &fresh), PS_HEALTH_INPUT_MORE);
  assert_int_equal(fresh, 2);
  /* quiet, but not for unhealthy_after_s since the last one */
  assert_int_equal(ps_alert_health_input(&h, 5, 600, W + 700, &fresh), PS_HEALTH_SAME);
  assert_int_equal(ps_alert_health_input(&h, 5, 600, W + 701, &fresh), PS_HEALTH_INPUT_CALM);
  assert_int_equal(h.input_since_s, 0);
  assert_int_equal(ps_alert_health_input(&h, 5, 600, W + 9000, &fresh), PS_HEALTH_SAME);
  /* the next rejection is a new episode, said again */
  assert_int_equal(ps_alert_health_input(&h, 6, 600, W + 9001, &fresh), PS_HEALTH_INPUT_BAD);
  assert_int_equal(fresh, 1);
  assert_int_equal(h.input_since_s, W + 9001);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_id_is_stable_and_tells_apart),
      cmocka_unit_test(test_event_object),
      cmocka_unit_test(test_verdict_event_and_slack),
      cmocka_unit_test(test_run_texts),
      cmocka_unit_test(test_throttle),
      cmocka_unit_test(test_ledger),
      cmocka_unit_test(test_catch_up_rule),
      cmocka_unit_test(test_outbox_retries),
      cmocka_unit_test(test_outbox_saved_and_bounded),
      cmocka_unit_test(test_url_redact),
      cmocka_unit_test(test_silence_said_once_per_silence),
      cmocka_unit_test(test_silence_off_and_old_runs),
      cmocka_unit_test(test_server_down_ms),
      cmocka_unit_test(test_health_server_outage_and_recovery),
      cmocka_unit_test(test_health_rejected_input_episodes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
