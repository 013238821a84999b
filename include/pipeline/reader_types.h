/*
 * pipeline/reader_types: the reader stage's types, shared by its files
 * (reader.c and the reader_*.c it drives). See pipeline/reader.h for the
 * stage's contract. Types only: no functions.
 */
#ifndef PS_PIPELINE_READER_TYPES_H
#define PS_PIPELINE_READER_TYPES_H

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

#endif
