/*
 * net/http_conn: one keep-alive HTTP/1.1 connection of the agent's own on
 * a libuv loop, for requests whose bodies are large and many (the sink's
 * writes). The request goes out as the caller's buffers, with no copy in
 * user space; the answer is read by net/http_reply.h. Anything curl would
 * do differently (TLS, a proxy, credentials in the URL) is not taken:
 * ps_http_target_parse() says when this connection may serve a URL, and
 * the caller uses curl (net/http_loop.h) otherwise.
 *
 * Contract
 * - ps_http_target_parse(): 1 when `url` is plain http:// with no user
 *   name or password in it and no proxy variable of curl's is set
 *   (http_proxy, all_proxy, ALL_PROXY), with `t` filled (free it with
 *   ps_http_target_free); 0 when curl must serve it (t is empty); -ENOMEM.
 * - ps_http_url_is_loopback(): whether a URL names this machine (the
 *   sink's gzip "auto" is off there).
 * - ps_http_conn_init(): a connection to t's host, not yet open (it opens
 *   on the first request and again after any failure, resolving the name
 *   each time). `connect_timeout_ms` bounds connecting, `timeout_ms` the
 *   whole request; both > 0. 0 or a negative errno. The target is copied.
 * - ps_http_conn_send(): sends `nbufs` (at most PS_HTTP_CONN_BUFS) buffers
 *   as one request, the caller's head and body as they are, and reads the
 *   answer, keeping at most `limit` bytes of its body in `answer`. The
 *   buffers must stay valid until the callback, which is called exactly
 *   once, from the loop: with 0 when an answer was read (whatever its
 *   status; ps_http_conn_reply() has it), or a negative errno
 *   (-ETIMEDOUT, -ECONNREFUSED, -ECONNRESET, -EPROTO, ...) with
 *   ps_http_conn_error() saying what happened in one line, or -ECANCELED
 *   when the connection is closed first. One request at a time: -EBUSY
 *   otherwise. A send that fails returns a negative errno and never calls
 *   back.
 * - A request on a connection kept alive from an earlier one, which the
 *   server closes before a byte of answer, is sent once more on a new
 *   connection: the server had dropped the idle connection. Resending is
 *   the caller's choice to allow; the sink's writes are idempotent.
 * - ps_http_conn_close(): a request in flight is called back with
 *   -ECANCELED (before this returns); the memory is freed once libuv has
 *   let go, then `closed` (may be NULL) is called from the loop. May be
 *   called from the callback. NULL is accepted.
 */
#ifndef PS_NET_HTTP_CONN_H
#define PS_NET_HTTP_CONN_H

#include <uv.h>

#include "core/buf.h"
#include "net/http_reply.h"

#define PS_HTTP_CONN_BUFS 4

typedef struct ps_http_target {
  char *host;      /* as getaddrinfo takes it (no brackets) */
  char *port;      /* decimal */
  char *authority; /* the Host header's value */
  char *path;      /* the path and query, from its "/" */
} ps_http_target;

int ps_http_target_parse(const char *url, ps_http_target *t);
void ps_http_target_free(ps_http_target *t);
/* 1 when the URL's host is this machine (localhost, 127.0.0.0/8, ::1),
 * whatever its scheme; 0 otherwise or when it does not parse. */
int ps_http_url_is_loopback(const char *url);

typedef struct ps_http_conn ps_http_conn;
typedef void (*ps_http_conn_cb)(ps_http_conn *c, int status, void *data);

int ps_http_conn_init(ps_http_conn **out, uv_loop_t *loop, const ps_http_target *t,
                      long connect_timeout_ms, long timeout_ms);
int ps_http_conn_send(ps_http_conn *c, const uv_buf_t *bufs, unsigned nbufs, ps_buf *answer,
                      size_t limit, ps_http_conn_cb cb, void *data);
const ps_http_reply *ps_http_conn_reply(const ps_http_conn *c);
const char *ps_http_conn_error(const ps_http_conn *c);
void ps_http_conn_close(ps_http_conn *c, void (*closed)(void *arg), void *arg);

#endif
