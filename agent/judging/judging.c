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
  pl_judging *j = ctx;
  if (j->hooks.settled)
    j->hooks.settled(j->hooks.ctx);
}

/* A run's verdicts were written: its regressions and improvements are
 * events. */
static void on_verdicts_judged(void *ctx, const pl_run_verdicts *rv) {
  pl_judging *j = ctx;
  pl_alerting_judged(&j->alerts, rv);
}

/* Verdicts were acknowledged: the report may show them; a --once run may
 * be complete. */
static void on_verdicts_written(void *ctx) {
  pl_judging *j = ctx;
  pl_reporter_request(&j->reporter, "verdicts written");
  if (j->hooks.settled)
    j->hooks.settled(j->hooks.ctx);
}

static int reader_busy(void *ctx) {
  pl_judging *j = ctx;
  return j->hooks.busy ? j->hooks.busy(j->hooks.ctx) : 0;
}

static const char *last_error(void *ctx) {
  pl_judging *j = ctx;
  return j->hooks.last_error ? j->hooks.last_error(j->hooks.ctx) : NULL;
}

static void page_failed(void *ctx, const char *why) {
  pl_judging *j = ctx;
  if (j->hooks.failed)
    j->hooks.failed(j->hooks.ctx, why);
}

int pl_judging_init(pl_judging *j, pl_shared *sh, const ps_config *cfg, pl_delivery *dl,
                    pl_reader *rd, pl_runs *runs, pl_commit *commit, const pl_aux_out *out,
                    const pl_judging_hooks *hooks) {
  memset(j, 0, sizeof *j);
  j->sh = sh;
  if (hooks)
    j->hooks = *hooks;
  pl_alerting_hooks ah = {on_alerts_settled, j};
  int rc = pl_alerting_init(&j->alerts, sh, dl, rd, runs, commit, out, &ah);
  if (rc < 0)
    return rc;
  pl_verdicts_hooks vh = {on_verdicts_judged, on_verdicts_written, reader_busy, on_alerts_settled,
                          j};
  rc = pl_verdicts_init(&j->verdicts, sh, cfg, out, &vh);
  if (rc < 0) {
    pl_alerting_close(&j->alerts);
    pl_alerting_free(&j->alerts);
    return rc;
  }
  pl_reporter_hooks reph = {last_error, page_failed, j};
  pl_reporter_init(&j->reporter, sh, cfg, &reph);
  return 0;
}

static char *verdicts_json(void *ctx) {
  pl_judging *j = ctx;
  return pl_verdicts_to_json(&j->verdicts);
}

static char *alerts_json(void *ctx) {
  pl_judging *j = ctx;
  return pl_alerting_to_json(&j->alerts);
}

void pl_judging_restore(pl_judging *j, const ps_state *saved, pl_commit *commit) {
  pl_verdicts_from_json(&j->verdicts, ps_state_section(saved, "verdicts"));
  pl_commit_add_section(commit, "verdicts", verdicts_json, j);
  pl_alerting_from_json(&j->alerts, ps_state_section(saved, "alerts"));
  pl_commit_add_section(commit, "alerts", alerts_json, j);
}

void pl_judging_start(pl_judging *j) { pl_alerting_start(&j->alerts); }

void pl_judging_scanned(pl_judging *j) { pl_reporter_start(&j->reporter); }

void pl_judging_reconfigured(pl_judging *j) {
  pl_verdicts_reconfigured(&j->verdicts, j->sh->cfg);
  pl_reporter_request(&j->reporter, "configuration reread");
}

size_t pl_judging_measurements(const char **out, size_t cap) {
  size_t n = pl_collect_measurements(out, cap);
  const char *more[4];
  size_t k = pl_alert_runs_measurements(more, 4);
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
void pl_judging_run_event(pl_judging *j, const pl_run_event *ev) {
  pl_verdicts_run_ended(&j->verdicts, ev);
  pl_alerting_run_event(&j->alerts, ev);
  pl_reporter_run_event(&j->reporter, ev);
}

void pl_judging_point(pl_judging *j, const ps_point *p, const ps_source_cfg *src,
                      const char *path) {
  pl_verdicts_tap(&j->verdicts, p);
  pl_alerting_tap(&j->alerts, p, src, path);
}

void pl_judging_slog_point(pl_judging *j, const ps_point *p) {
  pl_verdicts_slog_point(&j->verdicts, p);
}

void pl_judging_slog_stage_done(pl_judging *j, const char *run, const char *test_type,
                                int64_t stage_ns) {
  pl_verdicts_slog_stage_done(&j->verdicts, run, test_type, stage_ns);
}

int pl_judging_quiet(const pl_judging *j) { return pl_verdicts_quiet(&j->verdicts); }

void pl_judging_finish(pl_judging *j) { pl_alerting_finish(&j->alerts); }

int pl_judging_done(const pl_judging *j) { return pl_alerting_done(&j->alerts); }

size_t pl_judging_held(const pl_judging *j) { return pl_alerting_held(&j->alerts); }

int pl_judging_undelivered(const pl_judging *j) { return pl_alerting_undelivered(&j->alerts); }

void pl_judging_hold(pl_judging *j) { pl_alerting_hold(&j->alerts); }

size_t pl_judging_busy(const pl_judging *j) { return pl_alerting_busy(&j->alerts); }

void pl_judging_close(pl_judging *j) {
  pl_verdicts_close(&j->verdicts);
  pl_alerting_close(&j->alerts); /* before the delivery: its points are cancelled */
  pl_reporter_close(&j->reporter);
}

void pl_judging_free(pl_judging *j) {
  pl_verdicts_free(&j->verdicts);
  pl_alerting_free(&j->alerts);
}
