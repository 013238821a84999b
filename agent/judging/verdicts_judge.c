/*
 * verdicts_judge.c: the judges of the verdict stage: a series across
 * revisions (the rules, with triage decisions and candidates, are
 * verdict/decide.h's), a run's stages, a DSS file's arms. Each returns a
 * pass and its verdicts, which the driver (verdicts.c) sends. See
 * include/judging/verdicts.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "verdict/arm_compare.h"
#include "verdict/decide.h"
#include "verdict/stage_drift.h"
#include "verdicts_private.h"

#define MOD JD_VERDICTS_MOD
#define LOADGEN JD_VERDICTS_LOADGEN

/* --- the judges ------------------------------------------------------------------ */

/* The series a candidate series is judged against (verdicts.candidates),
 * or NULL when it is none. */
const char *jd_verdicts_candidate_against(const jd_verdicts *vd, const char *source,
                                          const char *series) {
  const ps_verdicts_cfg *v = &vd->cfg->verdicts;
  if (strcmp(source, LOADGEN) != 0)
    return NULL;
  for (size_t i = 0; i < v->candidates.nseries; i++)
    if (strcmp(v->candidates.series[i], series) == 0)
      return v->candidates.against;
  return NULL;
}

/* The rules are the engine's (verdict/decide.h); this finds their inputs
 * (the first run not judged yet, a candidate's reference series) and
 * returns what comes out with the runs it marks. */
jd_vpass *jd_verdicts_judge_series(jd_verdicts *vd, ps_ledger_series *s, ps_verdict_list *l) {
  size_t from = 0;
  while (from < s->nruns && s->runs[from].judged)
    from++;
  if (from == s->nruns)
    return NULL;
  jd_vpass *p = calloc(1, sizeof *p);
  char **names = calloc(s->nruns - from, sizeof *names);
  char **hosts = calloc(s->nruns - from, sizeof *hosts);
  uint64_t *put_seqs = calloc(s->nruns - from, sizeof *put_seqs);
  if (!p || !names || !hosts || !put_seqs) {
    free(p);
    free(names);
    free(hosts);
    free(put_seqs);
    return NULL;
  }
  const char *against = jd_verdicts_candidate_against(vd, s->source, s->series);
  ps_verdict_case c = {&vd->cfg->verdicts,
                       s,
                       from,
                       &vd->triage.in_force,
                       against ? ps_ledger_series_get(&vd->ledger, s->source, against, s->host, 0)
                               : NULL,
                       vd->host};
  int rc = ps_verdict_decide_series(&c, l);
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
           s->runs[from].name, l->n);
  return p;
}

jd_vpass *jd_verdicts_judge_stages(jd_verdicts *vd, jd_lg_run *r, ps_verdict_list *l) {
  ps_verdict_run run = {r->run,      r->revision, r->start_ns, (ps_run_status)r->status,
                        r->backfill, r->values,   vd->host};
  jd_vpass *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->kind = PASS_STAGES;
  p->ended = r;
  r->in_flight = 1;
  ps_stage_samples *samples;
  size_t nsamples;
  double *store;
  if (jd_verdicts_collect_stage_samples(r, &samples, &nsamples, &store) < 0 ||
      ps_stage_drift(&vd->cfg->verdicts, LOADGEN, r->series, &run, r->stages, r->nstages, samples,
                     nsamples, l) < 0)
    p->failed = 1;
  free(samples);
  free(store);
  return p;
}

jd_vpass *jd_verdicts_judge_dss(jd_verdicts *vd, jd_dss_doc *d, ps_verdict_list *l) {
  jd_vpass *p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->kind = PASS_DSS;
  p->doc = d;
  d->in_flight = 1;
  for (size_t i = 0; i < d->ntests; i++) {
    const jd_dss_test *t = &d->tests[i];
    ps_dss_arm *arms = calloc(t->narms ? t->narms : 1, sizeof *arms);
    if (!arms) {
      p->failed = 1;
      break;
    }
    for (size_t j = 0; j < t->narms; j++)
      arms[j] = (ps_dss_arm){t->arms[j].label, t->arms[j].rps_total, t->arms[j].p95_ms,
                             t->arms[j].errors};
    ps_dss_test dt = {t->test, d->run, d->time_ns, d->backfill, arms, t->narms, t->nvariants};
    if (t->narms > 1 && ps_arm_compare(&vd->cfg->verdicts, d->source, &dt, l) < 0)
      p->failed = 1;
    free(arms);
  }
  return p;
}
