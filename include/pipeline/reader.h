/*
 * pipeline/reader: reading tracked files in budgeted slices on the loop.
 *
 * Contract
 * - Reading is synchronous pread() on regular files, done from an idle
 *   handle in slices (a budget of bytes per loop turn), so a 10 MB line or
 *   a backlog of gigabytes never starves the sink's sockets. The idle
 *   handle runs only while some file is queued: an agent with nothing to
 *   read sleeps in epoll.
 * - Line files give complete lines to their parser (an unterminated last
 *   line waits; pl_reader_read_partial() hands it over when the run tracker
 *   knows the file is complete). Documents are read whole, once settled
 *   (watch.settle_ms without a change; at once in --once), and parsed only
 *   when their content hash differs from the acknowledged one.
 * - A truncated or rewritten-in-place line file is retired and tracked
 *   again from offset 0; a file gone from its path is drained from its
 *   descriptor, kept settle_ms for a producer that still writes, then
 *   retired. A fully acknowledged file idle for two rescans gives back its
 *   descriptor (pl_reader_close_idle) and is reopened, identity checked,
 *   when it changes: a year of run folders must not hold a year of fds.
 * - Back-pressure: a file whose point was refused is `paused` and resumed
 *   first by pl_reader_resume(), after an acknowledgement made room; while
 *   the batcher is full no other file starts parsing.
 * - Hooks: `parser_opened` after a line file's parser was created (the run
 *   tracker restores facts learned before a restart); `at_end` when a line
 *   file was read to the end of what exists (a run may be judged now);
 *   `idle` when the queue ran empty (a --once run may be complete).
 */
#ifndef PS_PIPELINE_READER_H
#define PS_PIPELINE_READER_H

#include <sys/stat.h>
#include <uv.h>

#include "core/buf.h"
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
  uv_idle_t work;   /* runs the loop turn while a file is queued */
  uv_timer_t settle_timer;
  /* --once: the read buffer a file let go, for the next file to read
   * into; kept while files are queued. A backfill's runs each grew a
   * 16 MiB buffer for their perf-finish line and faulted it in page by
   * page (docs/benchmarks.md, "Ninth pass"). */
  ps_buf spare;
} pl_reader;

void pl_reader_init(pl_reader *rd, pl_shared *sh, pl_registry *reg, pl_delivery *dl,
                    pl_commit *commit, const pl_reader_hooks *hooks);
/* Room was made: paused files first, then the rest of the queue. */
void pl_reader_resume(pl_reader *rd);
void pl_reader_close_idle(pl_reader *rd);
/* Nothing queued, paused, loaded or waiting to settle. */
int pl_reader_done(const pl_reader *rd);
/* Read to the end of what existed and everything from it acknowledged. */
int pl_reader_file_done(const pl_file *f);
/* Stops reading (a stop began). */
void pl_reader_stop(pl_reader *rd);
void pl_reader_close(pl_reader *rd);

/* Queues a file at the end (no-op when it is retired, already queued, or
 * a stop began) and starts the reader's turn. */
void pl_reader_enqueue(pl_reader *rd, pl_file *f);
/* Reads the unterminated last line of a complete line file as a line. */
void pl_reader_read_partial(pl_reader *rd, pl_file *f);
/* A document at its path changed (size or modification time in `st`):
 * read it once it has settled. */
void pl_reader_doc_changed(pl_reader *rd, pl_file *f, const struct stat *st);
/* The file was seen again under a source; it waits to settle no more
 * (`settle_due` is the reader's). */
void pl_reader_settle_cancel(pl_file *f);

#endif
