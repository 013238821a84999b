/*
 * cmd/verdicts_candidate.c: `perfship verdicts --candidate RUN --against
 * SERIES`: a run judged on request against the current level of another
 * series, both read from the server (docs/verdicts.md, "Candidates").
 *
 * Design
 * - Two kinds of InfluxQL read over `loadgen_run`, every name quoted
 *   (readback/statement.h): the candidate's own rows (by run, and host when
 *   given), then the series it is judged against on the candidate's host,
 *   bounded in time like the agent's history read (30 days back from the
 *   candidate's start, twice as far while fewer than window_runs
 *   successful runs came back).
 * - The judgement is the agent's own (verdict/candidate.h), so the answer
 *   is the one a configured candidate gets. Nothing is written.
 * - Exit: 0; 65 the run is not in the database, has no status yet, or is
 *   on several hosts without --host; 69 the server could not be reached.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cmd/cmd.h"
#include "core/buf.h"
#include "core/sysexits_ps.h"
#include "core/util.h"
#include "core/visible.h"
#include "influx/client.h"
#include "readback/query.h"
#include "readback/answer.h"
#include "readback/statement.h"
#include "readback/status.h"
#include "verdict/candidate.h"

#define DAY_NS (86400LL * 1000000000LL)
#define SPAN_FIRST_NS (30 * DAY_NS)
#define SPAN_MAX_NS (7680 * DAY_NS)

typedef struct runs {
  ps_verdict_run *r;
  double *values; /* nmetrics per run */
  char **strs;    /* names, revisions, hosts, series: freed together */
  size_t n, nstrs;
  char *series;   /* the candidate's test_type */
} runs;

static char *keep(runs *rs, const char *s) {
  if (!s)
    return NULL;
  char **grown = realloc(rs->strs, (rs->nstrs + 1) * sizeof *grown);
  if (!grown)
    return NULL;
  rs->strs = grown;
  return rs->strs[rs->nstrs++] = strdup(s);
}

static void runs_free(runs *rs) {
  for (size_t i = 0; i < rs->nstrs; i++)
    free(rs->strs[i]);
  free(rs->strs);
  free(rs->r);
  free(rs->values);
  memset(rs, 0, sizeof *rs);
}

static int query_text(ps_buf *q, const ps_verdicts_cfg *v, const char *key, const char *value,
                      const char *host, int64_t since, int64_t until) {
  int rc = ps_buf_puts(q, "SELECT \"status\"");
  for (size_t i = 0; !rc && i < v->nmetrics; i++)
    rc = ps_buf_puts(q, ", ") || ps_rb_ident(q, v->metrics[i].name);
  rc = rc || ps_buf_printf(q, " FROM \"loadgen_run\" WHERE \"%s\" = ", key) ||
       ps_rb_string(q, value);
  if (!rc)
    rc = ps_rb_tag_is(q, "host", host);
  if (!rc && since > 0) /* the run itself is looked up by name, at any time */
    rc = ps_rb_and_time_range(q, since, until);
  return rc || ps_buf_puts(q, " GROUP BY \"host\", \"run\", \"revision\", \"test_type\"") ? -ENOMEM
                                                                                       : 0;
}

/* The answer's runs (the last row of each group) appended to `rs`. */
static int parse(runs *rs, const ps_verdicts_cfg *v, const char *json) {
  ps_rb_answer a;
  int rc = ps_rb_answer_parse(&a, json, strlen(json));
  if (rc == 0 && !ps_rb_answer_whole(&a))
    rc = -EPROTO;
  for (const ps_rb_row *row; rc == 0 && (row = ps_rb_answer_next_series(&a));) {
    if (row->statement > 0 || !cJSON_IsNumber(ps_rb_cell(row, "time")) || !ps_rb_tag(row, "run"))
      continue;
    ps_verdict_run *r = realloc(rs->r, (rs->n + 1) * sizeof *r);
    if (r)
      rs->r = r;
    double *values = realloc(rs->values, (rs->n + 1) * (v->nmetrics ? v->nmetrics : 1) * sizeof *values);
    if (values)
      rs->values = values;
    if (!r || !values) {
      rc = -ENOMEM;
      break;
    }
    ps_verdict_run *x = &rs->r[rs->n];
    memset(x, 0, sizeof *x);
    double *mv = &rs->values[rs->n * v->nmetrics];
    for (size_t m = 0; m < v->nmetrics; m++)
      mv[m] = ps_rb_num(row, v->metrics[m].name);
    x->status = ps_rb_run_status(ps_rb_status_named(ps_rb_str(row, "status")));
    x->name = keep(rs, ps_rb_tag(row, "run"));
    x->revision = keep(rs, ps_rb_tag(row, "revision"));
    x->host = keep(rs, ps_rb_tag(row, "host"));
    x->start_ns = ps_rb_time_ns(row);
    if (!rs->series && ps_rb_tag(row, "test_type"))
      rs->series = keep(rs, ps_rb_tag(row, "test_type"));
    if (!x->name) {
      rc = -ENOMEM;
      break;
    }
    rs->n++;
  }
  ps_rb_answer_free(&a);
  /* values were moved by realloc: point each run at its own again */
  for (size_t i = 0; i < rs->n; i++)
    rs->r[i].values = &rs->values[i * v->nmetrics];
  return rc;
}

int ps_cmd_candidate_parse(const ps_verdicts_cfg *v, const char *json, size_t *nruns) {
  runs rs = {0};
  int rc = parse(&rs, v, json);
  *nruns = rs.n;
  for (size_t i = 0; rc == 0 && i < rs.n; i++)
    if (!rs.r[i].name || rs.r[i].values != &rs.values[i * v->nmetrics])
      rc = -EPROTO;
  runs_free(&rs);
  return rc;
}

static int ask(const ps_config *cfg, const ps_buf *q, runs *rs) {
  ps_buf answer, err;
  ps_buf_init(&answer, PS_INFLUX_QUERY_MAX_BYTES);
  ps_buf_init(&err, 2048);
  int rc = ps_rb_query(cfg, q->data, &answer, &err);
  if (rc < 0)
    ps_visible_say(stderr, "perfship verdicts: %s\n", err.data ? err.data : strerror(-rc));
  else if ((rc = parse(rs, &cfg->verdicts, answer.data ? answer.data : "")) < 0)
    fprintf(stderr, "perfship verdicts: the server's answer is not one (%s)\n", strerror(-rc));
  ps_buf_free(&answer);
  ps_buf_free(&err);
  return rc;
}

static void print(const ps_config *cfg, const ps_verdict_list *l, const char *run,
                  const char *against, int json) {
  ps_buf link;
  ps_buf_init(&link, 0);
  if (json) {
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < l->n; i++) {
      const ps_verdict *v = &l->v[i];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "verdict", ps_verdict_kind_name(v->verdict));
      cJSON_AddStringToObject(o, "method", ps_verdict_method_name(v->method));
      cJSON_AddStringToObject(o, "metric", v->metric);
      cJSON_AddStringToObject(o, "run", v->run);
      cJSON_AddStringToObject(o, "series", v->series ? v->series : "");
      cJSON_AddStringToObject(o, "against", v->against);
      cJSON_AddNumberToObject(o, "value", v->value);
      cJSON_AddNumberToObject(o, "baseline", v->baseline);
      double pct = ps_verdict_change_pct(v->value, v->baseline);
      if (isfinite(pct))
        cJSON_AddNumberToObject(o, "change_pct", pct);
      cJSON_AddNumberToObject(o, "baseline_runs", (double)v->baseline_runs);
      if (isfinite(v->p_value))
        cJSON_AddNumberToObject(o, "p_value", v->p_value);
      if (v->revision)
        cJSON_AddStringToObject(o, "revision", v->revision);
      const char *keys[] = {"good_run", "good_revision", "bad_run", "bad_revision"};
      const char *vals[] = {v->good_run, v->good_revision, v->bad_run, v->bad_revision};
      for (size_t k = 0; k < 4; k++)
        if (vals[k])
          cJSON_AddStringToObject(o, keys[k], vals[k]);
      link.len = 0;
      if (ps_compare_url(&link, cfg->verdicts.compare_url, v->good_revision, v->bad_revision) == 0)
        cJSON_AddStringToObject(o, "compare_url", link.data);
      cJSON_AddItemToArray(arr, o);
    }
    ps_cmd_print_json(arr);
    cJSON_Delete(arr);
    ps_buf_free(&link);
    return;
  }
  size_t reg = 0;
  for (size_t i = 0; i < l->n; i++)
    reg += l->v[i].verdict == PS_VERDICT_REGRESSION;
  ps_visible_put(stdout, run, 0);
  printf(" against the current level of ");
  ps_visible_put(stdout, against, 0);
  printf(": %zu verdict%s, %zu regression%s\n", l->n, l->n == 1 ? "" : "s", reg,
         reg == 1 ? "" : "s");
  if (!l->n)
    return;
  printf("%-11s %9s  %-36s %12s %12s %5s  %s\n", "VERDICT", "CHANGE", "WHAT", "VALUE", "BASELINE",
         "RUNS", "REVISIONS");
  for (size_t i = 0; i < l->n; i++) {
    const ps_verdict *v = &l->v[i];
    char change[16] = "";
    double pct = ps_verdict_change_pct(v->value, v->baseline);
    if (isfinite(pct))
      snprintf(change, sizeof change, "%+.1f %%", pct);
    printf("%-11s %9s  ", ps_verdict_kind_name(v->verdict), change);
    ps_visible_put(stdout, v->metric, 36);
    printf(" %12.6g %12.6g %5" PRId64 "  ", v->value, v->baseline, v->baseline_runs);
    if (v->good_revision && v->bad_revision) {
      ps_visible_put(stdout, v->good_revision, 0);
      fputs("..", stdout);
      ps_visible_put(stdout, v->bad_revision, 0);
      link.len = 0;
      if (ps_compare_url(&link, cfg->verdicts.compare_url, v->good_revision, v->bad_revision) == 0) {
        fputs(" ", stdout);
        ps_visible_put(stdout, link.data, 0);
      }
    }
    putchar('\n');
  }
  ps_buf_free(&link);
}

int ps_cmd_verdicts_candidate(const ps_config *cfg, const char *run, const char *against,
                              const char *host, int json) {
  const ps_verdicts_cfg *v = &cfg->verdicts;
  runs cand = {0}, ref = {0};
  ps_buf q;
  ps_buf_init(&q, 0);
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  int rc = PS_EXIT_OK;
  if (query_text(&q, v, "run", run, host, 0, 0) < 0 || ask(cfg, &q, &cand) < 0) {
    rc = PS_EXIT_UNAVAILABLE;
    goto out;
  }
  if (cand.n == 0 || cand.r[0].status == PS_RUN_STATUS_NONE) {
    ps_visible_say(stderr,
                   "perfship verdicts: run %s is not in loadgen_run%s with a status; "
                   "nothing to judge\n",
                   run, host ? " on that host" : "");
    rc = PS_EXIT_DATAERR;
    goto out;
  }
  for (size_t i = 1; i < cand.n; i++)
    if (!host && strcmp(cand.r[i].host ? cand.r[i].host : "", cand.r[0].host ? cand.r[0].host : "")) {
      ps_visible_say(stderr,
                     "perfship verdicts: run %s is on several hosts; say which with --host\n", run);
      rc = PS_EXIT_DATAERR;
      goto out;
    }
  cand.n = 1;
  const char *chost = cand.r[0].host;
  int64_t until = cand.r[0].start_ns + 1;
  /* Bounded reads, each further one the slice before the last. */
  for (int64_t span = SPAN_FIRST_NS, last = until;; span *= 2) {
    int64_t since = until - span > 1 ? until - span : 1;
    q.len = 0;
    if (query_text(&q, v, "test_type", against, chost, since, last) < 0 || ask(cfg, &q, &ref) < 0) {
      rc = PS_EXIT_UNAVAILABLE;
      goto out;
    }
    size_t ok = 0;
    for (size_t i = 0; i < ref.n; i++)
      ok += ref.r[i].status == PS_RUN_STATUS_SUCCESS;
    if (ok >= (size_t)v->window_runs || span >= SPAN_MAX_NS || since == 1)
      break;
    last = since;
  }
  ps_verdict_runs_sort(ref.r, ref.n);
  ps_verdict_series rs = {"loadgen", against, ref.r, ref.n};
  ps_verdict_series cs = {"loadgen", cand.series ? cand.series : "", cand.r, 1};
  int jrc = ps_verdict_candidate(v, &rs, &cs, 0, &l);
  if (jrc < 0) {
    fprintf(stderr, "perfship verdicts: cannot judge (%s)\n", strerror(-jrc));
    rc = PS_EXIT_SOFTWARE;
    goto out;
  }
  if (!l.n)
    ps_visible_say(stderr,
                   "perfship verdicts: %s has no level to judge against before %s (it "
                   "needs %lld successful runs since its last change)\n",
                   against, run, (long long)v->min_runs);
  print(cfg, &l, run, against, json);
  if (fflush(stdout) != 0)
    rc = PS_EXIT_SOFTWARE;
out:
  ps_verdict_list_free(&l);
  runs_free(&cand);
  runs_free(&ref);
  ps_buf_free(&q);
  return rc;
}
