/*
 * net/http_conn.c: the agent's own keep-alive HTTP/1.1 connection
 * (include/net/http_conn.h).
 *
 * DESIGN
 * - Why not curl for this: curl moves a POST body through its upload
 *   buffer, one memcpy of every byte the agent ships, and parses every
 *   answer's headers with machinery meant for any protocol. For the sink's
 *   writes (a megabyte body, a 204 back) libuv writes the caller's buffers
 *   with writev straight from where the batcher built them
 *   (docs/benchmarks.md, "Eleventh pass").
 * - One TCP connection at a time, a `link`: its own allocation, freed in
 *   its close callback, because libuv calls the connect, write and read
 *   callbacks of a closing handle (cancelled) before that. A link whose
 *   request is over or failed is dropped: its `owner` is cleared and every
 *   late callback sees that and does nothing. Name resolution is the same:
 *   a `resolving` request outlives the connection that gave up on it.
 * - An idle link keeps reading: a server that closes an idle connection is
 *   seen then, and the next request connects afresh instead of finding a
 *   dead socket. The race that is left (the close and the request cross)
 *   is what the one resend is for.
 * - A callback may close the connection or send again: teardown waits
 *   until our frames that called it have unwound (`depth`), as
 *   net/http_loop.c does.
 * - SIGPIPE is ignored once: libuv writes with writev, and a server that
 *   closed the socket must be an error to read, not the end of the agent.
 */
#include "net/http_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#define READ_CHUNK (16 * 1024)

typedef struct conn_link {
  uv_tcp_t tcp;
  uv_connect_t connect_req;
  uv_write_t write_req;
  ps_http_conn *owner; /* NULL once dropped */
  bool connected;
  bool served; /* has answered a request: may have gone stale since */
  char rbuf[READ_CHUNK];
} conn_link;

typedef struct resolving {
  uv_getaddrinfo_t req;
  ps_http_conn *owner; /* NULL once given up */
} resolving;

struct ps_http_conn {
  uv_loop_t *loop;
  ps_http_target t;
  long connect_timeout_ms, timeout_ms;
  uv_timer_t timer;
  conn_link *link;
  resolving *res;
  struct addrinfo *addrs, *next_addr;
  int last_connect_error;
  /* the request in flight */
  bool busy;
  bool write_done;
  bool resent;
  uint64_t deadline;
  uv_buf_t bufs[PS_HTTP_CONN_BUFS];
  unsigned nbufs;
  ps_http_reply reply;
  ps_http_conn_cb cb;
  void *data;
  char err[320];
  /* life cycle */
  int depth;
  bool closing, torn;
  void (*closed)(void *arg);
  void *closed_arg;
};

/* ---- targets ------------------------------------------------------------- */

static bool proxy_set(void) {
  /* curl takes http_proxy only in lower case, for http:// (HTTP_PROXY may
   * come from a CGI request's "Proxy:" header). */
  const char *names[] = {"http_proxy", "all_proxy", "ALL_PROXY"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    const char *v = getenv(names[i]);
    if (v && v[0])
      return true;
  }
  return false;
}

void ps_http_target_free(ps_http_target *t) {
  free(t->host);
  free(t->port);
  free(t->authority);
  free(t->path);
  memset(t, 0, sizeof *t);
}

static char *part(CURLU *u, CURLUPart what, unsigned flags) {
  char *v = NULL;
  if (curl_url_get(u, what, &v, flags) != CURLUE_OK)
    return NULL;
  char *own = strdup(v);
  curl_free(v);
  return own;
}

/* The URL's host, malloc'ed (NULL when none); an IPv6 address without
 * its brackets when `bare`, as getaddrinfo and inet_pton take it. */
static char *host_of(CURLU *u, bool bare) {
  char *h = part(u, CURLUPART_HOST, 0);
  size_t n = h ? strlen(h) : 0;
  if (bare && n > 2 && h[0] == '[' && h[n - 1] == ']') {
    memmove(h, h + 1, n - 2);
    h[n - 2] = '\0';
  }
  return h;
}

/* a, b and c end to end, malloc'ed. */
static char *joined(const char *a, const char *b, const char *c) {
  size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
  char *out = malloc(n);
  if (out)
    snprintf(out, n, "%s%s%s", a, b, c);
  return out;
}

int ps_http_target_parse(const char *url, ps_http_target *t) {
  memset(t, 0, sizeof *t);
  if (proxy_set())
    return 0;
  CURLU *u = curl_url();
  if (!u)
    return -ENOMEM;
  int rc = 0;
  char *scheme = NULL, *user = NULL, *password = NULL;
  if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK)
    goto out;
  scheme = part(u, CURLUPART_SCHEME, 0);
  user = part(u, CURLUPART_USER, 0);
  password = part(u, CURLUPART_PASSWORD, 0);
  if (!scheme || strcmp(scheme, "http") != 0 || user || password)
    goto out;
  /* Host: as written (brackets kept), with the port only when given. */
  char *host = host_of(u, false), *port = part(u, CURLUPART_PORT, 0);
  char *path = part(u, CURLUPART_PATH, 0), *query = part(u, CURLUPART_QUERY, 0);
  t->host = host_of(u, true);
  t->port = part(u, CURLUPART_PORT, CURLU_DEFAULT_PORT);
  t->authority = host ? joined(host, port ? ":" : "", port ? port : "") : NULL;
  t->path = path ? joined(path, query ? "?" : "", query ? query : "") : NULL;
  free(host);
  free(port);
  free(path);
  free(query);
  rc = 1;
  if (!t->host || !t->port || !t->authority || !t->path) {
    ps_http_target_free(t);
    rc = -ENOMEM;
  }
out:
  free(scheme);
  free(user);
  free(password);
  curl_url_cleanup(u);
  return rc;
}

int ps_http_url_is_loopback(const char *url) {
  CURLU *u = curl_url();
  char *h = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK ? host_of(u, true) : NULL;
  unsigned char a[16];
  int loop = 0;
  if (h && (!strcasecmp(h, "localhost") || !strcasecmp(h, "localhost.")))
    loop = 1;
  else if (h && inet_pton(AF_INET, h, a) == 1)
    loop = a[0] == 127;
  else if (h && inet_pton(AF_INET6, h, a) == 1)
    loop = !memcmp(a, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16);
  free(h);
  curl_url_cleanup(u);
  return loop;
}

/* ---- the connection ------------------------------------------------------- */

static void teardown(ps_http_conn *c);
static void on_timer_closed(uv_handle_t *h);

static void leave(ps_http_conn *c) {
  if (--c->depth == 0 && c->closing && !c->torn)
    teardown(c);
}

static void on_link_closed(uv_handle_t *h) { free(h->data); }

static void drop_link(ps_http_conn *c) {
  conn_link *l = c->link;
  if (!l)
    return;
  c->link = NULL;
  l->owner = NULL;
  uv_close((uv_handle_t *)&l->tcp, on_link_closed);
}

static void give_up_resolving(ps_http_conn *c) {
  if (!c->res)
    return;
  c->res->owner = NULL;
  /* Not cancelled: when the lookup already runs, its callback still
   * comes; a cancelled one comes too, with UV_ECANCELED. Both free it. */
  uv_cancel((uv_req_t *)&c->res->req);
  c->res = NULL;
}

static void forget_addresses(ps_http_conn *c) {
  if (c->addrs)
    uv_freeaddrinfo(c->addrs);
  c->addrs = c->next_addr = NULL;
}

static void finish(ps_http_conn *c, int status) {
  uv_timer_stop(&c->timer);
  if (status < 0) {
    drop_link(c);
    give_up_resolving(c);
    forget_addresses(c);
  }
  c->busy = false;
  ps_http_conn_cb cb = c->cb;
  c->cb = NULL;
  c->depth++;
  if (cb)
    cb(c, status, c->data);
  leave(c);
}

static void fail(ps_http_conn *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(ps_http_conn *c, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err, sizeof c->err, fmt, ap);
  va_end(ap);
  finish(c, status);
}

static void arm(ps_http_conn *c, uint64_t ms);

static int write_request(ps_http_conn *c);
static int start_connecting(ps_http_conn *c);

/* The link died before the answer was whole. */
static void link_lost(ps_http_conn *c, int status, const char *when) {
  bool was_kept_alive = c->link && c->link->served;
  drop_link(c);
  if (was_kept_alive && !c->reply.received && !c->resent) {
    c->resent = true;
    int rc = start_connecting(c);
    if (!rc)
      return;
    status = rc;
  }
  if (c->reply.received)
    fail(c, -EPROTO, "the connection to %s broke mid-answer (%s)", c->t.authority,
         uv_strerror(status));
  else
    fail(c, status == UV_EOF ? -ECONNRESET : status, "%s closed the connection %s (%s)",
         c->t.authority, when, status == UV_EOF ? "no answer" : uv_strerror(status));
}

static void answered(ps_http_conn *c, bool trailing) {
  conn_link *l = c->link;
  if (l)
    l->served = true;
  if (!c->write_done || trailing || c->reply.close)
    drop_link(c); /* mid-body, or the server said it closes */
  finish(c, 0);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  conn_link *l = h->data;
  *buf = uv_buf_init(l->rbuf, sizeof l->rbuf);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  conn_link *l = s->data;
  ps_http_conn *c = l->owner;
  if (!c || nread == 0)
    return;
  if (!c->busy) {
    /* Idle: the server closed it, or sent what belongs to no request. */
    drop_link(c);
    return;
  }
  if (nread < 0) {
    if (nread == UV_EOF && ps_http_reply_eof(&c->reply) == 0)
      answered(c, false);
    else if (nread == UV_EOF && c->reply.error)
      fail(c, -EPROTO, "%s sent a broken answer: %s", c->t.authority, c->reply.error);
    else
      link_lost(c, (int)nread, "before answering");
    return;
  }
  long used = ps_http_reply_feed(&c->reply, buf->base, (size_t)nread);
  if (used < 0)
    fail(c, -EPROTO, "%s sent a broken answer: %s", c->t.authority,
         c->reply.error ? c->reply.error : "unreadable");
  else if (c->reply.done)
    answered(c, (size_t)used < (size_t)nread);
}

static void on_write(uv_write_t *req, int status) {
  conn_link *l = req->data;
  ps_http_conn *c = l->owner;
  if (!c || !c->busy)
    return;
  if (status < 0) {
    link_lost(c, status, "while the request was sent");
    return;
  }
  c->write_done = true;
  if (c->reply.done)
    answered(c, false);
}

static int write_request(ps_http_conn *c) {
  conn_link *l = c->link;
  c->write_done = false;
  l->write_req.data = l;
  return uv_write(&l->write_req, (uv_stream_t *)&l->tcp, c->bufs, c->nbufs, on_write);
}

static void connect_next(ps_http_conn *c);

static void on_connect(uv_connect_t *req, int status) {
  conn_link *l = req->data;
  ps_http_conn *c = l->owner;
  if (!c)
    return;
  if (status < 0) {
    c->last_connect_error = status;
    drop_link(c);
    if (c->next_addr)
      c->next_addr = c->next_addr->ai_next;
    connect_next(c);
    return;
  }
  l->connected = true;
  forget_addresses(c);
  uint64_t now = uv_now(c->loop);
  arm(c, c->deadline > now ? c->deadline - now : 1);
  int rc = uv_read_start((uv_stream_t *)&l->tcp, on_alloc, on_read);
  if (!rc)
    rc = write_request(c);
  if (rc)
    fail(c, rc, "cannot send to %s: %s", c->t.authority, uv_strerror(rc));
}

static int open_link(ps_http_conn *c, const struct sockaddr *addr) {
  conn_link *l = calloc(1, sizeof *l);
  if (!l)
    return UV_ENOMEM;
  int rc = uv_tcp_init(c->loop, &l->tcp);
  if (rc) {
    free(l);
    return rc;
  }
  l->tcp.data = l;
  l->connect_req.data = l;
  l->owner = c;
  c->link = l;
  /* As curl does: no Nagle delay on the request's last segment, and
   * keep-alive probes on a connection that idles between runs. */
  uv_tcp_nodelay(&l->tcp, 1);
  uv_tcp_keepalive(&l->tcp, 1, 60);
  rc = uv_tcp_connect(&l->connect_req, &l->tcp, addr, on_connect);
  if (rc)
    drop_link(c);
  return rc;
}

static void connect_next(ps_http_conn *c) {
  while (c->next_addr) {
    int rc = open_link(c, c->next_addr->ai_addr);
    if (!rc)
      return;
    c->last_connect_error = rc;
    c->next_addr = c->next_addr->ai_next;
  }
  int e = c->last_connect_error ? c->last_connect_error : UV_ECONNREFUSED;
  fail(c, e, "cannot connect to %s: %s", c->t.authority, uv_strerror(e));
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
  resolving *r = req->data;
  ps_http_conn *c = r->owner;
  free(r);
  if (!c) {
    if (res)
      uv_freeaddrinfo(res);
    return;
  }
  c->res = NULL;
  if (status < 0) {
    fail(c, status == UV_ECANCELED ? -ECANCELED : -EHOSTUNREACH, "cannot resolve %s: %s", c->t.host,
         uv_strerror(status));
    return;
  }
  c->addrs = c->next_addr = res;
  c->last_connect_error = 0;
  connect_next(c);
}

static int start_connecting(ps_http_conn *c) {
  uint64_t now = uv_now(c->loop);
  uint64_t left = c->deadline > now ? c->deadline - now : 1;
  arm(c, left < (uint64_t)c->connect_timeout_ms ? left : (uint64_t)c->connect_timeout_ms);
  resolving *r = calloc(1, sizeof *r);
  if (!r)
    return UV_ENOMEM;
  r->req.data = r;
  r->owner = c;
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  int rc = uv_getaddrinfo(c->loop, &r->req, on_resolved, c->t.host, c->t.port, &hints);
  if (rc) {
    free(r);
    return rc;
  }
  c->res = r;
  return 0;
}

static void on_timeout(uv_timer_t *t) {
  ps_http_conn *c = t->data;
  if (!c->busy)
    return;
  if (c->link && c->link->connected)
    fail(c, -ETIMEDOUT, "no answer from %s within %ld ms", c->t.authority, c->timeout_ms);
  else
    fail(c, -ETIMEDOUT, "cannot connect to %s: timed out", c->t.authority);
}

static void arm(ps_http_conn *c, uint64_t ms) {
  uv_timer_start(&c->timer, on_timeout, ms ? ms : 1, 0);
}

int ps_http_conn_init(ps_http_conn **out, uv_loop_t *loop, const ps_http_target *t,
                      long connect_timeout_ms, long timeout_ms) {
  *out = NULL;
  if (!t || !t->host || !t->port || !t->authority || !t->path || connect_timeout_ms <= 0 ||
      timeout_ms <= 0)
    return -EINVAL;
  static bool sigpipe_ignored;
  if (!sigpipe_ignored) {
    signal(SIGPIPE, SIG_IGN);
    sigpipe_ignored = true;
  }
  ps_http_conn *c = calloc(1, sizeof *c);
  if (!c)
    return -ENOMEM;
  c->t.host = strdup(t->host);
  c->t.port = strdup(t->port);
  c->t.authority = strdup(t->authority);
  c->t.path = strdup(t->path);
  int rc = uv_timer_init(loop, &c->timer);
  if (rc || !c->t.host || !c->t.port || !c->t.authority || !c->t.path) {
    ps_http_target_free(&c->t);
    if (rc) {
      free(c);
      return rc;
    }
    /* The timer is the loop's until closed: c goes in its close callback. */
    c->torn = true;
    c->timer.data = c;
    uv_close((uv_handle_t *)&c->timer, on_timer_closed);
    return -ENOMEM;
  }
  c->loop = loop;
  c->timer.data = c;
  c->connect_timeout_ms = connect_timeout_ms;
  c->timeout_ms = timeout_ms;
  *out = c;
  return 0;
}

int ps_http_conn_send(ps_http_conn *c, const uv_buf_t *bufs, unsigned nbufs, ps_buf *answer,
                      size_t limit, ps_http_conn_cb cb, void *data) {
  if (!c || !bufs || !nbufs || nbufs > PS_HTTP_CONN_BUFS || !cb)
    return -EINVAL;
  if (c->closing)
    return -ECANCELED;
  if (c->busy)
    return -EBUSY;
  memcpy(c->bufs, bufs, nbufs * sizeof *bufs);
  c->nbufs = nbufs;
  ps_http_reply_begin(&c->reply, answer, limit);
  c->err[0] = '\0';
  c->resent = false;
  c->cb = cb;
  c->data = data;
  c->deadline = uv_now(c->loop) + (uint64_t)c->timeout_ms;
  int rc = 0;
  if (c->link && c->link->connected) {
    arm(c, (uint64_t)c->timeout_ms);
    rc = write_request(c);
    if (rc)
      drop_link(c); /* a dead socket: connect afresh instead */
  }
  if (!c->link)
    rc = start_connecting(c);
  if (rc) {
    uv_timer_stop(&c->timer);
    c->cb = NULL;
    return rc;
  }
  c->busy = true;
  return 0;
}

const ps_http_reply *ps_http_conn_reply(const ps_http_conn *c) { return &c->reply; }

const char *ps_http_conn_error(const ps_http_conn *c) { return c->err; }

static void on_timer_closed(uv_handle_t *h) {
  ps_http_conn *c = h->data;
  void (*closed)(void *) = c->closed;
  void *arg = c->closed_arg;
  ps_http_target_free(&c->t);
  free(c);
  if (closed)
    closed(arg);
}

static void teardown(ps_http_conn *c) {
  c->torn = true;
  drop_link(c);
  give_up_resolving(c);
  forget_addresses(c);
  uv_close((uv_handle_t *)&c->timer, on_timer_closed);
}

void ps_http_conn_close(ps_http_conn *c, void (*closed)(void *arg), void *arg) {
  if (!c || c->closing)
    return;
  c->closing = true;
  c->closed = closed;
  c->closed_arg = arg;
  if (c->busy) {
    snprintf(c->err, sizeof c->err, "cancelled");
    finish(c, -ECANCELED);
  } else if (!c->depth) {
    teardown(c);
  }
}
