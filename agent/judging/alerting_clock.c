/*
 * alerting_clock.c: no_new_run and the agent's health, on a timer. See
 * include/judging/alerting_clock.h and docs/alerts.md.
 *
 * Design
 * - The rules are alert/'s (silence.h, health.h); this file gathers what
 *   they judge (the sources as configured, the sink's statistics, the
 *   shared counters), says what they decide in words (alert/text.h), and
 *   keeps the timer.
 * - One timer (`tick`) judges the sink's health, rejected input and the
 *   sources' silence; it wakes at the nearest no_new_run deadline or a
 *   fraction of unhealthy_after_s, whichever comes first.
 */
#include "judging/alerting_clock.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "alert/silence.h"
#include "alert/text.h"
#include "core/log.h"
#include "formats/format.h"
#include "state/state.h"

#define MOD "alerts"
#define TICK_MIN_MS 250
#define TICK_MAX_MS 30000
#define PRUNE_EVERY_TICKS 64

struct jd_alerting_clock_source {
  jd_alerting_clock_source *next;
  char *key; /* "loadgen:/srv/loadgen/results" */
  ps_alert_silence silence;
  const ps_source_cfg *cfg; /* in the current configuration, else NULL */
};

static int64_t now_s(void) { return (int64_t)time(NULL); }

/* --- sources ---------------------------------------------------------------------- */

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

static jd_alerting_clock_source *source_find(jd_alerting_clock *c, const char *key) {
  for (jd_alerting_clock_source *s = c->sources; s; s = s->next)
    if (strcmp(s->key, key) == 0)
      return s;
  return NULL;
}

static jd_alerting_clock_source *source_add(jd_alerting_clock *c, const char *key, int64_t since) {
  jd_alerting_clock_source *s = calloc(1, sizeof *s);
  if (!s || !(s->key = strdup(key))) {
    free(s);
    return NULL;
  }
  s->silence.watching_since_s = since;
  s->next = c->sources;
  c->sources = s;
  return s;
}

/* Matches the sources to the current configuration (it may have been
 * reloaded): new ones start being watched now. */
static void sync_sources(jd_alerting_clock *c) {
  for (jd_alerting_clock_source *s = c->sources; s; s = s->next)
    s->cfg = NULL;
  const ps_config *cfg = c->sh->cfg;
  for (size_t i = 0; i < cfg->nsources; i++) {
    const ps_source_cfg *src = &cfg->sources[i];
    if (!ops_of(src)->run_source)
      continue; /* its files are not runs: no run is expected of it */
    char key[4200];
    source_key(key, sizeof key, src);
    jd_alerting_clock_source *s = source_find(c, key);
    if (!s && !(s = source_add(c, key, now_s())))
      continue;
    if (!s->cfg)
      s->cfg = src;
  }
}

static int64_t silence_after(const jd_alerting_clock *c, const jd_alerting_clock_source *s) {
  if (s->cfg && s->cfg->no_new_run_after_s >= 0)
    return s->cfg->no_new_run_after_s;
  return c->sh->cfg->alerts.no_new_run_after_s;
}

/* --- health ----------------------------------------------------------------------- */

static void raise_agent(jd_alerting_clock *c, ps_alert_kind kind, const char *status,
                        const char *id_part, int64_t since_s, char *text) {
  ps_alert_event ev;
  ps_alert_event_init(&ev, kind);
  ps_alert_set(&ev.source, "perfship");
  ps_alert_set(&ev.run, "agent");
  ps_alert_set(&ev.status, status);
  ev.text = text;
  char host[256];
  ps_alert_id(ev.id, kind, ps_config_host(c->sh->cfg, host, sizeof host), "perfship", id_part,
              since_s * 1000000000LL);
  if (!ev.source || !ev.run || !ev.text) {
    ps_alert_event_free(&ev);
    return;
  }
  jd_alerting_raise(c->raiser, &ev, "agent", 0, 0);
}

static void check_server(jd_alerting_clock *c) {
  if (!c->dl)
    return;
  const ps_config *cfg = c->sh->cfg;
  const ps_sink_stats *ss = pl_delivery_sink_stats(c->dl);
  ps_alert_server_view view = {
      .now_ms = uv_now(c->sh->loop),
      .unreachable_since_ms = ss->unreachable_since_ms,
      .last_answer_ms = c->dl->last_answer_ms,
      .waiting = pl_delivery_waiting(c->dl),
      .inflight = c->dl->bt.inflight_count,
      .oldest_ms = pl_delivery_oldest_ms(c->dl),
  };
  uint64_t down = ps_alert_server_down_ms(&view);
  int64_t now = now_s(), since;
  ps_buf t;
  ps_buf_init(&t, 0);
  switch (ps_alert_health_server(&c->health, down, ss->batches_sent,
                                 cfg->alerts.unhealthy_after_s, now, &since)) {
  case PS_HEALTH_SERVER_DOWN:
    ps_alert_text_server(&t, cfg->influxdb.url, (int64_t)(down / 1000), 0, view.waiting);
    raise_agent(c, PS_ALERT_AGENT_UNHEALTHY, "unreachable", "agent", since, t.data);
    break;
  case PS_HEALTH_SERVER_BACK:
    ps_alert_text_server(&t, cfg->influxdb.url, now - since, 1, 0);
    raise_agent(c, PS_ALERT_AGENT_RECOVERED, "recovered", "agent", since, t.data);
    break;
  default:
    break;
  }
}

static void check_rejected(jd_alerting_clock *c) {
  const pl_counters *n = &c->sh->n;
  uint64_t total = n->records_rejected + n->points_refused + n->server_rejected, fresh;
  int64_t now = now_s();
  ps_alert_health_change change = ps_alert_health_input(
      &c->health, total, c->sh->cfg->alerts.unhealthy_after_s, now, &fresh);
  if (change != PS_HEALTH_SAME)
    c->sh->state_dirty = 1;
  if (change == PS_HEALTH_INPUT_BAD) {
    const ps_state *st = c->commit->saved;
    ps_buf t;
    ps_buf_init(&t, 0);
    ps_alert_text_rejected(&t, fresh, st->nerrors ? st->errors[st->nerrors - 1] : NULL);
    raise_agent(c, PS_ALERT_AGENT_UNHEALTHY, "input_rejected", "agent input", now, t.data);
  } else if (change == PS_HEALTH_INPUT_CALM) {
    PS_INFO(MOD, "no input rejected for %" PRId64 " s; the next rejection alerts again",
            now - c->health.input_last_s);
  }
}

/* --- silence ---------------------------------------------------------------------- */

/* The backlog present at start was read and its runs judged. A run that
 * never counts as done (a server that does not acknowledge its markers)
 * holds this back for two rescans at most: every folder was judged by
 * then, and a silence must not go unsaid because of one stuck run. */
static int backlog_done(jd_alerting_clock *c) {
  if (c->armed)
    return 1;
  size_t runs = 0, done = 0;
  if (c->runs)
    pl_runs_progress(c->runs, &runs, &done);
  uint64_t up = uv_now(c->sh->loop) - c->sh->start_ms;
  uint64_t bound = 2 * (uint64_t)c->sh->cfg->watch.rescan_interval_ms;
  if ((c->rd && !pl_reader_done(c->rd)) || (done < runs && up < bound))
    return 0;
  c->armed = 1;
  return 1;
}

/* Raises no_new_run where a silence is due; returns the nearest deadline
 * still ahead (unix seconds), or 0. */
static int64_t check_silence(jd_alerting_clock *c) {
  sync_sources(c);
  if (!backlog_done(c))
    return 0;
  int64_t now = now_s(), nearest = 0;
  for (jd_alerting_clock_source *s = c->sources; s; s = s->next) {
    int64_t after = s->cfg ? silence_after(c, s) : 0, began, due;
    if (!ps_alert_silence_check(&s->silence, after, now, &began, &due)) {
      if (due && (!nearest || due < nearest))
        nearest = due;
      continue;
    }
    c->sh->state_dirty = 1;
    const ps_format_ops *ops = ops_of(s->cfg);
    const char *source = ops->run_source;
    ps_alert_event ev;
    ps_alert_event_init(&ev, PS_ALERT_NO_NEW_RUN);
    ps_alert_set(&ev.source, source);
    ps_alert_set(&ev.run, s->cfg->path);
    ps_buf t;
    ps_buf_init(&t, 0);
    ps_alert_text_no_new_run(&t, ops->run_title ? ops->run_title : source, s->cfg->path,
                             now - began, s->silence.last_start_s,
                             s->silence.watching_since_s);
    ev.text = t.data;
    char host[256];
    ps_alert_id(ev.id, PS_ALERT_NO_NEW_RUN, ps_config_host(c->sh->cfg, host, sizeof host),
                source, s->cfg->path, began * 1000000000LL);
    if (!ev.source || !ev.run || !ev.text) {
      ps_alert_event_free(&ev);
      continue;
    }
    jd_alerting_raise(c->raiser, &ev, s->cfg->path, 0, 0);
  }
  return nearest;
}

/* --- the timer -------------------------------------------------------------------- */

static void tick_cb(uv_timer_t *t);

static void schedule_tick(jd_alerting_clock *c, int64_t nearest_s) {
  if (c->sh->stopping)
    return;
  uint64_t wait = (uint64_t)c->sh->cfg->alerts.unhealthy_after_s * 1000 / 4;
  if (!c->armed)
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
  uv_timer_start(&c->tick, tick_cb, wait, 0);
}

static void reschedule(jd_alerting_clock *c) {
  if (!c->sh->once && !c->held && !uv_is_closing((uv_handle_t *)&c->tick))
    schedule_tick(c, check_silence(c));
}

static void tick_cb(uv_timer_t *t) {
  jd_alerting_clock *c = t->data;
  check_server(c);
  if (!c->sh->once)
    check_rejected(c); /* --once: at the end, in one event */
  int64_t nearest = c->sh->once ? 0 : check_silence(c);
  if (++c->ticks % PRUNE_EVERY_TICKS == 0)
    jd_alerting_raise_prune(c->raiser);
  if (c->sh->state_dirty)
    pl_commit_moved(c->commit);
  schedule_tick(c, nearest);
}

/* --- runs started ------------------------------------------------------------------ */

/* A new silence begins: the tick is moved to its deadline. */
static void note_run_start(jd_alerting_clock *c, jd_alerting_clock_source *s, int64_t start_s) {
  if (!s || !ps_alert_silence_run_started(&s->silence, start_s))
    return;
  c->sh->state_dirty = 1;
  pl_commit_moved(c->commit);
  reschedule(c);
}

void jd_alerting_clock_run_started(jd_alerting_clock *c, const ps_source_cfg *src,
                                   int64_t start_s) {
  char key[4200];
  source_key(key, sizeof key, src);
  sync_sources(c);
  note_run_start(c, source_find(c, key), start_s);
}

void jd_alerting_clock_run_started_in(jd_alerting_clock *c, const char *folder, int64_t start_s) {
  sync_sources(c);
  for (jd_alerting_clock_source *s = c->sources; s; s = s->next) {
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
    if (ps_path_under(folder, base)) {
      note_run_start(c, s, start_s);
      return;
    }
  }
}

/* --- memory ------------------------------------------------------------------------- */

static double num_or(const cJSON *o, const char *key, double dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) && isfinite(v->valuedouble) && fabs(v->valuedouble) < 1e15
             ? v->valuedouble
             : dflt;
}

void jd_alerting_clock_from_cjson(jd_alerting_clock *c, const cJSON *section, ps_alert_recall *r) {
  ps_alert_recall ignored = {0};
  if (!r)
    r = &ignored;
  /* The agent saves its sources newest first (source_add puts a new one in
   * front), so the first JD_ALERTING_CLOCK_SOURCES_MAX are the ones kept; the count
   * bounds the searches for repeats (source_find walks the list). */
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(section, "sources");
  if (list && !cJSON_IsArray(list))
    r->wrong_type = cJSON_IsString(list) ? "a string" : cJSON_IsNumber(list) ? "a number"
                    : cJSON_IsObject(list) ? "an object" : "not a list";
  size_t kept = 0;
  const cJSON *o;
  const cJSON *arr = cJSON_IsArray(list) ? list : NULL;
  cJSON_ArrayForEach(o, arr) {
    if (kept == JD_ALERTING_CLOCK_SOURCES_MAX) {
      r->over++;
      continue;
    }
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
    if (!cJSON_IsString(key) || !key->valuestring[0]) {
      r->bad++;
      continue;
    }
    if (source_find(c, key->valuestring))
      continue;
    jd_alerting_clock_source *s = source_add(c, key->valuestring, (int64_t)num_or(o, "since", 0));
    if (!s)
      break;
    kept++;
    s->silence.last_start_s = (int64_t)num_or(o, "last_start", 0);
    s->silence.said_for_s = (int64_t)num_or(o, "fired", 0);
  }
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(section, "health");
  c->health.server_since_s = (int64_t)num_or(h, "server_since", 0);
  c->health.input_since_s = (int64_t)num_or(h, "input_since", 0);
  c->health.input_last_s = (int64_t)num_or(h, "input_last", 0);
}

size_t jd_alerting_clock_nsources(const jd_alerting_clock *c) {
  size_t n = 0;
  for (const jd_alerting_clock_source *s = c->sources; s; s = s->next)
    n++;
  return n;
}

void jd_alerting_clock_to_cjson(jd_alerting_clock *c, cJSON *section) {
  cJSON *srcs = cJSON_AddArrayToObject(section, "sources");
  for (jd_alerting_clock_source *s = c->sources; srcs && s; s = s->next) {
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
  cJSON *h = cJSON_AddObjectToObject(section, "health");
  if (h) {
    cJSON_AddNumberToObject(h, "server_since", (double)c->health.server_since_s);
    cJSON_AddNumberToObject(h, "input_since", (double)c->health.input_since_s);
    cJSON_AddNumberToObject(h, "input_last", (double)c->health.input_last_s);
  }
}

/* --- start and end ---------------------------------------------------------------- */

void jd_alerting_clock_init(jd_alerting_clock *c, pl_shared *sh, jd_alerting_raiser *raiser,
                            pl_delivery *dl, pl_reader *rd, pl_runs *runs, pl_commit *commit) {
  memset(c, 0, sizeof *c);
  c->sh = sh;
  c->raiser = raiser;
  c->dl = dl;
  c->rd = rd;
  c->runs = runs;
  c->commit = commit;
  uv_timer_init(sh->loop, &c->tick);
  c->tick.data = c;
  c->armed = !rd && !runs;
}

void jd_alerting_clock_start(jd_alerting_clock *c) {
  sync_sources(c);
  schedule_tick(c, c->sh->once ? 0 : check_silence(c));
}

void jd_alerting_clock_finish(jd_alerting_clock *c) {
  check_rejected(c);
  c->armed = 1; /* everything present was read: silence is silence */
  check_silence(c);
}

void jd_alerting_clock_hold(jd_alerting_clock *c) {
  c->held = 1;
  uv_timer_stop(&c->tick);
}

void jd_alerting_clock_close(jd_alerting_clock *c) {
  if (!uv_is_closing((uv_handle_t *)&c->tick))
    uv_close((uv_handle_t *)&c->tick, NULL);
}

void jd_alerting_clock_free(jd_alerting_clock *c) {
  for (jd_alerting_clock_source *s = c->sources, *next; s; s = next) {
    next = s->next;
    free(s->key);
    free(s);
  }
  c->sources = NULL;
}
