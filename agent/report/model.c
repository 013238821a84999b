/*
 * report/model.c: the report's rows and how they are settled
 * (include/report/model.h).
 *
 * DESIGN: a run's status has several witnesses that can disagree for a
 * while: the start marker (running), a `stalled` end marker, the real end
 * marker, and the `status` field of its loadgen_run point. The real end
 * wins over the run point, the run point over a stall (a stalled run that
 * later ended has both markers, docs/schema.md "Run lifecycle"), a stall
 * over a bare start. Each witness is kept apart while rows arrive and the
 * decision is made once, in ps_report_finish(), so the order of the
 * queries' answers never matters.
 */
#include "report/model.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runs/runs.h"

const ps_report_metric *const ps_report_metrics = ps_figures;

int ps_report_metric_index(const char *field) {
  for (int i = 0; field && i < PS_REPORT_NMETRICS; i++)
    if (strcmp(ps_report_metrics[i].field, field) == 0)
      return i;
  return -1;
}

void ps_report_data_init(ps_report_data *d, int64_t now_ns, int64_t since_ns,
                         const char *source) {
  memset(d, 0, sizeof *d);
  d->now_ns = now_ns;
  d->since_ns = since_ns;
  d->source = source && source[0] ? strdup(source) : NULL;
  ps_triage_set_init(&d->triage);
}

int ps_report_set_hosts(ps_report_data *d, const char *const *hosts, size_t n) {
  if (!n)
    return 0;
  if (!(d->hosts = calloc(n, sizeof *d->hosts)))
    return -ENOMEM;
  for (size_t i = 0; i < n; i++) {
    if (!(d->hosts[i] = strdup(hosts[i] ? hosts[i] : "")))
      return -ENOMEM; /* ps_report_data_free() frees what was copied */
    d->nhosts = i + 1;
  }
  return 0;
}

static void free_run(ps_rrun *r) {
  free(r->host);
  free(r->name);
  free(r->revision);
  free(r->test_type);
  free(r->text);
}

static void free_verdict(ps_rverdict *v) {
  char *s[] = {v->host,   v->source,   v->series,        v->metric,       v->run,
               v->stage,  v->arm,      v->reference,     v->verdict,      v->change_run,
               v->method, v->revision, v->good_revision, v->bad_revision, v->against,
               v->vat,    v->vat_name, v->note};
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
    free(s[i]);
}

static void free_dss(ps_rdss *p) {
  free(p->host);
  free(p->run);
  free(p->test);
  free(p->arm);
  free(p->variant);
  free(p->sweep);
}

void ps_report_data_free(ps_report_data *d) {
  if (!d)
    return;
  ps_triage_set_free(&d->triage);
  ps_rb_benchmarker_free(&d->bm);
  for (size_t i = 0; i < d->nruns; i++)
    free_run(&d->runs[i]);
  for (size_t i = 0; i < d->nverdicts; i++)
    free_verdict(&d->verdicts[i]);
  for (size_t i = 0; i < d->ndss; i++)
    free_dss(&d->dss[i]);
  for (size_t i = 0; i < d->ndssfiles; i++) {
    free(d->dssfiles[i].host);
    free(d->dssfiles[i].run);
    free(d->dssfiles[i].text);
  }
  for (size_t i = 0; i < d->nstage_candidates; i++) {
    free(d->stage_candidates[i].host);
    free(d->stage_candidates[i].run);
  }
  for (size_t i = 0; i < d->nstage_runs; i++) {
    free(d->stage_runs[i].host);
    free(d->stage_runs[i].run);
  }
  for (size_t i = 0; i < d->nstages; i++) {
    free(d->stages[i].stage);
    free(d->stages[i].task);
  }
  for (size_t i = 0; i < d->nblocks; i++)
    free(d->blocks[i].stage);
  for (size_t i = 0; i < d->nhealth; i++)
    free(d->health[i].host);
  free(d->runs);
  free(d->verdicts);
  free(d->dss);
  free(d->dssfiles);
  free(d->stage_candidates);
  free(d->stage_runs);
  free(d->stages);
  free(d->blocks);
  free(d->health);
  for (size_t i = 0; i < d->nchains; i++)
    free(d->chains[i].points);
  free(d->chains);
  free(d->source);
  for (size_t i = 0; i < d->nhosts; i++)
    free(d->hosts[i]);
  free(d->hosts);
  free(d->stage_run);
  free(d->stage_host);
  free(d->last_error);
  free(d->compare_url);
  free(d->alert_error);
  memset(d, 0, sizeof *d);
}

/* One more zeroed element at the end of an array that grows by doubling. */
static void *push(void **arr, size_t *n, size_t *cap, size_t size) {
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, nc * size);
    if (!p)
      return NULL;
    *arr = p;
    *cap = nc;
  }
  void *e = (char *)*arr + *n * size;
  memset(e, 0, size);
  (*n)++;
  return e;
}

#define PUSH(d, name) push((void **)&(d)->name, &(d)->n##name, &(d)->cap_##name, sizeof *(d)->name)

ps_rchain *ps_report_add_chain(ps_report_data *d) { return PUSH(d, chains); }

ps_rrun *ps_report_add_run(ps_report_data *d, const char *name) {
  char *copy = strdup(name ? name : "");
  ps_rrun *r = copy ? PUSH(d, runs) : NULL;
  if (!r) {
    free(copy);
    return NULL;
  }
  r->name = copy;
  r->duration_s = NAN;
  for (int i = 0; i < PS_REPORT_NMETRICS; i++)
    r->metric[i] = NAN;
  return r;
}

ps_rverdict *ps_report_add_verdict(ps_report_data *d) {
  ps_rverdict *v = PUSH(d, verdicts);
  if (v)
    v->value = v->baseline = v->change_pct = v->p_value = v->baseline_runs = v->variants =
        v->variants_agree = NAN;
  return v;
}

ps_rdss *ps_report_add_dss(ps_report_data *d) {
  ps_rdss *p = PUSH(d, dss);
  if (p)
    p->variant_index = p->rps = p->p95 = p->errors = NAN;
  return p;
}

ps_rdssfile *ps_report_add_dssfile(ps_report_data *d) { return PUSH(d, dssfiles); }

ps_rstamp *ps_report_add_stage_candidate(ps_report_data *d) {
  return PUSH(d, stage_candidates);
}

ps_rstage *ps_report_add_stage(ps_report_data *d) {
  ps_rstage *s = PUSH(d, stages);
  if (s)
    s->cycles = s->avg_duration = s->p95_duration = s->success_rate = NAN;
  return s;
}

ps_rblocks *ps_report_add_blocks(ps_report_data *d) {
  ps_rblocks *b = PUSH(d, blocks);
  if (b)
    b->avg_swingset = b->avg_block = b->block_count = NAN;
  return b;
}

ps_rhealth *ps_report_add_health(ps_report_data *d) {
  ps_rhealth *h = PUSH(d, health);
  if (h)
    h->points_written = h->records_rejected = h->points_rejected = h->uptime_s = NAN;
  return h;
}

int ps_report_same(const char *a, const char *b) {
  return a && b ? strcmp(a, b) == 0 : a == b;
}

ps_rrun *ps_report_find_host_run(ps_report_data *d, const char *host, const char *name) {
  for (size_t i = 0; name && i < d->nruns; i++)
    if (strcmp(d->runs[i].name, name) == 0 && ps_report_same(d->runs[i].host, host))
      return &d->runs[i];
  return NULL;
}

ps_rrun *ps_report_find_run(ps_report_data *d, const char *name) {
  for (size_t i = 0; name && i < d->nruns; i++)
    if (strcmp(d->runs[i].name, name) == 0)
      return &d->runs[i];
  return NULL;
}

int ps_report_shows(const ps_report_data *d, const char *source) {
  return !d->source || strcmp(d->source, source) == 0;
}

static int by_stamp_desc(const void *a, const void *b) {
  const ps_rstamp *x = a, *y = b;
  if (x->time_ns != y->time_ns)
    return x->time_ns > y->time_ns ? -1 : 1;
  int c = strcmp(x->host ? x->host : "", y->host ? y->host : "");
  return c ? c : strcmp(x->run, y->run);
}

int ps_report_use_stage_run(ps_report_data *d, size_t k) {
  free(d->stage_run);
  free(d->stage_host);
  d->stage_run = d->stage_host = NULL;
  if (k >= d->nstage_runs)
    return 0;
  const ps_rstamp *s = &d->stage_runs[k];
  d->stage_of = k;
  if (!(d->stage_run = strdup(s->run)) || (s->host && !(d->stage_host = strdup(s->host))))
    return -ENOMEM;
  return 0;
}

/* One stage run per host, so that no host's stages hide another's. */
int ps_report_pick_stage_run(ps_report_data *d) {
  for (size_t i = 0; i < d->nstage_candidates; i++) {
    const ps_rstamp *c = &d->stage_candidates[i];
    if (!c->run || !ps_report_find_host_run(d, c->host, c->run))
      continue;
    ps_rstamp *best = NULL;
    for (size_t k = 0; k < d->nstage_runs && !best; k++)
      if (ps_report_same(d->stage_runs[k].host, c->host))
        best = &d->stage_runs[k];
    if (!best) {
      if (!(best = PUSH(d, stage_runs)))
        return -ENOMEM;
    } else if (c->time_ns < best->time_ns ||
               (c->time_ns == best->time_ns && strcmp(c->run, best->run) >= 0)) {
      continue;
    }
    char *run = strdup(c->run), *host = c->host ? strdup(c->host) : NULL;
    if (!run || (c->host && !host)) {
      free(run);
      free(host);
      return -ENOMEM;
    }
    free(best->run);
    free(best->host);
    *best = (ps_rstamp){host, run, c->time_ns};
  }
  if (d->nstage_runs > 1)
    qsort(d->stage_runs, d->nstage_runs, sizeof *d->stage_runs, by_stamp_desc);
  return ps_report_use_stage_run(d, 0);
}

/* --- settling ----------------------------------------------------------- */

static int settle_run(ps_rrun *r) {
  if (!r->test_type) { /* a run without its loadgen_run point yet */
    ps_run_id id;
    ps_run_id_from_name(r->name, &id);
    if (id.test_type[0] && !(r->test_type = strdup(id.test_type)))
      return -ENOMEM;
  }
  if (r->end_status)
    r->status = r->end_status;
  else if (r->point_status)
    r->status = r->point_status;
  else if (r->stalled_status)
    r->status = r->stalled_status;
  else if (r->have_start_marker)
    r->status = PS_RS_RUNNING;
  if (!r->end_ns)
    r->end_ns = r->stalled_ns;
  if (!r->start_ns)
    r->start_ns = r->run_point_ns ? r->run_point_ns : r->end_ns;
  if (isnan(r->duration_s) && r->end_ns > r->start_ns && r->start_ns &&
      r->status != PS_RS_RUNNING && r->status != PS_RS_STALLED)
    r->duration_s = (double)(r->end_ns - r->start_ns) / 1e9;
  return 0;
}

static int cmp_str(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }

static int by_start_desc(const void *a, const void *b) {
  const ps_rrun *x = a, *y = b;
  if (x->start_ns != y->start_ns)
    return x->start_ns > y->start_ns ? -1 : 1;
  int c = strcmp(x->name, y->name);
  return c ? c : cmp_str(x->host, y->host);
}

static int by_time_desc(const void *a, const void *b) {
  const ps_rdssfile *x = a, *y = b;
  if (x->time_ns != y->time_ns)
    return x->time_ns > y->time_ns ? -1 : 1;
  int c = cmp_str(x->run, y->run);
  return c ? c : cmp_str(x->host, y->host);
}

static int by_dss_key(const void *a, const void *b) {
  const ps_rdss *x = a, *y = b;
  int c = cmp_str(x->host, y->host);
  if (!c)
    c = cmp_str(x->run, y->run);
  if (!c)
    c = cmp_str(x->test, y->test);
  if (!c)
    c = cmp_str(x->arm, y->arm);
  if (!c && isnan(x->variant_index) != isnan(y->variant_index))
    c = isnan(x->variant_index) ? 1 : -1; /* rows without a position last */
  else if (!c && x->variant_index != y->variant_index && !isnan(x->variant_index))
    c = x->variant_index < y->variant_index ? -1 : 1;
  if (!c)
    c = cmp_str(x->variant, y->variant);
  return c;
}

static ps_rdssfile *find_dssfile(ps_report_data *d, const char *host, const char *run) {
  for (size_t i = 0; i < d->ndssfiles; i++)
    if (cmp_str(d->dssfiles[i].run, run) == 0 && ps_report_same(d->dssfiles[i].host, host))
      return &d->dssfiles[i];
  return NULL;
}

/* A results file written again (a re-run into the same folder) has points
 * at its new modification time; the page shows that version only. */
static int settle_dss(ps_report_data *d) {
  for (size_t i = 0; i < d->ndss; i++) {
    ps_rdss *p = &d->dss[i];
    ps_rdssfile *f = find_dssfile(d, p->host, p->run);
    if (!f) {
      if (!(f = ps_report_add_dssfile(d)) || !(f->run = strdup(p->run ? p->run : "")) ||
          (p->host && !(f->host = strdup(p->host))))
        return -ENOMEM;
      f->status = PS_RS_UNKNOWN;
    }
  }
  /* the newest point time per file decides its version */
  int64_t *newest = calloc(d->ndssfiles ? d->ndssfiles : 1, sizeof *newest);
  if (!newest)
    return -ENOMEM;
  for (size_t i = 0; i < d->ndss; i++) {
    size_t k = (size_t)(find_dssfile(d, d->dss[i].host, d->dss[i].run) - d->dssfiles);
    if (d->dss[i].time_ns > newest[k])
      newest[k] = d->dss[i].time_ns;
  }
  size_t kept = 0;
  for (size_t i = 0; i < d->ndss; i++) {
    size_t k = (size_t)(find_dssfile(d, d->dss[i].host, d->dss[i].run) - d->dssfiles);
    if (d->dss[i].time_ns < newest[k]) {
      free_dss(&d->dss[i]);
      continue;
    }
    d->dss[kept++] = d->dss[i];
  }
  d->ndss = kept;
  for (size_t k = 0; k < d->ndssfiles; k++)
    if (!d->dssfiles[k].time_ns)
      d->dssfiles[k].time_ns = newest[k];
  free(newest);
  /* qsort's array may not be NULL, even for no elements */
  if (d->ndss > 1)
    qsort(d->dss, d->ndss, sizeof *d->dss, by_dss_key);
  if (d->ndssfiles > 1)
    qsort(d->dssfiles, d->ndssfiles, sizeof *d->dssfiles, by_time_desc);
  return 0;
}

int ps_report_finish(ps_report_data *d) {
  for (size_t i = 0; i < d->nruns; i++)
    if (settle_run(&d->runs[i]) < 0)
      return -ENOMEM;
  if (!ps_report_shows(d, "loadgen")) {
    for (size_t i = 0; i < d->nruns; i++)
      free_run(&d->runs[i]);
    d->nruns = 0;
  }
  if (!ps_report_shows(d, "dss_bench")) {
    for (size_t i = 0; i < d->ndss; i++)
      free_dss(&d->dss[i]);
    d->ndss = 0;
    for (size_t i = 0; i < d->ndssfiles; i++) {
      free(d->dssfiles[i].host);
      free(d->dssfiles[i].run);
      free(d->dssfiles[i].text);
    }
    d->ndssfiles = 0;
  }
  if (d->nruns > 1)
    qsort(d->runs, d->nruns, sizeof *d->runs, by_start_desc);
  return settle_dss(d);
}
