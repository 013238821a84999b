/*
 * readback/query: asking InfluxDB one InfluxQL request and deciding what
 * its answer means; blocking, or on libuv's threadpool for the agent.
 *
 * Contract
 * - ps_rb_query() sends `influxql` (built with readback/statement.h) with
 *   influx/client.h's ps_influx_query_post() and blocks for up to
 *   influxdb.timeout_ms: call it from a command or the threadpool. On
 *   success appends the server's JSON to `json` (read it with
 *   readback/answer.h). Otherwise one code, with one sentence in `err`
 *   (may be NULL) saying what happened and what to do, never a password or
 *   token: -EIO the server could not be reached; -EACCES it refused the
 *   credentials (401/403); -ENOENT it says the database does not exist
 *   (`err` names it and, for v2, how to map the bucket). That is an error
 *   for every reader: only an agent that just created the database may
 *   read it as "nothing yet"; -EOPNOTSUPP no InfluxQL here (a 404, or
 *   VictoriaMetrics' canned database list) or a statement the server does
 *   not support (InfluxDB 3 lacks some); -E2BIG the answer is over
 *   PS_INFLUX_QUERY_MAX_BYTES or the server refused a query over too many
 *   files (InfluxDB 3): ask for less; -EPROTO any other error, with the
 *   server's text.
 * - ps_rb_error_of() is that mapping of a server's answer: its HTTP status
 *   and the text of its first InfluxQL error (may be NULL) to the code.
 * - ps_rb_run() runs ps_rb_query() on the loop's threadpool and calls
 *   `done` on the loop with the code, the answer (never NULL; "" on
 *   failure) and the sentence (NULL when none); -ECANCELED when the loop
 *   cancelled the work. `cfg` is copied shallowly: its strings must
 *   outlive the call (the agent's configuration does). Returns 0, or a
 *   negative code when nothing was queued, and then `done` is never
 *   called (as libuv does).
 * - ps_rb_run_reads() is the same runner for a reader that asks several
 *   statements in one go (a run's cause, its slog figures, the report
 *   page made from its reads), and the agent's one runner of blocking
 *   requests (its CREATE DATABASE, pipeline/createdb, blocks in the
 *   client's own request): `reads(arg)`
 *   runs on the threadpool (it blocks in ps_rb_query() and may wait
 *   between tries), then `done(arg, rc)` on the loop with what `reads`
 *   returned, or -ECANCELED. Returns 0, or a negative code when nothing
 *   was queued, and then `done` is never called.
 */
#ifndef PS_READBACK_QUERY_H
#define PS_READBACK_QUERY_H

#include <stddef.h>

#include <uv.h>

#include "core/buf.h"
#include "core/config.h"

int ps_rb_query(const ps_config *cfg, const char *influxql, ps_buf *json, ps_buf *err);
int ps_rb_error_of(long http_status, const char *server_text);

typedef void (*ps_rb_done_fn)(void *arg, int rc, const char *json, size_t len, const char *err);
int ps_rb_run(uv_loop_t *loop, const ps_config *cfg, const char *influxql, ps_rb_done_fn done,
              void *arg);

typedef int (*ps_rb_reads_fn)(void *arg);
typedef void (*ps_rb_reads_done_fn)(void *arg, int rc);
int ps_rb_run_reads(uv_loop_t *loop, ps_rb_reads_fn reads, ps_rb_reads_done_fn done, void *arg);

#endif
