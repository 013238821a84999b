/*
 * judging/judging: the face of the judging layer (docs/architecture.md):
 * the verdicts, the agent's own alerts and the report page, as the service
 * sees them. Nothing else of agent/judging/ is included by the service.
 *
 * Contract
 * - In: the run tracker's run events (jd_judging_run_event) and the points
 *   the judges need (jd_judging_point), wired by the service to the
 *   delivery's tap, subscribed to the measurements jd_judging_measurements()
 *   names (the figures table's sources, core/figures.h; DSS bench results;
 *   run markers; verdict points a source gives) and the slog reader's
 *   points (jd_judging_slog_point); out: verdict and alert points through `out` (aux
 *   batches), alert events through the channels, the report page.
 * - Inside, and only here, the judges are wired to each other: a run's
 *   judged verdicts go to the alert stage (regression and improvement
 *   events); acknowledged verdicts ask for a new report page.
 * - Hooks into the service: `settled` after every alert delivery attempt
 *   and every acknowledged verdict pass (a --once run may be complete);
 *   `busy` while the reader has a backlog or run markers are unanswered
 *   (verdicts wait); `slogs_busy` while the slog reader has stages to
 *   read (a run judged again for its stages' growth waits for the rest of
 *   it); `last_error` and `failed` for the report page's
 *   health line and the state's errors.
 * - Memory: the state sections "verdicts" and "alerts", restored and
 *   registered with the commit by jd_judging_restore().
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

typedef struct jd_judging_hooks {
  void (*settled)(void *ctx);
  int (*busy)(void *ctx);
  int (*slogs_busy)(void *ctx);
  const char *(*last_error)(void *ctx);
  void (*failed)(void *ctx, const char *why);
  void *ctx;
  /* A run's slog is still to be read or acknowledged (NULL: never): a
   * regression's cause waits for it (docs/alerts.md `cause`). */
  int (*slog_pending)(void *ctx, const char *run);
} jd_judging_hooks;

typedef struct jd_judging {
  pl_shared *sh;
  jd_judging_hooks hooks;
  jd_verdicts verdicts;
  jd_alerting alerts;
  jd_reporter reporter;
} jd_judging;

/* `cfg` is the configuration at start (settings read once, and the
 * server's influxdb group); `dl`, `rd`, `runs` may be initialised after
 * this call (only their addresses are kept). Returns 0 or a negative errno
 * (an alert channel that cannot be made, no memory); on failure nothing is
 * left open. */
int jd_judging_init(jd_judging *j, pl_shared *sh, const ps_config *cfg, pl_delivery *dl,
                    pl_reader *rd, pl_runs *runs, pl_commit *commit, const pl_aux_out *out,
                    const jd_judging_hooks *hooks);
/* Restores the sections "verdicts" and "alerts" and registers them. */
void jd_judging_restore(jd_judging *j, const ps_state *saved, pl_commit *commit);
/* Sends what a previous agent left undelivered; starts the alert timers. */
void jd_judging_start(jd_judging *j);
/* The first scan is done: a first report page in service mode. */
void jd_judging_scanned(jd_judging *j);
/* The configuration was reread: the report page follows it. */
void jd_judging_reconfigured(jd_judging *j);

/* The measurements the judges want to see, without repeats (static
 * strings). Fills up to `cap`; returns how many. */
size_t jd_judging_measurements(const char **out, size_t cap);

void jd_judging_run_event(jd_judging *j, const pl_run_event *ev);
void jd_judging_point(jd_judging *j, const ps_point *p, const ps_source_cfg *src, const char *path);
/* A point of the chain's slogs (pipeline/slogs.h, its `point` hook). */
void jd_judging_slog_point(jd_judging *j, const ps_point *p);
/* A complete slog stage was acknowledged (pipeline/slogs.h `stage_done`). */
void jd_judging_slog_stage_done(jd_judging *j, const char *run, const char *test_type,
                                int64_t stage_ns);
/* The slog reader went idle (pipeline/slogs.h's `idle` hook). */
void jd_judging_slogs_idle(jd_judging *j);

/* Nothing waits to be judged or sent (verdicts). */
int jd_judging_quiet(const jd_judging *j);
/* --once, everything present read: raise what is due. */
void jd_judging_finish(jd_judging *j);
/* Every alert delivery attempt is over; whether one failed (exit 69). */
int jd_judging_done(const jd_judging *j);
int jd_judging_undelivered(const jd_judging *j);
/* Alert events held, not sent, because the state could not be saved. */
size_t jd_judging_held(const jd_judging *j);
/* Stopping: no new alert delivery starts; those in flight finish. */
void jd_judging_hold(jd_judging *j);
/* Alert delivery attempts in flight. */
size_t jd_judging_busy(const jd_judging *j);

/* Before the delivery closes: the judges' points in flight are cancelled. */
void jd_judging_close(jd_judging *j);
void jd_judging_free(jd_judging *j);

#endif
