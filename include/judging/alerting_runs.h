/*
 * judging/alerting_runs: the alerts about runs (docs/alerts.md "Where they
 * come from"): a run that failed, was interrupted or stalled, and recovered
 * from a stall; a run's regressions and improvements.
 *
 * Contract
 * - Run folders: the run tracker's events (jd_alerting_runs_event): an end
 *   with status failed or interrupted, a stall, new data or an end after a
 *   stall (run_recovered, only when run_stalled was raised for the run).
 * - Other runs: the `runs` end markers a source gives (jd_alerting_runs_tap,
 *   from the delivery's tap); the run tracker's own markers (source
 *   PS_RUN_MARKER_SOURCE) are left to its events, which come richer. Every
 *   marker's time is a run start for the clock (no_new_run).
 * - Verdicts: `perfship_verdict` points a source gives, gathered per run
 *   for a second so that one run's points make one event; the verdict
 *   stage's own verdicts of a run (jd_alerting_runs_judged), without stage
 *   drift. Each becomes at most one regression and one improvement event
 *   (jd_alerting_runs_verdicts).
 * - Events go to the raiser (alerting_raise.h), keyed by the run for
 *   min_interval_s; those about something found already over (a backfill,
 *   a stall found when the folder was first judged) are judged by age.
 * - jd_alerting_runs_finish() (--once, everything present read): what is
 *   gathered is raised now, and later verdict points at once.
 */
#ifndef PS_JUDGING_ALERTING_RUNS_H
#define PS_JUDGING_ALERTING_RUNS_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "alert/event.h"
#include "core/config.h"
#include "core/point.h"
#include "judging/alerting_clock.h"
#include "judging/alerting_raise.h"
#include "pipeline/runtracker.h"
#include "pipeline/shared.h"
#include "judging/verdicts.h"

/* One run's changed metrics, as the verdict stage judged them: every
 * metric carries its direction (ps_alert_metric.improvement). */
typedef struct jd_alert_verdicts {
  const char *source; /* as the runs markers write it: "loadgen", "dss_bench" */
  const char *series;
  const char *run;
  const char *revision; /* NULL when none */
  int64_t time_ns;      /* the verdict points' time */
  int backfill;         /* as on the run's markers */
  const ps_alert_metric *metrics;
  size_t nmetrics;
  const char *host; /* the run's host; NULL: the agent's own */
} jd_alert_verdicts;

typedef struct jd_verdict_group jd_verdict_group;

typedef struct jd_alerting_runs {
  pl_shared *sh;
  jd_alerting_raiser *raiser;
  jd_alerting_clock *clock;
  jd_verdict_group *groups; /* tapped verdict points, per run */
  uv_timer_t gather;
  int finished;      /* jd_alerting_runs_finish() ran */
  size_t explaining; /* regressions whose cause is being read back */
  struct explain_job *jobs; /* those, by their event's id */
  /* Is a run's slog still to be read or acknowledged (NULL: never)? A
   * regression's cause waits for the slogs of the runs it compares. */
  int (*slog_pending)(void *ctx, const char *run);
  void *slog_ctx;
} jd_alerting_runs;

void jd_alerting_runs_init(jd_alerting_runs *ar, pl_shared *sh, jd_alerting_raiser *raiser,
                           jd_alerting_clock *clock,
                           int (*slog_pending)(void *ctx, const char *run), void *slog_ctx);

void jd_alerting_runs_event(jd_alerting_runs *ar, const pl_run_event *ev);
/* Returns at once for measurements other than `runs` and `perfship_verdict`. */
/* The measurements jd_alerting_runs_tap() wants: `runs` markers and
 * `perfship_verdict` points. Fills up to `cap`; returns how many. */
size_t jd_alerting_runs_measurements(const char **out, size_t cap);
void jd_alerting_runs_tap(jd_alerting_runs *ar, const ps_point *p, const ps_source_cfg *src);
void jd_alerting_runs_verdicts(jd_alerting_runs *ar, const jd_alert_verdicts *v);
/* Those of a run's verdicts that are a regression or an improvement
 * become jd_alerting_runs_verdicts(). */
void jd_alerting_runs_judged(jd_alerting_runs *ar, const jd_run_verdicts *rv);

void jd_alerting_runs_finish(jd_alerting_runs *ar);
/* No verdict point waits to be gathered. */
int jd_alerting_runs_idle(const jd_alerting_runs *ar);
void jd_alerting_runs_close(jd_alerting_runs *ar);
void jd_alerting_runs_free(jd_alerting_runs *ar);

#endif
