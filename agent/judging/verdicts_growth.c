/*
 * verdicts_growth.c: a loadgen stage's kernel growth per cycle judged
 * against verdicts.max_growth_per_cycle when its complete slog point is
 * written (docs/verdicts.md, "Kernel growth against a limit"). See
 * include/judging/verdicts.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/figures.h"
#include "core/log.h"
#include "verdict/growth_limit.h"
#include "verdicts_private.h"

#define LOADGEN PL_VD_LOADGEN

/* A stage's kernel growth is judged when its complete point is written:
 * it needs no history and no run end, and the growth comes after the run's
 * end anyway (the finished cycles are in perf-finish). Nothing is kept: a
 * verdict lost to a crash comes again when the stage is read again, and
 * the same stage point gives the same verdict points (docs/verdicts.md,
 * "Kernel growth against a limit"). */
/* A stage judged before its run's end was known waits for it, so that the
 * verdict says `backfill` as the run's markers do whatever the order the
 * folders were read in (the run's end comes from the same read). */

void pl_vd_growth_free(pl_vgrowth *w) {
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
  pl_vd_send_pass(vd, pass, &l);
  ps_verdict_list_free(&l);
}

static void fold_into_run(pl_verdicts *vd, const ps_growth_stage *g);

/* The run `run` ended with `backfill`: its waiting stages are judged. */
void pl_vd_growth_run_ended(pl_verdicts *vd, const char *run, int backfill) {
  for (pl_vgrowth **pp = &vd->growth_waiting; *pp;) {
    pl_vgrowth *w = *pp;
    if (strcmp(w->run, run) != 0) {
      pp = &w->next;
      continue;
    }
    *pp = w->next;
    w->g.backfill = backfill;
    limit_pass(vd, &w->g);
    fold_into_run(vd, &w->g);
    pl_vd_growth_free(w);
  }
}

/* --- growth across revisions ----------------------------------------------- */

static long metric_index(const pl_verdicts *vd, ps_growth_figure_id id) {
  const char *name = ps_growth_figure(id)->name;
  for (size_t i = 0; i < vd->nmetrics; i++)
    if (strcmp(vd->metrics[i], name) == 0)
      return (long)i;
  return -1;
}

void pl_vd_growth_of(const pl_verdicts *vd, const ps_ledger_run *r,
                     double out[PS_GROWTH_NFIGURES]) {
  for (int i = 0; i < PS_GROWTH_NFIGURES; i++) {
    long m = r ? metric_index(vd, (ps_growth_figure_id)i) : -1;
    out[i] = m >= 0 ? r->values[m] : NAN;
  }
}

int pl_vd_growth_fold(pl_verdicts *vd, ps_ledger_run *r, const double g[PS_GROWTH_NFIGURES]) {
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

void pl_vd_rejudge_from(pl_verdicts *vd, ps_ledger_series *s, size_t at) {
  for (size_t j = at; j < s->nruns; j++) {
    s->runs[j].judged = 0;
    s->runs[j].put_seq = ++vd->ledger.last_put_seq;
  }
  vd->sh->state_dirty = 1;
  pl_vd_arm(vd, 0);
}

/* A judged stage's growth raises its run's: a run already judged is judged
 * again with it, and the runs after it too (their window holds it). A run
 * the ledger does not know yet gets it at its end. */
static void fold_into_run(pl_verdicts *vd, const ps_growth_stage *g) {
  ps_ledger_series *s = ps_ledger_series_get(&vd->ledger, LOADGEN, g->series, vd->series_host, 0);
  long at = s ? ps_ledger_find(s, vd->host, g->run) : -1;
  if (at < 0 || !pl_vd_growth_fold(vd, &s->runs[at], g->growth))
    return;
  if (s->runs[at].judged)
    PS_INFO(PL_VD_MOD, "%s: the kernel growth of stage %d is in: the run is judged again with it",
            g->run, g->stage);
  pl_vd_rejudge_from(vd, s, (size_t)at);
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
    fold_into_run(vd, &g);
    return;
  }
  pl_vgrowth *w = calloc(1, sizeof *w);
  if (!w || !(w->run = strdup(run)) || !(w->series = strdup(series)) ||
      (g.revision && !(w->revision = strdup(g.revision)))) {
    if (w)
      pl_vd_growth_free(w);
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
      pl_vd_growth_free(old);
      break;
    }
  w->next = vd->growth_waiting;
  vd->growth_waiting = w;
}

