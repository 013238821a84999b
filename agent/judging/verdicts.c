/*
 * verdicts.c: judging runs as they end and writing the verdicts.
 * See include/judging/verdicts.h.
 *
 * Design
 * - What is still to do lives in data, not in callbacks: a ledger run with
 *   judged == 0 is a series to judge from that run on; an ended run in
 *   `ended` waits for its stage-drift verdicts; an ended DSS file in the
 *   collector waits for its arm verdicts. One timer looks at all of it, so
 *   a restart, a failed send or a late history simply leaves the data there
 *   for the next look.
 * - A pass is one judgement's verdicts, sent as aux batches; its runs are
 *   marked done only when every batch was acknowledged.
 */
#include "judging/verdicts.h"
#include "verdicts_private.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "readback/triage.h"
#include "judging/verdicts_send.h"

#define MOD JD_VERDICTS_MOD
#define LOADGEN JD_VERDICTS_LOADGEN
#define JUDGE_DELAY_MS 300
#define BUSY_WAIT_MAX_MS 30000

static void timer_cb(uv_timer_t *t);

/* How long a run's end or a document's last point waits before the look:
 * a running agent lets the ends that come close together (runs found ended
 * at a rescan) be judged in one look. In --once they all come from one
 * evaluation in one loop turn, so the next turn already has them all; a
 * wait there only lengthens a backfill. */
static uint64_t gather_ms(const jd_verdicts *vd) { return vd->sh->once ? 0 : JUDGE_DELAY_MS; }

void jd_verdicts_arm(jd_verdicts *vd, uint64_t delay) {
  if (vd->sh->stopping == 2)
    return;
  uint64_t due = uv_now(vd->sh->loop) + delay;
  if (uv_is_active((uv_handle_t *)&vd->timer) &&
      uv_timer_get_due_in(&vd->timer) + uv_now(vd->sh->loop) <= due)
    return;
  uv_timer_start(&vd->timer, timer_cb, delay, 0);
}

void jd_verdicts_reconfigured(jd_verdicts *vd, const ps_config *cfg) {
  jd_verdicts_read_triage_file(vd, cfg);
  vd->triage_next = 0;
  jd_verdicts_arm(vd, 0);
}

int jd_verdicts_init(jd_verdicts *vd, pl_shared *sh, const ps_config *cfg, const pl_aux_out *out,
                     const jd_verdicts_hooks *hooks) {
  memset(vd, 0, sizeof *vd);
  vd->sh = sh;
  vd->cfg = cfg;
  vd->out = *out;
  if (hooks)
    vd->hooks = *hooks;
  const ps_verdicts_cfg *v = &cfg->verdicts;
  vd->metrics = calloc(v->nmetrics ? v->nmetrics : 1, sizeof *vd->metrics);
  if (!vd->metrics)
    return -ENOMEM;
  for (size_t i = 0; i < v->nmetrics; i++)
    vd->metrics[i] = v->metrics[i].name;
  vd->nmetrics = v->nmetrics;
  char buf[sizeof vd->host];
  snprintf(vd->host, sizeof vd->host, "%s", ps_config_host(cfg, buf, sizeof buf));
  vd->series_host = v->series_by == PS_SERIES_BY_HOST ? vd->host : "";
  int rc = ps_ledger_init(&vd->ledger, vd->metrics, vd->nmetrics);
  if (rc < 0) {
    free(vd->metrics);
    return rc;
  }
  jd_verdicts_collect_init(&vd->collect, vd->metrics, vd->nmetrics);
  vd->sent = calloc(1, sizeof *vd->sent); /* none: every point is sent */
  uv_timer_init(sh->loop, &vd->timer);
  vd->timer.data = vd;
  ps_triage_set_init(&vd->triage_server);
  ps_triage_set_init(&vd->triage_file);
  ps_triage_set_init(&vd->triage);
  jd_verdicts_read_triage_file(vd, cfg);
  /* the first read of the server's decisions, whatever else comes: a
   * --once run waits for it (a decision taken while no agent ran still
   * re-judges), and has to end also when nothing else arms the timer */
  jd_verdicts_arm(vd, 0);
  return 0;
}

jd_vseries *jd_verdicts_series_get(jd_verdicts *vd, const char *source, const char *series,
                                   const char *host) {
  for (jd_vseries *s = vd->series; s; s = s->next)
    if (strcmp(s->source, source) == 0 && strcmp(s->series, series) == 0 &&
        strcmp(s->host, host) == 0)
      return s;
  jd_vseries *s = calloc(1, sizeof *s);
  if (!s || !(s->source = strdup(source)) || !(s->series = strdup(series)) ||
      !(s->host = strdup(host))) {
    if (s) {
      free(s->source);
      free(s->series);
    }
    free(s);
    return NULL;
  }
  s->span_ns = HISTORY_SPAN_FIRST_NS;
  /* The history read back is loadgen_run's: a benchmarker series is
   * judged on the reports the agent saw (docs/verdicts.md "Benchmarker:
   * across releases"). */
  s->synced = strcmp(source, LOADGEN) != 0;
  s->next = vd->series;
  vd->series = s;
  return s;
}

/* --- sending a pass ------------------------------------------------------------ */

static void pass_free(jd_vpass *p) {
  for (size_t i = 0; i < p->nruns; i++) {
    free(p->runs[i]);
    free(p->hosts[i]);
  }
  free(p->runs);
  free(p->hosts);
  free(p->host);
  free(p->put_seqs);
  free(p->source);
  free(p->series);
  free(p);
}

/* Every batch of the pass was answered: what it judged is done, or stays
 * to be judged again. */
static void pass_finished(void *arg, int ok) {
  jd_vpass *p = arg;
  jd_verdicts *vd = p->vd;
  for (jd_vpass **pp = &vd->passes; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  if (ok && !p->failed) {
    if (p->kind == PASS_SERIES) {
      ps_ledger_series *s =
          ps_ledger_series_get(&vd->ledger, p->source, p->series, p->host, 0);
      for (size_t i = 0; s && i < p->nruns; i++) {
        long at = ps_ledger_find(s, p->hosts[i], p->runs[i]);
        /* A run put again while the pass was out (its own end replacing
         * what the server said of it mid-backfill) was not judged. */
        if (at >= 0 && s->runs[at].put_seq == p->put_seqs[i])
          s->runs[at].judged = 1;
      }
    } else if (p->kind == PASS_STAGES) {
      jd_verdicts_collect_drop_run(&vd->collect, p->ended);
    } else if (p->kind == PASS_DSS) {
      jd_verdicts_collect_drop_dss(&vd->collect, p->doc);
    } else if (p->kind == PASS_LIMIT) {
      jd_verdicts_growth_finished(vd, p->growth_seq, 1);
    }
    vd->sh->state_dirty = 1;
    if (vd->hooks.written)
      vd->hooks.written(vd->hooks.ctx);
  } else if (p->kind == PASS_STAGES) {
    p->ended->in_flight = 0; /* judged again: now, or at the next start */
  } else if (p->kind == PASS_DSS) {
    p->doc->in_flight = 0;
  } else if (p->kind == PASS_LIMIT) {
    jd_verdicts_growth_finished(vd, p->growth_seq, 0);
  }
  /* What waited for this pass goes at once; what failed waits a little,
   * so a server that refuses is not asked again in the same turn. */
  jd_verdicts_arm(vd, ok && !p->failed ? 0 : JUDGE_DELAY_MS);
  pass_free(p);
}

/* Sends `l` as pass `p` (taken over), telling the judged hook run by run.
 * A pass with nothing to send is finished at once. */
void jd_verdicts_send_pass(jd_verdicts *vd, jd_vpass *p, const ps_verdict_list *l) {
  p->vd = vd;
  p->next = vd->passes;
  vd->passes = p;
  ps_verdict *told = l->n ? malloc(l->n * sizeof *told) : NULL;
  for (size_t i = 0, first = 0; vd->hooks.judged && told && i < l->n; i++) {
    const ps_verdict *v = &l->v[i];
    if (i + 1 < l->n && strcmp(l->v[i + 1].run, v->run) == 0)
      continue; /* the hook gets a run's verdicts together */
    /* An acknowledged change is known: written as ever, alerted no more
     * (docs/verdicts.md "Triage"). */
    size_t n = 0;
    for (size_t k = first; k <= i; k++) {
      const ps_verdict *x = &l->v[k];
      if (x->verdict == PS_VERDICT_EXCLUDED || x->verdict == PS_VERDICT_BASELINE)
        continue;
      if ((x->verdict == PS_VERDICT_REGRESSION || x->verdict == PS_VERDICT_IMPROVEMENT) &&
          ps_triage_ack_of(&vd->triage, x->host ? x->host : vd->host, x->run, x->change_run,
                           x->metric)) {
        PS_INFO(MOD, "%s: the %s of %s is acknowledged: no alert", x->run,
                ps_verdict_kind_name(x->verdict), x->metric);
        continue;
      }
      told[n++] = *x;
    }
    jd_run_verdicts rv = {v->source,   v->series, v->run, v->revision, v->time_ns,
                          v->backfill, told,      n,      vd->host};
    if (n)
      vd->hooks.judged(vd->hooks.ctx, &rv);
    first = i + 1;
  }
  free(told);
  if (jd_verdicts_send(&vd->out, vd->sent, l, pass_finished, p) < 0)
    pass_finished(p, 0);
}


/* --- the look ------------------------------------------------------------------ */

static int series_in_flight(const jd_verdicts *vd, const ps_ledger_series *s) {
  for (const jd_vpass *p = vd->passes; p; p = p->next)
    if (p->kind == PASS_SERIES && !strcmp(p->source, s->source) && !strcmp(p->series, s->series))
      return 1;
  return 0;
}

static int series_dirty(const ps_ledger_series *s) {
  for (size_t i = s->nruns; i > 0; i--)
    if (!s->runs[i - 1].judged)
      return 1;
  return 0;
}

/* The next look in `next_ms`; a look that ends with nothing left to do (a
 * read that failed, a series that waits for the next start) sends nothing
 * whose answer would wake a --once run, so it says it is done. */
static void arm_or_settle(jd_verdicts *vd, uint64_t next_ms) {
  if (next_ms)
    jd_verdicts_arm(vd, next_ms);
  else if (vd->sh->once && vd->hooks.settled && jd_verdicts_quiet(vd))
    vd->hooks.settled(vd->hooks.ctx);
}

static void timer_cb(uv_timer_t *t) {
  jd_verdicts *vd = t->data;
  if (vd->sh->stopping)
    return;
  uint64_t now = uv_now(vd->sh->loop), next = 0;
  int busy = vd->hooks.busy && vd->hooks.busy(vd->hooks.ctx);
  if (busy && !vd->busy_since)
    vd->busy_since = now;
  if (!busy)
    vd->busy_since = 0;
  int wait = busy && now - vd->busy_since < BUSY_WAIT_MAX_MS;
  if (vd->triage_reading)
    return; /* judged under the file's decisions: its read arms us again */
  jd_verdicts_growth_due(vd);
  /* DSS files and stage drift need no history. A pass with nothing to
   * send is done at once and drops its file or run: the next is taken
   * first. */
  for (jd_dss_doc *d = vd->collect.docs, *dn; d; d = dn) {
    dn = d->next;
    if (d->ended && !d->in_flight)
      jd_verdicts_judge_dss(vd, d);
  }
  for (jd_lg_run *r = vd->collect.runs, *rn; r; r = rn) {
    rn = r->next;
    if (r->ended && !r->in_flight)
      jd_verdicts_judge_stages(vd, r);
  }
  /* Decisions are about series: an agent that judges none (DSS, jsonl
   * only) asks nothing of the server for them. */
  int triage_wanted = vd->ledger.nseries > 0;
  if (triage_wanted && !vd->triage_fetching && now >= vd->triage_next)
    jd_verdicts_triage_fetch(vd);
  for (size_t i = 0; i < vd->ledger.nseries; i++) {
    ps_ledger_series *s = &vd->ledger.series[i];
    if (!series_dirty(s) || series_in_flight(vd, s))
      continue;
    jd_vseries *vs = jd_verdicts_series_get(vd, s->source, s->series, s->host);
    if (!vs)
      continue;
    if (!vs->synced) {
      if (vs->waiting_server)
        continue;
      if (vs->retry_at > now) {
        next = !next || vs->retry_at - now < next ? vs->retry_at - now : next;
        continue;
      }
      if (!vd->fetching && jd_verdicts_fetch_history(vd, vs) < 0)
        next = HISTORY_RETRY_FIRST_MS;
      continue; /* judged once the history is in */
    }
    const char *against = jd_verdicts_candidate_against(vd, s->source, s->series);
    if (against) {
      /* A candidate waits for the history of the series it is judged
       * against, read like its own. Creating that series may move the
       * ledger's array: `s` is taken again. */
      char *source = strdup(s->source), *host = strdup(s->host);
      ps_ledger_series *as =
          source && host ? ps_ledger_series_get(&vd->ledger, source, against, host, 1) : NULL;
      jd_vseries *avs = as ? jd_verdicts_series_get(vd, source, against, host) : NULL;
      free(source);
      free(host);
      s = &vd->ledger.series[i];
      /* and for the verdicts of that series' runs it knows: the level a
       * candidate is judged against is the one they speak of */
      if (as && (series_dirty(as) || series_in_flight(vd, as))) {
        next = JUDGE_DELAY_MS;
        continue;
      }
      if (avs && !avs->synced) {
        if (avs->waiting_server)
          continue;
        if (avs->retry_at > now) {
          next = !next || avs->retry_at - now < next ? avs->retry_at - now : next;
          continue;
        }
        if (!vd->fetching && jd_verdicts_fetch_history(vd, avs) < 0)
          next = HISTORY_RETRY_FIRST_MS;
        continue;
      }
    }
    if (wait) {
      next = JUDGE_DELAY_MS;
      continue;
    }
    /* the decisions first: judged without them, a run would alert on a
     * change already acknowledged (read once per look, not per series) */
    if (vd->triage_fetching || !vd->triage_synced ||
        now + TRIAGE_READ_MS - vd->triage_next > TRIAGE_FRESH_MS) {
      if (!vd->triage_fetching)
        jd_verdicts_triage_fetch(vd);
      continue;
    }
    jd_verdicts_judge_series(vd, s);
  }
  /* the minute's read of the decisions (a --once run reads them once) */
  if (triage_wanted && !vd->triage_fetching && (!vd->sh->once || !vd->triage_synced)) {
    uint64_t due = vd->triage_next > now ? vd->triage_next - now : 1;
    next = !next || due < next ? due : next;
  }
  arm_or_settle(vd, next);
}

/* --- input ----------------------------------------------------------------------- */

/* A benchmarker report ended: each scenario's figures are a run of its
 * series (configuration, scenario, arm; the host as every series'), named
 * after the configuration, the report's time (every report of one
 * configuration has the configuration's name) and the scenario (a run is
 * an alert's identity: two scenarios' regressions are two events)
 * (docs/verdicts.md "Benchmarker: across releases"). */
static void benchmarker_ended(jd_verdicts *vd, const jd_dss_doc *d) {
  double *values = malloc((vd->nmetrics ? vd->nmetrics : 1) * sizeof *values);
  ps_buf series, run;
  ps_buf_init(&series, 0);
  ps_buf_init(&run, 0);
  time_t secs = (time_t)(d->time_ns / 1000000000);
  struct tm tm;
  char when[32] = "";
  if (gmtime_r(&secs, &tm))
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  for (size_t i = 0; values && i < d->nscenarios; i++) {
    const jd_bm_scenario *sc = &d->scenarios[i];
    for (size_t m = 0; m < vd->nmetrics; m++) {
      values[m] = NAN;
      for (size_t f = 0; f < PS_BENCHMARKER_NFIGURES; f++)
        if (strcmp(vd->metrics[m], ps_benchmarker_figure(f)->name) == 0)
          values[m] = sc->values[f];
    }
    ps_buf_reset(&series);
    ps_buf_reset(&run);
    ps_ledger_series *s = NULL;
    if (ps_buf_printf(&series, "%s / %s / %s", d->run, sc->scenario, sc->arm) == 0 &&
        ps_buf_printf(&run, "%s %s / %s", d->run, when, sc->scenario) == 0)
      s = ps_ledger_series_get(&vd->ledger, JD_VERDICTS_COLLECT_BENCHMARKER, series.data,
                               vd->series_host, 1);
    long at = s ? ps_ledger_put(&vd->ledger, s, vd->host, run.data, sc->revision, d->time_ns,
                                PS_RUN_STATUS_SUCCESS, d->backfill, values)
                : -ENOMEM;
    if (at < 0 || ps_ledger_set_steps(&s->runs[at], sc->steps, sc->nsteps) < 0)
      PS_ERROR(MOD, "%s: out of memory; not judged across releases", d->run);
  }
  if (!values)
    PS_ERROR(MOD, "%s: out of memory; not judged across releases", d->run);
  free(values);
  ps_buf_free(&series);
  ps_buf_free(&run);
}

void jd_verdicts_tap(jd_verdicts *vd, const ps_point *p) {
  jd_dss_doc *doc = NULL;
  /* A point that names another host (line protocol passed through) is
   * about that host's run: this agent's verdicts are about its own. */
  const char *host = ps_point_tag(p, "host");
  if (host && strcmp(host, vd->host) != 0)
    return;
  if (jd_verdicts_collect_point(&vd->collect, p, &doc) == JD_VERDICTS_COLLECT_DSS_ENDED) {
    if (strcmp(doc->source, JD_VERDICTS_COLLECT_BENCHMARKER) == 0)
      benchmarker_ended(vd, doc);
    vd->sh->state_dirty = 1;
    jd_verdicts_arm(vd, gather_ms(vd));
  }
}

/* A run of a series candidates are judged against arrived (late, in a
 * backfill): the candidates that started after it saw another level, so
 * they are judged again, as a late run of their own series would cause. */
static void rejudge_candidates(jd_verdicts *vd, const char *series, int64_t start_ns) {
  for (size_t i = 0; i < vd->ledger.nseries; i++) {
    ps_ledger_series *c = &vd->ledger.series[i];
    const char *against = jd_verdicts_candidate_against(vd, c->source, c->series);
    if (!against || strcmp(against, series) != 0 || strcmp(c->host, vd->series_host) != 0)
      continue;
    for (size_t k = 0; k < c->nruns; k++)
      if (c->runs[k].start_ns >= start_ns) {
        /* a new put_seq: a pass still out judged the old level */
        c->runs[k].judged = 0;
        c->runs[k].put_seq = ++vd->ledger.last_put_seq;
      }
  }
}

void jd_verdicts_run_ended(jd_verdicts *vd, const pl_run_event *ev) {
  if (ev->kind != PL_RUN_ENDED)
    return;
  const ps_run_view *v = ev->view;
  jd_lg_run *r = jd_verdicts_collect_find_run(&vd->collect, v->id.run);
  const char *series = r && r->series ? r->series : v->id.test_type;
  const char *revision = r && r->revision ? r->revision : v->id.revision;
  int64_t start = r && r->start_ns ? r->start_ns : (v->have_start ? v->start_ns : 0);
  if (series[0]) {
    ps_ledger_series *s =
        ps_ledger_series_get(&vd->ledger, LOADGEN, series, vd->series_host, 1);
    /* the growth comes from the slog, not from the run's end: a run's end
     * read again keeps what its stages gave */
    double grown[PS_GROWTH_NFIGURES];
    long old = s ? ps_ledger_find(s, vd->host, v->id.run) : -1;
    jd_verdicts_growth_of(vd, old >= 0 ? &s->runs[old] : NULL, grown);
    long at = s ? ps_ledger_put(&vd->ledger, s, vd->host, v->id.run, revision, start,
                                v->status, ev->backfill, r ? r->values : NULL)
                : -ENOMEM;
    if (at >= 0)
      jd_verdicts_growth_fold(vd, &s->runs[at], grown);
    if (at < 0)
      PS_ERROR(MOD, "%s: out of memory; not judged", v->id.run);
    else
      rejudge_candidates(vd, series, start);
  }
  jd_verdicts_growth_run_ended(vd, v->id.run);
  if (r && v->status == PS_RUN_STATUS_SUCCESS && r->nstages) {
    /* Stage drift needs no history; the run stays (and is saved) until its
     * verdicts are acknowledged. */
    r->ended = 1;
    r->status = v->status;
    r->backfill = ev->backfill;
    r->start_ns = start;
  } else if (r) {
    jd_verdicts_collect_drop_run(&vd->collect, r);
  }
  vd->sh->state_dirty = 1;
  jd_verdicts_arm(vd, gather_ms(vd));
}

static const jd_vseries *vseries_find(const jd_verdicts *vd, const char *source, const char *series,
                                      const char *host) {
  for (const jd_vseries *x = vd->series; x; x = x->next)
    if (!strcmp(x->source, source) && !strcmp(x->series, series) && !strcmp(x->host, host))
      return x;
  return NULL;
}

int jd_verdicts_quiet(const jd_verdicts *vd) {
  if (vd->passes || vd->fetching || vd->triage_fetching || vd->triage_reading || vd->slog_drift ||
      (!vd->triage_synced && vd->ledger.nseries))
    return 0;
  for (const jd_dss_doc *d = vd->collect.docs; d; d = d->next)
    if (d->ended)
      return 0;
  for (const jd_lg_run *r = vd->collect.runs; r; r = r->next)
    if (r->ended)
      return 0;
  if (jd_verdicts_growth_waiting(vd))
    return 0;
  for (size_t i = 0; i < vd->ledger.nseries; i++) {
    const ps_ledger_series *s = &vd->ledger.series[i];
    if (!series_dirty(s))
      continue;
    const jd_vseries *vs = vseries_find(vd, s->source, s->series, s->host);
    /* A synced candidate series waits on the series it is judged against. */
    const char *against = jd_verdicts_candidate_against(vd, s->source, s->series);
    if (vs && vs->synced && against)
      vs = vseries_find(vd, s->source, against, s->host);
    if (!vs || !vs->waiting_server)
      return 0;
  }
  return 1;
}

/* --- persistence ------------------------------------------------------------------- */

char *jd_verdicts_to_json(jd_verdicts *vd) {
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return NULL;
  cJSON_AddItemToObject(o, "history", ps_ledger_to_json(&vd->ledger));
  cJSON_AddItemToObject(o, "pending", jd_verdicts_collect_to_json(&vd->collect));
  cJSON_AddItemToObject(o, "growth", jd_verdicts_growth_to_json(vd));
  /* The excludes and baselines the saved verdicts were judged under: the
   * next start compares the decisions it reads with these, so a decision
   * undone while the agent was down is judged again too. */
  cJSON *tr = cJSON_AddArrayToObject(o, "triage");
  for (size_t i = 0; tr && i < vd->triage.n; i++) {
    const ps_triage_decision *d = &vd->triage.d[i];
    if ((d->action != PS_TRIAGE_EXCLUDE && d->action != PS_TRIAGE_BASELINE) ||
        ps_triage_revoked(&vd->triage, d))
      continue;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "id", d->id);
    cJSON_AddStringToObject(x, "action", ps_triage_action_name(d->action));
    cJSON_AddStringToObject(x, "run", d->run);
    if (d->host)
      cJSON_AddStringToObject(x, "host", d->host);
    cJSON_AddItemToArray(tr, x);
  }
  char *text = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return text;
}

/* The saved decisions the verdicts were judged under; how many entries
 * were damaged and left out. */
static size_t triage_from_json(jd_verdicts *vd, const cJSON *tr) {
  size_t dropped = 0;
  const cJSON *x;
  ps_triage_set saved;
  ps_triage_set_init(&saved);
  cJSON_ArrayForEach(x, tr) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(x, "id"),
                *action = cJSON_GetObjectItemCaseSensitive(x, "action"),
                *run = cJSON_GetObjectItemCaseSensitive(x, "run"),
                *host = cJSON_GetObjectItemCaseSensitive(x, "host");
    int a = ps_triage_action_parse(cJSON_GetStringValue(action));
    /* the set keeps an empty string as none, and a decision without an
     * id or a run is not saved: it is not read either */
    if (!cJSON_IsString(id) || !id->valuestring[0] || !cJSON_IsString(run) ||
        !run->valuestring[0] || (a != PS_TRIAGE_EXCLUDE && a != PS_TRIAGE_BASELINE)) {
      dropped++;
      continue;
    }
    ps_triage_decision d = {.id = id->valuestring,
                            .action = (ps_triage_action)a,
                            .run = run->valuestring,
                            .host = cJSON_IsString(host) ? host->valuestring : NULL};
    if (ps_triage_add(&saved, &d) < 0)
      break;
  }
  ps_triage_set_free(&vd->triage);
  vd->triage = saved;
  vd->triage_restored = 1;
  return dropped;
}

static void said_dropped(ps_buf *said, size_t n, const char *what) {
  if (n)
    ps_buf_printf(said, "; %zu damaged entr%s of %s left out", n, n == 1 ? "y" : "ies", what);
}

/* A part of the section that is there but of the wrong type. */
static const cJSON *part(const cJSON *o, const char *name, int list, ps_buf *said) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, name);
  if (x && !(list ? cJSON_IsArray(x) : cJSON_IsObject(x))) {
    ps_buf_printf(said, "; '%s' is not %s (left out)", name, list ? "a list" : "an object");
    return NULL;
  }
  return x;
}

void jd_verdicts_from_json(jd_verdicts *vd, const char *text) {
  cJSON *o = text ? cJSON_Parse(text) : NULL;
  ps_buf said;
  ps_buf_init(&said, 0);
  if (!cJSON_IsObject(o)) {
    if (text) /* "verdicts": [] reset the ledger without a word */
      PS_WARN(MOD,
              "the state file's verdicts section is %s (ignored): verdicts are judged "
              "again from the server's history",
              o ? "not an object" : "not JSON");
    if (o)
      jd_verdicts_arm(vd, JUDGE_DELAY_MS);
    cJSON_Delete(o);
    return;
  }
  said_dropped(
      &said,
      ps_ledger_from_json(&vd->ledger, part(o, "history", 1, &said), vd->series_host, vd->host),
      "'history'");
  jd_verdicts_collect_from_json(&vd->collect, part(o, "pending", 0, &said));
  said_dropped(&said, jd_verdicts_growth_from_json(vd, part(o, "growth", 1, &said)), "'growth'");
  const cJSON *tr = part(o, "triage", 1, &said);
  if (tr)
    said_dropped(&said, triage_from_json(vd, tr), "'triage'");
  /* one line for the section, as the alerts section says its damage */
  if (said.len)
    PS_WARN(MOD, "the state file's verdicts section was not read whole%s", said.data);
  ps_buf_free(&said);
  cJSON_Delete(o);
  jd_verdicts_arm(vd, JUDGE_DELAY_MS); /* whatever was left undone */
}

void jd_verdicts_close(jd_verdicts *vd) {
  jd_verdicts_slogdrift_close(vd);
  if (!uv_is_closing((uv_handle_t *)&vd->timer))
    uv_close((uv_handle_t *)&vd->timer, NULL);
}

void jd_verdicts_free(jd_verdicts *vd) {
  free(vd->triage_read_next);
  for (jd_vpass *p = vd->passes, *n; p; p = n) {
    n = p->next;
    pass_free(p);
  }
  for (jd_vseries *s = vd->series, *n; s; s = n) {
    n = s->next;
    free(s->source);
    free(s->series);
    free(s->host);
    free(s);
  }
  jd_verdicts_collect_free(&vd->collect);
  while (vd->growth_held) {
    jd_vgrowth *w = vd->growth_held;
    vd->growth_held = w->next;
    jd_verdicts_growth_free(w);
  }
  vd->ngrowth_held = 0;
  ps_ledger_free(&vd->ledger);
  free(vd->sent);
  vd->sent = NULL;
  ps_triage_set_free(&vd->triage_server);
  ps_triage_set_free(&vd->triage_file);
  ps_triage_set_free(&vd->triage);
  free(vd->metrics);
  vd->passes = NULL;
  vd->series = NULL;
}
