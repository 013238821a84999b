/*
 * explain: the cause beside a verdict. Which vats' delivery seconds per
 * cycle moved most against the runs of the old level, the BOYD share then
 * and now, and the run's kernel growth per cycle (docs/verdicts.md, "Why
 * it got slower"), from the chain's slog figures (docs/schema.md,
 * loadgen_slog_stage and loadgen_slog_vat).
 *
 * Contract
 * - Input: the slog stage and vat rows of the explained run and of the
 *   old level's runs (any order, other runs' rows ignored). A stage takes
 *   part when it is after stage 0, complete (not partial) and has finished
 *   cycles: its rows are what a cycle of load costs.
 * - A run's figure of a vat is its delivery seconds over those stages
 *   divided by their finished cycles; the old level's is the mean over the
 *   old runs that have the vat. A vat of only one side counts as 0 on the
 *   other (a vat that appeared is a change too). The BOYD share is BOYD
 *   seconds over delivery seconds of those stages (NaN without any); the
 *   growth is the largest growth per cycle of a counter over those stages
 *   of the explained run (NaN without one).
 * - Output: up to PS_EXPLAIN_TOP vats by the size of their change, largest
 *   first (ties: by vat ID), with both figures; old_runs = old runs that
 *   had a stage taking part. Strings are copied (cut to their buffers).
 * - ps_explain_text() appends one human line per part (no trailing
 *   newline on the last); data strings go in as they are: a caller that
 *   shows them in HTML or a terminal escapes them there.
 * - No I/O, no globals. Returns 0 or -ENOMEM.
 */
#ifndef PS_VERDICT_EXPLAIN_H
#define PS_VERDICT_EXPLAIN_H

#include <stddef.h>

#include "core/buf.h"
#include "core/figures.h"

#define PS_EXPLAIN_TOP 5

typedef struct ps_explain_stage_row {
  const char *run;
  int stage;
  int partial;
  double cycles;     /* finishedCycles; NaN or 0: none */
  double delivery_s; /* deliverySeconds */
  double boyd_s;     /* boydSeconds */
  double growth[PS_GROWTH_NFIGURES];
} ps_explain_stage_row;

typedef struct ps_explain_vat_row {
  const char *run;
  int stage;
  const char *vat;  /* the vatID */
  const char *name; /* NULL when the slog named none */
  double delivery_s;
} ps_explain_vat_row;

typedef struct ps_explain_vat {
  char vat[48];
  char name[128];
  double then, now; /* delivery seconds per cycle */
} ps_explain_vat;

typedef struct ps_explanation {
  ps_explain_vat top[PS_EXPLAIN_TOP];
  size_t ntop;
  size_t old_runs;
  double boyd_then, boyd_now;
  double growth[PS_GROWTH_NFIGURES];
} ps_explanation;

int ps_explain(const char *run, const char *const *old_runs, size_t nold,
               const ps_explain_stage_row *stages, size_t nstages,
               const ps_explain_vat_row *vats, size_t nvats, ps_explanation *out);

int ps_explain_text(const ps_explanation *e, ps_buf *out);

#endif
