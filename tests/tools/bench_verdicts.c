/*
 * bench_verdicts: what the verdict engine costs and how well it judges,
 * the figures of docs/benchmarks.md ("Verdicts") and docs/verdicts.md
 * ("How well it works"). No server, no I/O besides stdout.
 *
 *   bench_verdicts cost [--runs N] [--window W] [--repeat R] [--reverse]
 *       A history of N daily runs x the 7 default metrics (a +-3 % noise,
 *       a 10 % step up or down every 90 runs in every duration metric, the
 *       last 50 runs before the end), then the CPU time of judging the
 *       newest run (the median of R repetitions) and of judging every run
 *       (a backfill's recomputation), and with --reverse of a backfill
 *       that meets the runs newest first and judges at every arrival (all
 *       runs after it again), as key=value lines.
 *   bench_verdicts rates [--trials T]
 *       Generated single-metric histories under several noise models: how
 *       often a stable 60-run history raises anything, where a 10 % step is
 *       reported, whether a single outlier is reported, and whether a
 *       10 % excursion and return give exactly one regression and one
 *       improvement. A Markdown table.
 *   bench_verdicts candidates [--trials T]
 *       The candidate test (verdict/candidate.h) under the same noise
 *       models: a 30-run nightly history at one level and candidate runs
 *       with the same noise: how often a candidate at the level raises
 *       anything, how often one 10 % or 12 % slower, or three runs of one
 *       revision 10 % slower, are a regression, and how often a candidate
 *       at the new level after a 10 % nightly step raises anything. A
 *       Markdown table.
 *   bench_verdicts triage [--lines N]
 *       A triage_file of N lines (an ack of its own run each, one undo in
 *       ten lines), then the CPU time of parsing it, of copying the set
 *       (what the agent does when it puts decisions in force) and of
 *       asking ack_of/excluded for every run, as key=value lines.
 *   bench_verdicts spoiled [--trials T]
 *       Histories with spoiled nights (35-45 % off their level): how often
 *       a stable history with one or three of them raises anything, and
 *       where a 12 % step after one (anywhere before it, just before it,
 *       or the night after it began) is reported. A Markdown table.
 *   bench_verdicts nightly [--trials T]
 *       Nightly histories of every default metric, the chain-bound
 *       durations correlated: false regressions per stable night across
 *       all of a night's verdicts, and how soon a 10 % step in the cycle
 *       duration at 2 % noise is reported; with each stable night, a
 *       steady run's stages (as `stages`, 4 loadgen stages of 20 minutes)
 *       judged too, so the last column counts every verdict of a night.
 *       A Markdown table.
 *   bench_verdicts stages [--trials T]
 *       Generated runs of steady stages (autocorrelated blocks and cycles,
 *       six vats) of several lengths, judged by the stage drift and the
 *       slog drift: false stage regressions per run by the threshold
 *       alone, with each test at 0.001 (before the run's stage family)
 *       and with the family, and how often a vat 40 % slower from stage 2
 *       is named there. A Markdown table.
 *   bench_verdicts series < values
 *       The regressions and improvements of one series of values (one a
 *       line), judged as one metric with the default settings.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "verdict/candidate.h"
#include "verdict/judge.h"
#include "verdict/slog_drift.h"
#include "verdict/stage_drift.h"
#include "verdict/stage_test.h"
#include "verdict/triage.h"

#define DAY_NS 86400000000000LL

static uint64_t rng_state;

static uint64_t next_u64(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static double uniform01(void) { return ((double)(next_u64() >> 11) + 0.5) / 9007199254740992.0; }

static double normal(void) {
  return sqrt(-2.0 * log(uniform01())) * cos(2.0 * M_PI * uniform01());
}

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct history {
  size_t n, nmetrics;
  char (*names)[32];
  double *values;
  ps_verdict_run *runs;
} history;

static void history_alloc(history *h, size_t n, size_t nmetrics) {
  h->n = n;
  h->nmetrics = nmetrics;
  h->names = calloc(n, sizeof *h->names);
  h->values = calloc(n * nmetrics, sizeof *h->values);
  h->runs = calloc(n, sizeof *h->runs);
  if (!h->names || !h->values || !h->runs) {
    fprintf(stderr, "bench_verdicts: out of memory\n");
    exit(1);
  }
  for (size_t i = 0; i < n; i++) {
    snprintf(h->names[i], sizeof h->names[i], "daily-perf-%012llx",
             (unsigned long long)(next_u64() & 0xffffffffffffULL));
    h->runs[i] = (ps_verdict_run){h->names[i], h->names[i] + 11, (int64_t)i * DAY_NS,
                                  PS_RUN_STATUS_SUCCESS, 0, h->values + i * nmetrics, NULL};
  }
}

static void history_free(history *h) {
  free(h->names);
  free(h->values);
  free(h->runs);
}

static size_t judge(const ps_verdicts_cfg *cfg, const history *h, size_t from,
                    size_t *changes) {
  ps_verdict_series s = {"loadgen", "daily-perf", h->runs, h->n};
  ps_verdict_list out;
  ps_verdict_list_init(&out);
  int rc = ps_verdict_judge(cfg, &s, from, &out);
  if (rc) {
    fprintf(stderr, "bench_verdicts: judge: %s\n", strerror(-rc));
    exit(1);
  }
  size_t n = out.n;
  if (changes) {
    *changes = 0;
    for (size_t k = 0; k < out.n; k++)
      *changes += out.v[k].verdict != PS_VERDICT_NONE;
  }
  ps_verdict_list_free(&out);
  return n;
}

static int cost(size_t nruns, int64_t window, int repeat, int reverse) {
  ps_config c;
  ps_config_defaults(&c);
  c.verdicts.window_runs = window;
  rng_state = 365;
  history h;
  history_alloc(&h, nruns, c.verdicts.nmetrics);
  static const double base[] = {24.33, 100.0, 0.1875, 5.2477, 24.54, 125.4, 121.3};
  for (size_t i = 0; i < nruns; i++) {
    /* a step every 90 runs, alternating up and down; the last one 50 runs
     * before the end, so judging the newest run walks back over its level */
    size_t since_end = nruns - 1 - i;
    size_t steps = since_end >= 50 ? (since_end - 50) / 90 + 1 : 0;
    double level = steps % 2 ? 1.0 : 1.10;
    for (size_t m = 0; m < h.nmetrics; m++) {
      double b = m < sizeof base / sizeof base[0] ? base[m] : 1.0;
      h.values[i * h.nmetrics + m] =
          m == 1 ? b : b * level * (1.0 + 0.03 * (2.0 * uniform01() - 1.0));
    }
  }
  double *t = calloc((size_t)repeat, sizeof *t);
  size_t points = 0, changes = 0;
  for (int r = 0; r < repeat; r++) {
    double t0 = cpu_seconds();
    points = judge(&c.verdicts, &h, nruns - 1, NULL);
    t[r] = cpu_seconds() - t0;
  }
  qsort(t, (size_t)repeat, sizeof *t, cmp_double);
  printf("one_run runs=%zu metrics=%zu window=%lld cpu_s=%.6f points=%zu\n", nruns, h.nmetrics,
         (long long)window, t[repeat / 2], points);
  double t0 = cpu_seconds();
  points = judge(&c.verdicts, &h, 0, &changes);
  printf("all_runs runs=%zu metrics=%zu window=%lld cpu_s=%.6f points=%zu changes=%zu\n",
         nruns, h.nmetrics, (long long)window, cpu_seconds() - t0, points, changes);
  if (!reverse)
    goto done;
  /* A backfill that meets the runs newest first and judges the series at
   * every arrival: each arrival is the oldest run so far, so every run
   * already there is judged again (quadratic: what a driver must avoid by
   * judging a series once per batch of arrivals). */
  t0 = cpu_seconds();
  points = 0;
  history tail = h;
  for (size_t k = nruns; k-- > 0;) {
    tail.runs = h.runs + k;
    tail.n = nruns - k;
    points += judge(&c.verdicts, &tail, 0, NULL);
  }
  printf("reverse_arrival runs=%zu metrics=%zu window=%lld cpu_s=%.6f points=%zu\n", nruns,
         h.nmetrics, (long long)window, cpu_seconds() - t0, points);
done:
  free(t);
  history_free(&h);
  ps_config_free(&c);
  return 0;
}

/* ---- rates ------------------------------------------------------------- */

typedef struct noise_model {
  const char *name;
  int normal;
  double size; /* half-width (uniform) or standard deviation (normal) */
} noise_model;

static double draw(const noise_model *nm) {
  return nm->normal ? nm->size * normal() : nm->size * (2.0 * uniform01() - 1.0);
}

/* One history of one metric (cycleAvgDuration) with level(i); kinds[i] is
 * the verdict of run i, or -1 for none written. */
static void one(const ps_verdicts_cfg *cfg, const noise_model *nm, size_t n,
                double (*level)(size_t), int *kinds) {
  history h;
  history_alloc(&h, n, 1);
  for (size_t i = 0; i < n; i++) {
    h.values[i] = 24.33 * level(i) * (1.0 + draw(nm));
    kinds[i] = -1;
  }
  ps_verdict_series s = {"loadgen", "daily-perf", h.runs, h.n};
  ps_verdict_list out;
  ps_verdict_list_init(&out);
  if (ps_verdict_judge(cfg, &s, 0, &out)) {
    fprintf(stderr, "bench_verdicts: judge failed\n");
    exit(1);
  }
  for (size_t k = 0; k < out.n; k++)
    for (size_t i = 0; i < n; i++)
      if (out.v[k].run == h.names[i])
        kinds[i] = (int)out.v[k].verdict;
  ps_verdict_list_free(&out);
  history_free(&h);
}

static double flat(size_t i) { (void)i; return 1.0; }
static double up(size_t i) { return i >= 20 ? 1.10 : 1.0; }
static double down(size_t i) { return i >= 20 ? 0.90 : 1.0; }
static double outlier(size_t i) { return i == 20 ? 1.30 : 1.0; }
static double excursion(size_t i) { return i >= 20 && i < 35 ? 1.10 : 1.0; }

static int rates(int trials) {
  ps_config c;
  ps_config_defaults(&c);
  c.verdicts.nmetrics = 1; /* cycleAvgDuration: higher is worse, 5 % */
  const noise_model models[] = {
      {"uniform +-3 %", 0, 0.03},  {"normal sd 1.5 %", 1, 0.015}, {"normal sd 2 %", 1, 0.02},
      {"normal sd 3 %", 1, 0.03},  {"normal sd 10 %", 1, 0.10},
  };
  printf("| noise | stable 60 runs: histories with any alarm | 10 %% step reported by the next run | by 3 runs after | single +30 %% outlier: histories with an alarm | 10 %% excursion and return: exactly one regression and one improvement |\n");
  printf("|---|---|---|---|---|---|\n");
  int kinds[64];
  for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
    const noise_model *nm = &models[mi];
    rng_state = 1000 + mi;
    int fa = 0, d1 = 0, d3 = 0, steps = 0, fo = 0, ok = 0;
    for (int t = 0; t < trials; t++) {
      one(&c.verdicts, nm, 60, flat, kinds);
      for (int i = 0; i < 60; i++)
        if (kinds[i] > 0) {
          fa++;
          break;
        }
      for (int dir = 0; dir < 2; dir++) {
        one(&c.verdicts, nm, 40, dir ? down : up, kinds);
        int want = dir ? PS_VERDICT_IMPROVEMENT : PS_VERDICT_REGRESSION, first = -1;
        for (int i = 19; i < 40 && first < 0; i++)
          if (kinds[i] == want)
            first = i;
        steps++;
        d1 += first >= 0 && first <= 21;
        d3 += first >= 0 && first <= 23;
      }
      one(&c.verdicts, nm, 40, outlier, kinds);
      for (int i = 0; i < 40; i++)
        if (kinds[i] > 0) {
          fo++;
          break;
        }
      one(&c.verdicts, nm, 50, excursion, kinds);
      int reg = 0, imp = 0;
      for (int i = 0; i < 50; i++) {
        reg += kinds[i] == PS_VERDICT_REGRESSION;
        imp += kinds[i] == PS_VERDICT_IMPROVEMENT;
      }
      ok += reg == 1 && imp == 1;
    }
    printf("| %s | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %.1f %% |\n", nm->name,
           100.0 * fa / trials, 100.0 * d1 / steps, 100.0 * d3 / steps, 100.0 * fo / trials,
           100.0 * ok / trials);
  }
  printf("\n%d histories per cell (steps: %d up and %d down), seeded.\n", trials, trials, trials);
  ps_config_free(&c);
  return 0;
}

/* ---- spoiled nights ------------------------------------------------------ */

/* Spoiled nights (a busy machine, a half-failed run) 35-45 % off their
 * level, either way, at the positions in spoil[0..nspoil). */
static size_t spoil_at[4], nspoil;
static double spoil_by[4];
static double step_at;

static double spoiled(size_t i) {
  double l = step_at > 0 && (double)i >= step_at ? 1.12 : 1.0;
  for (size_t k = 0; k < nspoil; k++)
    if (spoil_at[k] == i)
      return l * spoil_by[k];
  return l;
}

static void spoil(size_t k, size_t at) {
  spoil_at[k] = at;
  double off = 0.35 + 0.10 * uniform01();
  spoil_by[k] = next_u64() & 1 ? 1.0 + off : 1.0 - off;
}

/* The first run from 40 on with a regression, or -1. */
static int first_regression(const int *kinds, size_t n) {
  for (size_t i = 40; i < n; i++)
    if (kinds[i] == PS_VERDICT_REGRESSION)
      return (int)i;
  return -1;
}

static int spoiled_rates(int trials) {
  ps_config c;
  ps_config_defaults(&c);
  c.verdicts.nmetrics = 1; /* cycleAvgDuration: higher is worse, 5 % */
  const noise_model models[] = {
      {"uniform +-3 %", 0, 0.03},
      {"normal sd 1.5 %", 1, 0.015},
      {"normal sd 2 %", 1, 0.02},
      {"normal sd 3 %", 1, 0.03},
  };
  printf("| noise | stable 60 runs, 1 spoiled night: any alarm | 3 spoiled nights: any alarm | 12 "
         "%% step at run 40, a spoiled night anywhere before: reported by the next run | by 3 runs "
         "after | by run 59 | spoiled night just before the step: by the next run | the night "
         "after the step spoiled: by 2 runs after |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  int kinds[64];
  for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
    const noise_model *nm = &models[mi];
    rng_state = 3000 + mi;
    int fa1 = 0, fa3 = 0, d1 = 0, d3 = 0, dall = 0, db = 0, da = 0;
    for (int t = 0; t < trials; t++) {
      step_at = 0;
      nspoil = 1;
      spoil(0, (size_t)(uniform01() * 60));
      one(&c.verdicts, nm, 60, spoiled, kinds);
      for (int i = 0; i < 60; i++)
        if (kinds[i] > 0) {
          fa1++;
          break;
        }
      nspoil = 3;
      for (size_t k = 0; k < 3; k++)
        spoil(k, (size_t)(uniform01() * 60));
      one(&c.verdicts, nm, 60, spoiled, kinds);
      for (int i = 0; i < 60; i++)
        if (kinds[i] > 0) {
          fa3++;
          break;
        }
      step_at = 40;
      nspoil = 1;
      spoil(0, (size_t)(uniform01() * 40));
      one(&c.verdicts, nm, 60, spoiled, kinds);
      int first = first_regression(kinds, 60);
      d1 += first >= 0 && first <= 41;
      d3 += first >= 0 && first <= 43;
      dall += first >= 0;
      spoil(0, 39);
      one(&c.verdicts, nm, 60, spoiled, kinds);
      first = first_regression(kinds, 60);
      db += first >= 0 && first <= 41;
      spoil(0, 41);
      one(&c.verdicts, nm, 60, spoiled, kinds);
      first = first_regression(kinds, 60);
      da += first >= 0 && first <= 42;
    }
    printf("| %s | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %.1f %% |\n",
           nm->name, 100.0 * fa1 / trials, 100.0 * fa3 / trials, 100.0 * d1 / trials,
           100.0 * d3 / trials, 100.0 * dall / trials, 100.0 * db / trials, 100.0 * da / trials);
  }
  printf("\n%d histories per cell, seeded.\n", trials);
  ps_config_free(&c);
  return 0;
}

/* ---- nightly runs, all metrics ------------------------------------------- */

typedef struct stage_count stage_count;
static void sim_judge_run(const ps_verdicts_cfg *cfg, size_t loadgen_stages, size_t blocks,
                          size_t cycles, double slow, stage_count *sc);
static void stage_nights(const ps_verdicts_cfg *cfg, long nights, long *before, long *after);

/* A night's figures. The chain-bound durations (cycle, swingset, block)
 * move together: each has 2 % noise, half of its variance shared by the
 * three (a slow machine slows them all); the deploy and bootstrap
 * durations have 3 % noise of their own; the success rate is 100 minus
 * the cycles of 100 that failed (each fails with p 0.003); the kernel
 * growth per cycle of a healthy chain is 0. `step` multiplies the cycle
 * duration alone (the hardest case for a family: no other metric's
 * change vouches for it). */
static void night(const ps_verdicts_cfg *cfg, double *v, double step) {
  double common = normal();
  for (size_t m = 0; m < cfg->nmetrics; m++) {
    const char *name = cfg->metrics[m].name;
    double chain = 0.02 * (M_SQRT1_2 * common + M_SQRT1_2 * normal());
    if (strcmp(name, "cycleAvgDuration") == 0)
      v[m] = 24.33 * step * (1.0 + chain);
    else if (strcmp(name, "live_avgSwingsetTime") == 0)
      v[m] = 0.1875 * (1.0 + chain);
    else if (strcmp(name, "live_avgBlockDuration") == 0)
      v[m] = 5.2477 * (1.0 + chain);
    else if (strcmp(name, "cycleSuccessRate") == 0) {
      int failed = 0;
      for (int k = 0; k < 100; k++)
        failed += uniform01() < 0.003;
      v[m] = 100.0 - failed;
    } else if (strstr(name, "PerCycle"))
      v[m] = 0.0;
    else
      v[m] = 100.0 * (1.0 + 0.03 * normal());
  }
}

/* Judges a history of n nights (a 10 % step in the cycle duration from
 * `step_from` on, none when 0) and counts, over the nights from
 * `count_from` on, the regressions (*false_regs: of any metric but the
 * stepped one after the step), and where the step was reported first. */
static int nightly_one(const ps_verdicts_cfg *cfg, size_t n, size_t step_from, size_t count_from,
                       long *false_regs, long *any_nights) {
  history h;
  history_alloc(&h, n, cfg->nmetrics);
  size_t cyc = 0;
  for (size_t m = 0; m < cfg->nmetrics; m++)
    if (strcmp(cfg->metrics[m].name, "cycleAvgDuration") == 0)
      cyc = m;
  for (size_t i = 0; i < n; i++)
    night(cfg, h.values + i * cfg->nmetrics, step_from && i >= step_from ? 1.10 : 1.0);
  ps_verdict_series s = {"loadgen", "daily-perf", h.runs, h.n};
  ps_verdict_list out;
  ps_verdict_list_init(&out);
  if (ps_verdict_judge(cfg, &s, count_from, &out)) {
    fprintf(stderr, "bench_verdicts: judge failed\n");
    exit(1);
  }
  int found = -1;
  size_t last_night = SIZE_MAX;
  for (size_t k = 0; k < out.n; k++) {
    size_t i = 0;
    while (i < n && out.v[k].run != h.names[i])
      i++;
    if (out.v[k].verdict != PS_VERDICT_REGRESSION)
      continue;
    if (step_from && out.v[k].metric == cfg->metrics[cyc].name && i >= step_from) {
      if (found < 0)
        found = (int)i;
      continue;
    }
    (*false_regs)++;
    if (i != last_night)
      (*any_nights)++;
    last_night = i;
  }
  ps_verdict_list_free(&out);
  history_free(&h);
  return found;
}

static int nightly(int trials) {
  ps_config c;
  ps_config_defaults(&c);
  rng_state = 4000;
  long false_regs = 0, red_nights = 0, nights = 0, found1 = 0, found3 = 0;
  for (int t = 0; t < trials; t++) {
    /* stable: 120 nights, the last 60 counted (a full window each) */
    nightly_one(&c.verdicts, 120, 0, 60, &false_regs, &red_nights);
    nights += 60;
    /* a 10 % step in the cycle duration at night 40 of 45 */
    long fr = 0, an = 0;
    int at = nightly_one(&c.verdicts, 45, 40, 40, &fr, &an);
    found1 += at >= 0 && at <= 41;
    found3 += at >= 0 && at <= 43;
  }
  long stage_before, stage_after;
  stage_nights(&c.verdicts, nights, &stage_before, &stage_after);
  printf(
      "| metrics judged a night | stable nights | false regressions | per 100 stable nights | "
      "nights with any | 10 %% step at 2 %% noise: found by the next run | by 3 runs after | "
      "stage drift (4 loadgen stages of 20 min): false regressions per 100 nights, each test "
      "at 0.001 | the run's stage family | all of a night's verdicts, per 100 stable nights |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  printf("| %zu | %ld | %ld | %.2f | %.2f %% | %.1f %% | %.1f %% | %.2f | %.2f | %.2f |\n",
         c.verdicts.nmetrics, nights, false_regs, 100.0 * (double)false_regs / (double)nights,
         100.0 * (double)red_nights / (double)nights, 100.0 * found1 / trials,
         100.0 * found3 / trials, 100.0 * (double)stage_before / (double)nights,
         100.0 * (double)stage_after / (double)nights,
         100.0 * (double)(false_regs + stage_after) / (double)nights);
  printf("\n%d stable histories of 120 nights (the last 60 counted) and %d with a step, "
         "seeded; a steady run's stages judged for each stable night counted.\n",
         trials, trials);
  ps_config_free(&c);
  return 0;
}

/* ---- a run's stages, steady or with a vat slowed ------------------------- */

/* A generated run's stages: stage 0 sets up, stages 1..L ran the load
 * generator, each of `blocks` live blocks and `cycles` cycles. The block
 * load is an AR(1) in its log (phi 0.6, sd 0.5: a busy block leaves work
 * for the next), 12 % of blocks idle, else about 10 deliveries around the
 * load; a delivery goes to one of six vats by their shares, takes
 * 3 ms x lognormal(0, 0.3) (the spread of the bundled generator's,
 * tests/data/loadgen/gen_loadgen.py), and is a BOYD of 10 ms x
 * lognormal(0, 0.3) more one time in 10. A block's swingset time is its deliveries' plus 5 ms,
 * its gap to the next 5 s plus that; a cycle lasts 20 s x an AR(1) in its
 * log (phi 0.5, sd 0.1). The same distribution in every stage: any stage
 * change is false, but for vat v1 slowed by `slow` from stage 2 on. */
#define SIM_VATS 6
static const char *const sim_vat[SIM_VATS] = {"v1", "v2", "v3", "v4", "v5", "v6"};
static const double sim_share[SIM_VATS] = {0.35, 0.25, 0.15, 0.10, 0.10, 0.05};

typedef struct sim_run {
  size_t nstages, nblocks, ncycles;
  ps_stage_figures *figs;
  ps_stage_samples *samples;
  double *swing, *gaps, *cyc;
  ps_slog_drift_stage *sstages;
  ps_slog_drift_vat *vats;
  ps_slog_drift_block *blocks;
  ps_slog_drift_block_vat *bvats;
} sim_run;

static void *sim_alloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "bench_verdicts: out of memory\n");
    exit(1);
  }
  return p;
}

static void sim_alloc_run(sim_run *r, size_t loadgen_stages, size_t blocks, size_t cycles) {
  size_t n = loadgen_stages + 1;
  r->nstages = n;
  r->nblocks = blocks;
  r->ncycles = cycles;
  r->figs = sim_alloc(n, sizeof *r->figs);
  r->samples = sim_alloc(n, sizeof *r->samples);
  r->swing = sim_alloc(n * blocks, sizeof *r->swing);
  r->gaps = sim_alloc(n * blocks, sizeof *r->gaps);
  r->cyc = sim_alloc(n * cycles, sizeof *r->cyc);
  r->sstages = sim_alloc(n, sizeof *r->sstages);
  r->vats = sim_alloc(n * SIM_VATS, sizeof *r->vats);
  r->blocks = sim_alloc(n * blocks, sizeof *r->blocks);
  r->bvats = sim_alloc(n * blocks * SIM_VATS, sizeof *r->bvats);
}

static void sim_free_run(sim_run *r) {
  free(r->figs);
  free(r->samples);
  free(r->swing);
  free(r->gaps);
  free(r->cyc);
  free(r->sstages);
  free(r->vats);
  free(r->blocks);
  free(r->bvats);
}

static double mean_of(const double *x, size_t n) {
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += x[i];
  return n ? sum / (double)n : NAN;
}

/* One loadgen stage k (1..L) of r; returns its block-vat rows. */
static size_t sim_stage(sim_run *r, int k, double slow, size_t nbv) {
  size_t nb = r->nblocks, nc = r->ncycles;
  double *swing = r->swing + (size_t)k * nb, *gaps = r->gaps + (size_t)k * nb;
  double *cyc = r->cyc + (size_t)k * nc, vat_total[SIM_VATS] = {0}, total = 0, boyd = 0;
  int64_t t0 = (int64_t)k * 1000000000000LL;
  double load = 0.5 * normal();
  for (size_t b = 0; b < nb; b++) {
    load = 0.6 * load + 0.8 * 0.5 * normal();
    double in_vat[SIM_VATS] = {0}, block_s = 0, block_boyd = 0;
    long nd = uniform01() < 0.12 ? 0 : lround(10.0 * exp(load - 0.125) + sqrt(10.0) * normal());
    for (long d = 0; d < nd; d++) {
      double u = uniform01(), acc = 0;
      int v = 0;
      while (v < SIM_VATS - 1 && u > (acc += sim_share[v]))
        v++;
      double secs = 0.003 * exp(0.3 * normal() - 0.045);
      if (uniform01() < 0.1) {
        double by = 0.01 * exp(0.3 * normal() - 0.045);
        secs += by;
        block_boyd += by;
      }
      secs *= v == 0 && k >= 2 ? slow : 1.0;
      in_vat[v] += secs;
      block_s += secs;
    }
    swing[b] = block_s + 0.005;
    gaps[b] = 5.0 + swing[b];
    r->blocks[(size_t)k * nb + b] = (ps_slog_drift_block){k, t0 + (int64_t)b * 1000, block_s,
                                                          block_boyd};
    for (int v = 0; v < SIM_VATS; v++)
      if (in_vat[v] > 0) {
        r->bvats[nbv++] = (ps_slog_drift_block_vat){k, t0 + (int64_t)b * 1000, sim_vat[v],
                                                    in_vat[v]};
        vat_total[v] += in_vat[v];
      }
    total += block_s;
    boyd += block_boyd;
  }
  double c = 0.1 * normal();
  for (size_t j = 0; j < nc; j++) {
    c = 0.5 * c + 0.866 * 0.1 * normal();
    cyc[j] = 20.0 * exp(c);
  }
  r->figs[k] = (ps_stage_figures){k, 1, mean_of(cyc, nc), mean_of(swing, nb),
                                  mean_of(gaps, nb - 1)};
  r->samples[k] = (ps_stage_samples){k, swing, nb, gaps, nb - 1, cyc, nc};
  r->sstages[k] = (ps_slog_drift_stage){
      k, 1, 0, (double)nc, total, total > 0 ? boyd / total : NAN, t0 + (int64_t)nb * 1000};
  for (int v = 0; v < SIM_VATS; v++)
    r->vats[(size_t)k * SIM_VATS + (size_t)v] = (ps_slog_drift_vat){k, sim_vat[v], sim_vat[v],
                                                                    vat_total[v]};
  return nbv;
}

struct stage_count {
  long alone, before, after; /* false stage regressions: threshold alone, 0.001 a test, family */
  long runs_after;           /* runs with any, family */
  long runs;
  long slowed_before, slowed_after; /* the slowed vat named in stage 2 */
};

/* The stage drift of `nights` steady runs of 4 loadgen stages of 20
 * minutes: false stage regressions with each test at 0.001 and with the
 * run's family. */
static void stage_nights(const ps_verdicts_cfg *cfg, long nights, long *before, long *after) {
  stage_count sc = {0};
  for (long i = 0; i < nights; i++)
    sim_judge_run(cfg, 4, 240, 65, 1.0, &sc);
  *before = sc.before;
  *after = sc.after;
}

/* Counts one judged run's regressions: `tested` with the samples, `alone`
 * the same points by the threshold alone (the same order). */
static void count_stage(const ps_verdict_list *tested, const ps_verdict_list *alone,
                        stage_count *sc, int slowed) {
  long after = 0;
  for (size_t i = 0; i < tested->n && i < alone->n; i++) {
    const ps_verdict *v = &tested->v[i], *a = &alone->v[i];
    int named = v->vat && strcmp(v->vat, "v1") == 0 && v->stage == 2;
    int before = a->verdict == PS_VERDICT_REGRESSION && v->p_value < 0.001;
    if (slowed) { /* the slowed vat moves the chain's figures too: only it counts */
      sc->slowed_before += named && before;
      sc->slowed_after += named && v->verdict == PS_VERDICT_REGRESSION;
      continue;
    }
    sc->alone += a->verdict == PS_VERDICT_REGRESSION;
    sc->before += before;
    after += v->verdict == PS_VERDICT_REGRESSION;
  }
  sc->after += after;
  sc->runs_after += after > 0;
  sc->runs++;
}

/* Generates one run and judges its stages both ways. */
static void sim_judge_run(const ps_verdicts_cfg *cfg, size_t loadgen_stages, size_t blocks,
                          size_t cycles, double slow, stage_count *sc) {
  sim_run r;
  sim_alloc_run(&r, loadgen_stages, blocks, cycles);
  r.figs[0] = (ps_stage_figures){0, 0, NAN, NAN, NAN};
  r.samples[0] = (ps_stage_samples){0, NULL, 0, NULL, 0, NULL, 0};
  r.sstages[0] = (ps_slog_drift_stage){0, 0, 0, NAN, 1.0, 0.0, 0};
  size_t nbv = 0;
  for (size_t k = 1; k <= loadgen_stages; k++)
    nbv = sim_stage(&r, (int)k, slow, nbv);
  ps_verdict_run run = {"daily-perf-1", "1", 1, PS_RUN_STATUS_SUCCESS, 0, NULL, NULL};
  ps_slog_drift_run srun = {"loadgen", "daily-perf", "daily-perf-1", "1", PS_RUN_STATUS_SUCCESS, 0};
  ps_slog_drift_blocks bl = {r.blocks + blocks, loadgen_stages * blocks, r.bvats, nbv};
  ps_verdict_list tested, alone;
  ps_verdict_list_init(&tested);
  ps_verdict_list_init(&alone);
  if (ps_stage_drift(cfg, "loadgen", "daily-perf", &run, r.figs, r.nstages, r.samples, r.nstages,
                     &tested) ||
      ps_stage_drift(cfg, "loadgen", "daily-perf", &run, r.figs, r.nstages, NULL, 0, &alone) ||
      ps_slog_drift(cfg, &srun, r.sstages, r.nstages, r.vats, r.nstages * SIM_VATS, &bl, &tested) ||
      ps_slog_drift(cfg, &srun, r.sstages, r.nstages, r.vats, r.nstages * SIM_VATS, NULL, &alone)) {
    fprintf(stderr, "bench_verdicts: stage judges failed\n");
    exit(1);
  }
  count_stage(&tested, &alone, sc, slow != 1.0);
  ps_verdict_list_free(&tested);
  ps_verdict_list_free(&alone);
  sim_free_run(&r);
}

static int stage_rates(int trials) {
  static const struct {
    const char *what;
    size_t loadgen_stages, blocks, cycles;
  } shape[] = {
      {"4 loadgen stages of 4 min (48 blocks, 15 cycles)", 4, 48, 15},
      {"4 loadgen stages of 20 min (240 blocks, 65 cycles)", 4, 240, 65},
      {"12 loadgen stages of 20 min", 12, 240, 65},
      {"4 loadgen stages of 2 h (1,440 blocks, 390 cycles)", 4, 1440, 390},
  };
  ps_config c;
  ps_config_defaults(&c);
  rng_state = 5000;
  printf("| steady runs | tests a run (family) | false stage regressions per 100 runs: "
         "threshold alone | each test at 0.001 (before) | the run's family at 0.01 (now) | "
         "runs with any, now | a vat 40 %% slower from stage 2, named there: before | now |\n");
  printf("|---|---|---|---|---|---|---|---|\n");
  for (size_t s = 0; s < sizeof shape / sizeof shape[0]; s++) {
    stage_count sc = {0}, slowed = {0};
    for (int t = 0; t < trials; t++) {
      sim_judge_run(&c.verdicts, shape[s].loadgen_stages, shape[s].blocks, shape[s].cycles, 1.0,
                    &sc);
      sim_judge_run(&c.verdicts, shape[s].loadgen_stages, shape[s].blocks, shape[s].cycles, 1.4,
                    &slowed);
    }
    printf("| %s | %zu | %.2f | %.2f | %.2f | %.2f %% | %.1f %% | %.1f %% |\n", shape[s].what,
           (shape[s].loadgen_stages - 1) * PS_STAGE_TESTS_PER_STAGE,
           100.0 * (double)sc.alone / trials, 100.0 * (double)sc.before / trials,
           100.0 * (double)sc.after / trials, 100.0 * (double)sc.runs_after / trials,
           100.0 * (double)slowed.slowed_before / trials,
           100.0 * (double)slowed.slowed_after / trials);
  }
  printf("\n%d steady runs and %d with the slowed vat per row, seeded.\n", trials, trials);
  ps_config_free(&c);
  return 0;
}

/* ---- candidates ---------------------------------------------------------- */

static long no_level, judged;

/* The verdict of the last of `ny` candidate runs of one revision at
 * `cand_level`, against a nightly history of n runs at level(i). */
static int one_candidate(const ps_verdicts_cfg *cfg, const noise_model *nm, size_t n,
                         double (*level)(size_t), double cand_level, size_t ny) {
  history h, c;
  history_alloc(&h, n, 1);
  history_alloc(&c, ny, 1);
  for (size_t i = 0; i < n; i++)
    h.values[i] = 24.33 * level(i) * (1.0 + draw(nm));
  for (size_t k = 0; k < ny; k++) {
    c.values[k] = 24.33 * cand_level * (1.0 + draw(nm));
    c.runs[k].revision = "candidate";
    c.runs[k].start_ns = (int64_t)n * DAY_NS + (int64_t)k;
  }
  ps_verdict_series ref = {"loadgen", "daily-perf", h.runs, h.n};
  ps_verdict_series cs = {"loadgen", "manual", c.runs, c.n};
  ps_verdict_list out;
  ps_verdict_list_init(&out);
  if (ps_verdict_candidate(cfg, &ref, &cs, ny - 1, &out) || out.n > 1) {
    fprintf(stderr, "bench_verdicts: candidate failed\n");
    exit(1);
  }
  /* none at all: the nightly series' own verdicts saw a change too recent
   * for its level's noise to be known */
  int kind = out.n ? (int)out.v[0].verdict : -1;
  no_level += !out.n;
  judged++;
  ps_verdict_list_free(&out);
  history_free(&h);
  history_free(&c);
  return kind;
}

static double step_at_20(size_t i) { return i >= 20 ? 1.10 : 1.0; }

static int candidates(int trials) {
  ps_config c;
  ps_config_defaults(&c);
  c.verdicts.nmetrics = 1; /* cycleAvgDuration: higher is worse, 5 % */
  const noise_model models[] = {
      {"uniform +-3 %", 0, 0.03},  {"normal sd 1.5 %", 1, 0.015}, {"normal sd 2 %", 1, 0.02},
      {"normal sd 3 %", 1, 0.03},  {"normal sd 10 %", 1, 0.10},
  };
  printf("| noise | at the level, 1 run: any alarm | +10 %%, 1 run: regression | +12 %%, 1 run: regression | +10 %%, 3 runs of one revision: regression | at the new level after a 10 %% nightly step: any alarm | no verdict (level too new) |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
    const noise_model *nm = &models[mi];
    rng_state = 2000 + mi;
    int fa = 0, d10 = 0, d12 = 0, d3 = 0, fs = 0;
    no_level = judged = 0;
    for (int t = 0; t < trials; t++) {
      fa += one_candidate(&c.verdicts, nm, 30, flat, 1.0, 1) > PS_VERDICT_NONE;
      d10 += one_candidate(&c.verdicts, nm, 30, flat, 1.10, 1) == PS_VERDICT_REGRESSION;
      d12 += one_candidate(&c.verdicts, nm, 30, flat, 1.12, 1) == PS_VERDICT_REGRESSION;
      d3 += one_candidate(&c.verdicts, nm, 30, flat, 1.10, 3) == PS_VERDICT_REGRESSION;
      fs += one_candidate(&c.verdicts, nm, 40, step_at_20, 1.10, 1) > PS_VERDICT_NONE;
    }
    printf("| %s | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %.1f %% |\n", nm->name,
           100.0 * fa / trials, 100.0 * d10 / trials, 100.0 * d12 / trials,
           100.0 * d3 / trials, 100.0 * fs / trials, 100.0 * (double)no_level / (double)judged);
  }
  printf("\n%d candidates per cell, seeded.\n", trials);
  ps_config_free(&c);
  return 0;
}

/* ---- one series --------------------------------------------------------- */

/* The verdicts of the values on stdin (one a line, oldest first) judged as
 * one metric with the default settings: each run with a regression or
 * improvement as "INDEX VERDICT began=INDEX baseline=B (N runs) p=P", for checking a real
 * series by hand (docs/verdicts.md, "The peers' test suites"). */
static int series(void) {
  ps_config c;
  ps_config_defaults(&c);
  c.verdicts.nmetrics = 1;
  size_t cap = 64, n = 0;
  double *v = malloc(cap * sizeof *v);
  double x;
  while (v && scanf("%lf", &x) == 1) {
    if (n == cap) {
      double *nv = realloc(v, (cap *= 2) * sizeof *v);
      if (!nv)
        break;
      v = nv;
    }
    v[n++] = x;
  }
  if (!v || n == 0) {
    fprintf(stderr, "bench_verdicts series: no values on stdin\n");
    free(v);
    ps_config_free(&c);
    return 65;
  }
  history h;
  history_alloc(&h, n, 1);
  memcpy(h.values, v, n * sizeof *v);
  for (size_t i = 0; i < n; i++)
    snprintf(h.names[i], sizeof h.names[i], "run-%06zu", i);
  ps_verdict_series s = {"loadgen", "daily-perf", h.runs, h.n};
  ps_verdict_list out;
  ps_verdict_list_init(&out);
  int rc = ps_verdict_judge(&c.verdicts, &s, 0, &out);
  for (size_t k = 0; !rc && k < out.n; k++)
    if (out.v[k].verdict != PS_VERDICT_NONE)
      printf("%s %s began=%s baseline=%g (%lld runs) p=%g\n", out.v[k].run + 4,
             ps_verdict_kind_name(out.v[k].verdict), out.v[k].change_run + 4, out.v[k].baseline,
             (long long)out.v[k].baseline_runs, out.v[k].p_value);
  ps_verdict_list_free(&out);
  history_free(&h);
  free(v);
  ps_config_free(&c);
  return rc ? 1 : 0;
}

static long arg_long(int argc, char **argv, const char *name, long def) {
  for (int i = 2; i + 1 < argc; i++)
    if (strcmp(argv[i], name) == 0)
      return strtol(argv[i + 1], NULL, 10);
  return def;
}

static int triage_cost(long lines) {
  ps_buf text;
  ps_buf_init(&text, 0);
  for (long i = 0; i < lines; i++)
    if (i % 10 == 9 ? ps_buf_printf(&text, "undo id=u%ld revokes=f%ld reason=wrong\n", i, i - 1)
                    : ps_buf_printf(&text, "ack id=f%ld run=r%ld reason=seen%ld\n", i, i, i))
      return 70;
  ps_triage_set s, copy;
  ps_triage_set_init(&s);
  ps_triage_set_init(&copy);
  double t0 = cpu_seconds();
  long bad = ps_triage_parse_text(&s, "bench.triage", text.data, text.len, NULL, NULL);
  double t1 = cpu_seconds();
  for (size_t i = 0; i < s.n; i++)
    if (ps_triage_add(&copy, &s.d[i]) < 0)
      return 70;
  double t2 = cpu_seconds();
  size_t found = 0;
  char run[32];
  for (long i = 0; i < lines; i++) {
    snprintf(run, sizeof run, "r%ld", i);
    found += ps_triage_ack_of(&copy, "h", run, NULL, "m") != NULL;
    found += ps_triage_excluded(&copy, "h", run) != NULL;
  }
  double t3 = cpu_seconds();
  printf("triage lines=%ld bytes=%zu bad=%ld decisions=%zu in_force_acks=%zu parse_cpu_s=%.4f "
         "copy_cpu_s=%.4f ask_all_cpu_s=%.4f\n",
         lines, text.len, bad, s.n, found, t1 - t0, t2 - t1, t3 - t2);
  ps_triage_set_free(&s);
  ps_triage_set_free(&copy);
  ps_buf_free(&text);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "triage") == 0) {
    long lines = arg_long(argc, argv, "--lines", 100000);
    if (lines < 1) {
      fprintf(stderr, "bench_verdicts triage: --lines >= 1\n");
      return 64;
    }
    return triage_cost(lines);
  }
  if (argc >= 2 && strcmp(argv[1], "cost") == 0) {
    long runs = arg_long(argc, argv, "--runs", 365);
    long window = arg_long(argc, argv, "--window", 60);
    long repeat = arg_long(argc, argv, "--repeat", 5);
    if (runs < 60 || window < 4 || window > 1000 || repeat < 1) {
      fprintf(stderr, "bench_verdicts cost: --runs >= 60, --window 4..1000, --repeat >= 1\n");
      return 64;
    }
    int reverse = 0;
    for (int i = 2; i < argc; i++)
      reverse |= strcmp(argv[i], "--reverse") == 0;
    return cost((size_t)runs, window, (int)repeat, reverse);
  }
  if (argc >= 2 && strcmp(argv[1], "rates") == 0) {
    long trials = arg_long(argc, argv, "--trials", 200);
    if (trials < 1) {
      fprintf(stderr, "bench_verdicts rates: --trials >= 1\n");
      return 64;
    }
    return rates((int)trials);
  }
  if (argc >= 2 && strcmp(argv[1], "candidates") == 0) {
    long trials = arg_long(argc, argv, "--trials", 200);
    if (trials < 1) {
      fprintf(stderr, "bench_verdicts candidates: --trials >= 1\n");
      return 64;
    }
    return candidates((int)trials);
  }
  if (argc >= 2 && strcmp(argv[1], "spoiled") == 0) {
    long trials = arg_long(argc, argv, "--trials", 200);
    if (trials < 1) {
      fprintf(stderr, "bench_verdicts spoiled: --trials >= 1\n");
      return 64;
    }
    return spoiled_rates((int)trials);
  }
  if (argc >= 2 && strcmp(argv[1], "nightly") == 0) {
    long trials = arg_long(argc, argv, "--trials", 200);
    if (trials < 1) {
      fprintf(stderr, "bench_verdicts nightly: --trials >= 1\n");
      return 64;
    }
    return nightly((int)trials);
  }
  if (argc >= 2 && strcmp(argv[1], "stages") == 0) {
    long trials = arg_long(argc, argv, "--trials", 200);
    if (trials < 1) {
      fprintf(stderr, "bench_verdicts stages: --trials >= 1\n");
      return 64;
    }
    return stage_rates((int)trials);
  }
  if (argc >= 2 && strcmp(argv[1], "series") == 0)
    return series();
  fprintf(stderr, "usage: bench_verdicts cost [--runs N] [--window W] [--repeat R] [--reverse]\n"
                  "       bench_verdicts rates [--trials T]\n"
                  "       bench_verdicts candidates [--trials T]\n"
                  "       bench_verdicts triage [--lines N]\n"
                  "       bench_verdicts spoiled [--trials T]\n"
                  "       bench_verdicts nightly [--trials T]\n"
                  "       bench_verdicts stages [--trials T]\n"
                  "       bench_verdicts series < values\n");
  return 64;
}
