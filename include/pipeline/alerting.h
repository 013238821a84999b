/*
 * pipeline/alerting: the events perfship raises itself, without Kapacitor
 * (docs/alerts.md): a failed, interrupted or stalled run and its recovery,
 * a source with no new run, a regression or improvement, a sick agent.
 *
 * Contract
 * - What it hears: run events of the run tracker (pl_alerting_run_event,
 *   wired by the service), every point a source gave (pl_alerting_tap: DSS
 *   `runs` end markers and `perfship_verdict` points; it returns at once
 *   for other measurements), one run's changed metrics from the verdict
 *   stage (pl_alerting_verdicts), and on its own timer the sink's health,
 *   the shared counters of rejected input and each source's silence.
 * - Raising an event: the same id twice is raised once (alert/ledger.h);
 *   events not in alerts.on and backfilled ones older than catch_up_s are
 *   not raised (alert/policy.h); a repeat of (event, key) within
 *   min_interval_s is dropped and counted (alert/throttle.h). A raised
 *   event goes into the outbox, which is saved in the state file before
 *   anything is sent, then to each configured channel (exec, webhook) and
 *   as a `perfship_alert` point through `out`. It leaves the outbox once
 *   every channel delivered it; until then it is retried with back-off,
 *   across restarts.
 * - no_new_run: per loadgen or dss-bench source, from the later of its last
 *   known run start and when the agent began watching it (both saved),
 *   once per silence. It is judged only once the backlog present at start
 *   has been read and its runs judged, or two rescans passed (`rd`, `runs`:
 *   NULL for none), so a restart does not mistake runs not yet re-read for
 *   silence.
 * - --once (sh->once): every event, old or new, is tried once on every
 *   channel and never retried by this process. pl_alerting_finish() raises
 *   what is due once everything present was read (verdicts gathered from
 *   points, rejected input, silent sources); pl_alerting_done() says when
 *   every attempt is over, pl_alerting_undelivered() whether one failed
 *   (the service exits 69).
 * - The `settled` hook runs after every delivery attempt, so the service
 *   can look whether it is done. The stage never calls the service.
 * - Its memory (outbox, throttle, ledger, sources, health) is one JSON
 *   section of the state file: pl_alerting_to_json / pl_alerting_from_json.
 */
#ifndef PS_PIPELINE_ALERTING_H
#define PS_PIPELINE_ALERTING_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "alert/dispatch.h"
#include "alert/event.h"
#include "alert/exec.h"
#include "alert/health.h"
#include "alert/ledger.h"
#include "alert/outbox.h"
#include "alert/throttle.h"
#include "alert/webhook.h"
#include "pipeline/commit.h"
#include "pipeline/delivery.h"
#include "pipeline/reader.h"
#include "pipeline/runtracker.h"
#include "pipeline/shared.h"
#include "pipeline/verdicts.h"

typedef struct pl_alerting_hooks {
  void (*settled)(void *ctx);
  void *ctx;
} pl_alerting_hooks;

/* One run's changed metrics, as the verdict stage judged them: every
 * metric carries its direction (ps_alert_metric.improvement). */
typedef struct pl_alert_verdicts {
  const char *source; /* as the runs markers write it: "loadgen", "dss_bench" */
  const char *series;
  const char *run;
  const char *revision; /* NULL when none */
  int64_t time_ns;      /* the verdict points' time */
  int backfill;         /* as on the run's markers */
  const ps_alert_metric *metrics;
  size_t nmetrics;
} pl_alert_verdicts;

typedef struct pl_alert_source pl_alert_source;
typedef struct pl_verdict_group pl_verdict_group;

typedef struct pl_alerting {
  pl_shared *sh;
  pl_delivery *dl; /* sink health; NULL: none (tests) */
  pl_reader *rd;
  pl_runs *runs;
  pl_commit *commit;
  pl_aux_out out;
  pl_alerting_hooks hooks;
  ps_outbox box;
  ps_alert_dispatch dispatch;
  ps_alert_throttle throttle;
  ps_alert_ledger ledger;
  ps_alert_exec *exec;
  ps_alert_webhook *webhook;
  pl_alert_source *sources;
  pl_verdict_group *groups;
  uv_timer_t tick, gather;
  ps_alert_health health;
  int64_t last_us; /* events get distinct times: their points stay apart */
  int armed;       /* the backlog at start was read: silence means silence */
  int finished;    /* --once: pl_alerting_finish() ran */
  int held;        /* stopping: start no more deliveries */
  int ticks;
} pl_alerting;

/* Builds the channels of sh->cfg (alerts.exec, alerts.webhook: they apply
 * until a restart). Returns 0 or a negative errno (a channel that cannot
 * be made). */
int pl_alerting_init(pl_alerting *al, pl_shared *sh, pl_delivery *dl, pl_reader *rd,
                     pl_runs *runs, pl_commit *commit, const pl_aux_out *out,
                     const pl_alerting_hooks *hooks);
void pl_alerting_from_json(pl_alerting *al, const char *text);
char *pl_alerting_to_json(pl_alerting *al);
/* Starts the timers and sends what a previous agent left undelivered. */
void pl_alerting_start(pl_alerting *al);

void pl_alerting_run_event(pl_alerting *al, const pl_run_event *ev);
void pl_alerting_tap(pl_alerting *al, const ps_point *p, const ps_source_cfg *src,
                     const char *path);
void pl_alerting_verdicts(pl_alerting *al, const pl_alert_verdicts *v);
/* The verdict stage's own verdicts of one run (pipeline/verdicts.h): those
 * that are a regression or an improvement become pl_alerting_verdicts(). */
void pl_alerting_judged(pl_alerting *al, const pl_run_verdicts *rv);

void pl_alerting_finish(pl_alerting *al);
int pl_alerting_done(const pl_alerting *al);
int pl_alerting_undelivered(const pl_alerting *al);
/* Stopping: no new delivery starts; those in flight finish. */
void pl_alerting_hold(pl_alerting *al);
/* Delivery attempts in flight. */
size_t pl_alerting_busy(const pl_alerting *al);

void pl_alerting_close(pl_alerting *al);
void pl_alerting_free(pl_alerting *al);

#endif
