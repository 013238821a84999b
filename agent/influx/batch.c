/*
 * batch.c: batches and checkpoints. See include/influx/batch.h.
 *
 * DESIGN: the commit rule is the heart of "nothing lost, nothing doubled",
 * so it lives here without libuv or HTTP and is tested alone. A checkpoint
 * is shared by consecutive lines of one file that went into the same batch,
 * so there are about as many checkpoints as batches in flight, not one per
 * line. Batches are recognised by a sequence number rather than a pointer:
 * a freed batch's address may come back for the next one.
 *
 * The hot path is ps_batcher_body() + ps_batcher_commit(): the encoder
 * writes each point once, into the body that is sent, and a point costs a
 * few comparisons here (its origin usually extends the last run, its
 * checkpoint is usually the one this batch already holds). Bodies are
 * recycled through `spares` rather than freed and allocated again.
 */
#include "influx/batch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"

void ps_cursor_init(ps_cursor *c, uint64_t offset, uint64_t line, void *owner) {
  memset(c, 0, sizeof *c);
  c->last_end = c->committed = offset;
  c->last_line = c->committed_line = line ? line : 1;
  c->owner = owner;
}

static ps_checkpoint *cp_append(ps_cursor *c) {
  ps_checkpoint *cp = calloc(1, sizeof *cp);
  if (!cp)
    return NULL;
  cp->cursor = c;
  cp->end = c->last_end;
  cp->line = c->last_line;
  cp->doc_hash = c->last_doc_hash;
  if (c->tail) {
    c->tail->sealed = 1;
    c->tail->next = cp;
  } else {
    c->head = cp;
  }
  c->tail = cp;
  c->live++;
  return cp;
}

/* Frees checkpoints nobody holds: all of them on a retired cursor, else
 * the acknowledged prefix (keeping an open tail, which more lines extend). */
static int cursor_advance(ps_cursor *c) {
  uint64_t before = c->committed, before_doc = c->committed_doc_hash;
  if (c->retired) {
    ps_checkpoint **pp = &c->head, *last = NULL;
    while (*pp) {
      ps_checkpoint *cp = *pp;
      if (cp->refs == 0) {
        *pp = cp->next;
        free(cp);
        c->live--;
      } else {
        last = cp;
        pp = &cp->next;
      }
    }
    c->tail = last;
    return 0;
  }
  ps_checkpoint *cp;
  while ((cp = c->head) && cp->refs == 0 && !cp->failed) {
    c->committed = cp->end;
    c->committed_line = cp->line;
    c->committed_doc_hash = cp->doc_hash;
    if (cp == c->tail && !cp->sealed)
      break;
    c->head = cp->next;
    if (!c->head)
      c->tail = NULL;
    free(cp);
    c->live--;
  }
  return c->committed != before || c->committed_doc_hash != before_doc;
}

void ps_cursor_release(ps_cursor *c) {
  if (!c)
    return;
  c->retired = 1;
  cursor_advance(c);
}

int ps_cursor_line_done(ps_cursor *c, uint64_t end, uint64_t line, uint64_t doc_hash) {
  c->last_end = end;
  c->last_line = line;
  c->last_doc_hash = doc_hash;
  c->line_open = 0;
  ps_checkpoint *cp = c->tail;
  if (!cp || cp->sealed) {
    if (!cp_append(c))
      return -ENOMEM;
  } else {
    cp->end = end;
    cp->line = line;
    cp->doc_hash = doc_hash;
    if (cp->seal_at_line_end)
      cp->sealed = 1;
  }
  return cursor_advance(c);
}

uint64_t ps_cursor_committed(const ps_cursor *c) { return c->committed; }

void ps_batcher_limits(ps_batcher *bt, size_t max_points, size_t max_bytes, size_t max_pending) {
  bt->max_points = max_points ? max_points : 5000;
  bt->max_bytes = max_bytes ? max_bytes : 1048576;
  bt->max_pending = max_pending ? max_pending : 4194304;
  /* Two spares were too few: with eight batches in flight, most
   * acknowledged bodies were freed and the next ones mapped afresh, a page
   * fault per 4 KiB written (docs/benchmarks.md, "Sixth pass"). */
  size_t fit = bt->max_pending / bt->max_bytes;
  bt->spares.max = fit < 2 ? 2 : fit > PS_BATCH_SPARES ? PS_BATCH_SPARES : fit;
}

void ps_batcher_init(ps_batcher *bt, size_t max_points, size_t max_bytes,
                     size_t max_pending, int (*submit)(void *, ps_pbatch *),
                     void (*committed)(void *, ps_cursor *), void *ctx) {
  memset(bt, 0, sizeof *bt);
  ps_batcher_limits(bt, max_points, max_bytes, max_pending);
  bt->submit = submit;
  bt->committed = committed;
  bt->ctx = ctx;
  bt->next_seq = 1;
}

ps_pbatch *ps_pbatch_new(void) {
  ps_pbatch *b = calloc(1, sizeof *b);
  if (!b)
    return NULL;
  ps_batch_init(&b->b);
  b->b.data = b;
  b->created_ms = ps_now_ms();
  return b;
}

void ps_pbatch_free(ps_pbatch *b) {
  if (!b)
    return;
  ps_batch_free(&b->b);
  free(b->cps);
  free(b);
}

static int hold(ps_pbatch *b, ps_cursor *c) {
  ps_checkpoint *cp = c->tail;
  if (cp && !cp->sealed && cp->last_seq == b->seq)
    return 0;
  if (b->ncps == b->cps_cap) {
    size_t cap = b->cps_cap ? b->cps_cap * 2 : 8;
    ps_checkpoint **n = realloc(b->cps, cap * sizeof *n);
    if (!n)
      return -ENOMEM;
    b->cps = n;
    b->cps_cap = cap;
  }
  if (!cp || cp->sealed) {
    cp = cp_append(c);
    if (!cp)
      return -ENOMEM;
  }
  cp->refs++;
  cp->last_seq = b->seq;
  b->cps[b->ncps++] = cp;
  return 0;
}

int ps_body_pool_take(ps_body_pool *pool, ps_buf *body) {
  if (!pool->n)
    return 0;
  *body = pool->bodies[--pool->n];
  ps_buf_reset(body);
  return 1;
}

void ps_body_pool_keep(ps_body_pool *pool, ps_buf *body, size_t worth) {
  if (pool->n < pool->max && pool->n < PS_BATCH_SPARES && body->data && body->cap >= worth) {
    pool->bodies[pool->n++] = *body;
    ps_buf_init(body, 0);
  }
}

void ps_body_pool_free(ps_body_pool *pool) {
  while (pool->n)
    ps_buf_free(&pool->bodies[--pool->n]);
}

/* Sized like the last full batch, a batch is allocated once instead of
 * through a chain of doublings whose freed steps fragment the heap. Only a
 * hint: failing here just leaves the batch to grow as before. */
static void presize(const ps_batcher *bt, ps_batch *b) {
  if (bt->hint_bytes)
    ps_buf_reserve(&b->body, bt->hint_bytes + bt->hint_bytes / 16);
}

static ps_pbatch *batch_new(ps_batcher *bt) {
  ps_pbatch *b = ps_pbatch_new();
  if (!b)
    return NULL;
  b->seq = bt->next_seq++;
  if (!ps_body_pool_take(&bt->spares, &b->b.body))
    presize(bt, &b->b);
  return b;
}

/* A finished batch's body goes to the next batch, unless nothing is left
 * to send: an idle agent keeps no megabyte bodies. One at least half as
 * large as the last full batch will do; measured against max_bytes
 * instead, batches cut by max_points (1,000 points of 145 bytes) kept
 * none and mapped every body afresh (docs/benchmarks.md, "Seventh
 * pass"). */
static void recycle_body(ps_batcher *bt, ps_batch *b) {
  int busy = bt->inflight_head || (bt->open && bt->open->b.npoints);
  size_t worth = (bt->hint_bytes ? bt->hint_bytes : bt->max_bytes) / 2;
  if (busy)
    ps_body_pool_keep(&bt->spares, &b->body, worth);
  else
    ps_body_pool_free(&bt->spares);
}

/* Full: the open batch is sent only when nothing else is in flight, for
 * then no acknowledgement could make room. With batches in flight it
 * stays open and fills on after their acks: flushed at each refusal, it
 * went out partly filled and its acknowledgement made room for another
 * such batch only, so a backfill sent batches of half their size (109
 * requests for six runs where 55 full ones do). */
int ps_batcher_refuse(ps_batcher *bt) {
  if (!bt->inflight_count && bt->open && bt->open->b.npoints)
    ps_batcher_flush(bt);
  return -EAGAIN;
}

int ps_batcher_body(ps_batcher *bt, ps_buf **body, size_t *at) {
  if (ps_batcher_full(bt))
    return ps_batcher_refuse(bt);
  if (!bt->open && !(bt->open = batch_new(bt)))
    return -ENOMEM;
  *body = &bt->open->b.body;
  *at = bt->open->b.body.len;
  return 0;
}

int ps_batcher_commit(ps_batcher *bt, ps_cursor *c, size_t at, const ps_origin *origin) {
  ps_pbatch *b = bt->open;
  int rc;
  if (!b || at > b->b.body.len)
    return -EINVAL;
  size_t len = b->b.body.len - at;
  if (b->b.npoints && b->b.body.len > bt->max_bytes) {
    /* The line would pass max_bytes: it starts the next batch. One line's
     * copy per batch, where encoding elsewhere first copied every line. */
    ps_pbatch *next = batch_new(bt);
    if (!next || ps_buf_append(&next->b.body, b->b.body.data + at, len) < 0) {
      ps_pbatch_free(next);
      ps_buf_truncate(&b->b.body, at);
      return -ENOMEM;
    }
    ps_buf_truncate(&b->b.body, at);
    rc = ps_batcher_flush(bt);
    bt->open = next;
    b = next;
    at = 0;
    if (rc) {
      ps_buf_reset(&b->b.body);
      return rc;
    }
  }
  if ((rc = c ? hold(b, c) : 0) < 0 ||
      (rc = ps_batch_add_line_origin(&b->b, at, origin)) < 0) {
    ps_buf_truncate(&b->b.body, at);
    return rc;
  }
  if (c)
    c->line_open = 1;
  bt->pending_bytes += len;
  bt->pending_points++;
  /* the body's length is at + len: read back from the batch, which the
   * origin's call just wrote, it cost 2 % of run's CPU (a 16-byte load of
   * two fields stored apart stalls, perf annotate; docs/benchmarks.md) */
  if (at + len >= bt->max_bytes || b->b.npoints >= bt->max_points) {
    bt->hint_bytes = b->b.body.len;
    bt->hint_points = b->b.npoints;
    return ps_batcher_flush(bt);
  }
  return 0;
}

int ps_batcher_add(ps_batcher *bt, ps_cursor *c, const char *line, size_t len,
                   const ps_origin *origin) {
  /* Known in advance, the length can flush the open batch before the copy
   * instead of moving the line afterwards. */
  if (!ps_batcher_full(bt) && bt->open && bt->open->b.npoints &&
      bt->open->b.body.len + len > bt->max_bytes) {
    int rc = ps_batcher_flush(bt);
    if (rc)
      return rc;
  }
  ps_buf *body;
  size_t at;
  int rc = ps_batcher_body(bt, &body, &at);
  if (rc)
    return rc;
  if ((rc = ps_buf_append(body, line, len)) < 0)
    return rc;
  return ps_batcher_commit(bt, c, at, origin);
}

/* A sealed batch gives back the slack of its origin records (there are
 * few once a stream's points share runs). The body keeps its capacity: it
 * is recycled for a later batch. */
static void fit(ps_batch *b) {
  if (b->runs && b->runs_cap > b->nruns + 64) {
    ps_batch_run *r = realloc(b->runs, b->nruns * sizeof *r);
    if (r) {
      b->runs = r;
      b->runs_cap = b->nruns;
    }
  }
}

int ps_batcher_flush(ps_batcher *bt) {
  ps_pbatch *b = bt->open;
  if (!b || !b->b.npoints)
    return 0;
  bt->open = NULL;
  fit(&b->b);
  for (size_t i = 0; i < b->ncps; i++) {
    ps_checkpoint *cp = b->cps[i];
    /* A line still giving points keeps its checkpoint open until it ends:
     * the next batch takes a reference too, and the offset passes the line
     * only when both are acknowledged. Sealing it at the line's end keeps a
     * steady stream from chaining every batch into one checkpoint. */
    if (cp == cp->cursor->tail && !cp->cursor->line_open)
      cp->sealed = 1;
    else if (cp == cp->cursor->tail)
      cp->seal_at_line_end = 1;
  }
  b->prev = bt->inflight_tail;
  b->next = NULL;
  if (bt->inflight_tail)
    bt->inflight_tail->next = b;
  else
    bt->inflight_head = b;
  bt->inflight_tail = b;
  bt->inflight_count++;
  int rc = bt->submit ? bt->submit(bt->ctx, b) : -ENOSYS;
  if (rc < 0)
    ps_batcher_done(bt, b, 0); /* never acknowledged: its lines stay uncommitted */
  return rc;
}

void ps_batcher_done(ps_batcher *bt, ps_pbatch *b, int acked) {
  if (b->prev)
    b->prev->next = b->next;
  else
    bt->inflight_head = b->next;
  if (b->next)
    b->next->prev = b->prev;
  else
    bt->inflight_tail = b->prev;
  bt->inflight_count--;
  bt->pending_bytes -=
      b->b.body.len < bt->pending_bytes ? b->b.body.len : bt->pending_bytes;
  bt->pending_points -=
      b->b.npoints < bt->pending_points ? b->b.npoints : bt->pending_points;
  /* Release every reference first, then advance each cursor once: advancing
   * frees checkpoints this batch may still list. */
  ps_cursor **cursors = b->ncps ? malloc(b->ncps * sizeof *cursors) : NULL;
  size_t nc = 0;
  for (size_t i = 0; i < b->ncps; i++) {
    ps_checkpoint *cp = b->cps[i];
    cp->refs--;
    if (!acked)
      cp->failed = 1;
    /* each cursor once: a batch of 1,000 files holds 1,000 of them, and
     * a search of the list per checkpoint made that a million steps */
    if (!cursors || cp->cursor->done_seq == b->seq)
      continue;
    cp->cursor->done_seq = b->seq;
    cursors[nc++] = cp->cursor;
  }
  for (size_t k = 0; k < nc; k++)
    if (cursor_advance(cursors[k]) || cursors[k]->retired) {
      if (bt->committed)
        bt->committed(bt->ctx, cursors[k]);
    }
  free(cursors);
  recycle_body(bt, &b->b);
  ps_pbatch_free(b);
}

const ps_pbatch *ps_batcher_oldest(const ps_batcher *bt) { return bt->inflight_head; }

void ps_batcher_free(ps_batcher *bt) {
  if (!bt)
    return;
  ps_body_pool_free(&bt->spares);
  if (!bt->open)
    return;
  ps_pbatch *b = bt->open;
  bt->open = NULL;
  for (size_t i = 0; i < b->ncps; i++) {
    b->cps[i]->refs--;
    b->cps[i]->failed = 1;
  }
  ps_pbatch_free(b);
}

/* ---- the batch the sink sees --------------------------------------------- */

void ps_batch_init(ps_batch *b) {
  memset(b, 0, sizeof *b);
  ps_buf_init(&b->body, 0);
}

int ps_batch_add_line_origin(ps_batch *b, size_t offset, const ps_origin *o) {
  if (offset < b->last_offset || offset > b->body.len)
    b->disorder = 1;
  b->last_offset = offset;
  ps_batch_run *r = b->nruns ? &b->runs[b->nruns - 1] : NULL;
  if (r && r->file == o->file && r->count < UINT32_MAX) {
    uint64_t last = r->line + (uint64_t)r->step * (r->count - 1);
    if (r->count == 1 && (o->line == last || o->line == last + 1)) {
      r->step = o->line == last + 1;
      r->count++;
      b->npoints++;
      return 0;
    }
    if (o->line == last + r->step) {
      r->count++;
      b->npoints++;
      return 0;
    }
  }
  if (b->nruns == b->runs_cap) {
    size_t cap = b->runs_cap ? b->runs_cap * 2 : 16;
    ps_batch_run *n = realloc(b->runs, cap * sizeof *n);
    if (!n)
      return -ENOMEM;
    b->runs = n;
    b->runs_cap = cap;
  }
  r = &b->runs[b->nruns++];
  r->file = o->file;
  r->line = o->line;
  r->first = b->npoints;
  r->count = 1;
  r->step = 0;
  b->npoints++;
  return 0;
}

ps_origin ps_batch_origin(const ps_batch *b, size_t i) {
  ps_origin o = {NULL, i + 1};
  if (!b->nruns || i >= b->npoints)
    return o;
  size_t lo = 0, hi = b->nruns; /* the last run whose first point is <= i */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (b->runs[mid].first <= i)
      lo = mid;
    else
      hi = mid;
  }
  const ps_batch_run *r = &b->runs[lo];
  o.file = r->file;
  o.line = r->line + (uint64_t)r->step * (i - r->first);
  return o;
}

void ps_batch_free(ps_batch *b) {
  if (!b)
    return;
  ps_buf_free(&b->body);
  free(b->runs);
  b->runs = NULL;
  b->npoints = b->nruns = b->runs_cap = 0;
  b->last_offset = 0;
  b->disorder = 0;
}
