/*
 * reader_queue.c: the reader's work queue. See agent/pipeline/reader_queue.h.
 */
#include "reader_queue.h"

#include <stddef.h>

void pl_reader_enqueue(pl_reader *rd, pl_file *f) {
  if (f->queued || f->retired || rd->sh->stopping)
    return;
  f->queued = 1;
  f->qnext = NULL;
  if (rd->q_tail)
    rd->q_tail->qnext = f;
  else
    rd->q_head = f;
  rd->q_tail = f;
  if (!uv_is_active((uv_handle_t *)&rd->work))
    uv_idle_start(&rd->work, rd->turn);
}

pl_file *pl_reader_dequeue(pl_reader *rd) {
  pl_file *f = rd->q_head;
  if (!f)
    return NULL;
  rd->q_head = f->qnext;
  if (!rd->q_head)
    rd->q_tail = NULL;
  f->queued = 0;
  return f;
}

void pl_reader_to_front(pl_reader *rd, pl_file *f) {
  if (!f->queued || rd->q_head == f)
    return;
  pl_file *prev = rd->q_head;
  while (prev->qnext != f)
    prev = prev->qnext;
  prev->qnext = f->qnext;
  if (rd->q_tail == f)
    rd->q_tail = prev;
  f->qnext = rd->q_head;
  rd->q_head = f;
}
