/*
 * influx/client: blocking one-request calls to InfluxDB, for the one-shot
 * commands (check, mark), the read-back layer (readback/) and work the
 * agent runs on libuv's threadpool (never on the loop: they block for up
 * to influxdb.timeout_ms).
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
 * - ps_influx_query_post(): POSTs `influxql` to /query (a form, so the
 *   query is never in a URL): v1 with `db`, `rp` when set, `epoch=ns` and
 *   HTTP Basic auth; v2 and later through their v1-compatible /query with
 *   the token and `db` = the bucket (`db/rp` as db and rp:
 *   influx/endpoint.h). 0 when the server answered, whatever it answered:
 *   `r` holds the status, the body (at most PS_INFLUX_QUERY_MAX_BYTES;
 *   `truncated` when there was more) and the URL asked; -EIO (with `err`
 *   said) when nothing answered. What an answer means is decided by the
 *   read-back layer (readback/query.h), the one caller;
 *   ps_influx_reply_free() frees `r` in every case.
 * - Each thread keeps one curl handle between calls (its connection is
 *   reused); ps_influx_client_release() frees every thread's, once no call
 *   is in flight: at exit, before curl_global_cleanup(). A thread that
 *   calls again afterwards would use a freed handle: call it last.
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
typedef struct ps_influx_reply {
  long status;
  int truncated;
  ps_buf body, url;
} ps_influx_reply;

int ps_influx_query_post(const ps_config *cfg, const char *influxql, ps_influx_reply *r,
                         ps_buf *err);
void ps_influx_reply_free(ps_influx_reply *r);
void ps_influx_client_release(void);

#endif
