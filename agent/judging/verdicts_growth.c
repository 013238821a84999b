/*
 * verdicts_growth.c: a loadgen stage's kernel growth per cycle judged
 * against verdicts.max_growth_per_cycle when its complete slog point is
 * written (docs/verdicts.md, "Kernel growth against a limit"). See
 * include/judging/verdicts.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/figures.h"
#include "core/log.h"
#include "verdict/growth_limit.h"
#include "verdicts_private.h"

#define LOADGEN JD_VERDICTS_LOADGEN

/* A stage's kernel growth is judged when its complete point is written:
 * it needs no history, and the growth comes after the run's end anyway
 * (the finished cycles are in perf-finish). A stage judged before its
 * run's end was known waits for it, so that the verdict says `backfill` as
 * the run's markers do whatever the order the folders were read in (the
 * run's end comes from the same read). The same stage point gives the same
 * verdict points (docs/verdicts.md, "Kernel growth against a limit"). */

static void held_free(jd_vgrowth *w) {
  free(w->run);
  free(w->series);
  free(w->revision);
  free(w);
}

static int fold_into_run(jd_verdicts *vd, const ps_growth_stage *g);

static ps_ledger_run *run_of(jd_verdicts *vd, const char *series, const char *run) {
  ps_ledger_series *s = ps_ledger_series_get(&vd->ledger, LOADGEN, series, vd->series_host, 0);
  long at = s ? ps_ledger_find(s, vd->host, run) : -1;
  return at >= 0 ? &s->runs[at] : NULL;
}

/* One stage not kept (held list full): judged now rather than never. */
static void send_unkept(jd_verdicts *vd, ps_growth_stage *g, int backfill) {
  jd_vpass *pass = calloc(1, sizeof *pass);
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  if (!pass)
    return;
  g->backfill = backfill;
  pass->kind = PASS_LIMIT;
  if (ps_growth_limit(&vd->cfg->verdicts, g, &l) < 0)
    pass->failed = 1;
  vd->driver->send(vd, pass, &l);
  ps_verdict_list_free(&l);
}

/* The held stages of known runs not yet out (of `run` only, or all: NULL)
 * go in one pass: a backfill's stages, one request each, were as many
 * requests as its slog stages, most of them one point. */
static void send_unsent(jd_verdicts *vd, const char *run) {
  size_t n = 0;
  for (jd_vgrowth *w = vd->growth.held; w; w = w->next)
    n += !w->sent && (!run || strcmp(w->run, run) == 0) && run_of(vd, w->series, w->run);
  if (!n)
    return; /* nothing, or only stages whose runs' ends are not known yet */
  jd_vpass *pass = calloc(1, sizeof *pass);
  uint64_t *seqs = calloc(n, sizeof *seqs);
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  if (!pass || !seqs) {
    free(pass);
    free(seqs);
    return; /* sent at a later look */
  }
  pass->kind = PASS_LIMIT;
  pass->growth_seqs = seqs;
  for (jd_vgrowth *w = vd->growth.held; w; w = w->next) {
    ps_ledger_run *r = w->sent || (run && strcmp(w->run, run) != 0) ? NULL
                                                                    : run_of(vd, w->series, w->run);
    if (!r)
      continue;
    w->g.backfill = r->backfill;
    w->sent = 1;
    seqs[pass->ngrowth++] = w->seq;
    if (ps_growth_limit(&vd->cfg->verdicts, &w->g, &l) < 0)
      pass->failed = 1;
  }
  vd->driver->send(vd, pass, &l);
  ps_verdict_list_free(&l);
}

/* While the slog reader has stages to read, a backfill's stages come
 * tens of milliseconds apart: their verdicts wait (at most
 * GROWTH_WAIT_MAX_MS) to go together, the reader's idle hook sending
 * them (jd_verdicts_slogs_idle). */
#define GROWTH_WAIT_MAX_MS 30000

static int wait_for_more(jd_verdicts *vd) {
  if (!vd->hooks.slogs_busy || !vd->hooks.slogs_busy(vd->hooks.ctx))
    return 0;
  uint64_t now = uv_now(vd->sh->loop);
  for (jd_vgrowth *w = vd->growth.held; w; w = w->next)
    if (!w->sent && now - w->held_ms >= GROWTH_WAIT_MAX_MS)
      return 0;
  return 1;
}

static void unlink_held(jd_vgrowth_state *gs, jd_vgrowth **pp) {
  jd_vgrowth *w = *pp;
  *pp = w->next;
  gs->nheld--;
  held_free(w);
}

void jd_verdicts_growth_clear(jd_vgrowth_state *gs) {
  while (gs->held)
    unlink_held(gs, &gs->held);
}

/* Holds a copy of `g`, first, or last when read back from the state (the
 * list is saved in its order, and reading it must not turn it round); the
 * same stage again replaces the one held (a pass still out for it finds no
 * stage by its seq when it is answered). */
static jd_vgrowth *hold(jd_verdicts *vd, const ps_growth_stage *g, int last) {
  for (jd_vgrowth **pp = &vd->growth.held; *pp; pp = &(*pp)->next)
    if (strcmp((*pp)->run, g->run) == 0 && (*pp)->g.stage == g->stage) {
      unlink_held(&vd->growth, pp);
      vd->sh->state_dirty = 1;
      break;
    }
  if (vd->growth.nheld >= JD_VERDICTS_GROWTH_HELD_MAX) {
    ps_log_limited(PS_LOG_WARNING, JD_VERDICTS_MOD, "growth held", 3600,
                   "%zu slog stages wait for their runs' ends; %s stage %d is judged "
                   "without being kept for a restart",
                   vd->growth.nheld, g->run, g->stage);
    return NULL;
  }
  jd_vgrowth *w = calloc(1, sizeof *w);
  if (!w || !(w->run = strdup(g->run)) || !(w->series = strdup(g->series)) ||
      (g->revision && !(w->revision = strdup(g->revision)))) {
    if (w)
      held_free(w);
    return NULL;
  }
  w->g = *g;
  w->g.run = w->run;
  w->g.series = w->series;
  w->g.revision = w->revision;
  w->seq = ++vd->growth.seq;
  w->held_ms = uv_now(vd->sh->loop);
  jd_vgrowth **at = &vd->growth.held;
  while (last && *at)
    at = &(*at)->next;
  w->next = *at;
  *at = w;
  vd->growth.nheld++;
  vd->sh->state_dirty = 1;
  return w;
}

/* A pass with nothing to send is answered at once and lets its stage go:
 * the loops below keep the next stage before sending. */
int jd_verdicts_growth_run_ended(jd_verdicts *vd, const char *run) {
  int rejudged = 0;
  for (jd_vgrowth *w = vd->growth.held, *next; w; w = next) {
    next = w->next;
    if (strcmp(w->run, run) != 0)
      continue;
    rejudged |= fold_into_run(vd, &w->g);
  }
  send_unsent(vd, run);
  return rejudged;
}

void jd_verdicts_growth_due(jd_verdicts *vd) {
  if (!wait_for_more(vd))
    send_unsent(vd, NULL);
}

int jd_verdicts_growth_rejudge_wait(jd_verdicts *vd, uint64_t now) {
  jd_vgrowth_state *gs = &vd->growth;
  if (!gs->rejudge_since)
    return 0;
  int more = vd->hooks.slogs_busy && vd->hooks.slogs_busy(vd->hooks.ctx);
  if (more && now - gs->rejudge_since < GROWTH_WAIT_MAX_MS)
    return 1;
  gs->rejudge_since = 0;
  return 0;
}

int jd_verdicts_growth_unsent(const jd_verdicts *vd) {
  for (const jd_vgrowth *w = vd->growth.held; w; w = w->next)
    if (!w->sent)
      return 1;
  return 0;
}

int jd_verdicts_growth_waiting(const jd_verdicts *vd) {
  /* a lookup that creates nothing (ps_ledger_series_get with create 0) */
  jd_verdicts *look = (jd_verdicts *)vd;
  for (jd_vgrowth *w = vd->growth.held; w; w = w->next)
    if (!w->sent && run_of(look, w->series, w->run))
      return 1;
  return 0;
}

void jd_verdicts_growth_finished(jd_vgrowth_state *gs, uint64_t seq, int ok) {
  for (jd_vgrowth **pp = &gs->held; *pp; pp = &(*pp)->next)
    if ((*pp)->seq == seq) {
      if (ok)
        unlink_held(gs, pp);
      else
        (*pp)->sent = 0;
      return;
    }
}

cJSON *jd_verdicts_growth_to_json(const jd_vgrowth_state *gs) {
  cJSON *a = cJSON_CreateArray();
  for (const jd_vgrowth *w = gs->held; a && w; w = w->next) {
    cJSON *o = cJSON_CreateObject();
    char t[24];
    snprintf(t, sizeof t, "%" PRId64, w->g.time_ns);
    cJSON_AddStringToObject(o, "run", w->run);
    cJSON_AddStringToObject(o, "series", w->series);
    if (w->revision)
      cJSON_AddStringToObject(o, "revision", w->revision);
    cJSON_AddNumberToObject(o, "stage", w->g.stage);
    cJSON_AddStringToObject(o, "time", t); /* a double does not hold it */
    cJSON *g = cJSON_AddArrayToObject(o, "growth");
    for (int i = 0; g && i < PS_GROWTH_NFIGURES; i++)
      cJSON_AddItemToArray(g, isnan(w->g.growth[i]) ? cJSON_CreateNull()
                                                    : cJSON_CreateNumber(w->g.growth[i]));
    cJSON_AddItemToArray(a, o);
  }
  return a;
}

/* What does not read as a held stage is left out: the stage is then lost
 * to the damage, never the agent. */
size_t jd_verdicts_growth_from_json(jd_verdicts *vd, const cJSON *a) {
  const cJSON *o, *list = cJSON_IsArray(a) ? a : NULL;
  size_t dropped = a && !list;
  cJSON_ArrayForEach(o, list) {
    const char *run = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "run"));
    const char *series = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "series"));
    const char *time = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "time"));
    const cJSON *stage = cJSON_GetObjectItemCaseSensitive(o, "stage");
    const cJSON *growth = cJSON_GetObjectItemCaseSensitive(o, "growth");
    if (!run || !run[0] || !series || !series[0] || !time || !cJSON_IsNumber(stage) ||
        stage->valuedouble < 0 || stage->valuedouble > 100000 || !cJSON_IsArray(growth) ||
        cJSON_GetArraySize(growth) != PS_GROWTH_NFIGURES) {
      dropped++;
      continue;
    }
    char *end;
    errno = 0;
    long long t = strtoll(time, &end, 10);
    if (errno || *end || end == time) {
      dropped++;
      continue;
    }
    ps_growth_stage g = {LOADGEN, series, run,
                         cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "revision")),
                         (int)stage->valuedouble, 0, 0, (int64_t)t, {0}};
    for (int i = 0; i < PS_GROWTH_NFIGURES; i++) {
      const cJSON *v = cJSON_GetArrayItem(growth, i);
      g.growth[i] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    }
    if (ps_growth_judged(&g))
      hold(vd, &g, 1);
  }
  return dropped;
}

/* --- growth across revisions ----------------------------------------------- */

static long metric_index(const jd_verdicts *vd, ps_growth_figure_id id) {
  const char *name = ps_growth_figure(id)->name;
  for (size_t i = 0; i < vd->nmetrics; i++)
    if (strcmp(vd->metrics[i], name) == 0)
      return (long)i;
  return -1;
}

void jd_verdicts_growth_of(const jd_verdicts *vd, const ps_ledger_run *r,
                           double out[PS_GROWTH_NFIGURES]) {
  for (int i = 0; i < PS_GROWTH_NFIGURES; i++) {
    long m = r ? metric_index(vd, (ps_growth_figure_id)i) : -1;
    out[i] = m >= 0 ? r->values[m] : NAN;
  }
}

int jd_verdicts_growth_fold(jd_verdicts *vd, ps_ledger_run *r, const double g[PS_GROWTH_NFIGURES]) {
  int rose = 0;
  for (int i = 0; r && i < PS_GROWTH_NFIGURES; i++) {
    long m = metric_index(vd, (ps_growth_figure_id)i);
    if (m < 0 || isnan(g[i]) || (!isnan(r->values[m]) && r->values[m] >= g[i]))
      continue;
    r->values[m] = g[i];
    rose = 1;
  }
  return rose;
}

void jd_verdicts_rejudge_from(jd_verdicts *vd, ps_ledger_series *s, size_t at) {
  for (size_t j = at; j < s->nruns; j++) {
    s->runs[j].judged = 0;
    s->runs[j].put_seq = ++vd->ledger.last_put_seq;
  }
  vd->sh->state_dirty = 1;
}

/* A judged stage's growth raises its run's: a run already judged is judged
 * again with it, and the runs after it too (their window holds it). A run
 * the ledger does not know yet gets it at its end. Returns whether runs
 * are to be judged again. */
static int fold_into_run(jd_verdicts *vd, const ps_growth_stage *g) {
  ps_ledger_series *s = ps_ledger_series_get(&vd->ledger, LOADGEN, g->series, vd->series_host, 0);
  long at = s ? ps_ledger_find(s, vd->host, g->run) : -1;
  if (at < 0 || !jd_verdicts_growth_fold(vd, &s->runs[at], g->growth))
    return 0;
  if (!vd->growth.rejudge_since)
    vd->growth.rejudge_since = uv_now(vd->sh->loop);
  if (s->runs[at].judged)
    PS_INFO(JD_VERDICTS_MOD,
            "%s: the kernel growth of stage %d is in: the run is judged again with it", g->run,
            g->stage);
  jd_verdicts_rejudge_from(vd, s, (size_t)at);
  return 1;
}

void jd_verdicts_growth_point(jd_verdicts *vd, const ps_point *p) {
  const ps_figure *first = ps_growth_figure(PS_GROWTH_KERNEL_OBJECTS);
  if (vd->sh->stopping || strcmp(p->measurement, first->measurement) != 0)
    return;
  const char *run = ps_point_tag(p, "run"), *stage = ps_point_tag(p, "stage");
  const char *series = ps_point_tag(p, "test_type");
  const ps_field *partial = ps_point_field(p, "partial");
  if (!run || !stage || !series)
    return;
  char *end;
  long n = strtol(stage, &end, 10);
  if (*end || n < 0 || n > 100000)
    return;
  ps_growth_stage g = {LOADGEN, series, run, ps_point_tag(p, "revision"), (int)n,
                       !partial || partial->type != PS_F_BOOL || partial->v.b, 0, p->time_ns,
                       {0}};
  int any = 0;
  for (int i = 0; i < PS_GROWTH_NFIGURES; i++) {
    g.growth[i] = ps_point_number(p, ps_growth_figure((ps_growth_figure_id)i)->field);
    any |= !isnan(g.growth[i]);
  }
  if (!any || !ps_growth_judged(&g))
    return;
  /* As its run's markers say: a run that had ended before the agent saw
   * it alerts only within alerts.catch_up_s (the run ended before its
   * slog is read, so the ledger knows it; a run it does not know is new). */
  jd_vgrowth *w = hold(vd, &g, 0);
  ps_ledger_run *r = run_of(vd, series, run);
  if (r && fold_into_run(vd, &g))
    vd->driver->look(vd, 0);
  if (w && r) {
    if (wait_for_more(vd))
      vd->driver->look(vd, GROWTH_WAIT_MAX_MS); /* the bound, if the reader stays busy */
    else
      send_unsent(vd, NULL);
  } else if (!w && r) {
    send_unkept(vd, &g, r->backfill);
  }
}
