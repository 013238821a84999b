/*
 * net/http_loop.c: curl multi on libuv (include/net/http_loop.h).
 *
 * DESIGN
 * - This follows curl's docs/examples/multi-uv.c with its gaps closed:
 *   poll errors become CURL_CSELECT_ERR, sockets find their context through
 *   curl_multi_assign, finished transfers are always reaped (the last one
 *   may end on the timer, not on a socket), and every return is checked.
 * - Memory follows libuv's rules: a socket context is freed in its close
 *   callback, and the transport itself once every handle it closed is
 *   closed (`pending_closes`), so no libuv callback ever sees freed memory.
 * - A user callback may close the transport. Teardown must not run under
 *   the code that called the callback (it still walks curl's message queue
 *   or holds a socket context), so it waits until that code has unwound:
 *   `depth` counts our frames on the stack that may call user code, and
 *   the last one out tears down.
 * - curl_multi_socket_action is never called from inside a curl callback:
 *   a timeout of 0 is turned into a 1 ms timer.
 */
#include "net/http_loop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/log.h"

typedef struct sock_ctx {
  uv_poll_t poll;
  curl_socket_t fd;
  ps_http_loop *hl;
  bool closed; /* uv_close called; memory lives until its callback */
  struct sock_ctx *prev, *next;
} sock_ctx;

struct ps_http_loop {
  uv_loop_t *loop;
  CURLM *multi;
  uv_timer_t timer;
  sock_ctx *socks;
  ps_http_xfer *active;
  int depth;
  bool closing; /* ps_http_loop_close was called */
  bool torn;    /* teardown has started */
  int pending_closes;
  void (*closed)(void *arg);
  void *closed_arg;
};

static const char *MOD = "http";

static void teardown(ps_http_loop *hl);

static void leave(ps_http_loop *hl) {
  if (--hl->depth == 0 && hl->closing && !hl->torn)
    teardown(hl);
}

static void unlink_xfer(ps_http_loop *hl, ps_http_xfer *x) {
  if (x->prev)
    x->prev->next = x->next;
  else
    hl->active = x->next;
  if (x->next)
    x->next->prev = x->prev;
  x->prev = x->next = NULL;
}

/* Takes the transfer out of curl and of our list, then hands it back. */
static void finish(ps_http_loop *hl, ps_http_xfer *x, int status, CURLcode result) {
  if (curl_multi_remove_handle(hl->multi, x->easy) != CURLM_OK)
    PS_ERROR(MOD, "curl_multi_remove_handle failed");
  unlink_xfer(hl, x);
  x->cb(x, status, result);
}

static void reap(ps_http_loop *hl) {
  CURLMsg *m;
  int left;
  while (!hl->closing && (m = curl_multi_info_read(hl->multi, &left))) {
    if (m->msg != CURLMSG_DONE)
      continue;
    CURL *e = m->easy_handle;
    CURLcode res = m->data.result;
    ps_http_xfer *x = NULL;
    if (curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&x) != CURLE_OK || !x) {
      curl_multi_remove_handle(hl->multi, e);
      continue;
    }
    finish(hl, x, 0, res); /* m is invalid from here on */
  }
}

/* ---- sockets and the timer, as curl asks for them ----------------------- */

static void maybe_free(ps_http_loop *hl) {
  if (!hl->torn || hl->pending_closes)
    return;
  void (*closed)(void *) = hl->closed;
  void *arg = hl->closed_arg;
  free(hl);
  if (closed)
    closed(arg);
}

static void on_sock_closed(uv_handle_t *h) {
  sock_ctx *c = h->data;
  ps_http_loop *hl = c->hl;
  free(c);
  hl->pending_closes--;
  maybe_free(hl);
}

static void close_sock(ps_http_loop *hl, sock_ctx *c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    hl->socks = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->prev = c->next = NULL;
  c->closed = true;
  uv_poll_stop(&c->poll);
  hl->pending_closes++;
  uv_close((uv_handle_t *)&c->poll, on_sock_closed);
}

static void on_poll(uv_poll_t *h, int status, int events) {
  sock_ctx *c = h->data;
  ps_http_loop *hl = c->hl;
  int flags = 0;
  if (status < 0)
    flags = CURL_CSELECT_ERR;
  else {
    if (events & UV_READABLE)
      flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
      flags |= CURL_CSELECT_OUT;
  }
  int running;
  hl->depth++;
  CURLMcode mc = curl_multi_socket_action(hl->multi, c->fd, flags, &running);
  if (mc != CURLM_OK)
    PS_ERROR(MOD, "curl_multi_socket_action: %s", curl_multi_strerror(mc));
  reap(hl);
  leave(hl);
}

static int on_curl_socket(CURL *e, curl_socket_t fd, int what, void *userp,
                          void *socketp) {
  (void)e;
  ps_http_loop *hl = userp;
  sock_ctx *c = socketp;
  if (what == CURL_POLL_REMOVE) {
    if (c && !c->closed) {
      close_sock(hl, c);
      if (!hl->torn)
        curl_multi_assign(hl->multi, fd, NULL);
    }
    return 0;
  }
  if (!c) {
    c = calloc(1, sizeof *c);
    if (!c)
      return -1;
    if (uv_poll_init_socket(hl->loop, &c->poll, fd)) {
      free(c);
      return -1;
    }
    c->fd = fd;
    c->hl = hl;
    c->poll.data = c;
    c->next = hl->socks;
    if (hl->socks)
      hl->socks->prev = c;
    hl->socks = c;
    if (curl_multi_assign(hl->multi, fd, c) != CURLM_OK) {
      close_sock(hl, c);
      return -1;
    }
  }
  int ev = 0;
  if (what & CURL_POLL_IN)
    ev |= UV_READABLE;
  if (what & CURL_POLL_OUT)
    ev |= UV_WRITABLE;
  if (uv_poll_start(&c->poll, ev, on_poll))
    return -1;
  return 0;
}

static void on_timer_fired(uv_timer_t *t) {
  ps_http_loop *hl = t->data;
  int running;
  hl->depth++;
  CURLMcode mc = curl_multi_socket_action(hl->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  if (mc != CURLM_OK)
    PS_ERROR(MOD, "curl_multi_socket_action: %s", curl_multi_strerror(mc));
  reap(hl);
  leave(hl);
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp) {
  (void)multi;
  ps_http_loop *hl = userp;
  if (timeout_ms < 0)
    return uv_timer_stop(&hl->timer) ? -1 : 0;
  uint64_t ms = timeout_ms ? (uint64_t)timeout_ms : 1;
  return uv_timer_start(&hl->timer, on_timer_fired, ms, 0) ? -1 : 0;
}

/* ---- life cycle ---------------------------------------------------------- */

static void on_timer_closed(uv_handle_t *h) {
  ps_http_loop *hl = h->data;
  hl->pending_closes--;
  maybe_free(hl);
}

static void teardown(ps_http_loop *hl) {
  hl->torn = true;
  /* Callbacks may run user code that starts transfers (refused: closing)
   * or closes again (ignored); the list is re-read after each. */
  while (hl->active)
    finish(hl, hl->active, -ECANCELED, CURLE_ABORTED_BY_CALLBACK);
  /* curl may report its sockets as removed while it cleans up. */
  curl_multi_cleanup(hl->multi);
  hl->multi = NULL;
  while (hl->socks)
    close_sock(hl, hl->socks);
  hl->pending_closes++;
  uv_close((uv_handle_t *)&hl->timer, on_timer_closed);
}

int ps_http_loop_init(ps_http_loop **out, uv_loop_t *loop, long max_host_connections) {
  *out = NULL;
  ps_http_loop *hl = calloc(1, sizeof *hl);
  if (!hl)
    return -ENOMEM;
  hl->loop = loop;
  if (!(hl->multi = curl_multi_init())) {
    free(hl);
    return -ENOMEM;
  }
  if (curl_multi_setopt(hl->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket) ||
      curl_multi_setopt(hl->multi, CURLMOPT_SOCKETDATA, hl) ||
      curl_multi_setopt(hl->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer) ||
      curl_multi_setopt(hl->multi, CURLMOPT_TIMERDATA, hl) ||
      curl_multi_setopt(hl->multi, CURLMOPT_MAX_HOST_CONNECTIONS, max_host_connections)) {
    curl_multi_cleanup(hl->multi);
    free(hl);
    return -EINVAL;
  }
  /* Last: once the timer is on the loop, only a close can take it off. */
  int rc = uv_timer_init(loop, &hl->timer);
  if (rc) {
    curl_multi_cleanup(hl->multi);
    free(hl);
    return rc;
  }
  hl->timer.data = hl;
  *out = hl;
  return 0;
}

int ps_http_xfer_start(ps_http_loop *hl, ps_http_xfer *x, CURL *easy, ps_http_xfer_cb cb) {
  if (!hl || !x || !easy || !cb)
    return -EINVAL;
  if (hl->closing)
    return -ECANCELED;
  x->easy = easy;
  x->cb = cb;
  x->hl = hl;
  if (curl_easy_setopt(easy, CURLOPT_PRIVATE, x) != CURLE_OK)
    return -EINVAL;
  if (curl_multi_add_handle(hl->multi, easy) != CURLM_OK)
    return -EIO;
  x->prev = NULL;
  x->next = hl->active;
  if (hl->active)
    hl->active->prev = x;
  hl->active = x;
  return 0;
}

void ps_http_loop_close(ps_http_loop *hl, void (*closed)(void *arg), void *arg) {
  if (!hl || hl->closing)
    return;
  hl->closing = true;
  hl->closed = closed;
  hl->closed_arg = arg;
  if (!hl->depth)
    teardown(hl);
}
