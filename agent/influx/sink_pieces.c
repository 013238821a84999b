/*
 * sink_pieces.c: the sink's batches, pieces and queue, and its back-off
 * arithmetic: the bookkeeping both halves of the sink (sink.c dispatches,
 * sink_answer.c judges the answers) share. Nothing here starts a transfer;
 * see agent/influx/sink_private.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sink_private.h"

static uint64_t rng_next(ps_sink *s) {
  /* xorshift64*: jitter only, no need for quality. */
  s->rng ^= s->rng >> 12;
  s->rng ^= s->rng << 25;
  s->rng ^= s->rng >> 27;
  return s->rng * 2685821657736338717ULL;
}

/* Line starts are needed only inside a piece (splits, rejected lines), and
 * ps_sink_index_lines() has found them by then; a whole batch is [0, len). */
size_t ps_sink_line_start(const tracked *t, size_t i) {
  if (i >= t->nlines)
    return t->batch->body.len;
  if (i == 0 || !t->offsets)
    return 0;
  return t->offsets[i];
}

void ps_sink_queue_push_back(ps_sink *s, piece *p) {
  p->next = NULL;
  if (s->queue_tail)
    s->queue_tail->next = p;
  else
    s->queue_head = p;
  s->queue_tail = p;
}

void ps_sink_queue_push_front(ps_sink *s, piece *p) {
  p->next = s->queue_head;
  s->queue_head = p;
  if (!s->queue_tail)
    s->queue_tail = p;
}

piece *ps_sink_queue_pop(ps_sink *s) {
  piece *p = s->queue_head;
  if (p) {
    s->queue_head = p->next;
    if (!s->queue_head)
      s->queue_tail = NULL;
    p->next = NULL;
  }
  return p;
}

void ps_sink_tracked_unlink(ps_sink *s, tracked *t) {
  if (t->prev)
    t->prev->next = t->next;
  else
    s->batches = t->next;
  if (t->next)
    t->next->prev = t->prev;
  s->nbatches--;
}

void ps_sink_backoff(ps_sink *s, uint64_t delay_ms) {
  uint64_t at = uv_now(s->loop) + delay_ms;
  if (at > s->resume_at)
    s->resume_at = at;
}

uint64_t ps_sink_jittered(ps_sink *s, uint64_t first, unsigned streak) {
  uint64_t d = first;
  for (unsigned i = 1; i < streak && d < BACKOFF_MAX_MS; i++)
    d *= 2;
  if (d > BACKOFF_MAX_MS)
    d = BACKOFF_MAX_MS;
  /* Up to +25%, so agents restarted together do not retry in lock step. */
  d += rng_next(s) % (d / 4 + 1);
  return d > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : d;
}

void ps_sink_piece_done(ps_sink *s, piece *p) {
  tracked *t = p->t;
  free(p);
  if (--t->open_pieces)
    return;
  ps_sink_tracked_unlink(s, t);
  s->stats.batches_sent++;
  ps_batch *b = t->batch;
  size_t rejected = t->rejected;
  free(t->offsets);
  free(t);
  if (s->done)
    s->done(s, b, 0, rejected);
}

piece *ps_sink_piece_new(tracked *t, size_t l0, size_t l1) {
  piece *p = calloc(1, sizeof *p);
  if (p) {
    p->t = t;
    p->l0 = l0;
    p->l1 = l1;
  }
  return p;
}

/* Splits p into [l0, m) and [m, l1) at the head of the queue. */
int ps_sink_split_piece(ps_sink *s, piece *p) {
  size_t m = p->l0 + (p->l1 - p->l0) / 2;
  piece *q = ps_sink_piece_new(p->t, m, p->l1);
  if (!q)
    return -ENOMEM;
  p->doubted_413s = 0; /* each half is a body of its own */
  p->l1 = m;
  p->t->open_pieces++;
  ps_sink_queue_push_front(s, q);
  ps_sink_queue_push_front(s, p);
  return 0;
}

void ps_sink_retry_later(ps_sink *s, piece *p, uint64_t delay_ms) {
  s->stats.http_retries++;
  ps_sink_queue_push_front(s, p);
  ps_sink_backoff(s, delay_ms);
}

/* Line starts, found once a piece must be cut or read line by line: a
 * batch that is simply stored never needs them. With nlines unknown (0)
 * every line is counted; else exactly nlines starts are recorded (a body
 * with fewer lines gives empty ones at its end, so no piece can reach past
 * it). */
int ps_sink_index_lines(tracked *t) {
  if (t->offsets)
    return 0;
  const ps_buf *body = &t->batch->body;
  size_t want = t->nlines, n = 0, cap = want ? want : 0;
  if (cap && !(t->offsets = malloc(cap * sizeof *t->offsets)))
    return -ENOMEM;
  for (size_t i = 0; i < body->len && (!want || n < want);) {
    if (n == cap) {
      cap = cap ? cap * 2 : 256;
      size_t *o = realloc(t->offsets, cap * sizeof *o);
      if (!o)
        return -ENOMEM;
      t->offsets = o;
    }
    t->offsets[n++] = i;
    const char *nl = memchr(body->data + i, '\n', body->len - i);
    i = nl ? (size_t)(nl - body->data) + 1 : body->len;
  }
  if (!want)
    t->nlines = n;
  for (; n < want; n++)
    t->offsets[n] = body->len;
  return 0;
}
