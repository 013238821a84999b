/*
 * pipeline/reader_queue: the reader stage's state (pl_reader, shared by
 * every reader_*.c; see pipeline/reader.h for the stage's contract) and its
 * work queue, the files with something to read, in order.
 *
 * Contract
 * - pl_reader_enqueue() queues a file at the end (no-op when it is retired,
 *   already queued, or a stop began) and starts the reader's turn (the idle
 *   handle runs rd->turn) if it was not running: an agent with nothing
 *   queued sleeps in epoll.
 * - pl_reader_to_front() moves a queued file to the head: a file that holds
 *   a half-read record, or was paused by back-pressure, continues first.
 * - The queue links the files (pl_file.qnext); it owns none of them.
 */
#ifndef PS_PIPELINE_READER_QUEUE_H
#define PS_PIPELINE_READER_QUEUE_H

#include <stdint.h>
#include <uv.h>

#include "pipeline/commit.h"
#include "pipeline/delivery.h"
#include "pipeline/registry.h"
#include "pipeline/shared.h"

typedef struct pl_reader_hooks {
  void (*parser_opened)(void *ctx, pl_file *f);
  void (*at_end)(void *ctx, pl_file *f);
  void (*idle)(void *ctx);
  void *ctx;
} pl_reader_hooks;

typedef struct pl_reader {
  pl_shared *sh;
  pl_registry *reg;
  pl_delivery *dl;
  pl_commit *commit;
  pl_reader_hooks hooks;
  pl_file *q_head, *q_tail;
  int maybe_paused; /* a file was paused since pl_reader_resume() last looked */
  uv_idle_t work; /* runs `turn` while a file is queued */
  uv_idle_cb turn;
  uv_timer_t settle_timer;
} pl_reader;


void pl_reader_enqueue(pl_reader *rd, pl_file *f);
/* The head of the queue, taken off it; NULL when empty. */
pl_file *pl_reader_dequeue(pl_reader *rd);
void pl_reader_to_front(pl_reader *rd, pl_file *f);

#endif
