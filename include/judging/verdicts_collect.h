/*
 * judging/verdicts_collect: what the verdicts are computed from, picked
 * out of the points the sources' parsers give (the delivery's tap, only
 * the measurements jd_verdicts_collect_measurements() names) while a
 * run is read, and kept until the run is judged.
 *
 * Contract
 * - jd_verdicts_collect_measurements() names the measurements it wants to see: the
 *   sources of the figures table (core/figures.h), `dss_bench` and the
 *   `runs` markers. The delivery hands it only their points.
 * - jd_verdicts_collect_point() looks at one such point: `loadgen_run` (the run's
 *   judged metrics, its series = `test_type`, revision, and start = the
 *   point's time), a stage point that passes a stage figure's selector (its
 *   figures) or the stage kind's (`loadgen`), `dss_bench` (per test, arm
 *   and variant: `rps_total`, `p95_ms`, `errors`, in file order), or the
 *   `runs` end marker of a DSS bench results file (source=dss_bench),
 *   which ends that file: the function then returns the file's tables,
 *   complete (JD_VERDICTS_COLLECT_DSS_ENDED). Names and values are copied.
 * - A loadgen run's values wait here until its end is known (the run
 *   tracker's event, jd_verdicts_collect_find_run()); an ended run with stage figures
 *   stays until jd_verdicts_collect_drop_run() (after its stage verdicts were
 *   acknowledged), as a DSS file's tables stay until jd_verdicts_collect_drop_dss(),
 *   so a crash in between judges them again.
 * - The samples behind a stage's figures (verdict/stage_drift.h): the
 *   live `loadgen_block` points' swingsetTime and time, the successful
 *   `loadgen_cycle` points' duration and time, kept per stage (at most
 *   JD_LG_MAX_SAMPLES of each) until the run is judged. They are not
 *   saved: a run judged after a restart has its figures without them.
 * - Points seen twice (a replay after a restart) overwrite what was there
 *   (a sample seen twice, same time and value, is counted once).
 * - Everything survives a restart through jd_verdicts_collect_to_json() /
 *   jd_verdicts_collect_from_json() (a state section).
 */
#ifndef PS_JUDGING_VERDICTS_COLLECT_H
#define PS_JUDGING_VERDICTS_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/figures.h"
#include "core/point.h"
#include "runs/runs.h"
#include "verdict/ledger.h"
#include "verdict/stage_drift.h"

#define JD_LG_MAX_SAMPLES ((size_t)1 << 18)

typedef struct jd_lg_sample {
  int64_t time_ns;
  double value;
} jd_lg_sample;

typedef struct jd_lg_samples {
  int stage;
  jd_lg_sample *blocks; /* live blocks: swingsetTime at beginAt */
  size_t nblocks, blocks_cap;
  jd_lg_sample *cycles; /* successful cycles: duration at startedAt */
  size_t ncycles, cycles_cap;
} jd_lg_samples;

typedef struct jd_lg_run {
  struct jd_lg_run *next;
  char *run, *series, *revision; /* series/revision NULL when unknown */
  int64_t start_ns;              /* 0 until the loadgen_run point was seen */
  double *values;                /* one per judged metric; NaN = absent */
  ps_stage_figures *stages;
  size_t nstages, stages_cap;
  jd_lg_samples *samples; /* not saved */
  size_t nsamples, samples_cap;
  /* Set when the run ended (the run tracker said so): its stage drift is
   * judged, then it goes. */
  int ended;
  int status; /* ps_run_status */
  int backfill;
  int in_flight;
} jd_lg_run;

typedef struct jd_dss_arm {
  char *label;
  double *rps_total, *p95_ms, *errors; /* per variant index; NaN = absent */
} jd_dss_arm;

typedef struct jd_dss_test {
  char *test;
  jd_dss_arm *arms;
  size_t narms, nvariants;
} jd_dss_test;

/* A benchmarker report's scenario as judged across releases
 * (docs/verdicts.md "Benchmarker: across releases"): its fitted figures of
 * every operation type together, in ps_benchmarker_figure() order. */
typedef struct jd_bm_scenario {
  char *scenario, *arm, *revision;        /* revision: the image, else the commit */
  double values[PS_BENCHMARKER_NFIGURES]; /* NaN = absent */
  double low_load;       /* the lowest load factor it completed (its latency's); NaN none yet */
  ps_ledger_step *steps; /* how each step ended, for the next report's verdict */
  size_t nsteps;
} jd_bm_scenario;

typedef struct jd_dss_doc {
  struct jd_dss_doc *next;
  const char
      *source; /* JD_VERDICTS_COLLECT_DSS or JD_VERDICTS_COLLECT_BENCHMARKER: its markers' source */
  char *run;
  jd_dss_test *tests;
  size_t ntests;
  jd_bm_scenario *scenarios; /* benchmarker reports only; not saved */
  size_t nscenarios;
  int ended; /* its `runs` marker was seen */
  int64_t time_ns;
  int backfill;
  int in_flight; /* its verdicts are being sent */
} jd_dss_doc;

/* The DSS bench's measurement, and its markers' source. */
#define JD_VERDICTS_COLLECT_DSS "dss_bench"
/* A benchmarker report's arms (scenarios of one load) are judged as a DSS
 * bench file's: its Completed steps and fitted peaks, ended by its marker. */
#define JD_VERDICTS_COLLECT_BENCHMARKER "benchmarker"
#define JD_VERDICTS_COLLECT_BENCHMARKER_STEP "benchmarker_step"
#define JD_VERDICTS_COLLECT_BENCHMARKER_FIT "benchmarker_fit"
/* Their `operation` tag for every operation type together. */
#define JD_VERDICTS_COLLECT_BENCHMARKER_EVERY_TYPE "all"

typedef struct jd_verdicts_collect {
  const char *const *metrics; /* the judged loadgen_run fields */
  size_t nmetrics;
  const char *run_measurement; /* of the run figures (core/figures.h) */
  jd_lg_run *runs;
  jd_dss_doc *docs;
} jd_verdicts_collect;

enum { JD_VERDICTS_COLLECT_NONE = 0, JD_VERDICTS_COLLECT_DSS_ENDED = 1 };

/* Fills `out` with up to `cap` measurement names (static); returns how
 * many. */
size_t jd_verdicts_collect_measurements(const char **out, size_t cap);
void jd_verdicts_collect_init(jd_verdicts_collect *c, const char *const *metrics, size_t nmetrics);
void jd_verdicts_collect_free(jd_verdicts_collect *c);
/* *doc is set when the result is JD_VERDICTS_COLLECT_DSS_ENDED. */
int jd_verdicts_collect_point(jd_verdicts_collect *c, const ps_point *p, jd_dss_doc **doc);
/* The values of loadgen run `run`, or NULL. */
jd_lg_run *jd_verdicts_collect_find_run(jd_verdicts_collect *c, const char *run);
/* The judge's view of `r`'s samples (verdict/stage_drift.h): per stage,
 * in time order, each sample once, the live blocks' gaps computed. The
 * arrays are sorted in place; *out (NULL when there are none, *n 0) and
 * *store are the caller's to free. 0 or -ENOMEM. */
int jd_verdicts_collect_stage_samples(jd_lg_run *r, ps_stage_samples **out, size_t *n,
                                      double **store);
void jd_verdicts_collect_drop_run(jd_verdicts_collect *c, jd_lg_run *r);
void jd_verdicts_collect_drop_dss(jd_verdicts_collect *c, jd_dss_doc *doc);

cJSON *jd_verdicts_collect_to_json(const jd_verdicts_collect *c);
void jd_verdicts_collect_from_json(jd_verdicts_collect *c, const cJSON *json);

#endif
