/*
 * judging/judging: the face of the judging layer (docs/architecture.md):
 * the verdicts, the agent's own alerts and the report page, as the service
 * sees them. Nothing else of agent/judging/ is included by the service.
 *
 * Contract
 * - In: the run tracker's run events (pl_judging_run_event) and the points
 *   the judges need (pl_judging_point), wired by the service to the
 *   delivery's tap, subscribed to the measurements pl_judging_measurements()
 *   names (the figures table's sources, core/figures.h; DSS bench results;
 *   run markers; verdict points a source gives) and the slog reader's
 *   points (pl_judging_slog_point); out: verdict and alert points through `out` (aux
 *   batches), alert events through the channels, the report page.
 * - Inside, and only here, the judges are wired to each other: a run's
 *   judged verdicts go to the alert stage (regression and improvement
 *   events); acknowledged verdicts ask for a new report page.
 * - Hooks into the service: `settled` after every alert delivery attempt
 *   and every acknowledged verdict pass (a --once run may be complete);
 *   `busy` while the reader has a backlog or run markers are unanswered
 *   (verdicts wait); `last_error` and `failed` for the report page's
 *   health line and the state's errors.
 * - Memory: the state sections "verdicts" and "alerts", restored and
 *   registered with the commit by pl_judging_restore().
 * - Never calls the service; includes only the data path below it
 *   (agent/pipeline/), never agent/service/.
 */
#ifndef PS_JUDGING_JUDGING_H
#define PS_JUDGING_JUDGING_H

#include <stddef.h>

#include "core/config.h"
#include "core/point.h"
#include "judging/alerting.h"
#include "judging/reporter.h"
#include "judging/verdicts.h"
#include "pipeline/commit.h"
#include "pipeline/delivery.h"
#include "pipeline/reader.h"
#include "pipeline/runtracker.h"
#include "pipeline/shared.h"
#include "state/state.h"

typedef struct pl_judging_hooks {
  void (*settled)(void *ctx);
  int (*busy)(void *ctx);
  const char *(*last_error)(void *ctx);
  void (*failed)(void *ctx, const char *why);
  void *ctx;
} pl_judging_hooks;

typedef struct pl_judging {
  pl_shared *sh;
  pl_judging_hooks hooks;
  pl_verdicts verdicts;
  pl_alerting alerts;
  pl_reporter reporter;
} pl_judging;

/* `cfg` is the configuration at start (settings read once, and the
 * server's influxdb group); `dl`, `rd`, `runs` may be initialised after
 * this call (only their addresses are kept). Returns 0 or a negative errno
 * (an alert channel that cannot be made, no memory); on failure nothing is
 * left open. */
int pl_judging_init(pl_judging *j, pl_shared *sh, const ps_config *cfg, pl_delivery *dl,
                    pl_reader *rd, pl_runs *runs, pl_commit *commit, const pl_aux_out *out,
                    const pl_judging_hooks *hooks);
/* Restores the sections "verdicts" and "alerts" and registers them. */
void pl_judging_restore(pl_judging *j, const ps_state *saved, pl_commit *commit);
/* Sends what a previous agent left undelivered; starts the alert timers. */
void pl_judging_start(pl_judging *j);
/* The first scan is done: a first report page in service mode. */
void pl_judging_scanned(pl_judging *j);
/* The configuration was reread: the report page follows it. */
void pl_judging_reconfigured(pl_judging *j);

/* The measurements the judges want to see, without repeats (static
 * strings). Fills up to `cap`; returns how many. */
size_t pl_judging_measurements(const char **out, size_t cap);

void pl_judging_run_event(pl_judging *j, const pl_run_event *ev);
void pl_judging_point(pl_judging *j, const ps_point *p, const ps_source_cfg *src,
                      const char *path);
/* A point of the chain's slogs (pipeline/slogs.h, its `point` hook). */
void pl_judging_slog_point(pl_judging *j, const ps_point *p);
/* A complete slog stage was acknowledged (pipeline/slogs.h `stage_done`). */
void pl_judging_slog_stage_done(pl_judging *j, const char *run, const char *test_type,
                                int64_t stage_ns);

/* Nothing waits to be judged or sent (verdicts). */
int pl_judging_quiet(const pl_judging *j);
/* --once, everything present read: raise what is due. */
void pl_judging_finish(pl_judging *j);
/* Every alert delivery attempt is over; whether one failed (exit 69). */
int pl_judging_done(const pl_judging *j);
int pl_judging_undelivered(const pl_judging *j);
/* Alert events held, not sent, because the state could not be saved. */
size_t pl_judging_held(const pl_judging *j);
/* Stopping: no new alert delivery starts; those in flight finish. */
void pl_judging_hold(pl_judging *j);
/* Alert delivery attempts in flight. */
size_t pl_judging_busy(const pl_judging *j);

/* Before the delivery closes: the judges' points in flight are cancelled. */
void pl_judging_close(pl_judging *j);
void pl_judging_free(pl_judging *j);

#endif
