/*
 * alerting_runs.c: the alerts about runs. See include/judging/alerting_runs.h
 * and docs/alerts.md.
 *
 * Design
 * - A run's verdicts arrive as several points (one per metric); a timer
 *   (`gather`) waits a moment after a tapped verdict point, so that they
 *   become one event.
 * - Ids are made of what the data says (the run, its marker's time), so an
 *   event heard again after a restart has the id the raiser knows.
 */
#include "judging/alerting_runs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "alert/text.h"
#include "core/util.h"
#include "core/figures.h"
#include "core/log.h"
#include "readback/explain.h"
#include "readback/query.h"
#include "runs/runs.h"

#define MOD "alerts"

#define GATHER_MS 1000

struct jd_verdict_group {
  jd_verdict_group *next;
  char *host, *source, *series, *run, *revision;
  int64_t time_ns;
  int backfill;
  ps_alert_event metrics; /* only its metrics are used */
};

/* --- run events (the run tracker) ---------------------------------------------- */

static void fill_from_view(ps_alert_event *ev, const ps_run_view *v) {
  ps_alert_set(&ev->source, PS_RUN_MARKER_SOURCE);
  ps_alert_set(&ev->run, v->id.run);
  ps_alert_set(&ev->series, v->id.test_type);
  ps_alert_set(&ev->test_type, v->id.test_type);
  ps_alert_set(&ev->revision, v->id.revision);
  ps_alert_set(&ev->status, v->state == PS_RUN_RUNNING ? "running"
                                                        : ps_run_status_name(v->status));
}

static int64_t view_marker_ns(const ps_run_view *v) {
  return v->have_start ? v->start_ns : v->end_ns;
}

static void raise_run(jd_alerting_runs *ar, ps_alert_kind kind, const ps_run_view *v, int judge_age,
                      int64_t happened_ns) {
  ps_alert_event ev;
  ps_alert_event_init(&ev, kind);
  fill_from_view(&ev, v);
  ps_buf text;
  ps_buf_init(&text, 0);
  ps_alert_text_run(&text, kind, v);
  ev.text = text.data;
  char host[256];
  ps_alert_id(ev.id, kind, ps_config_host(ar->sh->cfg, host, sizeof host),
              PS_RUN_MARKER_SOURCE, v->id.run, view_marker_ns(v));
  if (!ev.run || !ev.text) {
    ps_alert_event_free(&ev);
    return;
  }
  jd_alerting_raise(ar->raiser, &ev, v->id.run, judge_age, happened_ns);
}

/* run_recovered pairs with a run_stalled that was raised. */
static void raise_recovered(jd_alerting_runs *ar, const ps_run_view *v) {
  char stall_id[PS_ALERT_ID_LEN + 1];
  char host[256];
  ps_alert_id(stall_id, PS_ALERT_RUN_STALLED, ps_config_host(ar->sh->cfg, host, sizeof host),
              PS_RUN_MARKER_SOURCE, v->id.run, view_marker_ns(v));
  if (jd_alerting_raised_before(ar->raiser, stall_id))
    raise_run(ar, PS_ALERT_RUN_RECOVERED, v, 0, 0);
}

void jd_alerting_runs_event(jd_alerting_runs *ar, const pl_run_event *ev) {
  const ps_run_view *v = ev->view;
  if (v->have_start)
    jd_alerting_clock_run_started_in(ar->clock, ev->folder, v->start_ns / 1000000000LL);
  switch (ev->kind) {
  case PL_RUN_STARTED:
    break;
  case PL_RUN_ENDED:
    if (ev->after_stall)
      raise_recovered(ar, v);
    if (v->status == PS_RUN_STATUS_FAILED || v->status == PS_RUN_STATUS_INTERRUPTED)
      raise_run(ar,
                v->status == PS_RUN_STATUS_FAILED ? PS_ALERT_RUN_FAILED
                                                  : PS_ALERT_RUN_INTERRUPTED,
                v, ev->backfill, v->end_ns);
    break;
  case PL_RUN_STALLED:
    /* A stall found when the folder was first judged may be an old,
     * abandoned run: its age is judged like a backfill's. */
    raise_run(ar, PS_ALERT_RUN_STALLED, v, 1, v->end_ns);
    break;
  case PL_RUN_RESUMED:
    raise_recovered(ar, v);
    break;
  }
}

/* --- tapped points -------------------------------------------------------------- */

/* A string field as a NUL-terminated copy, or NULL. */
static char *field_str(const ps_point *p, const char *key) {
  const ps_field *f = ps_point_field(p, key);
  if (!f || f->type != PS_F_STRING)
    return NULL;
  char *s = malloc(f->v.s.n + 1);
  if (s) {
    memcpy(s, f->v.s.p, f->v.s.n);
    s[f->v.s.n] = '\0';
  }
  return s;
}

static int field_num(const ps_point *p, const char *key, double *out) {
  *out = ps_point_number(p, key);
  return !isnan(*out);
}

static int field_bool(const ps_point *p, const char *key) {
  const ps_field *f = ps_point_field(p, key);
  return f && f->type == PS_F_BOOL && f->v.b;
}

/* A `runs` marker a source gave (DSS bench, or written in an lp file). */
static void on_marker(jd_alerting_runs *ar, const ps_point *p, const ps_source_cfg *src) {
  const char *source = ps_point_tag(p, "source"), *run = ps_point_tag(p, "run");
  const char *event = ps_point_tag(p, "event"), *status = ps_point_tag(p, "status");
  if (!source || !run || !event)
    return;
  jd_alerting_clock_run_started(ar->clock, src, p->time_ns / 1000000000LL);
  /* The run tracker's markers: its events come richer. */
  if (strcmp(event, "end") != 0 || !status || strcmp(source, PS_RUN_MARKER_SOURCE) == 0)
    return;
  ps_alert_kind kind;
  if (strcmp(status, "failed") == 0)
    kind = PS_ALERT_RUN_FAILED;
  else if (strcmp(status, "interrupted") == 0)
    kind = PS_ALERT_RUN_INTERRUPTED;
  else if (strcmp(status, "stalled") == 0)
    kind = PS_ALERT_RUN_STALLED;
  else
    return;
  ps_alert_event ev;
  ps_alert_event_init(&ev, kind);
  char own[256];
  const char *host = ps_point_tag(p, "host");
  if (!host)
    host = ps_config_host(ar->sh->cfg, own, sizeof own);
  ps_alert_set(&ev.host, host);
  ps_alert_set(&ev.source, source);
  ps_alert_set(&ev.run, run);
  ps_alert_set(&ev.revision, ps_point_tag(p, "revision"));
  ps_alert_set(&ev.status, status);
  ev.text = field_str(p, "text");
  if (!ev.text || !ev.text[0]) {
    free(ev.text);
    ev.text = NULL;
    if (asprintf(&ev.text, "%s %s", run, status) < 0)
      ev.text = NULL;
  }
  ps_alert_id(ev.id, kind, host, source, run, p->time_ns);
  if (!ev.host || !ev.source || !ev.run || !ev.text) {
    ps_alert_event_free(&ev);
    return;
  }
  jd_alerting_raise(ar->raiser, &ev, run, field_bool(p, "backfill"), p->time_ns);
}

static void group_free(jd_verdict_group *g) {
  free(g->host);
  free(g->source);
  free(g->series);
  free(g->run);
  free(g->revision);
  ps_alert_event_free(&g->metrics);
  free(g);
}

static void flush_groups(jd_alerting_runs *ar) {
  jd_verdict_group *g = ar->groups;
  ar->groups = NULL;
  while (g) {
    jd_verdict_group *next = g->next;
    jd_alert_verdicts v = {g->source,          g->series,           g->run,
                           g->revision,        g->time_ns,          g->backfill,
                           g->metrics.metrics, g->metrics.nmetrics, g->host};
    jd_alerting_runs_verdicts(ar, &v);
    group_free(g);
    g = next;
  }
}

static void gather_cb(uv_timer_t *t) { flush_groups(t->data); }

/* A perfship_verdict point a source gave: gathered per run for a moment. */
static void on_verdict_point(jd_alerting_runs *ar, const ps_point *p) {
  char *verdict = field_str(p, "verdict");
  int improvement = verdict && strcmp(verdict, "improvement") == 0;
  int regression = verdict && strcmp(verdict, "regression") == 0;
  free(verdict);
  const char *source = ps_point_tag(p, "source"), *run = ps_point_tag(p, "run");
  const char *metric = ps_point_tag(p, "metric");
  char *method = field_str(p, "method");
  int stage_drift = method && strcmp(method, "stage_drift") == 0;
  free(method);
  if ((!improvement && !regression) || stage_drift || !source || !run || !metric)
    return;
  /* A verdict point names its run by (host, name): two machines' runs of
   * one name are two events. */
  char own[256];
  const char *host = ps_point_tag(p, "host");
  if (!host)
    host = ps_config_host(ar->sh->cfg, own, sizeof own);
  jd_verdict_group *g = ar->groups;
  while (g && !(g->time_ns == p->time_ns && !strcmp(g->run, run) &&
                !strcmp(g->source, source) && !strcmp(g->host, host)))
    g = g->next;
  if (!g) {
    if (!(g = calloc(1, sizeof *g)))
      return;
    g->time_ns = p->time_ns;
    g->backfill = field_bool(p, "backfill");
    g->revision = field_str(p, "revision");
    if (ps_alert_set(&g->host, host) || ps_alert_set(&g->source, source) ||
        ps_alert_set(&g->run, run) ||
        ps_alert_set(&g->series, ps_point_tag(p, "series"))) {
      group_free(g);
      return;
    }
    g->next = ar->groups;
    ar->groups = g;
  }
  char *change_run = field_str(p, "change_run");
  char *good = field_str(p, "good_revision"), *bad = field_str(p, "bad_revision");
  char *note = field_str(p, "note");
  ps_buf link;
  ps_buf_init(&link, 0);
  ps_compare_url(&link, ar->sh->cfg->verdicts.compare_url, good, bad);
  ps_alert_metric m = {
      .metric = (char *)metric,
      .stage = (char *)ps_point_tag(p, "stage"),
      .arm = (char *)ps_point_tag(p, "arm"),
      .reference = (char *)ps_point_tag(p, "reference"),
      .change_run = change_run,
      .against = (char *)ps_point_tag(p, "against"),
      .good_revision = good,
      .bad_revision = bad,
      .compare_url = link.len ? link.data : NULL,
      .note = note,
      .improvement = improvement,
  };
  m.have_value = field_num(p, "value", &m.value);
  m.have_baseline = field_num(p, "baseline", &m.baseline);
  m.have_change_pct = field_num(p, "change_pct", &m.change_pct);
  ps_alert_event_add_metric(&g->metrics, &m);
  free(change_run);
  free(good);
  free(bad);
  free(note);
  ps_buf_free(&link);
  if (!ar->sh->once || !ar->finished)
    uv_timer_start(&ar->gather, gather_cb, GATHER_MS, 0);
  else
    flush_groups(ar);
}

static const char *const wanted[] = {PS_RUN_MARKER_MEASUREMENT, PS_VERDICT_MEASUREMENT};

size_t jd_alerting_runs_measurements(const char **out, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < sizeof wanted / sizeof wanted[0] && n < cap; i++)
    out[n++] = wanted[i];
  return n;
}

void jd_alerting_runs_tap(jd_alerting_runs *ar, const ps_point *p, const ps_source_cfg *src) {
  const char *m = p->measurement;
  if (strcmp(m, wanted[0]) == 0)
    on_marker(ar, p, src);
  else if (strcmp(m, wanted[1]) == 0)
    on_verdict_point(ar, p);
}

/* --- the cause of a regression --------------------------------------------- */

/* Appended to a regression's text: "; inside the chain: v16
 * (zcf-b1-8d1c4-amm) 0.0123 -> 0.0861 s per cycle (+0.0738), ...; BOYD
 * 3.5 % -> 4.1 % of delivery time; Kernel objects per cycle +2" (docs/alerts.md).
 * The three vats that moved most are what a person reads on a phone; the
 * payload (cause_json) has all five. */
#define CAUSE_TEXT_VATS 3

static int cause_text(ps_buf *out, const ps_explanation *e) {
  int rc = 0;
  if (e->ntop)
    rc |= ps_buf_puts(out, "; inside the chain: ");
  for (size_t i = 0; i < e->ntop && i < CAUSE_TEXT_VATS; i++) {
    const ps_explain_vat *v = &e->top[i];
    rc |= ps_buf_printf(out, "%s%s%s%s%s %.4g -> %.4g s per cycle (%+.4g)", i ? ", " : "",
                        v->vat, v->name[0] ? " (" : "", v->name, v->name[0] ? ")" : "",
                        v->then, v->now, v->now - v->then);
  }
  if (isfinite(e->boyd_now)) {
    rc |= ps_buf_puts(out, "; BOYD ");
    if (isfinite(e->boyd_then))
      rc |= ps_buf_printf(out, "%.1f %% -> ", e->boyd_then * 100.0);
    rc |= ps_buf_printf(out, "%.1f %% of delivery time", e->boyd_now * 100.0);
  }
  int said = 0;
  for (int g = 0; g < PS_GROWTH_NFIGURES; g++)
    if (isfinite(e->growth[g]) && e->growth[g] != 0) {
      const ps_figure *f = ps_growth_figure((ps_growth_figure_id)g);
      rc |= ps_buf_printf(out, "%s%s %+.3g", said++ ? ", " : "; ", f->label, e->growth[g]);
    }
  return rc ? -ENOMEM : 0;
}

static void add_finite(cJSON *o, const char *key, double v) {
  if (isfinite(v))
    cJSON_AddNumberToObject(o, key, v);
}

static char *cause_json(const ps_explanation *e) {
  cJSON *o = cJSON_CreateObject(), *vats = cJSON_AddArrayToObject(o, "vats");
  cJSON *growth = cJSON_AddObjectToObject(o, "growth");
  for (size_t i = 0; vats && i < e->ntop; i++) {
    const ps_explain_vat *v = &e->top[i];
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "vat", v->vat);
    if (v->name[0])
      cJSON_AddStringToObject(x, "name", v->name);
    add_finite(x, "then", v->then);
    add_finite(x, "now", v->now);
    add_finite(x, "change", v->now - v->then);
    cJSON_AddItemToArray(vats, x);
  }
  cJSON_AddNumberToObject(o, "oldRuns", (double)e->old_runs);
  add_finite(o, "boydShareThen", e->boyd_then);
  add_finite(o, "boydShareNow", e->boyd_now);
  for (int g = 0; growth && g < PS_GROWTH_NFIGURES; g++)
    add_finite(growth, ps_growth_figure((ps_growth_figure_id)g)->name, e->growth[g]);
  char *text = o ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return text;
}


/* A loadgen regression of time in the chain waits for its cause, read
 * back on the threadpool (readback/explain.h); the event goes out with or
 * without it (docs/alerts.md: a server that cannot answer costs the cause,
 * never the alert). */
/* The slogs of the runs compared may still be read when the regression is
 * judged (a backfill reads every perf.jsonl before any slog): while this
 * agent still reads or sends the slog of the run or of a run of its old
 * level, the cause is asked again every CAUSE_RETRY_MS, CAUSE_PENDING_TRIES
 * times at most; else, while the series has slog stages on the server but
 * the run none yet (another agent's slog), CAUSE_TRIES times. Deciding on
 * what the server holds alone read the cause from the first of the old
 * runs' slogs to arrive, or gave up before any had (docs/alerts.md). A
 * series without slogs is not waited for. */
#define CAUSE_RETRY_MS 2000
#define CAUSE_TRIES 10
#define CAUSE_PENDING_TRIES 60

typedef struct explain_job {
  struct explain_job *next;
  uv_timer_t retry;
  int tries;
  jd_alerting_runs *ar;
  ps_config cfg; /* shallow copy: its strings outlive the job */
  ps_explain_data d;
  ps_buf err;
  int rc;
  ps_alert_event ev;
  int backfill;
  int64_t time_ns;
} explain_job;

/* The regressed metric whose cause is explained, or NULL. */
static const ps_alert_metric *wants_cause(const ps_alert_event *ev) {
  if (ev->kind != PS_ALERT_REGRESSION || !ev->source ||
      strcmp(ev->source, PS_RUN_MARKER_SOURCE) != 0)
    return NULL;
  for (size_t i = 0; i < ev->nmetrics; i++) {
    const ps_figure *f = ps_figure_find(ev->metrics[i].metric);
    if (f && f->explained && !ev->metrics[i].stage)
      return &ev->metrics[i];
  }
  return NULL;
}

static void explain_done(void *arg, int status);

/* On the threadpool (readback/query.h ps_rb_run_reads). */
static int explain_work(void *arg) {
  explain_job *j = arg;
  j->rc = ps_rb_explain_query(&j->cfg, &j->d, &j->err);
  return 0;
}

static void job_free(uv_handle_t *h) {
  explain_job *j = h->data;
  ps_rb_explain_data_free(&j->d);
  ps_buf_free(&j->err);
  free(j);
}

static void retry_cb(uv_timer_t *t) {
  explain_job *j = t->data;
  if (j->ar->sh->stopping || ps_rb_run_reads(j->ar->sh->loop, explain_work, explain_done, j) < 0)
    explain_done(j, -ECANCELED);
}

/* Has the run a slog stage on the server that takes part? */
static int run_has_slog(const ps_explain_data *d) {
  for (size_t i = 0; i < d->nstages; i++)
    if (strcmp(d->stages[i].run, d->run) == 0 && d->stages[i].stage > 0 && !d->stages[i].partial &&
        d->stages[i].cycles > 0)
      return 1;
  return 0;
}

/* Is the slog of a run the cause compares still being read or sent here? */
static int slogs_pending(const explain_job *j) {
  const jd_alerting_runs *ar = j->ar;
  if (!ar->slog_pending)
    return 0;
  int pending = ar->slog_pending(ar->slog_ctx, j->d.run);
  for (size_t i = 0; !pending && i < j->d.nold; i++)
    pending = ar->slog_pending(ar->slog_ctx, j->d.old[i]);
  return pending;
}

/* Is the cause to be asked again (the bounds above)? */
static int ask_again(explain_job *j, int status) {
  if (status != 0 || j->rc != 0 || j->ar->sh->stopping)
    return 0;
  if (slogs_pending(j))
    return ++j->tries < CAUSE_PENDING_TRIES;
  return j->d.nstages && !run_has_slog(&j->d) && ++j->tries < CAUSE_TRIES;
}

/* On the loop; `status` -ECANCELED when the read was cancelled. */
static void explain_done(void *arg, int status) {
  explain_job *j = arg;
  jd_alerting_runs *ar = j->ar;
  if (ask_again(j, status)) {
    /* asked again from the start: the same run, the same known change */
    char *metric = j->d.regressed ? strdup(j->d.regressed) : NULL;
    char *change = j->d.change_run ? strdup(j->d.change_run) : NULL;
    char *run = strdup(j->d.run), *host = j->d.host ? strdup(j->d.host) : NULL;
    int64_t since = j->d.since_ns, now = j->d.now_ns, old_runs = j->d.baseline_runs;
    ps_rb_explain_data_free(&j->d);
    ps_rb_explain_data_init(&j->d, run, host, since, now);
    int ok = run && metric && ps_rb_explain_data_known(&j->d, metric, change, old_runs) == 0;
    free(metric);
    free(change);
    free(run);
    free(host);
    if (ok && uv_timer_start(&j->retry, retry_cb, CAUSE_RETRY_MS, 0) == 0)
      return;
    j->rc = -ENOMEM;
  }
  if (status == 0 && j->rc == 0 && run_has_slog(&j->d)) {
    ps_buf text;
    ps_buf_init(&text, 0);
    char *cause = cause_json(&j->d.e);
    if (ps_buf_puts(&text, j->ev.text) == 0 && cause_text(&text, &j->d.e) == 0) {
      free(j->ev.text);
      j->ev.text = text.data;
      text.data = NULL;
    }
    ps_buf_free(&text);
    free(j->ev.cause);
    j->ev.cause = cause;
  } else {
    ps_log_limited(PS_LOG_WARNING, MOD, "cause", 300,
                   "%s: regression sent without its cause (%s)", j->ev.run,
                   j->err.data    ? j->err.data
                   : j->rc < 0    ? strerror(-j->rc)
                   : status == 0 ? "no slog figures of the run on the server"
                                  : "cancelled");
  }
  ar->explaining--;
  for (explain_job **pp = &ar->jobs; *pp; pp = &(*pp)->next)
    if (*pp == j) {
      *pp = j->next;
      break;
    }
  if (!ar->sh->stopping)
    jd_alerting_raise(ar->raiser, &j->ev, j->d.run, j->backfill, j->time_ns); /* takes it */
  else
    ps_alert_event_free(&j->ev);
  uv_close((uv_handle_t *)&j->retry, job_free);
  /* The owner waits for this (jd_alerting_runs_idle): an event the policy
   * keeps back is no delivery attempt, so nothing else would tell it. */
  if (ar->raiser->settled)
    ar->raiser->settled(ar->raiser->settled_ctx);
}

/* Takes `ev` over when it returns 1. */
static int explain_then_raise(jd_alerting_runs *ar, ps_alert_event *ev, const char *run,
                              int backfill, int64_t time_ns) {
  const ps_alert_metric *m = wants_cause(ev);
  if (!m)
    return 0;
  /* The same event judged again while the first waits for its cause: the
   * first is the one raised, as without a cause (alert/decided.h) */
  for (explain_job *o = ar->jobs; o; o = o->next)
    if (strcmp(o->ev.id, ev->id) == 0) {
      ps_alert_event_free(ev);
      return 1;
    }
  explain_job *j = calloc(1, sizeof *j);
  if (!j)
    return 0;
  j->ar = ar;
  j->cfg = *ar->sh->cfg;
  /* every time is bounded by the run's own; the run is looked for far back */
  ps_rb_explain_data_init(&j->d, run, ev->host, (int64_t)3660 * 86400 * 1000000000, time_ns);
  ps_buf_init(&j->err, 2048);
  j->backfill = backfill;
  j->time_ns = time_ns;
  if (!j->d.run ||
      ps_rb_explain_data_known(&j->d, m->metric, m->change_run, m->baseline_runs) < 0 ||
      uv_timer_init(ar->sh->loop, &j->retry) < 0) {
    ps_rb_explain_data_free(&j->d);
    ps_buf_free(&j->err);
    free(j);
    return 0;
  }
  j->retry.data = j;
  if (ps_rb_run_reads(ar->sh->loop, explain_work, explain_done, j) < 0) {
    uv_close((uv_handle_t *)&j->retry, job_free);
    return 0;
  }
  ps_alert_event_move(&j->ev, ev);
  ar->explaining++;
  j->next = ar->jobs;
  ar->jobs = j;
  return 1;
}

void jd_alerting_runs_verdicts(jd_alerting_runs *ar, const jd_alert_verdicts *v) {
  static const ps_alert_kind kinds[2] = {PS_ALERT_REGRESSION, PS_ALERT_IMPROVEMENT};
  for (int dir = 0; dir < 2; dir++) {
    ps_alert_event ev;
    ps_alert_event_init(&ev, kinds[dir]);
    for (size_t i = 0; i < v->nmetrics; i++)
      if (!v->metrics[i].improvement == !dir)
        ps_alert_event_add_metric(&ev, &v->metrics[i]);
    if (!ev.nmetrics) {
      ps_alert_event_free(&ev);
      continue;
    }
    char own[256];
    const char *host = v->host ? v->host : ps_config_host(ar->sh->cfg, own, sizeof own);
    ps_alert_set(&ev.host, host);
    ps_alert_set(&ev.source, v->source);
    ps_alert_set(&ev.run, v->run);
    ps_alert_set(&ev.series, v->series);
    /* The run tracker's runs are series by their test type. */
    if (v->source && strcmp(v->source, PS_RUN_MARKER_SOURCE) == 0)
      ps_alert_set(&ev.test_type, v->series);
    ps_alert_set(&ev.revision, v->revision);
    ps_alert_set(&ev.status, ps_alert_kind_name(kinds[dir]));
    ps_buf text;
    ps_buf_init(&text, 0);
    ps_alert_text_verdict(&text, &ev);
    ev.text = text.data;
    ps_alert_id(ev.id, kinds[dir], host, v->source, v->run, v->time_ns);
    if (!ev.host || !ev.source || !ev.run || !ev.text) {
      ps_alert_event_free(&ev);
      continue;
    }
    if (explain_then_raise(ar, &ev, v->run, v->backfill, v->time_ns))
      continue;
    jd_alerting_raise(ar->raiser, &ev, v->run, v->backfill, v->time_ns);
  }
}

void jd_alerting_runs_judged(jd_alerting_runs *ar, const jd_run_verdicts *rv) {
  ps_alert_metric *m = calloc(rv->n ? rv->n : 1, sizeof *m);
  char (*stages)[24] = calloc(rv->n ? rv->n : 1, sizeof *stages);
  ps_buf *links = calloc(rv->n ? rv->n : 1, sizeof *links);
  const char *tmpl = ar->sh->cfg->verdicts.compare_url;
  size_t n = 0;
  for (size_t i = 0; m && stages && links && i < rv->n; i++) {
    const ps_verdict *v = &rv->v[i];
    /* Stage drift is expected of a long run (docs/verdicts.md): it is a
     * verdict on the dashboards and the report, not a page every night. */
    /* only a change alerts: not none, nor a triage decision's excluded or
     * baseline */
    if ((v->verdict != PS_VERDICT_REGRESSION && v->verdict != PS_VERDICT_IMPROVEMENT) ||
        v->method == PS_METHOD_STAGE_DRIFT)
      continue;
    double pct = ps_verdict_change_pct(v->value, v->baseline);
    if (v->stage >= 0)
      snprintf(stages[n], sizeof stages[n], "%d", v->stage);
    ps_buf_init(&links[n], 0);
    ps_compare_url(&links[n], tmpl, v->good_revision, v->bad_revision);
    m[n] = (ps_alert_metric){
        .metric = (char *)v->metric,
        .stage = v->stage >= 0 ? stages[n] : NULL,
        .arm = (char *)v->arm,
        .reference = (char *)v->reference,
        .change_run = v->change_run && strcmp(v->change_run, v->run) ? (char *)v->change_run : NULL,
        .against = (char *)v->against,
        .good_revision = (char *)v->good_revision,
        .bad_revision = (char *)v->bad_revision,
        .compare_url = links[n].len ? links[n].data : NULL,
        .note = v->note[0] ? (char *)v->note : NULL,
        .improvement = v->verdict == PS_VERDICT_IMPROVEMENT,
        .have_value = !isnan(v->value),
        .have_baseline = !isnan(v->baseline),
        .have_change_pct = !isnan(pct),
        .value = v->value,
        .baseline = v->baseline,
        .change_pct = pct,
        .baseline_runs = v->baseline_runs > 0 ? v->baseline_runs : 0,
    };
    n++;
  }
  if (n) {
    jd_alert_verdicts av = {rv->source,   rv->series, rv->run, rv->revision, rv->time_ns,
                            rv->backfill, m,          n,       rv->host};
    jd_alerting_runs_verdicts(ar, &av);
  }
  for (size_t i = 0; links && i < n; i++)
    ps_buf_free(&links[i]);
  free(links);
  free(m);
  free(stages);
}

/* --- start and end ---------------------------------------------------------------- */

void jd_alerting_runs_init(jd_alerting_runs *ar, pl_shared *sh, jd_alerting_raiser *raiser,
                           jd_alerting_clock *clock,
                           int (*slog_pending)(void *ctx, const char *run), void *slog_ctx) {
  memset(ar, 0, sizeof *ar);
  ar->slog_pending = slog_pending;
  ar->slog_ctx = slog_ctx;
  ar->sh = sh;
  ar->raiser = raiser;
  ar->clock = clock;
  uv_timer_init(sh->loop, &ar->gather);
  ar->gather.data = ar;
}

void jd_alerting_runs_finish(jd_alerting_runs *ar) {
  ar->finished = 1;
  uv_timer_stop(&ar->gather);
  flush_groups(ar);
}

int jd_alerting_runs_idle(const jd_alerting_runs *ar) { return !ar->groups && !ar->explaining; }

void jd_alerting_runs_close(jd_alerting_runs *ar) {
  if (!uv_is_closing((uv_handle_t *)&ar->gather))
    uv_close((uv_handle_t *)&ar->gather, NULL);
}

void jd_alerting_runs_free(jd_alerting_runs *ar) {
  for (jd_verdict_group *g = ar->groups, *next; g; g = next) {
    next = g->next;
    group_free(g);
  }
  ar->groups = NULL;
}
