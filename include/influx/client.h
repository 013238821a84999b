/*
 * influx/client: blocking one-request calls to InfluxDB, for the one-shot
 * commands (check, mark, verdicts) and for work the agent runs on libuv's
 * threadpool (never on the loop: they block for up to influxdb.timeout_ms).
 *
 * Contract
 * - Each call makes one HTTP request with the configuration's URL, TLS
 *   options, timeout and credentials as influx/endpoint.h sets them up, the
 *   same way the sink does, and blocks until it is answered.
 * - Return values: 0 success; -EIO the server could not be reached
 *   (refused, reset, timeout, DNS, TLS); -EACCES it refused the credentials
 *   (401/403); -EPROTO any other answer. `err` (may be NULL) gets one
 *   sentence saying what happened and what to do; it never holds a password
 *   or token (server text is scrubbed of them).
 * - ps_influx_ping(): GET /ping, success on 2xx; `version` (may be NULL)
 *   gets the X-Influxdb-Version header when the server sends one.
 * - ps_influx_create_database(): v1 only: CREATE DATABASE "db" (idempotent
 *   on the server). An InfluxQL error in the answer (e.g. the user lacks
 *   admin rights) is -EACCES or -EPROTO with the server's text.
 * - ps_influx_write_sync(): POSTs `body` (line protocol) to the write URL.
 *   0 when the server answered, whatever it answered: *http_status says
 *   what, `answer` (may be NULL) gets its body. -EIO when nothing answered;
 *   `answer` then gets curl's words and, for a TLS failure, what to do.
 * - ps_influx_query(): runs InfluxQL over /query (a POST form, so the query
 *   is never in a URL): v1 with `db`, `rp` when set, `epoch=ns` and HTTP
 *   Basic auth; v2 and later through their v1-compatible /query with the
 *   token and `db` = the bucket (`db/rp` as db and rp: influx/endpoint.h).
 *   On success appends the server's JSON to `json`
 *   ({"results":[{"statement_id":0,"series":[...]}]}; times are integer
 *   nanoseconds). Besides the codes above: -ENOENT the server says the
 *   database does not exist, with `err` naming the database and what to do
 *   (for v2: map the bucket to a database and retention policy). It is an
 *   error for every reader: only an agent that just created the database
 *   itself may read it as "nothing yet";
 *   -EOPNOTSUPP the server has no InfluxQL endpoint (VictoriaMetrics answers
 *   every /query with a canned database list; others 404); -E2BIG the
 *   answer is over PS_INFLUX_QUERY_MAX_BYTES (ask for less). An InfluxQL
 *   error of any statement is -EPROTO with the server's text in `err`.
 *   Build `influxql` with influx/influxql.h's quoting for anything taken
 *   from data.
 * - curl_global_init() must have been called (main.c does).
 */
#ifndef PS_INFLUX_CLIENT_H
#define PS_INFLUX_CLIENT_H

#include <stddef.h>

#include "core/buf.h"
#include "core/config.h"

#define PS_INFLUX_QUERY_MAX_BYTES (64u * 1024 * 1024)

int ps_influx_ping(const ps_config *cfg, ps_buf *version, ps_buf *err);
int ps_influx_create_database(const ps_config *cfg, ps_buf *err);
int ps_influx_write_sync(const ps_config *cfg, const char *body, size_t len,
                         long *http_status, ps_buf *answer);
int ps_influx_query(const ps_config *cfg, const char *influxql, ps_buf *json,
                    ps_buf *err);

#endif
