/*
 * cmd/verdicts.c: `perfship verdicts`: the verdicts the agent wrote, read
 * back from the server and shown so that a person sees at a glance what
 * got worse (docs/verdicts.md).
 *
 * Design
 * - One InfluxQL query over /query (influx/client.h), every name from the
 *   command line quoted (readback/statement.h); then sorted here: regressions
 *   first, then by the size of the change.
 * - Text from the data (run names, series, arms) is printed without control
 *   characters, so a hostile name cannot forge lines or escape sequences.
 * - --format junit|markdown hand the rows to cmd/verdicts_format.h; the
 *   output is written whole before the exit code is decided, so a CI job
 *   that fails still has its report to attach.
 * - Triage decisions (verdict/triage.h, read from the server's
 *   perfship_triage points and the triage_file by readback/triage.h,
 *   as the agent reads them) mark each row: an
 *   acknowledged change and an excluded run say by whom, when and why
 *   under their row (and in --json as "acknowledged"/"excluded"); a bad
 *   file line is reported as FILE:LINE and left out. Decisions that cannot
 *   be read are said and the verdicts shown without them, except for
 *   --fail-on unacknowledged: a gate that cannot know must not pass (69).
 * - Exit: 0; 3 (--fail-on) a verdict of that kind is in range; 64 usage;
 *   69 the server could not be reached, refused, has no such database (or
 *   bucket mapping: the message names it), answered nothing usable, or has
 *   no InfluxQL endpoint (VictoriaMetrics). 3 is not 1, which a sanitizer
 *   or a crashed shell step would also give, so a gate that failed is
 *   never mistaken for a broken one (docs/verdicts.md, "In CI").
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
#include "cmd/verdicts_format.h"
#include "core/buf.h"
#include "core/figures.h"
#include "core/sysexits_ps.h"
#include "core/util.h"
#include "core/visible.h"
#include "influx/client.h"
#include "readback/query.h"
#include "readback/answer.h"
#include "readback/statement.h"
#include "readback/triage.h"
#include "verdict/triage.h"

#define DEFAULT_SINCE_S (7 * 86400)
/* --explain looks for the run this far back unless told */
#define EXPLAIN_SINCE_S (90 * 86400)
/* --explain looks for the run this far back unless told */
#define EXPLAIN_SINCE_S (90 * 86400)

typedef struct row {
  ps_rb_row cells; /* the answer's row (readback/answer.h) */
  const char *verdict;
  double change_pct; /* NaN for a count per cycle: a percent of 0 or of a limit says nothing */
  int per_cycle;     /* a kernel growth figure: its change is told in counts per cycle */
  int no_compare;    /* excluded, baseline: no baseline, no change */
  const ps_triage_decision *ack;      /* the change is acknowledged */
  const ps_triage_decision *excluded; /* the run is kept out of judging */
  const ps_triage_decision *baseline; /* the series starts anew at its change_run */
} row;

typedef struct table {
  row *rows;
  size_t n;
} table;

static int usage(const char *msg) {
  if (msg)
    fprintf(stderr, "perfship verdicts: %s\n", msg);
  fputs("usage: perfship [-c FILE] verdicts [--source S] [--series NAME] [--host H]... "
        "[--since DURATION] [--format text|json|junit|markdown] [--json] [--all]\n"
        "       [--fail-on regression|unacknowledged]\n"
        "       perfship [-c FILE] verdicts --candidate RUN --against SERIES [--host H] [--json]\n"
        "       perfship [-c FILE] verdicts --explain RUN [--host H] [--since DURATION] [--json]\n"
        "  --explain RUN: why RUN got slower: the vats that moved most against the old\n"
        "    level, the BOYD share then and now, the kernel growth per cycle\n"
        "  --all: list the verdicts without change too (text; counted otherwise)\n"
        "  --host H: only the verdicts of machine H (its `host` tag); repeatable\n"
        "  --candidate RUN --against SERIES: judge RUN now against the current level of SERIES\n"
        "  DURATION: a number with s, m, h, d or w (default 7d)\n"
        "  --fail-on regression: exit 3 when a regression is in range (after the output);\n"
        "  unacknowledged: when one nobody acknowledged (perfship_triage, triage_file) is\n",
        stderr);
  return PS_EXIT_USAGE;
}

static const cJSON *cell(const table *t, const row *r, const char *name) {
  (void)t;
  return ps_rb_cell(&r->cells, name);
}

static const char *cell_str(const table *t, const row *r, const char *name) {
  (void)t;
  return ps_rb_str(&r->cells, name);
}

static double cell_num(const table *t, const row *r, const char *name) {
  (void)t;
  return ps_rb_num(&r->cells, name);
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

/* A regression's revision range, on a line of its own under it, with the
 * verdicts.compare_url link (docs/verdicts.md, "The revision range"). */
static void put_range(const table *t, const row *r, const char *tmpl) {
  const char *good = cell_str(t, r, "good_revision"), *bad = cell_str(t, r, "bad_revision");
  if (!good || !bad || !good[0] || !bad[0])
    return; /* "" is written for no range (docs/schema.md) */
  fputs("            revisions ", stdout);
  ps_visible_put(stdout, good, 0);
  fputs("..", stdout);
  ps_visible_put(stdout, bad, 0);
  ps_buf link;
  ps_buf_init(&link, 0);
  if (ps_compare_url(&link, tmpl, good, bad) == 0) {
    putchar(' ');
    ps_visible_put(stdout, link.data, 0);
  }
  ps_buf_free(&link);
  putchar('\n');
}

/* What a benchmarker report's steps say beside its verdict, on a line of
 * its own (docs/verdicts.md "Benchmarker: across releases"). */
static const char *note_of(const table *t, const row *r) {
  const char *note = cell_str(t, r, "note");
  return note && note[0] ? note : NULL;
}

static void put_note(const table *t, const row *r) {
  if (!note_of(t, r))
    return;
  fputs("            ", stdout);
  ps_visible_put(stdout, note_of(t, r), 0);
  putchar('\n');
}

static void when_text(int64_t ns, char out[24]) {
  time_t s = (time_t)(ns / 1000000000);
  struct tm tm;
  if (ns <= 0 || !gmtime_r(&s, &tm))
    snprintf(out, 24, "(no time)");
  else
    strftime(out, 24, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The decision under its row: "    acknowledged by ann at ...: why <ticket>". */
static void print_decision(const char *what, const ps_triage_decision *d) {
  char when[24];
  when_text(d->when_ns, when);
  printf("    %s by ", what);
  ps_visible_put(stdout, d->who ? d->who : "?", 0);
  printf(" at %s: ", when);
  ps_visible_put(stdout, d->reason, 0);
  if (d->ticket) {
    fputs(" <", stdout);
    ps_visible_put(stdout, d->ticket, 0);
    putchar('>');
  }
  fputs(" [", stdout);
  ps_visible_put(stdout, d->id, 0);
  fputs("]\n", stdout);
}

static cJSON *decision_json(const ps_triage_decision *d) {
  cJSON *o = cJSON_CreateObject();
  char when[24];
  when_text(d->when_ns, when);
  cJSON_AddStringToObject(o, "id", d->id);
  cJSON_AddStringToObject(o, "who", d->who ? d->who : "");
  cJSON_AddStringToObject(o, "when", when);
  cJSON_AddStringToObject(o, "reason", d->reason ? d->reason : "");
  if (d->ticket)
    cJSON_AddStringToObject(o, "ticket", d->ticket);
  return o;
}

static int is_none(const row *r) { return r->verdict && strcmp(r->verdict, "none") == 0; }

/* `all` 0: the `none` rows are counted, not listed (a night's 40 and more
 * unchanged figures would bury its one regression). */
static void print_table(const table *t, const char *since, const char *link_tmpl, int all) {
  size_t reg = 0, imp = 0, none = 0;
  for (size_t i = 0; i < t->n; i++) {
    reg += rank(t->rows[i].verdict) == 0;
    imp += rank(t->rows[i].verdict) == 1;
    none += is_none(&t->rows[i]);
  }
  size_t acked = 0, noted = 0; /* a `none` with a note is listed: it says something */
  for (size_t i = 0; i < t->n; i++) {
    acked += rank(t->rows[i].verdict) < 2 && t->rows[i].ack;
    noted += is_none(&t->rows[i]) && note_of(t, &t->rows[i]);
  }
  printf("%zu verdicts of runs since %s ago: %zu regression%s, %zu improvement%s", t->n, since, reg,
         reg == 1 ? "" : "s", imp, imp == 1 ? "" : "s");
  if (acked)
    printf(" (%zu acknowledged)", acked);
  printf(", %zu without change\n", none);
  if (!all && none > noted)
    printf("(the %zu without change are not listed: --all lists them)\n", none - noted);
  if (t->n == (all ? 0 : none - noted))
    return;
  printf("%-11s %9s  %-16s %-44s %-16s %-30s %12s %12s  %s\n", "VERDICT", "CHANGE", "HOST", "WHAT",
         "SERIES", "RUN", "VALUE", "BASELINE", "CHANGE BEGAN IN");
  for (size_t i = 0; i < t->n; i++) {
    const row *r = &t->rows[i];
    if (!all && is_none(r) && !note_of(t, r))
      continue;
    char what[256];
    const char *metric = cell_str(t, r, "metric"), *stage = cell_str(t, r, "stage"),
               *arm = cell_str(t, r, "arm"), *vat = cell_str(t, r, "vat");
    if (stage && vat && vat[0]) /* a vat's figure in stage drift */
      snprintf(what, sizeof what, "%s %s, stage %s", metric ? metric : "?", vat, stage);
    else if (stage)
      snprintf(what, sizeof what, "%s, stage %s", metric ? metric : "?", stage);
    else if (arm)
      snprintf(what, sizeof what, "%s, arm %s", metric ? metric : "?", arm);
    else
      snprintf(what, sizeof what, "%s", metric ? metric : "?");
    char change[24] = "";
    const char *method = cell_str(t, r, "method");
    double value = cell_num(t, r, "value");
    double baseline = r->no_compare ? NAN : cell_num(t, r, "baseline");
    if (r->per_cycle && method && strcmp(method, "limit") == 0)
      snprintf(change, sizeof change, "%s", value > baseline ? "> limit" : "<= limit");
    else if (r->per_cycle && !isnan(value) && !isnan(baseline))
      snprintf(change, sizeof change, "%+.3g/cyc", value - baseline);
    else if (!isnan(r->change_pct))
      snprintf(change, sizeof change, "%+.1f %%", r->change_pct);
    ps_visible_put(stdout, r->verdict ? r->verdict : "?", 11);
    printf(" %9s  ", change);
    /* one run name can be on several machines: the host tells them apart */
    const char *host = cell_str(t, r, "host");
    ps_visible_put(stdout, host && host[0] ? host : "-", 16);
    putchar(' ');
    ps_visible_put(stdout, what, 44);
    putchar(' ');
    ps_visible_put(stdout, cell_str(t, r, "series"), 16);
    putchar(' ');
    const char *run = cell_str(t, r, "run"), *began = cell_str(t, r, "change_run");
    ps_visible_put(stdout, run, 30);
    printf(" %12.6g %12.6g  ", value, baseline);
    if (began && run && strcmp(began, run) != 0)
      ps_visible_put(stdout, began, 0);
    else if (cell_str(t, r, "arm"))
      ps_visible_put(stdout, cell_str(t, r, "reference"), 0); /* DSS: against this arm */
    else if (cell_str(t, r, "against")) {
      fputs("against ", stdout);
      ps_visible_put(stdout, cell_str(t, r, "against"), 0); /* a candidate: that series' level */
    }
    putchar('\n');
    put_range(t, r, link_tmpl);
    put_note(t, r);
    if (r->excluded)
      print_decision("excluded", r->excluded);
    else if (r->baseline)
      print_decision("new baseline", r->baseline);
    else if (r->ack && rank(r->verdict) < 2)
      print_decision("acknowledged", r->ack);
  }
}

static void print_json(const table *t, const char *link_tmpl) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < t->n; i++) {
    cJSON *o = cJSON_CreateObject();
    int k = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, t->rows[i].cells.columns) {
      const cJSON *v = cJSON_GetArrayItem(t->rows[i].cells.values, k++);
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
    ps_buf link;
    ps_buf_init(&link, 0);
    if (ps_compare_url(&link, link_tmpl, cell_str(t, &t->rows[i], "good_revision"),
                       cell_str(t, &t->rows[i], "bad_revision")) == 0)
      cJSON_AddStringToObject(o, "compare_url", link.data);
    ps_buf_free(&link);
    if (t->rows[i].ack && rank(t->rows[i].verdict) < 2)
      cJSON_AddItemToObject(o, "acknowledged", decision_json(t->rows[i].ack));
    if (t->rows[i].excluded)
      cJSON_AddItemToObject(o, "excluded", decision_json(t->rows[i].excluded));
    if (t->rows[i].baseline)
      cJSON_AddItemToObject(o, "baseline_decision", decision_json(t->rows[i].baseline));
    cJSON_AddItemToArray(arr, o);
  }
  ps_cmd_print_json(arr);
  cJSON_Delete(arr);
}

enum format { FORMAT_TEXT, FORMAT_JSON, FORMAT_JUNIT, FORMAT_MARKDOWN };

/* The rows as the formatters take them; NULL when out of memory. */
static ps_verdict_row *format_rows(const table *t) {
  ps_verdict_row *out = calloc(t->n ? t->n : 1, sizeof *out);
  for (size_t i = 0; out && i < t->n; i++) {
    const row *r = &t->rows[i];
    const cJSON *when = cell(t, r, "time");
    out[i] = (ps_verdict_row){
        .verdict = r->verdict,
        .host = cell_str(t, r, "host"),
        .source = cell_str(t, r, "source"),
        .series = cell_str(t, r, "series"),
        .metric = cell_str(t, r, "metric"),
        .stage = cell_str(t, r, "stage"),
        .vat = cell_str(t, r, "vat"),
        .arm = cell_str(t, r, "arm"),
        .reference = cell_str(t, r, "reference"),
        .run = cell_str(t, r, "run"),
        .change_run = cell_str(t, r, "change_run"),
        .revision = cell_str(t, r, "revision"),
        .method = cell_str(t, r, "method"),
        .note = note_of(t, r),
        .value = cell_num(t, r, "value"),
        .baseline = cell_num(t, r, "baseline"),
        .change_pct = r->change_pct,
        .time_s = cJSON_IsNumber(when) ? when->valuedouble / 1e9 : NAN,
        .acknowledged = r->ack != NULL,
        .ack_who = r->ack ? r->ack->who : NULL,
        .ack_reason = r->ack ? r->ack->reason : NULL,
        .ack_ticket = r->ack ? r->ack->ticket : NULL,
    };
  }
  return out;
}

static int print_formatted(const table *t, enum format format, const char *since) {
  ps_verdict_row *rows = format_rows(t);
  ps_buf out;
  ps_buf_init(&out, 0);
  int rc = rows ? 0 : -ENOMEM;
  if (rc == 0)
    rc = format == FORMAT_JUNIT ? ps_verdicts_junit(&out, rows, t->n, since)
                                : ps_verdicts_markdown(&out, rows, t->n, since);
  if (rc == 0 && out.len && fwrite(out.data, 1, out.len, stdout) != out.len)
    rc = -EIO;
  free(rows);
  ps_buf_free(&out);
  return rc;
}

/* The decisions in force: the server's, then the file's. -1 when the server
 * could not answer or the file cannot be read (said on stderr), else 0. */
static int load_triage(const ps_config *cfg, ps_triage_set *set) {
  ps_buf err;
  ps_buf_init(&err, 2048);
  int rc = ps_rb_triage_read_server(cfg, set, &err) < 0 ||
                   ps_rb_triage_read_file(cfg, set, ps_cmd_triage_bad_line, NULL, &err) < 0
               ? -1
               : 0;
  if (rc == 0)
    ps_cmd_triage_checks("verdicts", set, NULL);
  if (rc < 0)
    ps_visible_say(stderr, "perfship verdicts: the triage decisions cannot be read (%s)\n",
                   err.len ? err.data : "?");
  ps_buf_free(&err);
  return rc;
}

static int parse_format(const char *s, enum format *f) {
  static const char *const names[] = {"text", "json", "junit", "markdown"};
  for (int i = 0; i < 4; i++)
    if (strcmp(s, names[i]) == 0) {
      *f = (enum format)i;
      return 0;
    }
  return -1;
}

/* InfluxQL has no escape for a carriage return (influx/influxql.h): the
 * option that holds one is said before anything is asked, as a usage
 * error, whichever read would have carried it. */
static int cannot_carry(const char *option, const char *value) {
  if (!value || !strchr(value, '\r'))
    return 0;
  fprintf(stderr,
          "perfship verdicts: %s: a name holds a character InfluxQL cannot carry "
          "(\\r, a carriage return)\n",
          option);
  return 1;
}

/* What the command line asks. */
typedef struct opts {
  const char *source, *series, *since, *candidate, *against, *explain_run;
  const char **hosts; /* --host, repeatable */
  size_t nhosts;
  int64_t since_s;
  enum format format;
  int fail_on_regression, fail_on_unacked, since_given, all;
} opts;

/* Reads the command line into `o`: PS_EXIT_OK, or the usage status (said). */
static int parse_args(int argc, char **argv, opts *o) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (!strcmp(a, "--json")) {
      o->format = FORMAT_JSON;
    } else if (!strcmp(a, "--all")) {
      o->all = 1;
    } else if (!strcmp(a, "--format") && has_value) {
      if (parse_format(argv[++i], &o->format) < 0)
        return usage("--format: text, json, junit or markdown");
    } else if (!strcmp(a, "--fail-on") && has_value) {
      const char *what = argv[++i];
      if (strcmp(what, "regression") == 0)
        o->fail_on_regression = 1;
      else if (strcmp(what, "unacknowledged") == 0)
        o->fail_on_unacked = 1;
      else
        return usage("--fail-on: regression or unacknowledged");
    } else if (!strcmp(a, "--explain") && has_value) {
      o->explain_run = argv[++i];
    } else if (!strcmp(a, "--source") && has_value) {
      o->source = argv[++i];
    } else if (!strcmp(a, "--candidate") && has_value) {
      o->candidate = argv[++i];
    } else if (!strcmp(a, "--against") && has_value) {
      o->against = argv[++i];
    } else if (!strcmp(a, "--series") && has_value) {
      o->series = argv[++i];
    } else if (!strcmp(a, "--host") && has_value) {
      o->hosts[o->nhosts++] = argv[++i];
    } else if (!strcmp(a, "--since") && has_value) {
      o->since = argv[++i];
      o->since_given = 1;
      if (ps_parse_duration_s(o->since, &o->since_s) < 0)
        return usage("--since: not a duration (examples: 36h, 7d, 2w)");
    } else {
      return usage(a[0] == '-' ? "unknown option or missing value" : "unexpected operand");
    }
  }
  return PS_EXIT_OK;
}

/* The options that go together, and names a query can carry. */
static int check_args(const opts *o) {
  if (!o->candidate != !o->against || (o->candidate && o->nhosts > 1))
    return usage("--candidate and --against go together (with at most one --host)");
  if (o->explain_run && (o->nhosts > 1 || o->source || o->series || o->candidate))
    return usage("--explain takes one --host at most, and no --source, --series or --candidate");
  int bad_name = cannot_carry("--candidate", o->candidate) ||
                 cannot_carry("--against", o->against) ||
                 cannot_carry("--explain", o->explain_run) || cannot_carry("--source", o->source) ||
                 cannot_carry("--series", o->series);
  for (size_t h = 0; h < o->nhosts && !bad_name; h++)
    bad_name = cannot_carry("--host", o->hosts[h]);
  return bad_name ? PS_EXIT_USAGE : PS_EXIT_OK;
}

/* The query of the verdicts in range; 0, or -1 when it cannot be written. */
static int verdicts_query(ps_buf *q, const opts *o) {
  int ok = ps_buf_printf(q, "SELECT * FROM \"perfship_verdict\" WHERE time > now() - %" PRId64 "s",
                         o->since_s) == 0;
  if (ok && o->source)
    ok = ps_rb_tag_is(q, "source", o->source) == 0;
  if (ok && o->series)
    ok = ps_rb_tag_is(q, "series", o->series) == 0;
  for (size_t h = 0; ok && h < o->nhosts; h++)
    ok = ps_buf_puts(q, h ? " OR \"host\" = " : " AND (\"host\" = ") == 0 &&
         ps_rb_string(q, o->hosts[h]) == 0 && (h + 1 < o->nhosts || ps_buf_putc(q, ')') == 0);
  return ok ? 0 : -1;
}

/* The answer's rows (at most `n`) into `t`, each marked by the decisions
 * in force. */
static void read_rows(table *t, ps_rb_answer *a, size_t n, const ps_triage_set *triage) {
  for (const ps_rb_row *v; t->rows && t->n < n && (v = ps_rb_answer_next(a));) {
    row *r = &t->rows[t->n++];
    r->cells = *v;
    r->verdict = cell_str(t, r, "verdict");
    const ps_figure *fig = ps_figure_find(cell_str(t, r, "metric"));
    r->per_cycle = fig && fig->scope == PS_FIG_GROWTH;
    /* an excluded run or a new baseline compares with nothing: what the
     * point still holds of an earlier judgement is not its (docs/schema.md) */
    r->no_compare = r->verdict &&
                    (strcmp(r->verdict, "excluded") == 0 || strcmp(r->verdict, "baseline") == 0);
    r->change_pct = r->per_cycle || r->no_compare ? NAN : cell_num(t, r, "change_pct");
    const char *host = cell_str(t, r, "host"), *run = cell_str(t, r, "run");
    r->ack = ps_triage_ack_of(triage, host, run, cell_str(t, r, "change_run"),
                              cell_str(t, r, "metric"));
    r->excluded = ps_triage_excluded(triage, host, run);
    if (r->verdict && strcmp(r->verdict, "baseline") == 0)
      r->baseline = ps_triage_baseline_of(triage, host, cell_str(t, r, "change_run"));
  }
}

/* Prints the table as asked, whole, then decides the exit status (the
 * --fail-on gate). */
static int show(const table *t, const opts *o, const ps_config *cfg) {
  int prc = 0;
  if (o->format == FORMAT_JSON)
    print_json(t, cfg->verdicts.compare_url);
  else if (o->format == FORMAT_TEXT)
    print_table(t, o->since, cfg->verdicts.compare_url, o->all);
  else
    prc = print_formatted(t, o->format, o->since);
  int rc = prc == 0 && fflush(stdout) == 0 ? PS_EXIT_OK : PS_EXIT_SOFTWARE;
  if (prc < 0)
    fprintf(stderr, "perfship verdicts: %s\n", strerror(-prc));
  size_t failing = 0;
  for (size_t i = 0; (o->fail_on_regression || o->fail_on_unacked) && i < t->n; i++)
    /* a run kept out by decision is known too, until the agent rewrites it */
    failing += rank(t->rows[i].verdict) == 0 &&
               (o->fail_on_regression || (!t->rows[i].ack && !t->rows[i].excluded));
  if (rc == PS_EXIT_OK && failing) {
    fprintf(stderr, "perfship verdicts: %zu %sregression%s in range (--fail-on %s)\n", failing,
            o->fail_on_regression ? "" : "unacknowledged ", failing == 1 ? "" : "s",
            o->fail_on_regression ? "regression" : "unacknowledged");
    rc = PS_EXIT_GATE;
  }
  return rc;
}

/* The verdicts in range read back, marked by the decisions and shown. */
static int list_verdicts(const ps_config *cfg, const opts *o) {
  int rc;
  ps_buf q, answer, err;
  ps_buf_init(&q, 0);
  ps_buf_init(&answer, PS_INFLUX_QUERY_MAX_BYTES);
  ps_buf_init(&err, 2048);
  if (verdicts_query(&q, o) < 0) {
    fprintf(stderr, "perfship verdicts: a name holds a character InfluxQL cannot carry "
                    "(\\r, a carriage return)\n");
    rc = PS_EXIT_USAGE;
    goto out;
  }
  int qrc = ps_rb_query(cfg, q.data, &answer, &err);
  if (qrc < 0) { /* a missing database too: "0 verdicts" would hide it */
    ps_visible_say(stderr, "perfship verdicts: %s\n", err.data ? err.data : strerror(-qrc));
    rc = PS_EXIT_UNAVAILABLE;
    goto out;
  }
  ps_rb_answer rows_read;
  size_t n = 0;
  table t = {NULL, 0};
  if (ps_rb_answer_parse(&rows_read, answer.data, answer.len) == 0) {
    while (ps_rb_answer_next(&rows_read))
      n++;
    ps_rb_answer_rewind(&rows_read);
    t.rows = calloc(n ? n : 1, sizeof *t.rows);
  }
  ps_triage_set triage;
  ps_triage_set_init(&triage);
  if (load_triage(cfg, &triage) < 0) {
    if (o->fail_on_unacked) { /* a gate that cannot know must not pass */
      rc = PS_EXIT_UNAVAILABLE;
      goto done;
    }
    fprintf(stderr, "perfship verdicts: shown without the triage decisions\n");
  }
  read_rows(&t, &rows_read, n, &triage);
  qsort(t.rows, t.n, sizeof *t.rows, by_importance);
  rc = show(&t, o, cfg);
done:
  ps_triage_set_free(&triage);
  free(t.rows);
  ps_rb_answer_free(&rows_read);
out:
  ps_buf_free(&q);
  ps_buf_free(&answer);
  ps_buf_free(&err);
  return rc;
}

int ps_cmd_verdicts(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)cfg_given;
  opts o = {.since = "7d", .since_s = DEFAULT_SINCE_S, .format = FORMAT_TEXT};
  o.hosts = calloc((size_t)(argc > 0 ? argc : 1), sizeof *o.hosts);
  if (!o.hosts) {
    fprintf(stderr, "perfship verdicts: out of memory\n");
    return PS_EXIT_SOFTWARE;
  }
  int rc = parse_args(argc, argv, &o);
  if (rc == PS_EXIT_OK)
    rc = check_args(&o);
  if (rc == PS_EXIT_OK)
    rc = ps_cmd_load_secrets(cfg);
  if (rc == PS_EXIT_OK && o.explain_run)
    rc = ps_cmd_verdicts_explain(cfg, o.explain_run, o.nhosts ? o.hosts[0] : NULL,
                                 o.since_given ? o.since_s : EXPLAIN_SINCE_S,
                                 o.format == FORMAT_JSON);
  else if (rc == PS_EXIT_OK && o.candidate)
    rc = ps_cmd_verdicts_candidate(cfg, o.candidate, o.against, o.nhosts ? o.hosts[0] : NULL,
                                   o.format == FORMAT_JSON);
  else if (rc == PS_EXIT_OK)
    rc = list_verdicts(cfg, &o);
  free(o.hosts);
  return rc;
}
