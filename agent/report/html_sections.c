/*
 * report/html_sections.c: the headlines and the sections of the page as
 * HTML (html_private.h): runs, trends, stages, DSS bench, agent health.
 * Every string from the data goes through txt() (esc() in attributes); a
 * section without data says so in one line (docs/report.md).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/figures.h"
#include "core/util.h"
#include "html_private.h"

/* A verdict's change as it is judged: the BOYD share in points (a share
 * near 0 makes any percent large: docs/verdicts.md), the rest in percent. */
static void put_change(page *p, const ps_rverdict *v) {
  if (v->metric && strcmp(v->metric, ps_slog_stage_figure(PS_SLOG_FIG_BOYD_SHARE)->name) == 0)
    putf(p, "%+.1f\u00a0points", v->value - v->baseline);
  else
    ps_html_fmt_change(p, v->change_pct);
}

/* "Cycle avg duration +14.3 %" with the verdict's word, for lists. */
static void verdict_item(page *p, const ps_rverdict *v, int with_stage) {
  int c = vcode(v);
  putf(p, "<span class=\"v v-%s\" title=\"", c == V_REGRESSION ? "regression" : "improvement");
  esc(p, v->verdict);
  put(p, ": value ");
  ps_html_fmt_num(p, v->value);
  put(p, " against ");
  ps_html_fmt_num(p, v->baseline);
  if (v->change_run && strcmp(v->change_run, v->run) != 0) {
    put(p, "; change began at ");
    esc(p, v->change_run);
  }
  if (v->vat) {
    put(p, "; vat ");
    esc(p, v->vat);
  }
  if (v->against) {
    put(p, "; against the current level of ");
    esc(p, v->against);
  }
  putf(p, "\">%s ", c == V_REGRESSION ? "\u25b2 regression" : "\u25c6 improvement");
  if (with_stage && v->stage) {
    put(p, "stage ");
    txt(p, v->stage);
    put(p, " ");
  }
  txt(p, ps_html_metric_label(v->metric));
  if (v->vat) { /* which vat: its name, else its ID */
    put(p, " of ");
    txt(p, v->vat_name && v->vat_name[0] ? v->vat_name : v->vat);
  }
  put(p, " ");
  put_change(p, v);
  if (v->against) {
    put(p, " against ");
    txt(p, v->against);
  }
  put(p, "</span>");
  if (v->good_revision && v->bad_revision && v->good_revision[0] && v->bad_revision[0]) {
    /* "" is written for no range (docs/schema.md). The revision range, a
     * link with verdicts.compare_url: built with the revisions
     * percent-encoded and http(s) only (core/util.h), then escaped like
     * any attribute (docs/report.md). */
    ps_buf link;
    ps_buf_init(&link, 0);
    int linked =
        ps_compare_url(&link, p->d->compare_url, v->good_revision, v->bad_revision) == 0;
    put(p, " <span class=\"range\">");
    if (linked) {
      put(p, "<a href=\"");
      esc(p, link.data);
      put(p, "\" rel=\"noopener noreferrer\">");
    }
    txt(p, v->good_revision);
    put(p, "..");
    txt(p, v->bad_revision);
    put(p, linked ? "</a></span>" : "</span>");
    ps_buf_free(&link);
  }
  const ps_triage_decision *ack =
      ps_triage_ack_of(&p->d->triage, v->host, v->run, v->change_run, v->metric);
  if (ack)
    ps_html_decision_badge(p, "acknowledged", ack);
}

/* --- a run's stage drift in the runs table ----------------------------------- */

/* Regressions before improvements, then the larger change. */
static int by_severity(const void *a, const void *b) {
  const ps_rverdict *x = *(const ps_rverdict *const *)a, *y = *(const ps_rverdict *const *)b;
  int rx = vcode(x) == V_REGRESSION, ry = vcode(y) == V_REGRESSION;
  if (rx != ry)
    return ry - rx;
  double sx = isnan(x->change_pct) ? 0 : fabs(x->change_pct);
  double sy = isnan(y->change_pct) ? 0 : fabs(y->change_pct);
  if (sx != sy)
    return sx < sy ? 1 : -1;
  return strcmp(x->stage, y->stage);
}

/* "▲ stage 3: zcf-amm +44 %": the stage's worst change, a vat by its name
 * (its ID when the slog named none), the rest of the verdict in the title. */
static void stage_mark(page *p, const ps_rverdict *v) {
  int c = vcode(v);
  putf(p, "<span class=\"v v-%s sd-mark\" title=\"",
       c == V_REGRESSION ? "regression" : "improvement");
  esc(p, ps_html_metric_label(v->metric));
  if (v->vat) {
    put(p, " ");
    esc(p, v->vat);
  }
  put(p, ": value ");
  ps_html_fmt_num(p, v->value);
  put(p, " against ");
  ps_html_fmt_num(p, v->baseline);
  put(p, " in the first loadgen stage");
  if (!isnan(v->p_value))
    putf(p, "; p %.2g", v->p_value);
  putf(p, "\">%s stage ", c == V_REGRESSION ? "\u25b2" : "\u25c6");
  txt(p, v->stage);
  put(p, ": ");
  if (v->vat) {
    put(p, "vat ");
    txt(p, v->vat_name && v->vat_name[0] ? v->vat_name : v->vat);
  } else {
    txt(p, ps_html_metric_label(v->metric));
  }
  put(p, " ");
  put_change(p, v);
  put(p, "</span>");
}

/* The changed stage-drift verdicts of a run: one mark per stage (its
 * worst), worst stage first, the other changes behind a disclosure. Returns
 * how many changes there were (0: nothing written). */
static int stage_marks(page *p, size_t b, size_t e, const char *sep, int after) {
  const ps_rverdict **changed = malloc((e > b ? e - b : 1) * sizeof *changed);
  if (!changed) {
    p->rc = -ENOMEM;
    return 0;
  }
  size_t n = 0;
  for (size_t i = b; i < e; i++) {
    const ps_rverdict *v = p->vidx[i];
    if (!is_dss(v) && v->stage && (vcode(v) == V_REGRESSION || vcode(v) == V_IMPROVEMENT))
      changed[n++] = v;
  }
  qsort(changed, n, sizeof *changed, by_severity);
  size_t marks = 0;
  for (size_t i = 0; i < n; i++) { /* the first of each stage leads it */
    int seen = 0;
    for (size_t k = 0; k < marks && !seen; k++)
      seen = strcmp(changed[k]->stage, changed[i]->stage) == 0;
    if (!seen) {
      const ps_rverdict *lead = changed[i];
      memmove(&changed[marks + 1], &changed[marks], (i - marks) * sizeof *changed);
      changed[marks++] = lead;
    }
  }
  for (size_t i = 0; i < marks; i++) {
    put(p, after || i ? sep : "");
    stage_mark(p, changed[i]);
  }
  if (n > marks) {
    putf(p, "<details class=\"sd-more\"><summary>%zu more stage change%s</summary>", n - marks,
         n - marks == 1 ? "" : "s");
    for (size_t i = marks; i < n; i++) {
      put(p, i > marks ? "<br>" : "");
      verdict_item(p, changed[i], 1);
    }
    put(p, "</details>");
  }
  free(changed);
  return (int)n;
}

/* What the loadgen verdicts of a run say, in a few words: the changes, or
 * how many metrics were judged unchanged. Returns the count of regressions. */
static int run_verdict_summary(page *p, const ps_rrun *r, const char *sep, int stage_compact) {
  int judged = 0, judged_cand = 0, changes = 0, regressions = 0;
  size_t b, e;
  const ps_triage_decision *ex = ps_triage_excluded(&p->d->triage, r->host, r->name);
  if (ex) { /* in no window: what it was told before is no verdict */
    ps_html_decision_badge(p, "excluded", ex);
    return 0;
  }
  ps_html_run_verdicts(p, r->host, r->name, &b, &e);
  for (size_t i = b; i < e; i++) {
    const ps_rverdict *v = p->vidx[i];
    if (is_dss(v))
      continue;
    int c = vcode(v);
    /* a candidate's verdicts judge the same metrics again, against
     * another series: counted only when the run has no others */
    if (v->against)
      judged_cand += !v->stage;
    else
      judged += !v->stage;
    if ((c == V_REGRESSION || c == V_IMPROVEMENT) && !(stage_compact && v->stage)) {
      if (changes++)
        put(p, sep);
      verdict_item(p, v, 1);
      regressions += c == V_REGRESSION;
    }
  }
  if (!judged)
    judged = judged_cand;
  if (stage_compact)
    changes += stage_marks(p, b, e, sep, changes > 0);
  if (!changes && judged)
    putf(p, "<span class=\"v v-none\">no change in %d metric%s</span>", judged,
         judged == 1 ? "" : "s");
  else if (!changes)
    put(p, "<span class=\"v v-none\">not judged</span>");
  return regressions;
}

/* A headline's run or file name and, when known, the machine it ran on. */
static void name_on_host(page *p, const char *name, const char *host) {
  txt(p, name);
  put(p, "</span></span>");
  if (host) {
    put(p, " on <span class=\"name host\">");
    txt(p, host);
    put(p, "</span>");
  }
}

/* The names as HTML text, `sep` (markup) between them. */
static void html_names(page *p, const names *n, const char *sep) {
  for (size_t i = 0; i < n->n; i++) {
    put(p, i ? sep : "");
    txt(p, n->v[i]);
  }
}

void ps_html_headline_run(page *p, const ps_rrun *r, const char *what, const char *id) {
  int regressions = 0, improvements = 0, unacknowledged = 0;
  size_t b, e;
  ps_html_run_verdicts(p, r->host, r->name, &b, &e);
  for (size_t i = b; i < e; i++)
    if (!is_dss(p->vidx[i])) {
      const ps_rverdict *v = p->vidx[i];
      regressions += vcode(v) == V_REGRESSION;
      improvements += vcode(v) == V_IMPROVEMENT;
      /* a known regression is no longer news: the headline says so */
      unacknowledged += vcode(v) == V_REGRESSION &&
                        !ps_triage_ack_of(&p->d->triage, v->host, v->run, v->change_run,
                                          v->metric);
    }
  const char *cls = r->status == PS_RS_FAILED                            ? "h-bad"
                    : bad_status(r->status)                              ? "h-warn"
                    : r->status == PS_RS_RUNNING                         ? "h-run"
                    : r->status == PS_RS_SUCCESS && unacknowledged       ? "h-bad"
                    : r->status == PS_RS_SUCCESS && regressions          ? "h-warn"
                    : r->status == PS_RS_SUCCESS                         ? "h-good"
                                                                         : "";
  putf(p, "<div class=\"headline %s\" id=\"%s\">", cls, id);
  ps_html_badge(p, r->status);
  if (r->status == PS_RS_SUCCESS && unacknowledged)
    put(p, " <span class=\"st st-regression\">regression</span>");
  else if (r->status == PS_RS_SUCCESS && regressions)
    put(p, " <span class=\"st st-regression\">regression, acknowledged</span>");
  putf(p, " <span class=\"what\">%s <span class=\"name\">", what);
  name_on_host(p, r->name, r->host);
  if (r->revision) {
    put(p, " · revision ");
    txt(p, r->revision);
  }
  put(p, " · started ");
  ps_html_fmt_time(p, r->start_ns);
  put(p, " UTC");
  if (!isnan(r->duration_s)) {
    put(p, " · ");
    ps_html_fmt_duration(p, r->duration_s);
  }
  put(p, "<span class=\"verdicts\">");
  if (bad_status(r->status) || (r->status != PS_RS_SUCCESS && r->text)) {
    txt(p, r->text ? r->text : "no error line was recorded");
  } else if (r->status == PS_RS_RUNNING) {
    put(p, "Still running: judged when it ends.");
  } else {
    if (regressions)
      putf(p, "<b>%d regression%s</b>: ", regressions, regressions == 1 ? "" : "s");
    else if (improvements)
      putf(p, "%d improvement%s: ", improvements, improvements == 1 ? "" : "s");
    run_verdict_summary(p, r, " · ", 0);
  }
  put(p, "</span></div>\n");
}

/* Is verdict v about DSS results file f (its host and name)? */
static int of_dssfile(const ps_rverdict *v, const ps_rdssfile *f) {
  return is_dss(v) && same(v->run, f->run) && same_host(v->host, f->host);
}

/* The newest results file of one machine. */
static void headline_dss_file(page *p, const ps_rdssfile *f, const char *id) {
  const ps_report_data *d = p->d;
  int regressions = 0, improvements = 0, judged = 0;
  for (size_t i = 0; i < d->nverdicts; i++)
    if (of_dssfile(&d->verdicts[i], f)) {
      judged++;
      regressions += vcode(&d->verdicts[i]) == V_REGRESSION;
      improvements += vcode(&d->verdicts[i]) == V_IMPROVEMENT;
    }
  putf(p, "<div class=\"headline %s\" id=\"%s\">",
       f->status == PS_RS_FAILED || regressions ? "h-bad"
       : f->status == PS_RS_SUCCESS           ? "h-good"
                                              : "",
       id);
  ps_html_badge(p, f->status);
  if (regressions)
    put(p, " <span class=\"st st-regression\">regression</span>");
  put(p, " <span class=\"what\">Newest DSS results <span class=\"name\">");
  name_on_host(p, f->run, f->host);
  put(p, " · written ");
  ps_html_fmt_time(p, f->time_ns);
  put(p, " UTC<span class=\"verdicts\">");
  if (!judged) {
    put(p, "<span class=\"v v-none\">no arm comparison (a single arm, or not judged)</span>");
  } else if (!regressions && !improvements) {
    putf(p, "<span class=\"v v-none\">no change in %d arm comparison%s</span>", judged,
         judged == 1 ? "" : "s");
  } else {
    int n = 0;
    if (regressions)
      putf(p, "<b>%d regression%s</b>: ", regressions, regressions == 1 ? "" : "s");
    for (size_t i = 0; i < d->nverdicts; i++) {
      const ps_rverdict *v = &d->verdicts[i];
      int c = vcode(v);
      if (!of_dssfile(v, f) || (c != V_REGRESSION && c != V_IMPROVEMENT))
        continue;
      if (n++)
        put(p, " · ");
      putf(p, "<span class=\"v v-%s\">%s ", c == V_REGRESSION ? "regression" : "improvement",
           c == V_REGRESSION ? "\u25b2 regression" : "\u25c6 improvement");
      txt(p, v->arm);
      put(p, " ");
      txt(p, ps_html_metric_label(v->metric));
      put(p, " ");
      ps_html_fmt_change(p, v->change_pct);
      put(p, " (");
      txt(p, v->series);
      put(p, ")</span>");
    }
  }
  put(p, "</span></div>\n");
}

/* One headline per machine: its newest results file. */
void ps_html_headline_dss(page *p) {
  const ps_report_data *d = p->d;
  const char *hosts[MAX_HOSTS];
  size_t nh = ps_html_dss_hosts(d, hosts, MAX_HOSTS);
  for (size_t h = 0; h < nh; h++) {
    char id[40];
    snprintf(id, sizeof id, h ? "headline-dss-%zu" : "headline-dss", h);
    for (size_t f = 0; f < d->ndssfiles; f++)
      if (same_host(d->dssfiles[f].host, hosts[h])) {
        headline_dss_file(p, &d->dssfiles[f], id);
        break;
      }
  }
}

/* Opens a section. When the page leaves out `format` (--source), the
 * section is closed at once with a note naming `what`, and 0 returned. */
static int section_begin(page *p, const char *id, const char *title, const char *format,
                         const char *what) {
  putf(p, "<section id=\"%s\"><h2>%s</h2>\n", id, title);
  if (ps_report_shows(p->d, format))
    return 1;
  putf(p, "<p class=\"empty\">%s are not part of this page (--source).</p></section>\n", what);
  return 0;
}

/* Closes a section that has nothing to show, saying why. */
static void section_empty(page *p, const char *why) {
  putf(p, "<p class=\"empty\">%s</p></section>\n", why);
}

void ps_html_section_runs(page *p) {
  const ps_report_data *d = p->d;
  if (!section_begin(p, "runs", "Runs", "loadgen", "Loadgen runs"))
    return;
  if (!d->nruns) {
    section_empty(p, "No loadgen run in this range.");
    return;
  }
  putf(p, "<p class=\"note\">%zu loadgen run%s, newest first. Times in UTC. Metrics of "
          "loadgen_run; a coloured value is a verdict (\u25b2 regression, \u25c6 "
          "improvement).</p>\n",
       d->nruns, d->nruns == 1 ? "" : "s");
  put(p, "<div class=\"scroll\"><table id=\"runs-table\"><thead><tr><th>Run</th>"
         "<th>Host</th><th>Revision</th><th>Test type</th><th>Start</th><th class=\"n\">Duration</th>"
         "<th>Status</th>");
  for (int m = 0; m < PS_REPORT_NMETRICS; m++)
    putf(p, "<th class=\"n\">%s (%s)</th>", ps_report_metrics[m].label,
         ps_report_metrics[m].unit);
  put(p, "<th>Verdicts</th></tr></thead>\n<tbody>\n");
  for (size_t i = 0; i < d->nruns && !p->rc; i++) {
    const ps_rrun *r = &d->runs[i];
    putf(p, "<tr class=\"row-%s\" data-status=\"%s\"><td class=\"name run\">",
         ps_rb_status_name(r->status), ps_rb_status_name(r->status));
    txt(p, r->name);
    put(p, "</td><td class=\"name host\">");
    txt(p, r->host ? r->host : "–");
    put(p, "</td><td class=\"name rev\">");
    txt(p, r->revision ? r->revision : "–");
    put(p, "</td><td>");
    txt(p, r->test_type ? r->test_type : "–");
    put(p, "</td><td class=\"when\">");
    ps_html_fmt_time(p, r->start_ns);
    put(p, "</td><td class=\"n\">");
    ps_html_fmt_duration(p, r->duration_s);
    put(p, "</td><td class=\"status\">");
    ps_html_badge(p, r->status);
    if (r->text && r->status != PS_RS_SUCCESS) {
      put(p, "<span class=\"why\">");
      txt(p, r->text);
      put(p, "</span>");
    }
    put(p, "</td>");
    for (int m = 0; m < PS_REPORT_NMETRICS; m++) {
      const ps_rverdict *v =
          ps_html_run_verdict(p, r->host, r->name, ps_report_metrics[m].field);
      int c = vcode(v);
      putf(p, "<td class=\"n%s\">", c == V_REGRESSION    ? " m-regression"
                                    : c == V_IMPROVEMENT ? " m-improvement"
                                                         : "");
      if (c == V_REGRESSION || c == V_IMPROVEMENT)
        put(p, c == V_REGRESSION ? "\u25b2\u00a0" : "\u25c6\u00a0");
      ps_html_fmt_num(p, r->metric[m]);
      put(p, "</td>");
    }
    put(p, "<td class=\"verdicts\">");
    if (r->status == PS_RS_SUCCESS)
      run_verdict_summary(p, r, "<br>", 1);
    else
      put(p, "<span class=\"v v-none\">–</span>");
    put(p, "</td></tr>\n");
  }
  put(p, "</tbody></table></div></section>\n");
}

static int of_trend(const ps_rrun *r, const trend_key *k) {
  return same(r->test_type, k->test_type) && same_host(r->host, k->host);
}

void ps_html_section_trends(page *p) {
  const ps_report_data *d = p->d;
  if (!section_begin(p, "trends", "Across revisions", "loadgen", "Loadgen runs"))
    return;
  trend_key series[MAX_SERIES];
  size_t ns = ps_html_trend_series(d, series, MAX_SERIES);
  if (!ns) {
    section_empty(p, "No successful loadgen run in this range, so no trend.");
    return;
  }
  put(p, "<p class=\"key\">One group of charts per test type and machine (a machine's "
         "hardware is part of what is measured: no line mixes two). Each point is a "
         "successful run (x: its start, labelled by revision when there are few). <span class=\"k-reg\">\u25b2 red: regression</span> · "
         "<span class=\"k-imp\">\u25c6 green: improvement</span> · "
         "<span class=\"k-reg\">\u2715</span> on the axis: a failed, interrupted or stalled "
         "run.</p>\n");
  for (size_t s = 0; s < ns; s++) {
    int nruns = 0;
    for (size_t i = 0; i < d->nruns; i++)
      nruns += d->runs[i].status == PS_RS_SUCCESS && of_trend(&d->runs[i], &series[s]);
    put(p, "<h3>");
    txt(p, series[s].test_type);
    if (series[s].host) {
      put(p, " on ");
      txt(p, series[s].host);
    }
    putf(p, " <span class=\"meta\">(%d successful run%s)</span></h3>\n<div class=\"charts\">\n",
         nruns, nruns == 1 ? "" : "s");
    for (int m = 0; m < PS_REPORT_NMETRICS; m++) {
      int have = 0;
      for (size_t i = 0; i < d->nruns && !have; i++)
        have = d->runs[i].status == PS_RS_SUCCESS && of_trend(&d->runs[i], &series[s]) &&
               !isnan(d->runs[i].metric[m]);
      putf(p, "<figure><figcaption>%s (%s)</figcaption>", ps_report_metrics[m].label,
           ps_report_metrics[m].unit);
      if (have)
        putf(p, "<div class=\"chart\"><canvas data-chart=\"trend\" data-series=\"%zu\" "
                "data-metric=\"%d\" role=\"img\" aria-label=\"%s over the runs\"></canvas></div>",
             s, m, ps_report_metrics[m].label);
      else
        put(p, "<p class=\"empty\">No run holds this metric.</p>");
      put(p, "</figure>\n");
    }
    put(p, "</div>\n");
  }
  put(p, "</section>\n");
}

static void verdict_cell(page *p, const ps_rverdict *v) {
  int c = vcode(v);
  putf(p, "<td><span class=\"v v-%s\">%s</span></td>",
       c == V_REGRESSION ? "regression" : c == V_IMPROVEMENT ? "improvement" : "none",
       c == V_REGRESSION    ? "\u25b2 regression"
       : c == V_IMPROVEMENT ? "\u25c6 improvement"
                            : "no change");
}

/* Rows of stage run `of`? */
static int stage_rows(const ps_report_data *d, size_t of, int *cycles, int *blocks) {
  *cycles = *blocks = 0;
  for (size_t i = 0; i < d->nstages; i++)
    *cycles |= d->stages[i].of == of;
  for (size_t i = 0; i < d->nblocks; i++)
    *blocks |= d->blocks[i].of == of;
  return *cycles || *blocks;
}

/* A drift row's value, first stage, change and verdict cells. A kernel-growth
 * verdict is judged against its limit, not against the first stage: its
 * cells say the growth in counts per cycle, the limit, and which side of it
 * the growth is (it read "-100.0 %" for 0 per cycle under a limit of 1). */
static void drift_figures(page *p, const ps_rverdict *v) {
  int limit = v->method && strcmp(v->method, "limit") == 0;
  put(p, "<td class=\"n\">");
  ps_html_fmt_num(p, v->value);
  put(p, limit && !isnan(v->value) ? " per cycle</td><td class=\"n\">" : "</td><td class=\"n\">");
  if (limit && !isnan(v->baseline))
    put(p, "limit ");
  ps_html_fmt_num(p, v->baseline);
  put(p,
      limit && !isnan(v->baseline) ? " per cycle</td><td class=\"n\">" : "</td><td class=\"n\">");
  if (!limit)
    ps_html_fmt_change(p, v->change_pct);
  else if (!isnan(v->value) && !isnan(v->baseline))
    put(p, v->value > v->baseline ? "&gt;\u00a0limit" : "\u2264\u00a0limit");
  put(p, "</td>");
  if (limit && vcode(v) != V_REGRESSION)
    put(p, "<td><span class=\"v v-none\">within the limit</span></td>");
  else
    verdict_cell(p, v);
}

/* One machine's newest run with stage data: its charts and its drift. */
static void html_stage_run(page *p, size_t of, int first) {
  const ps_report_data *d = p->d;
  const ps_rstamp *sr = &d->stage_runs[of];
  int have_cycles, have_blocks;
  stage_rows(d, of, &have_cycles, &have_blocks);
  const ps_rrun *r = ps_report_find_host_run((ps_report_data *)d, sr->host, sr->run);
  char id[40];
  if (sr->host) {
    put(p, "<h3>");
    txt(p, sr->host);
    put(p, "</h3>\n");
  }
  snprintf(id, sizeof id, first ? "stage-run" : "stage-run-%zu", of);
  putf(p, "<p>Run <span class=\"name\" id=\"%s\">", id);
  txt(p, sr->run);
  put(p, "</span>");
  if (r) {
    put(p, " ");
    ps_html_badge(p, r->status);
    put(p, " · started ");
    ps_html_fmt_time(p, r->start_ns);
    put(p, " UTC");
  }
  put(p, ". Per stage: loadgen_stage_cycles (per task) and loadgen_stage_blocks "
         "(onlyLive).</p>\n<div class=\"charts\">\n");
  if (have_cycles) {
    putf(p, "<figure><figcaption>Cycles per stage and task</figcaption><div class=\"chart\">"
            "<canvas data-chart=\"stage-cycles\" data-stage=\"%zu\" role=\"img\" "
            "aria-label=\"cycles per stage\"></canvas></div></figure>\n"
            "<figure><figcaption>Cycle avg duration per stage and task (s)</figcaption>"
            "<div class=\"chart\"><canvas data-chart=\"stage-duration\" data-stage=\"%zu\" "
            "role=\"img\" aria-label=\"cycle duration per stage\"></canvas></div></figure>\n",
         of, of);
  } else {
    put(p, "<p class=\"empty\">No cycle summaries for this run (no loadgen stage).</p>\n");
  }
  if (have_blocks)
    putf(p, "<figure><figcaption>Live blocks per stage: avg swingset time and block time (s)"
            "</figcaption><div class=\"chart\"><canvas data-chart=\"stage-blocks\" "
            "data-stage=\"%zu\" role=\"img\" aria-label=\"live block times per stage\">"
            "</canvas></div></figure>\n",
         of);
  else
    put(p, "<p class=\"empty\">No live block summaries for this run.</p>\n");
  put(p, "</div>\n<h3>Stage drift</h3>\n");
  int n = 0;
  for (size_t i = 0; i < d->nverdicts && !p->rc; i++) {
    const ps_rverdict *v = &d->verdicts[i];
    if (!v->stage || is_dss(v) || strcmp(v->run, sr->run) != 0 || !same_host(v->host, sr->host))
      continue;
    if (!n++) {
      snprintf(id, sizeof id, first ? "drift-table" : "drift-table-%zu", of);
      putf(p, "<table id=\"%s\" class=\"drift\"><thead><tr><th>Stage</th><th>Metric</th>"
              "<th class=\"n\">Value</th><th class=\"n\">First loadgen stage</th>"
              "<th class=\"n\">Change</th><th>Verdict</th></tr></thead><tbody>\n", id);
    }
    put(p, "<tr><td>");
    txt(p, v->stage);
    put(p, "</td><td>");
    txt(p, ps_html_metric_label(v->metric));
    if (v->vat) { /* a vat's figure: which vat, as the slog names it */
      put(p, ": <span class=\"name\">");
      txt(p, v->vat);
      if (v->vat_name) {
        put(p, " (");
        txt(p, v->vat_name);
        put(p, ")");
      }
      put(p, "</span>");
    }
    put(p, "</td>");
    drift_figures(p, v);
    put(p, "</tr>\n");
  }
  put(p, n ? "</tbody></table>\n"
           : "<p class=\"empty\">No stage-drift verdicts for this run.</p>\n");
}

void ps_html_section_stages(page *p) {
  const ps_report_data *d = p->d;
  if (!section_begin(p, "stages", "Latest run, stage against stage", "loadgen", "Loadgen runs"))
    return;
  int shown = 0, c, b;
  for (size_t k = 0; k < d->nstage_runs && !p->rc; k++)
    if (stage_rows(d, k, &c, &b)) {
      html_stage_run(p, k, !shown);
      ps_html_chain(p, k, !shown++);
    }
  if (!shown) {
    section_empty(p, "No run in this range has stage data yet.");
    return;
  }
  put(p, "</section>\n");
}

static void html_one_dss(page *p, size_t idx, const dss_test *t) {
  put(p, "<h4>test ");
  txt(p, t->test);
  if (t->sweep) {
    put(p, " <span class=\"meta\">sweep ");
    txt(p, t->sweep);
    put(p, "</span>");
  }
  putf(p, "</h4>\n<div class=\"charts\"><figure><figcaption>q/s (rps_total) per arm; failed "
          "actions as bars (right axis)</figcaption><div class=\"chart\"><canvas "
          "data-chart=\"dss-rps\" data-dss=\"%zu\" role=\"img\" aria-label=\"requests per "
          "second per variant\"></canvas></div></figure>\n<figure><figcaption>p95 latency (ms) "
          "per arm</figcaption><div class=\"chart\"><canvas data-chart=\"dss-p95\" "
          "data-dss=\"%zu\" role=\"img\" aria-label=\"p95 latency per variant\"></canvas></div>"
          "</figure></div>\n",
       idx, idx);
  const ps_report_data *d = p->d;
  int n = 0;
  for (size_t i = 0; i < d->nverdicts && !p->rc; i++) {
    const ps_rverdict *v = &d->verdicts[i];
    if (!is_dss(v) || !same(v->run, t->run) || !same_host(v->host, t->host) ||
        !same(v->series, t->test))
      continue;
    if (!n++)
      put(p, "<table class=\"arm-verdicts\"><thead><tr><th>Arm</th><th>Against</th>"
             "<th>Metric</th><th class=\"n\">Arm</th><th class=\"n\">Reference</th>"
             "<th class=\"n\">Change</th><th class=\"n\">Variants agreeing</th><th>Verdict</th>"
             "</tr></thead><tbody>\n");
    put(p, "<tr><td class=\"name\">");
    txt(p, v->arm);
    put(p, "</td><td class=\"name\">");
    txt(p, v->reference ? v->reference : "–");
    put(p, "</td><td>");
    txt(p, ps_html_metric_label(v->metric));
    put(p, "</td><td class=\"n\">");
    ps_html_fmt_num(p, v->value);
    put(p, "</td><td class=\"n\">");
    ps_html_fmt_num(p, v->baseline);
    put(p, "</td><td class=\"n\">");
    ps_html_fmt_change(p, v->change_pct);
    put(p, "</td><td class=\"n\">");
    if (!isnan(v->variants_agree) && !isnan(v->variants))
      putf(p, "%.0f of %.0f", v->variants_agree, v->variants);
    else
      put(p, "–");
    put(p, "</td>");
    verdict_cell(p, v);
    put(p, "</tr>\n");
  }
  put(p, n ? "</tbody></table>\n"
           : "<p class=\"empty\">No arm verdicts for this test (a single arm, or not judged "
             "yet).</p>\n");
}

/* The verdicts cell of a results file's row: its regressions and
 * improvements counted, or that none changed or none was judged. */
static void dss_file_verdicts(page *p, const ps_rdssfile *file) {
  const ps_report_data *d = p->d;
  int reg = 0, imp = 0, judged = 0;
  for (size_t i = 0; i < d->nverdicts; i++)
    if (of_dssfile(&d->verdicts[i], file)) {
      judged++;
      reg += vcode(&d->verdicts[i]) == V_REGRESSION;
      imp += vcode(&d->verdicts[i]) == V_IMPROVEMENT;
    }
  if (reg)
    putf(p, "<span class=\"v v-regression\">\u25b2 %d regression%s</span> ", reg,
         reg == 1 ? "" : "s");
  if (imp)
    putf(p, "<span class=\"v v-improvement\">\u25c6 %d improvement%s</span> ", imp,
         imp == 1 ? "" : "s");
  if (judged && !reg && !imp)
    putf(p, "<span class=\"v v-none\">no change (%d)</span>", judged);
  if (!judged)
    put(p, "<span class=\"v v-none\">not judged</span>");
}

/* A results file's row of the DSS table: where and when it was written,
 * its status, the tests and arms it holds, its verdicts. */
static void dss_file_row(page *p, const ps_rdssfile *file) {
  const ps_report_data *d = p->d;
  size_t begin, end;
  ps_html_dss_rows(d, file->host, file->run, &begin, &end);
  names tests = {0}, arms = {0};
  for (size_t i = begin; i < end && !p->rc; i++)
    if (ps_html_names_add(&tests, d->dss[i].test, ps_html_by_name, NULL) ||
        ps_html_names_add(&arms, d->dss[i].arm, ps_html_by_name, NULL))
      p->rc = -ENOMEM;
  putf(p, "<tr class=\"row-%s\" data-status=\"%s\"><td class=\"name run\">",
       ps_rb_status_name(file->status), ps_rb_status_name(file->status));
  txt(p, file->run);
  put(p, "</td><td class=\"name host\">");
  txt(p, file->host ? file->host : "–");
  put(p, "</td><td class=\"when\">");
  ps_html_fmt_time(p, file->time_ns);
  put(p, "</td><td>");
  ps_html_badge(p, file->status);
  put(p, "</td><td>");
  html_names(p, &tests, ", ");
  put(p, "</td><td class=\"name\">");
  html_names(p, &arms, "<br>");
  put(p, "</td><td>");
  dss_file_verdicts(p, file);
  put(p, "</td></tr>\n");
  free(tests.v);
  free(arms.v);
}

/* The details of results file `f`: its tests, each with its charts and arm
 * verdicts. */
static void dss_file_details(page *p, size_t f) {
  const ps_rdssfile *file = &p->d->dssfiles[f];
  /* the newest few open; the rest one click away, drawn when opened */
  put(p, f < 3 ? "<details open><summary>" : "<details><summary>");
  put(p, "<span class=\"name\">");
  txt(p, file->run);
  put(p, "</span> · ");
  ps_html_fmt_time(p, file->time_ns);
  put(p, " UTC · ");
  ps_html_badge(p, file->status);
  if (file->host) {
    put(p, " · on <span class=\"name host\">");
    txt(p, file->host);
    put(p, "</span>");
  }
  put(p, "</summary>\n");
  size_t begin, end;
  ps_html_dss_rows(p->d, file->host, file->run, &begin, &end);
  if (begin == end)
    put(p, "<p class=\"empty\">No dss_bench points for this file in this range.</p>\n");
  for (size_t i = 0; i < p->ntests; i++)
    if (p->tests[i].file == f)
      html_one_dss(p, i, &p->tests[i]);
  put(p, "</details>\n");
}

void ps_html_section_dss(page *p) {
  const ps_report_data *d = p->d;
  if (!section_begin(p, "dss", "DSS bench", "dss_bench", "DSS bench results"))
    return;
  if (!d->ndssfiles) {
    section_empty(p, "No DSS bench results in this range.");
    return;
  }
  put(p, "<table id=\"dss-table\"><thead><tr><th>Results</th><th>Host</th><th>Written (UTC)</th>"
         "<th>Status</th><th>Tests</th><th>Arms</th><th>Verdicts</th></tr></thead><tbody>\n");
  for (size_t f = 0; f < d->ndssfiles && !p->rc; f++)
    dss_file_row(p, &d->dssfiles[f]);
  put(p, "</tbody></table>\n");
  for (size_t f = 0; f < d->ndssfiles && !p->rc; f++)
    dss_file_details(p, f);
  put(p, "</section>\n");
}

void ps_html_section_health(page *p) {
  const ps_report_data *d = p->d;
  put(p, "<section id=\"health\"><h2>Agent health</h2>\n");
  const char *err = d->last_error ? d->last_error : d->alert_error;
  if (!d->nhealth)
    put(p, "<p class=\"health empty\">No self-metrics (measurement perfship) in this range: "
           "no agent has written to this database lately.");
  for (size_t i = 0; i < d->nhealth; i++) {
    const ps_rhealth *h = &d->health[i];
    put(p, "<p class=\"health\"><span class=\"name\">");
    txt(p, h->host);
    put(p, "</span>: last write ");
    ps_html_fmt_time(p, h->time_ns);
    put(p, " UTC");
    if (h->time_ns && d->now_ns > h->time_ns) {
      put(p, " (");
      ps_html_fmt_duration(p, (double)(d->now_ns - h->time_ns) / 1e9);
      put(p, " before this page)");
    }
    put(p, " · ");
    ps_html_fmt_count(p, h->points_written);
    put(p, " points written · ");
    double rejected = (isnan(h->records_rejected) ? 0 : h->records_rejected) +
                      (isnan(h->points_rejected) ? 0 : h->points_rejected);
    ps_html_fmt_count(p, rejected);
    put(p, " rejected lines");
    if (!isnan(h->uptime_s)) {
      put(p, " (counted over ");
      ps_html_fmt_duration(p, h->uptime_s);
      put(p, " of uptime)");
    }
    if (i + 1 < d->nhealth)
      put(p, "</p>\n");
  }
  put(p, " · last error: ");
  txt(p, err ? err : "none");
  put(p, "</p>\n</section>\n");
}
