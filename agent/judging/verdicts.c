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

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "judging/verdicts_history.h"
#include "judging/verdicts_send.h"
#include "verdict/arm_compare.h"
#include "verdict/growth_limit.h"
#include "verdict/judge.h"
#include "verdict/stage_drift.h"

#define MOD "verdicts"
#define LOADGEN "loadgen"
#define JUDGE_DELAY_MS 300
#define BUSY_WAIT_MAX_MS 30000
#define HISTORY_RETRY_FIRST_MS 2000
#define HISTORY_RETRY_MAX_MS 60000
/* The first history read looks this far back from the runs to judge, each
 * further read twice as far, until the window is full or the span covers
 * any history a database can hold (docs/verdicts.md, "Where the history
 * comes from": every read is bounded in time). */
#define DAY_NS (86400LL * 1000000000LL)
#define HISTORY_SPAN_FIRST_NS (30 * DAY_NS)
#define HISTORY_SPAN_MAX_NS (7680 * DAY_NS)

struct pl_vseries {
  pl_vseries *next;
  char *source, *series, *host; /* the ledger series' key */
  int64_t span_ns;     /* how far back the next history read looks */
  int64_t until_ns;    /* where the last read began: the next reads before it */
  int synced;          /* the server's history was merged, or there is none */
  unsigned fails;      /* history reads that failed in a row */
  uint64_t retry_at;   /* uv_now() before which it is not read again */
  int waiting_server;  /* --once: the server could not give it now */
};

typedef enum { PASS_SERIES, PASS_STAGES, PASS_DSS, PASS_LIMIT } pass_kind;

struct pl_vpass {
  pl_vpass *next;
  pl_verdicts *vd;
  pass_kind kind;
  int failed; /* judging it went wrong: nothing is marked done */
  char *source, *series, *host; /* PASS_SERIES: whose runs to mark */
  char **runs, **hosts;  /* PASS_SERIES: the runs judged, (host, name) */
  uint64_t *put_seqs;    /* PASS_SERIES: and which of their puts */
  size_t nruns;
  pl_lg_run *ended;      /* PASS_STAGES: the run judged */
  pl_dss_doc *doc;       /* PASS_DSS */
};

static void timer_cb(uv_timer_t *t);

/* How long a run's end or a document's last point waits before the look:
 * a running agent lets the ends that come close together (runs found ended
 * at a rescan) be judged in one look. In --once they all come from one
 * evaluation in one loop turn, so the next turn already has them all; a
 * wait there only lengthens a backfill. */
static uint64_t gather_ms(const pl_verdicts *vd) { return vd->sh->once ? 0 : JUDGE_DELAY_MS; }

static void arm(pl_verdicts *vd, uint64_t delay) {
  if (vd->sh->stopping == 2)
    return;
  uint64_t due = uv_now(vd->sh->loop) + delay;
  if (uv_is_active((uv_handle_t *)&vd->timer) &&
      uv_timer_get_due_in(&vd->timer) + uv_now(vd->sh->loop) <= due)
    return;
  uv_timer_start(&vd->timer, timer_cb, delay, 0);
}

int pl_verdicts_init(pl_verdicts *vd, pl_shared *sh, const ps_config *cfg,
                     const pl_aux_out *out, const pl_verdicts_hooks *hooks) {
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
  pl_collect_init(&vd->collect, vd->metrics, vd->nmetrics);
  uv_timer_init(sh->loop, &vd->timer);
  vd->timer.data = vd;
  return 0;
}

static pl_vseries *series_get(pl_verdicts *vd, const char *source, const char *series,
                              const char *host) {
  for (pl_vseries *s = vd->series; s; s = s->next)
    if (strcmp(s->source, source) == 0 && strcmp(s->series, series) == 0 &&
        strcmp(s->host, host) == 0)
      return s;
  pl_vseries *s = calloc(1, sizeof *s);
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
  s->next = vd->series;
  vd->series = s;
  return s;
}

/* --- sending a pass ------------------------------------------------------------ */

static void pass_free(pl_vpass *p) {
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
  pl_vpass *p = arg;
  pl_verdicts *vd = p->vd;
  for (pl_vpass **pp = &vd->passes; *pp; pp = &(*pp)->next)
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
      pl_collect_drop_run(&vd->collect, p->ended);
    } else if (p->kind == PASS_DSS) {
      pl_collect_drop_dss(&vd->collect, p->doc);
    }
    vd->sh->state_dirty = 1;
    if (vd->hooks.written)
      vd->hooks.written(vd->hooks.ctx);
  } else if (p->kind == PASS_STAGES) {
    p->ended->in_flight = 0; /* judged again: now, or at the next start */
  } else if (p->kind == PASS_DSS) {
    p->doc->in_flight = 0;
  }
  /* What waited for this pass goes at once; what failed waits a little,
   * so a server that refuses is not asked again in the same turn. */
  arm(vd, ok && !p->failed ? 0 : JUDGE_DELAY_MS);
  pass_free(p);
}

/* Sends `l` as pass `p` (taken over), telling the judged hook run by run.
 * A pass with nothing to send is finished at once. */
static void send_pass(pl_verdicts *vd, pl_vpass *p, const ps_verdict_list *l) {
  p->vd = vd;
  p->next = vd->passes;
  vd->passes = p;
  for (size_t i = 0, first = 0; vd->hooks.judged && i < l->n; i++) {
    const ps_verdict *v = &l->v[i];
    if (i + 1 < l->n && strcmp(l->v[i + 1].run, v->run) == 0)
      continue; /* the hook gets a run's verdicts together */
    pl_run_verdicts rv = {v->source, v->series, v->run, v->revision, v->time_ns,
                          v->backfill, &l->v[first], i + 1 - first, vd->host};
    vd->hooks.judged(vd->hooks.ctx, &rv);
    first = i + 1;
  }
  if (pl_verdicts_send(&vd->out, l, pass_finished, p) < 0)
    pass_finished(p, 0);
}

/* --- the three judges ---------------------------------------------------------- */

static int judge_series(pl_verdicts *vd, ps_ledger_series *s) {
  size_t from = 0;
  while (from < s->nruns && s->runs[from].judged)
    from++;
  if (from == s->nruns)
    return 0;
  ps_verdict_run *view = malloc(s->nruns * sizeof *view);
  pl_vpass *p = calloc(1, sizeof *p);
  char **names = calloc(s->nruns - from, sizeof *names);
  char **hosts = calloc(s->nruns - from, sizeof *hosts);
  uint64_t *put_seqs = calloc(s->nruns - from, sizeof *put_seqs);
  if (!view || !p || !names || !hosts || !put_seqs) {
    free(view);
    free(p);
    free(names);
    free(hosts);
    free(put_seqs);
    return -ENOMEM;
  }
  ps_ledger_view(s, view);
  ps_verdict_series vs = {s->source, s->series, view, s->nruns};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  int rc = ps_verdict_judge(&vd->cfg->verdicts, &vs, from, &l);
  /* Another host's runs (verdicts.series_by = "test_type") are history
   * only: the point's host is this agent's, so it writes about its own. */
  size_t kept = 0;
  for (size_t i = 0; i < l.n; i++)
    if (!l.v[i].host || strcmp(l.v[i].host, vd->host) == 0)
      l.v[kept++] = l.v[i];
  l.n = kept;
  p->kind = PASS_SERIES;
  p->source = strdup(s->source);
  p->series = strdup(s->series);
  p->host = strdup(s->host);
  p->runs = names;
  p->hosts = hosts;
  p->put_seqs = put_seqs;
  for (size_t i = from; i < s->nruns; i++) {
    names[p->nruns] = strdup(s->runs[i].name);
    hosts[p->nruns] = strdup(s->runs[i].host);
    if (names[p->nruns] && hosts[p->nruns])
      put_seqs[p->nruns++] = s->runs[i].put_seq;
    else {
      free(names[p->nruns]);
      free(hosts[p->nruns]);
    }
  }
  if (rc < 0 || !p->source || !p->series || !p->host) {
    ps_log_limited(PS_LOG_ERROR, MOD, "judge", 60, "%s: cannot judge (%s)", s->series,
                   strerror(rc < 0 ? -rc : ENOMEM));
    p->failed = 1;
  }
  PS_DEBUG(MOD, "%s: %zu runs judged from %s (%zu verdicts)", s->series, s->nruns - from,
           s->runs[from].name, l.n);
  send_pass(vd, p, &l);
  ps_verdict_list_free(&l);
  free(view);
  return 0;
}

static void judge_stages(pl_verdicts *vd, pl_lg_run *r) {
  ps_verdict_run run = {r->run,       r->revision, r->start_ns, (ps_run_status)r->status,
                        r->backfill, r->values,   vd->host};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  pl_vpass *p = calloc(1, sizeof *p);
  if (!p)
    return;
  p->kind = PASS_STAGES;
  p->ended = r;
  r->in_flight = 1;
  if (ps_stage_drift(&vd->cfg->verdicts, LOADGEN, r->series, &run, r->stages, r->nstages,
                     &l) < 0)
    p->failed = 1;
  send_pass(vd, p, &l);
  ps_verdict_list_free(&l);
}

static void judge_dss(pl_verdicts *vd, pl_dss_doc *d) {
  pl_vpass *p = calloc(1, sizeof *p);
  if (!p)
    return;
  p->kind = PASS_DSS;
  p->doc = d;
  d->in_flight = 1;
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  for (size_t i = 0; i < d->ntests; i++) {
    const pl_dss_test *t = &d->tests[i];
    ps_dss_arm *arms = calloc(t->narms ? t->narms : 1, sizeof *arms);
    if (!arms) {
      p->failed = 1;
      break;
    }
    for (size_t j = 0; j < t->narms; j++)
      arms[j] = (ps_dss_arm){t->arms[j].label, t->arms[j].rps_total, t->arms[j].p95_ms,
                             t->arms[j].errors};
    ps_dss_test dt = {t->test, d->run, d->time_ns, d->backfill, arms, t->narms, t->nvariants};
    if (t->narms > 1 && ps_arm_compare(&vd->cfg->verdicts, PL_COLLECT_DSS, &dt, &l) < 0)
      p->failed = 1;
    free(arms);
  }
  send_pass(vd, p, &l);
  ps_verdict_list_free(&l);
}

/* --- the server's history --------------------------------------------------- */

/* Whether the ledger holds a whole window (window_runs successful runs)
 * before the series' first run to judge, and the time a history read has
 * to go back to: that window's first run when it does, else the first run
 * to judge less the series' span. */
static int window_covered(pl_verdicts *vd, const pl_vseries *vs, int64_t *since) {
  ps_ledger_series *s = ps_ledger_series_get(&vd->ledger, vs->source, vs->series, vs->host, 0);
  size_t from = 0, have = 0;
  while (s && from < s->nruns && s->runs[from].judged)
    from++;
  int64_t first = s && from < s->nruns ? s->runs[from].start_ns : INT64_MAX, oldest = first;
  for (size_t i = from; s && i > 0 && have < (size_t)vd->cfg->verdicts.window_runs; i--)
    if (s->runs[i - 1].status == PS_RUN_STATUS_SUCCESS) {
      have++;
      oldest = s->runs[i - 1].start_ns;
    }
  int covered = have >= (size_t)vd->cfg->verdicts.window_runs;
  if (since) {
    int64_t back = first == INT64_MAX ? 0 : first - vs->span_ns;
    *since = covered ? oldest : back;
    if (*since <= 0)
      *since = 1;
  }
  return covered;
}

typedef struct fetch_ctx {
  pl_verdicts *vd;
  char *source, *series, *host;
  int64_t since_ns; /* how far back it read */
  size_t merged;    /* runs it added to the ledger */
} fetch_ctx;

static void merge_row(void *ctx, const char *host, const char *run, const char *revision,
                      int64_t start_ns, ps_run_status status, const double *values) {
  fetch_ctx *f = ctx;
  ps_ledger *l = &f->vd->ledger;
  if (!host)
    host = "";
  if (f->host[0] && strcmp(host, f->host) != 0)
    return; /* a series per host holds that host's runs alone */
  ps_ledger_series *s = ps_ledger_series_get(l, f->source, f->series, f->host, 1);
  if (!s || ps_ledger_find(s, host, run) >= 0)
    return; /* what this agent saw itself stays as it saw it */
  if (status == PS_RUN_STATUS_NONE)
    return; /* half a run: its status point is not in yet (this agent's own
             * backfill, being written); its end brings the whole run */
  /* Runs the agent never saw end: `backfill` as their markers would say. */
  long at = ps_ledger_put(l, s, host, run, revision, start_ns, status, 1, values);
  if (at >= 0) {
    s->runs[at].judged = 1;
    f->merged++;
  }
}

static void history_done(void *arg, int rc, const char *json, size_t len, const char *err) {
  fetch_ctx *f = arg;
  pl_verdicts *vd = f->vd;
  (void)len;
  vd->fetching = 0;
  pl_vseries *vs = series_get(vd, f->source, f->series, f->host);
  ps_buf why;
  ps_buf_init(&why, 512);
  if (vs && rc == 0 &&
      pl_history_parse(json, vd->metrics, vd->nmetrics, merge_row, f, &why) < 0) {
    /* An answer that is not one is a failed read, not an empty history:
     * said, and asked again with the same back-off. */
    rc = -EPROTO;
    ps_log_limited(PS_LOG_ERROR, MOD, "history answer", 300,
                   "%s: the server's answer to the history query is not one (%s); read "
                   "again %s",
                   f->series, why.data ? why.data : "?",
                   vd->sh->once ? "at the next start" : "with back-off");
  }
  ps_buf_free(&why);
  int further = vs && rc == 0 && !window_covered(vd, vs, NULL) &&
                vs->span_ns < HISTORY_SPAN_MAX_NS;
  if (vs && rc == 0)
    PS_DEBUG(MOD, "%s%s%s: %zu runs read back from the server since %" PRId64 " ns%s",
             f->series, f->host[0] ? " on " : "", f->host, f->merged, f->since_ns,
             further ? "; not a window yet, reading further back" : "");
  if (further) {
    vs->span_ns *= 2; /* not a window's worth yet: look further back */
    vs->until_ns = f->since_ns;
  } else if (vs && (rc == 0 || rc == -ENOENT || rc == -EOPNOTSUPP)) {
    if (rc == -EOPNOTSUPP)
      ps_log_limited(PS_LOG_INFO, MOD, "no-influxql", 3600,
                     "the server has no InfluxQL query endpoint: %s is judged against the "
                     "runs this agent saw itself",
                     f->series);
    vs->synced = 1;
    vs->fails = 0;
    vs->waiting_server = 0;
    vd->sh->state_dirty = 1;
  } else if (vs && rc != -ECANCELED) {
    uint64_t delay = HISTORY_RETRY_FIRST_MS << (vs->fails < 5 ? vs->fails : 5);
    vs->fails++;
    vs->retry_at = uv_now(vd->sh->loop) + (delay < HISTORY_RETRY_MAX_MS ? delay : HISTORY_RETRY_MAX_MS);
    vs->waiting_server = vd->sh->once;
    if (rc != -EPROTO) /* said above, with what was wrong */
      ps_log_limited(PS_LOG_WARNING, MOD, "history", 300,
                     "%s: cannot read the series' history from the server (%s); its "
                     "verdicts wait%s",
                     f->series, err ? err : strerror(-rc),
                     vd->sh->once ? " for the next start" : " until it answers");
  }
  free(f->source);
  free(f->series);
  free(f->host);
  free(f);
  arm(vd, 0);
}

static int fetch_history(pl_verdicts *vd, pl_vseries *vs) {
  ps_buf q;
  ps_buf_init(&q, 0);
  fetch_ctx *f = calloc(1, sizeof *f);
  int64_t since = 0;
  window_covered(vd, vs, &since);
  int rc = f ? pl_history_query_text(vs->series, vs->host[0] ? vs->host : NULL, since,
                                     vs->until_ns, vd->metrics, vd->nmetrics, &q)
             : -ENOMEM;
  if (rc == 0 && (!(f->source = strdup(vs->source)) || !(f->series = strdup(vs->series)) ||
                  !(f->host = strdup(vs->host))))
    rc = -ENOMEM;
  if (rc == 0) {
    f->vd = vd;
    f->since_ns = since;
    rc = pl_history_fetch(vd->sh->loop, vd->cfg, q.data, history_done, f);
  }
  if (rc < 0 && f) {
    free(f->source);
    free(f->series);
    free(f->host);
    free(f);
  }
  ps_buf_free(&q);
  if (rc == 0)
    vd->fetching = 1;
  return rc;
}

/* --- the look ------------------------------------------------------------------ */

static int series_in_flight(const pl_verdicts *vd, const ps_ledger_series *s) {
  for (const pl_vpass *p = vd->passes; p; p = p->next)
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

static void timer_cb(uv_timer_t *t) {
  pl_verdicts *vd = t->data;
  if (vd->sh->stopping)
    return;
  uint64_t now = uv_now(vd->sh->loop), next = 0;
  int busy = vd->hooks.busy && vd->hooks.busy(vd->hooks.ctx);
  if (busy && !vd->busy_since)
    vd->busy_since = now;
  if (!busy)
    vd->busy_since = 0;
  int wait = busy && now - vd->busy_since < BUSY_WAIT_MAX_MS;
  /* DSS files and stage drift need no history. A pass with nothing to
   * send is done at once and drops its file or run: the next is taken
   * first. */
  for (pl_dss_doc *d = vd->collect.docs, *dn; d; d = dn) {
    dn = d->next;
    if (d->ended && !d->in_flight)
      judge_dss(vd, d);
  }
  for (pl_lg_run *r = vd->collect.runs, *rn; r; r = rn) {
    rn = r->next;
    if (r->ended && !r->in_flight)
      judge_stages(vd, r);
  }
  for (size_t i = 0; i < vd->ledger.nseries; i++) {
    ps_ledger_series *s = &vd->ledger.series[i];
    if (!series_dirty(s) || series_in_flight(vd, s))
      continue;
    pl_vseries *vs = series_get(vd, s->source, s->series, s->host);
    if (!vs)
      continue;
    if (!vs->synced) {
      if (vs->waiting_server)
        continue;
      if (vs->retry_at > now) {
        next = !next || vs->retry_at - now < next ? vs->retry_at - now : next;
        continue;
      }
      if (!vd->fetching && fetch_history(vd, vs) < 0)
        next = HISTORY_RETRY_FIRST_MS;
      continue; /* judged once the history is in */
    }
    if (wait) {
      next = JUDGE_DELAY_MS;
      continue;
    }
    judge_series(vd, s);
  }
  if (next)
    arm(vd, next);
}

/* --- input ----------------------------------------------------------------------- */

void pl_verdicts_tap(pl_verdicts *vd, const ps_point *p) {
  pl_dss_doc *doc = NULL;
  /* A point that names another host (line protocol passed through) is
   * about that host's run: this agent's verdicts are about its own. */
  const char *host = ps_point_tag(p, "host");
  if (host && strcmp(host, vd->host) != 0)
    return;
  if (pl_collect_point(&vd->collect, p, &doc) == PL_COLLECT_DSS_ENDED) {
    vd->sh->state_dirty = 1;
    arm(vd, gather_ms(vd));
  }
}

/* A stage's kernel growth is judged when its complete point is written:
 * it needs no history and no run end, and the growth comes after the run's
 * end anyway (the finished cycles are in perf-finish). Nothing is kept: a
 * verdict lost to a crash comes again when the stage is read again, and
 * the same stage point gives the same verdict points (docs/verdicts.md,
 * "Kernel growth against a limit"). */
/* A stage judged before its run's end was known waits for it, so that the
 * verdict says `backfill` as the run's markers do whatever the order the
 * folders were read in (the run's end comes from the same read). */
typedef struct pl_vgrowth {
  struct pl_vgrowth *next;
  ps_growth_stage g;
  char *run, *series, *revision;
} pl_vgrowth;

static void growth_free(pl_vgrowth *w) {
  free(w->run);
  free(w->series);
  free(w->revision);
  free(w);
}

static void limit_pass(pl_verdicts *vd, const ps_growth_stage *g) {
  pl_vpass *pass = calloc(1, sizeof *pass);
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  if (!pass)
    return;
  pass->kind = PASS_LIMIT;
  if (ps_growth_limit(&vd->cfg->verdicts, g, &l) < 0)
    pass->failed = 1;
  send_pass(vd, pass, &l);
  ps_verdict_list_free(&l);
}

/* The run `run` ended with `backfill`: its waiting stages are judged. */
static void growth_run_ended(pl_verdicts *vd, const char *run, int backfill) {
  for (pl_vgrowth **pp = &vd->growth_waiting; *pp;) {
    pl_vgrowth *w = *pp;
    if (strcmp(w->run, run) != 0) {
      pp = &w->next;
      continue;
    }
    *pp = w->next;
    w->g.backfill = backfill;
    limit_pass(vd, &w->g);
    growth_free(w);
  }
}

void pl_verdicts_slog_point(pl_verdicts *vd, const ps_point *p) {
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
  ps_ledger_series *ls = ps_ledger_series_get(&vd->ledger, LOADGEN, series, vd->series_host, 0);
  long at = ls ? ps_ledger_find(ls, vd->host, run) : -1;
  if (at >= 0) {
    g.backfill = ls->runs[at].backfill;
    limit_pass(vd, &g);
    return;
  }
  pl_vgrowth *w = calloc(1, sizeof *w);
  if (!w || !(w->run = strdup(run)) || !(w->series = strdup(series)) ||
      (g.revision && !(w->revision = strdup(g.revision)))) {
    if (w)
      growth_free(w);
    limit_pass(vd, &g); /* out of memory: judged now rather than never */
    return;
  }
  w->g = g;
  w->g.run = w->run;
  w->g.series = w->series;
  w->g.revision = w->revision;
  /* the same stage again replaces what waited */
  for (pl_vgrowth **pp = &vd->growth_waiting; *pp; pp = &(*pp)->next)
    if (strcmp((*pp)->run, run) == 0 && (*pp)->g.stage == g.stage) {
      pl_vgrowth *old = *pp;
      *pp = old->next;
      growth_free(old);
      break;
    }
  w->next = vd->growth_waiting;
  vd->growth_waiting = w;
}

void pl_verdicts_run_ended(pl_verdicts *vd, const pl_run_event *ev) {
  if (ev->kind != PL_RUN_ENDED)
    return;
  const ps_run_view *v = ev->view;
  pl_lg_run *r = pl_collect_find_run(&vd->collect, v->id.run);
  const char *series = r && r->series ? r->series : v->id.test_type;
  const char *revision = r && r->revision ? r->revision : v->id.revision;
  int64_t start = r && r->start_ns ? r->start_ns : (v->have_start ? v->start_ns : 0);
  if (series[0]) {
    ps_ledger_series *s =
        ps_ledger_series_get(&vd->ledger, LOADGEN, series, vd->series_host, 1);
    long at = s ? ps_ledger_put(&vd->ledger, s, vd->host, v->id.run, revision, start,
                                v->status, ev->backfill, r ? r->values : NULL)
                : -ENOMEM;
    if (at < 0)
      PS_ERROR(MOD, "%s: out of memory; not judged", v->id.run);
  }
  growth_run_ended(vd, v->id.run, ev->backfill);
  if (r && v->status == PS_RUN_STATUS_SUCCESS && r->nstages) {
    /* Stage drift needs no history; the run stays (and is saved) until its
     * verdicts are acknowledged. */
    r->ended = 1;
    r->status = v->status;
    r->backfill = ev->backfill;
    r->start_ns = start;
  } else if (r) {
    pl_collect_drop_run(&vd->collect, r);
  }
  vd->sh->state_dirty = 1;
  arm(vd, gather_ms(vd));
}

int pl_verdicts_quiet(const pl_verdicts *vd) {
  if (vd->passes || vd->fetching)
    return 0;
  for (const pl_dss_doc *d = vd->collect.docs; d; d = d->next)
    if (d->ended)
      return 0;
  for (const pl_lg_run *r = vd->collect.runs; r; r = r->next)
    if (r->ended)
      return 0;
  for (size_t i = 0; i < vd->ledger.nseries; i++) {
    const ps_ledger_series *s = &vd->ledger.series[i];
    if (!series_dirty(s))
      continue;
    const pl_vseries *vs = NULL;
    for (const pl_vseries *x = vd->series; x && !vs; x = x->next)
      if (!strcmp(x->source, s->source) && !strcmp(x->series, s->series) &&
          !strcmp(x->host, s->host))
        vs = x;
    if (!vs || !vs->waiting_server)
      return 0;
  }
  return 1;
}

/* --- persistence ------------------------------------------------------------------- */

char *pl_verdicts_to_json(pl_verdicts *vd) {
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return NULL;
  cJSON_AddItemToObject(o, "history", ps_ledger_to_json(&vd->ledger));
  cJSON_AddItemToObject(o, "pending", pl_collect_to_json(&vd->collect));
  char *text = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return text;
}

void pl_verdicts_from_json(pl_verdicts *vd, const char *text) {
  cJSON *o = text ? cJSON_Parse(text) : NULL;
  if (!o)
    return;
  ps_ledger_from_json(&vd->ledger, cJSON_GetObjectItemCaseSensitive(o, "history"),
                      vd->series_host, vd->host);
  pl_collect_from_json(&vd->collect, cJSON_GetObjectItemCaseSensitive(o, "pending"));
  cJSON_Delete(o);
  arm(vd, JUDGE_DELAY_MS); /* whatever was left undone */
}

void pl_verdicts_close(pl_verdicts *vd) {
  if (!uv_is_closing((uv_handle_t *)&vd->timer))
    uv_close((uv_handle_t *)&vd->timer, NULL);
}

void pl_verdicts_free(pl_verdicts *vd) {
  for (pl_vpass *p = vd->passes, *n; p; p = n) {
    n = p->next;
    pass_free(p);
  }
  for (pl_vseries *s = vd->series, *n; s; s = n) {
    n = s->next;
    free(s->source);
    free(s->series);
    free(s->host);
    free(s);
  }
  pl_collect_free(&vd->collect);
  while (vd->growth_waiting) {
    pl_vgrowth *w = vd->growth_waiting;
    vd->growth_waiting = w->next;
    growth_free(w);
  }
  ps_ledger_free(&vd->ledger);
  free(vd->metrics);
  vd->passes = NULL;
  vd->series = NULL;
}
