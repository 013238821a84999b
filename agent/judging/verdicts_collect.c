/*
 * verdicts_collect.c: the judged figures picked out of the points as they
 * pass. See include/judging/verdicts_collect.h.
 *
 * Design
 * - What is picked, and where from, is the figures table (core/figures.h):
 *   the run's metrics are the configured loadgen_run fields, a stage's
 *   figures the table's stage rows, each with its tag selector.
 * - It sees only the points of the measurements it subscribed to
 *   (jd_verdicts_collect_measurements, checked by the delivery), so no first-byte
 *   tricks here: a handful of points per run arrive.
 * - Lists, not tables: an agent holds a few runs in progress and a DSS
 *   file or two at a time.
 */
#include "judging/verdicts_collect.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jd_verdicts_collect_init(jd_verdicts_collect *c, const char *const *metrics, size_t nmetrics) {
  memset(c, 0, sizeof *c);
  c->metrics = metrics;
  c->nmetrics = nmetrics;
  c->run_measurement = ps_figures[0].measurement;
}

static void run_free(jd_lg_run *r) {
  if (!r)
    return;
  free(r->run);
  free(r->series);
  free(r->revision);
  free(r->values);
  free(r->stages);
  for (size_t i = 0; i < r->nsamples; i++) {
    free(r->samples[i].blocks);
    free(r->samples[i].cycles);
  }
  free(r->samples);
  free(r);
}

static void doc_free(jd_dss_doc *d) {
  for (size_t i = 0; i < d->ntests; i++) {
    jd_dss_test *t = &d->tests[i];
    for (size_t j = 0; j < t->narms; j++) {
      free(t->arms[j].label);
      free(t->arms[j].rps_total);
      free(t->arms[j].p95_ms);
      free(t->arms[j].errors);
    }
    free(t->arms);
    free(t->test);
  }
  free(d->tests);
  for (size_t i = 0; i < d->nscenarios; i++) {
    free(d->scenarios[i].scenario);
    free(d->scenarios[i].arm);
    free(d->scenarios[i].revision);
    free(d->scenarios[i].steps);
  }
  free(d->scenarios);
  free(d->run);
  free(d);
}

void jd_verdicts_collect_free(jd_verdicts_collect *c) {
  for (jd_lg_run *r = c->runs, *n; r; r = n) {
    n = r->next;
    run_free(r);
  }
  for (jd_dss_doc *d = c->docs, *n; d; d = n) {
    n = d->next;
    doc_free(d);
  }
  c->runs = NULL;
  c->docs = NULL;
}

static int set_str(char **dst, const char *s) {
  if (!s || (*dst && strcmp(*dst, s) == 0))
    return 0;
  char *c = strdup(s);
  if (!c)
    return -ENOMEM;
  free(*dst);
  *dst = c;
  return 0;
}

/* A new run goes first, or last when read back from the state: the list
 * is saved in its order, and reading it must not turn it round. */
static jd_lg_run *run_get_at(jd_verdicts_collect *c, const char *run, int last) {
  jd_lg_run **tail = &c->runs;
  for (jd_lg_run *r = c->runs; r; r = r->next) {
    if (strcmp(r->run, run) == 0)
      return r;
    tail = &r->next;
  }
  jd_lg_run *r = calloc(1, sizeof *r);
  if (!r || !(r->run = strdup(run)) ||
      !(r->values = malloc((c->nmetrics ? c->nmetrics : 1) * sizeof *r->values))) {
    run_free(r);
    return NULL;
  }
  for (size_t i = 0; i < c->nmetrics; i++)
    r->values[i] = NAN;
  if (last) {
    *tail = r;
  } else {
    r->next = c->runs;
    c->runs = r;
  }
  return r;
}

static jd_lg_run *run_get(jd_verdicts_collect *c, const char *run) { return run_get_at(c, run, 0); }

static ps_stage_figures *stage_get(jd_lg_run *r, int stage) {
  for (size_t i = 0; i < r->nstages; i++)
    if (r->stages[i].stage == stage)
      return &r->stages[i];
  if (r->nstages == r->stages_cap) {
    size_t cap = r->stages_cap ? r->stages_cap * 2 : 8;
    ps_stage_figures *n = realloc(r->stages, cap * sizeof *n);
    if (!n)
      return NULL;
    r->stages = n;
    r->stages_cap = cap;
  }
  ps_stage_figures *s = &r->stages[r->nstages++];
  *s = (ps_stage_figures){stage, 0, NAN, NAN, NAN};
  return s;
}

/* --- the samples behind the stage figures --------------------------------- */

#define BLOCK_MEASUREMENT "loadgen_block"
#define CYCLE_MEASUREMENT "loadgen_cycle"

static jd_lg_samples *samples_get(jd_lg_run *r, int stage) {
  for (size_t i = 0; i < r->nsamples; i++)
    if (r->samples[i].stage == stage)
      return &r->samples[i];
  if (r->nsamples == r->samples_cap) {
    size_t cap = r->samples_cap ? r->samples_cap * 2 : 8;
    jd_lg_samples *n = realloc(r->samples, cap * sizeof *n);
    if (!n)
      return NULL;
    r->samples = n;
    r->samples_cap = cap;
  }
  jd_lg_samples *s = &r->samples[r->nsamples++];
  *s = (jd_lg_samples){.stage = stage};
  return s;
}

static void sample_add(jd_lg_sample **a, size_t *n, size_t *cap, int64_t time_ns, double v) {
  if (!isfinite(v) || *n >= JD_LG_MAX_SAMPLES)
    return;
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 64;
    jd_lg_sample *m = realloc(*a, c * sizeof *m);
    if (!m)
      return; /* a sample fewer: the test is a little less sure */
    *a = m;
    *cap = c;
  }
  (*a)[(*n)++] = (jd_lg_sample){time_ns, v};
}

/* A live block or a successful cycle of a run's stage. */
static void sample_point(jd_verdicts_collect *c, const ps_point *p, const char *run, int stage) {
  int block = strcmp(p->measurement, BLOCK_MEASUREMENT) == 0;
  if (block) {
    const char *live = ps_point_tag(p, "live");
    if (!live || strcmp(live, "true") != 0)
      return;
  } else {
    const ps_field *ok = ps_point_field(p, "success");
    if (!ok || ok->type != PS_F_BOOL || !ok->v.b)
      return;
  }
  jd_lg_run *r = run_get(c, run);
  jd_lg_samples *s = r ? samples_get(r, stage) : NULL;
  if (!s)
    return;
  if (block)
    sample_add(&s->blocks, &s->nblocks, &s->blocks_cap, p->time_ns,
               ps_point_number(p, "swingsetTime"));
  else
    sample_add(&s->cycles, &s->ncycles, &s->cycles_cap, p->time_ns, ps_point_number(p, "duration"));
}

static int by_time(const void *a, const void *b) {
  const jd_lg_sample *x = a, *y = b;
  if (x->time_ns != y->time_ns)
    return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
  return (x->value > y->value) - (x->value < y->value);
}

/* Sorts by time and drops repeats (a point replayed after a restart). */
static size_t sort_unique(jd_lg_sample *a, size_t n) {
  if (n < 2) /* a stage with blocks and no cycles has no array for them */
    return n;
  qsort(a, n, sizeof *a, by_time);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (k == 0 || a[i].time_ns != a[k - 1].time_ns || a[i].value != a[k - 1].value)
      a[k++] = a[i];
  return k;
}

int jd_verdicts_collect_stage_samples(jd_lg_run *r, ps_stage_samples **out, size_t *n,
                                      double **store) {
  size_t total = 0;
  *out = NULL;
  *store = NULL;
  *n = 0;
  for (size_t i = 0; i < r->nsamples; i++) {
    r->samples[i].nblocks = sort_unique(r->samples[i].blocks, r->samples[i].nblocks);
    r->samples[i].ncycles = sort_unique(r->samples[i].cycles, r->samples[i].ncycles);
    total += 2 * r->samples[i].nblocks + r->samples[i].ncycles;
  }
  if (!r->nsamples)
    return 0;
  *out = calloc(r->nsamples, sizeof **out);
  *store = malloc((total ? total : 1) * sizeof **store);
  if (!*out || !*store) {
    free(*out);
    free(*store);
    *out = NULL;
    *store = NULL;
    return -ENOMEM;
  }
  double *at = *store;
  for (size_t i = 0; i < r->nsamples; i++) {
    const jd_lg_samples *s = &r->samples[i];
    ps_stage_samples *v = &(*out)[i];
    v->stage = s->stage;
    v->swingset_time = at;
    for (size_t k = 0; k < s->nblocks; k++)
      *at++ = s->blocks[k].value;
    v->nswingset = s->nblocks;
    v->block_gap = at;
    for (size_t k = 1; k < s->nblocks; k++)
      *at++ = (double)(s->blocks[k].time_ns - s->blocks[k - 1].time_ns) / 1e9;
    v->ngaps = s->nblocks ? s->nblocks - 1 : 0;
    v->cycle_duration = at;
    for (size_t k = 0; k < s->ncycles; k++)
      *at++ = s->cycles[k].value;
    v->ncycles = s->ncycles;
  }
  *n = r->nsamples;
  return 0;
}

/* A point of a figure's measurement (core/figures.h): the run's judged
 * metrics, or a stage's figures when the point passes their selector. */
static void loadgen_point(jd_verdicts_collect *c, const ps_point *p) {
  const char *run = ps_point_tag(p, "run"), *stage_tag = ps_point_tag(p, "stage");
  if (!run)
    return;
  if (strcmp(p->measurement, c->run_measurement) == 0) {
    jd_lg_run *r = run_get(c, run);
    if (!r || set_str(&r->series, ps_point_tag(p, "test_type")) < 0 ||
        set_str(&r->revision, ps_point_tag(p, "revision")) < 0)
      return;
    r->start_ns = p->time_ns;
    for (size_t i = 0; i < c->nmetrics; i++) {
      double v = ps_point_number(p, c->metrics[i]);
      if (!isnan(v))
        r->values[i] = v;
    }
    return;
  }
  if (!stage_tag)
    return;
  if (strcmp(p->measurement, BLOCK_MEASUREMENT) == 0 ||
      strcmp(p->measurement, CYCLE_MEASUREMENT) == 0) {
    char *end;
    long stage = strtol(stage_tag, &end, 10);
    if (!*end && stage >= 0 && stage <= 100000)
      sample_point(c, p, run, (int)stage);
    return;
  }
  /* The rows this point feeds: the stage kind, or stage figures. */
  const ps_figure *kind = ps_stage_kind_figure();
  int is_kind = strcmp(p->measurement, kind->measurement) == 0, fig[PS_STAGE_NFIGURES], any = 0;
  for (int i = 0; i < PS_STAGE_NFIGURES; i++) {
    const ps_figure *f = ps_stage_figure((ps_stage_figure_id)i);
    fig[i] = strcmp(p->measurement, f->measurement) == 0 &&
             ps_figure_selects(f, f->tag ? ps_point_tag(p, f->tag) : NULL);
    any |= fig[i];
  }
  if (!is_kind && !any)
    return;
  char *end;
  long stage = strtol(stage_tag, &end, 10);
  if (*end || stage < 0 || stage > 100000)
    return;
  jd_lg_run *r = run_get(c, run);
  ps_stage_figures *s = r ? stage_get(r, (int)stage) : NULL;
  if (!s)
    return;
  if (is_kind) {
    const ps_field *f = ps_point_field(p, kind->field);
    if (f && f->type == PS_F_BOOL)
      s->loadgen = f->v.b;
  }
  for (int i = 0; i < PS_STAGE_NFIGURES; i++)
    if (fig[i])
      *ps_stage_figure_at(s, (ps_stage_figure_id)i) = ps_point_number(
          p, ps_stage_figure((ps_stage_figure_id)i)->field);
}

/* The DSS file being read for `run` (a new one once its marker was seen:
 * a rewritten results.json is a new run of the same name). */
static jd_dss_doc *doc_get(jd_verdicts_collect *c, const char *source, const char *run) {
  for (jd_dss_doc *d = c->docs; d; d = d->next)
    if (!d->ended && strcmp(d->source, source) == 0 && strcmp(d->run, run) == 0)
      return d;
  jd_dss_doc *d = calloc(1, sizeof *d);
  if (!d || !(d->run = strdup(run))) {
    free(d);
    return NULL;
  }
  d->source = strcmp(source, JD_VERDICTS_COLLECT_BENCHMARKER) == 0 ? JD_VERDICTS_COLLECT_BENCHMARKER
                                                                   : JD_VERDICTS_COLLECT_DSS;
  d->next = c->docs;
  c->docs = d;
  return d;
}

static int grow(double **a, size_t have, size_t want) {
  double *n = realloc(*a, want * sizeof *n);
  if (!n)
    return -ENOMEM;
  for (size_t i = have; i < want; i++)
    n[i] = NAN;
  *a = n;
  return 0;
}

/* One arm's values at one variant of a test of a document. */
typedef struct arm_values {
  const char *source, *run, *test, *arm;
  int64_t variant;
  double rps_total, p95_ms, errors;
} arm_values;

static void arm_value(jd_verdicts_collect *c, const arm_values *av) {
  const char *run = av->run, *test = av->test, *arm = av->arm;
  if (!run || !test || !arm || av->variant < 0 || av->variant > 100000)
    return;
  jd_dss_doc *d = doc_get(c, av->source, run);
  if (!d)
    return;
  jd_dss_test *t = NULL;
  for (size_t i = 0; i < d->ntests && !t; i++)
    if (strcmp(d->tests[i].test, test) == 0)
      t = &d->tests[i];
  if (!t) {
    jd_dss_test *n = realloc(d->tests, (d->ntests + 1) * sizeof *n);
    if (!n)
      return;
    d->tests = n;
    t = &d->tests[d->ntests];
    memset(t, 0, sizeof *t);
    if (!(t->test = strdup(test)))
      return;
    d->ntests++;
  }
  jd_dss_arm *a = NULL;
  for (size_t i = 0; i < t->narms && !a; i++)
    if (strcmp(t->arms[i].label, arm) == 0)
      a = &t->arms[i];
  if (!a) { /* arms keep file order: the first is the reference */
    jd_dss_arm *n = realloc(t->arms, (t->narms + 1) * sizeof *n);
    if (!n)
      return;
    t->arms = n;
    a = &t->arms[t->narms];
    memset(a, 0, sizeof *a);
    if (!(a->label = strdup(arm)) || (t->nvariants && (grow(&a->rps_total, 0, t->nvariants) ||
                                                       grow(&a->p95_ms, 0, t->nvariants) ||
                                                       grow(&a->errors, 0, t->nvariants)))) {
      free(a->label);
      free(a->rps_total);
      free(a->p95_ms);
      return;
    }
    t->narms++;
  }
  size_t v = (size_t)av->variant;
  if (v >= t->nvariants) {
    for (size_t i = 0; i < t->narms; i++)
      if (grow(&t->arms[i].rps_total, t->nvariants, v + 1) ||
          grow(&t->arms[i].p95_ms, t->nvariants, v + 1) ||
          grow(&t->arms[i].errors, t->nvariants, v + 1))
        return; /* nvariants stays: the arrays are at least that long */
    t->nvariants = v + 1;
  }
  a->rps_total[v] = av->rps_total;
  a->p95_ms[v] = av->p95_ms;
  a->errors[v] = av->errors;
}

static void dss_point(jd_verdicts_collect *c, const ps_point *p) {
  const ps_field *idx = ps_point_field(p, "variantIndex");
  if (!idx || idx->type != PS_F_INT)
    return;
  arm_values av = {JD_VERDICTS_COLLECT_DSS,
                   ps_point_tag(p, "run"),
                   ps_point_tag(p, "test"),
                   ps_point_tag(p, "arm"),
                   idx->v.i,
                   ps_point_number(p, "rps_total"),
                   ps_point_number(p, "p95_ms"),
                   ps_point_number(p, "errors")};
  arm_value(c, &av);
}

/* A Completed step's load factor, or NaN. */
static double completed_load(const ps_point *p) {
  const ps_field *reason = ps_point_field(p, "termination_reason");
  if (!reason || reason->type != PS_F_STRING || reason->v.s.n != 9 ||
      memcmp(reason->v.s.p, "Completed", 9) != 0)
    return NAN;
  return ps_point_number(p, "load_factor");
}

/* How a step ended (by load: a step read again replaces its outcome), kept
 * so that the next report's verdict can say where this one was stable and
 * it is not (docs/verdicts.md "Benchmarker: across releases"). */
static void step_end(jd_bm_scenario *s, const ps_point *p) {
  const ps_field *reason = ps_point_field(p, "termination_reason");
  double load = ps_point_number(p, "load_factor");
  if (!reason || reason->type != PS_F_STRING || !isfinite(load))
    return;
  ps_step_end end = PS_STEP_COMPLETED;
  while (end <= PS_STEP_NOT_STABLE &&
         !(strlen(ps_ledger_step_end_name(end)) == reason->v.s.n &&
           memcmp(ps_ledger_step_end_name(end), reason->v.s.p, reason->v.s.n) == 0))
    end++;
  if (end > PS_STEP_NOT_STABLE)
    return;
  size_t i = 0;
  while (i < s->nsteps && s->steps[i].load != load)
    i++;
  if (i == s->nsteps) {
    ps_ledger_step *n = realloc(s->steps, (s->nsteps + 1) * sizeof *n);
    if (!n)
      return;
    s->steps = n;
    s->nsteps++;
  }
  s->steps[i] = (ps_ledger_step){load, end};
}

/* A scenario's figures, kept for the judge across releases: its fit's
 * (a scenario fitted again in the same report, a report read again,
 * replaces them) and its latency at the lowest load it completed
 * (docs/verdicts.md "Benchmarker: across releases"). */
static void across_releases(jd_verdicts_collect *c, const ps_point *p) {
  const char *run = ps_point_tag(p, "configuration"), *scenario = ps_point_tag(p, "scenario"),
             *arm = ps_point_tag(p, "arm"), *image = ps_point_tag(p, "image"),
             *commit = ps_point_tag(p, "commit");
  jd_dss_doc *d = run && scenario && arm ? doc_get(c, JD_VERDICTS_COLLECT_BENCHMARKER, run) : NULL;
  if (!d)
    return;
  jd_bm_scenario *s = NULL;
  for (size_t i = 0; i < d->nscenarios && !s; i++)
    if (strcmp(d->scenarios[i].scenario, scenario) == 0 && strcmp(d->scenarios[i].arm, arm) == 0)
      s = &d->scenarios[i];
  if (!s) {
    jd_bm_scenario *n = realloc(d->scenarios, (d->nscenarios + 1) * sizeof *n);
    if (!n)
      return;
    d->scenarios = n;
    s = &n[d->nscenarios];
    memset(s, 0, sizeof *s);
    const char *revision = image ? image : commit;
    for (size_t i = 0; i < PS_BENCHMARKER_NFIGURES; i++)
      s->values[i] = NAN;
    s->low_load = NAN;
    if (!(s->scenario = strdup(scenario)) || !(s->arm = strdup(arm)) ||
        (revision && !(s->revision = strdup(revision)))) {
      free(s->scenario);
      free(s->arm);
      return;
    }
    d->nscenarios++;
  }
  int fit = strcmp(p->measurement, JD_VERDICTS_COLLECT_BENCHMARKER_FIT) == 0;
  if (!fit)
    step_end(s, p);
  double load = fit ? NAN : completed_load(p);
  int lower = !isnan(load) && (isnan(s->low_load) || load <= s->low_load);
  for (size_t i = 0; i < PS_BENCHMARKER_NFIGURES; i++) {
    const ps_figure *f = ps_benchmarker_figure(i);
    if (strcmp(f->measurement, p->measurement) == 0 && (fit || lower))
      s->values[i] = ps_point_number(p, f->field);
  }
  if (lower)
    s->low_load = load;
}

/* A benchmarker report's scenarios that applied the same load are its arms
 * (docs/verdicts.md "Benchmarker"): a Completed step of all operation
 * types is the arm's value at its load factor (the variant), and the
 * fitted peak X(N*), where the measured loads reach it, is the one
 * variant of the test "<load> peak". */
static void benchmarker_point(jd_verdicts_collect *c, const ps_point *p) {
  const char *op = ps_point_tag(p, "operation"), *load = ps_point_tag(p, "load");
  if (!op || strcmp(op, JD_VERDICTS_COLLECT_BENCHMARKER_EVERY_TYPE) != 0)
    return;
  across_releases(c, p);
  if (!load)
    return;
  arm_values av = {JD_VERDICTS_COLLECT_BENCHMARKER,
                   ps_point_tag(p, "configuration"),
                   load,
                   ps_point_tag(p, "arm"),
                   0,
                   NAN,
                   NAN,
                   NAN};
  char peak[512];
  if (strcmp(p->measurement, JD_VERDICTS_COLLECT_BENCHMARKER_FIT) == 0) {
    const ps_field *within = ps_point_field(p, "peak_within_loads");
    if (!within || within->type != PS_F_BOOL || !within->v.b)
      return;
    snprintf(peak, sizeof peak, "%s peak", load);
    av.test = peak;
    av.rps_total = ps_point_number(p, "x_n_star");
    arm_value(c, &av);
    return;
  }
  const ps_field *reason = ps_point_field(p, "termination_reason");
  double n = ps_point_number(p, "load_factor");
  if (!reason || reason->type != PS_F_STRING || reason->v.s.n != 9 ||
      memcmp(reason->v.s.p, "Completed", 9) != 0 || !(n >= 0 && n <= 100000) || n != floor(n))
    return;
  av.variant = (int64_t)n;
  av.rps_total = ps_point_number(p, "throughput");
  av.p95_ms = ps_point_number(p, "latency_p95_s") * 1000.0;
  av.errors = ps_point_number(p, "unsuccessful");
  arm_value(c, &av);
}

int jd_verdicts_collect_point(jd_verdicts_collect *c, const ps_point *p, jd_dss_doc **doc) {
  const char *m = p->measurement;
  if (strcmp(m, JD_VERDICTS_COLLECT_DSS) == 0) {
    dss_point(c, p);
  } else if (strcmp(m, JD_VERDICTS_COLLECT_BENCHMARKER_STEP) == 0 ||
             strcmp(m, JD_VERDICTS_COLLECT_BENCHMARKER_FIT) == 0) {
    benchmarker_point(c, p);
  } else if (strcmp(m, PS_RUN_MARKER_MEASUREMENT) == 0) {
    const char *source = ps_point_tag(p, "source"), *run = ps_point_tag(p, "run");
    if (!source || !run ||
        (strcmp(source, JD_VERDICTS_COLLECT_DSS) != 0 &&
         strcmp(source, JD_VERDICTS_COLLECT_BENCHMARKER) != 0))
      return JD_VERDICTS_COLLECT_NONE;
    jd_dss_doc *d = doc_get(c, source, run);
    if (!d)
      return JD_VERDICTS_COLLECT_NONE;
    const ps_field *bf = ps_point_field(p, "backfill");
    d->ended = 1;
    d->time_ns = p->time_ns;
    d->backfill = bf && bf->type == PS_F_BOOL && bf->v.b;
    *doc = d;
    return JD_VERDICTS_COLLECT_DSS_ENDED;
  } else {
    loadgen_point(c, p);
  }
  return JD_VERDICTS_COLLECT_NONE;
}

size_t jd_verdicts_collect_measurements(const char **out, size_t cap) {
  size_t n = 0;
  const char *extra[] = {JD_VERDICTS_COLLECT_DSS,
                         PS_RUN_MARKER_MEASUREMENT,
                         BLOCK_MEASUREMENT,
                         CYCLE_MEASUREMENT,
                         JD_VERDICTS_COLLECT_BENCHMARKER_STEP,
                         JD_VERDICTS_COLLECT_BENCHMARKER_FIT};
  size_t nextra = sizeof extra / sizeof extra[0];
  for (size_t i = 0; i < ps_nfigures + nextra; i++) {
    const char *m = i < ps_nfigures ? ps_figures[i].measurement : extra[i - ps_nfigures];
    size_t j = 0;
    while (j < n && strcmp(out[j], m) != 0)
      j++;
    if (j == n && n < cap)
      out[n++] = m;
  }
  return n;
}

jd_lg_run *jd_verdicts_collect_find_run(jd_verdicts_collect *c, const char *run) {
  for (jd_lg_run *r = c->runs; r; r = r->next)
    if (strcmp(r->run, run) == 0)
      return r;
  return NULL;
}

void jd_verdicts_collect_drop_run(jd_verdicts_collect *c, jd_lg_run *r) {
  for (jd_lg_run **pp = &c->runs; *pp; pp = &(*pp)->next)
    if (*pp == r) {
      *pp = r->next;
      run_free(r);
      return;
    }
}

void jd_verdicts_collect_drop_dss(jd_verdicts_collect *c, jd_dss_doc *doc) {
  for (jd_dss_doc **pp = &c->docs; *pp; pp = &(*pp)->next)
    if (*pp == doc) {
      *pp = doc->next;
      doc_free(doc);
      return;
    }
}

/* --- persistence ------------------------------------------------------------ */

static cJSON *numbers(const double *v, size_t n) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && i < n; i++)
    cJSON_AddItemToArray(a, isnan(v[i]) ? cJSON_CreateNull() : cJSON_CreateNumber(v[i]));
  return a;
}

static void read_numbers(const cJSON *a, double *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const cJSON *x = cJSON_GetArrayItem(a, (int)i);
    v[i] = cJSON_IsNumber(x) ? x->valuedouble : NAN;
  }
}

static cJSON *run_json(const jd_verdicts_collect *c, const jd_lg_run *r) {
  cJSON *o = cJSON_CreateObject();
  char t[24];
  snprintf(t, sizeof t, "%" PRId64, r->start_ns);
  cJSON_AddStringToObject(o, "run", r->run);
  if (r->series)
    cJSON_AddStringToObject(o, "series", r->series);
  if (r->revision)
    cJSON_AddStringToObject(o, "revision", r->revision);
  cJSON_AddStringToObject(o, "start_ns", t);
  if (r->ended) {
    cJSON_AddBoolToObject(o, "ended", 1);
    cJSON_AddNumberToObject(o, "status", r->status);
    cJSON_AddBoolToObject(o, "backfill", r->backfill);
  }
  /* only finite figures: JSON has no infinity (it would be written as
   * null), and the reader reads them so */
  cJSON *vals = cJSON_AddObjectToObject(o, "values");
  for (size_t i = 0; vals && i < c->nmetrics; i++)
    if (isfinite(r->values[i]))
      cJSON_AddNumberToObject(vals, c->metrics[i], r->values[i]);
  cJSON *st = cJSON_AddArrayToObject(o, "stages");
  for (size_t i = 0; st && i < r->nstages; i++) {
    const ps_stage_figures *s = &r->stages[i];
    double f[5] = {s->stage, s->loadgen, s->avg_duration, s->avg_swingset_time,
                   s->avg_block_duration};
    cJSON_AddItemToArray(st, numbers(f, 5));
  }
  return o;
}

static cJSON *doc_json(const jd_dss_doc *d) {
  cJSON *o = cJSON_CreateObject();
  char t[24];
  snprintf(t, sizeof t, "%" PRId64, d->time_ns);
  cJSON_AddStringToObject(o, "run", d->run);
  cJSON_AddStringToObject(o, "source", d->source);
  cJSON_AddBoolToObject(o, "ended", d->ended);
  cJSON_AddStringToObject(o, "time_ns", t);
  cJSON_AddBoolToObject(o, "backfill", d->backfill);
  cJSON *tests = cJSON_AddArrayToObject(o, "tests");
  for (size_t i = 0; tests && i < d->ntests; i++) {
    const jd_dss_test *te = &d->tests[i];
    cJSON *to = cJSON_CreateObject();
    cJSON_AddStringToObject(to, "test", te->test);
    cJSON *arms = cJSON_AddArrayToObject(to, "arms");
    for (size_t j = 0; arms && j < te->narms; j++) {
      cJSON *ao = cJSON_CreateObject();
      cJSON_AddStringToObject(ao, "arm", te->arms[j].label);
      cJSON_AddItemToObject(ao, "rps_total", numbers(te->arms[j].rps_total, te->nvariants));
      cJSON_AddItemToObject(ao, "p95_ms", numbers(te->arms[j].p95_ms, te->nvariants));
      cJSON_AddItemToObject(ao, "errors", numbers(te->arms[j].errors, te->nvariants));
      cJSON_AddItemToArray(arms, ao);
    }
    cJSON_AddItemToArray(tests, to);
  }
  return o;
}

cJSON *jd_verdicts_collect_to_json(const jd_verdicts_collect *c) {
  cJSON *o = cJSON_CreateObject();
  cJSON *runs = cJSON_AddArrayToObject(o, "runs");
  for (const jd_lg_run *r = c->runs; runs && r; r = r->next)
    cJSON_AddItemToArray(runs, run_json(c, r));
  cJSON *docs = cJSON_AddArrayToObject(o, "dss");
  for (const jd_dss_doc *d = c->docs; docs && d; d = d->next)
    cJSON_AddItemToArray(docs, doc_json(d));
  return o;
}

static const char *str_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void run_from_json(jd_verdicts_collect *c, const cJSON *o) {
  const char *run = str_of(o, "run"), *t = str_of(o, "start_ns");
  jd_lg_run *r = run && t ? run_get_at(c, run, 1) : NULL;
  if (!r || set_str(&r->series, str_of(o, "series")) < 0 ||
      set_str(&r->revision, str_of(o, "revision")) < 0)
    return;
  r->start_ns = strtoll(t, NULL, 10);
  r->ended = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ended"));
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(o, "status");
  r->status = cJSON_IsNumber(status) ? status->valueint : 0;
  r->backfill = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "backfill"));
  const cJSON *vals = cJSON_GetObjectItemCaseSensitive(o, "values");
  for (size_t i = 0; i < c->nmetrics; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(vals, c->metrics[i]);
    r->values[i] = cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
  }
  const cJSON *s;
  cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(o, "stages")) {
    double f[5];
    read_numbers(s, f, 5);
    /* a stage number as the points give it (loadgen_point) */
    int ok = f[0] >= 0 && f[0] <= 100000 && f[0] == floor(f[0]);
    ps_stage_figures *st = ok ? stage_get(r, (int)f[0]) : NULL;
    if (st)
      *st = (ps_stage_figures){(int)f[0], f[1] == 1, f[2], f[3], f[4]};
  }
}

static void doc_from_json(jd_verdicts_collect *c, const cJSON *o) {
  const char *run = str_of(o, "run"), *t = str_of(o, "time_ns");
  if (!run || !t)
    return;
  jd_dss_doc *d = calloc(1, sizeof *d);
  if (!d || !(d->run = strdup(run))) {
    free(d);
    return;
  }
  const char *source = str_of(o, "source"); /* absent in states from before benchmarker */
  d->source = source && strcmp(source, JD_VERDICTS_COLLECT_BENCHMARKER) == 0
                  ? JD_VERDICTS_COLLECT_BENCHMARKER
                  : JD_VERDICTS_COLLECT_DSS;
  d->ended = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "ended"));
  d->time_ns = strtoll(t, NULL, 10);
  d->backfill = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "backfill"));
  const cJSON *tests = cJSON_GetObjectItemCaseSensitive(o, "tests");
  size_t nt = (size_t)cJSON_GetArraySize(tests);
  d->tests = calloc(nt ? nt : 1, sizeof *d->tests);
  jd_dss_doc **tail = &c->docs; /* in the order saved */
  while (*tail)
    tail = &(*tail)->next;
  *tail = d;
  const cJSON *to, *list = d->tests ? tests : NULL;
  cJSON_ArrayForEach(to, list) {
    const char *name = str_of(to, "test");
    const cJSON *arms = cJSON_GetObjectItemCaseSensitive(to, "arms");
    size_t na = (size_t)cJSON_GetArraySize(arms);
    jd_dss_test *te = &d->tests[d->ntests];
    if (!name || !(te->test = strdup(name)) ||
        !(te->arms = calloc(na ? na : 1, sizeof *te->arms))) {
      free(te->test);
      te->test = NULL;
      continue;
    }
    d->ntests++;
    const cJSON *ao;
    cJSON_ArrayForEach(ao, arms) {
      const cJSON *rps = cJSON_GetObjectItemCaseSensitive(ao, "rps_total");
      size_t nv = (size_t)cJSON_GetArraySize(rps);
      jd_dss_arm *a = &te->arms[te->narms];
      const char *label = str_of(ao, "arm");
      if (!label || (te->narms && nv != te->nvariants))
        continue;
      te->nvariants = nv;
      a->label = strdup(label);
      a->rps_total = malloc((nv ? nv : 1) * sizeof(double));
      a->p95_ms = malloc((nv ? nv : 1) * sizeof(double));
      a->errors = malloc((nv ? nv : 1) * sizeof(double));
      if (!a->label || !a->rps_total || !a->p95_ms || !a->errors) {
        free(a->label);
        free(a->rps_total);
        free(a->p95_ms);
        free(a->errors);
        memset(a, 0, sizeof *a);
        continue;
      }
      read_numbers(rps, a->rps_total, nv);
      read_numbers(cJSON_GetObjectItemCaseSensitive(ao, "p95_ms"), a->p95_ms, nv);
      read_numbers(cJSON_GetObjectItemCaseSensitive(ao, "errors"), a->errors, nv);
      te->narms++;
    }
  }
}

void jd_verdicts_collect_from_json(jd_verdicts_collect *c, const cJSON *json) {
  const cJSON *o;
  cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(json, "runs")) run_from_json(c, o);
  cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(json, "dss")) doc_from_json(c, o);
}
