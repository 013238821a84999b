/*
 * alerting.c: the events perfship raises itself. See
 * include/pipeline/alerting.h and docs/alerts.md.
 *
 * Design
 * - This file turns what the pipeline knows into events; alert/ decides
 *   nothing about the pipeline: the event and its id, the texts, the
 *   outbox, the throttle, the ledger, the channels and the dispatcher are
 *   its modules. The stage owns them and wires them here.
 * - Channels are numbered as the outbox names them: exec, webhook, and
 *   influxdb (the perfship_alert point, sent through `out`). The point is a
 *   channel like the others, so it too is saved until InfluxDB
 *   acknowledged it, and sent again after a restart on the same timestamp.
 * - Every event is saved (pl_commit_save, the same atomic write as the
 *   offsets) before its first attempt: a crash after that resends it, with
 *   the same id; a crash before it raises it again from the replayed input,
 *   with the same id.
 * - One timer (`tick`) judges the sink's health, rejected input and the
 *   sources' silence; it wakes at the nearest no_new_run deadline or a
 *   fraction of unhealthy_after_s, whichever comes first. A second one
 *   (`gather`) waits a moment after a tapped verdict point, so that one
 *   run's verdicts, which arrive as several points, become one event.
 */
#include "pipeline/alerting.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "alert/health.h"
#include "alert/policy.h"
#include "alert/silence.h"
#include "alert/text.h"
#include "core/log.h"
#include "formats/format.h"
#include "runs/runs.h"
#include "state/state.h"

#define MOD "alerts"
#define CH_EXEC 0u
#define CH_WEBHOOK 1u
#define CH_INFLUX 2u
#define NCHANNELS 3u
#define PEOPLE ((1u << CH_EXEC) | (1u << CH_WEBHOOK))
#define GATHER_MS 1000
#define TICK_MIN_MS 250
#define TICK_MAX_MS 30000
#define LEDGER_KEEP_S (30 * 86400)

static const char *const channel_names[NCHANNELS] = {"exec", "webhook", "influxdb"};

struct pl_alert_source {
  pl_alert_source *next;
  char *key; /* "loadgen:/srv/loadgen/results" */
  ps_alert_silence silence;
  const ps_source_cfg *cfg; /* in the current configuration, else NULL */
};

struct pl_verdict_group {
  pl_verdict_group *next;
  char *source, *series, *run, *revision;
  int64_t time_ns;
  int backfill;
  ps_alert_event metrics; /* only its metrics are used */
};

static int64_t now_s(void) { return (int64_t)time(NULL); }

static int64_t now_ns(void) { return ps_alert_now_ms() * 1000000LL; }

/* --- sources and their silence ---------------------------------------------- */

/* The format of a source, as its ops table says it (formats/format.h): a
 * format's entries, never its id, decide what is expected of it. */
static const ps_format_ops *ops_of(const ps_source_cfg *s) {
  static const ps_format_ops none = {0};
  const ps_format_ops *ops = ps_format_ops_get(s->format);
  return ops ? ops : &none;
}

static void source_key(char *out, size_t n, const ps_source_cfg *s) {
  snprintf(out, n, "%s:%s", ps_format_name(s->format), s->path ? s->path : "");
}

static pl_alert_source *source_find(pl_alerting *al, const char *key) {
  for (pl_alert_source *s = al->sources; s; s = s->next)
    if (strcmp(s->key, key) == 0)
      return s;
  return NULL;
}

static pl_alert_source *source_add(pl_alerting *al, const char *key, int64_t since) {
  pl_alert_source *s = calloc(1, sizeof *s);
  if (!s || !(s->key = strdup(key))) {
    free(s);
    return NULL;
  }
  s->silence.watching_since_s = since;
  s->next = al->sources;
  al->sources = s;
  return s;
}

/* Matches the sources to the current configuration (it may have been
 * reloaded): new ones start being watched now. */
static void sync_sources(pl_alerting *al) {
  for (pl_alert_source *s = al->sources; s; s = s->next)
    s->cfg = NULL;
  const ps_config *cfg = al->sh->cfg;
  for (size_t i = 0; i < cfg->nsources; i++) {
    const ps_source_cfg *src = &cfg->sources[i];
    if (!ops_of(src)->run_source)
      continue; /* its files are not runs: no run is expected of it */
    char key[4200];
    source_key(key, sizeof key, src);
    pl_alert_source *s = source_find(al, key);
    if (!s && !(s = source_add(al, key, now_s())))
      continue;
    if (!s->cfg)
      s->cfg = src;
  }
}

/* The source of run folders (the run tracker's) whose folder holds `folder`
 * (its path up to the first wildcard, for a glob). */
static pl_alert_source *source_of_folder(pl_alerting *al, const char *folder) {
  sync_sources(al);
  for (pl_alert_source *s = al->sources; s; s = s->next) {
    if (!s->cfg || !ops_of(s->cfg)->run_folder)
      continue;
    char base[4096];
    snprintf(base, sizeof base, "%s", s->cfg->path);
    char *wild = strpbrk(base, "*?[");
    if (wild) {
      *wild = '\0';
      char *slash = strrchr(base, '/');
      if (slash)
        slash[slash == base ? 1 : 0] = '\0';
    }
    if (ps_path_under(folder, base))
      return s;
  }
  return NULL;
}

static void reschedule(pl_alerting *al);

/* A new silence begins: the tick is moved to its deadline. */
static void note_run_start(pl_alerting *al, pl_alert_source *s, int64_t start_s) {
  if (!s || !ps_alert_silence_run_started(&s->silence, start_s))
    return;
  al->sh->state_dirty = 1;
  pl_commit_moved(al->commit);
  reschedule(al);
}

static int64_t silence_after(const pl_alerting *al, const pl_alert_source *s) {
  if (s->cfg && s->cfg->no_new_run_after_s >= 0)
    return s->cfg->no_new_run_after_s;
  return al->sh->cfg->alerts.no_new_run_after_s;
}

/* --- raising ------------------------------------------------------------------ */

static const char *host_of(const pl_alerting *al, char *buf, size_t n) {
  const ps_config *cfg = al->sh->cfg;
  for (size_t i = 0; i < cfg->ntags; i++)
    if (strcmp(cfg->tags[i].key, "host") == 0)
      return cfg->tags[i].value;
  if (gethostname(buf, n - 1) < 0)
    snprintf(buf, n, "unknown");
  buf[n - 1] = '\0';
  return buf;
}

static unsigned channels_live(const pl_alerting *al) { return al->dispatch.live; }

/* Takes `ev` (freed in every case). `key` is the min_interval_s key;
 * `judge_age`: the catch-up rule applies, `happened_ns` is when. */
static void raise_event(pl_alerting *al, ps_alert_event *ev, const char *key, int judge_age,
                        int64_t happened_ns) {
  const ps_config *cfg = al->sh->cfg;
  const char *name = ps_alert_kind_name(ev->kind);
  int64_t now = now_ns();
  if (ps_alert_ledger_has(&al->ledger, ev->id)) {
    PS_DEBUG(MOD, "%s %s (%s): raised before", name, ev->run, ev->id);
    ps_alert_event_free(ev);
    return;
  }
  ps_alert_decision dec = ps_alert_decide(cfg->alerts.on, cfg->alerts.catch_up_s, ev->kind,
                                          judge_age, happened_ns, now);
  if (dec != PS_ALERT_RAISE) {
    PS_DEBUG(MOD, "%s %s: not raised (%s)", name, ev->run,
             dec == PS_ALERT_TOO_OLD ? "older than alerts.catch_up_s" : "not in alerts.on");
    ps_alert_event_free(ev);
    return;
  }
  uint64_t earlier = 0;
  int pass = ps_alert_throttle_pass(&al->throttle, ev->kind, key, now,
                                    cfg->alerts.min_interval_s, &earlier);
  ps_alert_ledger_add(&al->ledger, ev->id, now / 1000000000LL);
  if (pass == 0) {
    al->sh->n.alerts_suppressed++;
    PS_INFO(MOD, "%s %s: a repeat within alerts.min_interval_s, not sent: %s", name, key,
            ev->text);
    al->sh->state_dirty = 1;
    pl_commit_moved(al->commit);
    ps_alert_event_free(ev);
    return;
  }
  if (earlier) {
    ev->suppressed = earlier;
    ps_buf t;
    ps_buf_init(&t, 0);
    ps_buf_printf(&t, "%s (and %" PRIu64 " more like it not sent since the last)", ev->text,
                  earlier);
    if (t.data) {
      free(ev->text);
      ev->text = t.data;
    }
  }
  int64_t us = now / 1000;
  ev->time_ns = (us > al->last_us ? us : al->last_us + 1) * 1000;
  al->last_us = ev->time_ns / 1000;
  char host[256];
  ps_alert_set(&ev->host, host_of(al, host, sizeof host));
  PS_INFO(MOD, "%s: %s (id %s)", name, ev->text, ev->id);
  size_t dropped_before = al->box.dropped;
  ps_outbox_entry *e = ps_outbox_add(&al->box, ev, channels_live(al), ps_alert_now_ms());
  if (!e) {
    PS_ERROR(MOD, "%s %s: out of memory; not sent", name, ev->run);
    ps_alert_event_free(ev);
    return;
  }
  if (al->box.dropped != dropped_before)
    PS_ERROR(MOD, "more than %zu events wait to be delivered; the oldest was dropped "
                  "(is the receiver down?)",
             al->box.max);
  al->sh->n.alerts_raised++;
  al->sh->n.alerts_pending = al->box.n;
  /* Saved before it is sent: a crash from here on sends it again. */
  pl_commit_save(al->commit);
  ps_alert_dispatch_kick(&al->dispatch);
}

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

static void raise_run(pl_alerting *al, ps_alert_kind kind, const ps_run_view *v,
                      int judge_age, int64_t happened_ns) {
  ps_alert_event ev;
  ps_alert_event_init(&ev, kind);
  fill_from_view(&ev, v);
  ps_buf text;
  ps_buf_init(&text, 0);
  ps_alert_text_run(&text, kind, v);
  ev.text = text.data;
  ps_alert_id(ev.id, kind, PS_RUN_MARKER_SOURCE, v->id.run, view_marker_ns(v));
  if (!ev.run || !ev.text) {
    ps_alert_event_free(&ev);
    return;
  }
  raise_event(al, &ev, v->id.run, judge_age, happened_ns);
}

/* run_recovered pairs with a run_stalled that was raised. */
static void raise_recovered(pl_alerting *al, const ps_run_view *v) {
  char stall_id[PS_ALERT_ID_LEN + 1];
  ps_alert_id(stall_id, PS_ALERT_RUN_STALLED, PS_RUN_MARKER_SOURCE, v->id.run,
              view_marker_ns(v));
  if (ps_alert_ledger_has(&al->ledger, stall_id))
    raise_run(al, PS_ALERT_RUN_RECOVERED, v, 0, 0);
}

void pl_alerting_run_event(pl_alerting *al, const pl_run_event *ev) {
  const ps_run_view *v = ev->view;
  if (v->have_start)
    note_run_start(al, source_of_folder(al, ev->folder), v->start_ns / 1000000000LL);
  switch (ev->kind) {
  case PL_RUN_STARTED:
    break;
  case PL_RUN_ENDED:
    if (ev->after_stall)
      raise_recovered(al, v);
    if (v->status == PS_RUN_STATUS_FAILED || v->status == PS_RUN_STATUS_INTERRUPTED)
      raise_run(al,
                v->status == PS_RUN_STATUS_FAILED ? PS_ALERT_RUN_FAILED
                                                  : PS_ALERT_RUN_INTERRUPTED,
                v, ev->backfill, v->end_ns);
    break;
  case PL_RUN_STALLED:
    /* A stall found when the folder was first judged may be an old,
     * abandoned run: its age is judged like a backfill's. */
    raise_run(al, PS_ALERT_RUN_STALLED, v, 1, v->end_ns);
    break;
  case PL_RUN_RESUMED:
    raise_recovered(al, v);
    break;
  }
}

/* --- tapped points -------------------------------------------------------------- */

static const char *tag_of(const ps_point *p, const char *key) {
  for (size_t i = 0; i < p->ntags; i++)
    if (strcmp(p->tags[i].key, key) == 0)
      return p->tags[i].value;
  return NULL;
}

static const ps_field *field_of(const ps_point *p, const char *key) {
  for (size_t i = 0; i < p->nfields; i++)
    if (strcmp(p->fields[i].key, key) == 0)
      return &p->fields[i];
  return NULL;
}

/* A string field as a NUL-terminated copy, or NULL. */
static char *field_str(const ps_point *p, const char *key) {
  const ps_field *f = field_of(p, key);
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
  const ps_field *f = field_of(p, key);
  if (!f)
    return 0;
  switch (f->type) {
  case PS_F_FLOAT:
    *out = f->v.f;
    break;
  case PS_F_INT:
    *out = (double)f->v.i;
    break;
  case PS_F_UINT:
    *out = (double)f->v.u;
    break;
  default:
    return 0;
  }
  return isfinite(*out);
}

static int field_bool(const ps_point *p, const char *key) {
  const ps_field *f = field_of(p, key);
  return f && f->type == PS_F_BOOL && f->v.b;
}

/* A `runs` marker a source gave (DSS bench, or written in an lp file). */
static void on_marker(pl_alerting *al, const ps_point *p, const ps_source_cfg *src) {
  const char *source = tag_of(p, "source"), *run = tag_of(p, "run");
  const char *event = tag_of(p, "event"), *status = tag_of(p, "status");
  if (!source || !run || !event)
    return;
  char key[4200];
  source_key(key, sizeof key, src);
  sync_sources(al);
  note_run_start(al, source_find(al, key), p->time_ns / 1000000000LL);
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
  ps_alert_set(&ev.source, source);
  ps_alert_set(&ev.run, run);
  ps_alert_set(&ev.revision, tag_of(p, "revision"));
  ps_alert_set(&ev.status, status);
  ev.text = field_str(p, "text");
  if (!ev.text || !ev.text[0]) {
    free(ev.text);
    ev.text = NULL;
    if (asprintf(&ev.text, "%s %s", run, status) < 0)
      ev.text = NULL;
  }
  ps_alert_id(ev.id, kind, source, run, p->time_ns);
  if (!ev.source || !ev.run || !ev.text) {
    ps_alert_event_free(&ev);
    return;
  }
  raise_event(al, &ev, run, field_bool(p, "backfill"), p->time_ns);
}

static void group_free(pl_verdict_group *g) {
  free(g->source);
  free(g->series);
  free(g->run);
  free(g->revision);
  ps_alert_event_free(&g->metrics);
  free(g);
}

static void flush_groups(pl_alerting *al) {
  pl_verdict_group *g = al->groups;
  al->groups = NULL;
  while (g) {
    pl_verdict_group *next = g->next;
    pl_alert_verdicts v = {g->source, g->series,  g->run, g->revision, g->time_ns,
                           g->backfill, g->metrics.metrics, g->metrics.nmetrics};
    pl_alerting_verdicts(al, &v);
    group_free(g);
    g = next;
  }
}

static void gather_cb(uv_timer_t *t) { flush_groups(t->data); }

/* A perfship_verdict point a source gave: gathered per run for a moment. */
static void on_verdict_point(pl_alerting *al, const ps_point *p) {
  char *verdict = field_str(p, "verdict");
  int improvement = verdict && strcmp(verdict, "improvement") == 0;
  int regression = verdict && strcmp(verdict, "regression") == 0;
  free(verdict);
  const char *source = tag_of(p, "source"), *run = tag_of(p, "run");
  const char *metric = tag_of(p, "metric");
  char *method = field_str(p, "method");
  int stage_drift = method && strcmp(method, "stage_drift") == 0;
  free(method);
  if ((!improvement && !regression) || stage_drift || !source || !run || !metric)
    return;
  pl_verdict_group *g = al->groups;
  while (g && !(g->time_ns == p->time_ns && !strcmp(g->run, run) && !strcmp(g->source, source)))
    g = g->next;
  if (!g) {
    if (!(g = calloc(1, sizeof *g)))
      return;
    g->time_ns = p->time_ns;
    g->backfill = field_bool(p, "backfill");
    g->revision = field_str(p, "revision");
    if (ps_alert_set(&g->source, source) || ps_alert_set(&g->run, run) ||
        ps_alert_set(&g->series, tag_of(p, "series"))) {
      group_free(g);
      return;
    }
    g->next = al->groups;
    al->groups = g;
  }
  char *change_run = field_str(p, "change_run");
  ps_alert_metric m = {
      .metric = (char *)metric,
      .stage = (char *)tag_of(p, "stage"),
      .arm = (char *)tag_of(p, "arm"),
      .reference = (char *)tag_of(p, "reference"),
      .change_run = change_run,
      .improvement = improvement,
  };
  m.have_value = field_num(p, "value", &m.value);
  m.have_baseline = field_num(p, "baseline", &m.baseline);
  m.have_change_pct = field_num(p, "change_pct", &m.change_pct);
  ps_alert_event_add_metric(&g->metrics, &m);
  free(change_run);
  if (!al->sh->once || !al->finished)
    uv_timer_start(&al->gather, gather_cb, GATHER_MS, 0);
  else
    flush_groups(al);
}

void pl_alerting_tap(pl_alerting *al, const ps_point *p, const ps_source_cfg *src,
                     const char *path) {
  (void)path;
  const char *m = p->measurement;
  if (m[0] == 'r' && strcmp(m, "runs") == 0)
    on_marker(al, p, src);
  else if (m[0] == 'p' && strcmp(m, "perfship_verdict") == 0)
    on_verdict_point(al, p);
}

void pl_alerting_verdicts(pl_alerting *al, const pl_alert_verdicts *v) {
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
    ps_alert_set(&ev.source, v->source);
    ps_alert_set(&ev.run, v->run);
    ps_alert_set(&ev.series, v->series);
    if (v->source && strcmp(v->source, PS_RUN_MARKER_SOURCE) == 0) /* its series is a test type */
      ps_alert_set(&ev.test_type, v->series);
    ps_alert_set(&ev.revision, v->revision);
    ps_alert_set(&ev.status, ps_alert_kind_name(kinds[dir]));
    ps_buf text;
    ps_buf_init(&text, 0);
    ps_alert_text_verdict(&text, &ev);
    ev.text = text.data;
    ps_alert_id(ev.id, kinds[dir], v->source, v->run, v->time_ns);
    if (!ev.source || !ev.run || !ev.text) {
      ps_alert_event_free(&ev);
      continue;
    }
    raise_event(al, &ev, v->run, v->backfill, v->time_ns);
  }
}

/* --- health and silence (the tick) --------------------------------------------- */

static void raise_agent(pl_alerting *al, ps_alert_kind kind, const char *status,
                        const char *id_part, int64_t since_s, char *text) {
  ps_alert_event ev;
  ps_alert_event_init(&ev, kind);
  ps_alert_set(&ev.source, "perfship");
  ps_alert_set(&ev.run, "agent");
  ps_alert_set(&ev.status, status);
  ev.text = text;
  ps_alert_id(ev.id, kind, "perfship", id_part, since_s * 1000000000LL);
  if (!ev.source || !ev.run || !ev.text) {
    ps_alert_event_free(&ev);
    return;
  }
  raise_event(al, &ev, "agent", 0, 0);
}

static void check_server(pl_alerting *al) {
  if (!al->dl)
    return;
  const ps_config *cfg = al->sh->cfg;
  const ps_sink_stats *ss = pl_delivery_sink_stats(al->dl);
  ps_alert_server_view view = {
      .now_ms = uv_now(al->sh->loop),
      .unreachable_since_ms = ss->unreachable_since_ms,
      .last_answer_ms = al->dl->last_answer_ms,
      .waiting = pl_delivery_waiting(al->dl),
      .inflight = al->dl->bt.inflight_count,
      .oldest_ms = pl_delivery_oldest_ms(al->dl),
  };
  uint64_t down = ps_alert_server_down_ms(&view);
  int64_t now = now_s(), since;
  ps_buf t;
  ps_buf_init(&t, 0);
  switch (ps_alert_health_server(&al->health, down, ss->batches_sent,
                                 cfg->alerts.unhealthy_after_s, now, &since)) {
  case PS_HEALTH_SERVER_DOWN:
    ps_alert_text_server(&t, cfg->influxdb.url, (int64_t)(down / 1000), 0, view.waiting);
    raise_agent(al, PS_ALERT_AGENT_UNHEALTHY, "unreachable", "agent", since, t.data);
    break;
  case PS_HEALTH_SERVER_BACK:
    ps_alert_text_server(&t, cfg->influxdb.url, now - since, 1, 0);
    raise_agent(al, PS_ALERT_AGENT_RECOVERED, "recovered", "agent", since, t.data);
    break;
  default:
    break;
  }
}

static void check_rejected(pl_alerting *al) {
  const pl_counters *n = &al->sh->n;
  uint64_t total = n->records_rejected + n->points_refused + n->server_rejected, fresh;
  int64_t now = now_s();
  ps_alert_health_change change = ps_alert_health_input(
      &al->health, total, al->sh->cfg->alerts.unhealthy_after_s, now, &fresh);
  if (change != PS_HEALTH_SAME)
    al->sh->state_dirty = 1;
  if (change == PS_HEALTH_INPUT_BAD) {
    const ps_state *st = al->commit->saved;
    ps_buf t;
    ps_buf_init(&t, 0);
    ps_alert_text_rejected(&t, fresh, st->nerrors ? st->errors[st->nerrors - 1] : NULL);
    raise_agent(al, PS_ALERT_AGENT_UNHEALTHY, "input_rejected", "agent input", now, t.data);
  } else if (change == PS_HEALTH_INPUT_CALM) {
    PS_INFO(MOD, "no input rejected for %" PRId64 " s; the next rejection alerts again",
            now - al->health.input_last_s);
  }
}

/* The backlog present at start was read and its runs judged. A run that
 * never counts as done (a server that does not acknowledge its markers)
 * holds this back for two rescans at most: every folder was judged by
 * then, and a silence must not go unsaid because of one stuck run. */
static int backlog_done(pl_alerting *al) {
  if (al->armed)
    return 1;
  size_t runs = 0, done = 0;
  if (al->runs)
    pl_runs_progress(al->runs, &runs, &done);
  uint64_t up = uv_now(al->sh->loop) - al->sh->start_ms;
  uint64_t bound = 2 * (uint64_t)al->sh->cfg->watch.rescan_interval_ms;
  if ((al->rd && !pl_reader_done(al->rd)) || (done < runs && up < bound))
    return 0;
  al->armed = 1;
  return 1;
}

/* Raises no_new_run where a silence is due; returns the nearest deadline
 * still ahead (unix seconds), or 0. */
static int64_t check_silence(pl_alerting *al) {
  sync_sources(al);
  if (!backlog_done(al))
    return 0;
  int64_t now = now_s(), nearest = 0;
  for (pl_alert_source *s = al->sources; s; s = s->next) {
    int64_t after = s->cfg ? silence_after(al, s) : 0, ref, due;
    if (!ps_alert_silence_check(&s->silence, after, now, &ref, &due)) {
      if (due && (!nearest || due < nearest))
        nearest = due;
      continue;
    }
    al->sh->state_dirty = 1;
    const ps_format_ops *ops = ops_of(s->cfg);
    const char *source = ops->run_source;
    ps_alert_event ev;
    ps_alert_event_init(&ev, PS_ALERT_NO_NEW_RUN);
    ps_alert_set(&ev.source, source);
    ps_alert_set(&ev.run, s->cfg->path);
    ps_buf t;
    ps_buf_init(&t, 0);
    ps_alert_text_no_new_run(&t, ops->run_title ? ops->run_title : source, s->cfg->path,
                             now - ref, s->silence.last_start_s, s->silence.watching_since_s);
    ev.text = t.data;
    ps_alert_id(ev.id, PS_ALERT_NO_NEW_RUN, source, s->cfg->path, ref * 1000000000LL);
    if (!ev.source || !ev.run || !ev.text) {
      ps_alert_event_free(&ev);
      continue;
    }
    raise_event(al, &ev, s->cfg->path, 0, 0);
  }
  return nearest;
}

static void tick_cb(uv_timer_t *t);

static void schedule_tick(pl_alerting *al, int64_t nearest_s) {
  if (al->sh->stopping)
    return;
  uint64_t wait = (uint64_t)al->sh->cfg->alerts.unhealthy_after_s * 1000 / 4;
  if (!al->armed)
    wait = TICK_MIN_MS * 4; /* waiting for the backlog: look again soon */
  if (nearest_s) {
    int64_t until = (nearest_s - now_s()) * 1000 + 100;
    if (until < (int64_t)wait)
      wait = until > 0 ? (uint64_t)until : 0;
  }
  if (wait < TICK_MIN_MS)
    wait = TICK_MIN_MS;
  if (wait > TICK_MAX_MS)
    wait = TICK_MAX_MS;
  uv_timer_start(&al->tick, tick_cb, wait, 0);
}

static void reschedule(pl_alerting *al) {
  if (!al->sh->once && !al->held && !uv_is_closing((uv_handle_t *)&al->tick))
    schedule_tick(al, check_silence(al));
}

static void tick_cb(uv_timer_t *t) {
  pl_alerting *al = t->data;
  check_server(al);
  if (!al->sh->once)
    check_rejected(al); /* --once: at the end, in one event */
  int64_t nearest = al->sh->once ? 0 : check_silence(al);
  if (++al->ticks % 64 == 0) {
    int64_t now = now_ns();
    ps_alert_throttle_prune(&al->throttle, now, al->sh->cfg->alerts.min_interval_s);
    ps_alert_ledger_prune(&al->ledger, now / 1000000000LL, LEDGER_KEEP_S);
  }
  if (al->sh->state_dirty)
    pl_commit_moved(al->commit);
  schedule_tick(al, nearest);
}

/* --- channels -------------------------------------------------------------------- */

typedef struct point_job {
  ps_alert_done_cb done;
  void *arg;
} point_job;

static void point_done(void *arg, int acked) {
  point_job *j = arg;
  ps_alert_answer a = {.delivered = acked};
  snprintf(a.text, sizeof a.text, "%s", acked ? "stored" : "not acknowledged");
  j->done(j->arg, &a);
  free(j);
}

/* The perfship_alert point (docs/schema.md "Alerts"). */
static int point_send(void *ctx, const ps_alert_event *ev, ps_alert_done_cb done, void *arg) {
  pl_alerting *al = ctx;
  if (al->sh->stopping == 2)
    return -ECANCELED;
  ps_tag tags[2] = {{"event", ps_alert_kind_name(ev->kind)}, {"source", ev->source}};
  ps_field fields[3] = {ps_field_string("run", ev->run, strlen(ev->run)),
                        ps_field_string("text", ev->text, strlen(ev->text)),
                        ps_field_string("id", ev->id, strlen(ev->id))};
  ps_point p = {"perfship_alert", tags, 2, fields, 3, ev->time_ns};
  static const ps_origin origin = {"perfship alerts", 0};
  ps_pbatch *b = ps_pbatch_new();
  point_job *j = malloc(sizeof *j);
  const char *reason = NULL;
  int rc = b && j ? al->out.encode(al->out.ctx, b, &p, &origin, &reason) : -ENOMEM;
  if (rc == 0) {
    j->done = done;
    j->arg = arg;
    rc = al->out.send(al->out.ctx, b, point_done, j);
  } else if (reason) {
    PS_ERROR(MOD, "%s: the perfship_alert point was refused: %s", ev->id, reason);
  }
  if (rc < 0) {
    ps_pbatch_free(b);
    free(j);
  }
  return rc;
}

static void on_answered(void *ctx, const ps_alert_channel *ch, const ps_alert_event *ev,
                        const ps_alert_answer *a) {
  pl_alerting *al = ctx;
  const char *name = ps_alert_kind_name(ev->kind);
  if (a->delivered) {
    PS_INFO(MOD, "%s %s delivered by %s: %s", name, ev->id, ch->name, a->text);
    return;
  }
  al->sh->n.alerts_failed++;
  char key[64];
  snprintf(key, sizeof key, "alerts %s", ch->name);
  ps_log_limited(strcmp(ch->name, "influxdb") ? PS_LOG_WARNING : PS_LOG_DEBUG, MOD, key, 60,
                 "%s %s not delivered by %s: %s%s", name, ev->id, ch->name, a->text,
                 al->sh->once ? "; kept for the next start" : "; it will be tried again");
}

static void on_changed(void *ctx) {
  pl_alerting *al = ctx;
  al->sh->n.alerts_pending = al->box.n;
  pl_commit_moved(al->commit);
}

static void on_settled(void *ctx) {
  pl_alerting *al = ctx;
  if (al->hooks.settled)
    al->hooks.settled(al->hooks.ctx);
}

int pl_alerting_init(pl_alerting *al, pl_shared *sh, pl_delivery *dl, pl_reader *rd,
                     pl_runs *runs, pl_commit *commit, const pl_aux_out *out,
                     const pl_alerting_hooks *hooks) {
  memset(al, 0, sizeof *al);
  al->sh = sh;
  al->dl = dl;
  al->rd = rd;
  al->runs = runs;
  al->commit = commit;
  al->out = *out;
  if (hooks)
    al->hooks = *hooks;
  const ps_config *cfg = sh->cfg;
  int rc = 0;
  if (cfg->alerts.nexec)
    rc = ps_alert_exec_new(&al->exec, sh->loop, cfg->alerts.exec, cfg->alerts.nexec,
                           cfg->alerts.exec_timeout_ms);
  const char *url = ps_config_webhook_url(cfg);
  if (rc == 0 && url)
    rc = ps_alert_webhook_new(&al->webhook, sh->loop, url, cfg->alerts.webhook.tls_ca_file,
                              cfg->alerts.webhook.format, cfg->alerts.webhook.timeout_ms);
  if (rc < 0) {
    ps_alert_exec_close(al->exec);
    ps_alert_webhook_close(al->webhook);
    al->exec = NULL;
    al->webhook = NULL;
    return rc;
  }
  ps_alert_channel chans[NCHANNELS] = {
      {channel_names[CH_EXEC], al->exec ? ps_alert_exec_send : NULL, al->exec},
      {channel_names[CH_WEBHOOK], al->webhook ? ps_alert_webhook_send : NULL, al->webhook},
      {channel_names[CH_INFLUX], point_send, al},
  };
  ps_outbox_init(&al->box, channel_names, NCHANNELS, PS_OUTBOX_MAX);
  ps_alert_dispatch_hooks dh = {on_answered, on_changed, on_settled, al};
  ps_alert_dispatch_init(&al->dispatch, sh->loop, &al->box, chans, NCHANNELS, sh->once, &dh);
  ps_alert_throttle_init(&al->throttle);
  ps_alert_ledger_init(&al->ledger);
  uv_timer_init(sh->loop, &al->tick);
  uv_timer_init(sh->loop, &al->gather);
  al->tick.data = al->gather.data = al;
  al->armed = !rd && !runs;
  return 0;
}

/* --- memory ------------------------------------------------------------------------- */

static double num_or(const cJSON *o, const char *key, double dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) && isfinite(v->valuedouble) && fabs(v->valuedouble) < 1e15
             ? v->valuedouble
             : dflt;
}

void pl_alerting_from_json(pl_alerting *al, const char *text) {
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return;
  }
  size_t skipped = 0;
  ps_outbox_from_cjson(&al->box, cJSON_GetObjectItemCaseSensitive(root, "outbox"),
                       ps_alert_now_ms(), &skipped);
  size_t gone = ps_outbox_keep_channels(&al->box, channels_live(al));
  if (skipped || gone)
    PS_WARN(MOD, "%zu undelivered events of the state file dropped (%zu unreadable, %zu for "
                 "channels no longer configured)",
            skipped + gone, skipped, gone);
  ps_alert_throttle_from_cjson(&al->throttle,
                               cJSON_GetObjectItemCaseSensitive(root, "throttle"));
  ps_alert_ledger_from_cjson(&al->ledger, cJSON_GetObjectItemCaseSensitive(root, "seen"));
  const cJSON *o;
  cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(root, "sources")) {
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
    if (!cJSON_IsString(key) || source_find(al, key->valuestring))
      continue;
    pl_alert_source *s = source_add(al, key->valuestring, (int64_t)num_or(o, "since", 0));
    if (!s)
      break;
    s->silence.last_start_s = (int64_t)num_or(o, "last_start", 0);
    s->silence.said_for_s = (int64_t)num_or(o, "fired", 0);
  }
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(root, "health");
  al->health.server_since_s = (int64_t)num_or(h, "server_since", 0);
  al->health.input_since_s = (int64_t)num_or(h, "input_since", 0);
  al->health.input_last_s = (int64_t)num_or(h, "input_last", 0);
  al->sh->n.alerts_pending = al->box.n;
  cJSON_Delete(root);
}

char *pl_alerting_to_json(pl_alerting *al) {
  cJSON *root = cJSON_CreateObject();
  if (!root)
    return NULL;
  cJSON_AddItemToObject(root, "outbox", ps_outbox_to_cjson(&al->box));
  cJSON_AddItemToObject(root, "throttle", ps_alert_throttle_to_cjson(&al->throttle));
  cJSON_AddItemToObject(root, "seen", ps_alert_ledger_to_cjson(&al->ledger));
  cJSON *srcs = cJSON_AddArrayToObject(root, "sources");
  for (pl_alert_source *s = al->sources; srcs && s; s = s->next) {
    if (!s->cfg)
      continue; /* no longer configured */
    cJSON *o = cJSON_CreateObject();
    if (!o)
      break;
    cJSON_AddStringToObject(o, "key", s->key);
    cJSON_AddNumberToObject(o, "since", (double)s->silence.watching_since_s);
    cJSON_AddNumberToObject(o, "last_start", (double)s->silence.last_start_s);
    cJSON_AddNumberToObject(o, "fired", (double)s->silence.said_for_s);
    cJSON_AddItemToArray(srcs, o);
  }
  cJSON *h = cJSON_AddObjectToObject(root, "health");
  if (h) {
    cJSON_AddNumberToObject(h, "server_since", (double)al->health.server_since_s);
    cJSON_AddNumberToObject(h, "input_since", (double)al->health.input_since_s);
    cJSON_AddNumberToObject(h, "input_last", (double)al->health.input_last_s);
  }
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return text;
}

/* --- start and end ---------------------------------------------------------------- */

void pl_alerting_start(pl_alerting *al) {
  sync_sources(al);
  if (al->box.n)
    PS_INFO(MOD, "%zu events from an earlier start wait to be delivered; sending them",
            al->box.n);
  ps_alert_dispatch_kick(&al->dispatch);
  schedule_tick(al, al->sh->once ? 0 : check_silence(al));
}

void pl_alerting_finish(pl_alerting *al) {
  if (al->finished)
    return;
  al->finished = 1;
  uv_timer_stop(&al->gather);
  flush_groups(al);
  check_rejected(al);
  al->armed = 1; /* everything present was read: silence is silence */
  check_silence(al);
  ps_alert_dispatch_kick(&al->dispatch);
}

int pl_alerting_done(const pl_alerting *al) {
  return !al->groups && ps_alert_dispatch_pending(&al->dispatch, ~0u) == 0;
}

int pl_alerting_undelivered(const pl_alerting *al) {
  return ps_alert_dispatch_failed(&al->dispatch, PEOPLE) > 0;
}

void pl_alerting_hold(pl_alerting *al) {
  al->held = 1;
  ps_alert_dispatch_hold(&al->dispatch);
  uv_timer_stop(&al->tick);
}

size_t pl_alerting_busy(const pl_alerting *al) { return ps_alert_dispatch_busy(&al->dispatch); }

void pl_alerting_close(pl_alerting *al) {
  uv_handle_t *hs[] = {(uv_handle_t *)&al->tick, (uv_handle_t *)&al->gather};
  for (size_t i = 0; i < 2; i++)
    if (!uv_is_closing(hs[i]))
      uv_close(hs[i], NULL);
  ps_alert_dispatch_close(&al->dispatch);
  ps_alert_exec_close(al->exec);
  ps_alert_webhook_close(al->webhook);
  al->exec = NULL;
  al->webhook = NULL;
}

void pl_alerting_free(pl_alerting *al) {
  ps_outbox_free(&al->box);
  ps_alert_throttle_free(&al->throttle);
  ps_alert_ledger_free(&al->ledger);
  for (pl_alert_source *s = al->sources, *next; s; s = next) {
    next = s->next;
    free(s->key);
    free(s);
  }
  al->sources = NULL;
  for (pl_verdict_group *g = al->groups, *next; g; g = next) {
    next = g->next;
    group_free(g);
  }
  al->groups = NULL;
}

void pl_alerting_judged(pl_alerting *al, const pl_run_verdicts *rv) {
  ps_alert_metric *m = calloc(rv->n ? rv->n : 1, sizeof *m);
  char (*stages)[24] = calloc(rv->n ? rv->n : 1, sizeof *stages);
  size_t n = 0;
  for (size_t i = 0; m && stages && i < rv->n; i++) {
    const ps_verdict *v = &rv->v[i];
    /* Stage drift is expected of a long run (docs/verdicts.md): it is a
     * verdict on the dashboards and the report, not a page every night. */
    if (v->verdict == PS_VERDICT_NONE || v->method == PS_METHOD_STAGE_DRIFT)
      continue;
    double pct = ps_verdict_change_pct(v->value, v->baseline);
    if (v->stage >= 0)
      snprintf(stages[n], sizeof stages[n], "%d", v->stage);
    m[n] = (ps_alert_metric){
        .metric = (char *)v->metric,
        .stage = v->stage >= 0 ? stages[n] : NULL,
        .arm = (char *)v->arm,
        .reference = (char *)v->reference,
        .change_run = v->change_run && strcmp(v->change_run, v->run) ? (char *)v->change_run
                                                                      : NULL,
        .improvement = v->verdict == PS_VERDICT_IMPROVEMENT,
        .have_value = !isnan(v->value),
        .have_baseline = !isnan(v->baseline),
        .have_change_pct = !isnan(pct),
        .value = v->value,
        .baseline = v->baseline,
        .change_pct = pct,
    };
    n++;
  }
  if (n) {
    pl_alert_verdicts av = {rv->source, rv->series, rv->run, rv->revision, rv->time_ns,
                            rv->backfill, m, n};
    pl_alerting_verdicts(al, &av);
  }
  free(m);
  free(stages);
}
