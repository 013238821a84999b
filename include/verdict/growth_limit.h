/*
 * growth_limit: does a loadgen stage's kernel leak? Its kernel objects,
 * unresolved promises and c-list entries per finished cycle are held
 * against an absolute limit (docs/verdicts.md, "Kernel growth against a
 * limit"), because a leak present since the first run is the level of
 * every run and never shows as a change across revisions.
 *
 * Contract
 * - Input: one loadgen_slog_stage's growth figures (core/figures.h,
 *   ps_growth_figure_id order; NaN where the point has none) and what the
 *   verdicts name (run, series, revision, stage, time).
 * - Stage 0 (setup grows by design) and a partial stage (its growth holds
 *   the objects of cycles still running) get no verdict: the caller passes
 *   only complete stages after 0; ps_growth_judged() says which.
 * - Output: one verdict per figure the stage has (metric = the figure's
 *   name, method `limit`, value = the growth, baseline = the limit):
 *   regression when the growth is above cfg->max_growth_per_cycle, none
 *   otherwise (no improvement: below the limit is where it belongs).
 * - Strings are borrowed from the input (verdict.h). Returns 0 or -ENOMEM.
 */
#ifndef PS_VERDICT_GROWTH_LIMIT_H
#define PS_VERDICT_GROWTH_LIMIT_H

#include <stdint.h>

#include "core/config.h"
#include "core/figures.h"
#include "verdict/verdict.h"

typedef struct ps_growth_stage {
  const char *source, *series, *run, *revision;
  int stage;
  int partial;
  int backfill;
  int64_t time_ns; /* the loadgen_slog_stage point's */
  double growth[PS_GROWTH_NFIGURES];
} ps_growth_stage;

/* Whether this stage is one the limit applies to. */
int ps_growth_judged(const ps_growth_stage *s);

int ps_growth_limit(const ps_verdicts_cfg *cfg, const ps_growth_stage *s,
                    ps_verdict_list *out);

#endif
