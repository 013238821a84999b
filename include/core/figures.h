/*
 * core/figures: the one table of the figures perfship judges: what each
 * is called, how people read it, and where it comes from (docs/verdicts.md
 * "What is judged", docs/schema.md for the measurements).
 *
 * Contract
 * - ps_figures[] holds one row per figure. A row names the figure (what a
 *   `perfship_verdict` point's `metric` tag and the configuration's
 *   verdicts.metrics call it), a label and unit for people, and its source:
 *   a measurement, a tag selector (only points whose `tag` is `tag_value`;
 *   NULL: every point) and a field.
 * - Run figures (PS_FIG_RUN) are one value per loadgen run, judged across
 *   revisions. The first PS_FIGURES_NHEADLINE rows are the headline ones:
 *   judged unless the configuration says otherwise (their row gives the
 *   default direction and smallest change) and the report page's columns,
 *   in this order. The other run rows may be judged when the configuration
 *   names them (and says which direction is worse).
 * - Stage figures (PS_FIG_STAGE) are one value per stage of a run, judged
 *   against the run's first loadgen stage (verdict/stage_drift.h); they
 *   follow the run rows in ps_stage_figure_id order. The stage kind row
 *   (PS_FIG_STAGE_KIND) says which stages take part.
 * - Growth figures (PS_FIG_GROWTH) are a loadgen stage's growth per cycle
 *   of a kernel counter (loadgen_slog_stage), judged against the absolute
 *   limit verdicts.max_growth_per_cycle (verdict/growth_limit.h), because a
 *   leak there since the first run never shows as a change; they follow
 *   the stage kind row in ps_growth_figure_id order.
 * - Slog stage figures (PS_FIG_SLOG_STAGE) are a loadgen stage's BOYD share
 *   and a vat's delivery seconds per cycle, from the chain's slog, judged
 *   against the run's first loadgen stage like the stage figures
 *   (verdict/slog_drift.h); they come last, in ps_slog_stage_figure_id
 *   order.
 * - Benchmarker figures (PS_FIG_BENCHMARKER) are a benchmarker report's
 *   figures of one scenario (all operation types: its fit's, and a step's
 *   at the lowest load it completed), judged across
 *   reports of the same configuration, scenario, arm and host like run
 *   figures across revisions (docs/verdicts.md "Benchmarker: across
 *   releases"); judged by default, after the slog stage rows.
 * - Everything that picks these figures out of points, queries them or
 *   names them reads this table: the verdict stage's collector, the report
 *   page, the configuration's defaults and its list of judgeable metrics.
 * - Constant, no state; strings are static.
 */
#ifndef PS_CORE_FIGURES_H
#define PS_CORE_FIGURES_H

#include <stddef.h>

/* Which direction of a change is a regression, and how a change is
 * measured (verdicts.metrics, docs/verdicts.md). */
typedef enum { PS_WORSE_HIGHER = 0, PS_WORSE_LOWER } ps_worse;
typedef enum { PS_CHANGE_PERCENT = 0, PS_CHANGE_POINTS } ps_change_unit;

typedef enum ps_figure_scope {
  PS_FIG_RUN = 0,     /* one value per run */
  PS_FIG_STAGE,       /* one value per stage of a run */
  PS_FIG_STAGE_KIND,  /* per stage: does it take part (a bool field) */
  PS_FIG_GROWTH,      /* per stage: a kernel counter's growth per cycle, against a limit */
  PS_FIG_SLOG_STAGE,  /* per stage (and vat): a slog figure against the first loadgen stage */
  PS_FIG_BENCHMARKER, /* per benchmarker report and scenario: a fit's figure across releases */
} ps_figure_scope;

typedef struct ps_figure {
  const char *field;       /* the source field; also the name of a run figure */
  const char *name;        /* the `metric` of its verdicts, the configuration's name */
  const char *label;       /* for people: a column, a chart title */
  const char *unit;        /* "s", "%", "count", "" */
  const char *measurement; /* where it comes from */
  const char *tag;         /* selector: only points with tag = tag_value; NULL: all */
  const char *tag_value;
  ps_figure_scope scope;
  /* Defaults of the headline rows (verdicts.metrics). */
  ps_worse worse;
  double min_change;
  ps_change_unit change_unit;
  /* A regression of this run figure gets its cause beside it: the vats
   * that moved, BOYD, kernel growth (verdict/explain.h). */
  int explained;
} ps_figure;

#define PS_FIGURES_NHEADLINE 7

/* The stage figures, in the order of their rows (ps_stage_figure()). */
typedef enum ps_stage_figure_id {
  PS_STAGE_FIG_AVG_DURATION = 0, /* cycles of the stage */
  PS_STAGE_FIG_SWINGSET_TIME,    /* live blocks of the stage */
  PS_STAGE_FIG_BLOCK_DURATION,   /* live blocks of the stage */
  PS_STAGE_NFIGURES
} ps_stage_figure_id;

/* The growth figures, in the order of their rows (ps_growth_figure()) and
 * of verdicts.max_growth_per_cycle's members. */
typedef enum ps_growth_figure_id {
  PS_GROWTH_KERNEL_OBJECTS = 0,
  PS_GROWTH_KP_UNRESOLVED,
  PS_GROWTH_CLIST_ENTRIES,
  PS_GROWTH_NFIGURES
} ps_growth_figure_id;

/* The slog's stage-drift figures, in the order of their rows
 * (ps_slog_stage_figure()): judged against the run's first loadgen stage
 * (verdict/slog_drift.h). */
typedef enum ps_slog_stage_figure_id {
  PS_SLOG_FIG_BOYD_SHARE = 0,     /* loadgen_slog_stage boydShare, in percent */
  PS_SLOG_FIG_VAT_PER_CYCLE,      /* loadgen_slog_vat deliverySeconds / finishedCycles */
  PS_SLOG_NFIGURES
} ps_slog_stage_figure_id;

extern const ps_figure ps_figures[];
extern const size_t ps_nfigures;

/* The row of `name` (any scope), or NULL. */
const ps_figure *ps_figure_find(const char *name);
/* The row of a stage figure, and of the stage kind. */
const ps_figure *ps_stage_figure(ps_stage_figure_id id);
const ps_figure *ps_stage_kind_figure(void);
const ps_figure *ps_growth_figure(ps_growth_figure_id id);
const ps_figure *ps_slog_stage_figure(ps_slog_stage_figure_id id);

#define PS_BENCHMARKER_NFIGURES 3
/* The n-th benchmarker figure (n < PS_BENCHMARKER_NFIGURES). */
const ps_figure *ps_benchmarker_figure(size_t n);
/* Does point tag value `value` (NULL: the point has no such tag) pass the
 * row's selector? */
int ps_figure_selects(const ps_figure *f, const char *value);

#endif
