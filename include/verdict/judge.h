/*
 * judge: the verdicts of one loadgen series across revisions: is a run's
 * metric notably worse or better than the runs before it (docs/verdicts.md,
 * "Across revisions").
 *
 * Contract
 * - A series is the runs of one `test_type` (on one host, or on every host:
 *   verdicts.series_by; a run is (host, name)), sorted by (start time, name):
 *   ps_verdict_runs_sort() puts them in that order, ps_verdict_judge()
 *   refuses (-EINVAL) any other. Runs that did not succeed may be in the
 *   list: they get no verdict and are in no baseline.
 * - A run's values are indexed like cfg->metrics; NaN means the run has no
 *   value for that metric (it is then not part of that metric's series).
 * - ps_verdict_judge() appends the verdicts of runs[from..n) to `out`, for
 *   every enabled metric, runs in order and metrics in configuration order
 *   for each run. A run's verdict depends only on the successful runs that
 *   started no later than it (the newest cfg->window_runs of them, itself
 *   included), so when a run arrives late, judging again from its position
 *   rewrites exactly the verdicts that can change; the result does not
 *   depend on the order in which runs arrived or on how often they are
 *   judged. A run whose metric series holds fewer than cfg->min_runs
 *   values up to it gets no verdict for that metric.
 * - A change is `regression` or `improvement` once, on the first run whose
 *   history shows it and whose family lets it through (the run's metrics'
 *   p-values adjusted by Holm's step-down: family_size and p_adjusted on
 *   each verdict); later runs at the new level get `none` with
 *   change_run naming the run that began it and the old level as baseline.
 * - Cost: every run from `from` on is evaluated (once per call). A driver
 *   that receives many runs at once, as a backfill does, judges each series
 *   once after reading them, from its oldest new run: judging at every
 *   arrival of a year read newest first costs about 180 times a single
 *   pass (docs/benchmarks.md, "Verdicts").
 * - Returns 0, -EINVAL (unsorted runs, a bad configuration), or -ENOMEM;
 *   on error `out` holds what was appended before it.
 */
#ifndef PS_VERDICT_JUDGE_H
#define PS_VERDICT_JUDGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "runs/runs.h"
#include "verdict/verdict.h"

typedef struct ps_verdict_run {
  const char *name;      /* as the run's `runs` markers carry it */
  const char *revision;  /* NULL when unknown */
  int64_t start_ns;      /* the loadgen_run point's time (stats.startedAt) */
  ps_run_status status;  /* only PS_RUN_STATUS_SUCCESS is judged */
  int backfill;          /* as on the run's markers */
  const double *values;  /* cfg->nmetrics values; NaN = absent */
  const char *host;      /* the host tag of its points; NULL: the agent's own */
} ps_verdict_run;

typedef struct ps_verdict_series {
  const char *source;    /* "loadgen" */
  const char *series;    /* the test_type */
  const ps_verdict_run *runs;
  size_t nruns;
} ps_verdict_series;

/* (start_ns, name) order, the order of a series. */
int ps_verdict_run_cmp(const ps_verdict_run *a, const ps_verdict_run *b);
void ps_verdict_runs_sort(ps_verdict_run *runs, size_t n);

int ps_verdict_judge(const ps_verdicts_cfg *cfg, const ps_verdict_series *s, size_t from,
                     ps_verdict_list *out);

#endif
