/*
 * verdict/decide: where a regression is decided. One pure call judges the
 * newest runs of a series from its ledger under the triage decisions in
 * force (docs/verdicts.md, "Triage", "Candidates"); the agent's verdict
 * stage (judging/verdicts_judge.c) only finds the inputs and sends what
 * comes out.
 *
 * Contract
 * - ps_verdict_decide_series() appends to `out` the verdicts of
 *   c->series->runs[c->from..nruns) (the ledger's order: ps_verdict_runs_sort,
 *   values indexed like c->cfg->metrics), by these rules:
 *   - A run the triage excludes (ps_triage_excluded) is in no window and
 *     no baseline, as a run that did not succeed; if it succeeded it shows
 *     one PS_VERDICT_EXCLUDED per enabled metric it has a value for, with
 *     change_run itself, instead of its old verdicts.
 *   - A baseline decision (ps_triage_baseline_start) starts the series
 *     anew at its run: the runs before it are judged (ps_verdict_judge)
 *     among themselves, the rest from the start on. The start run shows
 *     PS_VERDICT_BASELINE; so does every successful run of the next
 *     2 x cfg->min_runs that the judge gave no verdict for a metric
 *     (too few to compare), with change_run the start run.
 *   - A candidate series (c->against not NULL: verdicts.candidates) is
 *     also judged against the level of c->against (ps_verdict_candidate),
 *     excluded runs of either series left out.
 *   - Only verdicts about runs of `c->host` (or of no host) are kept: the
 *     runs of other hosts (verdicts.series_by = "test_type") are history.
 *   - A run that kept its steps (a benchmarker report's scenario,
 *     ps_ledger_set_steps) has a `note` on each verdict across revisions:
 *     the lowest load where a step of it did not complete and the run
 *     before it (successful, not excluded) completed one, "" when none.
 * - A verdict's strings are borrowed from the inputs (the ledger, the
 *   configuration). Pure: no I/O, no globals. Returns 0, -EINVAL or -ENOMEM
 *   (`out` then holds what was appended before it).
 */
#ifndef PS_VERDICT_DECIDE_H
#define PS_VERDICT_DECIDE_H

#include <stddef.h>

#include "core/config.h"
#include "verdict/ledger.h"
#include "verdict/triage.h"
#include "verdict/verdict.h"

typedef struct ps_verdict_case {
  const ps_verdicts_cfg *cfg;
  const ps_ledger_series *series;
  size_t from;                     /* the first run to judge */
  const ps_triage_set *triage;     /* the decisions in force */
  const ps_ledger_series *against; /* a candidate's reference series, or NULL */
  const char *host;                /* whose verdicts are kept */
} ps_verdict_case;

int ps_verdict_decide_series(const ps_verdict_case *c, ps_verdict_list *out);

#endif
