/*
 * sink: ships batches of line protocol (influx/batch.h) to InfluxDB over
 * HTTP, on the agent's libuv loop: its own connections for plain http
 * (net/http_conn.h), curl for the rest (net/http_loop.h). The blocking calls of
 * one-shot commands are in influx/client.h; both set up their requests
 * through influx/endpoint.h.
 *
 * Contract
 * - ps_sink_submit() takes a batch and keeps it until the done callback has
 *   been called for it; the caller must not touch the batch meanwhile (the
 *   body is sent from where it is, not copied). A submit that fails returns a negative errno
 *   and never calls the callback (libuv's rule).
 * - The sink never drops data on its own: 5xx, timeouts, refused or reset
 *   connections, 429/503 (Retry-After honoured) and 401/403/404 (logged
 *   loudly once a minute) are retried until the server takes the batch. The
 *   done callback fires exactly once per batch, when every line is either
 *   stored or rejected by the server as bad data.
 * - 400/422 partial write: the good lines are stored by the server; the sink
 *   rejects the lines the server names (1.x names every line it could not
 *   parse) and finds any others by bisecting what remains uncertain, reports
 *   each with its origin through on_reject, and counts them in `rejected` of
 *   the done callback.
 * - 413: the batch is split in halves and resent; a single line still too
 *   large is rejected like a bad line. A 413 for a body no larger than one
 *   the server has taken is retried instead, three times per piece, before
 *   it is believed (the limit may have been lowered).
 * - A body is gzip-compressed per influxdb.gzip ("auto": not on loopback).
 * - Precision is always nanoseconds, spelled per API (v1 "n", v2 "ns").
 * - ps_sink_close() aborts transfers in flight (their batches get the done
 *   callback with status -ECANCELED, not acknowledged) and calls `closed`
 *   once every handle is closed; the loop can then be closed.
 */
#ifndef PS_INFLUX_SINK_H
#define PS_INFLUX_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/config.h"
#include "core/emit.h"
#include "influx/batch.h"

typedef struct ps_sink ps_sink;

/* status 0: every line stored or rejected (rejected counts the latter);
 * -ECANCELED: the sink was closed first (nothing may be committed). */
typedef void (*ps_sink_done_cb)(ps_sink *sink, ps_batch *batch, int status,
                                size_t rejected);
typedef void (*ps_sink_reject_cb)(ps_sink *sink, const ps_origin *origin,
                                  const char *line, size_t len,
                                  const char *reason);

typedef struct ps_sink_stats {
  uint64_t batches_sent;
  uint64_t points_written;
  uint64_t points_rejected;
  uint64_t http_retries;
  uint64_t bytes_sent;
  /* uv_now() of the first failed attempt since the server last answered
   * anything (a monotonic ms timestamp), 0 while it answers */
  uint64_t unreachable_since_ms;
} ps_sink_stats;

int ps_sink_init(ps_sink **out, uv_loop_t *loop, const ps_config *cfg,
                 ps_sink_done_cb done, ps_sink_reject_cb on_reject,
                 void *data);
int ps_sink_submit(ps_sink *sink, ps_batch *batch);
size_t ps_sink_in_flight(const ps_sink *sink);
void *ps_sink_data(const ps_sink *sink);
const ps_sink_stats *ps_sink_get_stats(const ps_sink *sink);
void ps_sink_close(ps_sink *sink, void (*closed)(void *arg), void *arg);
/* hold != 0: queued batches wait (no request starts) until released, e.g.
 * while CREATE DATABASE runs at start. Accepts NULL. */
void ps_sink_hold(ps_sink *sink, int hold);
/* Called (with the sink's data) when a v1 write with create_database on is
 * answered 404 "database not found"; the write itself is retried as usual. */
void ps_sink_on_missing_database(ps_sink *sink, void (*cb)(ps_sink *sink, void *data));

/* The server's trouble as an operator asks about it (`perfship status`):
 * what the last failed attempt got and since when the writes fail. An
 * episode begins with a failed attempt (any answer kept for a retry, or
 * no answer) and ends with an answer that shows the server works (2xx, or
 * a judgement of the data: a rejected line, 413). */
typedef struct ps_sink_trouble {
  long status;    /* HTTP status of the last failed attempt; 0: no answer */
  char text[256]; /* the server's message, or what failed; one line */
  int64_t since_s; /* unix time of the episode's first failure; 0: none now */
} ps_sink_trouble;

const ps_sink_trouble *ps_sink_get_trouble(const ps_sink *sink);
/* Called (with the sink's data) when an episode begins, when its status
 * changes, and when it ends (since_s 0 then); not for every retry. */
void ps_sink_on_trouble(ps_sink *sink, void (*cb)(ps_sink *sink, void *data));

#endif
