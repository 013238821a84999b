/*
 * figures.c: the table of judged figures. See include/core/figures.h.
 *
 * Design
 * - Why these headline figures and minimum effects: docs/verdicts.md,
 *   "Step 2" (5 % is half the change the nightly run must catch; a success
 *   rate is compared in points, so 100 -> 90 is 10, not 10 %).
 * - The other run rows are the numeric run-level fields of loadgen_run
 *   (docs/schema.md), in its order, so that a misspelt metric in the
 *   configuration is an error with a suggestion instead of a metric that
 *   never has a value.
 * - Stage figures come from the stage summaries: cycles of every task
 *   (task=all), blocks of the live part (summary=onlyLive).
 * - Growth figures are the slog stage's growth per cycle (docs/schema.md
 *   "loadgen_slog_stage"), counted per cycle, not in percent: "want 0"
 *   (docs/verdicts.md, "Kernel growth against a limit").
 */
#include "core/figures.h"

#include <string.h>

#define RUN "loadgen_run"
#define STAGE "loadgen_stage"
#define CYCLES "loadgen_stage_cycles"
#define BLOCKS "loadgen_stage_blocks"
#define SLOG_STAGE "loadgen_slog_stage"
#define ALL_TASKS "task", "all"
#define LIVE "summary", "onlyLive"

/* A headline run figure, with its defaults. `explained`: it is time spent
 * in the chain, so its regression gets the slog's cause beside it
 * (docs/verdicts.md, "Why it got slower"). */
#define HEAD(field, label, unit, worse, change, cunit, explained)                           \
  {field, field, label, unit, RUN, NULL, NULL, PS_FIG_RUN, worse, change, cunit, explained}
/* A run figure judged only when the configuration names it. */
#define MORE(field, unit) {field, field, NULL, unit, RUN, NULL, NULL, PS_FIG_RUN, 0, 5.0, 0, 0}
/* A stage figure: its verdicts are named stage_<field>. */
#define STAGE_FIG(field, label, measurement, sel)                                           \
  {field, "stage_" field, label, "s", measurement, sel, PS_FIG_STAGE, PS_WORSE_HIGHER, 0, 0, 0}

/* A growth figure: absolute units (a count per cycle), higher is worse;
 * across revisions a change of one whole count per cycle is worth a verdict
 * (docs/verdicts.md, "Kernel growth across revisions"). */
#define GROWTH_FIG(field, label)                                                            \
  {field, field, label, "per cycle", SLOG_STAGE, NULL, NULL, PS_FIG_GROWTH, PS_WORSE_HIGHER,  \
   1.0, PS_CHANGE_POINTS, 0}

const ps_figure ps_figures[] = {
    HEAD("cycleAvgDuration", "Cycle avg duration", "s", PS_WORSE_HIGHER, 5.0, PS_CHANGE_PERCENT, 1),
    HEAD("cycleSuccessRate", "Cycle success rate", "%", PS_WORSE_LOWER, 2.0, PS_CHANGE_POINTS, 0),
    HEAD("live_avgSwingsetTime", "Live swingset time", "s", PS_WORSE_HIGHER, 5.0, PS_CHANGE_PERCENT,
         1),
    HEAD("live_avgBlockDuration", "Live block time", "s", PS_WORSE_HIGHER, 5.0, PS_CHANGE_PERCENT,
         0),
    HEAD("chainBootstrapDuration", "Chain bootstrap", "s", PS_WORSE_HIGHER, 5.0, PS_CHANGE_PERCENT,
         0),
    HEAD("walletDeployDuration", "Wallet deploy", "s", PS_WORSE_HIGHER, 5.0, PS_CHANGE_PERCENT, 0),
    HEAD("loadgenDeployDuration", "Loadgen deploy", "s", PS_WORSE_HIGHER, 5.0, PS_CHANGE_PERCENT,
         0),
    MORE("duration", "s"),
    MORE("totalBlockCount", ""),
    MORE("live_blockCount", ""),
    MORE("live_avgLag", "s"),
    MORE("live_avgChainBlockDuration", "s"),
    MORE("live_avgIdleTime", "s"),
    MORE("live_avgCosmosTime", "s"),
    MORE("live_avgProcessingTime", "s"),
    MORE("live_avgDeliveries", "count"),
    MORE("live_avgComputrons", "count"),
    MORE("live_avgSwingsetPercentage", "%"),
    MORE("live_avgProcessingPercentage", "%"),
    /* in ps_stage_figure_id order */
    STAGE_FIG("avgDuration", "Cycle avg duration", CYCLES, ALL_TASKS),
    STAGE_FIG("avgSwingsetTime", "Live swingset time", BLOCKS, LIVE),
    STAGE_FIG("avgBlockDuration", "Live block time", BLOCKS, LIVE),
    {"loadgen", "stage_loadgen", NULL, "", STAGE, NULL, NULL, PS_FIG_STAGE_KIND, 0, 0, 0, 0},
    /* in ps_growth_figure_id order */
    GROWTH_FIG("kernelObjectsPerCycle", "Kernel objects per cycle"),
    GROWTH_FIG("kpUnresolvedPerCycle", "Unresolved promises per cycle"),
    GROWTH_FIG("clistEntriesPerCycle", "C-list entries per cycle"),
    /* in ps_slog_stage_figure_id order: the slog's stage drift, a share
     * compared in points (near 0 a percent means nothing), a vat's time per
     * cycle in percent (docs/verdicts.md "Within a run") */
    {"boydShare", "stage_boydShare", "BOYD share", "%", SLOG_STAGE, NULL, NULL, PS_FIG_SLOG_STAGE,
     PS_WORSE_HIGHER, 0, PS_CHANGE_POINTS, 0},
    {"deliverySeconds", "stage_vatSecondsPerCycle", "Vat delivery seconds per cycle", "s",
     "loadgen_slog_vat", NULL, NULL, PS_FIG_SLOG_STAGE, PS_WORSE_HIGHER, 0, PS_CHANGE_PERCENT, 0},
    /* the benchmarker's fit across releases: higher is better, a 5 % loss
     * of capacity is worth a verdict, as a nightly run's 5 % (docs/verdicts.md
     * "Benchmarker: across releases") */
    {"x_n_star", "x_n_star", "Peak throughput X(N*)", "operations/s", "benchmarker_fit",
     "operation", "all", PS_FIG_BENCHMARKER, PS_WORSE_LOWER, 5.0, PS_CHANGE_PERCENT, 0},
    {"gamma", "gamma", "Throughput per user (gamma)", "operations/s", "benchmarker_fit",
     "operation", "all", PS_FIG_BENCHMARKER, PS_WORSE_LOWER, 5.0, PS_CHANGE_PERCENT, 0},
    /* a Completed step's mean latency at the scenario's lowest such load */
    {"latency_mean_s", "latency_low_load_s", "Latency at the lowest load", "s", "benchmarker_step",
     "operation", "all", PS_FIG_BENCHMARKER, PS_WORSE_HIGHER, 5.0, PS_CHANGE_PERCENT, 0},
};

const size_t ps_nfigures = sizeof ps_figures / sizeof ps_figures[0];

/* The n-th row of a scope. */
static const ps_figure *nth(ps_figure_scope scope, size_t n) {
  for (size_t i = 0; i < ps_nfigures; i++)
    if (ps_figures[i].scope == scope && n-- == 0)
      return &ps_figures[i];
  return NULL;
}

const ps_figure *ps_figure_find(const char *name) {
  for (size_t i = 0; name && i < ps_nfigures; i++)
    if (strcmp(ps_figures[i].name, name) == 0)
      return &ps_figures[i];
  return NULL;
}

const ps_figure *ps_stage_figure(ps_stage_figure_id id) { return nth(PS_FIG_STAGE, (size_t)id); }

const ps_figure *ps_stage_kind_figure(void) { return nth(PS_FIG_STAGE_KIND, 0); }

const ps_figure *ps_growth_figure(ps_growth_figure_id id) { return nth(PS_FIG_GROWTH, (size_t)id); }

const ps_figure *ps_slog_stage_figure(ps_slog_stage_figure_id id) {
  return nth(PS_FIG_SLOG_STAGE, (size_t)id);
}

const ps_figure *ps_benchmarker_figure(size_t n) { return nth(PS_FIG_BENCHMARKER, n); }

int ps_figure_selects(const ps_figure *f, const char *value) {
  return !f->tag || (value && strcmp(value, f->tag_value) == 0);
}
