/*
 * formats/benchmarker_figures.c: a read benchmarker report made into
 * points (agent/formats/benchmarker_private.h; every figure is defined in
 * docs/schema.md "Benchmarker").
 *
 * DESIGN
 * - A step's window is [throughput_stability_time, end_time], both ends
 *   included, on the operations' completion time t1, as the tool's
 *   analysis selects them. Throughput counts successful operations;
 *   latency and the unsuccessful share take every outcome, as the
 *   analysis's latency_of_step does.
 * - Operations are sorted by t1 once, so a step's operations are found by
 *   two binary searches.
 * - Percentiles interpolate linearly between order statistics at rank
 *   q (n - 1), the default of numpy's percentile.
 * - Everything is computed once (ps_benchmarker_figures_build) and the operations
 *   freed, so a resumed emission (-EAGAIN) costs nothing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/point.h"
#include "benchmarker_private.h"

#define BM_TEXT_MAX 1024
#define BM_FIT_MIN_POINTS 3

struct bm_figure {
  size_t scenario, step;
  int type; /* -1: every operation type together */
  double load_factor;
  int reason;
  int has_window, has_latency;
  int64_t end_ns;
  double stable_s, throughput, unsuccessful_share;
  int64_t successful, unsuccessful;
  double lat_mean, lat_p50, lat_p95, lat_p99, lat_max;
};

struct bm_fit {
  size_t scenario;
  int type;
  int64_t time_ns;
  ps_usl_fit_result res;
  size_t discarded;
  double kept_max; /* the largest load kept by the fit */
  char discarded_loads[256];
};

static const char *reason_name(int r) {
  return r == BM_REASON_COMPLETED  ? "Completed"
         : r == BM_REASON_UNSTABLE ? "Unstable"
                                   : "StabilityNotAchieved";
}

void ps_benchmarker_report_free(bm_report *r) {
  for (size_t i = 0; i < r->nscen; i++) {
    free(r->scen[i].ops);
    free(r->scen[i].steps);
    for (size_t t = 0; t < r->scen[i].ntypes; t++)
      free(r->scen[i].types[t]);
  }
  free(r->scen);
  free(r->cfg);
  free(r->actions);
  free(r->figures);
  free(r->fits);
  free(r->arms);
  memset(r, 0, sizeof *r);
}

/* ---- arms -------------------------------------------------------------- */

static void fill(char *dst, const char *src) {
  if (!dst[0] && src[0])
    snprintf(dst, BM_NAME_MAX, "%s", src);
}

static const bm_action *action_named(const bm_report *r, const char *name) {
  for (size_t i = 0; i < r->nactions; i++)
    if (strcmp(r->actions[i].name, name) == 0)
      return &r->actions[i];
  return NULL;
}

/* Names from the metadata (the report's, then the configuration's); 1 when
 * the metadata named an arm itself. */
static int names_from_metadata(const bm_report *r, size_t i, bm_names *n) {
  memset(n, 0, sizeof *n);
  fill(n->arm, r->scen[i].meta.arm);
  fill(n->image, r->scen[i].meta.image);
  fill(n->datastore, r->scen[i].meta.datastore);
  if (i < r->ncfg) {
    fill(n->arm, r->cfg[i].meta.arm);
    fill(n->image, r->cfg[i].meta.image);
    fill(n->datastore, r->cfg[i].meta.datastore);
  }
  fill(n->arm, n->image);
  fill(n->arm, n->datastore);
  return n->arm[0] != 0;
}

static void names_from_setup(const bm_report *r, size_t i, bm_names *n) {
  if (i >= r->ncfg)
    return;
  for (size_t s = 0; s < r->cfg[i].nsetup; s++) {
    const bm_action *a = action_named(r, r->cfg[i].setup[s]);
    if (a) {
      fill(n->image, a->image);
      fill(n->datastore, a->datastore);
    }
  }
}

/* Scenarios named only by their setup: the arm is what differs between
 * them (the datastore when only it does, else the image). */
static void resolve_arms(bm_report *r) {
  int *by_setup = calloc(r->nscen ? r->nscen : 1, sizeof *by_setup);
  int image_varies = 0, datastore_varies = 0;
  const bm_names *first = NULL;
  for (size_t i = 0; i < r->nscen; i++) {
    int named = names_from_metadata(r, i, &r->arms[i]);
    names_from_setup(r, i, &r->arms[i]);
    if (named)
      continue;
    if (by_setup)
      by_setup[i] = 1;
    if (!first) {
      first = &r->arms[i];
      continue;
    }
    image_varies |= strcmp(first->image, r->arms[i].image) != 0;
    datastore_varies |= strcmp(first->datastore, r->arms[i].datastore) != 0;
  }
  for (size_t i = 0; i < r->nscen; i++) {
    if (!by_setup || !by_setup[i])
      continue;
    bm_names *n = &r->arms[i];
    if (datastore_varies && !image_varies)
      fill(n->arm, n->datastore);
    fill(n->arm, n->image);
    fill(n->arm, n->datastore);
  }
  for (size_t i = 0; i < r->nscen; i++)
    fill(r->arms[i].arm, r->configured_arm);
  free(by_setup);
}

/* ---- a step's figures ---------------------------------------------------- */

static int cmp_op_t1(const void *a, const void *b) {
  int64_t x = ((const bm_op *)a)->t1_ns, y = ((const bm_op *)b)->t1_ns;
  return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* First index whose t1 >= t (or > t when `after`). */
static size_t lower_bound(const bm_op *ops, size_t n, int64_t t, int after) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ops[mid].t1_ns < t || (after && ops[mid].t1_ns == t))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static double percentile(const double *sorted, size_t n, double q) {
  double rank = q * (double)(n - 1);
  size_t lo = (size_t)floor(rank);
  if (lo + 1 >= n)
    return sorted[n - 1];
  double frac = rank - (double)lo;
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

static void window_figures(bm_figure *f, const bm_op *ops, size_t lo, size_t hi, const bm_step *st,
                           double *lat) {
  size_t n = 0;
  double sum = 0.0;
  for (size_t i = lo; i < hi; i++) {
    if (f->type >= 0 && ops[i].type != f->type)
      continue;
    double l = (double)(ops[i].t1_ns - ops[i].t0_ns) / 1e9;
    lat[n++] = l;
    sum += l;
    if (ops[i].successful)
      f->successful++;
    else
      f->unsuccessful++;
  }
  double dur = (double)(st->end_ns - st->stable_ns) / 1e9;
  f->stable_s = dur;
  f->throughput = dur > 0 ? (double)f->successful / dur : 0.0;
  if (!n)
    return;
  f->has_latency = 1;
  f->unsuccessful_share = (double)f->unsuccessful / (double)n;
  qsort(lat, n, sizeof *lat, cmp_double);
  f->lat_mean = sum / (double)n;
  f->lat_p50 = percentile(lat, n, 0.50);
  f->lat_p95 = percentile(lat, n, 0.95);
  f->lat_p99 = percentile(lat, n, 0.99);
  f->lat_max = lat[n - 1];
}

static int scenario_figures(bm_report *r, size_t si, bm_figure *out, size_t *nout) {
  bm_scenario *s = &r->scen[si];
  if (s->nops)
    qsort(s->ops, s->nops, sizeof *s->ops, cmp_op_t1);
  double *lat = malloc((s->nops ? s->nops : 1) * sizeof *lat);
  if (!lat)
    return -ENOMEM;
  for (size_t k = 0; k < s->nsteps; k++) {
    const bm_step *st = &s->steps[k];
    if (!st->usable)
      continue;
    size_t lo = 0, hi = 0;
    if (st->has_window) {
      lo = lower_bound(s->ops, s->nops, st->stable_ns, 0);
      hi = lower_bound(s->ops, s->nops, st->end_ns, 1);
    }
    for (int t = -1; t < (int)s->ntypes; t++) {
      bm_figure *f = &out[(*nout)++];
      memset(f, 0, sizeof *f);
      f->scenario = si;
      f->step = k;
      f->type = t;
      f->load_factor = st->load_factor;
      f->reason = st->reason;
      f->end_ns = st->end_ns;
      f->has_window = st->has_window;
      if (st->has_window)
        window_figures(f, s->ops, lo, hi, st, lat);
    }
  }
  free(lat);
  free(s->ops);
  s->ops = NULL;
  s->nops = s->cap = 0;
  return 0;
}

/* ---- the fit ------------------------------------------------------------- */

static void scenario_fit(bm_report *r, size_t si, int type, const bm_figure *figs, size_t nf) {
  double x[512], y[512];
  int kept[512];
  size_t n = 0;
  int64_t last = 0;
  for (size_t i = 0; i < nf; i++) {
    const bm_figure *f = &figs[i];
    if (f->scenario != si || f->type != type)
      continue;
    if (f->end_ns > last)
      last = f->end_ns;
    if (f->reason == BM_REASON_COMPLETED && f->has_window && n < 512) {
      x[n] = f->load_factor;
      y[n++] = f->throughput;
    }
  }
  bm_fit fit;
  memset(&fit, 0, sizeof fit);
  if (n < BM_FIT_MIN_POINTS || ps_usl_fit(x, y, n, kept, &fit.res) != 0)
    return;
  fit.scenario = si;
  fit.type = type;
  fit.time_ns = last;
  size_t used = 0;
  for (size_t i = 0; i < n; i++) {
    if (kept[i] && x[i] > fit.kept_max)
      fit.kept_max = x[i];
    if (kept[i])
      continue;
    fit.discarded++;
    int w = snprintf(fit.discarded_loads + used, sizeof fit.discarded_loads - used, "%s%g",
                     used ? "," : "", x[i]);
    if (w > 0 && (size_t)w < sizeof fit.discarded_loads - used)
      used += (size_t)w;
  }
  r->fits[r->nfits++] = fit;
}

int ps_benchmarker_figures_build(bm_report *r) {
  size_t nfig = 0, nfit = 0;
  for (size_t i = 0; i < r->nscen; i++) {
    nfig += r->scen[i].nsteps * (r->scen[i].ntypes + 1);
    nfit += r->scen[i].ntypes + 1;
  }
  r->figures = calloc(nfig ? nfig : 1, sizeof *r->figures);
  r->fits = calloc(nfit ? nfit : 1, sizeof *r->fits);
  r->arms = calloc(r->nscen ? r->nscen : 1, sizeof *r->arms);
  if (!r->figures || !r->fits || !r->arms)
    return -ENOMEM;
  resolve_arms(r);
  for (size_t i = 0; i < r->nscen; i++)
    if (scenario_figures(r, i, r->figures, &r->nfigures))
      return -ENOMEM;
  for (size_t i = 0; i < r->nscen; i++)
    for (int t = -1; t < (int)r->scen[i].ntypes; t++)
      scenario_fit(r, i, t, r->figures, r->nfigures);
  r->built = 1;
  return 0;
}

/* ---- points -------------------------------------------------------------- */

typedef struct bm_emit {
  bm_report *r;
  ps_emitter *em;
  size_t *cursor;
  size_t unit;
  int rc;
} bm_emit;

static int emit_unit(bm_emit *e, const ps_point *pt) {
  if (e->unit++ < *e->cursor)
    return 0;
  int rc = ps_emit_point(e->em, pt);
  if (rc) {
    e->unit--;
    e->rc = rc;
    return rc;
  }
  (*e->cursor)++;
  return 0;
}

static size_t put_tag(ps_tag *tags, size_t n, const char *key, const char *value) {
  if (value && *value) {
    tags[n].key = key;
    tags[n].value = value;
    n++;
  }
  return n;
}

static const char *scenario_name(const bm_report *r, size_t si, char *buf, size_t cap) {
  if (si < r->ncfg && r->cfg[si].name[0])
    return r->cfg[si].name;
  snprintf(buf, cap, "scenario %zu", si + 1);
  return buf;
}

static size_t scenario_tags(const bm_report *r, size_t si, int type, ps_tag *tags, char *buf,
                            size_t cap) {
  size_t n = 0;
  const bm_names *a = &r->arms[si];
  n = put_tag(tags, n, "configuration", r->configuration);
  n = put_tag(tags, n, "scenario", scenario_name(r, si, buf, cap));
  n = put_tag(tags, n, "load", si < r->ncfg ? r->cfg[si].load : NULL);
  n = put_tag(tags, n, "arm", a->arm);
  n = put_tag(tags, n, "image", a->image);
  n = put_tag(tags, n, "datastore", a->datastore);
  n = put_tag(tags, n, "commit", r->commit);
  n = put_tag(tags, n, "operation", type < 0 ? "all" : r->scen[si].types[type]);
  return n;
}

static void emit_figure(bm_emit *e, const bm_figure *f) {
  ps_tag tags[10];
  char buf[BM_NAME_MAX + 32];
  size_t nt = scenario_tags(e->r, f->scenario, f->type, tags, buf, sizeof buf);
  ps_field fl[16];
  size_t n = 0;
  const char *reason = reason_name(f->reason);
  fl[n++] = ps_field_int("step", (int64_t)f->step + 1);
  fl[n++] = ps_field_float("load_factor", f->load_factor);
  fl[n++] = ps_field_string("termination_reason", reason, strlen(reason));
  if (f->has_window) {
    fl[n++] = ps_field_float("stable_s", f->stable_s);
    fl[n++] = ps_field_float("throughput", f->throughput);
    fl[n++] = ps_field_int("successful", f->successful);
    fl[n++] = ps_field_int("unsuccessful", f->unsuccessful);
  }
  if (f->has_latency) {
    fl[n++] = ps_field_float("unsuccessful_share", f->unsuccessful_share);
    fl[n++] = ps_field_float("latency_mean_s", f->lat_mean);
    fl[n++] = ps_field_float("latency_p50_s", f->lat_p50);
    fl[n++] = ps_field_float("latency_p95_s", f->lat_p95);
    fl[n++] = ps_field_float("latency_p99_s", f->lat_p99);
    fl[n++] = ps_field_float("latency_max_s", f->lat_max);
  }
  ps_point pt = {"benchmarker_step", tags, nt, fl, n, f->end_ns};
  emit_unit(e, &pt);
}

static void emit_fit(bm_emit *e, const bm_fit *f) {
  ps_tag tags[10];
  char buf[BM_NAME_MAX + 32];
  size_t nt = scenario_tags(e->r, f->scenario, f->type, tags, buf, sizeof buf);
  ps_field fl[12];
  size_t n = 0;
  fl[n++] = ps_field_float("gamma", f->res.gamma);
  fl[n++] = ps_field_float("alpha", f->res.alpha);
  fl[n++] = ps_field_float("beta", f->res.beta);
  fl[n++] = ps_field_float("rmse", f->res.rmse);
  fl[n++] = ps_field_int("points_kept", (int64_t)f->res.kept_count);
  fl[n++] = ps_field_int("points_discarded", (int64_t)f->discarded);
  if (f->discarded)
    fl[n++] = ps_field_string("discarded_loads", f->discarded_loads, strlen(f->discarded_loads));
  if (f->res.has_peak) {
    fl[n++] = ps_field_float("n_star", f->res.n_star);
    fl[n++] = ps_field_float("x_n_star", f->res.x_n_star);
    fl[n++] = ps_field_bool("peak_within_loads", f->res.n_star <= f->kept_max);
  }
  ps_point pt = {"benchmarker_fit", tags, nt, fl, n, f->time_ns};
  emit_unit(e, &pt);
}

/* The marker's status and sentence: every step completed, or the steps
 * that went unstable or never got stable. */
static const char *marker_text(const bm_report *r, char *text, size_t cap, int64_t *end) {
  int unstable = 0, not_stable = 0;
  size_t used = 0, steps = 0;
  char buf[BM_NAME_MAX + 32];
  *end = 0;
  for (size_t i = 0; i < r->nscen; i++)
    for (size_t k = 0; k < r->scen[i].nsteps; k++) {
      const bm_step *st = &r->scen[i].steps[k];
      if (!st->usable)
        continue;
      steps++;
      if (st->end_ns > *end)
        *end = st->end_ns;
      if (st->reason == BM_REASON_COMPLETED)
        continue;
      unstable |= st->reason == BM_REASON_UNSTABLE;
      not_stable |= st->reason == BM_REASON_NOT_STABLE;
      if (used < cap) {
        int w = snprintf(text + used, cap - used, " Scenario \"%s\" step %zu (load %g): %s.",
                         scenario_name(r, i, buf, sizeof buf), k + 1, st->load_factor,
                         st->reason == BM_REASON_UNSTABLE ? "unstable" : "never stable");
        used += w > 0 ? (size_t)w : 0;
      }
    }
  if (!unstable && !not_stable)
    snprintf(text, cap, " Every step completed (%zu steps in %zu scenarios).", steps, r->nscen);
  return unstable ? "unstable" : not_stable ? "not_stable" : "completed";
}

static void emit_marker(bm_emit *e, int backfill) {
  bm_report *r = e->r;
  char detail[BM_TEXT_MAX] = "", text[BM_TEXT_MAX + BM_NAME_MAX + 64];
  int64_t end;
  const char *status = marker_text(r, detail, sizeof detail, &end);
  if (!end)
    return; /* no step: no run to mark */
  const char *run = r->configuration[0] ? r->configuration : "(unnamed)";
  int n = snprintf(text, sizeof text, "benchmarker run %s ended: %s.%s", run, status, detail);
  if (n < 0)
    n = 0;
  if ((size_t)n >= sizeof text)
    n = (int)sizeof text - 1;
  ps_tag tags[4];
  size_t nt = 0;
  nt = put_tag(tags, nt, "source", "benchmarker");
  nt = put_tag(tags, nt, "run", run);
  nt = put_tag(tags, nt, "event", "end");
  nt = put_tag(tags, nt, "status", status);
  ps_field f[2] = {ps_field_string("text", text, (size_t)n), ps_field_bool("backfill", backfill)};
  ps_point pt = {"runs", tags, nt, f, 2, end};
  emit_unit(e, &pt);
}

int ps_benchmarker_figures_emit(bm_report *r, ps_emitter *em, size_t *cursor, int backfill) {
  bm_emit e = {r, em, cursor, 0, 0};
  for (size_t i = 0; i < r->nfigures && !e.rc; i++)
    emit_figure(&e, &r->figures[i]);
  for (size_t i = 0; i < r->nfits && !e.rc; i++)
    emit_fit(&e, &r->fits[i]);
  if (!e.rc)
    emit_marker(&e, backfill);
  return e.rc;
}
