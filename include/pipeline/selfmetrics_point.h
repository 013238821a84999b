/*
 * pipeline/selfmetrics_point: the agent's own `perfship` measurement
 * (docs/schema.md "The agent itself").
 *
 * Contract
 * - ps_selfmetrics_encode() appends one line of line protocol for the
 *   counters in `s`, every field an integer, tagged `host` (the global tag
 *   when the configuration sets one, else the machine's host name), at
 *   `time_ns` (the agent's clock: the one exception to "time from the data").
 * - The self-metrics stage (pipeline/selfmetrics.h) sends it every
 *   selfstats.interval_ms through the same sink, outside the checkpoint
 *   machinery (there is no file offset to commit), and skips an interval while the previous one is still in flight, so an
 *   outage of hours holds one such point, not thousands.
 */
#ifndef PS_PIPELINE_SELFMETRICS_POINT_H
#define PS_PIPELINE_SELFMETRICS_POINT_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/point.h"

typedef struct ps_selfmetrics_counts {
  uint64_t lines_read;
  uint64_t records_parsed;
  uint64_t records_rejected;
  uint64_t points_written;
  uint64_t points_rejected;
  uint64_t batches_sent;
  uint64_t http_retries;
  uint64_t bytes_sent;
  uint64_t pending_points;
  uint64_t files_watched;
  uint64_t oldest_unacked_s;
  uint64_t uptime_s;
  uint64_t alerts_raised;     /* docs/alerts.md */
  uint64_t alerts_suppressed;
  uint64_t alerts_failed;
  uint64_t alerts_pending;
} ps_selfmetrics_counts;

int ps_selfmetrics_encode(ps_buf *out, const ps_selfmetrics_counts *s, int64_t time_ns,
                        const ps_tag *extra, size_t nextra, const char **reason);

#endif
