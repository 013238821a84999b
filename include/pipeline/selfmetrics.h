/*
 * pipeline/selfmetrics: what the agent says about itself: the self-metrics
 * point, the progress of a --once run, and the summary at every stop.
 *
 * Contract
 * - Self-metrics (`perfship` measurement, docs/schema.md) go every
 *   selfstats.interval_ms as an aux batch; an interval is skipped while the
 *   previous point is in flight, so an outage of hours holds one such point,
 *   not thousands. pl_selfmetrics_send() returns 0 when a point was sent.
 *   The point itself is pipeline/selfmetrics_point.h; `selfstats` is the
 *   configuration's name for both.
 * - --once is how a backlog (a year of run folders) is ingested, so it
 *   reports progress: on a terminal a status line redrawn a few times a
 *   second, otherwise (journal, CI log) an info line every 10 s, so a log
 *   shows progress without filling up.
 * - pl_selfmetrics_summary() logs one line at every stop: files, run folders,
 *   points written, rejected, time and rate, with a verb that says how the
 *   run ended.
 */
#ifndef PS_PIPELINE_SELFMETRICS_H
#define PS_PIPELINE_SELFMETRICS_H

#include <uv.h>

#include "pipeline/delivery.h"
#include "pipeline/registry.h"
#include "pipeline/runtracker.h"
#include "pipeline/shared.h"

typedef struct pl_selfmetrics {
  pl_shared *sh;
  pl_registry *reg;
  pl_delivery *dl;
  pl_runs *runs;
  uv_timer_t stats_timer, progress_timer;
  int selfstats_in_flight;
  int progress_tty; /* stderr is a terminal: a redrawn status line */
} pl_selfmetrics;

void pl_selfmetrics_init(pl_selfmetrics *rp, pl_shared *sh, pl_registry *reg, pl_delivery *dl,
                    pl_runs *runs);
/* Starts the self-metrics timer (interval 0: off) or, in --once, the
 * progress line. Called again after a reload. */
void pl_selfmetrics_start(pl_selfmetrics *rp);
int pl_selfmetrics_send(pl_selfmetrics *rp);
void pl_selfmetrics_stop(pl_selfmetrics *rp);
/* verb: "done", "stopped", "gave up"; warn: some input was rejected. */
void pl_selfmetrics_summary(pl_selfmetrics *rp, const char *verb, int warn);
void pl_selfmetrics_close(pl_selfmetrics *rp);

#endif
