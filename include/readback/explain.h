/*
 * readback/explain: a run's explanation (verdict/explain.h) read back from
 * InfluxDB with InfluxQL, for `perfship verdicts --explain`, the report
 * page and the regression alert (docs/verdicts.md, "Why it got slower").
 *
 * Contract
 * - ps_rb_explain_query() asks, one request each and every one bounded in
 *   time: the run's loadgen_run point (within `since_ns` of now), its
 *   verdicts, the start of the run where its explained regression began
 *   (core/figures.h `explained` rows; else the run itself), the old
 *   level's runs (the newest `baseline_runs` of its verdict, else
 *   PS_EXPLAIN_OLD_RUNS, of the series on the host within 90 days before
 *   that start), and the slog stage and vat points of the series on the
 *   host from the oldest of them to 7 days after the run's start. Every
 *   name from data or the command line is quoted (readback/statement.h).
 *   It blocks (threadpool or a one-shot command).
 * - `host` NULL: the run's host is taken from its loadgen_run point (the
 *   newest when several machines have a run of that name).
 * - Returns 0 with d->found (the run was there) and d->e filled;
 *   -ENOENT when the run has no loadgen_run point in range; otherwise the
 *   code of ps_rb_query() with one sentence in `err`; -ENOMEM.
 * - ps_rb_explain_parse_answer() adds one answer to `statement` to `d`: the
 *   parser of server text; any JSON, or none, only adds what it
 *   recognises (fuzzed by tests/fuzz/fuzz_explain.c).
 * - ps_rb_explain_query_blocks() (the report's chart of delivery seconds
 *   per block, docs/report.md "Inside the chain"), after a successful
 *   ps_rb_explain_query(): picks the run's top vats (ps_rb_explain_chart_pick:
 *   the PS_EXPLAIN_TOP vats with the most delivery seconds over the run's
 *   stages that take part, as verdict/explain.h defines them; ties by vat
 *   ID) and asks for their loadgen_slog_block_vat points in those stages,
 *   one request bounded by the run's tag, its host, the vats, the stages,
 *   time (from the run's start to 7 days after) and
 *   PS_EXPLAIN_BLOCK_POINTS + 1 points per vat. A vat with more keeps its
 *   first PS_EXPLAIN_BLOCK_POINTS and says so (`more`). The run's other
 *   requests do not ask for these points (`verdicts --explain` and the
 *   alert do not need them).
 * - ps_rb_explain_data_free() frees what the queries kept.
 */
#ifndef PS_READBACK_EXPLAIN_H
#define PS_READBACK_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"
#include "verdict/explain.h"

#define PS_EXPLAIN_OLD_RUNS 10
/* The chart's points per vat at most: a night of loadgen stages is a few
 * thousand blocks; the page carries about 30 bytes a point. */
#define PS_EXPLAIN_BLOCK_POINTS 5000

/* One of the chart's vats: its delivery seconds over the stages that take
 * part, and how many of its block points were read. */
typedef struct ps_explain_chart_vat {
  const char *vat;  /* the vatID */
  const char *name; /* NULL when the slog named none */
  double delivery_s;
  size_t npoints;
  int more; /* the server had more than PS_EXPLAIN_BLOCK_POINTS */
} ps_explain_chart_vat;

/* One loadgen_slog_block_vat point of a chart vat. */
typedef struct ps_explain_block_row {
  size_t vat; /* index in chart[] */
  double height, delivery_s;
} ps_explain_block_row;

enum {
  PS_EQ_RUN,
  PS_EQ_VERDICTS,
  PS_EQ_CHANGE_RUN,
  PS_EQ_OLD_RUNS,
  PS_EQ_STAGES,
  PS_EQ_VATS,
  PS_EQ_BLOCK_VATS, /* only ps_rb_explain_query_blocks() asks it */
  PS_EXPLAIN_NSTATEMENTS
};

typedef struct ps_explain_data {
  /* asked */
  char *run, *host;
  int64_t since_ns, now_ns;
  /* found */
  int found;
  int known; /* ps_rb_explain_data_known() */
  char *series;
  int64_t run_ns;
  char *change_run;   /* the explained regression's change_run; NULL: none */
  char *regressed;    /* its metric */
  int64_t baseline_runs;
  int64_t change_ns;
  char **old;         /* old level, newest first */
  int64_t *old_ns;
  size_t nold, old_cap;
  ps_explain_stage_row *stages;
  size_t nstages, stages_cap;
  ps_explain_vat_row *vats;
  size_t nvats, vats_cap;
  /* the report's chart (ps_rb_explain_query_blocks) */
  int chart_picked;
  ps_explain_chart_vat chart[PS_EXPLAIN_TOP];
  size_t nchart;
  int chart_stages[64]; /* the stages that take part (at most 64 asked) */
  size_t nchart_stages;
  ps_explain_block_row *blocks; /* in the answer's order: per vat, by time */
  size_t nblocks, blocks_cap;
  char **strs;        /* what the rows point at */
  size_t nstrs, strs_cap;
  ps_explanation e;
} ps_explain_data;

void ps_rb_explain_data_init(ps_explain_data *d, const char *run, const char *host,
                             int64_t since_ns, int64_t now_ns);
void ps_rb_explain_data_free(ps_explain_data *d);
/* The regression is known already (the alert is raised before its verdict
 * points are on the server): `metric` regressed, the change began in
 * `change_run` (NULL: the run itself), its baseline the median of
 * `baseline_runs` runs; the verdicts are then not asked for, and the old
 * level is that many runs (PS_EXPLAIN_OLD_RUNS when it is not 1-1000, as
 * when not told). -ENOMEM. */
int ps_rb_explain_data_known(ps_explain_data *d, const char *metric, const char *change_run,
                             int64_t baseline_runs);
int ps_rb_explain_statement(const ps_explain_data *d, int statement, ps_buf *out);
int ps_rb_explain_parse_answer(ps_explain_data *d, int statement, const char *json, size_t len);
int ps_rb_explain_query(const ps_config *cfg, ps_explain_data *d, ps_buf *err);
/* Picks the chart's vats and stages from the rows read (idempotent). */
void ps_rb_explain_chart_pick(ps_explain_data *d);
/* 0 (also when no vat takes part: nchart 0), or as ps_rb_explain_query(). */
int ps_rb_explain_query_blocks(const ps_config *cfg, ps_explain_data *d, ps_buf *err);

#endif
