/*
 * stage_drift.c: stages of one loadgen run against its first loadgen stage
 * (include/verdict/stage_drift.h; docs/verdicts.md, "Within a run").
 *
 * DESIGN
 * - The threshold says how far a figure must move to matter; the samples
 *   behind it say whether it moved at all: a 4-minute stage averages 48
 *   blocks and 12-19 cycles, whose mean swings by 10 % and more on a
 *   steady chain (stage_test.h).
 * - Which direction is worse is the figure's row (core/figures.h): all
 *   three are durations, so slower is worse for each.
 */
#include "verdict/stage_drift.h"

#include <math.h>

#include "verdict/stage_test.h"

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

/* The samples of figure `id` of `stage` (*n 0: none). */
static const double *samples_of(const ps_stage_samples *samples, size_t nsamples, int stage,
                                ps_stage_figure_id id, size_t *n) {
  *n = 0;
  for (size_t i = 0; samples && i < nsamples; i++) {
    const ps_stage_samples *s = &samples[i];
    if (s->stage != stage)
      continue;
    switch (id) {
    case PS_STAGE_FIG_AVG_DURATION: *n = s->ncycles; return s->cycle_duration;
    case PS_STAGE_FIG_SWINGSET_TIME: *n = s->nswingset; return s->swingset_time;
    case PS_STAGE_FIG_BLOCK_DURATION: *n = s->ngaps; return s->block_gap;
    default: return NULL;
    }
  }
  return NULL;
}

/* The p-value of figure `id` from the first stage to `stage`: NaN when it
 * cannot be tested; *tested 0 when either stage has no samples. */
static double change_p(const ps_stage_samples *samples, size_t nsamples, int first, int stage,
                       ps_stage_figure_id id, int *tested) {
  size_t n1, nk;
  const double *x1 = samples_of(samples, nsamples, first, id, &n1);
  const double *xk = samples_of(samples, nsamples, stage, id, &nk);
  *tested = x1 && xk && n1 && nk;
  ps_batch_estimate e1, ek;
  ps_stage_change c;
  if (!*tested || ps_batch_means(x1, NULL, n1, &e1) < 0 || ps_batch_means(xk, NULL, nk, &ek) < 0 ||
      ps_stage_change_test(&e1, &ek, PS_STAGE_TEST_LOG, &c) < 0)
    return NAN;
  return c.p_value;
}

int ps_stage_drift(const ps_verdicts_cfg *cfg, const char *source, const char *series,
                   const ps_verdict_run *run, const ps_stage_figures *stages, size_t n,
                   const ps_stage_samples *samples, size_t nsamples, ps_verdict_list *out) {
  if (run->status != PS_RUN_STATUS_SUCCESS)
    return 0;
  const ps_stage_figures *first = NULL;
  for (size_t i = 0; i < n; i++)
    if (stages[i].loadgen && (!first || stages[i].stage < first->stage))
      first = &stages[i];
  if (!first)
    return 0;
  size_t judged = 0;
  for (size_t i = 0; i < n; i++)
    judged += stages[i].loadgen && stages[i].stage > first->stage;
  long family = ps_stage_family_size(judged);
  /* later stages in stage order, whatever order they came in */
  int after = first->stage;
  for (;;) {
    const ps_stage_figures *next = NULL;
    for (size_t i = 0; i < n; i++)
      if (stages[i].loadgen && stages[i].stage > after && (!next || stages[i].stage < next->stage))
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
      int tested;
      v.p_value = change_p(samples, nsamples, first->stage, next->stage, (ps_stage_figure_id)m,
                           &tested);
      v.family_size = family;
      v.p_adjusted = ps_stage_p_adjusted(v.p_value, family);
      if (base != 0.0 && ps_verdict_beyond(value, base, cfg->stage_drift_pct, PS_CHANGE_PERCENT) &&
          (!tested || ps_stage_significant(v.p_adjusted)))
        v.verdict = ps_verdict_direction(value, base,
                                         ps_stage_figure((ps_stage_figure_id)m)->worse);
      int rc = ps_verdict_list_push(out, &v);
      if (rc)
        return rc;
    }
  }
  return 0;
}
