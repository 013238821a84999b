/*
 * stage_drift.c: stages of one loadgen run against its first loadgen stage
 * (include/verdict/stage_drift.h; docs/verdicts.md, "Within a run").
 *
 * DESIGN
 * - No statistics beyond a threshold: a run has a handful of stages, each
 *   already an average over hundreds of blocks or cycles, so the stage
 *   figure is the evidence and the question is only how far it moved.
 * - Which direction is worse is the figure's row (core/figures.h): all
 *   three are durations, so slower is worse for each.
 */
#include "verdict/stage_drift.h"

#include <math.h>

/* Where each stage figure (core/figures.h, ps_stage_figure_id) is kept;
 * its name is the table's. */
static const size_t slot[PS_STAGE_NFIGURES] = {
    [PS_STAGE_FIG_AVG_DURATION] = offsetof(ps_stage_figures, avg_duration),
    [PS_STAGE_FIG_SWINGSET_TIME] = offsetof(ps_stage_figures, avg_swingset_time),
    [PS_STAGE_FIG_BLOCK_DURATION] = offsetof(ps_stage_figures, avg_block_duration),
};

double *ps_stage_figure_at(ps_stage_figures *s, ps_stage_figure_id id) {
  return (double *)((char *)s + slot[id]);
}

static double figure(const ps_stage_figures *s, size_t offset) {
  return *(const double *)((const char *)s + offset);
}

int ps_stage_drift(const ps_verdicts_cfg *cfg, const char *source, const char *series,
                   const ps_verdict_run *run, const ps_stage_figures *stages, size_t n,
                   ps_verdict_list *out) {
  if (run->status != PS_RUN_STATUS_SUCCESS)
    return 0;
  const ps_stage_figures *first = NULL;
  for (size_t i = 0; i < n; i++)
    if (stages[i].loadgen && (!first || stages[i].stage < first->stage))
      first = &stages[i];
  if (!first)
    return 0;
  /* later stages in stage order, whatever order they came in */
  int after = first->stage;
  for (;;) {
    const ps_stage_figures *next = NULL;
    for (size_t i = 0; i < n; i++)
      if (stages[i].loadgen && stages[i].stage > after &&
          (!next || stages[i].stage < next->stage))
        next = &stages[i];
    if (!next)
      break;
    after = next->stage;
    for (int m = 0; m < PS_STAGE_NFIGURES; m++) {
      double base = figure(first, slot[m]);
      double value = figure(next, slot[m]);
      if (!isfinite(base) || !isfinite(value))
        continue;
      ps_verdict v = ps_verdict_blank();
      v.source = source;
      v.series = series;
      v.metric = ps_stage_figure((ps_stage_figure_id)m)->name;
      v.run = run->name;
      v.stage = next->stage;
      v.method = PS_METHOD_STAGE_DRIFT;
      v.value = value;
      v.baseline = base;
      v.change_run = run->name;
      v.revision = run->revision;
      v.backfill = run->backfill;
      v.time_ns = run->start_ns;
      if (base != 0.0 &&
          ps_verdict_beyond(value, base, cfg->stage_drift_pct, PS_CHANGE_PERCENT))
        v.verdict = ps_verdict_direction(value, base, ps_stage_figure((ps_stage_figure_id)m)->worse);
      int rc = ps_verdict_list_push(out, &v);
      if (rc)
        return rc;
    }
  }
  return 0;
}
