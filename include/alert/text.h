/*
 * alert/text: the one line a person reads for each event (docs/alerts.md
 * "What the texts say").
 *
 * Contract
 * - Each function appends one line (no newline) to `out` and returns 0 or
 *   -ENOMEM. Strings from the data (run names, docker.log lines, paths)
 *   are copied as they are: the channels escape them for their format.
 * - Run texts follow the run's end marker (docs/schema.md "runs"), with the
 *   verb first: "daily-perf-ba4674aa5495 failed after 37m37s (exit code 2):
 *   Error: Loadgen vault task 25 failed".
 */
#ifndef PS_ALERT_TEXT_H
#define PS_ALERT_TEXT_H

#include <stdint.h>

#include "alert/event.h"
#include "core/buf.h"
#include "runs/runs.h"

/* run_failed, run_interrupted, run_stalled and run_recovered of a loadgen
 * run as judged in `v` (recovered: `v` running again, or ended). */
int ps_alert_text_run(ps_buf *out, ps_alert_kind kind, const ps_run_view *v);
/* regression / improvement: the run, its series and each metric of `ev`. */
int ps_alert_text_verdict(ps_buf *out, const ps_alert_event *ev);
/* no_new_run: `what` names the runs ("loadgen"), `path` the source;
 * last_start_s 0 when no run is known, then watching_since_s is said. */
int ps_alert_text_no_new_run(ps_buf *out, const char *what, const char *path,
                             int64_t silent_s, int64_t last_start_s,
                             int64_t watching_since_s);
/* agent_unhealthy / agent_recovered for the server at `url` (a URL without
 * credentials: the loader refuses those). */
int ps_alert_text_server(ps_buf *out, const char *url, int64_t for_s, int recovered,
                         uint64_t waiting);
/* agent_unhealthy for rejected input: how many, and the last message. */
int ps_alert_text_rejected(ps_buf *out, uint64_t count, const char *last_error);

#endif
