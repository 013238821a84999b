/*
 * report/html_charts.c: the charts' data, the one JSON block the page's
 * script reads (html_private.h; its shape is docs/report.md's). Every
 * string goes through jstr(); numbers are the shortest text that reads
 * back as the same double (influx/numfmt.h), so a chart holds exactly what
 * InfluxDB answered.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html_private.h"

static double run_x_ms(const ps_rrun *r) {
  int64_t ns = r->run_point_ns ? r->run_point_ns : r->start_ns;
  return (double)(ns / 1000) / 1000.0;
}

static int of_trend(const ps_rrun *r, const trend_key *k) {
  return same(r->test_type, k->test_type) && same_host(r->host, k->host);
}

static void json_trends(page *p) {
  const ps_report_data *d = p->d;
  trend_key series[MAX_SERIES];
  size_t ns = ps_html_trend_series(d, series, MAX_SERIES);
  put(p, "\"trends\":[");
  for (size_t s = 0; s < ns; s++) {
    put(p, s ? ",{\"series\":" : "{\"series\":");
    jstr(p, series[s].test_type);
    put(p, ",\"host\":");
    jstr(p, series[s].host);
    /* oldest first: the runs are newest first */
    const char *keys[] = {"x", "run", "rev"};
    for (int k = 0; k < 3; k++) {
      putf(p, ",\"%s\":[", keys[k]);
      int first = 1;
      for (size_t i = d->nruns; i-- > 0;) {
        const ps_rrun *r = &d->runs[i];
        if (r->status != PS_RS_SUCCESS || !of_trend(r, &series[s]))
          continue;
        put(p, first ? "" : ",");
        first = 0;
        if (k == 0)
          jnum(p, run_x_ms(r));
        else
          jstr(p, k == 1 ? r->name : r->revision);
      }
      put(p, "]");
    }
    put(p, ",\"metrics\":[");
    for (int m = 0; m < PS_REPORT_NMETRICS; m++) {
      const ps_report_metric *pm = &ps_report_metrics[m];
      putf(p, "%s{\"field\":\"%s\",\"label\":\"%s\",\"unit\":\"%s\"", m ? "," : "", pm->field,
           pm->label, pm->unit);
      for (int k = 0; k < 3; k++) {
        putf(p, ",\"%c\":[", "yvc"[k]);
        int first = 1;
        for (size_t i = d->nruns; i-- > 0;) {
          const ps_rrun *r = &d->runs[i];
          if (r->status != PS_RS_SUCCESS || !of_trend(r, &series[s]))
            continue;
          put(p, first ? "" : ",");
          first = 0;
          const ps_rverdict *v = k ? ps_html_run_verdict(p, r->host, r->name, pm->field) : NULL;
          if (k == 0)
            jnum(p, r->metric[m]);
          else if (k == 1)
            putf(p, "%d", vcode(v));
          else
            jnum(p, v ? v->change_pct : NAN);
        }
        put(p, "]");
      }
      put(p, "}");
    }
    put(p, "],\"bad\":[");
    int first = 1;
    for (size_t i = d->nruns; i-- > 0;) {
      const ps_rrun *r = &d->runs[i];
      if (!bad_status(r->status) || !of_trend(r, &series[s]) || !r->start_ns)
        continue;
      put(p, first ? "{\"x\":" : ",{\"x\":");
      first = 0;
      jnum(p, run_x_ms(r));
      put(p, ",\"run\":");
      jstr(p, r->name);
      putf(p, ",\"status\":\"%s\"}", ps_rb_status_name(r->status));
    }
    put(p, "]}");
  }
  put(p, "]");
}

/* The names as a JSON array of strings. */
static void json_names(page *p, const names *n) {
  put(p, "[");
  for (size_t i = 0; i < n->n; i++) {
    put(p, i ? "," : "");
    jstr(p, n->v[i]);
  }
  put(p, "]");
}

/* One stage run (d->stage_runs[of]): its stages, tasks and figures. */
static void json_stage_run(page *p, size_t of) {
  const ps_report_data *d = p->d;
  names stages = {0}, tasks = {0};
  ps_html_stage_lists(p, of, &stages, &tasks);
  put(p, of ? ",{\"run\":" : "{\"run\":");
  jstr(p, d->stage_runs[of].run);
  put(p, ",\"host\":");
  jstr(p, d->stage_runs[of].host);
  put(p, ",\"stages\":");
  json_names(p, &stages);
  put(p, ",\"tasks\":[");
  for (size_t t = 0; t < tasks.n; t++) {
    put(p, t ? ",{\"task\":" : "{\"task\":");
    jstr(p, tasks.v[t]);
    for (int k = 0; k < 2; k++) {
      put(p, k ? ",\"duration\":[" : ",\"cycles\":[");
      for (size_t s = 0; s < stages.n; s++) {
        double v = NAN;
        for (size_t i = 0; i < d->nstages; i++)
          if (d->stages[i].of == of && strcmp(d->stages[i].stage, stages.v[s]) == 0 &&
              strcmp(d->stages[i].task, tasks.v[t]) == 0)
            v = k ? d->stages[i].avg_duration : d->stages[i].cycles;
        put(p, s ? "," : "");
        jnum(p, v);
      }
      put(p, "]");
    }
    put(p, "}");
  }
  put(p, "]");
  for (int k = 0; k < 2; k++) {
    put(p, k ? ",\"block\":[" : ",\"swingset\":[");
    for (size_t s = 0; s < stages.n; s++) {
      double v = NAN;
      for (size_t i = 0; i < d->nblocks; i++)
        if (d->blocks[i].of == of && strcmp(d->blocks[i].stage, stages.v[s]) == 0)
          v = k ? d->blocks[i].avg_block : d->blocks[i].avg_swingset;
      put(p, s ? "," : "");
      jnum(p, v);
    }
    put(p, "]");
  }
  put(p, "}");
  free(stages.v);
  free(tasks.v);
}

/* Every host's newest stage run, in the order the page shows them. */
static void json_stages(page *p) {
  const ps_report_data *d = p->d;
  put(p, "\"stages\":[");
  for (size_t k = 0; k < d->nstage_runs; k++)
    json_stage_run(p, k);
  put(p, "]");
}

static double dss_value(const dss_test *t, const char *arm, const char *variant, int field) {
  for (size_t i = t->begin; i < t->end; i++) {
    const ps_rdss *x = &t->d->dss[i];
    if (same(x->test, t->test) && same(x->arm, arm) && same(x->variant, variant))
      return field == 0 ? x->rps : field == 1 ? x->p95 : x->errors;
  }
  return NAN;
}

static void json_one_dss(page *p, size_t idx, const dss_test *t) {
  put(p, idx ? ",{\"run\":" : "{\"run\":");
  jstr(p, t->run);
  put(p, ",\"host\":");
  jstr(p, t->host);
  put(p, ",\"test\":");
  jstr(p, t->test);
  put(p, ",\"sweep\":");
  jstr(p, t->sweep);
  put(p, ",\"variants\":");
  json_names(p, &t->variants);
  put(p, ",\"arms\":[");
  static const char *const fields[] = {"rps", "p95", "errors"};
  for (size_t a = 0; a < t->arms.n; a++) {
    put(p, a ? ",{\"arm\":" : "{\"arm\":");
    jstr(p, t->arms.v[a]);
    for (int f = 0; f < 3; f++) {
      putf(p, ",\"%s\":[", fields[f]);
      for (size_t v = 0; v < t->variants.n; v++) {
        put(p, v ? "," : "");
        jnum(p, dss_value(t, t->arms.v[a], t->variants.v[v], f));
      }
      put(p, "]");
    }
    put(p, "}");
  }
  put(p, "]}");
}

/* A stage run's top vats per block: x block heights, y delivery seconds,
 * exactly as the server answered them. */
static void json_chain_blocks(page *p, const ps_rchain *c) {
  put(p, "],\"blocks\":[");
  for (size_t k = 0; k < c->nchart; k++) {
    const ps_rchain_vat *v = &c->chart[k];
    put(p, k ? ",{\"vat\":" : "{\"vat\":");
    jstr(p, v->vat);
    put(p, ",\"name\":");
    jstr(p, v->name[0] ? v->name : NULL);
    putf(p, ",\"more\":%s", v->more ? "true" : "false");
    for (int a = 0; a < 2; a++) {
      put(p, a ? ",\"y\":[" : ",\"x\":[");
      for (size_t i = 0; i < v->n; i++) {
        const ps_rchain_point *pt = &c->points[v->begin + i];
        put(p, i ? "," : "");
        jnum(p, a ? pt->seconds : pt->height);
      }
      put(p, "]");
    }
    put(p, "}");
  }
}

/* Inside the chain: the top vats of each stage run's slog, then and now
 * (their names through jstr(), as every string of the block). */
static void json_chains(page *p) {
  const ps_report_data *d = p->d;
  put(p, "\"chains\":[");
  for (size_t i = 0; i < d->nchains; i++) {
    const ps_explanation *e = &d->chains[i].e;
    put(p, i ? ",{\"vats\":[" : "{\"vats\":[");
    for (size_t k = 0; k < e->ntop; k++) {
      put(p, k ? "," : "");
      jstr(p, e->top[k].name[0] ? e->top[k].name : e->top[k].vat);
    }
    put(p, "],\"then\":[");
    for (size_t k = 0; k < e->ntop; k++) {
      put(p, k ? "," : "");
      jnum(p, e->top[k].then);
    }
    put(p, "],\"now\":[");
    for (size_t k = 0; k < e->ntop; k++) {
      put(p, k ? "," : "");
      jnum(p, e->top[k].now);
    }
    json_chain_blocks(p, &d->chains[i]);
    put(p, "]}");
  }
  put(p, "]");
}

void ps_html_json_all(page *p) {
  putf(p, "{\"v\":1,\"generated\":");
  jnum(p, (double)(p->d->now_ns / 1000000));
  put(p, ",");
  json_trends(p);
  put(p, ",");
  json_stages(p);
  put(p, ",");
  json_chains(p);
  put(p, ",\"dss\":[");
  for (size_t i = 0; i < p->ntests; i++)
    json_one_dss(p, i, &p->tests[i]);
  put(p, "]}");
}

int ps_report_chart_data(const ps_report_data *d, ps_buf *out) {
  page p = {.out = out, .d = d};
  ps_html_prepare(&p);
  ps_html_json_all(&p);
  ps_html_release(&p);
  return p.rc;
}
