/*
 * influx_admin: blocking one-request calls to InfluxDB outside the write
 * path, for the one-shot commands (check, mark) and for the pipeline at start.
 *
 * Contract
 * - Each call makes one HTTP request with the configuration's URL, TLS
 *   options, timeout and credentials (v1: HTTP Basic auth, never u/p in the
 *   URL; v2: "Authorization: Token"), and blocks until it is answered.
 * - Return values: 0 success; -EIO the server could not be reached (refused,
 *   reset, timeout, DNS); -EACCES it refused the credentials (401/403);
 *   -EPROTO any other answer. `err` (may be NULL) gets one sentence saying
 *   what happened and what to do; it never holds a password or token (any
 *   server text is scrubbed of them).
 * - ps_influx_ping(): GET /ping, success on 2xx; `version` (may be NULL) gets
 *   the X-Influxdb-Version header when the server sends one.
 * - ps_influx_create_database(): v1 only: POST /query?q=CREATE DATABASE "db"
 *   (idempotent on the server). An InfluxQL error in the answer (e.g. the
 *   user lacks admin rights) is -EACCES or -EPROTO with the server's text.
 * - curl_global_init() must have been called (main.c does).
 */
#ifndef PS_INFLUX_ADMIN_H
#define PS_INFLUX_ADMIN_H

#include "core/buf.h"
#include "core/config.h"

int ps_influx_ping(const ps_config *cfg, ps_buf *version, ps_buf *err);
int ps_influx_create_database(const ps_config *cfg, ps_buf *err);

/* Appends `text` to `out` with every occurrence of the configured password
 * and token replaced by "***", so server answers can be shown safely. */
void ps_influx_redact(const ps_config *cfg, const char *text, size_t len, ps_buf *out);

/* A server answer as one line for a message: the "error" member when the
 * body is InfluxDB's JSON, else the body; redacted like ps_influx_redact. */
void ps_influx_answer_text(const ps_config *cfg, const char *body, size_t len,
                          ps_buf *out);

/* What to do about a failed TLS verification (curl result `curl_code`,
 * curl's error buffer `detail`): "" for any other failure. curl's own
 * text for it ("SSL peer certificate ... was not OK") says neither. */
const char *ps_influx_tls_hint(int curl_code, const char *detail);

#endif
