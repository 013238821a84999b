/*
 * report/query.c: the report's InfluxQL and the reading of its answers
 * (include/report/query.h).
 *
 * DESIGN
 * - One statement per request, each answer read into the model and freed
 *   before the next: nine round trips a page (a few milliseconds on a
 *   LAN), and the memory of one answer at a time. The agent regenerates in
 *   its own process, whose whole resident size is meant to stay small.
 * - Tags come as columns (SELECT "run", ...) or, where an aggregate or a
 *   LIMIT per tag needs them, from GROUP BY's `tags` object; `SELECT *`
 *   (loadgen_run) returns tags among the columns too. All are looked up
 *   by name, so a column InfluxDB adds or reorders changes nothing.
 * - Times arrive as integer nanoseconds (epoch=ns) but cJSON keeps numbers
 *   as doubles: a time keeps about a quarter of a microsecond, more than
 *   the page shows, and two equal times stay equal.
 * - "Fields" a series does not have come back as null and stay NAN.
 */
#include "report/query.h"
#include "readback/triage.h"
#include "readback/explain.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/figures.h"
#include "readback/answer.h"
#include "readback/query.h"
#include "readback/statement.h"

/* --- the statements ------------------------------------------------------- */

/* The range, and the hosts the page is narrowed to (quoted: a host tag
 * is data). */
static int since(ps_buf *q, const ps_report_data *d) {
  int rc = ps_rb_time_range(q, d->since_ns, 0);
  for (size_t i = 0; !rc && i < d->nhosts; i++) {
    rc = ps_buf_puts(q, i ? " OR \"host\" = " : " AND (\"host\" = ");
    rc = rc ? rc : ps_rb_string(q, d->hosts[i]);
    if (!rc && i + 1 == d->nhosts)
      rc = ps_buf_putc(q, ')');
  }
  return rc;
}

/* SELECT fields and tags, FROM, the range, and what follows. Tags are
 * selected as columns rather than grouped by: one series of rows instead
 * of a series object per tag combination keeps the answer (and the memory
 * to read it) a fraction of the size. */
static int select_from(ps_buf *q, const ps_report_data *d, const char *columns,
                       const char *measurement, const char *rest) {
  int rc = ps_buf_printf(q, "SELECT %s FROM \"%s\"", columns, measurement);
  rc = rc ? rc : since(q, d);
  return rc ? rc : ps_buf_puts(q, rest);
}

static int q_markers(const ps_report_data *d, ps_buf *q) {
  return select_from(q, d, "\"text\", \"exitCode\", \"duration\", \"source\", \"run\", "
                           "\"revision\", \"event\", \"status\", \"host\"", "runs", "");
}

static int q_run_points(const ps_report_data *d, ps_buf *q) {
  return select_from(q, d, "*", ps_figures[0].measurement, "");
}

static int q_verdicts(const ps_report_data *d, ps_buf *q) {
  return select_from(
      q, d,
      "\"verdict\", \"value\", \"baseline\", \"change_pct\", "
      "\"change_run\", \"baseline_runs\", \"method\", \"p_value\", "
      "\"variants\", \"variants_agree\", \"revision\", \"good_revision\", "
      "\"bad_revision\", \"vat_name\", \"note\", \"source\", "
      "\"series\", \"metric\", \"run\", \"stage\", \"arm\", \"reference\", \"against\", "
      "\"vat\", \"host\"",
      "perfship_verdict", "");
}

static int q_stage_candidates(const ps_report_data *d, ps_buf *q) {
  return select_from(q, d, "last(\"stageIndex\")", ps_stage_kind_figure()->measurement,
                     " GROUP BY \"run\", \"host\"");
}

static int q_dss(const ps_report_data *d, ps_buf *q) {
  return select_from(q, d, "\"variantIndex\", \"rps_total\", \"p95_ms\", \"errors\", \"run\", "
                           "\"test\", \"arm\", \"variant\", \"sweep\", \"host\"", "dss_bench", "");
}

static int q_health(const ps_report_data *d, ps_buf *q) {
  return select_from(q, d, "\"points_written\", \"records_rejected\", \"points_rejected\", "
                           "\"uptime_s\"", "perfship", " GROUP BY \"host\" ORDER BY time DESC LIMIT 1");
}

static int q_alert_error(const ps_report_data *d, ps_buf *q) {
  return select_from(q, d, "\"text\"", "perfship_alert",
                     " AND \"event\" = 'agent_unhealthy' ORDER BY time DESC LIMIT 1");
}

/* The stage run's rows, of its host: its name and host are data, so they
 * are quoted. */
static int of_stage_run(ps_buf *q, const ps_report_data *d, const char *columns,
                        const char *measurement, const char *filter, const char *group) {
  if (!d->stage_run)
    return -ENOENT;
  int rc = select_from(q, d, columns, measurement, filter);
  rc = rc ? rc : ps_buf_puts(q, " AND \"run\" = ");
  rc = rc ? rc : ps_rb_string(q, d->stage_run);
  if (!rc && d->stage_host) {
    rc = ps_buf_puts(q, " AND \"host\" = ");
    rc = rc ? rc : ps_rb_string(q, d->stage_host);
  }
  return rc ? rc : ps_buf_puts(q, group);
}

static int q_stage_cycles(const ps_report_data *d, ps_buf *q) {
  return of_stage_run(q, d, "\"cycleCount\", \"avgDuration\", \"p95Duration\", "
                            "\"cycleSuccessRate\"",
                      ps_stage_figure(PS_STAGE_FIG_AVG_DURATION)->measurement, "",
                      " GROUP BY \"stage\", \"task\"");
}

/* The stage run's blocks, as the stage figures select them (the live
 * part: core/figures.h). */
static int q_stage_blocks(const ps_report_data *d, ps_buf *q) {
  const ps_figure *f = ps_stage_figure(PS_STAGE_FIG_SWINGSET_TIME);
  ps_buf filter;
  ps_buf_init(&filter, 64);
  int rc = ps_buf_puts(&filter, " AND ");
  rc = rc ? rc : ps_rb_ident(&filter, f->tag);
  rc = rc ? rc : ps_buf_puts(&filter, " = ");
  rc = rc ? rc : ps_rb_string(&filter, f->tag_value);
  rc = rc ? rc
          : of_stage_run(q, d, "\"avgSwingsetTime\", \"avgBlockDuration\", \"blockCount\"",
                         f->measurement, filter.data, " GROUP BY \"stage\"");
  ps_buf_free(&filter);
  return rc;
}

/* --- reading rows (readback/answer.h) ------------------------------------ */

typedef ps_rb_row row;

/* Replaces *dst with a copy of s (NULL keeps *dst). */
static int set_str(char **dst, const char *s) {
  if (!s)
    return 0;
  char *c = strdup(s);
  if (!c)
    return -ENOMEM;
  free(*dst);
  *dst = c;
  return 0;
}

static void set_num(double *dst, double v) {
  if (!isnan(v))
    *dst = v;
}

/* A run is (host, name): the same folder name on two machines is two
 * runs. */
static ps_rrun *run_named(ps_report_data *d, const char *host, const char *name) {
  ps_rrun *r = ps_report_find_host_run(d, host, name);
  if (r)
    return r;
  if (!(r = ps_report_add_run(d, name)))
    return NULL;
  return set_str(&r->host, host) ? NULL : r;
}

static int on_marker(ps_report_data *d, const row *r) {
  const char *source = ps_rb_tag(r, "source"), *run = ps_rb_tag(r, "run"),
             *event = ps_rb_tag(r, "event");
  const char *status = ps_rb_tag(r, "status"), *host = ps_rb_tag(r, "host");
  int64_t t = ps_rb_time_ns(r);
  if (!source || !run || !event)
    return 0;
  if (strcmp(source, "dss_bench") == 0) {
    if (strcmp(event, "end") != 0)
      return 0;
    ps_rdssfile *f = NULL;
    for (size_t i = 0; i < d->ndssfiles && !f; i++)
      if (strcmp(d->dssfiles[i].run, run) == 0 && ps_report_same(d->dssfiles[i].host, host))
        f = &d->dssfiles[i];
    if (!f) {
      if (!(f = ps_report_add_dssfile(d)) || set_str(&f->run, run) || set_str(&f->host, host))
        return -ENOMEM;
    } else if (t < f->time_ns) {
      return 0; /* an older version of the file */
    }
    f->time_ns = t;
    f->status = ps_rb_status_named(status);
    return set_str(&f->text, ps_rb_str(r, "text"));
  }
  if (strcmp(source, "loadgen") != 0)
    return 0;
  ps_rrun *x = run_named(d, host, run);
  if (!x || set_str(&x->revision, ps_rb_tag(r, "revision")))
    return -ENOMEM;
  if (strcmp(event, "start") == 0) {
    x->have_start_marker = 1;
    if (t && (!x->start_ns || t < x->start_ns))
      x->start_ns = t;
    return 0;
  }
  if (strcmp(event, "end") != 0)
    return 0;
  ps_rstatus st = ps_rb_status_named(status);
  if (st == PS_RS_STALLED) {
    x->stalled_status = st;
    x->stalled_ns = t;
    return x->text ? 0 : set_str(&x->text, ps_rb_str(r, "text"));
  }
  if (st == PS_RS_UNKNOWN || st == PS_RS_RUNNING || t < x->end_ns)
    return 0;
  x->end_status = st;
  x->end_ns = t;
  set_num(&x->duration_s, ps_rb_num(r, "duration"));
  double code = ps_rb_num(r, "exitCode");
  if (!isnan(code)) {
    x->have_exit = 1;
    x->exit_code = (int64_t)code;
  }
  return set_str(&x->text, ps_rb_str(r, "text"));
}

static int on_run_point(ps_report_data *d, const row *r) {
  const char *run = ps_rb_tag(r, "run");
  if (!run)
    return 0;
  ps_rrun *x = run_named(d, ps_rb_tag(r, "host"), run);
  if (!x || set_str(&x->revision, ps_rb_tag(r, "revision")) ||
      set_str(&x->test_type, ps_rb_tag(r, "test_type")))
    return -ENOMEM;
  x->run_point_ns = ps_rb_time_ns(r);
  ps_rstatus st = ps_rb_status_named(ps_rb_str(r, "status"));
  int success = ps_rb_bool(r, "success");
  if (st == PS_RS_UNKNOWN && success >= 0)
    st = success ? PS_RS_SUCCESS : PS_RS_FAILED;
  if (st != PS_RS_UNKNOWN)
    x->point_status = st;
  double code = ps_rb_num(r, "exitCode");
  if (!isnan(code) && !x->have_exit) {
    x->have_exit = 1;
    x->exit_code = (int64_t)code;
  }
  double duration = ps_rb_num(r, "duration");
  if (!isnan(duration))
    x->duration_s = duration; /* stats.duration beats the markers' difference */
  for (int i = 0; i < PS_REPORT_NMETRICS; i++)
    set_num(&x->metric[i], ps_rb_num(r, ps_report_metrics[i].field));
  return 0;
}

static int on_verdict(ps_report_data *d, const row *r) {
  if (!ps_rb_tag(r, "run") || !ps_rb_tag(r, "metric") || !ps_rb_str(r, "verdict"))
    return 0;
  ps_rverdict *v = ps_report_add_verdict(d);
  if (!v)
    return -ENOMEM;
  struct {
    char **dst;
    const char *src;
  } s[] = {
      {&v->host, ps_rb_tag(r, "host")},
      {&v->source, ps_rb_tag(r, "source")},
      {&v->series, ps_rb_tag(r, "series")},
      {&v->metric, ps_rb_tag(r, "metric")},
      {&v->run, ps_rb_tag(r, "run")},
      {&v->stage, ps_rb_tag(r, "stage")},
      {&v->arm, ps_rb_tag(r, "arm")},
      {&v->reference, ps_rb_tag(r, "reference")},
      {&v->verdict, ps_rb_str(r, "verdict")},
      {&v->against, ps_rb_tag(r, "against")},
      {&v->vat, ps_rb_tag(r, "vat")},
      {&v->vat_name, ps_rb_str(r, "vat_name")},
      {&v->note, ps_rb_str(r, "note")},
      {&v->change_run, ps_rb_str(r, "change_run")},
      {&v->method, ps_rb_str(r, "method")},
      {&v->revision, ps_rb_str(r, "revision")},
      {&v->good_revision, ps_rb_str(r, "good_revision")},
      {&v->bad_revision, ps_rb_str(r, "bad_revision")},
  };
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
    if (set_str(s[i].dst, s[i].src))
      return -ENOMEM;
  v->time_ns = ps_rb_time_ns(r);
  v->value = ps_rb_num(r, "value");
  v->baseline = ps_rb_num(r, "baseline");
  v->change_pct = ps_rb_num(r, "change_pct");
  v->p_value = ps_rb_num(r, "p_value");
  v->baseline_runs = ps_rb_num(r, "baseline_runs");
  v->variants = ps_rb_num(r, "variants");
  v->variants_agree = ps_rb_num(r, "variants_agree");
  return 0;
}

static int on_stage_candidate(ps_report_data *d, const row *r) {
  const char *run = ps_rb_tag(r, "run");
  if (!run)
    return 0;
  ps_rstamp *c = ps_report_add_stage_candidate(d);
  if (!c || set_str(&c->run, run) || set_str(&c->host, ps_rb_tag(r, "host")))
    return -ENOMEM;
  c->time_ns = ps_rb_time_ns(r);
  return 0;
}

static int on_dss(ps_report_data *d, const row *r) {
  if (!ps_rb_tag(r, "run") || !ps_rb_tag(r, "test") || !ps_rb_tag(r, "arm") ||
      !ps_rb_tag(r, "variant"))
    return 0;
  ps_rdss *p = ps_report_add_dss(d);
  if (!p || set_str(&p->host, ps_rb_tag(r, "host")) || set_str(&p->run, ps_rb_tag(r, "run")) ||
      set_str(&p->test, ps_rb_tag(r, "test")) || set_str(&p->arm, ps_rb_tag(r, "arm")) ||
      set_str(&p->variant, ps_rb_tag(r, "variant")) || set_str(&p->sweep, ps_rb_tag(r, "sweep")))
    return -ENOMEM;
  p->time_ns = ps_rb_time_ns(r);
  p->variant_index = ps_rb_num(r, "variantIndex");
  p->rps = ps_rb_num(r, "rps_total");
  p->p95 = ps_rb_num(r, "p95_ms");
  p->errors = ps_rb_num(r, "errors");
  return 0;
}

static int on_health(ps_report_data *d, const row *r) {
  ps_rhealth *h = ps_report_add_health(d);
  if (!h || set_str(&h->host, ps_rb_tag(r, "host") ? ps_rb_tag(r, "host") : "(no host tag)"))
    return -ENOMEM;
  h->time_ns = ps_rb_time_ns(r);
  h->points_written = ps_rb_num(r, "points_written");
  h->records_rejected = ps_rb_num(r, "records_rejected");
  h->points_rejected = ps_rb_num(r, "points_rejected");
  h->uptime_s = ps_rb_num(r, "uptime_s");
  return 0;
}

static int on_alert_error(ps_report_data *d, const row *r) {
  int64_t t = ps_rb_time_ns(r);
  if (!ps_rb_str(r, "text") || (d->alert_error && t <= d->alert_error_ns))
    return 0;
  d->alert_error_ns = t;
  return set_str(&d->alert_error, ps_rb_str(r, "text"));
}

static int on_stage_cycles(ps_report_data *d, const row *r) {
  if (!ps_rb_tag(r, "stage") || !ps_rb_tag(r, "task"))
    return 0;
  ps_rstage *s = ps_report_add_stage(d);
  if (!s || set_str(&s->stage, ps_rb_tag(r, "stage")) || set_str(&s->task, ps_rb_tag(r, "task")))
    return -ENOMEM;
  s->of = d->stage_of;
  s->cycles = ps_rb_num(r, "cycleCount");
  s->avg_duration = ps_rb_num(r, ps_stage_figure(PS_STAGE_FIG_AVG_DURATION)->field);
  s->p95_duration = ps_rb_num(r, "p95Duration");
  s->success_rate = ps_rb_num(r, "cycleSuccessRate");
  return 0;
}

static int on_stage_blocks(ps_report_data *d, const row *r) {
  if (!ps_rb_tag(r, "stage"))
    return 0;
  ps_rblocks *b = ps_report_add_blocks(d);
  if (!b || set_str(&b->stage, ps_rb_tag(r, "stage")))
    return -ENOMEM;
  b->of = d->stage_of;
  b->avg_swingset = ps_rb_num(r, ps_stage_figure(PS_STAGE_FIG_SWINGSET_TIME)->field);
  b->avg_block = ps_rb_num(r, ps_stage_figure(PS_STAGE_FIG_BLOCK_DURATION)->field);
  b->block_count = ps_rb_num(r, "blockCount");
  return 0;
}

typedef int (*row_fn)(ps_report_data *d, const row *r);

static const struct {
  int (*text)(const ps_report_data *d, ps_buf *q);
  row_fn rows;
} statements[PS_REPORT_NSTATEMENTS] = {
    [PS_RQ_MARKERS] = {q_markers, on_marker},
    [PS_RQ_RUN_POINTS] = {q_run_points, on_run_point},
    [PS_RQ_VERDICTS] = {q_verdicts, on_verdict},
    [PS_RQ_STAGE_CANDIDATES] = {q_stage_candidates, on_stage_candidate},
    [PS_RQ_DSS] = {q_dss, on_dss},
    [PS_RQ_HEALTH] = {q_health, on_health},
    [PS_RQ_ALERT_ERROR] = {q_alert_error, on_alert_error},
    [PS_RQ_STAGE_CYCLES] = {q_stage_cycles, on_stage_cycles},
    [PS_RQ_STAGE_BLOCKS] = {q_stage_blocks, on_stage_blocks},
};

int ps_report_statements(const ps_report_data *d, int statement, ps_buf *out) {
  if (statement < 0 || statement >= PS_REPORT_NSTATEMENTS)
    return -EINVAL;
  return statements[statement].text(d, out);
}

int ps_report_parse_answer(ps_report_data *d, int statement, const char *json, size_t len) {
  if (statement < 0 || statement >= PS_REPORT_NSTATEMENTS)
    return -EINVAL;
  row_fn fn = statements[statement].rows;
  ps_rb_answer a;
  int rc = ps_rb_answer_parse(&a, json, len);
  for (const row *r; rc >= 0 && (r = ps_rb_answer_next(&a));)
    rc = fn(d, r);
  ps_rb_answer_free(&a);
  return rc < 0 ? rc : 0;
}

/* --- the requests -------------------------------------------------------- */

/* One statement per request: the answers are read and freed one at a time,
 * so the memory a page needs is that of its largest answer, not of all. */
static int ask(const ps_config *cfg, ps_report_data *d, int statement, ps_buf *err) {
  ps_buf q, answer;
  ps_buf_init(&q, 0);
  ps_buf_init(&answer, 0);
  int rc = ps_report_statements(d, statement, &q);
  if (rc == 0)
    rc = ps_rb_query(cfg, q.data, &answer, err);
  if (rc == 0)
    rc = ps_report_parse_answer(d, statement, answer.data, answer.len);
  ps_buf_free(&q);
  ps_buf_free(&answer);
  return rc;
}

/* The chart's vats and their points, grouped by vat (the answer holds
 * them so already; the grouping does not rely on it). */
static int chart_of(ps_rchain *c, const ps_explain_data *x) {
  if (!x->nblocks)
    return 0;
  if (!(c->points = malloc(x->nblocks * sizeof *c->points)))
    return -ENOMEM;
  for (size_t k = 0; k < x->nchart; k++) {
    ps_rchain_vat *v = &c->chart[c->nchart++];
    snprintf(v->vat, sizeof v->vat, "%s", x->chart[k].vat);
    snprintf(v->name, sizeof v->name, "%s", x->chart[k].name ? x->chart[k].name : "");
    v->more = x->chart[k].more;
    v->begin = c->npoints;
    for (size_t i = 0; i < x->nblocks; i++)
      if (x->blocks[i].vat == k)
        c->points[c->npoints++] = (ps_rchain_point){x->blocks[i].height, x->blocks[i].delivery_s};
    v->n = c->npoints - v->begin;
  }
  return 0;
}

/* The slog part of stage run `k` (readback/explain.h); only -ENOMEM stops
 * the page: the rest of it does not depend on the slog figures. */
static int chain_of(const ps_config *cfg, ps_report_data *d, size_t k) {
  const ps_rstamp *sr = &d->stage_runs[k];
  ps_explain_data x;
  ps_buf err;
  ps_buf_init(&err, 2048);
  ps_rb_explain_data_init(&x, sr->run, sr->host, d->now_ns - d->since_ns, d->now_ns);
  int rc = x.run ? ps_rb_explain_query(cfg, &x, &err) : -ENOMEM;
  /* the chart's points: a server that cannot answer leaves the chart out */
  if (rc == 0 && ps_rb_explain_query_blocks(cfg, &x, &err) == -ENOMEM)
    rc = -ENOMEM;
  size_t n = 0;
  for (size_t i = 0; rc == 0 && i < x.nstages; i++)
    n += strcmp(x.stages[i].run, sr->run) == 0;
  if (rc == 0 && n) {
    ps_rchain *c = ps_report_add_chain(d);
    if (!c) {
      rc = -ENOMEM;
    } else {
      c->of = k;
      c->e = x.e;
      c->regressed = x.regressed != NULL;
      for (size_t i = 0; i < x.nstages && c->nstages < PS_RCHAIN_STAGES; i++)
        if (strcmp(x.stages[i].run, sr->run) == 0) {
          c->stages[c->nstages] = x.stages[i];
          c->stages[c->nstages++].run = NULL;
        }
      rc = chart_of(c, &x);
    }
  }
  ps_rb_explain_data_free(&x);
  ps_buf_free(&err);
  return rc == -ENOMEM ? rc : 0;
}

int ps_report_query(const ps_config *cfg, ps_report_data *d, ps_buf *err) {
  int rc = 0;
  for (int s = 0; s < PS_RQ_STAGE_CYCLES && rc == 0; s++)
    rc = ask(cfg, d, s, err);
  if (rc == 0 && ps_report_shows(d, "loadgen"))
    rc = ps_report_pick_stage_run(d);
  /* the stages of each host's newest run: two requests per host */
  for (size_t k = 0; k < d->nstage_runs && rc == 0; k++) {
    rc = ps_report_use_stage_run(d, k);
    for (int s = PS_RQ_STAGE_CYCLES; d->stage_run && s < PS_REPORT_NSTATEMENTS && rc == 0; s++)
      rc = ask(cfg, d, s, err);
  }
  /* inside the chain: each stage run's slog figures and their cause; a
   * server without them (or a run without slogs) leaves the part out */
  for (size_t k = 0; k < d->nstage_runs && rc == 0; k++)
    rc = chain_of(cfg, d, k);
  if (rc == 0)
    rc = ps_report_use_stage_run(d, 0);
  /* the benchmarker's curves: a server without them leaves the section
   * empty, as the chain's part */
  if (rc == 0 && ps_report_shows(d, "benchmarker")) {
    ps_buf berr;
    ps_buf_init(&berr, 1024);
    if (ps_rb_benchmarker_read(cfg, d->since_ns, 0, &d->bm, &berr) == -ENOMEM)
      rc = -ENOMEM;
    ps_buf_free(&berr);
  }
  /* the decisions: a page that cannot have them shows the verdicts as
   * they are (a bad triage_file line was said where it was read) */
  if (rc == 0) {
    ps_buf terr;
    ps_buf_init(&terr, 1024);
    if (ps_rb_triage_read_server(cfg, &d->triage, &terr) == -ENOMEM ||
        ps_rb_triage_read_file(cfg, &d->triage, NULL, NULL, &terr) == -ENOMEM)
      rc = -ENOMEM;
    ps_buf_free(&terr);
  }
  if (rc == 0)
    rc = ps_report_finish(d);
  return rc;
}
