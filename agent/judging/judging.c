/*
 * judging.c: the judging layer's face. See include/judging/judging.h.
 *
 * Design
 * - The judges' wiring to each other lives here, not in the service: the
 *   service dispatches run events and points to one object, and the
 *   verdict stage's hooks (judged, written) land here, where the alert
 *   stage and the report page are at hand.
 * - The order of the calls is the order the service used before the
 *   layer had a face of its own (docs/architecture.md): verdicts before
 *   alerts before the page, so the logs and the state file read the same.
 */
#include "judging/judging.h"

#include <string.h>

static void on_alerts_settled(void *ctx) {
  jd_judging *j = ctx;
  if (j->hooks.settled)
    j->hooks.settled(j->hooks.ctx);
}

/* A run's verdicts were written: its regressions and improvements are
 * events. */
static void on_verdicts_judged(void *ctx, const jd_run_verdicts *rv) {
  jd_judging *j = ctx;
  jd_alerting_judged(&j->alerts, rv);
}

/* Verdicts were acknowledged: the report may show them; a --once run may
 * be complete. */
static void on_verdicts_written(void *ctx) {
  jd_judging *j = ctx;
  jd_reporter_request(&j->reporter, "verdicts written");
  if (j->hooks.settled)
    j->hooks.settled(j->hooks.ctx);
}

static int reader_busy(void *ctx) {
  jd_judging *j = ctx;
  return j->hooks.busy ? j->hooks.busy(j->hooks.ctx) : 0;
}

static int slogs_busy(void *ctx) {
  jd_judging *j = ctx;
  return j->hooks.slogs_busy ? j->hooks.slogs_busy(j->hooks.ctx) : 0;
}

static int slog_pending(void *ctx, const char *run) {
  jd_judging *j = ctx;
  return j->hooks.slog_pending ? j->hooks.slog_pending(j->hooks.ctx, run) : 0;
}

static const char *last_error(void *ctx) {
  jd_judging *j = ctx;
  return j->hooks.last_error ? j->hooks.last_error(j->hooks.ctx) : NULL;
}

static void page_failed(void *ctx, const char *why) {
  jd_judging *j = ctx;
  if (j->hooks.failed)
    j->hooks.failed(j->hooks.ctx, why);
}

int jd_judging_init(jd_judging *j, pl_shared *sh, const ps_config *cfg, pl_delivery *dl,
                    pl_reader *rd, pl_runs *runs, pl_commit *commit, const pl_aux_out *out,
                    const jd_judging_hooks *hooks) {
  memset(j, 0, sizeof *j);
  j->sh = sh;
  if (hooks)
    j->hooks = *hooks;
  jd_alerting_hooks ah = {on_alerts_settled, j, slog_pending};
  int rc = jd_alerting_init(&j->alerts, sh, dl, rd, runs, commit, out, &ah);
  if (rc < 0)
    return rc;
  jd_verdicts_hooks vh = {on_verdicts_judged, on_verdicts_written, reader_busy,
                          slogs_busy,         on_alerts_settled,   j};
  rc = jd_verdicts_init(&j->verdicts, sh, cfg, out, &vh);
  if (rc < 0) {
    jd_alerting_close(&j->alerts);
    jd_alerting_free(&j->alerts);
    return rc;
  }
  jd_reporter_hooks reph = {last_error, page_failed, j};
  jd_reporter_init(&j->reporter, sh, cfg, &reph);
  return 0;
}

static char *verdicts_json(void *ctx) {
  jd_judging *j = ctx;
  return jd_verdicts_to_json(&j->verdicts);
}

static char *alerts_json(void *ctx) {
  jd_judging *j = ctx;
  return jd_alerting_to_json(&j->alerts);
}

void jd_judging_restore(jd_judging *j, const ps_state *saved, pl_commit *commit) {
  jd_verdicts_from_json(&j->verdicts, ps_state_section(saved, "verdicts"));
  pl_commit_add_section(commit, "verdicts", verdicts_json, j);
  jd_alerting_from_json(&j->alerts, ps_state_section(saved, "alerts"));
  pl_commit_add_section(commit, "alerts", alerts_json, j);
}

void jd_judging_start(jd_judging *j) { jd_alerting_start(&j->alerts); }

void jd_judging_scanned(jd_judging *j) { jd_reporter_start(&j->reporter); }

void jd_judging_reconfigured(jd_judging *j) {
  jd_verdicts_reconfigured(&j->verdicts, j->sh->cfg);
  jd_reporter_request(&j->reporter, "configuration reread");
}

size_t jd_judging_measurements(const char **out, size_t cap) {
  size_t n = jd_verdicts_collect_measurements(out, cap);
  const char *more[4];
  size_t k = jd_alerting_runs_measurements(more, 4);
  for (size_t i = 0; i < k; i++) {
    size_t j = 0;
    while (j < n && strcmp(out[j], more[i]) != 0)
      j++;
    if (j == n && n < cap)
      out[n++] = more[i];
  }
  return n;
}

/* Run events go to every judge of runs (their markers were acknowledged). */
void jd_judging_run_event(jd_judging *j, const pl_run_event *ev) {
  jd_verdicts_run_ended(&j->verdicts, ev);
  jd_alerting_run_event(&j->alerts, ev);
  jd_reporter_run_event(&j->reporter, ev);
}

void jd_judging_point(jd_judging *j, const ps_point *p, const ps_source_cfg *src,
                      const char *path) {
  jd_verdicts_tap(&j->verdicts, p);
  jd_alerting_tap(&j->alerts, p, src, path);
}

void jd_judging_slog_point(jd_judging *j, const ps_point *p) {
  jd_verdicts_slog_point(&j->verdicts, p);
}

void jd_judging_slog_stage_done(jd_judging *j, const char *run, const char *test_type,
                                int64_t stage_ns) {
  jd_verdicts_slog_stage_done(&j->verdicts, run, test_type, stage_ns);
}

void jd_judging_slogs_idle(jd_judging *j) { jd_verdicts_slogs_idle(&j->verdicts); }

int jd_judging_quiet(const jd_judging *j) { return jd_verdicts_quiet(&j->verdicts); }

void jd_judging_finish(jd_judging *j) { jd_alerting_finish(&j->alerts); }

int jd_judging_done(const jd_judging *j) { return jd_alerting_done(&j->alerts); }

size_t jd_judging_held(const jd_judging *j) { return jd_alerting_held(&j->alerts); }

int jd_judging_undelivered(const jd_judging *j) { return jd_alerting_undelivered(&j->alerts); }

void jd_judging_hold(jd_judging *j) { jd_alerting_hold(&j->alerts); }

size_t jd_judging_busy(const jd_judging *j) { return jd_alerting_busy(&j->alerts); }

void jd_judging_close(jd_judging *j) {
  jd_verdicts_close(&j->verdicts);
  jd_alerting_close(&j->alerts); /* before the delivery: its points are cancelled */
  jd_reporter_close(&j->reporter);
}

void jd_judging_free(jd_judging *j) {
  jd_verdicts_free(&j->verdicts);
  jd_alerting_free(&j->alerts);
}
