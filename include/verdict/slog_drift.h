/*
 * slog_drift: does a loadgen run's chain stay stable inside, stage against
 * stage? Each complete loadgen stage's BOYD share and its busiest vats'
 * delivery seconds per cycle, from the chain's slog, against the run's
 * first loadgen stage (docs/verdicts.md, "Within a run (stage drift)").
 *
 * Contract
 * - Input: one run (only a successful run is judged, as the other stage
 *   drift) with its stages in any order (loadgen_stage's `loadgen` and the
 *   loadgen_slog_stage figures; NaN where absent) and the
 *   loadgen_slog_vat rows of its stages (any order; rows of stages not
 *   given are ignored).
 * - The first loadgen stage is the lowest stage whose `loadgen` is 1. It
 *   is the baseline only when it is complete (not partial) and has
 *   finished cycles; otherwise nothing is judged yet (its slog is still
 *   being read). Judged are the later stages that are complete and have
 *   finished cycles.
 * - stage_boydShare: value and baseline the share in percent (boydShare x
 *   100); regression when it rose by cfg->stage_drift_boyd_points points or
 *   more, improvement when it fell by as much, none otherwise. A stage
 *   without a share (no delivery seconds) on either side: no verdict.
 * - stage_vatSecondsPerCycle, tag `vat`: for the vats that carry at
 *   least PS_SLOG_DRIFT_MIN_SHARE of the judged stage's delivery seconds,
 *   the PS_SLOG_DRIFT_TOP_VATS largest (ties by vat ID), and that the first
 *   loadgen stage has with delivery seconds above 0: value the vat's
 *   delivery seconds over the stage's finished cycles, baseline the same in
 *   the first loadgen stage. Regression when it rose by cfg->stage_drift_pct
 *   percent or more AND by as much more than the other vats' delivery
 *   seconds per cycle together (value/baseline over theirs): a chain that
 *   slows as a whole is stage_avgSwingsetTime's verdict, and naming every
 *   vat for it would name none. Improvement the mirror; none otherwise.
 * - Every verdict: method stage_drift, tag `stage`, time = the judged
 *   stage's loadgen_slog_stage point (so judging again rewrites the same
 *   points), change_run = the run. At most 1 + PS_SLOG_DRIFT_TOP_VATS
 *   verdicts per judged stage.
 * - With the per-block figures (`blocks` not NULL: loadgen_slog_block and
 *   loadgen_slog_block_vat rows of the run, any order), a change must also
 *   be significant (verdict/stage_test.h: batch means over the stage's
 *   blocks in time order, p adjusted for the run's stage family below
 *   PS_STAGE_FAMILY_ALPHA; the family counts the stages after the first
 *   loadgen stage that ran the load generator or are judged here, and
 *   family_size and p_adjusted are on each verdict): the BOYD share as
 *   BOYD seconds over delivery seconds per block, in points; a vat as its
 *   own change, its delivery seconds over the other vats' per block (its
 *   share of the chain's time), relative. The verdict carries the p-value.
 *   A stage or first stage without enough blocks (fewer than 2 batches)
 *   cannot show one: none, no p-value. Without them (NULL) the threshold
 *   alone decides, and no p-value is given.
 * - Strings are borrowed from the input (verdict.h). No I/O, no globals.
 *   Returns 0 or -ENOMEM.
 */
#ifndef PS_VERDICT_SLOG_DRIFT_H
#define PS_VERDICT_SLOG_DRIFT_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "runs/runs.h"
#include "verdict/verdict.h"

#define PS_SLOG_DRIFT_TOP_VATS 5
#define PS_SLOG_DRIFT_MIN_SHARE 0.05

typedef struct ps_slog_drift_stage {
  int stage;
  int loadgen;       /* loadgen_stage.loadgen: 1, 0, or -1 unknown */
  int partial;       /* loadgen_slog_stage.partial (absent: 1) */
  double cycles;     /* finishedCycles; NaN or 0: none */
  double delivery_s; /* deliverySeconds */
  double boyd_share; /* boydShare, 0-1 */
  int64_t time_ns;   /* the loadgen_slog_stage point's; -1 without one */
} ps_slog_drift_stage;

typedef struct ps_slog_drift_vat {
  int stage;
  const char *vat;  /* vatID */
  const char *name; /* NULL when the slog named none */
  double delivery_s;
} ps_slog_drift_vat;

/* One closed block of a stage (loadgen_slog_block). */
typedef struct ps_slog_drift_block {
  int stage;
  int64_t time_ns; /* the begin-block's, the key of its vats' rows */
  double delivery_s, boyd_s;
} ps_slog_drift_block;

/* One vat's deliveries in one block (loadgen_slog_block_vat); a vat
 * without a row in a block had none there. */
typedef struct ps_slog_drift_block_vat {
  int stage;
  int64_t time_ns;
  const char *vat;
  double delivery_s;
} ps_slog_drift_block_vat;

typedef struct ps_slog_drift_blocks {
  const ps_slog_drift_block *blocks;
  size_t nblocks;
  const ps_slog_drift_block_vat *vats;
  size_t nvats;
} ps_slog_drift_blocks;

typedef struct ps_slog_drift_run {
  const char *source, *series, *run, *revision;
  ps_run_status status;
  int backfill;
} ps_slog_drift_run;

int ps_slog_drift(const ps_verdicts_cfg *cfg, const ps_slog_drift_run *run,
                  const ps_slog_drift_stage *stages, size_t nstages, const ps_slog_drift_vat *vats,
                  size_t nvats, const ps_slog_drift_blocks *blocks, ps_verdict_list *out);

#endif
