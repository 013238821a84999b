/*
 * reader.c: the reader's loop turn, which drives its parts (reader_queue,
 * reader_lines, reader_docs, reader_settle), and what the service asks of
 * it. See include/pipeline/reader.h.
 */
#include "pipeline/reader.h"

#include <string.h>
#include <unistd.h>

#include "reader_docs.h"
#include "reader_lines.h"
#include "reader_queue.h"

/* Input parsed per loop turn. Between turns the loop answers the server:
 * at 4 MB a turn took ~25 ms, longer than InfluxDB needs for a 5,000-point
 * batch, so the server sat idle waiting for the next request. */
#define SLICE_BYTES ((size_t)64 << 10)
#define IDLE_CLOSE_RESCANS 2

static void work_cb(uv_idle_t *h);

void pl_reader_init(pl_reader *rd, pl_shared *sh, pl_registry *reg, pl_delivery *dl,
                    pl_commit *commit, const pl_reader_hooks *hooks) {
  memset(rd, 0, sizeof *rd);
  rd->sh = sh;
  rd->reg = reg;
  rd->dl = dl;
  rd->commit = commit;
  rd->hooks = *hooks;
  uv_idle_init(sh->loop, &rd->work);
  rd->turn = work_cb;
  rd->work.data = rd;
  uv_timer_init(sh->loop, &rd->settle_timer);
  rd->settle_timer.data = rd;
}

/* --- the loop turn -------------------------------------------------------- */

static void work_cb(uv_idle_t *h) {
  pl_reader *rd = h->data;
  size_t budget = SLICE_BYTES;
  pl_file *f;
  int rounds = 0;
  pl_delivery_new_turn(rd->dl);
  /* With the batcher full, the next point of any file is refused anyway;
   * starting the other queued files would only have each of them parse up
   * to that point and hold its line (and its parse) until acks come: a
   * backfill's runs each paused inside a 9 MB perf-finish line (240 MB for
   * six runs). They wait in the queue instead; pl_reader_resume restarts. */
  if (pl_delivery_full(rd->dl)) {
    uv_idle_stop(&rd->work);
    return;
  }
  while (budget && rounds++ < 64 && !pl_delivery_full(rd->dl) && (f = pl_reader_dequeue(rd))) {
    if (f->retired) {
      pl_registry_maybe_free(rd->reg, f);
      continue;
    }
    int more = 0;
    size_t spent = PL_READ_CHUNK;
    pl_delivery_file_turn(f);
    if (f->kind == PS_INPUT_LINES)
      more = pl_reader_lines_turn(rd, f, budget, &spent);
    else
      more = pl_reader_doc_turn(rd, f);
    if (more && !f->retired && !f->paused) {
      pl_reader_enqueue(rd, f);
      if (f->yielded)
        pl_reader_to_front(rd, f);
    }
    /* f may be freed here (retired while processed): not touched again */
    spent = spent ? spent : 1; /* a file with nothing new still costs a turn */
    budget = budget > spent ? budget - spent : 0;
  }
  if (!rd->q_head) {
    uv_idle_stop(&rd->work);
    if (rd->hooks.idle)
      rd->hooks.idle(rd->hooks.ctx);
  }
}

void pl_reader_resume(pl_reader *rd) {
  if (rd->sh->stopping || pl_delivery_full(rd->dl))
    return;
  /* A paused file goes first: it holds a line (perhaps a 9 MB perf-finish
   * record) that the others would otherwise each read and hold too. This
   * runs after every answer of the sink, so the files are walked only when
   * one was paused since the last walk. */
  if (rd->maybe_paused) {
    rd->maybe_paused = 0;
    for (pl_file *f = rd->reg->files; f; f = f->next)
      if (f->paused) {
        f->paused = 0;
        pl_reader_enqueue(rd, f);
        pl_reader_to_front(rd, f);
      }
  }
  /* work_cb also stops while the batcher is full (see there) */
  if (rd->q_head && !uv_is_active((uv_handle_t *)&rd->work))
    uv_idle_start(&rd->work, work_cb);
}


void pl_reader_close_idle(pl_reader *rd) {
  uint64_t now = uv_now(rd->sh->loop);
  uint64_t idle_ms = IDLE_CLOSE_RESCANS * (uint64_t)rd->sh->cfg->watch.rescan_interval_ms;
  for (pl_file *f = rd->reg->files; f; f = f->next)
    if (!f->retired && f->kind == PS_INPUT_LINES && f->fd >= 0 && !f->queued && !f->paused &&
        !f->draining && !f->tail.have_cur && ps_tail_buffered(&f->tail) == 0 &&
        f->cur.committed == ps_tail_offset(&f->tail) && now - f->last_read_ms >= idle_ms) {
      ps_tail_trim(&f->tail);
      close(f->fd);
      f->fd = f->tail.fd = -1;
    }
}

/* --- state for the service --------------------------------------------------- */

int pl_reader_file_done(const pl_file *f) {
  if (f->queued || f->paused || f->doc_loaded || f->settle_due)
    return 0;
  if (f->kind == PS_INPUT_DOCUMENT)
    return f->cur.committed_doc_hash == f->cur.last_doc_hash;
  return f->at_end && f->cur.committed == ps_tail_offset(&f->tail);
}

int pl_reader_done(const pl_reader *rd) {
  if (rd->q_head)
    return 0;
  for (const pl_file *f = rd->reg->files; f; f = f->next)
    if (!f->retired &&
        (f->paused || f->doc_loaded || (f->kind == PS_INPUT_DOCUMENT && f->settle_due)))
      return 0;
  return 1;
}

void pl_reader_stop(pl_reader *rd) {
  uv_idle_stop(&rd->work);
  uv_timer_stop(&rd->settle_timer);
}

void pl_reader_close(pl_reader *rd) {
  if (!uv_is_closing((uv_handle_t *)&rd->work))
    uv_close((uv_handle_t *)&rd->work, NULL);
  if (!uv_is_closing((uv_handle_t *)&rd->settle_timer))
    uv_close((uv_handle_t *)&rd->settle_timer, NULL);
}
