/*
 * verdict.c: the verdict value and its point (include/verdict/verdict.h).
 *
 * DESIGN
 * - The point's shape lives here alone, so the three judges cannot drift
 *   apart from docs/schema.md or from each other: they fill a ps_verdict,
 *   this file decides which fields a method writes.
 * - change_pct is derived, never stored, so it cannot disagree with the
 *   value and baseline it is computed from.
 */
#include "verdict/verdict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ps_verdict ps_verdict_blank(void) {
  ps_verdict v;
  memset(&v, 0, sizeof v);
  v.stage = -1;
  v.value = NAN;
  v.baseline = NAN;
  v.p_value = NAN;
  v.baseline_runs = -1;
  v.family_size = -1;
  v.p_adjusted = NAN;
  v.variants = -1;
  v.variants_agree = -1;
  v.variants_skipped = -1;
  return v;
}

void ps_verdict_list_init(ps_verdict_list *l) { memset(l, 0, sizeof *l); }

int ps_verdict_list_push(ps_verdict_list *l, const ps_verdict *v) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 16;
    ps_verdict *nv = realloc(l->v, cap * sizeof *nv);
    if (!nv)
      return -ENOMEM;
    l->v = nv;
    l->cap = cap;
  }
  l->v[l->n++] = *v;
  return 0;
}

void ps_verdict_list_free(ps_verdict_list *l) {
  if (!l)
    return;
  free(l->v);
  memset(l, 0, sizeof *l);
}

const char *ps_verdict_kind_name(ps_verdict_kind k) {
  switch (k) {
  case PS_VERDICT_REGRESSION: return "regression";
  case PS_VERDICT_IMPROVEMENT: return "improvement";
  case PS_VERDICT_EXCLUDED: return "excluded";
  case PS_VERDICT_BASELINE: return "baseline";
  case PS_VERDICT_NONE: break;
  }
  return "none";
}

const char *ps_verdict_method_name(ps_verdict_method m) {
  switch (m) {
  case PS_METHOD_STAGE_DRIFT: return "stage_drift";
  case PS_METHOD_ARM_COMPARE: return "arm_compare";
  case PS_METHOD_CANDIDATE: return "candidate";
  case PS_METHOD_LIMIT: return "limit";
  case PS_METHOD_EDIVISIVE: break;
  }
  return "edivisive";
}

double ps_verdict_change_pct(double value, double baseline) {
  if (!isfinite(value) || !isfinite(baseline) || baseline == 0.0)
    return NAN;
  return (value - baseline) / fabs(baseline) * 100.0;
}

int ps_verdict_beyond(double value, double baseline, double min_change,
                      ps_change_unit unit) {
  if (!isfinite(value) || !isfinite(baseline))
    return 0;
  double delta = fabs(value - baseline);
  if (delta == 0.0)
    return 0;
  if (unit == PS_CHANGE_POINTS)
    return delta >= min_change;
  if (baseline == 0.0)
    return 1;
  return delta / fabs(baseline) * 100.0 >= min_change;
}

ps_verdict_kind ps_verdict_direction(double value, double baseline, ps_worse worse) {
  if (!(value != baseline) || !isfinite(value) || !isfinite(baseline))
    return PS_VERDICT_NONE;
  int higher = value > baseline;
  if (worse == PS_WORSE_HIGHER)
    return higher ? PS_VERDICT_REGRESSION : PS_VERDICT_IMPROVEMENT;
  return higher ? PS_VERDICT_IMPROVEMENT : PS_VERDICT_REGRESSION;
}

static size_t add_string(ps_field *f, size_t nf, const char *key, const char *s) {
  if (s && s[0])
    f[nf++] = ps_field_string(key, s, strlen(s));
  return nf;
}

static size_t add_float(ps_field *f, size_t nf, const char *key, double v) {
  if (isfinite(v))
    f[nf++] = ps_field_float(key, v);
  return nf;
}

static size_t add_count(ps_field *f, size_t nf, const char *key, int64_t v) {
  if (v >= 0)
    f[nf++] = ps_field_int(key, v);
  return nf;
}

static size_t add_tag(ps_tag *t, size_t nt, const char *key, const char *v) {
  if (v && v[0]) {
    t[nt].key = key;
    t[nt].value = v;
    nt++;
  }
  return nt;
}

int ps_verdict_emit(ps_emitter *em, const ps_verdict *v) {
  char stage[24];
  ps_tag tags[9];
  size_t nt = 0;
  nt = add_tag(tags, nt, "source", v->source);
  nt = add_tag(tags, nt, "series", v->series);
  nt = add_tag(tags, nt, "metric", v->metric);
  nt = add_tag(tags, nt, "run", v->run);
  if (v->stage >= 0) {
    snprintf(stage, sizeof stage, "%d", v->stage);
    nt = add_tag(tags, nt, "stage", stage);
  }
  nt = add_tag(tags, nt, "arm", v->arm);
  nt = add_tag(tags, nt, "reference", v->reference);
  /* A tag, not a field: a candidate's point must not replace the verdict
   * of the run within its own series (same run, metric and time). */
  nt = add_tag(tags, nt, "against", v->against);
  nt = add_tag(tags, nt, "vat", v->vat);

  /* Fields in the order docs/schema.md lists them (the encoder keeps it). */
  ps_field f[22];
  size_t nf = 0;
  nf = add_string(f, nf, "verdict", ps_verdict_kind_name(v->verdict));
  nf = add_float(f, nf, "value", v->value);
  nf = add_float(f, nf, "baseline", v->baseline);
  nf = add_float(f, nf, "change_pct", ps_verdict_change_pct(v->value, v->baseline));
  nf = add_string(f, nf, "change_run", v->change_run);
  nf = add_count(f, nf, "baseline_runs", v->baseline_runs);
  nf = add_string(f, nf, "method", ps_verdict_method_name(v->method));
  nf = add_float(f, nf, "p_value", v->p_value);
  nf = add_count(f, nf, "family_size", v->family_size);
  nf = add_float(f, nf, "p_adjusted", v->p_adjusted);
  nf = add_string(f, nf, "revision", v->revision);
  nf = add_string(f, nf, "vat_name", v->vat_name);
  if (v->method == PS_METHOD_EDIVISIVE || v->method == PS_METHOD_CANDIDATE) {
    /* Always written, "" without a range: a run judged again overwrites
     * its point field by field, so a range a regression wrote would stay
     * on the `none` that replaces it (docs/schema.md). */
    const char *range[4][2] = {{"good_run", v->good_run}, {"good_revision", v->good_revision},
                               {"bad_run", v->bad_run}, {"bad_revision", v->bad_revision}};
    int has = v->verdict != PS_VERDICT_NONE;
    for (size_t i = 0; i < 4; i++) {
      const char *s = has && range[i][1] ? range[i][1] : "";
      f[nf++] = ps_field_string(range[i][0], s, strlen(s));
    }
  }
  /* Always written where it can be, "" for nothing: a report judged again
   * after a report before it arrived must not keep a note about another
   * predecessor (docs/schema.md). */
  if (v->has_note)
    f[nf++] = ps_field_string("note", v->note, strlen(v->note));
  f[nf++] = ps_field_bool("backfill", v->backfill);
  nf = add_count(f, nf, "variants", v->variants);
  nf = add_count(f, nf, "variants_agree", v->variants_agree);
  nf = add_count(f, nf, "variants_skipped", v->variants_skipped);

  ps_point p = {PS_VERDICT_MEASUREMENT, tags, nt, f, nf, v->time_ns};
  return ps_emit_point(em, &p);
}
