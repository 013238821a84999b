/*
 * judging/alerting: the events perfship raises itself, without Kapacitor
 * (docs/alerts.md): a failed, interrupted or stalled run and its recovery,
 * a source with no new run, a regression or improvement, a sick agent.
 *
 * Contract
 * - What it hears: run events of the run tracker (jd_alerting_run_event,
 *   through the judging face, judging/judging.h), the points of the
 *   measurements it subscribed to (jd_alerting_tap: DSS `runs` end markers
 *   and `perfship_verdict` points, jd_alerting_runs_measurements), one run's
 *   changed metrics from the verdict stage (jd_alerting_judged, wired by
 *   the face), and on its own timer the sink's health,
 *   the shared counters of rejected input and each source's silence.
 * - Raising an event: the same id twice is raised once (alert/decided.h);
 *   events not in alerts.on and backfilled ones older than catch_up_s are
 *   not raised (alert/policy.h); a repeat of (event, key) within
 *   min_interval_s is dropped and counted (alert/throttle.h). A raised
 *   event goes into the outbox, which is saved in the state file before
 *   anything is sent, then to each configured channel (exec, webhook) and
 *   as a `perfship_alert` point through `out`. It leaves the outbox once
 *   every channel delivered it; until then it is retried with back-off,
 *   across restarts.
 * - no_new_run: per source whose format's files are runs (ops->run_source:
 *   loadgen, dss-bench), from the later of its last
 *   known run start and when the agent began watching it (both saved),
 *   once per silence. It is judged only once the backlog present at start
 *   has been read and its runs judged, or two rescans passed (`rd`, `runs`:
 *   NULL for none), so a restart does not mistake runs not yet re-read for
 *   silence.
 * - --once (sh->once): every event, old or new, is tried once on every
 *   channel and never retried by this process. jd_alerting_finish() raises
 *   what is due once everything present was read (verdicts gathered from
 *   points, rejected input, silent sources); jd_alerting_done() says when
 *   every attempt is over, jd_alerting_undelivered() whether one failed
 *   (the service exits 69), jd_alerting_held() how many were held because
 *   the state could not be saved (74).
 * - The `settled` hook runs after every delivery attempt, so the service
 *   (through the face) can look whether it is done. The stage never calls
 *   the service.
 * - Its memory (outbox, throttle, ledger, sources, health) is one JSON
 *   section of the state file: jd_alerting_to_json / jd_alerting_from_json.
 *
 * Its files, bottom first (each uses only those before it):
 * alerting_raise.h raises and delivers an event; alerting_clock.h raises
 * what time passing brings (no_new_run, health); alerting_runs.h what runs
 * bring (run events, tapped markers and verdicts); this one wires them and
 * is what the judging face (judging/judging.h) sees.
 */
#ifndef PS_JUDGING_ALERTING_H
#define PS_JUDGING_ALERTING_H

#include <stddef.h>

#include "core/config.h"
#include "core/point.h"
#include "judging/alerting_clock.h"
#include "judging/alerting_raise.h"
#include "judging/alerting_runs.h"
#include "pipeline/commit.h"
#include "pipeline/delivery.h"
#include "pipeline/reader.h"
#include "pipeline/runtracker.h"
#include "pipeline/shared.h"
#include "judging/verdicts.h"

typedef struct jd_alerting_hooks {
  void (*settled)(void *ctx);
  void *ctx;
  int (*slog_pending)(void *ctx, const char *run); /* NULL: never (alerting_runs.h) */
} jd_alerting_hooks;

typedef struct jd_alerting {
  pl_shared *sh;
  jd_alerting_raiser raiser; /* owns the outbox and the channels */
  jd_alerting_clock clock;   /* no_new_run, health */
  jd_alerting_runs runs;     /* run events, markers, verdicts */
} jd_alerting;

/* Builds the channels of sh->cfg (alerts.exec, alerts.webhook: they apply
 * until a restart). Returns 0 or a negative errno (a channel that cannot
 * be made). */
int jd_alerting_init(jd_alerting *al, pl_shared *sh, pl_delivery *dl, pl_reader *rd, pl_runs *runs,
                     pl_commit *commit, const pl_aux_out *out, const jd_alerting_hooks *hooks);
void jd_alerting_from_json(jd_alerting *al, const char *text);
char *jd_alerting_to_json(jd_alerting *al);
/* Starts the timers and sends what a previous agent left undelivered. */
void jd_alerting_start(jd_alerting *al);

void jd_alerting_run_event(jd_alerting *al, const pl_run_event *ev);
void jd_alerting_tap(jd_alerting *al, const ps_point *p, const ps_source_cfg *src,
                     const char *path);
void jd_alerting_verdicts(jd_alerting *al, const jd_alert_verdicts *v);
/* The verdict stage's own verdicts of one run (judging/verdicts.h): those
 * that are a regression or an improvement become jd_alerting_verdicts(). */
void jd_alerting_judged(jd_alerting *al, const jd_run_verdicts *rv);

void jd_alerting_finish(jd_alerting *al);
int jd_alerting_done(const jd_alerting *al);
int jd_alerting_undelivered(const jd_alerting *al);
/* Events held, not sent, because the state could not be saved. */
size_t jd_alerting_held(const jd_alerting *al);
/* Stopping: no new delivery starts; those in flight finish. */
void jd_alerting_hold(jd_alerting *al);
/* Delivery attempts in flight. */
size_t jd_alerting_busy(const jd_alerting *al);

void jd_alerting_close(jd_alerting *al);
void jd_alerting_free(jd_alerting *al);

#endif
