/*
 * verdict: what a verdict of perfship is, and how it becomes a
 * `perfship_verdict` point (docs/schema.md "Verdicts"; the method is in
 * docs/verdicts.md).
 *
 * Contract
 * - A ps_verdict is a plain value made by one of the judges: judge.h
 *   (a loadgen series across revisions), stage_drift.h (stages of one run),
 *   arm_compare.h (arms of one DSS bench test), candidate.h (a run against
 *   the current level of another series), growth_limit.h (a stage's
 *   kernel growth against a limit). Judges compute and never
 *   emit, so a driver under back-pressure can emit the list at its own pace.
 * - Every string in a ps_verdict is borrowed from the judge's input (run
 *   names, the series, the metric names of the configuration) and must stay
 *   valid until the verdict has been emitted; but `note`, a sentence made
 *   for the verdict, which it holds.
 * - Absent values: NaN for floats, -1 for counts and the stage, NULL for
 *   strings; an absent value is left out of the point. change_pct is not
 *   stored but derived from value and baseline when the point is built, so it
 *   is absent exactly when the baseline is 0 or absent.
 * - ps_verdict_emit() builds one point and returns what the emitter returns:
 *   0, or a negative errno (-EAGAIN: not taken, emit the same verdict again).
 * - No I/O, no globals; the list grows with malloc and is freed by its owner.
 */
#ifndef PS_VERDICT_VERDICT_H
#define PS_VERDICT_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"
#include "core/emit.h"

#define PS_VERDICT_MEASUREMENT "perfship_verdict"
/* The longest `note` kept, with its NUL. */
#define PS_VERDICT_NOTE_MAX 256

typedef enum ps_verdict_kind {
  PS_VERDICT_NONE = 0,
  PS_VERDICT_REGRESSION,
  PS_VERDICT_IMPROVEMENT,
  /* Triage (verdict/triage.h): written in place of a run's verdicts when a
   * decision keeps the run out of judging, or starts the series at it. */
  PS_VERDICT_EXCLUDED,
  PS_VERDICT_BASELINE,
} ps_verdict_kind;

typedef enum ps_verdict_method {
  PS_METHOD_EDIVISIVE = 0, /* a loadgen series across revisions */
  PS_METHOD_STAGE_DRIFT,   /* a loadgen stage against the run's first loadgen stage */
  PS_METHOD_ARM_COMPARE,   /* a DSS arm against the reference arm */
  PS_METHOD_CANDIDATE,     /* a run against the current level of another series */
  PS_METHOD_LIMIT,         /* a loadgen stage's growth against an absolute limit */
} ps_verdict_method;

typedef struct ps_verdict {
  /* tags */
  const char *source; /* "loadgen", "dss_bench" */
  const char *series; /* the loadgen test_type, or the DSS test */
  const char *metric;
  const char *run;
  /* Not a tag: the point's host is the agent's global tag, so a driver
   * writes only the verdicts about its own host's runs (NULL: its own). */
  const char *host;
  int stage;              /* stage drift: the compared stage; else -1 */
  const char *arm;        /* arm_compare only */
  const char *reference;  /* arm_compare only */
  const char *against;    /* candidate only: the series it was judged against */
  const char *vat;        /* stage drift of a vat's figure: its vatID */
  /* fields */
  ps_verdict_kind verdict;
  ps_verdict_method method;
  double value;
  double baseline;
  const char *change_run;
  int64_t baseline_runs;   /* edivisive only */
  double p_value;          /* edivisive, stage_drift, candidate; NaN when untested */
  /* The run's family (docs/verdicts.md, "The error of a night"):
   * edivisive: the metrics judged on the run, and this p-value adjusted for
   * them by Holm's step-down; stage_drift: the run's stage tests counted in
   * advance (stage_test.h), and this p-value adjusted by Bonferroni. NaN
   * with p_value; -1 / NaN for the other methods. */
  int64_t family_size;
  double p_adjusted;
  const char *revision;    /* loadgen */
  const char *vat_name;    /* with `vat`: the slog's create-vat name, NULL unknown */
  /* The revision range of a regression or improvement across revisions
   * (edivisive: the last run at the old level and the first at the new;
   * candidate: the newest run of the level and the candidate); NULL
   * otherwise. */
  const char *good_run, *good_revision, *bad_run, *bad_revision;
  int backfill;
  int64_t variants;        /* arm_compare only */
  int64_t variants_agree;
  int64_t variants_skipped;
  int64_t time_ns;
  /* A benchmarker run across releases: what its steps say beside the
   * figures ("step at 40 users went Unstable; ... was stable there",
   * docs/verdicts.md "Benchmarker: across releases"); "" when nothing. */
  int has_note; /* written always, "" too: see ps_verdict_emit */
  char note[PS_VERDICT_NOTE_MAX];
} ps_verdict;

/* A verdict with every optional part absent, for judges to fill in. */
ps_verdict ps_verdict_blank(void);

typedef struct ps_verdict_list {
  ps_verdict *v;
  size_t n, cap;
} ps_verdict_list;

void ps_verdict_list_init(ps_verdict_list *l);
/* Appends a copy; -ENOMEM leaves the list as it was. */
int ps_verdict_list_push(ps_verdict_list *l, const ps_verdict *v);
void ps_verdict_list_free(ps_verdict_list *l);

const char *ps_verdict_kind_name(ps_verdict_kind k);
const char *ps_verdict_method_name(ps_verdict_method m);

/* (value - baseline) / baseline x 100, signed; NaN when either is absent
 * or the baseline is 0 (docs/schema.md: change_pct is then absent). */
double ps_verdict_change_pct(double value, double baseline);

/* Whether the change from `baseline` to `value` reaches `min_change`:
 * percent of |baseline| (a change away from a baseline of 0 always does),
 * or absolute points. A change of exactly 0 never does, so min_change 0
 * means "any change". Absent (NaN) values never do. */
int ps_verdict_beyond(double value, double baseline, double min_change,
                      ps_change_unit unit);

/* regression or improvement for a value that moved away from its baseline
 * (none when it did not move) given which direction is worse. */
ps_verdict_kind ps_verdict_direction(double value, double baseline, ps_worse worse);

int ps_verdict_emit(ps_emitter *em, const ps_verdict *v);

#endif
