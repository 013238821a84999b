/*
 * formats/slog_reduce: one stage's slog (chain-stage-N.slog.gz) reduced to
 * the loadgen_slog_block, loadgen_slog_block_vat, loadgen_slog_vat and
 * loadgen_slog_stage points
 * (docs/schema.md "Slog figures" defines every figure; docs/loadgen.md
 * "Slogs" says when they are written).
 *
 * Contract
 * - Parse only: the driver (input/feed_slog.h) reads the file and hands
 *   every line in order, as input/gzlines.h gives it, to
 *   ps_slog_reduce_line(); ps_slog_reduce_finish() says how the stream
 *   ended. A reducer reads one stage once, from its first line.
 * - Block points, and the block's per-vat points, go out as their block
 *   closes (the next begin-block, or the end of a complete file); vat and
 *   stage points at finish. A stage whose file is not complete is
 *   `partial`: its open block is left out, the rest is what was read.
 *   Every point's time comes from the slog, so reading the stage again (a
 *   restart, the file grown) writes the same series and times and
 *   overwrites what was written before.
 * - A line that is no slog event is rejected through `em` (the driver has
 *   set em->origin.line); it is counted and stops nothing.
 * - Memory: the open block (its per-vat sums inside the vat entries), one
 *   entry per vat (at most PS_SLOG_MAX_VATS; more are one rejected line
 *   each), and 8 bytes per non-replay delivery for each vat's p95.
 * - Returns 0 or the emitter's negative errno (-ENOMEM when the reducer's
 *   own memory ran out).
 */
#ifndef PS_FORMATS_SLOG_REDUCE_H
#define PS_FORMATS_SLOG_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "core/emit.h"

#define PS_SLOG_MAX_VATS 4096
/* A vat's delivery-seconds trend needs this many blocks with its deliveries. */
#define PS_SLOG_TREND_MIN_BLOCKS 10

typedef struct ps_slog_reducer ps_slog_reducer;

/* Tags of every point: run, test_type and revision (empty: left out) and
 * stage. The strings are copied. */
int ps_slog_reduce_new(ps_slog_reducer **out, const char *run, const char *test_type,
                       const char *revision, const char *stage);
/* The stage's finished loadgen cycles from perf.jsonl (docs/schema.md),
 * for the growth per cycle; unset or <= 0: no growth figures. */
void ps_slog_reduce_set_cycles(ps_slog_reducer *r, int64_t finished);
int ps_slog_reduce_line(ps_slog_reducer *r, const char *head, size_t head_len,
                        const char *tail, size_t tail_len, uint64_t len, ps_emitter *em);
/* `complete`: the file ended with its gzip trailer; `bytes`: uncompressed
 * bytes read. Without `complete` it is a snapshot of what was read, and
 * more lines may follow (the live agent reads a running stage on). */
int ps_slog_reduce_finish(ps_slog_reducer *r, int complete, uint64_t bytes, ps_emitter *em);
void ps_slog_reduce_free(ps_slog_reducer *r);

#endif
