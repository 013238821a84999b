/*
 * judging/verdicts_collect: what the verdicts are computed from, picked
 * out of the points the sources' parsers give (the delivery's tap, only
 * the measurements pl_collect_measurements() names) while a
 * run is read, and kept until the run is judged.
 *
 * Contract
 * - pl_collect_measurements() names the measurements it wants to see: the
 *   sources of the figures table (core/figures.h), `dss_bench` and the
 *   `runs` markers. The delivery hands it only their points.
 * - pl_collect_point() looks at one such point: `loadgen_run` (the run's
 *   judged metrics, its series = `test_type`, revision, and start = the
 *   point's time), a stage point that passes a stage figure's selector (its
 *   figures) or the stage kind's (`loadgen`), `dss_bench` (per test, arm
 *   and variant: `rps_total`, `p95_ms`, `errors`, in file order), or the
 *   `runs` end marker of a DSS bench results file (source=dss_bench),
 *   which ends that file: the function then returns the file's tables,
 *   complete (PL_COLLECT_DSS_ENDED). Names and values are copied.
 * - A loadgen run's values wait here until its end is known (the run
 *   tracker's event, pl_collect_find_run()); an ended run with stage figures
 *   stays until pl_collect_drop_run() (after its stage verdicts were
 *   acknowledged), as a DSS file's tables stay until pl_collect_drop_dss(),
 *   so a crash in between judges them again.
 * - The samples behind a stage's figures (verdict/stage_drift.h): the
 *   live `loadgen_block` points' swingsetTime and time, the successful
 *   `loadgen_cycle` points' duration and time, kept per stage (at most
 *   PL_LG_MAX_SAMPLES of each) until the run is judged. They are not
 *   saved: a run judged after a restart has its figures without them.
 * - Points seen twice (a replay after a restart) overwrite what was there
 *   (a sample seen twice, same time and value, is counted once).
 * - Everything survives a restart through pl_collect_to_json() /
 *   pl_collect_from_json() (a state section).
 */
#ifndef PS_JUDGING_VERDICTS_COLLECT_H
#define PS_JUDGING_VERDICTS_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/figures.h"
#include "core/point.h"
#include "runs/runs.h"
#include "verdict/stage_drift.h"

#define PL_LG_MAX_SAMPLES ((size_t)1 << 18)

typedef struct pl_lg_sample {
  int64_t time_ns;
  double value;
} pl_lg_sample;

typedef struct pl_lg_samples {
  int stage;
  pl_lg_sample *blocks; /* live blocks: swingsetTime at beginAt */
  size_t nblocks, blocks_cap;
  pl_lg_sample *cycles; /* successful cycles: duration at startedAt */
  size_t ncycles, cycles_cap;
} pl_lg_samples;

typedef struct pl_lg_run {
  struct pl_lg_run *next;
  char *run, *series, *revision; /* series/revision NULL when unknown */
  int64_t start_ns;              /* 0 until the loadgen_run point was seen */
  double *values;                /* one per judged metric; NaN = absent */
  ps_stage_figures *stages;
  size_t nstages, stages_cap;
  pl_lg_samples *samples; /* not saved */
  size_t nsamples, samples_cap;
  /* Set when the run ended (the run tracker said so): its stage drift is
   * judged, then it goes. */
  int ended;
  int status; /* ps_run_status */
  int backfill;
  int in_flight;
} pl_lg_run;

typedef struct pl_dss_arm {
  char *label;
  double *rps_total, *p95_ms, *errors; /* per variant index; NaN = absent */
} pl_dss_arm;

typedef struct pl_dss_test {
  char *test;
  pl_dss_arm *arms;
  size_t narms, nvariants;
} pl_dss_test;

/* A benchmarker report's scenario as judged across releases
 * (docs/verdicts.md "Benchmarker: across releases"): its fitted figures of
 * every operation type together, in ps_benchmarker_figure() order. */
typedef struct pl_bm_scenario {
  char *scenario, *arm, *revision;        /* revision: the image, else the commit */
  double values[PS_BENCHMARKER_NFIGURES]; /* NaN = absent */
  double low_load; /* the lowest load factor it completed (its latency's); NaN none yet */
} pl_bm_scenario;

typedef struct pl_dss_doc {
  struct pl_dss_doc *next;
  const char *source; /* PL_COLLECT_DSS or PL_COLLECT_BENCHMARKER: its markers' source */
  char *run;
  pl_dss_test *tests;
  size_t ntests;
  pl_bm_scenario *scenarios; /* benchmarker reports only; not saved */
  size_t nscenarios;
  int ended; /* its `runs` marker was seen */
  int64_t time_ns;
  int backfill;
  int in_flight; /* its verdicts are being sent */
} pl_dss_doc;

/* The DSS bench's measurement, and its markers' source. */
#define PL_COLLECT_DSS "dss_bench"
/* A benchmarker report's arms (scenarios of one load) are judged as a DSS
 * bench file's: its Completed steps and fitted peaks, ended by its marker. */
#define PL_COLLECT_BENCHMARKER "benchmarker"
#define PL_COLLECT_BENCHMARKER_STEP "benchmarker_step"
#define PL_COLLECT_BENCHMARKER_FIT "benchmarker_fit"
/* Their `operation` tag for every operation type together. */
#define PL_COLLECT_BENCHMARKER_EVERY_TYPE "all"

typedef struct pl_collect {
  const char *const *metrics; /* the judged loadgen_run fields */
  size_t nmetrics;
  const char *run_measurement; /* of the run figures (core/figures.h) */
  pl_lg_run *runs;
  pl_dss_doc *docs;
} pl_collect;

enum { PL_COLLECT_NONE = 0, PL_COLLECT_DSS_ENDED = 1 };

/* Fills `out` with up to `cap` measurement names (static); returns how
 * many. */
size_t pl_collect_measurements(const char **out, size_t cap);
void pl_collect_init(pl_collect *c, const char *const *metrics, size_t nmetrics);
void pl_collect_free(pl_collect *c);
/* *doc is set when the result is PL_COLLECT_DSS_ENDED. */
int pl_collect_point(pl_collect *c, const ps_point *p, pl_dss_doc **doc);
/* The values of loadgen run `run`, or NULL. */
pl_lg_run *pl_collect_find_run(pl_collect *c, const char *run);
/* The judge's view of `r`'s samples (verdict/stage_drift.h): per stage,
 * in time order, each sample once, the live blocks' gaps computed. The
 * arrays are sorted in place; *out (NULL when there are none, *n 0) and
 * *store are the caller's to free. 0 or -ENOMEM. */
int pl_collect_stage_samples(pl_lg_run *r, ps_stage_samples **out, size_t *n, double **store);
void pl_collect_drop_run(pl_collect *c, pl_lg_run *r);
void pl_collect_drop_dss(pl_collect *c, pl_dss_doc *doc);

cJSON *pl_collect_to_json(const pl_collect *c);
void pl_collect_from_json(pl_collect *c, const cJSON *json);

#endif
