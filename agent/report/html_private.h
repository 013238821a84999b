/*
 * html_private.h (private to agent/report/html*.c): the page being written
 * and what the parts of the page writer share (docs/report.md).
 *
 * - html_escape.c: the two escapes and the inline check, the page's
 *   security boundary (include/report/html_escape.h).
 * - html_format.c: numbers, times and durations as a person reads them.
 * - html_view.c: the view of the model the page is drawn from: verdicts by
 *   run, the trend series, stage and task lists, every (results file,
 *   test) of the DSS bench with its variants and arms. No output.
 * - html_charts.c: the charts' data, the one JSON block.
 * - html_sections.c: the headlines and the sections, as HTML.
 * - html.c: the page around them and its Content-Security-Policy.
 *
 * Data reaches the page only through esc(), txt() and jstr() below, which are
 * the escapes of html_escape.h; nothing here writes a string from the data
 * by any other way. The writer's primitives and the small predicates are
 * static inline (internal to each part, so they keep short names); what
 * one part defines for another is named ps_html_*.
 */
#ifndef PS_REPORT_HTML_PRIVATE_H
#define PS_REPORT_HTML_PRIVATE_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/buf.h"
#include "influx/numfmt.h"
#include "report/html.h"
#include "report/html_escape.h"
#include "report/model.h"

/* Trends (test type and host) the page shows at most. */
#define MAX_SERIES 64
/* Hosts the headlines name at most. */
#define MAX_HOSTS 64

/* A sorted set of names that the model owns (not copied). */
typedef struct names {
  const char **v;
  size_t n;
} names;

typedef int (*name_cmp)(const void *ctx, const char *a, const char *b);

/* One test of one DSS results file, as the page shows it. */
typedef struct dss_test {
  const char *host; /* the file's machine (NULL: no host tag) */
  const char *run, *test, *sweep;
  const char *reference; /* the arm the verdicts compare with, or NULL */
  size_t begin, end;     /* the file's rows in d->dss */
  size_t file;           /* its index in d->dssfiles */
  names variants, arms;
  const ps_report_data *d;
} dss_test;

/* Pages are large; a failed append is remembered and reported once at the
 * end instead of after every call. */
typedef struct page {
  ps_buf *out;
  int rc;
  const ps_report_data *d;
  /* prepared once per page (ps_html_prepare()): the verdicts sorted by run
   * and metric, and every (results file, test) in the order the page shows
   * them, which is also their index in the JSON block */
  const ps_rverdict **vidx;
  size_t nvidx;
  dss_test *tests;
  size_t ntests;
} page;

/* --- the writer ----------------------------------------------------------- */

static inline void put(page *p, const char *s) {
  if (!p->rc)
    p->rc = ps_buf_puts(p->out, s);
}

static inline void putn(page *p, const char *s, size_t n) {
  if (!p->rc)
    p->rc = ps_buf_append(p->out, s, n);
}

static inline void putf(page *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void putf(page *p, const char *fmt, ...) {
  if (p->rc)
    return;
  va_list ap;
  va_start(ap, fmt);
  p->rc = ps_buf_vprintf(p->out, fmt, ap);
  va_end(ap);
}

/* Text from the data in a quoted attribute value (or <title>). */
static inline void esc(page *p, const char *s) {
  if (!p->rc)
    p->rc = ps_html_escape(p->out, s);
}

/* Text from the data in HTML text: escaped, and in a <bdi> of its own, so
 * that a right-to-left name displays as it should and neither it nor what
 * follows it can run into the text around it (docs/report.md). */
static inline void txt(page *p, const char *s) {
  if (!p->rc)
    p->rc = ps_buf_puts(p->out, "<bdi>");
  esc(p, s);
  if (!p->rc)
    p->rc = ps_buf_puts(p->out, "</bdi>");
}

/* Text from the data as a JSON string (NULL: null), in the JSON block. */
static inline void jstr(page *p, const char *s) {
  if (!p->rc)
    p->rc = s ? ps_json_string(p->out, s) : ps_buf_puts(p->out, "null");
}

static inline void jnum(page *p, double v) {
  char b[PS_FMT_DOUBLE_SIZE];
  if (isnan(v) || isinf(v))
    put(p, "null");
  else {
    ps_fmt_double(v, b);
    put(p, b);
  }
}

/* --- small predicates ------------------------------------------------------ */

static inline int same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* Hosts: two absent ones are the same (data written without a host tag). */
static inline int same_host(const char *a, const char *b) { return ps_report_same(a, b); }

/* A trend: one test type on one host, never two hosts on one line. */
typedef struct trend_key {
  const char *test_type, *host;
} trend_key;

static inline int bad_status(ps_rstatus s) {
  return s == PS_RS_FAILED || s == PS_RS_INTERRUPTED || s == PS_RS_STALLED;
}

/* A verdict's word as the charts' JSON codes it. */
enum { V_ABSENT = 0, V_REGRESSION = 1, V_IMPROVEMENT = 2, V_NONE = 3 };

static inline int vcode(const ps_rverdict *v) {
  if (!v || !v->verdict)
    return V_ABSENT;
  return strcmp(v->verdict, "regression") == 0    ? V_REGRESSION
         : strcmp(v->verdict, "improvement") == 0 ? V_IMPROVEMENT
                                                  : V_NONE;
}

static inline int is_run_level(const ps_rverdict *v) {
  return !v->stage && !v->arm && (!v->source || strcmp(v->source, "loadgen") == 0);
}

static inline int is_dss(const ps_rverdict *v) {
  return v->arm || (v->source && strcmp(v->source, "dss_bench") == 0);
}

/* --- html_format.c: for people ----------------------------------------------- */

void ps_html_fmt_time(page *p, int64_t ns); /* "2026-01-31 12:00", "–" for none */
void ps_html_fmt_num(page *p, double v);
void ps_html_fmt_count(page *p, double v); /* thousands apart */
void ps_html_fmt_duration(page *p, double s);
void ps_html_fmt_change(page *p, double pct); /* "+14.3 %"; nothing for NaN */
void ps_html_badge(page *p, ps_rstatus s);

/* --- html_view.c: the view -------------------------------------------------- */

/* Sorts the verdicts and collects the DSS tests (p->rc on failure);
 * ps_html_release() frees what it made, also after a failure. */
void ps_html_prepare(page *p);
void ps_html_release(page *p);
/* A run's verdicts are those of its host and name (report/model.h). */
void ps_html_run_verdicts(const page *p, const char *host, const char *run, size_t *begin,
                          size_t *end);
const ps_rverdict *ps_html_run_verdict(const page *p, const char *host, const char *run,
                                       const char *metric);
const char *ps_html_metric_label(const char *field);
size_t ps_html_trend_series(const ps_report_data *d, trend_key *out, size_t max);
/* The hosts of the runs (or of the DSS files), in the order of their newest
 * one; NULL stands for rows without a host tag. */
size_t ps_html_run_hosts(const ps_report_data *d, const char **out, size_t max);
size_t ps_html_dss_hosts(const ps_report_data *d, const char **out, size_t max);
int ps_html_by_name(const void *ctx, const char *a, const char *b);
int ps_html_names_add(names *s, const char *x, name_cmp cmp, const void *ctx);
/* The stages and tasks of stage run `of` (d->stage_runs). */
void ps_html_stage_lists(page *p, size_t of, names *stages, names *tasks);
void ps_html_dss_rows(const ps_report_data *d, const char *host, const char *run,
                      size_t *begin, size_t *end);

/* --- html_charts.c: the JSON block ---------------------------------------------- */

void ps_html_json_all(page *p);
/* html_benchmarker.c: the benchmarker's curves per configuration and load. */
void ps_html_section_benchmarker(page *p);

/* --- html_sections.c -------------------------------------------------------- */

void ps_html_headline_run(page *p, const ps_rrun *r, const char *what, const char *id);
void ps_html_headline_dss(page *p);
void ps_html_section_runs(page *p);
void ps_html_section_trends(page *p);
void ps_html_section_stages(page *p);
void ps_html_section_dss(page *p);
void ps_html_section_health(page *p);

/* A triage decision beside what it is about (html_view.c). */
void ps_html_decision_badge(page *p, const char *what, const ps_triage_decision *t);

/* Inside the chain: the slog figures of stage run `of` (html_chain.c). */
void ps_html_chain(page *p, size_t of, int first);

#endif
