/*
 * service: `perfship run`, on one libuv loop.
 *
 * Contract
 * - sources -> watch -> reader (lines, or whole documents) -> format parser
 *   -> delivery (ps_lp_encode, global tags added -> batch -> sink) -> ack ->
 *   commit (state file); beside it the judges (verdicts, alerts, the report
 *   page). The data path's stages are files of their own under
 *   agent/pipeline/, the judges' under agent/judging/ (docs/architecture.md);
 *   the service wires both, and this is its whole face to the rest of the
 *   program.
 * - An offset (or a document's content hash) is written to the state file
 *   only when every point read before it is acknowledged (influx/batch.h), so a
 *   kill -9 at any moment loses nothing and a restart re-sends at most the
 *   unacknowledged tail.
 * - Back-pressure: while max_pending_bytes are in flight, reading stops
 *   (parsers get -EAGAIN, core/emit.h) and resumes as batches are acknowledged;
 *   nothing is dropped and memory stays bounded.
 * - `once`: ingest what exists now (documents without waiting to settle),
 *   wait for every acknowledgement, then stop. ps_service_run() returns the
 *   exit code: 0; 65 when some input was rejected (a record, a point, an
 *   over-long line); 69 when the server stayed unreachable past
 *   influxdb.unreachable_deadline_s, or when an alert event could not be
 *   delivered (once only; judging/alerting.h); 75 when another agent holds
 *   the state directory; 78 for a configuration problem found at start.
 *   While it runs it reports progress on stderr (a status line redrawn in
 *   place on a terminal, else an info line every 10 s); it ends with one
 *   summary line (as does every stop) and, once everything else is
 *   acknowledged, one last self-metrics point.
 * - SIGTERM/SIGINT: stop reading, flush, wait (bounded) for batches in
 *   flight, commit, exit 0. SIGHUP: reread the configuration (sources,
 *   batch, watch, selfstats, tags, log level; influxdb settings need a
 *   restart) and reopen the log (stderr: nothing to reopen). In `once`,
 *   SIGHUP is logged and otherwise ignored.
 * - Files: identity, not name (input/tail.h). A truncated or rewritten file is
 *   read again from 0; a renamed or deleted one is drained from its open
 *   descriptor first; a fully acknowledged file idle for two rescans closes
 *   its descriptor and is reopened, identity checked, when it changes.
 *   Documents (formats/format.h) are read once settled (watch.settle_ms) and sent
 *   only when their content hash differs from the acknowledged one.
 * - Loadgen run folders (runs/runs.h, pipeline/runtracker.h) are evaluated when anything in them
 *   changes, on every rescan (stall detection) and at the end of --once;
 *   markers are sent outside the checkpoints and remembered once acked.
 * - Alerts (judging/alerting.h, docs/alerts.md): the agent's own events
 *   go to the configured channels and as perfship_alert points; --once
 *   delivers the events it raised before it exits.
 * - The loop sleeps when there is nothing to do: the only timers are the
 *   rescan, the flush of a non-empty batch, settling documents, the state
 *   save after an acknowledgement, run evaluations and the self-metrics.
 */
#ifndef PS_SERVICE_SERVICE_H
#define PS_SERVICE_SERVICE_H

#include "core/config.h"

typedef struct ps_service_opts {
  int once;
} ps_service_opts;

int ps_service_run(ps_config *cfg, const ps_service_opts *opts);

#endif
