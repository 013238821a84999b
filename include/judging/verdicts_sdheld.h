/*
 * judging/verdicts_sdheld: the per-block slog figures of the runs whose
 * slogs this agent is reading now, held as they are encoded, so that a
 * run's stage drift need not read them back from the server when every
 * stage it judges was read here (docs/verdicts.md, "Within a run (stage
 * drift)"; docs/benchmarks.md, "Backfill, fifth pass").
 *
 * Contract
 * - jd_sdheld_point() is given every slog point as it is encoded (on the
 *   loop). It keeps each loadgen_slog_block row (stage, time, delivery and
 *   BOYD seconds) and loadgen_slog_block_vat row (stage, time, vat,
 *   delivery seconds) by its `run` tag, and marks a stage complete at its
 *   final loadgen_slog_stage point (partial=false) when it holds as many
 *   of the stage's blocks as that point's `blocks` says: a stage whose
 *   first rows it did not see (held from the middle after a bound or a
 *   take) is never complete. Rows are the ones
 *   verdicts_sdblocks reads back (same fields, same skips). A stage read
 *   again from its start (a block no later than its last) drops its older
 *   rows first, so no row is held twice, and is complete again only at its
 *   final point. A point naming another host than `host` is passed over.
 * - Bounded: at most JD_SDHELD_RUNS runs (a new one pushes out the run
 *   least lately touched; a backfill reads the slogs of many runs before
 *   their stage drift is judged), none whose points stopped
 *   JD_SDHELD_IDLE_MS before a new run came (`now_ms`: the loop's clock),
 *   and JD_SDHELD_MAX_ROWS rows in all
 *   (32 MB); a run that
 *   would pass the bound holds nothing more and is never whole (its stage
 *   drift is read back, as before), and so is one of more than
 *   JD_SDHELD_MAX_STAGES stages.
 * - jd_sdheld_take() hands a run's rows to the caller, who owns them
 *   (jd_sdheld_run_free()); the store forgets the run. NULL: none held.
 * - jd_sdheld_fill() (any thread; the run is the caller's): when every
 *   stage of `stages` that has its slog figures on the server (time_ns >=
 *   0) is complete in `r`, copies r's rows with from_ns <= time < to_ns
 *   into `b` (at most JD_VERDICTS_SDBLOCKS_MAX_ROWS of each kind, the rest
 *   counted in b->dropped, as a read would) and returns 1; `b`'s vat IDs
 *   are borrowed from `r`, which must outlive it. 0: `b` untouched, read
 *   the server. -ENOMEM.
 * - jd_sdheld_free() frees every run held.
 */
#ifndef PS_JUDGING_VERDICTS_SDHELD_H
#define PS_JUDGING_VERDICTS_SDHELD_H

#include <stddef.h>
#include <stdint.h>

#include "core/point.h"
#include "judging/verdicts_sdblocks.h"

#define JD_SDHELD_RUNS 128
#define JD_SDHELD_IDLE_MS ((uint64_t)3600 * 1000)
#define JD_SDHELD_MAX_ROWS ((size_t)1 << 20)
#define JD_SDHELD_MAX_STAGES 64 /* as JD_VERDICTS_SLOGDRIFT_MAX_STAGES */

typedef struct jd_sdheld_stage {
  int stage;
  int complete;          /* its final loadgen_slog_stage point came */
  int64_t last_block_ns; /* its latest block's time; -1 before one */
  size_t nblocks;        /* its block rows held */
  size_t open_vats;      /* its vat rows since that block: the next block's */
} jd_sdheld_stage;

typedef struct jd_sdheld_run {
  struct jd_sdheld_run *next;
  char *run;
  uint64_t touched_ms; /* the latest point's now_ms */
  int overflow;        /* passed a bound: holds nothing and is never whole */
  jd_verdicts_sdblocks rows;
  jd_sdheld_stage stages[JD_SDHELD_MAX_STAGES];
  size_t nstages;
} jd_sdheld_run;

typedef struct jd_sdheld {
  jd_sdheld_run *runs;
  size_t nruns, nrows;
} jd_sdheld;

void jd_sdheld_point(jd_sdheld *h, const char *host, const ps_point *p, uint64_t now_ms);
jd_sdheld_run *jd_sdheld_take(jd_sdheld *h, const char *run);
int jd_sdheld_fill(const jd_sdheld_run *r, const ps_slog_drift_stage *stages, size_t nstages,
                   int64_t from_ns, int64_t to_ns, jd_verdicts_sdblocks *b);
void jd_sdheld_run_free(jd_sdheld_run *r);
void jd_sdheld_free(jd_sdheld *h);

#endif
