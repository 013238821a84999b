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

/* The rows ps_explain reads. */
typedef struct rows {
  const ps_explain_stage_row *stages;
  size_t nstages;
  const ps_explain_vat_row *vats;
  size_t nvats;
} rows;

/* Each growth figure's largest value over the run's stages that take part. */
static void run_growth(const rows *in, const char *run, ps_explanation *out) {
  for (int g = 0; g < PS_GROWTH_NFIGURES; g++) {
    out->growth[g] = NAN;
    for (size_t i = 0; i < in->nstages; i++) {
      const ps_explain_stage_row *s = &in->stages[i];
      if (takes_part(s) && s->run && strcmp(s->run, run) == 0 && isfinite(s->growth[g]) &&
          (isnan(out->growth[g]) || s->growth[g] > out->growth[g]))
        out->growth[g] = s->growth[g];
    }
  }
}

/* Whether a vat row is the run's, in one of its stages that take part. */
static int counts_for(const rows *in, const ps_explain_vat_row *v, const char *run) {
  const ps_explain_stage_row *s;
  return v->vat && v->run && strcmp(v->run, run) == 0 &&
         (s = stage_of(in->stages, in->nstages, run, v->stage)) && takes_part(s);
}

/* The run's delivery seconds per vat. */
static void sum_now(const rows *in, const char *run, acc *a, size_t *na) {
  for (size_t i = 0; i < in->nvats; i++) {
    const ps_explain_vat_row *v = &in->vats[i];
    if (!counts_for(in, v, run))
      continue;
    acc *x = acc_get(a, na, v->vat);
    if (isfinite(v->delivery_s))
      x->now_s += v->delivery_s;
    if (v->name)
      x->name = v->name;
  }
}

/* One old run's per-cycle seconds of each vat, added to the old level;
 * a vat absent from it does not count it. */
static void add_old_run(const rows *in, const char *old, double cycles, acc *a, size_t *na) {
  for (size_t k = 0; k < *na; k++)
    a[k].in_run = 0, a[k].then_run_s = 0;
  for (size_t i = 0; i < in->nvats; i++) {
    const ps_explain_vat_row *v = &in->vats[i];
    if (!counts_for(in, v, old))
      continue;
    acc *x = acc_get(a, na, v->vat);
    if (!x->in_run) {
      x->in_run = 1;
      x->then_run_s = 0;
    }
    if (isfinite(v->delivery_s))
      x->then_run_s += v->delivery_s;
    if (!x->name && v->name)
      x->name = v->name;
  }
  for (size_t k = 0; k < *na; k++)
    if (a[k].in_run) {
      a[k].then_sum += a[k].then_run_s / cycles;
      a[k].then_n++;
    }
}

/* The vats whose per-cycle seconds moved most from the old level to the
 * run, largest move first. */
static void pick_top(acc *a, size_t na, double cycles, ps_explanation *out) {
  for (size_t k = 0; k < na; k++) {
    a[k].now = cycles > 0 ? a[k].now_s / cycles : 0;
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
}

int ps_explain(const char *run, const char *const *old_runs, size_t nold,
               const ps_explain_stage_row *stages, size_t nstages,
               const ps_explain_vat_row *vats, size_t nvats, ps_explanation *out) {
  const rows in = {stages, nstages, vats, nvats};
  memset(out, 0, sizeof *out);
  out->boyd_then = out->boyd_now = NAN;
  run_growth(&in, run, out);
  acc *a = calloc(nvats ? nvats : 1, sizeof *a);
  if (!a)
    return -ENOMEM;
  size_t na = 0;
  double del = 0, boyd = 0, cyc = run_cycles(stages, nstages, run, &del, &boyd);
  if (del > 0)
    out->boyd_now = boyd / del;
  if (cyc > 0)
    sum_now(&in, run, a, &na);
  double share_sum = 0;
  size_t share_n = 0;
  for (size_t r = 0; r < nold; r++) {
    double odel = 0, oboyd = 0, oc = run_cycles(stages, nstages, old_runs[r], &odel, &oboyd);
    if (oc <= 0)
      continue;
    out->old_runs++;
    if (odel > 0) {
      share_sum += oboyd / odel;
      share_n++;
    }
    add_old_run(&in, old_runs[r], oc, a, &na);
  }
  if (share_n)
    out->boyd_then = share_sum / (double)share_n;
  pick_top(a, na, cyc, out);
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
