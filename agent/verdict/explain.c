/*
 * explain.c: the cause beside a verdict. See include/verdict/explain.h.
 *
 * Design
 * - Per cycle, not per stage or per run: runs of different lengths and
 *   stage counts compare (docs/verdicts.md, "Why it got slower").
 * - Quadratic joins over small inputs: a run has a few stages and a few
 *   dozen vats, the old level at most the judge's window of runs.
 */
#include "verdict/explain.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct acc {
  const char *vat, *name;
  double now_s, then_sum; /* now: seconds; then: sum of the old runs' per-cycle figures */
  double then_run_s;      /* the old run being summed */
  int then_n, in_run;
  double now, then;
} acc;

static int takes_part(const ps_explain_stage_row *s) {
  return s->stage > 0 && !s->partial && isfinite(s->cycles) && s->cycles > 0;
}

static const ps_explain_stage_row *stage_of(const ps_explain_stage_row *st, size_t n,
                                            const char *run, int stage) {
  for (size_t i = 0; i < n; i++)
    if (st[i].stage == stage && st[i].run && strcmp(st[i].run, run) == 0)
      return &st[i];
  return NULL;
}

static acc *acc_get(acc *a, size_t *n, const char *vat) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp(a[i].vat, vat) == 0)
      return &a[i];
  acc *x = &a[(*n)++];
  memset(x, 0, sizeof *x);
  x->vat = vat;
  return x;
}

static int by_change(const void *pa, const void *pb) {
  const acc *a = pa, *b = pb;
  double ca = fabs(a->now - a->then), cb = fabs(b->now - b->then);
  if (ca != cb)
    return ca < cb ? 1 : -1;
  return strcmp(a->vat, b->vat);
}

/* Cycles, delivery and BOYD seconds of a run's stages that take part. */
static double run_cycles(const ps_explain_stage_row *st, size_t n, const char *run, double *del,
                         double *boyd) {
  double c = 0;
  for (size_t i = 0; i < n; i++)
    if (takes_part(&st[i]) && st[i].run && strcmp(st[i].run, run) == 0) {
      c += st[i].cycles;
      if (del && isfinite(st[i].delivery_s))
        *del += st[i].delivery_s;
      if (boyd && isfinite(st[i].boyd_s))
        *boyd += st[i].boyd_s;
    }
  return c;
}

int ps_explain(const char *run, const char *const *old_runs, size_t nold,
               const ps_explain_stage_row *stages, size_t nstages,
               const ps_explain_vat_row *vats, size_t nvats, ps_explanation *out) {
  memset(out, 0, sizeof *out);
  out->boyd_then = out->boyd_now = NAN;
  for (int g = 0; g < PS_GROWTH_NFIGURES; g++) {
    out->growth[g] = NAN;
    for (size_t i = 0; i < nstages; i++)
      if (takes_part(&stages[i]) && stages[i].run && strcmp(stages[i].run, run) == 0 &&
          isfinite(stages[i].growth[g]) &&
          (isnan(out->growth[g]) || stages[i].growth[g] > out->growth[g]))
        out->growth[g] = stages[i].growth[g];
  }
  acc *a = calloc(nvats ? nvats : 1, sizeof *a);
  if (!a)
    return -ENOMEM;
  size_t na = 0;
  double del = 0, boyd = 0, cyc = run_cycles(stages, nstages, run, &del, &boyd);
  if (del > 0)
    out->boyd_now = boyd / del;
  for (size_t i = 0; cyc > 0 && i < nvats; i++) {
    const ps_explain_vat_row *v = &vats[i];
    const ps_explain_stage_row *s;
    if (!v->vat || !v->run || strcmp(v->run, run) != 0 ||
        !(s = stage_of(stages, nstages, run, v->stage)) || !takes_part(s))
      continue;
    acc *x = acc_get(a, &na, v->vat);
    if (isfinite(v->delivery_s))
      x->now_s += v->delivery_s;
    if (v->name)
      x->name = v->name;
  }
  double share_sum = 0;
  size_t share_n = 0;
  for (size_t r = 0; r < nold; r++) {
    const char *old = old_runs[r];
    double odel = 0, oboyd = 0, oc = run_cycles(stages, nstages, old, &odel, &oboyd);
    if (oc <= 0)
      continue;
    out->old_runs++;
    if (odel > 0) {
      share_sum += oboyd / odel;
      share_n++;
    }
    for (size_t k = 0; k < na; k++)
      a[k].in_run = 0, a[k].then_run_s = 0;
    for (size_t i = 0; i < nvats; i++) {
      const ps_explain_vat_row *v = &vats[i];
      const ps_explain_stage_row *s;
      if (!v->vat || !v->run || strcmp(v->run, old) != 0 ||
          !(s = stage_of(stages, nstages, old, v->stage)) || !takes_part(s))
        continue;
      acc *x = acc_get(a, &na, v->vat);
      if (!x->in_run) {
        x->in_run = 1;
        x->then_run_s = 0;
      }
      if (isfinite(v->delivery_s))
        x->then_run_s += v->delivery_s;
      if (!x->name && v->name)
        x->name = v->name;
    }
    for (size_t k = 0; k < na; k++)
      if (a[k].in_run) {
        a[k].then_sum += a[k].then_run_s / oc;
        a[k].then_n++;
      }
  }
  if (share_n)
    out->boyd_then = share_sum / (double)share_n;
  for (size_t k = 0; k < na; k++) {
    a[k].now = cyc > 0 ? a[k].now_s / cyc : 0;
    a[k].then = a[k].then_n ? a[k].then_sum / a[k].then_n : 0;
  }
  qsort(a, na, sizeof *a, by_change);
  for (size_t k = 0; k < na && out->ntop < PS_EXPLAIN_TOP; k++) {
    ps_explain_vat *t = &out->top[out->ntop++];
    snprintf(t->vat, sizeof t->vat, "%s", a[k].vat);
    snprintf(t->name, sizeof t->name, "%s", a[k].name ? a[k].name : "");
    t->then = a[k].then;
    t->now = a[k].now;
  }
  free(a);
  return 0;
}

static int pct(ps_buf *out, double v) {
  return isfinite(v) ? ps_buf_printf(out, "%.1f %%", v * 100.0) : ps_buf_puts(out, "-");
}

int ps_explain_text(const ps_explanation *e, ps_buf *out) {
  int rc = ps_buf_printf(out, "vats by change of delivery seconds per cycle (against %zu "
                              "run%s of the old level):",
                         e->old_runs, e->old_runs == 1 ? "" : "s");
  for (size_t i = 0; rc == 0 && i < e->ntop; i++) {
    const ps_explain_vat *v = &e->top[i];
    rc = ps_buf_printf(out, "\n  %zu. %s%s%s%s: %.6f -> %.6f s (%+.6f)", i + 1, v->vat,
                       v->name[0] ? " (" : "", v->name, v->name[0] ? ")" : "", v->then, v->now,
                       v->now - v->then);
  }
  if (rc == 0 && !e->ntop)
    rc = ps_buf_puts(out, " none (no complete slog stage with cycles)");
  if (rc == 0)
    rc = ps_buf_puts(out, "\nBOYD share of delivery time: ");
  if (rc == 0)
    rc = pct(out, e->boyd_then);
  if (rc == 0)
    rc = ps_buf_puts(out, " then, ");
  if (rc == 0)
    rc = pct(out, e->boyd_now);
  if (rc == 0)
    rc = ps_buf_puts(out, " now\nkernel growth per cycle:");
  for (int g = 0; rc == 0 && g < PS_GROWTH_NFIGURES; g++) {
    const ps_figure *f = ps_growth_figure((ps_growth_figure_id)g);
    rc = isfinite(e->growth[g])
             ? ps_buf_printf(out, "%s %s %.6g", g ? "," : "", f->label, e->growth[g])
             : ps_buf_printf(out, "%s %s -", g ? "," : "", f->label);
  }
  return rc;
}
