/*
 * report/query.c: the report's InfluxQL and the reading of its answers
 * (include/report/query.h).
 *
 * DESIGN
 * - The first request holds every statement that needs nothing from
 *   another answer, so a page costs two round trips whatever the range.
 *   Each statement's rows are read by the handler of its position; an
 *   answer is matched to its statement by `statement_id`, never by order.
 * - GROUP BY the tags the page needs puts them in each series' `tags`
 *   object; `SELECT *` (loadgen_run) puts the other tags among the
 *   columns. Both are looked up by name, so a column InfluxDB adds or
 *   reorders changes nothing.
 * - Times arrive as integer nanoseconds (epoch=ns) but cJSON keeps numbers
 *   as doubles: a time keeps about a quarter of a microsecond, more than
 *   the page shows, and two equal times stay equal.
 * - "Fields" a series does not have come back as null and stay NAN.
 */
#include "report/query.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "influx/client.h"
#include "influx/influxql.h"

/* --- the statements ------------------------------------------------------- */

enum {
  Q_MARKERS,
  Q_RUN_POINTS,
  Q_VERDICTS,
  Q_STAGE_CANDIDATES,
  Q_DSS,
  Q_HEALTH,
  Q_ALERT_ERROR,
  Q_PHASE1_COUNT
};
enum { Q_STAGE_CYCLES, Q_STAGE_BLOCKS, Q_PHASE2_COUNT };

static int since(ps_buf *q, const ps_report_data *d) {
  return ps_buf_printf(q, " WHERE time >= %" PRId64, d->since_ns);
}

static int phase1(const ps_report_data *d, ps_buf *q) {
  int rc = ps_buf_puts(q, "SELECT \"text\", \"exitCode\", \"duration\", \"backfill\" FROM \"runs\"");
  rc = rc ? rc : since(q, d);
  rc = rc ? rc : ps_buf_puts(q, " GROUP BY \"source\", \"run\", \"revision\", \"event\", \"status\";\n");
  rc = rc ? rc : ps_buf_puts(q, "SELECT * FROM \"loadgen_run\"");
  rc = rc ? rc : since(q, d);
  rc = rc ? rc : ps_buf_puts(q, " GROUP BY \"run\";\n");
  rc = rc ? rc
          : ps_buf_puts(q, "SELECT \"verdict\", \"value\", \"baseline\", \"change_pct\", "
                           "\"change_run\", \"baseline_runs\", \"method\", \"p_value\", "
                           "\"variants\", \"variants_agree\", \"revision\" FROM "
                           "\"perfship_verdict\"");
  rc = rc ? rc : since(q, d);
  rc = rc ? rc
          : ps_buf_puts(q, " GROUP BY \"source\", \"series\", \"metric\", \"run\", \"stage\", "
                           "\"arm\", \"reference\";\n");
  rc = rc ? rc : ps_buf_puts(q, "SELECT last(\"stageIndex\") FROM \"loadgen_stage\"");
  rc = rc ? rc : since(q, d);
  rc = rc ? rc : ps_buf_puts(q, " GROUP BY \"run\";\n");
  rc = rc ? rc
          : ps_buf_puts(q, "SELECT \"variantIndex\", \"rps_total\", \"p95_ms\", \"errors\" FROM "
                           "\"dss_bench\"");
  rc = rc ? rc : since(q, d);
  rc = rc ? rc : ps_buf_puts(q, " GROUP BY \"run\", \"test\", \"arm\", \"variant\", \"sweep\";\n");
  rc = rc ? rc
          : ps_buf_puts(q, "SELECT \"points_written\", \"records_rejected\", "
                           "\"points_rejected\", \"uptime_s\" FROM \"perfship\"");
  rc = rc ? rc : since(q, d);
  rc = rc ? rc : ps_buf_puts(q, " GROUP BY \"host\" ORDER BY time DESC LIMIT 1;\n");
  rc = rc ? rc : ps_buf_puts(q, "SELECT \"text\" FROM \"perfship_alert\"");
  rc = rc ? rc : since(q, d);
  rc = rc ? rc
          : ps_buf_puts(q, " AND \"event\" = 'agent_unhealthy' ORDER BY time DESC LIMIT 1");
  return rc;
}

static int phase2(const ps_report_data *d, ps_buf *q) {
  if (!d->stage_run)
    return -ENOENT;
  int rc = ps_buf_puts(q, "SELECT \"cycleCount\", \"avgDuration\", \"p95Duration\", "
                          "\"cycleSuccessRate\" FROM \"loadgen_stage_cycles\"");
  rc = rc ? rc : since(q, d);
  rc = rc ? rc : ps_buf_puts(q, " AND \"run\" = ");
  rc = rc ? rc : ps_influxql_quote_string(q, d->stage_run);
  rc = rc ? rc : ps_buf_puts(q, " GROUP BY \"stage\", \"task\";\n");
  rc = rc ? rc
          : ps_buf_puts(q, "SELECT \"avgSwingsetTime\", \"avgBlockDuration\", \"blockCount\" "
                           "FROM \"loadgen_stage_blocks\"");
  rc = rc ? rc : since(q, d);
  rc = rc ? rc : ps_buf_puts(q, " AND \"summary\" = 'onlyLive' AND \"run\" = ");
  rc = rc ? rc : ps_influxql_quote_string(q, d->stage_run);
  rc = rc ? rc : ps_buf_puts(q, " GROUP BY \"stage\"");
  return rc;
}

int ps_report_statements(const ps_report_data *d, int phase, ps_buf *out) {
  return phase == 1 ? phase1(d, out) : phase == 2 ? phase2(d, out) : -EINVAL;
}

/* --- reading rows ------------------------------------------------------------ */

typedef struct row {
  const cJSON *tags;    /* the series' tags object, may be NULL */
  const cJSON *columns; /* array of names */
  const cJSON *values;  /* this row's array */
} row;

static const cJSON *column(const row *r, const char *name) {
  int i = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, r->columns) {
    if (cJSON_IsString(c) && strcmp(c->valuestring, name) == 0)
      return cJSON_GetArrayItem(r->values, i);
    i++;
  }
  return NULL;
}

/* A tag: from the series' tags (GROUP BY), else a string column (SELECT *).
 * An empty value (a GROUP BY tag the series does not have) is NULL. */
static const char *tag(const row *r, const char *name) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(r->tags, name);
  if (!cJSON_IsString(t))
    t = column(r, name);
  return cJSON_IsString(t) && t->valuestring[0] ? t->valuestring : NULL;
}

static double num(const row *r, const char *name) {
  const cJSON *c = column(r, name);
  return cJSON_IsNumber(c) && isfinite(c->valuedouble) ? c->valuedouble : NAN;
}

static const char *str(const row *r, const char *name) {
  const cJSON *c = column(r, name);
  return cJSON_IsString(c) ? c->valuestring : NULL;
}

static int64_t time_ns(const row *r) {
  double t = num(r, "time");
  /* beyond ±2^62 is no time InfluxDB stores; keep the cast defined */
  return isnan(t) || fabs(t) > 4.6e18 ? 0 : (int64_t)t;
}

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

static ps_rrun *run_named(ps_report_data *d, const char *name) {
  ps_rrun *r = ps_report_find_run(d, name);
  return r ? r : ps_report_add_run(d, name);
}

static int on_marker(ps_report_data *d, const row *r) {
  const char *source = tag(r, "source"), *run = tag(r, "run"), *event = tag(r, "event");
  const char *status = tag(r, "status");
  int64_t t = time_ns(r);
  if (!source || !run || !event)
    return 0;
  if (strcmp(source, "dss_bench") == 0) {
    if (strcmp(event, "end") != 0)
      return 0;
    ps_rdssfile *f = NULL;
    for (size_t i = 0; i < d->ndssfiles && !f; i++)
      if (strcmp(d->dssfiles[i].run, run) == 0)
        f = &d->dssfiles[i];
    if (!f) {
      if (!(f = ps_report_add_dssfile(d)) || set_str(&f->run, run))
        return -ENOMEM;
    } else if (t < f->time_ns) {
      return 0; /* an older version of the file */
    }
    f->time_ns = t;
    f->status = ps_rstatus_from_name(status);
    return set_str(&f->text, str(r, "text"));
  }
  if (strcmp(source, "loadgen") != 0)
    return 0;
  ps_rrun *x = run_named(d, run);
  if (!x || set_str(&x->revision, tag(r, "revision")))
    return -ENOMEM;
  if (strcmp(event, "start") == 0) {
    x->have_start_marker = 1;
    if (t && (!x->start_ns || t < x->start_ns))
      x->start_ns = t;
    return 0;
  }
  if (strcmp(event, "end") != 0)
    return 0;
  ps_rstatus st = ps_rstatus_from_name(status);
  if (st == PS_RS_STALLED) {
    x->stalled_status = st;
    x->stalled_ns = t;
    return x->text ? 0 : set_str(&x->text, str(r, "text"));
  }
  if (st == PS_RS_UNKNOWN || st == PS_RS_RUNNING || t < x->end_ns)
    return 0;
  x->end_status = st;
  x->end_ns = t;
  set_num(&x->duration_s, num(r, "duration"));
  double code = num(r, "exitCode");
  if (!isnan(code)) {
    x->have_exit = 1;
    x->exit_code = (int64_t)code;
  }
  return set_str(&x->text, str(r, "text"));
}

static int on_run_point(ps_report_data *d, const row *r) {
  const char *run = tag(r, "run");
  if (!run)
    return 0;
  ps_rrun *x = run_named(d, run);
  if (!x || set_str(&x->revision, tag(r, "revision")) ||
      set_str(&x->test_type, tag(r, "test_type")))
    return -ENOMEM;
  x->run_point_ns = time_ns(r);
  ps_rstatus st = ps_rstatus_from_name(str(r, "status"));
  const cJSON *success = column(r, "success");
  if (st == PS_RS_UNKNOWN && cJSON_IsBool(success))
    st = cJSON_IsTrue(success) ? PS_RS_SUCCESS : PS_RS_FAILED;
  if (st != PS_RS_UNKNOWN)
    x->point_status = st;
  double code = num(r, "exitCode");
  if (!isnan(code) && !x->have_exit) {
    x->have_exit = 1;
    x->exit_code = (int64_t)code;
  }
  double duration = num(r, "duration");
  if (!isnan(duration))
    x->duration_s = duration; /* stats.duration beats the markers' difference */
  for (int i = 0; i < PS_REPORT_NMETRICS; i++)
    set_num(&x->metric[i], num(r, ps_report_metrics[i].field));
  return 0;
}

static int on_verdict(ps_report_data *d, const row *r) {
  if (!tag(r, "run") || !tag(r, "metric") || !str(r, "verdict"))
    return 0;
  ps_rverdict *v = ps_report_add_verdict(d);
  if (!v)
    return -ENOMEM;
  struct {
    char **dst;
    const char *src;
  } s[] = {
      {&v->source, tag(r, "source")},       {&v->series, tag(r, "series")},
      {&v->metric, tag(r, "metric")},       {&v->run, tag(r, "run")},
      {&v->stage, tag(r, "stage")},         {&v->arm, tag(r, "arm")},
      {&v->reference, tag(r, "reference")}, {&v->verdict, str(r, "verdict")},
      {&v->change_run, str(r, "change_run")}, {&v->method, str(r, "method")},
      {&v->revision, str(r, "revision")},
  };
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
    if (set_str(s[i].dst, s[i].src))
      return -ENOMEM;
  v->time_ns = time_ns(r);
  v->value = num(r, "value");
  v->baseline = num(r, "baseline");
  v->change_pct = num(r, "change_pct");
  v->p_value = num(r, "p_value");
  v->baseline_runs = num(r, "baseline_runs");
  v->variants = num(r, "variants");
  v->variants_agree = num(r, "variants_agree");
  return 0;
}

static int on_stage_candidate(ps_report_data *d, const row *r) {
  const char *run = tag(r, "run");
  if (!run)
    return 0;
  ps_rstamp *c = ps_report_add_stage_candidate(d);
  if (!c || set_str(&c->run, run))
    return -ENOMEM;
  c->time_ns = time_ns(r);
  return 0;
}

static int on_dss(ps_report_data *d, const row *r) {
  if (!tag(r, "run") || !tag(r, "test") || !tag(r, "arm") || !tag(r, "variant"))
    return 0;
  ps_rdss *p = ps_report_add_dss(d);
  if (!p || set_str(&p->run, tag(r, "run")) || set_str(&p->test, tag(r, "test")) ||
      set_str(&p->arm, tag(r, "arm")) || set_str(&p->variant, tag(r, "variant")) ||
      set_str(&p->sweep, tag(r, "sweep")))
    return -ENOMEM;
  p->time_ns = time_ns(r);
  p->variant_index = num(r, "variantIndex");
  p->rps = num(r, "rps_total");
  p->p95 = num(r, "p95_ms");
  p->errors = num(r, "errors");
  return 0;
}

static int on_health(ps_report_data *d, const row *r) {
  ps_rhealth *h = ps_report_add_health(d);
  if (!h || set_str(&h->host, tag(r, "host") ? tag(r, "host") : "(no host tag)"))
    return -ENOMEM;
  h->time_ns = time_ns(r);
  h->points_written = num(r, "points_written");
  h->records_rejected = num(r, "records_rejected");
  h->points_rejected = num(r, "points_rejected");
  h->uptime_s = num(r, "uptime_s");
  return 0;
}

static int on_alert_error(ps_report_data *d, const row *r) {
  int64_t t = time_ns(r);
  if (!str(r, "text") || (d->alert_error && t <= d->alert_error_ns))
    return 0;
  d->alert_error_ns = t;
  return set_str(&d->alert_error, str(r, "text"));
}

static int on_stage_cycles(ps_report_data *d, const row *r) {
  if (!tag(r, "stage") || !tag(r, "task"))
    return 0;
  ps_rstage *s = ps_report_add_stage(d);
  if (!s || set_str(&s->stage, tag(r, "stage")) || set_str(&s->task, tag(r, "task")))
    return -ENOMEM;
  s->cycles = num(r, "cycleCount");
  s->avg_duration = num(r, "avgDuration");
  s->p95_duration = num(r, "p95Duration");
  s->success_rate = num(r, "cycleSuccessRate");
  return 0;
}

static int on_stage_blocks(ps_report_data *d, const row *r) {
  if (!tag(r, "stage"))
    return 0;
  ps_rblocks *b = ps_report_add_blocks(d);
  if (!b || set_str(&b->stage, tag(r, "stage")))
    return -ENOMEM;
  b->avg_swingset = num(r, "avgSwingsetTime");
  b->avg_block = num(r, "avgBlockDuration");
  b->block_count = num(r, "blockCount");
  return 0;
}

typedef int (*row_fn)(ps_report_data *d, const row *r);

static const row_fn phase1_fns[Q_PHASE1_COUNT] = {
    [Q_MARKERS] = on_marker,         [Q_RUN_POINTS] = on_run_point,
    [Q_VERDICTS] = on_verdict,       [Q_STAGE_CANDIDATES] = on_stage_candidate,
    [Q_DSS] = on_dss,                [Q_HEALTH] = on_health,
    [Q_ALERT_ERROR] = on_alert_error,
};
static const row_fn phase2_fns[Q_PHASE2_COUNT] = {
    [Q_STAGE_CYCLES] = on_stage_cycles,
    [Q_STAGE_BLOCKS] = on_stage_blocks,
};

int ps_report_parse_answer(ps_report_data *d, int phase, const char *json, size_t len) {
  const row_fn *fns = phase == 1 ? phase1_fns : phase2_fns;
  int nfns = phase == 1 ? Q_PHASE1_COUNT : Q_PHASE2_COUNT;
  cJSON *j = json ? cJSON_ParseWithLength(json, len) : NULL;
  const cJSON *result;
  int rc = 0;
  cJSON_ArrayForEach(result, cJSON_GetObjectItemCaseSensitive(j, "results")) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(result, "statement_id");
    if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= nfns)
      continue;
    row_fn fn = fns[(int)id->valuedouble];
    const cJSON *series;
    cJSON_ArrayForEach(series, cJSON_GetObjectItemCaseSensitive(result, "series")) {
      row r = {cJSON_GetObjectItemCaseSensitive(series, "tags"),
               cJSON_GetObjectItemCaseSensitive(series, "columns"), NULL};
      if (!cJSON_IsArray(r.columns))
        continue;
      cJSON_ArrayForEach(r.values, cJSON_GetObjectItemCaseSensitive(series, "values")) {
        if (cJSON_IsArray(r.values) && (rc = fn(d, &r)) < 0)
          goto out;
      }
    }
  }
out:
  cJSON_Delete(j);
  return rc;
}

/* --- the two requests -------------------------------------------------------- */

static int ask(const ps_config *cfg, ps_report_data *d, int phase, ps_buf *err) {
  ps_buf q, answer;
  ps_buf_init(&q, 0);
  ps_buf_init(&answer, 0);
  int rc = ps_report_statements(d, phase, &q);
  if (rc == 0)
    rc = ps_influx_query(cfg, q.data, &answer, err);
  if (rc == 0)
    rc = ps_report_parse_answer(d, phase, answer.data, answer.len);
  ps_buf_free(&q);
  ps_buf_free(&answer);
  return rc;
}

/* InfluxDB 1.x answers a query of several statements on a database that
 * does not exist with "not executed" alone; one statement gets the real
 * reason ("database not found"), which ps_influx_query reads as -ENOENT. */
static int database_missing(const ps_config *cfg) {
  ps_buf answer;
  ps_buf_init(&answer, 0);
  int rc = ps_influx_query(cfg, "SELECT \"text\" FROM \"runs\" LIMIT 1", &answer, NULL);
  ps_buf_free(&answer);
  return rc == -ENOENT;
}

int ps_report_query(const ps_config *cfg, ps_report_data *d, ps_buf *err) {
  int rc = ask(cfg, d, 1, err);
  if (rc == -EPROTO && database_missing(cfg))
    rc = -ENOENT;
  if (rc == -ENOENT) { /* no database yet: nothing has been shipped */
    if (err)
      ps_buf_reset(err);
    return ps_report_finish(d);
  }
  if (rc == 0 && ps_report_shows(d, "loadgen"))
    rc = ps_report_pick_stage_run(d);
  if (rc == 0 && d->stage_run)
    rc = ask(cfg, d, 2, err);
  if (rc == 0)
    rc = ps_report_finish(d);
  return rc;
}
