/*
 * pipeline/slogs: the chain slogs of tracked loadgen run folders, read as
 * the stages run, into the slog figures (formats/slog_reduce.h;
 * docs/schema.md "Slog figures", docs/loadgen.md "Slogs").
 *
 * Contract
 * - pl_slogs_note_path() is told of every path a source event or scan
 *   names (the service passes them on beside the router). A
 *   chain-stage-N.slog.gz in a run folder of a source whose format has run
 *   folders is read from its first byte, in slices of at most
 *   SLOG_SLICE_BYTES decompressed per loop turn, and its points go out as
 *   aux batches (pl_aux_out), outside the checkpoints.
 * - A stage still being written (no gzip trailer yet) is read to the end
 *   of what exists; its closed blocks go out, then a partial stage and vat
 *   snapshot (partial=true). The next event or scan naming it reads on
 *   from there; once the file is complete the stage's final points
 *   overwrite the snapshot (same series and times).
 * - Nothing is lost or doubled across a crash: no offset is kept, a stage
 *   is read again from its start after a restart, and every point is
 *   keyed by its time from the slog. A stage is remembered as done (path,
 *   size, modification time; state section "slogs") only once every batch
 *   of its complete file was acknowledged; a batch that was not makes the
 *   stage be read again from its start. A running stage is remembered
 *   too once its snapshot is acknowledged, so a restart that finds its file
 *   unchanged sends nothing again; one that finds it grown reads it again
 *   from its start.
 * - Growth per cycle needs the stage's finished cycles (perf-finish, which
 *   comes at the run's end): pl_slogs_tap() counts the loadgen_cycle
 *   points with finished=true per run folder and stage; a stage whose
 *   count changed after it was read is read again.
 * - Bad lines and corrupt gzip data are counted as rejected records and
 *   logged as FILE:LINE: reason (rate limited), as the reader does.
 * - While the hooks say the reader is busy, no slog is read: perf.jsonl
 *   goes first (its cycles make a second read of each stage unneeded).
 * - pl_slogs_busy(): some stage has lines left to read now or batches in
 *   flight (`run --once` waits for it). The `idle` hook runs when that
 *   becomes false. pl_slogs_run_pending() asks the same of one run's
 *   stages.
 */
#ifndef PS_PIPELINE_SLOGS_H
#define PS_PIPELINE_SLOGS_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/point.h"
#include "pipeline/shared.h"

/* The measurement pl_slogs_tap() wants: subscribe it (pipeline/delivery.h). */
#define PL_SLOGS_TAP "loadgen_cycle"

typedef struct pl_slog_stage pl_slog_stage;
typedef struct pl_slog_done pl_slog_done;
typedef struct pl_slog_cyc pl_slog_cyc;

typedef struct pl_slogs_hooks {
  void (*idle)(void *ctx);
  /* Lines of sources are still to be read (NULL: never). Slogs wait for
   * them: perf.jsonl has the cycles their growth needs, and its points
   * come first. pl_slogs_kick() says they may go on. */
  int (*reader_busy)(void *ctx);
  void *ctx;
  /* Every point as it is encoded (NULL: none): the judges see the stage
   * points (a kernel leak is judged from them, docs/verdicts.md). */
  void (*point)(void *ctx, const ps_point *p);
  /* A complete stage's points were all acknowledged (NULL: none): the
   * judges read the run's slog figures back (docs/verdicts.md, "Within a
   * run"). `stage_ns` is its loadgen_slog_stage point's time. */
  void (*stage_done)(void *ctx, const char *run, const char *test_type, int64_t stage_ns);
} pl_slogs_hooks;

typedef struct pl_slogs {
  pl_shared *sh;
  pl_aux_out out;
  pl_slogs_hooks hooks;
  pl_slog_stage *stages;
  pl_slog_done *done;
  pl_slog_cyc *cycles;
  uv_idle_t idle;
  int idle_on;
  int held; /* waiting for the reader (hooks.reader_busy) */
  size_t in_flight; /* batches of every stage */
  int any_read;     /* a stage was opened: a new cycle may make its read stale */
  int closed;
} pl_slogs;

void pl_slogs_init(pl_slogs *t, pl_shared *sh, const pl_aux_out *out,
                   const pl_slogs_hooks *hooks);
/* The stages done before (pl_slogs_to_json); NULL is fine. */
void pl_slogs_from_json(pl_slogs *t, const char *text);
char *pl_slogs_to_json(pl_slogs *t);
void pl_slogs_note_path(pl_slogs *t, const ps_source_cfg *src, const char *path);
void pl_slogs_tap(pl_slogs *t, const ps_point *p, const char *path);
int pl_slogs_busy(const pl_slogs *t);
/* Has the run (its folder's name) a slog stage that is still to be read
 * or to be acknowledged: what the judges wait for before they read its
 * slog figures back (docs/alerts.md `cause`). A stage still being written
 * and read to its end so far is not. */
int pl_slogs_run_pending(const pl_slogs *t, const char *run);
void pl_slogs_kick(pl_slogs *t);
void pl_slogs_close(pl_slogs *t);
void pl_slogs_free(pl_slogs *t);

#endif
