/*
 * candidate: a run judged against the current level of another series (a
 * `manual` run of a PR image against `daily-perf` on the same host), so a
 * candidate gets a verdict from its first run instead of after its own
 * series has min_runs runs (docs/verdicts.md, "Candidates").
 *
 * Contract
 * - Both series are sorted as ps_verdict_runs_sort() sorts (else -EINVAL)
 *   and their values are indexed like cfg->metrics.
 * - ps_verdict_candidate() appends, for each successful run of
 *   cand->runs[from..n) and each enabled metric it has a value for, one
 *   verdict with method PS_METHOD_CANDIDATE and `against` naming the
 *   reference series. The level is that of the reference series as its
 *   newest successful run started no later than the candidate sees it: the
 *   runs since the change ps_verdict_judge() reports for it (with no change,
 *   its whole window). A level of fewer than cfg->min_runs runs (a change
 *   the nightly series has only just made) gives no verdict: its noise is
 *   not known yet.
 * - The runs of the candidate series up to and including the judged one
 *   that have its revision (a known one) are its sample: a PR image run
 *   three times is judged on the median of the three.
 * - The test: the sample's median against the level's median, with the
 *   level's run-to-run noise estimated robustly (1.4826 x the median
 *   absolute deviation); a change counts when it reaches the metric's
 *   minimum effect and CANDIDATE_GATE (3) standard errors of the
 *   difference. p_value is the normal two-sided p of that difference.
 * - A verdict's strings are borrowed from the inputs. A regression or
 *   improvement names the newest run of the level (good) and the candidate
 *   (bad) with their revisions.
 * - Pure: no I/O, no globals. Returns 0, -EINVAL or -ENOMEM (`out` then
 *   holds what was appended before it).
 */
#ifndef PS_VERDICT_CANDIDATE_H
#define PS_VERDICT_CANDIDATE_H

#include <stddef.h>

#include "core/config.h"
#include "verdict/judge.h"
#include "verdict/verdict.h"

/* How many standard errors of the difference a candidate must be away from
 * the level (docs/verdicts.md, "Candidates", measures the choice). */
#define PS_CANDIDATE_GATE 3.0

/* The test itself, on plain numbers: the sample y[0..ny) against the level
 * x[0..nx) for one metric. Sets *kind, *value (the sample's median),
 * *baseline (the level's) and *p_value (NaN when the level has no spread).
 * Returns 0, -EINVAL (an empty input) or -ENOMEM. */
int ps_candidate_test(const ps_verdict_metric_cfg *mc, const double *x, size_t nx,
                      const double *y, size_t ny, ps_verdict_kind *kind, double *value,
                      double *baseline, double *p_value);

int ps_verdict_candidate(const ps_verdicts_cfg *cfg, const ps_verdict_series *against,
                         const ps_verdict_series *cand, size_t from, ps_verdict_list *out);

#endif
