/*
 * net/http_loop: libcurl's multi interface driven by a libuv loop. The
 * transport under the InfluxDB sink (influx/sink.h) and under any other
 * request the agent makes while it runs (net/http_request.h).
 *
 * Contract
 * - ps_http_loop_init() makes a transport on `loop`: one curl multi handle
 *   (its connection cache keeps connections alive between requests; at
 *   most `max_host_connections` to one host, 0 for no limit), one uv_poll
 *   per socket curl opens and one uv timer. Returns 0 or a negative errno
 *   (then nothing is left on the loop).
 * - ps_http_xfer_start() runs an easy handle the caller has set up. The
 *   transport uses the handle's CURLOPT_PRIVATE; the caller must not. The
 *   ps_http_xfer is the caller's and must stay valid until its callback,
 *   which is called exactly once: with status 0 and curl's result when the
 *   transfer is over (whatever the HTTP status), or with -ECANCELED (and
 *   CURLE_ABORTED_BY_CALLBACK) when the transport is closed first. The easy
 *   handle has left the multi handle by then: the callback may reuse or
 *   clean it up. A start that fails returns a negative errno and never
 *   calls back (-ECANCELED once the transport is closing).
 * - Callbacks are called from the loop, never from inside
 *   ps_http_xfer_start(). A callback may start transfers and may close the
 *   transport.
 * - ps_http_loop_close() cancels the transfers still running (their
 *   callbacks are called before it returns or, when it is called from
 *   inside a callback, once that callback has returned), closes every
 *   handle, frees the transport and then calls `closed` (may be NULL) from
 *   the loop. After that the uv loop can be closed. A second close is
 *   ignored; NULL is accepted.
 */
#ifndef PS_NET_HTTP_LOOP_H
#define PS_NET_HTTP_LOOP_H

#include <curl/curl.h>
#include <uv.h>

typedef struct ps_http_loop ps_http_loop;
typedef struct ps_http_xfer ps_http_xfer;

typedef void (*ps_http_xfer_cb)(ps_http_xfer *x, int status, CURLcode result);

struct ps_http_xfer {
  CURL *easy; /* set by ps_http_xfer_start */
  void *data; /* the caller's */
  /* private */
  ps_http_xfer_cb cb;
  ps_http_loop *hl;
  ps_http_xfer *prev, *next;
};

int ps_http_loop_init(ps_http_loop **out, uv_loop_t *loop, long max_host_connections);
int ps_http_xfer_start(ps_http_loop *hl, ps_http_xfer *x, CURL *easy, ps_http_xfer_cb cb);
void ps_http_loop_close(ps_http_loop *hl, void (*closed)(void *arg), void *arg);

#endif
