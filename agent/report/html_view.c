/*
 * report/html_view.c: the view the page is drawn from (html_private.h):
 * the verdicts sorted by run, the trend series, stage and task lists, and
 * every (results file, test) of the DSS bench with its variants in sweep
 * order and its arms. It writes nothing; what it sorts or collects points
 * into the model, which outlives the page.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html_private.h"
#include "core/figures.h"

static int host_cmp(const char *a, const char *b) {
  return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

/* (host, run) against a verdict's. */
static int key_cmp(const ps_rverdict *v, const char *host, const char *run) {
  int c = host_cmp(v->host, host);
  return c ? c : strcmp(v->run, run);
}

static int vidx_cmp(const void *a, const void *b) {
  const ps_rverdict *x = *(const ps_rverdict *const *)a, *y = *(const ps_rverdict *const *)b;
  int c = key_cmp(x, y->host, y->run);
  if (!c)
    c = strcmp(x->metric, y->metric);
  if (!c)
    c = x < y ? -1 : x > y; /* stable: the order the server sent them */
  return c;
}

/* The verdicts of one run: [*begin, *end) of p->vidx. */
void ps_html_run_verdicts(const page *p, const char *host, const char *run, size_t *begin,
                          size_t *end) {
  size_t lo = 0, hi = p->nvidx;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (key_cmp(p->vidx[mid], host, run) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *begin = lo;
  while (lo < p->nvidx && key_cmp(p->vidx[lo], host, run) == 0)
    lo++;
  *end = lo;
}

const ps_rverdict *ps_html_run_verdict(const page *p, const char *host, const char *run,
                                       const char *metric) {
  size_t b, e;
  ps_html_run_verdicts(p, host, run, &b, &e);
  for (size_t i = b; i < e; i++)
    if (is_run_level(p->vidx[i]) && strcmp(p->vidx[i]->metric, metric) == 0)
      return p->vidx[i];
  return NULL;
}

/* What a person calls a verdict's metric; the field name otherwise. */
const char *ps_html_metric_label(const char *field) {
  static const struct {
    const char *field, *label;
  } more[] = {
      {"rps_total", "q/s"},
      {"p95_ms", "p95 latency"},
      {"errors", "errors"},
  };
  int i = ps_report_metric_index(field);
  if (i >= 0)
    return ps_report_metrics[i].label;
  const ps_figure *f = ps_figure_find(field);
  if (f && f->label)
    return f->label;
  for (size_t k = 0; field && k < sizeof more / sizeof more[0]; k++)
    if (strcmp(more[k].field, field) == 0)
      return more[k].label;
  return field;
}

static int trend_seen(const ps_report_data *d, size_t upto, const ps_rrun *r) {
  for (size_t i = 0; i < upto; i++)
    if (d->runs[i].status == PS_RS_SUCCESS && d->runs[i].test_type &&
        strcmp(d->runs[i].test_type, r->test_type) == 0 && same_host(d->runs[i].host, r->host))
      return 1;
  return 0;
}

/* (test type, host) with a successful run, in the order of their newest
 * run: hardware is part of what is measured, so each machine has its own
 * line (docs/report.md). */
size_t ps_html_trend_series(const ps_report_data *d, trend_key *out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < d->nruns && n < max; i++) {
    const ps_rrun *r = &d->runs[i];
    if (r->status == PS_RS_SUCCESS && r->test_type && !trend_seen(d, i, r))
      out[n++] = (trend_key){r->test_type, r->host};
  }
  return n;
}

static int host_listed(const char **v, size_t n, const char *host) {
  for (size_t i = 0; i < n; i++)
    if (same_host(v[i], host))
      return 1;
  return 0;
}

size_t ps_html_run_hosts(const ps_report_data *d, const char **out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < d->nruns && n < max; i++)
    if (!host_listed(out, n, d->runs[i].host))
      out[n++] = d->runs[i].host;
  return n;
}

size_t ps_html_dss_hosts(const ps_report_data *d, const char **out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < d->ndssfiles && n < max; i++)
    if (!host_listed(out, n, d->dssfiles[i].host))
      out[n++] = d->dssfiles[i].host;
  return n;
}

int ps_html_by_name(const void *ctx, const char *a, const char *b) {
  (void)ctx;
  return strcmp(a, b);
}

/* Stage labels in numeric order ("10" after "9"). */
static int stage_cmp(const void *ctx, const char *a, const char *b) {
  (void)ctx;
  char *ea, *eb;
  long x = strtol(a, &ea, 10), y = strtol(b, &eb, 10);
  if (!*ea && !*eb && x != y)
    return x < y ? -1 : 1;
  if (!*ea != !*eb)
    return *ea ? 1 : -1;
  return strcmp(a, b);
}

/* Adds x once, keeping the names ordered by cmp. */
int ps_html_names_add(names *s, const char *x, name_cmp cmp, const void *ctx) {
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->v[i], x) == 0)
      return 0;
  const char **nv = realloc(s->v, (s->n + 1) * sizeof *nv);
  if (!nv)
    return -ENOMEM;
  s->v = nv;
  size_t at = s->n;
  while (at > 0 && cmp(ctx, x, s->v[at - 1]) < 0) {
    s->v[at] = s->v[at - 1];
    at--;
  }
  s->v[at] = x;
  s->n++;
  return 0;
}

/* The task the stage figures are read from (every task's cycles) first. */
static int task_cmp(const void *ctx, const char *a, const char *b) {
  (void)ctx;
  const char *all = ps_stage_figure(PS_STAGE_FIG_AVG_DURATION)->tag_value;
  if (strcmp(a, all) == 0 || strcmp(b, all) == 0)
    return strcmp(a, all) == 0 ? (strcmp(b, all) == 0 ? 0 : -1) : 1;
  return strcmp(a, b);
}

void ps_html_stage_lists(page *p, size_t of, names *stages, names *tasks) {
  const ps_report_data *d = p->d;
  for (size_t i = 0; i < d->nstages && !p->rc; i++) {
    if (d->stages[i].of != of)
      continue;
    if (ps_html_names_add(stages, d->stages[i].stage, stage_cmp, NULL) ||
        ps_html_names_add(tasks, d->stages[i].task, task_cmp, NULL))
      p->rc = -ENOMEM;
  }
  for (size_t i = 0; i < d->nblocks && !p->rc; i++)
    if (d->blocks[i].of == of && ps_html_names_add(stages, d->blocks[i].stage, stage_cmp, NULL))
      p->rc = -ENOMEM;
}

/* The rows of one results file, [*begin, *end) of d->dss (sorted by host
 * and run). */
void ps_html_dss_rows(const ps_report_data *d, const char *host, const char *run,
                      size_t *begin, size_t *end) {
  size_t i = 0;
  while (i < d->ndss && !(strcmp(d->dss[i].run, run) == 0 && same_host(d->dss[i].host, host)))
    i++;
  *begin = i;
  while (i < d->ndss && strcmp(d->dss[i].run, run) == 0 && same_host(d->dss[i].host, host))
    i++;
  *end = i;
}

/* The reference arm of a file's test, as its verdicts name it. */
static const char *dss_reference(const ps_report_data *d, const char *host, const char *run,
                                 const char *test) {
  for (size_t i = 0; i < d->nverdicts; i++) {
    const ps_rverdict *v = &d->verdicts[i];
    if (is_dss(v) && v->reference && same(v->run, run) && same_host(v->host, host) &&
        same(v->series, test))
      return v->reference;
  }
  return NULL;
}

/* A variant's place in the sweep: its smallest variantIndex in the test. */
static double variant_index_of(const dss_test *t, const char *variant) {
  double best = NAN;
  for (size_t i = t->begin; i < t->end; i++) {
    const ps_rdss *x = &t->d->dss[i];
    if (same(x->test, t->test) && same(x->variant, variant) && !isnan(x->variant_index) &&
        (isnan(best) || x->variant_index < best))
      best = x->variant_index;
  }
  return best;
}

static int variant_cmp(const void *ctx, const char *a, const char *b) {
  double x = variant_index_of(ctx, a), y = variant_index_of(ctx, b);
  if (!isnan(x) && !isnan(y) && x != y)
    return x < y ? -1 : 1;
  if (isnan(x) != isnan(y))
    return isnan(x) ? 1 : -1;
  return strcmp(a, b);
}

/* The reference arm first (it is what the others are judged against). */
static int arm_cmp(const void *ctx, const char *a, const char *b) {
  const char *ref = ((const dss_test *)ctx)->reference;
  if (ref && (same(a, ref) || same(b, ref)))
    return same(a, ref) ? (same(b, ref) ? 0 : -1) : 1;
  return strcmp(a, b);
}

/* Variants in sweep order and arms of one test of one file. */
static void dss_collect(page *p, size_t file, size_t begin, size_t end, const char *test,
                        dss_test *t) {
  const ps_report_data *d = p->d;
  memset(t, 0, sizeof *t);
  t->d = d;
  t->host = d->dss[begin].host;
  t->run = d->dss[begin].run;
  t->test = test;
  t->begin = begin;
  t->end = end;
  t->file = file;
  t->reference = dss_reference(d, t->host, t->run, test);
  for (size_t i = begin; i < end && !p->rc; i++) {
    const ps_rdss *x = &d->dss[i];
    if (strcmp(x->test, test) != 0)
      continue;
    if (!t->sweep)
      t->sweep = x->sweep;
    if (ps_html_names_add(&t->variants, x->variant, variant_cmp, t) ||
        ps_html_names_add(&t->arms, x->arm, arm_cmp, t))
      p->rc = -ENOMEM;
  }
}

/* Every (results file, test): files newest first, tests by name. */
static void prepare_dss(page *p) {
  const ps_report_data *d = p->d;
  for (size_t f = 0; f < d->ndssfiles && !p->rc; f++) {
    size_t begin, end;
    ps_html_dss_rows(d, d->dssfiles[f].host, d->dssfiles[f].run, &begin, &end);
    for (size_t i = begin; i < end && !p->rc; i++) {
      if (i > begin && strcmp(d->dss[i].test, d->dss[i - 1].test) == 0)
        continue; /* rows are sorted by test within a file */
      dss_test *nt = realloc(p->tests, (p->ntests + 1) * sizeof *nt);
      if (!nt) {
        p->rc = -ENOMEM;
        return;
      }
      p->tests = nt;
      dss_collect(p, f, begin, end, d->dss[i].test, &p->tests[p->ntests++]);
    }
  }
}

void ps_html_prepare(page *p) {
  const ps_report_data *d = p->d;
  if (d->nverdicts && !(p->vidx = malloc(d->nverdicts * sizeof *p->vidx))) {
    p->rc = -ENOMEM;
    return;
  }
  for (size_t i = 0; i < d->nverdicts; i++)
    p->vidx[i] = &d->verdicts[i];
  p->nvidx = d->nverdicts;
  if (p->nvidx > 1)
    qsort(p->vidx, p->nvidx, sizeof *p->vidx, vidx_cmp);
  prepare_dss(p);
}

void ps_html_release(page *p) {
  for (size_t i = 0; i < p->ntests; i++) {
    free(p->tests[i].variants.v);
    free(p->tests[i].arms.v);
  }
  free(p->tests);
  free(p->vidx);
}

/* A triage decision beside what it is about: "acknowledged: why", who and
 * when in its title, the ticket a link (only an http(s) one: a link is
 * followed by a click, and a ticket from the data may hold anything). */
void ps_html_decision_badge(page *p, const char *what, const ps_triage_decision *t) {
  putf(p, " <span class=\"triage triage-%s\" title=\"%s by ", what, what);
  esc(p, t->who ? t->who : "?");
  if (t->when_ns > 0) {
    put(p, " at ");
    ps_html_fmt_time(p, t->when_ns);
    put(p, " UTC");
  }
  put(p, " (decision ");
  esc(p, t->id);
  putf(p, ")\">%s: ", what);
  txt(p, t->reason ? t->reason : "");
  if (t->ticket &&
      (strncmp(t->ticket, "https://", 8) == 0 || strncmp(t->ticket, "http://", 7) == 0)) {
    put(p, " <a href=\"");
    esc(p, t->ticket);
    put(p, "\" rel=\"noopener noreferrer\">ticket</a>");
  } else if (t->ticket) {
    put(p, " ticket ");
    txt(p, t->ticket);
  }
  put(p, "</span>");
}
