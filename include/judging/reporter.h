/*
 * judging/reporter: keeps the report page (report.path, docs/report.md)
 * current while `perfship run` works.
 *
 * Contract
 * - jd_reporter_request() asks for a new page; the judging face
 *   (judging/judging.h) calls it when a run's verdicts were acknowledged
 *   and after a reload, and on each run event (jd_reporter_run_event: a
 *   run started, ended, stalled or resumed).
 *   Requests are merged: a page is written JD_REPORTER_SETTLE_MS after the
 *   first one (so a run's end and its verdicts make one page), and never
 *   sooner than report.min_interval_s after the previous page began; what
 *   is asked meanwhile is written once when the interval ends.
 * - Nothing happens while report.path is "" (read at each request, so a
 *   reload turns the page on or off).
 * - The page is made on libuv's threadpool, never on the loop (report/
 *   report.h blocks on the server for up to influxdb.timeout_ms per query),
 *   and replaced atomically; its outcome is logged on the loop, a failure
 *   as a warning and in the state's last errors through the hooks. The
 *   influxdb group is the sink's, which lives as long as the pipeline.
 * - Service mode writes a first page at start (jd_reporter_start). A
 *   --once run writes one page when it closes, after everything was
 *   acknowledged, whatever was asked. jd_reporter_close() stops the timer;
 *   a page being made is waited for by the loop, one merely asked for in
 *   service mode is left to the next start.
 */
#ifndef PS_JUDGING_REPORTER_H
#define PS_JUDGING_REPORTER_H

#include <stdint.h>
#include <uv.h>

#include "core/config.h"
#include "pipeline/runtracker.h"
#include "pipeline/shared.h"

#define JD_REPORTER_SETTLE_MS 3000

typedef struct jd_reporter_hooks {
  /* The agent's newest error line, for the page's health line; may be NULL. */
  const char *(*last_error)(void *ctx);
  /* A page could not be made or written: one sentence (for `status`). */
  void (*failed)(void *ctx, const char *why);
  void *ctx;
} jd_reporter_hooks;

typedef struct jd_reporter {
  pl_shared *sh;
  const ps_config *influx_cfg; /* its influxdb group: the sink's */
  jd_reporter_hooks hooks;
  uv_timer_t timer;
  int busy;               /* a page is being made on the threadpool */
  int pending;            /* asked for since the last page began */
  int closing;
  uint64_t last_start_ms; /* uv_now() when the last page began; 0: none yet */
  unsigned long written;  /* pages written */
} jd_reporter;

void jd_reporter_init(jd_reporter *r, pl_shared *sh, const ps_config *influx_cfg,
                      const jd_reporter_hooks *hooks);
void jd_reporter_start(jd_reporter *r);
void jd_reporter_request(jd_reporter *r, const char *why);
void jd_reporter_run_event(jd_reporter *r, const pl_run_event *ev);
void jd_reporter_close(jd_reporter *r);

#endif
