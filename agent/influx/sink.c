/*
 * influx/sink.c: ships batches to InfluxDB over the agent's HTTP transport
 * (net/http_loop.h). include/influx/sink.h has the contract; what an answer
 * means is decided in sink_answer.c.
 *
 * DESIGN
 * - A submitted batch is cut into "pieces" (a run of its lines). A batch
 *   starts as one piece; 413 and partial writes split pieces, and the batch
 *   is done when its last piece is stored or rejected.
 * - A few transfers run at once (SINK_MAX_IN_FLIGHT), each on its own
 *   connection (or curl easy handle) that lives as long as the sink and
 *   stays open between requests.
 * - Back-off is server-wide: a failure sets `resume_at`, and no piece starts
 *   before it. One uv timer wakes the dispatcher; nothing polls. A failed
 *   piece goes back to the head of the queue so order is roughly kept.
 * - A user callback (done, on_reject, missing_db, on_trouble) may close the sink;
 *   teardown then waits until the code that called the callback has
 *   unwound (`depth`), as the transport does for its own callbacks.
 * - Closing: the transport is closed first (its transfers come back
 *   cancelled, their pieces are dropped), then every waiting batch gets
 *   -ECANCELED; the sink is freed when the transport and the retry timer
 *   have let go.
 * - Counters: batches_sent counts batches acknowledged (done with 0),
 *   bytes_sent what went on the wire (compressed, resends included).
 * - Two transports. Plain http straight to the server (the common case:
 *   InfluxDB on the same machine or the LAN) goes over the slots' own
 *   connections (net/http_conn.h): the head is built once, and the body
 *   is written from the batch itself, with no copy in user space; curl's
 *   copy through its upload buffer and its per-request work were about a
 *   third of what end to end cost beyond `convert` (35-45 ms of a million
 *   points' 110-130; docs/benchmarks.md, "Eleventh pass"). Anything else (https, a proxy, credentials in the
 *   URL) goes through curl, which knows them.
 * - With curl, a body is given as it is (CURLOPT_POSTFIELDS, not copied at
 *   setup); curl copies it through an upload buffer of SINK_UPLOAD_BUFFER
 *   bytes, each buffer one send(), small enough to come from the heap
 *   instead of a fresh mapping per request (docs/benchmarks.md).
 * - Either way the answer is judged by sink_answer.c from the same
 *   ps_sink_outcome.
 * - gzip: InfluxDB 1.x checks max-body-size only against the *compressed*
 *   Content-Length, so the uncompressed body must itself stay below the
 *   server limit; the batcher's max_bytes (1 MiB) keeps it far below the
 *   25 MB default.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "sink_private.h"

static const char *MOD = "sink";

/* ---- dispatch ------------------------------------------------------------ */

static void pump(ps_sink *s);
static void teardown(ps_sink *s);

static void leave(ps_sink *s) {
  if (--s->depth == 0 && s->closing && !s->torn)
    teardown(s);
}

static void on_retry_timer(uv_timer_t *t) {
  ps_sink *s = t->data;
  s->depth++;
  pump(s);
  leave(s);
}

static int compress_body(slot *sl, const char *p, size_t len) {
  z_stream *zs = &sl->zs;
  if (!sl->zs_ready) {
    memset(zs, 0, sizeof *zs);
    /* 15 + 16: a gzip wrapper, which is what Content-Encoding: gzip means */
    if (deflateInit2(zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      return -ENOMEM;
    sl->zs_ready = true;
  } else if (deflateReset(zs) != Z_OK) {
    return -EIO;
  }
  ps_buf_reset(&sl->gz);
  uLong bound = deflateBound(zs, (uLong)len);
  int rc = ps_buf_reserve(&sl->gz, bound);
  if (rc)
    return rc;
  zs->next_in = (Bytef *)p;
  zs->avail_in = (uInt)len;
  zs->next_out = (Bytef *)sl->gz.data;
  zs->avail_out = (uInt)bound;
  if (deflate(zs, Z_FINISH) != Z_STREAM_END)
    return -EIO;
  sl->gz.len = bound - zs->avail_out;
  sl->gz.data[sl->gz.len] = '\0'; /* ps_buf's promise */
  return 0;
}

static void on_xfer_done(ps_http_xfer *x, int status, CURLcode result) {
  slot *sl = x->data;
  ps_sink *s = sl->sink;
  if (status == -ECANCELED || s->closing) {
    /* Closing: the batch of this piece is cancelled as a whole. */
    free(sl->p);
    sl->p = NULL;
    return;
  }
  s->depth++;
  ps_sink_transfer_done(s, sl, result);
  pump(s);
  leave(s);
}

static void on_conn_done(ps_http_conn *c, int status, void *data) {
  slot *sl = data;
  ps_sink *s = sl->sink;
  if (status == -ECANCELED || s->closing) {
    free(sl->p);
    sl->p = NULL;
    return;
  }
  ps_sink_outcome o = {0};
  if (status < 0) {
    /* valid until the connection's next request, which pump() may start
     * only after the answer was judged */
    const char *e = ps_http_conn_error(c);
    o.failed = e[0] ? e : strerror(-status);
  } else {
    const ps_http_reply *r = ps_http_conn_reply(c);
    o.code = r->status;
    o.retry_after_s = r->retry_after_s;
    o.sent = sl->body_len;
  }
  s->depth++;
  ps_sink_answered(s, sl, &o);
  pump(s);
  leave(s);
}

/* On the slot's own connection: the shared head, the length, the body as
 * the batcher built it (net/http_conn.h). */
static int send_own(ps_sink *s, slot *sl, const char *body, size_t len) {
  int n = snprintf(sl->length_line, sizeof sl->length_line, "%zu\r\n\r\n", len);
  uv_buf_t bufs[3] = {
      uv_buf_init(s->head.data, (unsigned)s->head.len),
      uv_buf_init(sl->length_line, (unsigned)n),
      uv_buf_init((char *)body, (unsigned)len),
  };
  return ps_http_conn_send(sl->conn, bufs, len ? 3 : 2, &sl->answer, PS_INFLUX_ANSWER_LIMIT,
                           on_conn_done, sl);
}

static int start_piece(ps_sink *s, slot *sl, piece *p) {
  tracked *t = p->t;
  sl->errbuf[0] = '\0';
  size_t a = ps_sink_line_start(t, p->l0), b = ps_sink_line_start(t, p->l1);
  const char *body = t->batch->body.data ? t->batch->body.data + a : "";
  size_t len = b - a;
  if (s->gzip) {
    int rc = compress_body(sl, body, len);
    if (rc)
      return rc;
    body = sl->gz.data;
    len = sl->gz.len;
  }
  sl->body_len = len;
  if (sl->conn) {
    int rc = send_own(s, sl, body, len);
    if (rc)
      return rc;
    sl->p = p;
    return 0;
  }
  ps_buf_reset(&sl->answer);
  sl->collector.truncated = 0;
  /* POSTFIELDS is not copied: the batch (or sl->gz) outlives the transfer,
   * because the batch is only handed back in the done callback. */
  if (curl_easy_setopt(sl->easy, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
      curl_easy_setopt(sl->easy, CURLOPT_POSTFIELDSIZE_LARGE,
                       (curl_off_t)len) != CURLE_OK)
    return -EINVAL;
  int rc = ps_http_xfer_start(s->http, &sl->xfer, sl->easy, on_xfer_done);
  if (rc)
    return rc;
  sl->p = p;
  return 0;
}

static void pump(ps_sink *s) {
  if (s->closing || s->held)
    return;
  uint64_t now = uv_now(s->loop);
  if (s->queue_head && now < s->resume_at) {
    if (uv_timer_start(&s->retry_timer, on_retry_timer, s->resume_at - now, 0))
      PS_ERROR(MOD, "cannot arm the retry timer");
    return;
  }
  for (int i = 0; i < SINK_MAX_IN_FLIGHT && s->queue_head; i++) {
    slot *sl = &s->slots[i];
    if (sl->p)
      continue;
    piece *p = ps_sink_queue_pop(s);
    int rc = start_piece(s, sl, p);
    if (rc) {
      /* Out of memory or a curl failure: keep the piece, try again soon. */
      PS_ERROR(MOD, "cannot start a request (%s); retrying", strerror(-rc));
      ps_sink_queue_push_front(s, p);
      s->fail_streak++;
      ps_sink_backoff(s, ps_sink_jittered(s, BACKOFF_FIRST_MS, s->fail_streak));
      pump(s);
      return;
    }
  }
}

/* ---- life cycle ---------------------------------------------------------- */

static void maybe_finish(ps_sink *s) {
  if (!s->torn || s->pending_closes)
    return;
  void (*closed)(void *) = s->closed;
  void *arg = s->closed_arg;
  free(s);
  if (closed)
    closed(arg);
}

static void on_timer_closed(uv_handle_t *h) {
  ps_sink *s = h->data;
  s->pending_closes--;
  maybe_finish(s);
}

static void free_slots(ps_sink *s) {
  for (int i = 0; i < SINK_MAX_IN_FLIGHT; i++) {
    slot *sl = &s->slots[i];
    curl_easy_cleanup(sl->easy);
    sl->easy = NULL;
    ps_buf_free(&sl->answer);
    ps_buf_free(&sl->gz);
    if (sl->zs_ready)
      deflateEnd(&sl->zs);
    sl->zs_ready = false;
  }
}

/* The transport has cancelled our transfers and let go of the handles. */
static void on_http_closed(void *arg) {
  ps_sink *s = arg;
  s->http = NULL;
  free_slots(s);
  ps_influx_headers_free(&s->headers);
  ps_influx_head_free(&s->head);
  ps_buf_free(&s->url);
  s->pending_closes--;
  maybe_finish(s);
}

static void on_conn_closed(void *arg) {
  ps_sink *s = arg;
  s->pending_closes--;
  maybe_finish(s);
}

/* Their requests come back cancelled (on_conn_done drops the pieces)
 * before this returns; the memory goes later. */
static void close_conns(ps_sink *s) {
  for (int i = 0; i < SINK_MAX_IN_FLIGHT; i++) {
    slot *sl = &s->slots[i];
    if (!sl->conn)
      continue;
    ps_http_conn *c = sl->conn;
    sl->conn = NULL;
    s->pending_closes++;
    ps_http_conn_close(c, on_conn_closed, s);
  }
}

static void teardown(ps_sink *s) {
  s->torn = true;
  s->pending_closes += 2;
  close_conns(s);
  /* Transfers in flight come back cancelled (on_xfer_done drops their
   * pieces), now or once the transport's own caller has unwound. */
  ps_http_loop_close(s->http, on_http_closed, s);
  piece *p;
  while ((p = ps_sink_queue_pop(s)))
    free(p);
  while (s->batches) {
    tracked *t = s->batches;
    ps_sink_tracked_unlink(s, t);
    ps_batch *b = t->batch;
    size_t rejected = t->rejected;
    free(t->offsets);
    free(t);
    if (s->done)
      s->done(s, b, -ECANCELED, rejected);
  }
  uv_close((uv_handle_t *)&s->retry_timer, on_timer_closed);
}

/* Plain http straight to the server: the slots' own connections, with
 * the head built once. 1 when they serve, 0 when curl must. */
static int init_own(ps_sink *s, const ps_config *cfg) {
  ps_http_target t;
  int rc = ps_http_target_parse(s->url.data, &t);
  if (rc <= 0)
    return rc;
  rc = ps_influx_request_head(cfg, &s->headers, "POST", t.authority, t.path, &s->head);
  long timeout, connect;
  ps_influx_timeouts(cfg, &timeout, &connect);
  for (int i = 0; !rc && i < SINK_MAX_IN_FLIGHT; i++)
    rc = ps_http_conn_init(&s->slots[i].conn, s->loop, &t, connect, timeout);
  ps_http_target_free(&t);
  return rc ? rc : 1;
}

static int init_slots(ps_sink *s, const ps_config *cfg) {
  for (int i = 0; i < SINK_MAX_IN_FLIGHT; i++) {
    slot *sl = &s->slots[i];
    sl->sink = s;
    sl->xfer.data = sl;
    ps_buf_init(&sl->answer, 0);
    ps_buf_init(&sl->gz, 0);
    sl->collector.body = &sl->answer;
    sl->collector.limit = PS_INFLUX_ANSWER_LIMIT;
  }
  int own = init_own(s, cfg);
  if (own)
    return own < 0 ? own : 0;
  for (int i = 0; i < SINK_MAX_IN_FLIGHT; i++) {
    slot *sl = &s->slots[i];
    if (!(sl->easy = curl_easy_init()))
      return -ENOMEM;
    int rc = ps_influx_easy_setup(sl->easy, cfg, s->url.data, &s->headers,
                                  &sl->collector, sl->errbuf);
    if (rc)
      return rc;
    if (curl_easy_setopt(sl->easy, CURLOPT_POST, 1L) != CURLE_OK)
      return -EINVAL;
    /* curl moves a body through its upload buffer, one send() per buffer:
     * 64 KiB made 16 sends of a 1 MB batch, 512 KiB a mapping per request.
     * A failure leaves the default. */
    curl_easy_setopt(sl->easy, CURLOPT_UPLOAD_BUFFERSIZE, (long)SINK_UPLOAD_BUFFER);
  }
  return 0;
}

int ps_sink_init(ps_sink **out, uv_loop_t *loop, const ps_config *cfg,
                 ps_sink_done_cb done, ps_sink_reject_cb on_reject,
                 void *data) {
  *out = NULL;
  ps_sink *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  s->loop = loop;
  s->done = done;
  s->on_reject = on_reject;
  s->data = data;
  s->api = cfg->influxdb.api;
  s->create_db = cfg->influxdb.api == PS_API_V1 && cfg->influxdb.create_database;
  s->rng = uv_hrtime() ^ (uint64_t)(uintptr_t)s;
  if (!s->rng)
    s->rng = 88172645463325252ULL;
  ps_buf_init(&s->url, 0);
  ps_buf_init(&s->head, 0);
  int rc = ps_influx_write_url(cfg, &s->url);
  if (cfg->influxdb.gzip == PS_GZIP_ON)
    s->gzip = true;
  else if (cfg->influxdb.gzip == PS_GZIP_AUTO)
    s->gzip = !rc && !ps_http_url_is_loopback(s->url.data);
  if (!rc)
    rc = ps_influx_headers_init(&s->headers, cfg, PS_INFLUX_CONTENT_LP, s->gzip);
  if (!rc)
    rc = init_slots(s, cfg);
  bool timer_ready = false; /* libuv holds an initialised timer until closed */
  if (!rc && !(rc = uv_timer_init(loop, &s->retry_timer))) {
    timer_ready = true;
    rc = ps_http_loop_init(&s->http, loop, SINK_MAX_IN_FLIGHT);
  }
  if (rc) {
    free_slots(s);
    ps_influx_headers_free(&s->headers);
    ps_influx_head_free(&s->head);
    ps_buf_free(&s->url);
    for (int i = 0; i < SINK_MAX_IN_FLIGHT; i++) {
      /* idle and never used: nothing calls back; the memory goes later */
      ps_http_conn_close(s->slots[i].conn, NULL, NULL);
      s->slots[i].conn = NULL;
    }
    if (timer_ready) {
      /* Free s once the loop lets go of the timer. */
      s->torn = true;
      s->pending_closes = 1;
      s->retry_timer.data = s;
      uv_close((uv_handle_t *)&s->retry_timer, on_timer_closed);
    } else {
      free(s);
    }
    return rc;
  }
  s->retry_timer.data = s;
  *out = s;
  return 0;
}

void ps_sink_hold(ps_sink *s, int hold) {
  if (!s)
    return;
  s->held = hold != 0;
  if (!s->held && !s->closing) {
    s->depth++;
    pump(s);
    leave(s);
  }
}

void ps_sink_on_missing_database(ps_sink *s, void (*cb)(ps_sink *s, void *data)) {
  if (s)
    s->missing_db = cb;
}

void ps_sink_on_trouble(ps_sink *s, void (*cb)(ps_sink *s, void *data)) {
  if (s)
    s->on_trouble = cb;
}

const ps_sink_trouble *ps_sink_get_trouble(const ps_sink *s) {
  return s ? &s->trouble : NULL;
}

int ps_sink_submit(ps_sink *s, ps_batch *b) {
  if (!s || !b)
    return -EINVAL;
  if (s->closing)
    return -ECANCELED;
  if (b->disorder)
    return -EINVAL;
  tracked *t = calloc(1, sizeof *t);
  piece *p = t ? ps_sink_piece_new(t, 0, 0) : NULL;
  if (!t || !p) {
    free(t);
    free(p);
    return -ENOMEM;
  }
  t->batch = b;
  if (b->npoints) {
    t->nlines = b->npoints;
  } else if (ps_sink_index_lines(t)) {
    free(t->offsets);
    free(t);
    free(p);
    return -ENOMEM;
  }
  t->open_pieces = 1;
  p->l1 = t->nlines;
  t->next = s->batches;
  if (s->batches)
    s->batches->prev = t;
  s->batches = t;
  s->nbatches++;
  ps_sink_queue_push_back(s, p);
  if (!s->depth) {
    s->depth++;
    pump(s);
    leave(s);
  }
  return 0;
}

size_t ps_sink_in_flight(const ps_sink *s) { return s ? s->nbatches : 0; }

void *ps_sink_data(const ps_sink *s) { return s ? s->data : NULL; }

const ps_sink_stats *ps_sink_get_stats(const ps_sink *s) {
  return s ? &s->stats : NULL;
}

void ps_sink_close(ps_sink *s, void (*closed)(void *arg), void *arg) {
  if (!s || s->closing)
    return;
  s->closing = true;
  s->closed = closed;
  s->closed_arg = arg;
  if (!s->depth)
    teardown(s);
}
