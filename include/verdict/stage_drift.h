/*
 * stage_drift: does a loadgen run stay stable over its lifetime? Each
 * loadgen stage after the first is compared with the run's first loadgen
 * stage (docs/verdicts.md, "Within a run").
 *
 * Contract
 * - Input: one run (only a successful run is judged: any other gets no
 *   verdict) and its stages in any order, each with the three figures
 *   docs/schema.md names: loadgen_stage_cycles (task=all) avgDuration,
 *   loadgen_stage_blocks (summary=onlyLive) avgSwingsetTime and
 *   avgBlockDuration; NaN where a figure is absent. Only stages with
 *   `loadgen` set take part (not chain-only, not setup-only).
 * - Output: for every later loadgen stage and figure that both it and the
 *   first loadgen stage have, one verdict (metric stage_avgDuration,
 *   stage_avgSwingsetTime, stage_avgBlockDuration; method stage_drift):
 *   regression when the stage is slower by cfg->stage_drift_pct percent or
 *   more, improvement when faster by as much, none otherwise. A first stage
 *   at 0 gives none (no relative change exists).
 * - With the samples behind the figures (`samples`, one entry per stage,
 *   any order), a change must also be significant (verdict/stage_test.h:
 *   batch means over the stage's samples in time order, the relative
 *   change tested, p adjusted for the run's stage family below
 *   PS_STAGE_FAMILY_ALPHA, family_size and p_adjusted on each verdict,
 *   the family counted from the loadgen stages after the first):
 *   swingset time from the
 *   live blocks' swingsetTime, block duration from the gaps between
 *   consecutive live blocks' beginAt, cycle duration from the successful
 *   cycles' duration. The verdict carries the p-value. When both stages
 *   have samples of a figure the test decides (too few for 2 batches:
 *   none); when either has none (the points were read before a restart,
 *   and samples are not saved) the threshold alone does, without a
 *   p-value, as with `samples` NULL.
 * - Strings are borrowed from the input (verdict.h). Returns 0 or -ENOMEM.
 */
#ifndef PS_VERDICT_STAGE_DRIFT_H
#define PS_VERDICT_STAGE_DRIFT_H

#include <stddef.h>

#include "core/config.h"
#include "core/figures.h"
#include "verdict/judge.h"
#include "verdict/verdict.h"

typedef struct ps_stage_figures {
  int stage;                 /* the stage index */
  int loadgen;               /* loadgen_stage.loadgen */
  double avg_duration;       /* cycles of the stage, s */
  double avg_swingset_time;  /* live blocks of the stage, s */
  double avg_block_duration; /* live blocks of the stage, s */
} ps_stage_figures;

/* The samples behind one stage's figures, each in time order. */
typedef struct ps_stage_samples {
  int stage;
  const double *swingset_time; /* per live block, s */
  size_t nswingset;
  const double *block_gap; /* between consecutive live blocks' beginAt, s */
  size_t ngaps;
  const double *cycle_duration; /* per successful cycle, s */
  size_t ncycles;
} ps_stage_samples;

/* The figure `id` of a stage (core/figures.h, ps_stage_figure_id). */
double *ps_stage_figure_at(ps_stage_figures *s, ps_stage_figure_id id);

int ps_stage_drift(const ps_verdicts_cfg *cfg, const char *source, const char *series,
                   const ps_verdict_run *run, const ps_stage_figures *stages, size_t n,
                   const ps_stage_samples *samples, size_t nsamples, ps_verdict_list *out);

#endif
