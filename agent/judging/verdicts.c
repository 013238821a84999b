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
static void send_pass(jd_verdicts *vd, jd_vpass *p, const ps_verdict_list *l);

/* How long a run's end or a document's last point waits before the look:
 * a running agent lets the ends that come close together (runs found ended
 * at a rescan) be judged in one look. In --once they all come from one
 * evaluation in one loop turn, so the next turn already has them all; a
 * wait there only lengthens a backfill. */
static uint64_t gather_ms(const jd_verdicts *vd) { return vd->sh->once ? 0 : JUDGE_DELAY_MS; }

/* Looks at what is due after `delay` ms (0: in the next loop turn). */
static void arm(jd_verdicts *vd, uint64_t delay) {
  if (vd->sh->stopping == 2)
    return;
  uint64_t due = uv_now(vd->sh->loop) + delay;
  if (uv_is_active((uv_handle_t *)&vd->timer) &&
      uv_timer_get_due_in(&vd->timer) + uv_now(vd->sh->loop) <= due)
    return;
  uv_timer_start(&vd->timer, timer_cb, delay, 0);
}

/* What the parts hand back (verdicts_private.h): they never call up here. */
static const struct jd_vdriver driver = {arm, send_pass};

void jd_verdicts_reconfigured(jd_verdicts *vd, const ps_config *cfg) {
  jd_verdicts_triage_reload(vd, cfg);
  arm(vd, 0);
}

int jd_verdicts_init(jd_verdicts *vd, pl_shared *sh, const ps_config *cfg, const pl_aux_out *out,
                     const jd_verdicts_hooks *hooks) {
  memset(vd, 0, sizeof *vd);
  vd->driver = &driver;
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
  jd_verdicts_triage_init(&vd->triage);
  jd_verdicts_triage_read_file(vd, cfg);
  /* the first read of the server's decisions, whatever else comes: a
   * --once run waits for it (a decision taken while no agent ran still
   * re-judges), and has to end also when nothing else arms the timer */
  arm(vd, 0);
  return 0;
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
  free(p->growth_seqs);
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
      for (size_t i = 0; i < p->ngrowth; i++)
        jd_verdicts_growth_finished(&vd->growth, p->growth_seqs[i], 1);
    }
    vd->sh->state_dirty = 1;
    if (vd->hooks.written)
      vd->hooks.written(vd->hooks.ctx);
  } else if (p->kind == PASS_STAGES) {
    p->ended->in_flight = 0; /* judged again: now, or at the next start */
  } else if (p->kind == PASS_DSS) {
    p->doc->in_flight = 0;
  } else if (p->kind == PASS_LIMIT) {
    for (size_t i = 0; i < p->ngrowth; i++)
      jd_verdicts_growth_finished(&vd->growth, p->growth_seqs[i], 0);
  }
  /* What waited for this pass goes at once; what failed waits a little,
   * so a server that refuses is not asked again in the same turn. */
  arm(vd, ok && !p->failed ? 0 : JUDGE_DELAY_MS);
  pass_free(p);
}

/* Sends `l` as pass `p` (taken over), telling the judged hook run by run.
 * A pass with nothing to send is finished at once. */
static void send_pass(jd_verdicts *vd, jd_vpass *p, const ps_verdict_list *l) {
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
          ps_triage_ack_of(&vd->triage.in_force, x->host ? x->host : vd->host, x->run,
                           x->change_run, x->metric)) {
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

/* Sends what a judge returned (verdicts_judge.c); `l` is emptied. */
static void send_judged(jd_verdicts *vd, jd_vpass *p, ps_verdict_list *l) {
  if (p)
    send_pass(vd, p, l);
  ps_verdict_list_free(l);
}

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
    arm(vd, next_ms);
  else if (vd->sh->once && vd->hooks.settled && jd_verdicts_quiet(vd))
    vd->hooks.settled(vd->hooks.ctx);
}

/* DSS files and stage drift need no history. A pass with nothing to send
 * is done at once and drops its file or run: the next is taken first. */
static void judge_without_history(jd_verdicts *vd) {
  for (jd_dss_doc *d = vd->collect.docs, *dn; d; d = dn) {
    dn = d->next;
    if (!d->ended || d->in_flight)
      continue;
    ps_verdict_list l;
    ps_verdict_list_init(&l);
    send_judged(vd, jd_verdicts_judge_dss(vd, d, &l), &l);
  }
  for (jd_lg_run *r = vd->collect.runs, *rn; r; r = rn) {
    rn = r->next;
    if (!r->ended || r->in_flight)
      continue;
    ps_verdict_list l;
    ps_verdict_list_init(&l);
    send_judged(vd, jd_verdicts_judge_stages(vd, r, &l), &l);
  }
}

/* Whether the series wait (bounded) for run ends still to come, or for
 * the other stages' growth of a run judged again for one's. */
static int series_wait(jd_verdicts *vd, uint64_t now) {
  int busy = vd->hooks.busy && vd->hooks.busy(vd->hooks.ctx);
  if (busy && !vd->busy_since)
    vd->busy_since = now;
  if (!busy)
    vd->busy_since = 0;
  int wait = busy && now - vd->busy_since < BUSY_WAIT_MAX_MS;
  return wait || jd_verdicts_growth_rejudge_wait(vd, now);
}

static uint64_t sooner(uint64_t next, uint64_t in) { return !next || in < next ? in : next; }

/* Whether the series' history is in; if not, its read starts when one is
 * due, and `next` says when to look again. */
static int history_in(jd_verdicts *vd, jd_vseries *vs, uint64_t now, uint64_t *next) {
  if (vs->synced)
    return 1;
  if (vs->waiting_server)
    return 0;
  if (vs->retry_at > now) {
    *next = sooner(*next, vs->retry_at - now);
    return 0;
  }
  if (!vd->history.fetching && jd_verdicts_fetch_history(vd, vs) < 0)
    *next = HISTORY_RETRY_FIRST_MS;
  return 0; /* judged once the history is in */
}

/* A candidate (the ledger's series `i`) waits for the history of the
 * series it is judged `against`, read like its own, and for the verdicts
 * of that series' runs it knows: the level a candidate is judged against
 * is the one they speak of. Creating that series may move the ledger's
 * array: the caller takes its series again. */
static int reference_ready(jd_verdicts *vd, size_t i, const char *against, uint64_t now,
                           uint64_t *next) {
  const ps_ledger_series *s = &vd->ledger.series[i];
  char *source = strdup(s->source), *host = strdup(s->host);
  ps_ledger_series *as = source && host
                             ? ps_ledger_series_get(&vd->ledger, source, against, host, 1)
                             : NULL;
  jd_vseries *avs = as ? jd_verdicts_fetch_series(&vd->history, source, against, host) : NULL;
  free(source);
  free(host);
  if (as && (series_dirty(as) || series_in_flight(vd, as))) {
    *next = JUDGE_DELAY_MS;
    return 0;
  }
  return !avs || history_in(vd, avs, now, next);
}

/* The decisions first: judged without them, a run would alert on a change
 * already acknowledged (read once per look, not per series). */
static int triage_fresh(jd_verdicts *vd, uint64_t now) {
  if (!vd->triage.fetching && vd->triage.synced &&
      now + TRIAGE_READ_MS - vd->triage.next <= TRIAGE_FRESH_MS)
    return 1;
  if (!vd->triage.fetching)
    jd_verdicts_triage_fetch(vd);
  return 0;
}

/* The series with runs to judge whose history (and reference series) is
 * in are judged; `next`: when to look again. */
static void judge_series(jd_verdicts *vd, uint64_t now, int wait, uint64_t *next) {
  for (size_t i = 0; i < vd->ledger.nseries; i++) {
    ps_ledger_series *s = &vd->ledger.series[i];
    if (!series_dirty(s) || series_in_flight(vd, s))
      continue;
    jd_vseries *vs = jd_verdicts_fetch_series(&vd->history, s->source, s->series, s->host);
    if (!vs || !history_in(vd, vs, now, next))
      continue;
    const char *against = jd_verdicts_candidate_against(vd, s->source, s->series);
    if (against) {
      int ready = reference_ready(vd, i, against, now, next);
      s = &vd->ledger.series[i];
      if (!ready)
        continue;
    }
    if (wait) {
      *next = JUDGE_DELAY_MS;
      continue;
    }
    if (!triage_fresh(vd, now))
      continue;
    ps_verdict_list l;
    ps_verdict_list_init(&l);
    send_judged(vd, jd_verdicts_judge_series(vd, s, &l), &l);
  }
}

static void timer_cb(uv_timer_t *t) {
  jd_verdicts *vd = t->data;
  if (vd->sh->stopping)
    return;
  uint64_t now = uv_now(vd->sh->loop), next = 0;
  int wait = series_wait(vd, now);
  if (vd->triage.reading)
    return; /* judged under the file's decisions: its read arms us again */
  jd_verdicts_growth_due(vd);
  judge_without_history(vd);
  /* Decisions are about series: an agent that judges none (DSS, jsonl
   * only) asks nothing of the server for them. */
  int triage_wanted = vd->ledger.nseries > 0;
  if (triage_wanted && !vd->triage.fetching && now >= vd->triage.next)
    jd_verdicts_triage_fetch(vd);
  judge_series(vd, now, wait, &next);
  /* the minute's read of the decisions (a --once run reads them once) */
  if (triage_wanted && !vd->triage.fetching && (!vd->sh->once || !vd->triage.synced)) {
    uint64_t due = vd->triage.next > now ? vd->triage.next - now : 1;
    next = sooner(next, due);
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

void jd_verdicts_slogs_idle(jd_verdicts *vd) {
  if (vd->sh->stopping)
    return;
  jd_verdicts_slogdrift_kick(vd);
  if (vd->growth.rejudge_since || jd_verdicts_growth_unsent(vd))
    arm(vd, 0);
}

void jd_verdicts_slog_point(jd_verdicts *vd, const ps_point *p) {
  jd_verdicts_growth_point(vd, p);
  jd_verdicts_slogdrift_point(vd, p);
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
    arm(vd, gather_ms(vd));
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
  int rejudged = jd_verdicts_growth_run_ended(vd, v->id.run);
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
  arm(vd, rejudged ? 0 : gather_ms(vd));
}

int jd_verdicts_quiet(const jd_verdicts *vd) {
  if (vd->passes || vd->history.fetching || vd->triage.fetching || vd->triage.reading ||
      vd->slogdrift.jobs || (!vd->triage.synced && vd->ledger.nseries))
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
    const jd_vseries *vs = jd_verdicts_fetch_find(&vd->history, s->source, s->series, s->host);
    /* A synced candidate series waits on the series it is judged against. */
    const char *against = jd_verdicts_candidate_against(vd, s->source, s->series);
    if (vs && vs->synced && against)
      vs = jd_verdicts_fetch_find(&vd->history, s->source, against, s->host);
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
  cJSON_AddItemToObject(o, "growth", jd_verdicts_growth_to_json(&vd->growth));
  /* The excludes and baselines the saved verdicts were judged under: the
   * next start compares the decisions it reads with these, so a decision
   * undone while the agent was down is judged again too. */
  cJSON_AddItemToObject(o, "triage", jd_verdicts_triage_to_json(&vd->triage));
  char *text = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return text;
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
      arm(vd, JUDGE_DELAY_MS);
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
    said_dropped(&said, jd_verdicts_triage_from_json(&vd->triage, tr), "'triage'");
  /* one line for the section, as the alerts section says its damage */
  if (said.len)
    PS_WARN(MOD, "the state file's verdicts section was not read whole%s", said.data);
  ps_buf_free(&said);
  cJSON_Delete(o);
  arm(vd, JUDGE_DELAY_MS); /* whatever was left undone */
}

void jd_verdicts_close(jd_verdicts *vd) {
  jd_verdicts_slogdrift_close(&vd->slogdrift);
  if (!uv_is_closing((uv_handle_t *)&vd->timer))
    uv_close((uv_handle_t *)&vd->timer, NULL);
}

void jd_verdicts_free(jd_verdicts *vd) {
  for (jd_vpass *p = vd->passes, *n; p; p = n) {
    n = p->next;
    pass_free(p);
  }
  vd->passes = NULL;
  jd_verdicts_fetch_free(&vd->history);
  jd_verdicts_triage_free(&vd->triage);
  jd_verdicts_growth_clear(&vd->growth);
  jd_verdicts_collect_free(&vd->collect);
  ps_ledger_free(&vd->ledger);
  free(vd->sent);
  vd->sent = NULL;
  free(vd->metrics);
}
