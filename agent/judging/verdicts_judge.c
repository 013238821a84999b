/*
 * verdicts_judge.c: the judges of the verdict stage: a series across
 * revisions (with triage decisions and candidates), a run's stages, a DSS
 * file's arms. Each makes a pass of verdicts and hands it to
 * pl_vd_send_pass(). See include/judging/verdicts.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "verdict/arm_compare.h"
#include "verdict/candidate.h"
#include "verdict/judge.h"
#include "verdict/stage_drift.h"
#include "verdicts_private.h"

#define MOD PL_VD_MOD
#define LOADGEN PL_VD_LOADGEN

/* --- the judges ------------------------------------------------------------------ */

/* The series a candidate series is judged against (verdicts.candidates),
 * or NULL when it is none. */
const char *pl_vd_candidate_against(const pl_verdicts *vd, const char *source,
                                     const char *series) {
  const ps_verdicts_cfg *v = &vd->cfg->verdicts;
  if (strcmp(source, LOADGEN) != 0)
    return NULL;
  for (size_t i = 0; i < v->candidates.nseries; i++)
    if (strcmp(v->candidates.series[i], series) == 0)
      return v->candidates.against;
  return NULL;
}

/* A candidate series' runs from `from` on against the current level of the
 * series it is judged against, appended to `l` (docs/verdicts.md,
 * "Candidates"). */
static int judge_candidates(pl_verdicts *vd, const ps_ledger_series *s,
                            const ps_verdict_series *vs, size_t from, ps_verdict_list *l) {
  const char *against = pl_vd_candidate_against(vd, s->source, s->series);
  ps_ledger_series *as =
      against ? ps_ledger_series_get(&vd->ledger, s->source, against, s->host, 0) : NULL;
  if (!as || !as->nruns)
    return 0;
  ps_verdict_run *view = malloc(as->nruns * sizeof *view);
  if (!view)
    return -ENOMEM;
  ps_ledger_view(as, view);
  for (size_t i = 0; i < as->nruns; i++) /* an excluded run is in no level */
    if (ps_triage_excluded(&vd->triage, view[i].host, view[i].name))
      view[i].status = PS_RUN_STATUS_FAILED;
  ps_verdict_series avs = {as->source, as->series, view, as->nruns};
  int rc = ps_verdict_candidate(&vd->cfg->verdicts, &avs, vs, from, l);
  free(view);
  return rc;
}

int pl_vd_judge_series(pl_verdicts *vd, ps_ledger_series *s) {
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
  /* Triage: an excluded run is in no window and no baseline (the judge
   * leaves out every run that did not succeed); a baseline decision starts
   * the series at its run. The runs before it keep their verdicts, which
   * depend on no later run. */
  for (size_t i = 0; i < s->nruns; i++)
    if (ps_triage_excluded(&vd->triage, view[i].host, view[i].name))
      view[i].status = PS_RUN_STATUS_FAILED;
  size_t start = ps_triage_baseline_start(&vd->triage, view, s->nruns);
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  int rc = 0;
  if (from < start) {
    ps_verdict_series before = {s->source, s->series, view, start};
    rc = ps_verdict_judge(&vd->cfg->verdicts, &before, from, &l);
  }
  ps_verdict_series vs = {s->source, s->series, view + start, s->nruns - start};
  if (rc == 0)
    rc = ps_verdict_judge(&vd->cfg->verdicts, &vs, from > start ? from - start : 0, &l);
  for (size_t i = from; rc == 0 && i < s->nruns; i++) {
    const ps_ledger_run *r = &s->runs[i];
    int excluded = view[i].status != r->status;
    if (!excluded && !(start && i == start))
      continue;
    /* what the run shows now in place of its old verdicts */
    for (size_t m = 0; rc == 0 && m < vd->nmetrics; m++) {
      if (isnan(r->values[m]) || !vd->cfg->verdicts.metrics[m].enabled ||
          r->status != PS_RUN_STATUS_SUCCESS)
        continue;
      ps_verdict v = ps_verdict_blank();
      v.source = s->source;
      v.series = s->series;
      v.metric = vd->metrics[m];
      v.run = r->name;
      v.host = r->host;
      v.verdict = excluded ? PS_VERDICT_EXCLUDED : PS_VERDICT_BASELINE;
      v.method = PS_METHOD_EDIVISIVE;
      v.value = r->values[m];
      v.change_run = r->name;
      v.revision = r->revision;
      v.backfill = r->backfill;
      v.time_ns = r->start_ns;
      rc = ps_verdict_list_push(&l, &v);
    }
  }
  /* The first runs of a series started anew are too few to compare: they
   * show the baseline decision, not what they were told before it. The
   * judge gives every run a verdict once min_runs runs have values, so
   * only that many after the start can lack one. */
  size_t judged_n = l.n;
  for (size_t i = start > from ? start + 1 : from;
       rc == 0 && start && i < s->nruns && i < start + 2 * (size_t)vd->cfg->verdicts.min_runs;
       i++) {
    const ps_ledger_run *r = &s->runs[i];
    if (view[i].status != PS_RUN_STATUS_SUCCESS)
      continue;
    for (size_t m = 0; rc == 0 && m < vd->nmetrics; m++) {
      if (isnan(r->values[m]) || !vd->cfg->verdicts.metrics[m].enabled)
        continue;
      int has = 0;
      for (size_t k = 0; k < judged_n && !has; k++)
        has = !strcmp(l.v[k].metric, vd->metrics[m]) && !strcmp(l.v[k].run, r->name) &&
              (!l.v[k].host || !strcmp(l.v[k].host, r->host));
      if (has)
        continue;
      ps_verdict v = ps_verdict_blank();
      v.source = s->source;
      v.series = s->series;
      v.metric = vd->metrics[m];
      v.run = r->name;
      v.host = r->host;
      v.verdict = PS_VERDICT_BASELINE;
      v.method = PS_METHOD_EDIVISIVE;
      v.value = r->values[m];
      v.change_run = s->runs[start].name;
      v.revision = r->revision;
      v.backfill = r->backfill;
      v.time_ns = r->start_ns;
      rc = ps_verdict_list_push(&l, &v);
    }
  }
  /* Candidates of this series against another series' level: the whole
   * series, its excluded runs left out like in its own judging. */
  ps_verdict_series whole = {s->source, s->series, view, s->nruns};
  if (rc == 0)
    rc = judge_candidates(vd, s, &whole, from, &l);
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
  pl_vd_send_pass(vd, p, &l);
  ps_verdict_list_free(&l);
  free(view);
  return 0;
}

void pl_vd_judge_stages(pl_verdicts *vd, pl_lg_run *r) {
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
  pl_vd_send_pass(vd, p, &l);
  ps_verdict_list_free(&l);
}

void pl_vd_judge_dss(pl_verdicts *vd, pl_dss_doc *d) {
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
    if (t->narms > 1 && ps_arm_compare(&vd->cfg->verdicts, d->source, &dt, &l) < 0)
      p->failed = 1;
    free(arms);
  }
  pl_vd_send_pass(vd, p, &l);
  ps_verdict_list_free(&l);
}
