/*
 * input/feed_slog: the chain slogs of a loadgen run folder read into the
 * slog figures (formats/slog_reduce.h; docs/schema.md "Slog figures",
 * docs/loadgen.md "Slogs"), for `convert` and for the agent.
 *
 * Contract
 * - ps_slog_feed_stage() reads one chain-stage-N.slog.gz from its first
 *   byte (a gzip stream cannot be entered in the middle) through
 *   input/gzlines.h and the reducer, with em->origin set to the file and
 *   each line, and says in *complete whether the file ended with its
 *   trailer. Bad lines are rejects through `em`; so is a corrupt stretch
 *   of the gzip stream (at the line where it broke). A stream without its
 *   trailer (a stage still being written, or a killed runner's) is no
 *   reject: its stage point says partial=true.
 * - ps_slog_feed_folder() does that for every chain-stage-N.slog.gz of
 *   `folder` in stage order, the run named after the folder (resolved, so
 *   "." names it too: runs.h ps_run_id_from_name). client-stage-N.slog.gz is not read (it has
 *   no blocks and no kernel counters).
 * - Finished cycles per stage come from the points the loadgen parser
 *   gave for the folder's perf.jsonl: ps_slog_cycles_tap() makes an
 *   emitter that passes every point on to `inner` and counts the
 *   `loadgen_cycle` points with finished=true by their `stage` tag.
 * - Returns 0, or a negative errno when a file cannot be opened or read
 *   (message in `err`) or the emitter failed. Memory: see gzlines.h and
 *   slog_reduce.h; nothing grows with the line length.
 */
#ifndef PS_INPUT_FEED_SLOG_H
#define PS_INPUT_FEED_SLOG_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/emit.h"
#include "input/gzlines.h"
#include "runs/runs.h"

#define PS_SLOG_MAX_STAGES 256

typedef struct ps_slog_cycles {
  ps_emitter em; /* give this one to the perf.jsonl parser */
  ps_emitter *inner;
  int64_t finished[PS_SLOG_MAX_STAGES];
} ps_slog_cycles;

void ps_slog_cycles_tap(ps_slog_cycles *t, ps_emitter *inner);

/* The stage number of a chain-stage-N.slog.gz path (its base name), or -1. */
int ps_slog_stage_of(const char *path);

/* The reason a corrupt stream's reject gives (at st->corrupt_line), the
 * same words from `convert` and the agent: zlib's, how many stretches,
 * and that the stage is partial. */
void ps_slog_corrupt_reason(const ps_gzlines_status *st, char *out, size_t n);

int ps_slog_feed_stage(const char *path, const ps_run_id *id, int stage, int64_t cycles,
                       ps_emitter *em, int *complete, ps_buf *err);
int ps_slog_feed_folder(const char *folder, const ps_slog_cycles *cycles, ps_emitter *em,
                        ps_buf *err);

#endif
