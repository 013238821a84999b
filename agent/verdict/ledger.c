/*
 * ledger.c: the runs of each judged series. See include/verdict/ledger.h.
 *
 * Design
 * - Plain sorted arrays: a series holds hundreds of runs and a put moves
 *   at most that many entries; judging reads them in order anyway.
 * - Times are written as strings of decimal nanoseconds: a double holds
 *   only 53 bits, and a start time must come back exactly (it is the
 *   verdict point's timestamp, which an overwrite must hit).
 */
#include "verdict/ledger.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void run_free(ps_ledger_run *r) {
  free(r->host);
  free(r->name);
  free(r->revision);
  free(r->values);
  free(r->steps);
}

int ps_ledger_init(ps_ledger *l, const char *const *metrics, size_t nmetrics) {
  memset(l, 0, sizeof *l);
  l->metrics = calloc(nmetrics ? nmetrics : 1, sizeof *l->metrics);
  if (!l->metrics)
    return -ENOMEM;
  for (size_t i = 0; i < nmetrics; i++) {
    if (!(l->metrics[i] = strdup(metrics[i]))) {
      l->nmetrics = i;
      ps_ledger_free(l);
      return -ENOMEM;
    }
  }
  l->nmetrics = nmetrics;
  return 0;
}

void ps_ledger_free(ps_ledger *l) {
  for (size_t i = 0; i < l->nseries; i++) {
    ps_ledger_series *s = &l->series[i];
    for (size_t j = 0; j < s->nruns; j++)
      run_free(&s->runs[j]);
    free(s->runs);
    free(s->source);
    free(s->series);
    free(s->host);
  }
  free(l->series);
  for (size_t i = 0; i < l->nmetrics; i++)
    free(l->metrics[i]);
  free(l->metrics);
  memset(l, 0, sizeof *l);
}

ps_ledger_series *ps_ledger_series_get(ps_ledger *l, const char *source, const char *series,
                                       const char *host, int create) {
  if (!host)
    host = "";
  for (size_t i = 0; i < l->nseries; i++)
    if (strcmp(l->series[i].source, source) == 0 && strcmp(l->series[i].series, series) == 0 &&
        strcmp(l->series[i].host, host) == 0)
      return &l->series[i];
  if (!create)
    return NULL;
  if (l->nseries == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 4;
    ps_ledger_series *n = realloc(l->series, cap * sizeof *n);
    if (!n)
      return NULL;
    l->series = n;
    l->cap = cap;
  }
  ps_ledger_series *s = &l->series[l->nseries];
  memset(s, 0, sizeof *s);
  s->source = strdup(source);
  s->series = strdup(series);
  s->host = strdup(host);
  if (!s->source || !s->series || !s->host) {
    free(s->source);
    free(s->series);
    free(s->host);
    return NULL;
  }
  l->nseries++;
  return s;
}

long ps_ledger_find(const ps_ledger_series *s, const char *host, const char *name) {
  if (!host)
    host = "";
  for (size_t i = 0; i < s->nruns; i++)
    if (strcmp(s->runs[i].name, name) == 0 && strcmp(s->runs[i].host, host) == 0)
      return (long)i;
  return -1;
}

int ps_ledger_set_steps(ps_ledger_run *r, const ps_ledger_step *steps, size_t n) {
  ps_ledger_step *copy = n ? malloc(n * sizeof *copy) : NULL;
  free(r->steps);
  r->steps = copy;
  r->nsteps = copy ? n : 0;
  if (n && !copy)
    return -ENOMEM;
  if (n)
    memcpy(copy, steps, n * sizeof *copy);
  return 0;
}

static const char *const step_ends[] = {"Completed", "Unstable", "StabilityNotAchieved"};

const char *ps_ledger_step_end_name(ps_step_end end) {
  return (size_t)end < sizeof step_ends / sizeof step_ends[0] ? step_ends[end] : "?";
}

static int run_before(int64_t start_ns, const char *name, const ps_ledger_run *r) {
  if (start_ns != r->start_ns)
    return start_ns < r->start_ns;
  return strcmp(name, r->name) < 0;
}

long ps_ledger_put(ps_ledger *l, ps_ledger_series *s, const char *host, const char *name,
                   const char *revision, int64_t start_ns, ps_run_status status, int backfill,
                   const double *values) {
  ps_ledger_run r = {0};
  r.host = strdup(host ? host : "");
  r.name = strdup(name);
  r.revision = dup_or_null(revision && revision[0] ? revision : NULL);
  r.values = malloc((l->nmetrics ? l->nmetrics : 1) * sizeof *r.values);
  if (!r.host || !r.name || (revision && revision[0] && !r.revision) || !r.values) {
    run_free(&r);
    return -ENOMEM;
  }
  for (size_t i = 0; i < l->nmetrics; i++)
    r.values[i] = values ? values[i] : NAN;
  r.start_ns = start_ns;
  r.status = status;
  r.backfill = backfill;
  r.put_seq = ++l->last_put_seq;
  long old = ps_ledger_find(s, r.host, name);
  if (old >= 0) { /* replaced: it may move */
    run_free(&s->runs[old]);
    memmove(&s->runs[old], &s->runs[old + 1], (s->nruns - (size_t)old - 1) * sizeof r);
    s->nruns--;
  } else if (s->nruns == PS_LEDGER_MAX_RUNS) {
    run_free(&s->runs[0]); /* the oldest goes */
    memmove(&s->runs[0], &s->runs[1], (s->nruns - 1) * sizeof r);
    s->nruns--;
  }
  if (s->nruns == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    ps_ledger_run *n = realloc(s->runs, cap * sizeof *n);
    if (!n) {
      run_free(&r);
      return -ENOMEM;
    }
    s->runs = n;
    s->cap = cap;
  }
  size_t at = s->nruns;
  while (at > 0 && run_before(start_ns, name, &s->runs[at - 1]))
    at--;
  memmove(&s->runs[at + 1], &s->runs[at], (s->nruns - at) * sizeof r);
  s->runs[at] = r;
  s->nruns++;
  return (long)at;
}

void ps_ledger_view(const ps_ledger_series *s, ps_verdict_run *out) {
  for (size_t i = 0; i < s->nruns; i++) {
    const ps_ledger_run *r = &s->runs[i];
    out[i] = (ps_verdict_run){r->name, r->revision, r->start_ns, r->status, r->backfill,
                              r->values, r->host};
  }
}

/* --- persistence ------------------------------------------------------------ */

static cJSON *run_to_json(const ps_ledger *l, const ps_ledger_run *r) {
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return NULL;
  char t[24];
  snprintf(t, sizeof t, "%" PRId64, r->start_ns);
  cJSON_AddStringToObject(o, "host", r->host);
  cJSON_AddStringToObject(o, "name", r->name);
  if (r->revision)
    cJSON_AddStringToObject(o, "revision", r->revision);
  cJSON_AddStringToObject(o, "start_ns", t);
  cJSON_AddStringToObject(o, "status", ps_run_status_name(r->status));
  cJSON_AddBoolToObject(o, "backfill", r->backfill);
  cJSON_AddBoolToObject(o, "judged", r->judged);
  cJSON *v = cJSON_AddObjectToObject(o, "values");
  /* JSON has no infinity (it would be written as null): only finite
   * figures are kept, as the reader reads them */
  for (size_t i = 0; v && i < l->nmetrics; i++)
    if (isfinite(r->values[i]))
      cJSON_AddNumberToObject(v, l->metrics[i], r->values[i]);
  cJSON *steps = r->nsteps ? cJSON_AddArrayToObject(o, "steps") : NULL;
  for (size_t i = 0; steps && i < r->nsteps; i++) {
    cJSON *step = cJSON_CreateArray();
    if (!step)
      break;
    cJSON_AddItemToArray(step, cJSON_CreateNumber(r->steps[i].load));
    cJSON_AddItemToArray(step, cJSON_CreateString(ps_ledger_step_end_name(r->steps[i].end)));
    cJSON_AddItemToArray(steps, step);
  }
  return o;
}

cJSON *ps_ledger_to_json(const ps_ledger *l) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < l->nseries; i++) {
    const ps_ledger_series *s = &l->series[i];
    cJSON *o = cJSON_CreateObject();
    if (!o)
      break;
    cJSON_AddStringToObject(o, "source", s->source);
    cJSON_AddStringToObject(o, "series", s->series);
    cJSON_AddStringToObject(o, "host", s->host);
    cJSON *runs = cJSON_AddArrayToObject(o, "runs");
    for (size_t j = 0; runs && j < s->nruns; j++) {
      cJSON *r = run_to_json(l, &s->runs[j]);
      if (r)
        cJSON_AddItemToArray(runs, r);
    }
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

static ps_run_status status_from_name(const char *s) {
  static const ps_run_status all[] = {PS_RUN_STATUS_SUCCESS, PS_RUN_STATUS_FAILED,
                                      PS_RUN_STATUS_INTERRUPTED, PS_RUN_STATUS_STALLED};
  for (size_t i = 0; s && i < sizeof all / sizeof all[0]; i++)
    if (strcmp(s, ps_run_status_name(all[i])) == 0)
      return all[i];
  return PS_RUN_STATUS_NONE;
}

static const char *str_of(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A run's saved steps, [[load, end], ...]: a step not understood is left
 * out, as a damaged run is. */
static void steps_from_json(ps_ledger_run *r, const cJSON *json) {
  size_t n = 0, cap = (size_t)cJSON_GetArraySize(json);
  ps_ledger_step *steps = cap ? malloc(cap * sizeof *steps) : NULL;
  const cJSON *so, *list = steps ? json : NULL;
  cJSON_ArrayForEach(so, list) {
    const cJSON *load = cJSON_GetArrayItem(so, 0), *end = cJSON_GetArrayItem(so, 1);
    for (size_t e = 0; cJSON_IsNumber(load) && isfinite(load->valuedouble) && cJSON_IsString(end) &&
                       e < sizeof step_ends / sizeof step_ends[0];
         e++)
      if (strcmp(end->valuestring, step_ends[e]) == 0)
        steps[n++] = (ps_ledger_step){load->valuedouble, (ps_step_end)e};
  }
  ps_ledger_set_steps(r, steps, n);
  free(steps);
}

size_t ps_ledger_from_json(ps_ledger *l, const cJSON *json, const char *series_host,
                           const char *run_host) {
  const cJSON *so;
  size_t dropped = 0;
  double *values = malloc((l->nmetrics ? l->nmetrics : 1) * sizeof *values);
  if (!values)
    return 0;
  cJSON_ArrayForEach(so, json) {
    const char *source = str_of(so, "source"), *series = str_of(so, "series");
    const char *shost = str_of(so, "host");
    if (!shost)
      shost = series_host;
    ps_ledger_series *s = source && series ? ps_ledger_series_get(l, source, series, shost, 1)
                                           : NULL;
    const cJSON *ro, *runs = s ? cJSON_GetObjectItemCaseSensitive(so, "runs") : NULL;
    dropped += !s || (runs && !cJSON_IsArray(runs));
    const cJSON *list = cJSON_IsArray(runs) ? runs : NULL;
    cJSON_ArrayForEach(ro, list) {
      const char *name = str_of(ro, "name"), *start = str_of(ro, "start_ns");
      const char *host = str_of(ro, "host");
      int judged = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ro, "judged"));
      dropped += !name || !start;
      if (!name || !start || (!host && judged))
        continue; /* without a host: the server gives it again, with its host */
      const cJSON *vo = cJSON_GetObjectItemCaseSensitive(ro, "values");
      for (size_t i = 0; i < l->nmetrics; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(vo, l->metrics[i]);
        values[i] = cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : NAN;
      }
      long at = ps_ledger_put(l, s, host ? host : run_host, name, str_of(ro, "revision"),
                              strtoll(start, NULL, 10),
                              status_from_name(str_of(ro, "status")),
                              cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ro, "backfill")),
                              values);
      if (at >= 0) {
        s->runs[at].judged = judged;
        steps_from_json(&s->runs[at], cJSON_GetObjectItemCaseSensitive(ro, "steps"));
      }
    }
  }
  free(values);
  return dropped;
}
