/*
 * benchmarker_private.h (private to agent/formats/benchmarker*.c): what the
 * reader of a benchmarker report keeps while the report streams by, and
 * the figures made of it at the end (docs/schema.md "Benchmarker").
 *
 * Contract
 * - benchmarker.c reads the document through json_stream and fills a
 *   bm_report: per scenario its operations reduced to (t0, t1, type,
 *   outcome) and its steps; the configuration's scenario names, metadata
 *   and setup environments. Query details are skipped, never kept.
 * - benchmarker_figures.c turns a bm_report into points: ps_benchmarker_figures_build()
 *   once (it frees the operations), then ps_benchmarker_figures_emit() as often as the
 *   emitter pushes back (-EAGAIN), resuming at the refused point.
 */
#ifndef PS_FORMATS_BENCHMARKER_PRIVATE_H
#define PS_FORMATS_BENCHMARKER_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/emit.h"
#include "core/usl.h"

#define BM_NAME_MAX 256
#define BM_TYPES_MAX 64

typedef struct bm_op {
  int64_t t0_ns, t1_ns;
  uint16_t type;
  uint8_t successful;
} bm_op;

enum { BM_REASON_NONE, BM_REASON_COMPLETED, BM_REASON_UNSTABLE, BM_REASON_NOT_STABLE };

typedef struct bm_step {
  double load_factor;
  int64_t start_ns, stable_ns, end_ns;
  int reason;
  int has_load, has_start, has_end, has_stable;
  int usable;     /* complete and consistent: it gets a point */
  int has_window; /* a stable window [stable, end] to measure */
} bm_step;

/* What names a scenario's arm: its metadata, else its setup's environment. */
typedef struct bm_names {
  char arm[BM_NAME_MAX], image[BM_NAME_MAX], datastore[BM_NAME_MAX];
} bm_names;

typedef struct bm_scenario {
  bm_op *ops;
  size_t nops, cap;
  char *types[BM_TYPES_MAX];
  size_t ntypes;
  bm_step *steps;
  size_t nsteps, steps_cap;
  bm_names meta; /* from the report's own metadata */
  int complete;  /* its closing brace was read */
} bm_scenario;

typedef struct bm_config_scenario {
  char name[BM_NAME_MAX];
  char load[BM_NAME_MAX]; /* the load it applied: scenarios alike but for their arm share it */
  bm_names meta;
  char setup[8][BM_NAME_MAX]; /* the first setup actions' names */
  size_t nsetup;
} bm_config_scenario;

typedef struct bm_action {
  char name[BM_NAME_MAX];
  char image[BM_NAME_MAX], datastore[BM_NAME_MAX]; /* env DSS_IMAGE, DB_TYPE */
} bm_action;

typedef struct bm_figure bm_figure;
typedef struct bm_fit bm_fit;

typedef struct bm_report {
  char configuration[BM_NAME_MAX]; /* the report's folder */
  char commit[BM_NAME_MAX], version[BM_NAME_MAX];
  bm_config_scenario *cfg;
  size_t ncfg, cfg_cap;
  bm_action *actions;
  size_t nactions, actions_cap;
  bm_scenario *scen;
  size_t nscen, scen_cap;
  /* the figures, once built */
  bm_figure *figures;
  size_t nfigures;
  bm_fit *fits;
  size_t nfits;
  bm_names *arms; /* per scenario, resolved */
  /* the source's `arm`: a scenario's when nothing in the report names one */
  char configured_arm[BM_NAME_MAX];
  int built;
} bm_report;

int ps_benchmarker_figures_build(bm_report *r);
/* 0, or what ps_emit_point() returned; `cursor` counts points delivered. */
int ps_benchmarker_figures_emit(bm_report *r, ps_emitter *em, size_t *cursor, int backfill);
void ps_benchmarker_report_free(bm_report *r);

#endif
