/*
 * verdict/decide.c: a series' newest runs judged under the triage
 * decisions (include/verdict/decide.h; docs/verdicts.md "Triage").
 */
#include "verdict/decide.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verdict/candidate.h"
#include "verdict/judge.h"

/* The series as the judge sees it: an excluded run as one that did not
 * succeed, so it is in no window and no baseline. */
static ps_verdict_run *triaged_view(const ps_ledger_series *s, const ps_triage_set *t) {
  ps_verdict_run *view = malloc((s->nruns ? s->nruns : 1) * sizeof *view);
  if (!view)
    return NULL;
  ps_ledger_view(s, view);
  for (size_t i = 0; i < s->nruns; i++)
    if (ps_triage_excluded(t, view[i].host, view[i].name))
      view[i].status = PS_RUN_STATUS_FAILED;
  return view;
}

/* The verdict a decision gives a run's metric in place of a judgement. */
static int push_decided(ps_verdict_list *l, const ps_ledger_series *s, const ps_ledger_run *r,
                        const char *metric, double value, ps_verdict_kind kind,
                        const char *change_run) {
  ps_verdict v = ps_verdict_blank();
  v.source = s->source;
  v.series = s->series;
  v.metric = metric;
  v.run = r->name;
  v.host = r->host;
  v.verdict = kind;
  v.method = PS_METHOD_EDIVISIVE;
  v.value = value;
  v.change_run = change_run;
  v.revision = r->revision;
  v.backfill = r->backfill;
  v.time_ns = r->start_ns;
  return ps_verdict_list_push(l, &v);
}

/* What an excluded run, and the run a series starts anew at, show now in
 * place of their old verdicts. */
static int decided_runs(const ps_verdict_case *c, const ps_verdict_run *view, size_t start,
                        ps_verdict_list *l) {
  const ps_ledger_series *s = c->series;
  int rc = 0;
  for (size_t i = c->from; rc == 0 && i < s->nruns; i++) {
    const ps_ledger_run *r = &s->runs[i];
    int excluded = view[i].status != r->status;
    if (!excluded && !(start && i == start))
      continue;
    for (size_t m = 0; rc == 0 && m < c->cfg->nmetrics; m++) {
      if (isnan(r->values[m]) || !c->cfg->metrics[m].enabled || r->status != PS_RUN_STATUS_SUCCESS)
        continue;
      rc = push_decided(l, s, r, c->cfg->metrics[m].name, r->values[m],
                        excluded ? PS_VERDICT_EXCLUDED : PS_VERDICT_BASELINE, r->name);
    }
  }
  return rc;
}

static int has_verdict(const ps_verdict_list *l, size_t first, size_t n, const char *metric,
                       const ps_ledger_run *r) {
  for (size_t k = first; k < n; k++)
    if (!strcmp(l->v[k].metric, metric) && !strcmp(l->v[k].run, r->name) &&
        (!l->v[k].host || !strcmp(l->v[k].host, r->host)))
      return 1;
  return 0;
}

/* The first runs of a series started anew are too few to compare: they
 * show the baseline decision, not what they were told before it. The
 * judge gives every run a verdict once min_runs runs have values, so only
 * that many after the start can lack one. */
static int baseline_fill(const ps_verdict_case *c, const ps_verdict_run *view, size_t start,
                         size_t first, ps_verdict_list *l) {
  const ps_ledger_series *s = c->series;
  size_t judged_n = l->n;
  int rc = 0;
  for (size_t i = start > c->from ? start + 1 : c->from;
       rc == 0 && start && i < s->nruns && i < start + 2 * (size_t)c->cfg->min_runs; i++) {
    const ps_ledger_run *r = &s->runs[i];
    if (view[i].status != PS_RUN_STATUS_SUCCESS)
      continue;
    for (size_t m = 0; rc == 0 && m < c->cfg->nmetrics; m++) {
      const char *metric = c->cfg->metrics[m].name;
      if (isnan(r->values[m]) || !c->cfg->metrics[m].enabled ||
          has_verdict(l, first, judged_n, metric, r))
        continue;
      rc = push_decided(l, s, r, metric, r->values[m], PS_VERDICT_BASELINE, s->runs[start].name);
    }
  }
  return rc;
}

/* A candidate series' runs from c->from on against the current level of
 * its reference series (docs/verdicts.md, "Candidates"). */
static int candidates(const ps_verdict_case *c, const ps_verdict_series *whole,
                      ps_verdict_list *l) {
  const ps_ledger_series *as = c->against;
  if (!as || !as->nruns)
    return 0;
  ps_verdict_run *view = triaged_view(as, c->triage);
  if (!view)
    return -ENOMEM;
  ps_verdict_series avs = {as->source, as->series, view, as->nruns};
  int rc = ps_verdict_candidate(c->cfg, &avs, whole, c->from, l);
  free(view);
  return rc;
}

/* What a benchmarker run's steps say against the report before it: the
 * lowest load where it did not complete a step and `before` did, and how
 * many more such loads (docs/verdicts.md "Benchmarker: across releases"). */
static void step_note(const ps_ledger_run *before, const ps_ledger_run *run, char *out,
                      size_t cap) {
  const ps_ledger_step *lost = NULL;
  size_t more = 0;
  for (size_t i = 0; i < run->nsteps; i++) {
    const ps_ledger_step *st = &run->steps[i];
    int held = 0;
    for (size_t j = 0; st->end != PS_STEP_COMPLETED && j < before->nsteps; j++)
      held |= before->steps[j].load == st->load && before->steps[j].end == PS_STEP_COMPLETED;
    if (!held)
      continue;
    more += lost != NULL;
    if (!lost || st->load < lost->load)
      lost = st;
  }
  out[0] = '\0';
  if (!lost)
    return;
  /* the release that held it, when it is another; else the report */
  int other = before->revision && (!run->revision || strcmp(before->revision, run->revision));
  char more_text[48] = "";
  if (more)
    snprintf(more_text, sizeof more_text, " (and %zu more step%s)", more, more == 1 ? "" : "s");
  snprintf(out, cap, "step at %g users %s%s; %s%s%s was stable there", lost->load,
           lost->end == PS_STEP_UNSTABLE ? "went Unstable" : "never got stable", more_text,
           other ? before->revision : "the previous report, ", other ? "" : before->name,
           other ? "" : ",");
}

/* Each verdict of a run that kept its steps (a benchmarker report's
 * scenario) gets the note of its steps against the run before it that
 * counts (a successful run, not excluded), "" when there is nothing to
 * say: the field is always written (verdict.h). */
static void step_notes(const ps_ledger_series *s, const ps_verdict_run *view, ps_verdict_list *l,
                       size_t first) {
  for (size_t i = first; i < l->n; i++) {
    ps_verdict *v = &l->v[i];
    long k = v->method == PS_METHOD_EDIVISIVE ? ps_ledger_find(s, v->host, v->run) : -1;
    if (k < 0 || !s->runs[k].nsteps)
      continue;
    v->has_note = 1;
    v->note[0] = '\0';
    if (v->verdict == PS_VERDICT_EXCLUDED || v->verdict == PS_VERDICT_BASELINE)
      continue; /* a decision, not a judgement: "" replaces what was said */
    long j = k - 1;
    while (j >= 0 && (view[j].status != PS_RUN_STATUS_SUCCESS || !s->runs[j].nsteps))
      j--;
    if (j >= 0)
      step_note(&s->runs[j], &s->runs[k], v->note, sizeof v->note);
  }
}

int ps_verdict_decide_series(const ps_verdict_case *c, ps_verdict_list *out) {
  const ps_ledger_series *s = c->series;
  if (c->from >= s->nruns)
    return 0;
  ps_verdict_run *view = triaged_view(s, c->triage);
  if (!view)
    return -ENOMEM;
  size_t first = out->n;
  /* a baseline decision starts the series at its run; the runs before it
   * keep their verdicts, which depend on no later run */
  size_t start = ps_triage_baseline_start(c->triage, view, s->nruns);
  int rc = 0;
  if (c->from < start) {
    ps_verdict_series before = {s->source, s->series, view, start};
    rc = ps_verdict_judge(c->cfg, &before, c->from, out);
  }
  ps_verdict_series since = {s->source, s->series, view + start, s->nruns - start};
  if (rc == 0)
    rc = ps_verdict_judge(c->cfg, &since, c->from > start ? c->from - start : 0, out);
  rc = rc ? rc : decided_runs(c, view, start, out);
  rc = rc ? rc : baseline_fill(c, view, start, first, out);
  ps_verdict_series whole = {s->source, s->series, view, s->nruns};
  rc = rc ? rc : candidates(c, &whole, out);
  /* another host's runs (verdicts.series_by = "test_type") are history
   * only: the point's host is this agent's, so it writes about its own */
  size_t kept = first;
  for (size_t i = first; i < out->n; i++)
    if (!out->v[i].host || !c->host || strcmp(out->v[i].host, c->host) == 0)
      out->v[kept++] = out->v[i];
  out->n = kept;
  step_notes(s, view, out, first);
  free(view);
  return rc;
}
