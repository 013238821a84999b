/*
 * reader_settle.c: settling documents and files gone from their path. See
 * agent/pipeline/reader_settle.h.
 */
#include "reader_settle.h"

#include <stdint.h>

#include "core/util.h"
#include "reader_queue.h"

static void settle_cb(uv_timer_t *t) {
  pl_reader *rd = t->data;
  uint64_t now = uv_now(rd->sh->loop);
  for (pl_file *f = rd->reg->files; f; f = f->next) {
    if (f->retired || !f->settle_due || f->doc_loaded || f->settle_due > now)
      continue;
    if (f->kind == PS_INPUT_LINES) {
      pl_reader_enqueue(rd, f); /* a draining file's grace time is over */
      continue;
    }
    struct stat st;
    if (stat(f->path, &st) < 0) {
      f->settle_due = 0;
      continue;
    }
    if ((uint64_t)st.st_size != f->doc_size || ps_stat_mtime_ns(&st) != f->doc_mtime_ns) {
      f->doc_size = (uint64_t)st.st_size;
      f->doc_mtime_ns = ps_stat_mtime_ns(&st);
      f->settle_due = now + (uint64_t)rd->sh->cfg->watch.settle_ms;
      continue;
    }
    pl_reader_enqueue(rd, f);
  }
  pl_reader_arm_settle(rd);
}

void pl_reader_arm_settle(pl_reader *rd) {
  uint64_t next = 0;
  for (pl_file *f = rd->reg->files; f; f = f->next)
    if (!f->retired && f->settle_due && !f->queued && !f->doc_loaded &&
        (!next || f->settle_due < next))
      next = f->settle_due;
  if (!next || rd->sh->stopping) {
    uv_timer_stop(&rd->settle_timer);
    return;
  }
  uint64_t now = uv_now(rd->sh->loop);
  uv_timer_start(&rd->settle_timer, settle_cb, next > now ? next - now : 0, 0);
}

void pl_reader_doc_changed(pl_reader *rd, pl_file *f, const struct stat *st) {
  if (f->doc_loaded)
    return; /* being sent; a newer version is looked at afterwards */
  if ((uint64_t)st->st_size == f->doc_size && ps_stat_mtime_ns(st) == f->doc_mtime_ns &&
      f->settle_due == 0 && f->cur.last_doc_hash)
    return; /* unchanged since it was last read */
  if ((uint64_t)st->st_size != f->doc_size || ps_stat_mtime_ns(st) != f->doc_mtime_ns ||
      !f->settle_due) {
    f->doc_size = (uint64_t)st->st_size;
    f->doc_mtime_ns = ps_stat_mtime_ns(st);
    f->settle_due =
        rd->sh->once ? 1 : uv_now(rd->sh->loop) + (uint64_t)rd->sh->cfg->watch.settle_ms;
  }
  if (rd->sh->once)
    pl_reader_enqueue(rd, f);
  else
    pl_reader_arm_settle(rd);
}

void pl_reader_settle_cancel(pl_file *f) { f->settle_due = 0; }
