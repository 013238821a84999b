/*
 * report/html.c: the report page (include/report/html.h).
 *
 * DESIGN
 * - Everything a person reads (the newest run's verdict, the tables, the
 *   health line) is written here as HTML, so the page reads without
 *   scripts, in print and in a mail client's preview. Only the charts need
 *   the page's script; their numbers go into one JSON block of type
 *   application/json, which the browser never runs, and the script reads
 *   it with JSON.parse.
 * - Data reaches the page in exactly two ways: ps_html_escape() for HTML
 *   and ps_json_string() for the JSON block (which writes no '<' at all,
 *   so nothing in it can end its element). The Content-Security-Policy
 *   allows the two inline scripts by their SHA-256 and the style by its
 *   own: had an escape been missed, an injected handler or script would
 *   still not run, and no request of any kind leaves the page.
 * - Numbers in the JSON are the shortest text that reads back as the same
 *   double (influx/numfmt.h), so a chart holds exactly what InfluxDB
 *   answered.
 * - Sizes: a year of nightly runs and a hundred DSS files make a page of a
 *   few megabytes at most (docs/benchmarks.md); lookups are linear scans
 *   over the model, which stays in the thousands of rows.
 */
#include "report/html.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/sha256.h"
#include "influx/numfmt.h"
#include "report/assets.h"

/* Pages are large; a failed append is remembered and reported once at the
 * end instead of after every call. */
typedef struct dss_test dss_test;

typedef struct page {
  ps_buf *out;
  int rc;
  const ps_report_data *d;
  /* prepared once per page (prepare()): the verdicts sorted by run and
   * metric, and every (results file, test) in the order the page shows
   * them, which is also their index in the JSON block */
  const ps_rverdict **vidx;
  size_t nvidx;
  dss_test *tests;
  size_t ntests;
} page;

static void put(page *p, const char *s) {
  if (!p->rc)
    p->rc = ps_buf_puts(p->out, s);
}

static void putn(page *p, const char *s, size_t n) {
  if (!p->rc)
    p->rc = ps_buf_append(p->out, s, n);
}

static void putf(page *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(page *p, const char *fmt, ...) {
  if (p->rc)
    return;
  va_list ap;
  va_start(ap, fmt);
  p->rc = ps_buf_vprintf(p->out, fmt, ap);
  va_end(ap);
}

/* --- escaping --------------------------------------------------------------- */

int ps_html_escape(ps_buf *out, const char *s) {
  size_t start = out->len;
  int rc = 0;
  for (const char *c = s ? s : ""; !rc && *c; c++) {
    switch (*c) {
    case '&': rc = ps_buf_puts(out, "&amp;"); break;
    case '<': rc = ps_buf_puts(out, "&lt;"); break;
    case '>': rc = ps_buf_puts(out, "&gt;"); break;
    case '"': rc = ps_buf_puts(out, "&quot;"); break;
    case '\'': rc = ps_buf_puts(out, "&#39;"); break;
    default: rc = ps_buf_putc(out, *c);
    }
  }
  if (rc)
    ps_buf_truncate(out, start);
  return rc;
}

int ps_json_string(ps_buf *out, const char *s) {
  size_t start = out->len;
  int rc = ps_buf_putc(out, '"');
  for (const unsigned char *c = (const unsigned char *)(s ? s : ""); !rc && *c; c++) {
    if (*c == '"' || *c == '\\')
      rc = ps_buf_append(out, (const char[2]){'\\', (char)*c}, 2);
    else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&')
      rc = ps_buf_printf(out, "\\u%04x", *c);
    else if (c[0] == 0xe2 && c[1] == 0x80 && (c[2] == 0xa8 || c[2] == 0xa9)) {
      /* U+2028/2029 end a line in older JavaScript parsers */
      rc = ps_buf_printf(out, "\\u%04x", c[2] == 0xa8 ? 0x2028 : 0x2029);
      c += 2;
    } else
      rc = ps_buf_putc(out, (char)*c);
  }
  if (!rc)
    rc = ps_buf_putc(out, '"');
  if (rc)
    ps_buf_truncate(out, start);
  return rc;
}

int ps_report_script_ok(const char *text, size_t len) {
  static const char *const bad[] = {"</script", "</style", "<!--"};
  for (size_t i = 0; i < len; i++) {
    if (text[i] != '<')
      continue;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
      size_t n = strlen(bad[k]);
      if (len - i >= n && strncasecmp(text + i, bad[k], n) == 0)
        return 0;
    }
  }
  return 1;
}

static void esc(page *p, const char *s) {
  if (!p->rc)
    p->rc = ps_html_escape(p->out, s);
}

static void jstr(page *p, const char *s) {
  if (!p->rc)
    p->rc = s ? ps_json_string(p->out, s) : ps_buf_puts(p->out, "null");
}

static void jnum(page *p, double v) {
  char b[PS_FMT_DOUBLE_SIZE];
  if (isnan(v) || isinf(v))
    put(p, "null");
  else {
    ps_fmt_double(v, b);
    put(p, b);
  }
}

/* --- formatting for people ------------------------------------------------------ */

static void fmt_time(page *p, int64_t ns) {
  if (!ns) {
    put(p, "–");
    return;
  }
  time_t t = (time_t)(ns / 1000000000);
  struct tm tm;
  char b[32];
  if (!gmtime_r(&t, &tm) || !strftime(b, sizeof b, "%Y-%m-%d %H:%M", &tm)) {
    put(p, "–");
    return;
  }
  put(p, b);
}

static void fmt_num(page *p, double v) {
  if (isnan(v)) {
    put(p, "–");
    return;
  }
  double a = fabs(v);
  putf(p, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f", v);
}

static void fmt_count(page *p, double v) {
  if (isnan(v)) {
    put(p, "–");
    return;
  }
  /* thousands separated by a thin space, readable in any locale */
  char b[32];
  snprintf(b, sizeof b, "%.0f", v);
  size_t n = strlen(b), lead = b[0] == '-';
  for (size_t i = 0; i < n; i++) {
    putn(p, b + i, 1);
    size_t rest = n - i - 1;
    if (rest && rest % 3 == 0 && i >= lead)
      put(p, "\u2009");
  }
}

static void fmt_duration(page *p, double s) {
  if (isnan(s) || s < 0) {
    put(p, "–");
    return;
  }
  int64_t t = (int64_t)(s + 0.5);
  if (t >= 86400)
    putf(p, "%" PRId64 "d %" PRId64 "h", t / 86400, t % 86400 / 3600);
  else if (t >= 3600)
    putf(p, "%" PRId64 "h %02" PRId64 "m", t / 3600, t % 3600 / 60);
  else if (t >= 60)
    putf(p, "%" PRId64 "m %02" PRId64 "s", t / 60, t % 60);
  else
    putf(p, "%" PRId64 "s", t);
}

static void fmt_change(page *p, double pct) {
  if (isnan(pct))
    return;
  putf(p, "%s%.1f\u00a0%%", pct > 0 ? "+" : pct < 0 ? "\u2212" : "±", fabs(pct));
}

static void badge(page *p, ps_rstatus s) {
  putf(p, "<span class=\"st st-%s\">%s</span>", ps_rstatus_name(s), ps_rstatus_name(s));
}

static int bad_status(ps_rstatus s) {
  return s == PS_RS_FAILED || s == PS_RS_INTERRUPTED || s == PS_RS_STALLED;
}

/* --- verdicts ---------------------------------------------------------------------- */

enum { V_ABSENT = 0, V_REGRESSION = 1, V_IMPROVEMENT = 2, V_NONE = 3 };

static int vcode(const ps_rverdict *v) {
  if (!v || !v->verdict)
    return V_ABSENT;
  return strcmp(v->verdict, "regression") == 0    ? V_REGRESSION
         : strcmp(v->verdict, "improvement") == 0 ? V_IMPROVEMENT
                                                  : V_NONE;
}

static int is_run_level(const ps_rverdict *v) {
  return !v->stage && !v->arm && (!v->source || strcmp(v->source, "loadgen") == 0);
}

static int is_dss(const ps_rverdict *v) {
  return v->arm || (v->source && strcmp(v->source, "dss_bench") == 0);
}

static int vidx_cmp(const void *a, const void *b) {
  const ps_rverdict *x = *(const ps_rverdict *const *)a, *y = *(const ps_rverdict *const *)b;
  int c = strcmp(x->run, y->run);
  if (!c)
    c = strcmp(x->metric, y->metric);
  if (!c)
    c = x < y ? -1 : x > y; /* stable: the order the server sent them */
  return c;
}

/* The verdicts of one run: [*begin, *end) of p->vidx. */
static void run_verdicts(const page *p, const char *run, size_t *begin, size_t *end) {
  size_t lo = 0, hi = p->nvidx;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (strcmp(p->vidx[mid]->run, run) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  *begin = lo;
  while (lo < p->nvidx && strcmp(p->vidx[lo]->run, run) == 0)
    lo++;
  *end = lo;
}

static const ps_rverdict *run_verdict(const page *p, const char *run, const char *metric) {
  size_t b, e;
  run_verdicts(p, run, &b, &e);
  for (size_t i = b; i < e; i++)
    if (is_run_level(p->vidx[i]) && strcmp(p->vidx[i]->metric, metric) == 0)
      return p->vidx[i];
  return NULL;
}

/* What a person calls a verdict's metric; the field name otherwise. */
static const char *metric_label(const char *field) {
  static const struct {
    const char *field, *label;
  } more[] = {
      {"stage_avgDuration", "Cycle avg duration"},
      {"stage_avgSwingsetTime", "Live swingset time"},
      {"stage_avgBlockDuration", "Live block time"},
      {"rps_total", "q/s"},
      {"p95_ms", "p95 latency"},
      {"errors", "errors"},
  };
  int i = ps_report_metric_index(field);
  if (i >= 0)
    return ps_report_metrics[i].label;
  for (size_t k = 0; field && k < sizeof more / sizeof more[0]; k++)
    if (strcmp(more[k].field, field) == 0)
      return more[k].label;
  return field;
}

/* "Cycle avg duration +14.3 %" with the verdict's word, for lists. */
static void verdict_item(page *p, const ps_rverdict *v, int with_stage) {
  int c = vcode(v);
  putf(p, "<span class=\"v v-%s\" title=\"", c == V_REGRESSION ? "regression" : "improvement");
  esc(p, v->verdict);
  put(p, ": value ");
  fmt_num(p, v->value);
  put(p, " against ");
  fmt_num(p, v->baseline);
  if (v->change_run && strcmp(v->change_run, v->run) != 0) {
    put(p, "; change began at ");
    esc(p, v->change_run);
  }
  putf(p, "\">%s ", c == V_REGRESSION ? "\u25b2 regression" : "\u25c6 improvement");
  if (with_stage && v->stage) {
    put(p, "stage ");
    esc(p, v->stage);
    put(p, " ");
  }
  esc(p, metric_label(v->metric));
  put(p, " ");
  fmt_change(p, v->change_pct);
  put(p, "</span>");
}

/* What the loadgen verdicts of a run say, in a few words: the changes, or
 * how many metrics were judged unchanged. Returns the count of regressions. */
static int run_verdict_summary(page *p, const ps_rrun *r, const char *sep) {
  int judged = 0, changes = 0, regressions = 0;
  size_t b, e;
  run_verdicts(p, r->name, &b, &e);
  for (size_t i = b; i < e; i++) {
    const ps_rverdict *v = p->vidx[i];
    if (is_dss(v))
      continue;
    int c = vcode(v);
    judged += !v->stage;
    if (c == V_REGRESSION || c == V_IMPROVEMENT) {
      if (changes++)
        put(p, sep);
      verdict_item(p, v, 1);
      regressions += c == V_REGRESSION;
    }
  }
  if (!changes && judged)
    putf(p, "<span class=\"v v-none\">no change in %d metric%s</span>", judged,
         judged == 1 ? "" : "s");
  else if (!changes)
    put(p, "<span class=\"v v-none\">not judged</span>");
  return regressions;
}

/* --- the JSON block ------------------------------------------------------------------- */

static int test_type_seen(const ps_report_data *d, size_t upto, const char *tt) {
  for (size_t i = 0; i < upto; i++)
    if (d->runs[i].status == PS_RS_SUCCESS && d->runs[i].test_type &&
        strcmp(d->runs[i].test_type, tt) == 0)
      return 1;
  return 0;
}

/* Test types with a successful run, in the order of their newest run. */
static size_t trend_series(const ps_report_data *d, const char **out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < d->nruns && n < max; i++) {
    const ps_rrun *r = &d->runs[i];
    if (r->status == PS_RS_SUCCESS && r->test_type && !test_type_seen(d, i, r->test_type))
      out[n++] = r->test_type;
  }
  return n;
}

#define MAX_SERIES 64

static double run_x_ms(const ps_rrun *r) {
  int64_t ns = r->run_point_ns ? r->run_point_ns : r->start_ns;
  return (double)(ns / 1000) / 1000.0;
}

static int same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static void json_trends(page *p) {
  const ps_report_data *d = p->d;
  const char *series[MAX_SERIES];
  size_t ns = trend_series(d, series, MAX_SERIES);
  put(p, "\"trends\":[");
  for (size_t s = 0; s < ns; s++) {
    put(p, s ? ",{\"series\":" : "{\"series\":");
    jstr(p, series[s]);
    /* oldest first: the runs are newest first */
    const char *keys[] = {"x", "run", "rev"};
    for (int k = 0; k < 3; k++) {
      putf(p, ",\"%s\":[", keys[k]);
      int first = 1;
      for (size_t i = d->nruns; i-- > 0;) {
        const ps_rrun *r = &d->runs[i];
        if (r->status != PS_RS_SUCCESS || !same(r->test_type, series[s]))
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
          if (r->status != PS_RS_SUCCESS || !same(r->test_type, series[s]))
            continue;
          put(p, first ? "" : ",");
          first = 0;
          const ps_rverdict *v = k ? run_verdict(p, r->name, pm->field) : NULL;
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
      if (!bad_status(r->status) || !same(r->test_type, series[s]) || !r->start_ns)
        continue;
      put(p, first ? "{\"x\":" : ",{\"x\":");
      first = 0;
      jnum(p, run_x_ms(r));
      put(p, ",\"run\":");
      jstr(p, r->name);
      putf(p, ",\"status\":\"%s\"}", ps_rstatus_name(r->status));
    }
    put(p, "]}");
  }
  put(p, "]");
}

static int by_name(const void *ctx, const char *a, const char *b) {
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

typedef struct names {
  const char **v;
  size_t n;
} names;

typedef int (*name_cmp)(const void *ctx, const char *a, const char *b);

/* Adds x once, keeping the names ordered by cmp. */
static int names_add(names *s, const char *x, name_cmp cmp, const void *ctx) {
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

/* The names as a JSON array of strings. */
static void json_names(page *p, const names *n) {
  put(p, "[");
  for (size_t i = 0; i < n->n; i++) {
    put(p, i ? "," : "");
    jstr(p, n->v[i]);
  }
  put(p, "]");
}

/* The names as HTML text, `sep` (markup) between them. */
static void html_names(page *p, const names *n, const char *sep) {
  for (size_t i = 0; i < n->n; i++) {
    put(p, i ? sep : "");
    esc(p, n->v[i]);
  }
}

static int task_cmp(const void *ctx, const char *a, const char *b) {
  (void)ctx;
  if (strcmp(a, "all") == 0 || strcmp(b, "all") == 0)
    return strcmp(a, "all") == 0 ? (strcmp(b, "all") == 0 ? 0 : -1) : 1;
  return strcmp(a, b);
}

static void stage_lists(page *p, names *stages, names *tasks) {
  const ps_report_data *d = p->d;
  for (size_t i = 0; i < d->nstages && !p->rc; i++) {
    if (names_add(stages, d->stages[i].stage, stage_cmp, NULL) ||
        names_add(tasks, d->stages[i].task, task_cmp, NULL))
      p->rc = -ENOMEM;
  }
  for (size_t i = 0; i < d->nblocks && !p->rc; i++)
    if (names_add(stages, d->blocks[i].stage, stage_cmp, NULL))
      p->rc = -ENOMEM;
}

static void json_stages(page *p) {
  const ps_report_data *d = p->d;
  if (!d->stage_run || (!d->nstages && !d->nblocks)) {
    put(p, "\"stages\":null");
    return;
  }
  names stages = {0}, tasks = {0};
  stage_lists(p, &stages, &tasks);
  put(p, "\"stages\":{\"run\":");
  jstr(p, d->stage_run);
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
          if (strcmp(d->stages[i].stage, stages.v[s]) == 0 &&
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
        if (strcmp(d->blocks[i].stage, stages.v[s]) == 0)
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

/* The rows of one results file, [*begin, *end) of d->dss (sorted by run). */
static void dss_rows(const ps_report_data *d, const char *run, size_t *begin, size_t *end) {
  size_t i = 0;
  while (i < d->ndss && strcmp(d->dss[i].run, run) != 0)
    i++;
  *begin = i;
  while (i < d->ndss && strcmp(d->dss[i].run, run) == 0)
    i++;
  *end = i;
}

/* The reference arm of a file's test, as its verdicts name it. */
static const char *dss_reference(const ps_report_data *d, const char *run, const char *test) {
  for (size_t i = 0; i < d->nverdicts; i++) {
    const ps_rverdict *v = &d->verdicts[i];
    if (is_dss(v) && v->reference && same(v->run, run) && same(v->series, test))
      return v->reference;
  }
  return NULL;
}

struct dss_test {
  const char *run, *test, *sweep;
  const char *reference; /* the arm the verdicts compare with, or NULL */
  size_t begin, end;     /* the file's rows in d->dss */
  size_t file;           /* its index in d->dssfiles */
  names variants, arms;
  const ps_report_data *d;
};

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
  t->run = d->dss[begin].run;
  t->test = test;
  t->begin = begin;
  t->end = end;
  t->file = file;
  t->reference = dss_reference(d, t->run, test);
  for (size_t i = begin; i < end && !p->rc; i++) {
    const ps_rdss *x = &d->dss[i];
    if (strcmp(x->test, test) != 0)
      continue;
    if (!t->sweep)
      t->sweep = x->sweep;
    if (names_add(&t->variants, x->variant, variant_cmp, t) ||
        names_add(&t->arms, x->arm, arm_cmp, t))
      p->rc = -ENOMEM;
  }
}

/* Every (results file, test): files newest first, tests by name. */
static void prepare_dss(page *p) {
  const ps_report_data *d = p->d;
  for (size_t f = 0; f < d->ndssfiles && !p->rc; f++) {
    size_t begin, end;
    dss_rows(d, d->dssfiles[f].run, &begin, &end);
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

static void prepare(page *p) {
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

static void release(page *p) {
  for (size_t i = 0; i < p->ntests; i++) {
    free(p->tests[i].variants.v);
    free(p->tests[i].arms.v);
  }
  free(p->tests);
  free(p->vidx);
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

static void json_all(page *p) {
  putf(p, "{\"v\":1,\"generated\":");
  jnum(p, (double)(p->d->now_ns / 1000000));
  put(p, ",");
  json_trends(p);
  put(p, ",");
  json_stages(p);
  put(p, ",\"dss\":[");
  for (size_t i = 0; i < p->ntests; i++)
    json_one_dss(p, i, &p->tests[i]);
  put(p, "]}");
}

int ps_report_chart_data(const ps_report_data *d, ps_buf *out) {
  page p = {.out = out, .d = d};
  prepare(&p);
  json_all(&p);
  release(&p);
  return p.rc;
}

/* --- the sections ------------------------------------------------------------------- */

static void headline_run(page *p, const ps_rrun *r, const char *what, const char *id) {
  int regressions = 0, improvements = 0;
  size_t b, e;
  run_verdicts(p, r->name, &b, &e);
  for (size_t i = b; i < e; i++)
    if (!is_dss(p->vidx[i])) {
      regressions += vcode(p->vidx[i]) == V_REGRESSION;
      improvements += vcode(p->vidx[i]) == V_IMPROVEMENT;
    }
  const char *cls = r->status == PS_RS_FAILED                            ? "h-bad"
                    : bad_status(r->status)                              ? "h-warn"
                    : r->status == PS_RS_RUNNING                         ? "h-run"
                    : r->status == PS_RS_SUCCESS && regressions          ? "h-bad"
                    : r->status == PS_RS_SUCCESS                         ? "h-good"
                                                                         : "";
  putf(p, "<div class=\"headline %s\" id=\"%s\">", cls, id);
  badge(p, r->status);
  if (r->status == PS_RS_SUCCESS && regressions)
    put(p, " <span class=\"st st-regression\">regression</span>");
  putf(p, " <span class=\"what\">%s <span class=\"name\">", what);
  esc(p, r->name);
  put(p, "</span></span>");
  if (r->revision) {
    put(p, " · revision ");
    esc(p, r->revision);
  }
  put(p, " · started ");
  fmt_time(p, r->start_ns);
  put(p, " UTC");
  if (!isnan(r->duration_s)) {
    put(p, " · ");
    fmt_duration(p, r->duration_s);
  }
  put(p, "<span class=\"verdicts\">");
  if (bad_status(r->status) || (r->status != PS_RS_SUCCESS && r->text)) {
    esc(p, r->text ? r->text : "no error line was recorded");
  } else if (r->status == PS_RS_RUNNING) {
    put(p, "Still running: judged when it ends.");
  } else {
    if (regressions)
      putf(p, "<b>%d regression%s</b>: ", regressions, regressions == 1 ? "" : "s");
    else if (improvements)
      putf(p, "%d improvement%s: ", improvements, improvements == 1 ? "" : "s");
    run_verdict_summary(p, r, " · ");
  }
  put(p, "</span></div>\n");
}

static void headline_dss(page *p) {
  const ps_report_data *d = p->d;
  if (!d->ndssfiles)
    return;
  const ps_rdssfile *f = &d->dssfiles[0];
  int regressions = 0, improvements = 0, judged = 0;
  for (size_t i = 0; i < d->nverdicts; i++)
    if (is_dss(&d->verdicts[i]) && same(d->verdicts[i].run, f->run)) {
      judged++;
      regressions += vcode(&d->verdicts[i]) == V_REGRESSION;
      improvements += vcode(&d->verdicts[i]) == V_IMPROVEMENT;
    }
  putf(p, "<div class=\"headline %s\" id=\"headline-dss\">",
       f->status == PS_RS_FAILED || regressions ? "h-bad"
       : f->status == PS_RS_SUCCESS           ? "h-good"
                                              : "");
  badge(p, f->status);
  if (regressions)
    put(p, " <span class=\"st st-regression\">regression</span>");
  put(p, " <span class=\"what\">Newest DSS results <span class=\"name\">");
  esc(p, f->run);
  put(p, "</span></span> · written ");
  fmt_time(p, f->time_ns);
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
      if (!is_dss(v) || !same(v->run, f->run) || (c != V_REGRESSION && c != V_IMPROVEMENT))
        continue;
      if (n++)
        put(p, " · ");
      putf(p, "<span class=\"v v-%s\">%s ", c == V_REGRESSION ? "regression" : "improvement",
           c == V_REGRESSION ? "\u25b2 regression" : "\u25c6 improvement");
      esc(p, v->arm);
      put(p, " ");
      esc(p, metric_label(v->metric));
      put(p, " ");
      fmt_change(p, v->change_pct);
      put(p, " (");
      esc(p, v->series);
      put(p, ")</span>");
    }
  }
  put(p, "</span></div>\n");
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

static void section_runs(page *p) {
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
         "<th>Revision</th><th>Test type</th><th>Start</th><th class=\"n\">Duration</th>"
         "<th>Status</th>");
  for (int m = 0; m < PS_REPORT_NMETRICS; m++)
    putf(p, "<th class=\"n\">%s (%s)</th>", ps_report_metrics[m].label,
         ps_report_metrics[m].unit);
  put(p, "<th>Verdicts</th></tr></thead>\n<tbody>\n");
  for (size_t i = 0; i < d->nruns && !p->rc; i++) {
    const ps_rrun *r = &d->runs[i];
    putf(p, "<tr class=\"row-%s\" data-status=\"%s\"><td class=\"name run\">",
         ps_rstatus_name(r->status), ps_rstatus_name(r->status));
    esc(p, r->name);
    put(p, "</td><td class=\"name rev\">");
    esc(p, r->revision ? r->revision : "–");
    put(p, "</td><td>");
    esc(p, r->test_type ? r->test_type : "–");
    put(p, "</td><td class=\"when\">");
    fmt_time(p, r->start_ns);
    put(p, "</td><td class=\"n\">");
    fmt_duration(p, r->duration_s);
    put(p, "</td><td class=\"status\">");
    badge(p, r->status);
    if (r->text && r->status != PS_RS_SUCCESS) {
      put(p, "<span class=\"why\">");
      esc(p, r->text);
      put(p, "</span>");
    }
    put(p, "</td>");
    for (int m = 0; m < PS_REPORT_NMETRICS; m++) {
      const ps_rverdict *v = run_verdict(p, r->name, ps_report_metrics[m].field);
      int c = vcode(v);
      putf(p, "<td class=\"n%s\">", c == V_REGRESSION    ? " m-regression"
                                    : c == V_IMPROVEMENT ? " m-improvement"
                                                         : "");
      if (c == V_REGRESSION || c == V_IMPROVEMENT)
        put(p, c == V_REGRESSION ? "\u25b2\u00a0" : "\u25c6\u00a0");
      fmt_num(p, r->metric[m]);
      put(p, "</td>");
    }
    put(p, "<td class=\"verdicts\">");
    if (r->status == PS_RS_SUCCESS)
      run_verdict_summary(p, r, "<br>");
    else
      put(p, "<span class=\"v v-none\">–</span>");
    put(p, "</td></tr>\n");
  }
  put(p, "</tbody></table></div></section>\n");
}

static void section_trends(page *p) {
  const ps_report_data *d = p->d;
  if (!section_begin(p, "trends", "Across revisions", "loadgen", "Loadgen runs"))
    return;
  const char *series[MAX_SERIES];
  size_t ns = trend_series(d, series, MAX_SERIES);
  if (!ns) {
    section_empty(p, "No successful loadgen run in this range, so no trend.");
    return;
  }
  put(p, "<p class=\"key\">Each point is a successful run (x: its start, labelled by revision "
         "when there are few). <span class=\"k-reg\">\u25b2 red: regression</span> · "
         "<span class=\"k-imp\">\u25c6 green: improvement</span> · "
         "<span class=\"k-reg\">\u2715</span> on the axis: a failed, interrupted or stalled "
         "run.</p>\n");
  for (size_t s = 0; s < ns; s++) {
    int nruns = 0;
    for (size_t i = 0; i < d->nruns; i++)
      nruns += d->runs[i].status == PS_RS_SUCCESS && same(d->runs[i].test_type, series[s]);
    put(p, "<h3>");
    esc(p, series[s]);
    putf(p, " <span class=\"meta\">(%d successful run%s)</span></h3>\n<div class=\"charts\">\n",
         nruns, nruns == 1 ? "" : "s");
    for (int m = 0; m < PS_REPORT_NMETRICS; m++) {
      int have = 0;
      for (size_t i = 0; i < d->nruns && !have; i++)
        have = d->runs[i].status == PS_RS_SUCCESS && same(d->runs[i].test_type, series[s]) &&
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

static void section_stages(page *p) {
  const ps_report_data *d = p->d;
  if (!section_begin(p, "stages", "Latest run, stage against stage", "loadgen", "Loadgen runs"))
    return;
  if (!d->stage_run || (!d->nstages && !d->nblocks)) {
    section_empty(p, "No run in this range has stage data yet.");
    return;
  }
  const ps_rrun *r = ps_report_find_run((ps_report_data *)d, d->stage_run);
  put(p, "<p>Run <span class=\"name\" id=\"stage-run\">");
  esc(p, d->stage_run);
  put(p, "</span>");
  if (r) {
    put(p, " ");
    badge(p, r->status);
    put(p, " · started ");
    fmt_time(p, r->start_ns);
    put(p, " UTC");
  }
  put(p, ". Per stage: loadgen_stage_cycles (per task) and loadgen_stage_blocks "
         "(onlyLive).</p>\n<div class=\"charts\">\n");
  if (d->nstages) {
    put(p, "<figure><figcaption>Cycles per stage and task</figcaption><div class=\"chart\">"
           "<canvas data-chart=\"stage-cycles\" role=\"img\" aria-label=\"cycles per stage\">"
           "</canvas></div></figure>\n"
           "<figure><figcaption>Cycle avg duration per stage and task (s)</figcaption>"
           "<div class=\"chart\"><canvas data-chart=\"stage-duration\" role=\"img\" "
           "aria-label=\"cycle duration per stage\"></canvas></div></figure>\n");
  } else {
    put(p, "<p class=\"empty\">No cycle summaries for this run (no loadgen stage).</p>\n");
  }
  if (d->nblocks)
    put(p, "<figure><figcaption>Live blocks per stage: avg swingset time and block time (s)"
           "</figcaption><div class=\"chart\"><canvas data-chart=\"stage-blocks\" role=\"img\" "
           "aria-label=\"live block times per stage\"></canvas></div></figure>\n");
  else
    put(p, "<p class=\"empty\">No live block summaries for this run.</p>\n");
  put(p, "</div>\n<h3>Stage drift</h3>\n");
  int n = 0;
  for (size_t i = 0; i < d->nverdicts && !p->rc; i++) {
    const ps_rverdict *v = &d->verdicts[i];
    if (!v->stage || is_dss(v) || strcmp(v->run, d->stage_run) != 0)
      continue;
    if (!n++)
      put(p, "<table id=\"drift-table\"><thead><tr><th>Stage</th><th>Metric</th>"
             "<th class=\"n\">Value</th><th class=\"n\">First loadgen stage</th>"
             "<th class=\"n\">Change</th><th>Verdict</th></tr></thead><tbody>\n");
    put(p, "<tr><td>");
    esc(p, v->stage);
    put(p, "</td><td>");
    esc(p, metric_label(v->metric));
    put(p, "</td><td class=\"n\">");
    fmt_num(p, v->value);
    put(p, "</td><td class=\"n\">");
    fmt_num(p, v->baseline);
    put(p, "</td><td class=\"n\">");
    fmt_change(p, v->change_pct);
    put(p, "</td>");
    verdict_cell(p, v);
    put(p, "</tr>\n");
  }
  put(p, n ? "</tbody></table>\n"
           : "<p class=\"empty\">No stage-drift verdicts for this run.</p>\n");
  put(p, "</section>\n");
}

static void html_one_dss(page *p, size_t idx, const dss_test *t) {
  put(p, "<h4>test ");
  esc(p, t->test);
  if (t->sweep) {
    put(p, " <span class=\"meta\">sweep ");
    esc(p, t->sweep);
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
    if (!is_dss(v) || !same(v->run, t->run) || !same(v->series, t->test))
      continue;
    if (!n++)
      put(p, "<table class=\"arm-verdicts\"><thead><tr><th>Arm</th><th>Against</th>"
             "<th>Metric</th><th class=\"n\">Arm</th><th class=\"n\">Reference</th>"
             "<th class=\"n\">Change</th><th class=\"n\">Variants agreeing</th><th>Verdict</th>"
             "</tr></thead><tbody>\n");
    put(p, "<tr><td class=\"name\">");
    esc(p, v->arm);
    put(p, "</td><td class=\"name\">");
    esc(p, v->reference ? v->reference : "–");
    put(p, "</td><td>");
    esc(p, metric_label(v->metric));
    put(p, "</td><td class=\"n\">");
    fmt_num(p, v->value);
    put(p, "</td><td class=\"n\">");
    fmt_num(p, v->baseline);
    put(p, "</td><td class=\"n\">");
    fmt_change(p, v->change_pct);
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

static void section_dss(page *p) {
  const ps_report_data *d = p->d;
  if (!section_begin(p, "dss", "DSS bench", "dss_bench", "DSS bench results"))
    return;
  if (!d->ndssfiles) {
    section_empty(p, "No DSS bench results in this range.");
    return;
  }
  put(p, "<table id=\"dss-table\"><thead><tr><th>Results</th><th>Written (UTC)</th>"
         "<th>Status</th><th>Tests</th><th>Arms</th><th>Verdicts</th></tr></thead><tbody>\n");
  for (size_t f = 0; f < d->ndssfiles && !p->rc; f++) {
    const ps_rdssfile *file = &d->dssfiles[f];
    size_t begin, end;
    dss_rows(d, file->run, &begin, &end);
    names tests = {0}, arms = {0};
    for (size_t i = begin; i < end && !p->rc; i++)
      if (names_add(&tests, d->dss[i].test, by_name, NULL) ||
          names_add(&arms, d->dss[i].arm, by_name, NULL))
        p->rc = -ENOMEM;
    putf(p, "<tr class=\"row-%s\" data-status=\"%s\"><td class=\"name run\">",
         ps_rstatus_name(file->status), ps_rstatus_name(file->status));
    esc(p, file->run);
    put(p, "</td><td class=\"when\">");
    fmt_time(p, file->time_ns);
    put(p, "</td><td>");
    badge(p, file->status);
    put(p, "</td><td>");
    html_names(p, &tests, ", ");
    put(p, "</td><td class=\"name\">");
    html_names(p, &arms, "<br>");
    put(p, "</td><td>");
    int reg = 0, imp = 0, judged = 0;
    for (size_t i = 0; i < d->nverdicts; i++)
      if (is_dss(&d->verdicts[i]) && same(d->verdicts[i].run, file->run)) {
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
    put(p, "</td></tr>\n");
    free(tests.v);
    free(arms.v);
  }
  put(p, "</tbody></table>\n");
  for (size_t f = 0; f < d->ndssfiles && !p->rc; f++) {
    const ps_rdssfile *file = &d->dssfiles[f];
    /* the newest few open; the rest one click away, drawn when opened */
    put(p, f < 3 ? "<details open><summary>" : "<details><summary>");
    put(p, "<span class=\"name\">");
    esc(p, file->run);
    put(p, "</span> · ");
    fmt_time(p, file->time_ns);
    put(p, " UTC · ");
    badge(p, file->status);
    put(p, "</summary>\n");
    size_t begin, end;
    dss_rows(d, file->run, &begin, &end);
    if (begin == end)
      put(p, "<p class=\"empty\">No dss_bench points for this file in this range.</p>\n");
    for (size_t i = 0; i < p->ntests; i++)
      if (p->tests[i].file == f)
        html_one_dss(p, i, &p->tests[i]);
    put(p, "</details>\n");
  }
  put(p, "</section>\n");
}

static void section_health(page *p) {
  const ps_report_data *d = p->d;
  put(p, "<section id=\"health\"><h2>Agent health</h2>\n");
  const char *err = d->last_error ? d->last_error : d->alert_error;
  if (!d->nhealth)
    put(p, "<p class=\"health empty\">No self-metrics (measurement perfship) in this range: "
           "no agent has written to this database lately.");
  for (size_t i = 0; i < d->nhealth; i++) {
    const ps_rhealth *h = &d->health[i];
    put(p, "<p class=\"health\"><span class=\"name\">");
    esc(p, h->host);
    put(p, "</span>: last write ");
    fmt_time(p, h->time_ns);
    put(p, " UTC");
    if (h->time_ns && d->now_ns > h->time_ns) {
      put(p, " (");
      fmt_duration(p, (double)(d->now_ns - h->time_ns) / 1e9);
      put(p, " before this page)");
    }
    put(p, " · ");
    fmt_count(p, h->points_written);
    put(p, " points written · ");
    double rejected = (isnan(h->records_rejected) ? 0 : h->records_rejected) +
                      (isnan(h->points_rejected) ? 0 : h->points_rejected);
    fmt_count(p, rejected);
    put(p, " rejected lines");
    if (!isnan(h->uptime_s)) {
      put(p, " (counted over ");
      fmt_duration(p, h->uptime_s);
      put(p, " of uptime)");
    }
    if (i + 1 < d->nhealth)
      put(p, "</p>\n");
  }
  put(p, " · last error: ");
  esc(p, err ? err : "none");
  put(p, "</p>\n</section>\n");
}

/* --- the page -------------------------------------------------------------------- */

static void csp_hash(page *p, const char *text, size_t len) {
  char b64[PS_SHA256_B64_LEN + 1];
  ps_sha256_base64(text, len, b64);
  putf(p, " 'sha256-%s'", b64);
}

int ps_report_render(const ps_report_data *d, const ps_report_assets *a, ps_buf *out) {
  if (!a->chart_js || !ps_report_script_ok(a->chart_js, a->chart_js_len) ||
      !ps_report_script_ok(ps_report_page_js, ps_report_page_js_len) ||
      !ps_report_script_ok(ps_report_page_css, ps_report_page_css_len))
    return -EINVAL;
  page p = {.out = out, .d = d};
  prepare(&p);
  put(&p, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
  /* No fetch of any kind; only these two scripts and this style. The JSON
   * block is data (type application/json) and needs no allowance. */
  put(&p, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "script-src");
  csp_hash(&p, a->chart_js, a->chart_js_len);
  csp_hash(&p, ps_report_page_js, ps_report_page_js_len);
  put(&p, "; style-src");
  csp_hash(&p, ps_report_page_css, ps_report_page_css_len);
  put(&p, "; img-src data:; base-uri 'none'; form-action 'none'\">\n");
  put(&p, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"referrer\" content=\"no-referrer\">\n<title>Benchmark report · ");
  fmt_time(&p, d->now_ns);
  put(&p, " UTC</title>\n<style>");
  putn(&p, ps_report_page_css, ps_report_page_css_len);
  put(&p, "</style>\n</head>\n<body>\n<header>\n<h1>Benchmark report</h1>\n<p class=\"meta\">");
  put(&p, "Made ");
  fmt_time(&p, d->now_ns);
  put(&p, " UTC");
  if (a->database) {
    put(&p, " from InfluxDB database ");
    esc(&p, a->database);
  }
  put(&p, " · runs since ");
  fmt_time(&p, d->since_ns);
  put(&p, " UTC");
  if (d->source) {
    put(&p, " · source ");
    esc(&p, d->source);
    put(&p, " only");
  }
  put(&p, "</p>\n");
  if (d->nruns) {
    headline_run(&p, &d->runs[0], "Newest run", "headline-loadgen");
    if (d->runs[0].status == PS_RS_RUNNING)
      for (size_t i = 1; i < d->nruns; i++)
        if (d->runs[i].status != PS_RS_RUNNING && d->runs[i].status != PS_RS_UNKNOWN) {
          headline_run(&p, &d->runs[i], "Newest ended run", "headline-ended");
          break;
        }
  } else if (ps_report_shows(d, "loadgen")) {
    put(&p, "<div class=\"headline\" id=\"headline-loadgen\">No loadgen run in this range."
            "</div>\n");
  }
  headline_dss(&p);
  put(&p, "<nav><a href=\"#runs\">Runs</a><a href=\"#trends\">Across revisions</a>"
          "<a href=\"#stages\">Stage against stage</a><a href=\"#dss\">DSS bench</a>"
          "<a href=\"#health\">Agent health</a></nav>\n</header>\n<main>\n");
  section_runs(&p);
  section_trends(&p);
  section_stages(&p);
  section_dss(&p);
  section_health(&p);
  put(&p, "</main>\n<footer>Written by ");
  esc(&p, a->generator ? a->generator : "perfship");
  put(&p, " (perfship report). This file is complete by itself: it loads nothing and sends "
          "nothing. Times are UTC.</footer>\n");
  put(&p, "<script type=\"application/json\" id=\"perfship-data\">");
  json_all(&p);
  put(&p, "</script>\n<script>");
  putn(&p, a->chart_js, a->chart_js_len);
  put(&p, "</script>\n<script>");
  putn(&p, ps_report_page_js, ps_report_page_js_len);
  put(&p, "</script>\n</body>\n</html>\n");
  release(&p);
  return p.rc;
}
