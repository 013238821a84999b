/*
 * readback/explain.c: a run's explanation read back from InfluxDB. See
 * include/readback/explain.h.
 *
 * Design
 * - The old level is the runs before the one where the change began, as
 *   many as the verdict's baseline was computed from: the level the judge
 *   compared against (docs/verdicts.md, "Why it got slower").
 * - Times are integer nanoseconds in the statements, from the answers
 *   before them, so no statement reads beyond the runs it is about.
 * - Answers are parsed whole and their strings copied into d->strs, so
 *   one answer is in memory at a time (as report/query.c does).
 */
#include "readback/explain.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/figures.h"
#include "core/util.h"
#include "influx/client.h"
#include "readback/query.h"
#include "readback/statement.h"
#include "readback/answer.h"

#define DAY_NS ((int64_t)86400 * 1000000000)
#define AFTER_RUN_NS (7 * DAY_NS)  /* a run's stages begin within this of its start */
#define OLD_SPAN_NS (90 * DAY_NS)  /* the old level is looked for this far back */
#define CHANGE_SPAN_NS (366 * DAY_NS)
/* Answers' times are doubles (a quarter of a microsecond at today's
 * epoch): a bound at a time read back gets this much slack. */
#define SLACK_NS 1000

void ps_rb_explain_data_init(ps_explain_data *d, const char *run, const char *host,
                             int64_t since_ns, int64_t now_ns) {
  memset(d, 0, sizeof *d);
  d->run = run ? strdup(run) : NULL;
  d->host = host ? strdup(host) : NULL;
  d->since_ns = since_ns;
  d->now_ns = now_ns;
  d->baseline_runs = -1;
}

void ps_rb_explain_data_free(ps_explain_data *d) {
  for (size_t i = 0; i < d->nstrs; i++)
    free(d->strs[i]);
  free(d->strs);
  free(d->old);
  free(d->old_ns);
  free(d->stages);
  free(d->vats);
  free(d->blocks);
  free(d->run);
  free(d->host);
  memset(d, 0, sizeof *d);
}

static const char *keep(ps_explain_data *d, const char *s) {
  if (!s)
    return NULL;
  for (size_t i = d->nstrs; i-- > 0 && i + 64 > d->nstrs;)
    if (strcmp(d->strs[i], s) == 0)
      return d->strs[i]; /* rows of one run repeat its name */
  if (d->nstrs == d->strs_cap) {
    size_t cap = d->strs_cap ? d->strs_cap * 2 : 64;
    char **n = realloc(d->strs, cap * sizeof *n);
    if (!n)
      return NULL;
    d->strs = n;
    d->strs_cap = cap;
  }
  char *c = strdup(s);
  if (c)
    d->strs[d->nstrs++] = c;
  return c;
}

static int grow(void **p, size_t *cap, size_t n, size_t size) {
  if (n < *cap)
    return 0;
  size_t c = *cap ? *cap * 2 : 16;
  void *q = realloc(*p, c * size);
  if (!q)
    return -ENOMEM;
  *p = q;
  *cap = c;
  return 0;
}

/* --- the statements ------------------------------------------------------ */

static int where_host(ps_buf *q, const char *host) {
  if (!host)
    return 0;
  return ps_buf_puts(q, " AND \"host\" = ") < 0 || ps_rb_string(q, host) < 0 ? -EINVAL : 0;
}

int ps_rb_explain_data_known(ps_explain_data *d, const char *metric, const char *change_run,
                             int64_t baseline_runs) {
  if (!(d->regressed = (char *)keep(d, metric)) ||
      !(d->change_run = (char *)keep(d, change_run ? change_run : d->run)))
    return -ENOMEM;
  d->known = 1;
  if (baseline_runs >= 1 && baseline_runs <= 1000)
    d->baseline_runs = baseline_runs;
  return 0;
}

static int64_t oldest(const ps_explain_data *d) {
  int64_t t = d->run_ns;
  for (size_t i = 0; i < d->nold; i++)
    if (d->old_ns[i] < t)
      t = d->old_ns[i];
  return t;
}

int ps_rb_explain_statement(const ps_explain_data *d, int statement, ps_buf *q) {
  int rc = 0;
  const char *series = d->series ? d->series : "";
  switch (statement) {
  case PS_EQ_RUN:
    if (!d->run)
      return -ENOENT;
    rc = ps_buf_puts(q, "SELECT * FROM \"loadgen_run\" WHERE \"run\" = ") |
         ps_rb_string(q, d->run) | where_host(q, d->host) |
         ps_buf_printf(q, " AND time > %" PRId64, d->now_ns - d->since_ns);
    break;
  case PS_EQ_VERDICTS:
    if (d->known)
      return -ENOENT;
    rc = ps_buf_puts(q, "SELECT * FROM \"perfship_verdict\" WHERE \"run\" = ") |
         ps_rb_string(q, d->run ? d->run : "") | where_host(q, d->host) |
         ps_buf_printf(q, " AND time >= %" PRId64 " AND time <= %" PRId64, d->run_ns - SLACK_NS,
                       d->run_ns + AFTER_RUN_NS);
    break;
  case PS_EQ_CHANGE_RUN:
    if (!d->change_run)
      return -ENOENT;
    rc = ps_buf_puts(q, "SELECT * FROM \"loadgen_run\" WHERE \"run\" = ") |
         ps_rb_string(q, d->change_run) | where_host(q, d->host) |
         ps_buf_printf(q, " AND time <= %" PRId64 " AND time > %" PRId64, d->run_ns + SLACK_NS,
                       d->run_ns - CHANGE_SPAN_NS);
    break;
  case PS_EQ_OLD_RUNS:
    rc = ps_buf_puts(q, "SELECT * FROM \"loadgen_run\" WHERE \"test_type\" = ") |
         ps_rb_string(q, series) | where_host(q, d->host) |
         ps_buf_printf(q, " AND time < %" PRId64 " AND time > %" PRId64, d->change_ns + SLACK_NS,
                       d->change_ns - OLD_SPAN_NS);
    break;
  case PS_EQ_STAGES:
  case PS_EQ_VATS:
    rc = ps_buf_puts(q, statement == PS_EQ_STAGES
                            ? "SELECT * FROM \"loadgen_slog_stage\" WHERE \"test_type\" = "
                            : "SELECT \"deliverySeconds\", \"name\", \"run\", \"stage\", "
                              "\"vat\" FROM \"loadgen_slog_vat\" WHERE \"test_type\" = ") |
         ps_rb_string(q, series) | where_host(q, d->host) |
         ps_buf_printf(q, " AND time >= %" PRId64 " AND time < %" PRId64, oldest(d) - SLACK_NS,
                       d->run_ns + AFTER_RUN_NS);
    break;
  case PS_EQ_BLOCK_VATS:
    if (!d->run || !d->nchart || !d->nchart_stages)
      return -ENOENT;
    rc = ps_buf_puts(q, "SELECT \"blockHeight\", \"deliverySeconds\" FROM "
                        "\"loadgen_slog_block_vat\" WHERE \"run\" = ") |
         ps_rb_string(q, d->run) | where_host(q, d->host);
    for (size_t i = 0; i < d->nchart; i++)
      rc |= ps_buf_puts(q, i ? " OR \"vat\" = " : " AND (\"vat\" = ") |
            ps_rb_string(q, d->chart[i].vat);
    for (size_t i = 0; i < d->nchart_stages; i++)
      rc |= ps_buf_printf(q, "%s\"stage\" = '%d'", i ? " OR " : ") AND (", d->chart_stages[i]);
    /* per vat (GROUP BY): one more than kept, to know that there were more */
    rc |= ps_buf_printf(q, ") AND time >= %" PRId64 " AND time < %" PRId64
                           " GROUP BY \"vat\" LIMIT %d",
                        d->run_ns - SLACK_NS, d->run_ns + AFTER_RUN_NS,
                        PS_EXPLAIN_BLOCK_POINTS + 1);
    break;
  default:
    return -EINVAL;
  }
  return rc ? -EINVAL : 0;
}

/* --- the chart's vats ---------------------------------------------------- */

/* As verdict/explain.h: what a cycle of load costs. */
static int takes_part(const ps_explain_stage_row *s) {
  return s->stage > 0 && !s->partial && isfinite(s->cycles) && s->cycles > 0;
}

static int chart_stage(const ps_explain_data *d, int stage) {
  for (size_t i = 0; i < d->nchart_stages; i++)
    if (d->chart_stages[i] == stage)
      return 1;
  return 0;
}

static int by_seconds(const void *pa, const void *pb) {
  const ps_explain_chart_vat *a = pa, *b = pb;
  if (a->delivery_s != b->delivery_s)
    return a->delivery_s > b->delivery_s ? -1 : 1;
  return strcmp(a->vat, b->vat);
}

void ps_rb_explain_chart_pick(ps_explain_data *d) {
  if (d->chart_picked)
    return;
  d->chart_picked = 1;
  size_t max_stages = sizeof d->chart_stages / sizeof d->chart_stages[0];
  for (size_t i = 0; d->run && i < d->nstages && d->nchart_stages < max_stages; i++) {
    const ps_explain_stage_row *st = &d->stages[i];
    if (st->run && strcmp(st->run, d->run) == 0 && takes_part(st) && !chart_stage(d, st->stage))
      d->chart_stages[d->nchart_stages++] = st->stage;
  }
  /* every vat of the run in those stages, summed; the largest kept */
  ps_explain_chart_vat *all = NULL;
  size_t n = 0, cap = 0;
  for (size_t i = 0; d->run && i < d->nvats; i++) {
    const ps_explain_vat_row *v = &d->vats[i];
    if (!v->run || !v->vat || strcmp(v->run, d->run) != 0 || !chart_stage(d, v->stage) ||
        !isfinite(v->delivery_s))
      continue;
    size_t k = 0;
    while (k < n && strcmp(all[k].vat, v->vat) != 0)
      k++;
    if (k == n) {
      if (grow((void **)&all, &cap, n, sizeof *all) < 0)
        break; /* out of memory: the chart shows the vats summed so far */
      all[n++] = (ps_explain_chart_vat){v->vat, NULL, 0, 0, 0};
    }
    all[k].delivery_s += v->delivery_s;
    if (v->name)
      all[k].name = v->name;
  }
  if (n)
    qsort(all, n, sizeof *all, by_seconds);
  for (size_t k = 0; k < n && d->nchart < PS_EXPLAIN_TOP; k++)
    d->chart[d->nchart++] = all[k];
  free(all);
}

/* --- the answers --------------------------------------------------------- */

typedef ps_rb_row row;

/* A time as the answer holds it (epoch=ns is not asked: RFC 3339 text
 * would need parsing, so the statements' answers carry numbers only when
 * the client asks for them; both are read). */
static int64_t when(const row *r) {
  const cJSON *c = ps_rb_cell(r, "time");
  if (cJSON_IsNumber(c) && c->valuedouble >= 0 && c->valuedouble < 9.2e18)
    return (int64_t)c->valuedouble;
  return -1;
}

static int stage_no(const row *r) { return ps_stage_number(ps_rb_str(r, "stage")); }

static int set_str(ps_explain_data *d, char **dst, const char *s) {
  if (!s)
    return 0;
  const char *k = keep(d, s);
  if (!k)
    return -ENOMEM;
  *dst = (char *)k;
  return 0;
}

/* The newest point of the run: when it ran, its series and host. */
static int on_run_row(ps_explain_data *d, const row *r, const char *run, int64_t t) {
  if (!run || t < 0 || (d->found && t < d->run_ns))
    return 0;
  d->found = 1;
  d->run_ns = d->change_ns = t;
  if (set_str(d, &d->series, ps_rb_str(r, "test_type")) < 0)
    return -ENOMEM;
  if (!d->host && ps_rb_str(r, "host") && !(d->host = strdup(ps_rb_str(r, "host"))))
    return -ENOMEM;
  return 0;
}

/* The first regression of a figure that has an explanation: the metric,
 * where the change began and how many runs its baseline held. */
static int on_verdict_row(ps_explain_data *d, const row *r, const char *run) {
  const char *v = ps_rb_str(r, "verdict"), *m = ps_rb_str(r, "metric");
  const ps_figure *f = ps_figure_find(m);
  if (d->change_run || !v || strcmp(v, "regression") != 0 || !f || !f->explained)
    return 0;
  if (set_str(d, &d->regressed, m) < 0 ||
      set_str(d, &d->change_run, ps_rb_str(r, "change_run") ? ps_rb_str(r, "change_run") : run) < 0)
    return -ENOMEM;
  double b = ps_rb_num(r, "baseline_runs");
  if (isfinite(b) && b >= 1 && b <= 1000)
    d->baseline_runs = (int64_t)b;
  return 0;
}

/* The old level: runs before the change, neither the run nor where it
 * began. */
static int on_old_run_row(ps_explain_data *d, const char *run, int64_t t) {
  if (!run || t < 0 || t > d->change_ns || (d->run && strcmp(run, d->run) == 0) ||
      (d->change_run && strcmp(run, d->change_run) == 0))
    return 0;
  if (grow((void **)&d->old, &d->old_cap, d->nold, sizeof *d->old) < 0)
    return -ENOMEM;
  int64_t *n = realloc(d->old_ns, d->old_cap * sizeof *n);
  if (!n)
    return -ENOMEM;
  d->old_ns = n;
  if (!(d->old[d->nold] = (char *)keep(d, run)))
    return -ENOMEM;
  d->old_ns[d->nold++] = t;
  return 0;
}

static int on_stage_row(ps_explain_data *d, const row *r, const char *run) {
  int n = stage_no(r);
  if (!run || n < 0)
    return 0;
  if (grow((void **)&d->stages, &d->stages_cap, d->nstages, sizeof *d->stages) < 0)
    return -ENOMEM;
  ps_explain_stage_row *s = &d->stages[d->nstages];
  const cJSON *partial = ps_rb_cell(r, "partial");
  *s = (ps_explain_stage_row){keep(d, run),
                              n,
                              !cJSON_IsFalse(partial),
                              ps_rb_num(r, "finishedCycles"),
                              ps_rb_num(r, "deliverySeconds"),
                              ps_rb_num(r, "boydSeconds"),
                              {0}};
  if (!s->run)
    return -ENOMEM;
  for (int g = 0; g < PS_GROWTH_NFIGURES; g++)
    s->growth[g] = ps_rb_num(r, ps_growth_figure((ps_growth_figure_id)g)->field);
  d->nstages++;
  return 0;
}

static int on_vat_row(ps_explain_data *d, const row *r, const char *run) {
  int n = stage_no(r);
  const char *vat = ps_rb_str(r, "vat"), *name = ps_rb_str(r, "name");
  if (!run || n < 0 || !vat)
    return 0;
  if (grow((void **)&d->vats, &d->vats_cap, d->nvats, sizeof *d->vats) < 0)
    return -ENOMEM;
  ps_explain_vat_row *v = &d->vats[d->nvats];
  *v = (ps_explain_vat_row){keep(d, run), n, keep(d, vat), name ? keep(d, name) : NULL,
                            ps_rb_num(r, "deliverySeconds")};
  if (!v->run || !v->vat || (name && !v->name))
    return -ENOMEM;
  d->nvats++;
  return 0;
}

/* A block's seconds of a charted vat, up to PS_EXPLAIN_BLOCK_POINTS each;
 * past that the chart says there were more. */
static int on_block_vat_row(ps_explain_data *d, const row *r) {
  const char *vat = ps_rb_tag(r, "vat");
  double h = ps_rb_num(r, "blockHeight"), s = ps_rb_num(r, "deliverySeconds");
  size_t k = 0;
  if (!vat || !isfinite(h) || !isfinite(s))
    return 0;
  while (k < d->nchart && strcmp(d->chart[k].vat, vat) != 0)
    k++;
  if (k == d->nchart)
    return 0;
  if (d->chart[k].npoints >= PS_EXPLAIN_BLOCK_POINTS) {
    d->chart[k].more = 1;
    return 0;
  }
  if (grow((void **)&d->blocks, &d->blocks_cap, d->nblocks, sizeof *d->blocks) < 0)
    return -ENOMEM;
  d->blocks[d->nblocks++] = (ps_explain_block_row){k, h, s};
  d->chart[k].npoints++;
  return 0;
}

static int on_row(ps_explain_data *d, int statement, const row *r) {
  const char *run = ps_rb_str(r, "run");
  int64_t t = when(r);
  switch (statement) {
  case PS_EQ_RUN: return on_run_row(d, r, run, t);
  case PS_EQ_VERDICTS: return on_verdict_row(d, r, run);
  case PS_EQ_CHANGE_RUN:
    if (t >= 0 && t <= d->run_ns + SLACK_NS)
      d->change_ns = t;
    return 0;
  case PS_EQ_OLD_RUNS: return on_old_run_row(d, run, t);
  case PS_EQ_STAGES: return on_stage_row(d, r, run);
  case PS_EQ_VATS: return on_vat_row(d, r, run);
  case PS_EQ_BLOCK_VATS: return on_block_vat_row(d, r);
  default:
    return -EINVAL;
  }
}

int ps_rb_explain_parse_answer(ps_explain_data *d, int statement, const char *json, size_t len) {
  if (statement < 0 || statement >= PS_EXPLAIN_NSTATEMENTS)
    return -EINVAL;
  if (statement == PS_EQ_BLOCK_VATS)
    ps_rb_explain_chart_pick(d); /* the rows are of the chart's vats */
  ps_rb_answer a;
  int rc = ps_rb_answer_parse(&a, json, len);
  for (const row *r; rc >= 0 && (r = ps_rb_answer_next(&a));)
    rc = on_row(d, statement, r);
  ps_rb_answer_free(&a);
  return rc < 0 ? rc : 0;
}

/* --- the requests -------------------------------------------------------- */

static int ask(const ps_config *cfg, ps_explain_data *d, int statement, ps_buf *err) {
  ps_buf q, answer;
  ps_buf_init(&q, 0);
  ps_buf_init(&answer, PS_INFLUX_QUERY_MAX_BYTES);
  int rc = ps_rb_explain_statement(d, statement, &q);
  if (rc == -ENOENT)
    rc = 0; /* nothing to ask */
  else if (rc == 0 && (rc = ps_rb_query(cfg, q.data, &answer, err)) == 0)
    rc = ps_rb_explain_parse_answer(d, statement, answer.data, answer.len);
  ps_buf_free(&q);
  ps_buf_free(&answer);
  return rc;
}

static int newest_first(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The newest `keep_n` old runs, newest first. */
static void trim_old(ps_explain_data *d, size_t keep_n) {
  typedef struct { int64_t t; char *run; } pair;
  pair *p = malloc((d->nold ? d->nold : 1) * sizeof *p);
  if (!p)
    return;
  for (size_t i = 0; i < d->nold; i++)
    p[i] = (pair){d->old_ns[i], d->old[i]};
  qsort(p, d->nold, sizeof *p, newest_first);
  if (d->nold > keep_n)
    d->nold = keep_n;
  for (size_t i = 0; i < d->nold; i++) {
    d->old_ns[i] = p[i].t;
    d->old[i] = p[i].run;
  }
  free(p);
}

int ps_rb_explain_query(const ps_config *cfg, ps_explain_data *d, ps_buf *err) {
  if (!d->run)
    return -ENOMEM;
  int rc = ask(cfg, d, PS_EQ_RUN, err);
  if (rc == 0 && !d->found)
    return -ENOENT;
  for (int s = PS_EQ_VERDICTS; rc == 0 && s <= PS_EQ_OLD_RUNS; s++)
    rc = ask(cfg, d, s, err);
  if (rc == 0)
    trim_old(d, d->baseline_runs > 0 ? (size_t)d->baseline_runs : PS_EXPLAIN_OLD_RUNS);
  for (int s = PS_EQ_STAGES; rc == 0 && s <= PS_EQ_VATS; s++)
    rc = ask(cfg, d, s, err);
  if (rc == 0)
    rc = ps_explain(d->run, (const char *const *)d->old, d->nold, d->stages, d->nstages,
                    d->vats, d->nvats, &d->e);
  return rc;
}

int ps_rb_explain_query_blocks(const ps_config *cfg, ps_explain_data *d, ps_buf *err) {
  if (!d->found)
    return -ENOENT;
  ps_rb_explain_chart_pick(d);
  return ask(cfg, d, PS_EQ_BLOCK_VATS, err);
}
