/*
 * cmd/verdicts.c: `perfship verdicts`: the verdicts the agent wrote, read
 * back from the server and shown so that a person sees at a glance what
 * got worse (docs/verdicts.md).
 *
 * Design
 * - One InfluxQL query over /query (influx/client.h), every name from the
 *   command line quoted (influx/influxql.h); then sorted here: regressions
 *   first, then by the size of the change.
 * - Text from the data (run names, series, arms) is printed without control
 *   characters, so a hostile name cannot forge lines or escape sequences.
 * - Exit: 0; 64 usage; 69 the server could not be reached, refused, has
 *   no such database (or bucket mapping: the message names it), answered
 *   nothing usable, or has no InfluxQL endpoint (VictoriaMetrics).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cmd/cmd.h"
#include "core/buf.h"
#include "core/sysexits_ps.h"
#include "core/util.h"
#include "core/visible.h"
#include "influx/client.h"
#include "influx/influxql.h"
#include "report/explain.h"

#define DEFAULT_SINCE_S (7 * 86400)
/* --explain looks for the run this far back unless told */
#define EXPLAIN_SINCE_S (90 * 86400)

typedef struct row {
  const cJSON *values; /* the row, cells in column order */
  const char *verdict;
  double change_pct;
} row;

typedef struct table {
  const cJSON *columns;
  row *rows;
  size_t n;
} table;

static int usage(const char *msg) {
  if (msg)
    fprintf(stderr, "perfship verdicts: %s\n", msg);
  fputs("usage: perfship [-c FILE] verdicts [--source S] [--series NAME] [--host H]... "
        "[--since DURATION] [--json]\n"
        "       perfship [-c FILE] verdicts --explain RUN [--host H] [--since DURATION] [--json]\n"
        "  --explain RUN: why RUN got slower: the vats that moved most against the old\n"
        "    level, the BOYD share then and now, the kernel growth per cycle\n"
        "  --host H: only the verdicts of machine H (its `host` tag); repeatable\n"
        "  DURATION: a number with s, m, h, d or w (default 7d)\n",
        stderr);
  return PS_EXIT_USAGE;
}

static int column(const table *t, const char *name) {
  int i = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, t->columns) {
    if (cJSON_IsString(c) && strcmp(c->valuestring, name) == 0)
      return i;
    i++;
  }
  return -1;
}

static const cJSON *cell(const table *t, const row *r, const char *name) {
  int i = column(t, name);
  return i < 0 ? NULL : cJSON_GetArrayItem(r->values, i);
}

static const char *cell_str(const table *t, const row *r, const char *name) {
  const cJSON *c = cell(t, r, name);
  return cJSON_IsString(c) ? c->valuestring : NULL;
}

static double cell_num(const table *t, const row *r, const char *name) {
  const cJSON *c = cell(t, r, name);
  return cJSON_IsNumber(c) ? c->valuedouble : NAN;
}

static int rank(const char *verdict) {
  if (verdict && strcmp(verdict, "regression") == 0)
    return 0;
  if (verdict && strcmp(verdict, "improvement") == 0)
    return 1;
  return 2;
}

static int by_importance(const void *a, const void *b) {
  const row *x = a, *y = b;
  int rx = rank(x->verdict), ry = rank(y->verdict);
  if (rx != ry)
    return rx - ry;
  double cx = isnan(x->change_pct) ? -1 : fabs(x->change_pct);
  double cy = isnan(y->change_pct) ? -1 : fabs(y->change_pct);
  return cx < cy ? 1 : cx > cy ? -1 : 0;
}

/* Data-derived text, with controls and direction controls shown as their
 * escapes (core/visible.h: a run name cannot reorder the line), cut to
 * `width` (0: whole) and padded to it. */
static void put_clean(const char *s, int width) {
  char shown[1024];
  size_t len = ps_visible_into(shown, width ? (size_t)width + 1 : sizeof shown, s ? s : "",
                               s ? strlen(s) : 0, 0);
  fwrite(shown, 1, len, stdout);
  for (int n = (int)len; n < width; n++)
    putchar(' ');
}

static void print_table(const table *t, const char *since) {
  size_t reg = 0, imp = 0;
  for (size_t i = 0; i < t->n; i++) {
    reg += rank(t->rows[i].verdict) == 0;
    imp += rank(t->rows[i].verdict) == 1;
  }
  printf("%zu verdicts of runs since %s ago: %zu regression%s, %zu improvement%s\n", t->n, since,
         reg, reg == 1 ? "" : "s", imp, imp == 1 ? "" : "s");
  if (!t->n)
    return;
  printf("%-11s %9s  %-16s %-36s %-16s %-30s %12s %12s  %s\n", "VERDICT", "CHANGE", "HOST",
         "WHAT", "SERIES", "RUN", "VALUE", "BASELINE", "CHANGE BEGAN IN");
  for (size_t i = 0; i < t->n; i++) {
    const row *r = &t->rows[i];
    char what[256];
    const char *metric = cell_str(t, r, "metric"), *stage = cell_str(t, r, "stage"),
               *arm = cell_str(t, r, "arm");
    if (stage)
      snprintf(what, sizeof what, "%s, stage %s", metric ? metric : "?", stage);
    else if (arm)
      snprintf(what, sizeof what, "%s, arm %s", metric ? metric : "?", arm);
    else
      snprintf(what, sizeof what, "%s", metric ? metric : "?");
    char change[16] = "";
    if (!isnan(r->change_pct))
      snprintf(change, sizeof change, "%+.1f %%", r->change_pct);
    printf("%-11s %9s  ", r->verdict ? r->verdict : "?", change);
    /* one run name can be on several machines: the host tells them apart */
    const char *host = cell_str(t, r, "host");
    put_clean(host && host[0] ? host : "-", 16);
    putchar(' ');
    put_clean(what, 36);
    putchar(' ');
    put_clean(cell_str(t, r, "series"), 16);
    putchar(' ');
    const char *run = cell_str(t, r, "run"), *began = cell_str(t, r, "change_run");
    put_clean(run, 30);
    printf(" %12.6g %12.6g  ", cell_num(t, r, "value"), cell_num(t, r, "baseline"));
    if (began && run && strcmp(began, run) != 0)
      put_clean(began, 0);
    else if (cell_str(t, r, "arm"))
      put_clean(cell_str(t, r, "reference"), 0); /* DSS: against this arm */
    putchar('\n');
  }
}

static void print_json(const table *t) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < t->n; i++) {
    cJSON *o = cJSON_CreateObject();
    int k = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, t->columns) {
      const cJSON *v = cJSON_GetArrayItem(t->rows[i].values, k++);
      if (!cJSON_IsString(c) || !v || cJSON_IsNull(v))
        continue;
      if (strcmp(c->valuestring, "time") == 0 && cJSON_IsNumber(v)) {
        char when[32];
        time_t s = (time_t)(v->valuedouble / 1e9);
        struct tm tm;
        gmtime_r(&s, &tm);
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        cJSON_AddStringToObject(o, "time", when);
      } else {
        cJSON_AddItemToObject(o, c->valuestring, cJSON_Duplicate(v, 0));
      }
    }
    cJSON_AddItemToArray(arr, o);
  }
  char *text = cJSON_Print(arr);
  if (text)
    puts(text);
  free(text);
  cJSON_Delete(arr);
}

static void explain_json(const ps_explain_data *d) {
  const ps_explanation *e = &d->e;
  cJSON *o = cJSON_CreateObject(), *vats = cJSON_CreateArray(), *g = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "run", d->run);
  cJSON_AddStringToObject(o, "host", d->host ? d->host : "");
  cJSON_AddStringToObject(o, "series", d->series ? d->series : "");
  if (d->regressed)
    cJSON_AddStringToObject(o, "regression", d->regressed);
  if (d->change_run)
    cJSON_AddStringToObject(o, "change_run", d->change_run);
  cJSON_AddNumberToObject(o, "old_runs", (double)e->old_runs);
  for (size_t i = 0; i < e->ntop; i++) {
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "vat", e->top[i].vat);
    cJSON_AddStringToObject(v, "name", e->top[i].name);
    cJSON_AddNumberToObject(v, "then", e->top[i].then);
    cJSON_AddNumberToObject(v, "now", e->top[i].now);
    cJSON_AddNumberToObject(v, "change", e->top[i].now - e->top[i].then);
    cJSON_AddItemToArray(vats, v);
  }
  cJSON_AddItemToObject(o, "vats", vats);
  if (isfinite(e->boyd_then))
    cJSON_AddNumberToObject(o, "boydShareThen", e->boyd_then);
  if (isfinite(e->boyd_now))
    cJSON_AddNumberToObject(o, "boydShareNow", e->boyd_now);
  for (int i = 0; i < PS_GROWTH_NFIGURES; i++)
    if (isfinite(e->growth[i]))
      cJSON_AddNumberToObject(g, ps_growth_figure((ps_growth_figure_id)i)->name, e->growth[i]);
  cJSON_AddItemToObject(o, "growth", g);
  char *text = cJSON_Print(o);
  if (text)
    puts(text);
  free(text);
  cJSON_Delete(o);
}

/* `--explain RUN`: its cause, read back (report/explain.h). */
static int explain(ps_config *cfg, const char *run, const char *host, int64_t since_s,
                   int json) {
  ps_explain_data d;
  ps_buf err, text;
  ps_buf_init(&err, 2048);
  ps_buf_init(&text, 0);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  ps_explain_data_init(&d, run, host, since_s * 1000000000LL,
                       (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
  int rc = ps_explain_query(cfg, &d, &err);
  if (rc == -ENOENT) {
    fprintf(stderr, "perfship verdicts: no loadgen run ");
    put_clean(run, 0);
    fprintf(stderr, " in the last %" PRId64 " s\n", since_s);
    rc = PS_EXIT_UNAVAILABLE;
  } else if (rc < 0) {
    fprintf(stderr, "perfship verdicts: %s\n", err.data ? err.data : strerror(-rc));
    rc = PS_EXIT_UNAVAILABLE;
  } else if (json) {
    explain_json(&d);
    rc = PS_EXIT_OK;
  } else {
    put_clean(d.run, 0);
    fputs(" on ", stdout);
    put_clean(d.host ? d.host : "?", 0);
    fputs(" (series ", stdout);
    put_clean(d.series ? d.series : "?", 0);
    fputs("): ", stdout);
    if (d.regressed) {
      fputs("regression of ", stdout);
      put_clean(d.regressed, 0);
      if (d.change_run && strcmp(d.change_run, d.run) != 0) {
        fputs(", the change began in ", stdout);
        put_clean(d.change_run, 0);
      }
    } else {
      fputs("no regression of its time in the chain; against the runs before it", stdout);
    }
    putchar('\n');
    rc = ps_explain_text(&d.e, &text) < 0 ? PS_EXIT_SOFTWARE : PS_EXIT_OK;
    /* line by line: a vat's name is shown with its controls escaped */
    for (char *line = text.data, *nl; rc == PS_EXIT_OK && line && *line; line = nl ? nl + 1 : NULL) {
      nl = strchr(line, '\n');
      if (nl)
        *nl = '\0';
      put_clean(line, 0);
      putchar('\n');
    }
    if (rc == PS_EXIT_OK && fflush(stdout) != 0)
      rc = PS_EXIT_SOFTWARE;
  }
  ps_explain_data_free(&d);
  ps_buf_free(&err);
  ps_buf_free(&text);
  return rc;
}

int ps_cmd_verdicts(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)cfg_given;
  const char *explain_run = NULL;
  const char *source = NULL, *series = NULL, *since = "7d";
  const char **hosts = calloc((size_t)(argc > 0 ? argc : 1), sizeof *hosts);
  size_t nhosts = 0;
  if (!hosts) {
    fprintf(stderr, "perfship verdicts: out of memory\n");
    return PS_EXIT_SOFTWARE;
  }
  int64_t since_s = DEFAULT_SINCE_S;
  int json = 0, since_given = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (!strcmp(a, "--json")) {
      json = 1;
    } else if (!strcmp(a, "--explain") && has_value) {
      explain_run = argv[++i];
    } else if (!strcmp(a, "--source") && has_value) {
      source = argv[++i];
    } else if (!strcmp(a, "--series") && has_value) {
      series = argv[++i];
    } else if (!strcmp(a, "--host") && has_value) {
      hosts[nhosts++] = argv[++i];
    } else if (!strcmp(a, "--since") && has_value) {
      since = argv[++i];
      since_given = 1;
      if (ps_parse_duration_s(since, &since_s) < 0) {
        free(hosts);
        return usage("--since: not a duration (examples: 36h, 7d, 2w)");
      }
    } else {
      free(hosts);
      return usage(a[0] == '-' ? "unknown option or missing value" : "unexpected operand");
    }
  }
  int rc = ps_cmd_load_secrets(cfg);
  if (rc != PS_EXIT_OK) {
    free(hosts);
    return rc;
  }
  if (explain_run) {
    if (nhosts > 1 || source || series) {
      free(hosts);
      return usage("--explain takes one --host at most, and no --source or --series");
    }
    rc = explain(cfg, explain_run, nhosts ? hosts[0] : NULL,
                 since_given ? since_s : EXPLAIN_SINCE_S, json);
    free(hosts);
    return rc;
  }
  ps_buf q, answer, err;
  ps_buf_init(&q, 0);
  ps_buf_init(&answer, PS_INFLUX_QUERY_MAX_BYTES);
  ps_buf_init(&err, 2048);
  int ok = ps_buf_printf(&q, "SELECT * FROM \"perfship_verdict\" WHERE time > now() - %" PRId64
                             "s",
                         since_s) == 0;
  if (ok && source)
    ok = ps_buf_puts(&q, " AND \"source\" = ") == 0 && ps_influxql_quote_string(&q, source) == 0;
  if (ok && series)
    ok = ps_buf_puts(&q, " AND \"series\" = ") == 0 && ps_influxql_quote_string(&q, series) == 0;
  for (size_t h = 0; ok && h < nhosts; h++)
    ok = ps_buf_puts(&q, h ? " OR \"host\" = " : " AND (\"host\" = ") == 0 &&
         ps_influxql_quote_string(&q, hosts[h]) == 0 &&
         (h + 1 < nhosts || ps_buf_putc(&q, ')') == 0);
  if (!ok) {
    fprintf(stderr, "perfship verdicts: a name holds a character InfluxQL cannot carry\n");
    rc = PS_EXIT_USAGE;
    goto out;
  }
  int qrc = ps_influx_query(cfg, q.data, &answer, &err);
  if (qrc < 0) { /* a missing database too: "0 verdicts" would hide it */
    fprintf(stderr, "perfship verdicts: %s\n", err.data ? err.data : strerror(-qrc));
    rc = PS_EXIT_UNAVAILABLE;
    goto out;
  }
  cJSON *root = cJSON_Parse(answer.data);
  const cJSON *s0 = cJSON_GetArrayItem(
      cJSON_GetObjectItemCaseSensitive(
          cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "results"), 0), "series"),
      0);
  table t = {cJSON_GetObjectItemCaseSensitive(s0, "columns"), NULL, 0};
  const cJSON *values = cJSON_GetObjectItemCaseSensitive(s0, "values");
  size_t n = (size_t)cJSON_GetArraySize(values);
  t.rows = calloc(n ? n : 1, sizeof *t.rows);
  const cJSON *v, *list = t.rows ? values : NULL;
  cJSON_ArrayForEach(v, list) {
    row *r = &t.rows[t.n++];
    r->values = v;
    r->verdict = cell_str(&t, r, "verdict");
    r->change_pct = cell_num(&t, r, "change_pct");
  }
  qsort(t.rows, t.n, sizeof *t.rows, by_importance);
  if (json)
    print_json(&t);
  else
    print_table(&t, since);
  rc = fflush(stdout) == 0 ? PS_EXIT_OK : PS_EXIT_SOFTWARE;
  free(t.rows);
  cJSON_Delete(root);
out:
  free(hosts);
  ps_buf_free(&q);
  ps_buf_free(&answer);
  ps_buf_free(&err);
  return rc;
}
