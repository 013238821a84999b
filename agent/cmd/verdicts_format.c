/*
 * cmd/verdicts_format.c: the JUnit and markdown faces of `perfship
 * verdicts` (contract in include/cmd/verdicts_format.h).
 *
 * Design
 * - Run names, series and hosts come from the data, so every one of them
 *   goes through an escape made for where it lands: an XML attribute or
 *   element, a markdown table cell. One UTF-8 reader serves both, so a
 *   byte that is not UTF-8 can neither break the XML (xmllint refuses it)
 *   nor hide in a comment.
 * - A testcase per judged series and metric, not per verdict: CI systems
 *   count tests, and "cycleAvgDuration on daily-perf got worse" is the
 *   test that failed; the runs go into the failure's text.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/verdicts_format.h"

#define REPLACEMENT 0xFFFD

/* Appends stop at the first error, which is the one returned. */
#define PUT(expr)  \
  do {             \
    if (rc == 0)   \
      rc = (expr); \
  } while (0)

/* The code point at p (n bytes left) and its length in *len; REPLACEMENT
 * with *len = 1 for a byte that does not start a valid sequence (overlong,
 * surrogate, beyond U+10FFFF, cut short). */
static uint32_t next_cp(const unsigned char *p, size_t n, size_t *len) {
  uint32_t c = p[0];
  size_t need;
  uint32_t min;
  *len = 1;
  if (c < 0x80)
    return c;
  if ((c & 0xE0) == 0xC0) {
    need = 1, min = 0x80, c &= 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    need = 2, min = 0x800, c &= 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    need = 3, min = 0x10000, c &= 0x07;
  } else {
    return REPLACEMENT;
  }
  if (need >= n)
    return REPLACEMENT;
  for (size_t i = 1; i <= need; i++) {
    if ((p[i] & 0xC0) != 0x80)
      return REPLACEMENT;
    c = (c << 6) | (p[i] & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
    return REPLACEMENT;
  *len = need + 1;
  return c;
}

/* Characters shown as "\uXXXX" instead of being carried: those
 * core/visible.h names (they would reorder or drive what surrounds them)
 * and the two non-characters XML 1.0 forbids. */
static int shown_escaped(uint32_t c) {
  if (c == '\t' || c == '\n' || c == '\r')
    return 0;
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0xFFFE || c == 0xFFFF;
}

static int put_cp(ps_buf *out, uint32_t c) {
  char u[4];
  size_t n;
  if (c < 0x80) {
    u[0] = (char)c, n = 1;
  } else if (c < 0x800) {
    u[0] = (char)(0xC0 | (c >> 6)), u[1] = (char)(0x80 | (c & 0x3F)), n = 2;
  } else if (c < 0x10000) {
    u[0] = (char)(0xE0 | (c >> 12)), u[1] = (char)(0x80 | ((c >> 6) & 0x3F));
    u[2] = (char)(0x80 | (c & 0x3F)), n = 3;
  } else {
    u[0] = (char)(0xF0 | (c >> 18)), u[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    u[2] = (char)(0x80 | ((c >> 6) & 0x3F)), u[3] = (char)(0x80 | (c & 0x3F)), n = 4;
  }
  return ps_buf_append(out, u, n);
}

int ps_xml_escape(ps_buf *out, const char *s, int attr) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t n = strlen((const char *)p);
  int rc = 0;
  for (size_t i = 0, len; rc == 0 && i < n; i += len) {
    uint32_t c = next_cp(p + i, n - i, &len);
    if (shown_escaped(c))
      rc = ps_buf_printf(out, "\\u%04x", (unsigned)c);
    else if (c == '&')
      rc = ps_buf_puts(out, "&amp;");
    else if (c == '<')
      rc = ps_buf_puts(out, "&lt;");
    else if (c == '>')
      rc = ps_buf_puts(out, "&gt;");
    else if (c == '"')
      rc = ps_buf_puts(out, "&quot;");
    else if (c == '\'')
      rc = ps_buf_puts(out, "&apos;");
    else if (attr && (c == '\t' || c == '\n' || c == '\r'))
      rc = ps_buf_printf(out, "&#%u;", (unsigned)c); /* else normalised to a space */
    else
      rc = put_cp(out, c);
  }
  return rc;
}

int ps_md_escape(ps_buf *out, const char *s) {
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  size_t n = strlen((const char *)p);
  int rc = 0;
  for (size_t i = 0, len; rc == 0 && i < n; i += len) {
    uint32_t c = next_cp(p + i, n - i, &len);
    if (c == '\n' || c == '\r' || c == '\t')
      rc = ps_buf_putc(out, ' '); /* a newline would end the table row */
    else if (shown_escaped(c))
      rc = ps_buf_printf(out, "\\u%04x", (unsigned)c);
    else if (c < 0x80 && strchr("\\`*_{}[]()#+-.!|<>~&@:\"'=$%^", (int)c) && c)
      rc = ps_buf_printf(out, "\\%c", (char)c);
    else
      rc = put_cp(out, c);
  }
  return rc;
}

static int same(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : "") == 0; }

/* One testcase: rows of the same host, source, series, metric, stage, arm
 * and vat. */
static int same_case(const ps_verdict_row *a, const ps_verdict_row *b) {
  return same(a->host, b->host) && same(a->source, b->source) && same(a->series, b->series) &&
         same(a->metric, b->metric) && same(a->stage, b->stage) && same(a->arm, b->arm) &&
         same(a->vat, b->vat);
}

static int is(const ps_verdict_row *r, const char *verdict) {
  return r->verdict && strcmp(r->verdict, verdict) == 0;
}

static int put_what(ps_buf *out, const ps_verdict_row *r, int (*esc)(ps_buf *, const char *)) {
  int rc = esc(out, r->metric ? r->metric : "?");
  if (rc == 0 && r->vat && r->vat[0]) {
    PUT(ps_buf_puts(out, " "));
    PUT(esc(out, r->vat));
  }
  if (rc == 0 && r->stage) {
    PUT(ps_buf_puts(out, ", stage "));
    PUT(esc(out, r->stage));
  } else if (rc == 0 && r->arm) {
    PUT(ps_buf_puts(out, ", arm "));
    PUT(esc(out, r->arm));
  }
  return rc;
}

static int xml_text(ps_buf *out, const char *s) { return ps_xml_escape(out, s, 0); }
static int xml_attr(ps_buf *out, const char *s) { return ps_xml_escape(out, s, 1); }

static int put_change(ps_buf *out, double pct) {
  return isnan(pct) ? ps_buf_puts(out, "n/a") : ps_buf_printf(out, "%+.1f %%", pct);
}

/* "acknowledged by WHO: REASON (TICKET)", each part escaped by `esc`. */
static int put_ack(ps_buf *out, const ps_verdict_row *r, int (*esc)(ps_buf *, const char *)) {
  int rc = ps_buf_puts(out, "acknowledged");
  if (r->ack_who) {
    PUT(ps_buf_puts(out, " by "));
    PUT(esc(out, r->ack_who));
  }
  if (r->ack_reason) {
    PUT(ps_buf_puts(out, ": "));
    PUT(esc(out, r->ack_reason));
  }
  if (r->ack_ticket) {
    PUT(ps_buf_puts(out, " ("));
    PUT(esc(out, r->ack_ticket));
    PUT(ps_buf_putc(out, ')'));
  }
  return rc;
}

/* The failure's text: each regression of the case, one line. */
static int junit_failure(ps_buf *out, const ps_verdict_row *rows, const unsigned char *mine,
                         size_t n, const ps_verdict_row *first) {
  int rc = ps_buf_puts(out, "      <failure type=\"regression\" message=\"");
  PUT(put_what(out, first, xml_attr));
  PUT(ps_buf_puts(out, ": regression of "));
  PUT(put_change(out, first->change_pct));
  PUT(ps_buf_puts(out, " in run "));
  PUT(xml_attr(out, first->run));
  PUT(ps_buf_puts(out, "\">"));
  for (size_t i = 0; rc == 0 && i < n; i++) {
    const ps_verdict_row *r = &rows[i];
    if (!mine[i] || !is(r, "regression"))
      continue;
    {
      PUT(ps_buf_puts(out, "run "));
      PUT(xml_text(out, r->run));
    }
    PUT(ps_buf_puts(out, ": "));
    PUT(put_change(out, r->change_pct));
    PUT(ps_buf_printf(out, ", value %.6g against baseline %.6g", r->value, r->baseline));
    if (rc == 0 && r->change_run && r->run && strcmp(r->change_run, r->run) != 0) {
      PUT(ps_buf_puts(out, ", change began in "));
      PUT(xml_text(out, r->change_run));
    }
    if (rc == 0 && r->revision) {
      PUT(ps_buf_puts(out, ", revision "));
      PUT(xml_text(out, r->revision));
    }
    if (rc == 0 && r->method) {
      PUT(ps_buf_puts(out, " ("));
      PUT(xml_text(out, r->method));
      PUT(ps_buf_putc(out, ')'));
    }
    if (rc == 0 && r->note && r->note[0]) {
      PUT(ps_buf_puts(out, "; "));
      PUT(xml_text(out, r->note));
    }
    if (rc == 0 && r->acknowledged) {
      PUT(ps_buf_puts(out, "; "));
      PUT(put_ack(out, r, xml_text));
    }
    PUT(ps_buf_putc(out, '\n'));
  }
  PUT(ps_buf_puts(out, "</failure>\n"));
  return rc;
}

/* What the case's runs say beside their figures (a benchmarker step that
 * went unstable, docs/schema.md `note`), passed or failed: a line each. */
static int junit_notes(ps_buf *out, const ps_verdict_row *rows, const unsigned char *mine,
                       size_t n) {
  int rc = ps_buf_puts(out, "      <system-out>");
  for (size_t i = 0; rc == 0 && i < n; i++) {
    const ps_verdict_row *r = &rows[i];
    if (!mine[i] || !r->note || !r->note[0])
      continue;
    PUT(ps_buf_puts(out, "run "));
    PUT(xml_text(out, r->run ? r->run : "?"));
    PUT(ps_buf_puts(out, ": "));
    PUT(xml_text(out, r->note));
    PUT(ps_buf_putc(out, '\n'));
  }
  PUT(ps_buf_puts(out, "</system-out>\n"));
  return rc;
}

/* The cases of `rows` (first[i]: the first row of row i's case; a case's
 * rows need not be adjacent, the rows being sorted by importance), and how
 * many fail (a regression nobody acknowledged) or are skipped (each of its
 * regressions acknowledged). */
static void junit_cases(const ps_verdict_row *rows, size_t n, size_t *first, size_t *cases,
                        size_t *failures, size_t *skipped) {
  for (size_t i = 0; i < n; i++) {
    first[i] = i;
    for (size_t j = 0; j < i; j++)
      if (first[j] == j && same_case(&rows[j], &rows[i])) {
        first[i] = j;
        break;
      }
    *cases += first[i] == i;
  }
  for (size_t i = 0; i < n; i++) {
    if (first[i] != i)
      continue;
    int open = 0, known = 0; /* regressions nobody acknowledged, and those acknowledged */
    for (size_t j = i; j < n; j++)
      if (first[j] == i && is(&rows[j], "regression")) {
        open += !rows[j].acknowledged;
        known += rows[j].acknowledged;
      }
    *failures += open > 0;
    *skipped += !open && known;
  }
}

/* The testcase of the case whose first row is rows[i]; `mine` marks its
 * rows. */
static int junit_case(ps_buf *out, const ps_verdict_row *rows, size_t n, const size_t *first,
                      unsigned char *mine, size_t i) {
  const ps_verdict_row *r = &rows[i], *worst = NULL, *known = NULL;
  size_t runs = 0;
  int noted = 0;
  /* every row, not only those from i on: the marks of the cases before
   * stay otherwise, and each failure listed the runs of all of them */
  for (size_t j = 0; j < n; j++) {
    mine[j] = first[j] == i;
    runs += mine[j];
    /* the rows are sorted: the largest change first */
    if (mine[j] && is(&rows[j], "regression") && !rows[j].acknowledged && !worst)
      worst = &rows[j];
    if (mine[j] && is(&rows[j], "regression") && rows[j].acknowledged && !known)
      known = &rows[j];
    noted |= mine[j] && rows[j].note && rows[j].note[0];
  }
  /* classname: where the series lives; name: what was judged */
  int rc = ps_buf_puts(out, "    <testcase classname=\"");
  PUT(xml_attr(out, r->source ? r->source : "?"));
  PUT(ps_buf_putc(out, '.'));
  PUT(xml_attr(out, r->series ? r->series : "?"));
  if (rc == 0 && r->host && r->host[0]) {
    PUT(ps_buf_puts(out, " on "));
    PUT(xml_attr(out, r->host));
  }
  PUT(ps_buf_puts(out, "\" name=\""));
  PUT(put_what(out, r, xml_attr));
  PUT(ps_buf_printf(out, "\" time=\"0\" assertions=\"%zu\"", runs));
  if (rc == 0 && !worst && !known && !noted)
    return ps_buf_puts(out, "/>\n");
  PUT(ps_buf_puts(out, ">\n"));
  if (worst) {
    PUT(junit_failure(out, rows, mine, n, worst));
  } else if (known) {
    /* every regression of the case is known: shown as such, not as passed */
    PUT(ps_buf_puts(out, "      <skipped message=\"regression of "));
    PUT(put_change(out, known->change_pct));
    PUT(ps_buf_puts(out, " in run "));
    PUT(xml_attr(out, known->run));
    PUT(ps_buf_puts(out, ", "));
    PUT(put_ack(out, known, xml_attr));
    PUT(ps_buf_puts(out, "\"/>\n"));
  }
  if (noted)
    PUT(junit_notes(out, rows, mine, n));
  PUT(ps_buf_puts(out, "    </testcase>\n"));
  return rc;
}

int ps_verdicts_junit(ps_buf *out, const ps_verdict_row *rows, size_t n, const char *since) {
  size_t *first = n ? calloc(n, sizeof *first) : NULL;
  unsigned char *mine = n ? calloc(n, 1) : NULL;
  if (n && (!first || !mine)) {
    free(first);
    free(mine);
    return -ENOMEM;
  }
  size_t cases = 0, failures = 0, skipped = 0;
  junit_cases(rows, n, first, &cases, &failures, &skipped);
  int rc = ps_buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  PUT(ps_buf_printf(out,
                    "<testsuites name=\"perfship verdicts\" tests=\"%zu\" "
                    "failures=\"%zu\" errors=\"0\">\n",
                    cases, failures));
  PUT(ps_buf_puts(out, "  <testsuite name=\"perfship verdicts of runs since "));
  PUT(xml_attr(out, since));
  PUT(ps_buf_printf(out, " ago\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
                    cases, failures, skipped));
  for (size_t i = 0; rc == 0 && i < n; i++)
    if (first[i] == i)
      rc = junit_case(out, rows, n, first, mine, i);
  PUT(ps_buf_puts(out, "  </testsuite>\n</testsuites>\n"));
  free(first);
  free(mine);
  return rc;
}

/* A ticket becomes a link only when nothing in it can leave the link or
 * the cell: http(s) and the characters of a plain URL. */
static int plain_url(const char *u) {
  if (strncmp(u, "https://", 8) != 0 && strncmp(u, "http://", 7) != 0)
    return 0;
  for (const char *p = u; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
          strchr("-._~:/?#=&%+", *p)))
      return 0;
  return 1;
}

static int md_ack(ps_buf *out, const ps_verdict_row *r) {
  int rc = ps_buf_puts(out, "acknowledged");
  if (r->ack_who) {
    PUT(ps_buf_puts(out, " by "));
    PUT(ps_md_escape(out, r->ack_who));
  }
  if (r->ack_reason) {
    PUT(ps_buf_puts(out, ": "));
    PUT(ps_md_escape(out, r->ack_reason));
  }
  if (r->ack_ticket && plain_url(r->ack_ticket)) {
    PUT(ps_buf_puts(out, " ([ticket]("));
    PUT(ps_buf_puts(out, r->ack_ticket));
    PUT(ps_buf_puts(out, "))"));
  } else if (r->ack_ticket) {
    PUT(ps_buf_puts(out, " ("));
    PUT(ps_md_escape(out, r->ack_ticket));
    PUT(ps_buf_putc(out, ')'));
  }
  return rc;
}

static int md_row(ps_buf *out, const ps_verdict_row *r) {
  int rc = ps_buf_printf(out, "| %s | ", is(r, "regression") ? "🔴 regression" : "🟢 improvement");
  PUT(put_change(out, r->change_pct));
  PUT(ps_buf_puts(out, " | "));
  PUT(ps_md_escape(out, r->host && r->host[0] ? r->host : "-"));
  PUT(ps_buf_puts(out, " | "));
  PUT(put_what(out, r, ps_md_escape));
  PUT(ps_buf_puts(out, " | "));
  PUT(ps_md_escape(out, r->series ? r->series : "?"));
  PUT(ps_buf_puts(out, " | "));
  PUT(ps_md_escape(out, r->run ? r->run : "?"));
  PUT(ps_buf_printf(out, " | %.6g | %.6g | ", r->value, r->baseline));
  if (rc == 0 && r->change_run && r->run && strcmp(r->change_run, r->run) != 0)
    rc = ps_md_escape(out, r->change_run);
  else if (rc == 0 && r->arm && r->reference) {
    PUT(ps_buf_puts(out, "against "));
    PUT(ps_md_escape(out, r->reference));
  }
  if (r->note && r->note[0]) { /* what the steps say, beside where the change began */
    PUT(ps_buf_puts(out, "; "));
    PUT(ps_md_escape(out, r->note));
  }
  PUT(ps_buf_puts(out, " | "));
  if (r->acknowledged)
    PUT(md_ack(out, r));
  PUT(ps_buf_puts(out, " |\n"));
  return rc;
}

int ps_verdicts_markdown(ps_buf *out, const ps_verdict_row *rows, size_t n, const char *since) {
  size_t reg = 0, imp = 0, known = 0;
  for (size_t i = 0; i < n; i++) {
    reg += is(&rows[i], "regression");
    known += is(&rows[i], "regression") && rows[i].acknowledged;
    imp += is(&rows[i], "improvement");
  }
  int rc = ps_buf_printf(out, "### perfship verdicts: %zu regression%s", reg, reg == 1 ? "" : "s");
  if (known)
    PUT(ps_buf_printf(out, " (%zu acknowledged)", known));
  PUT(ps_buf_printf(out, ", %zu improvement%s\n\n", imp, imp == 1 ? "" : "s"));
  PUT(ps_buf_printf(out, "%zu verdicts of runs since ", n));
  PUT(ps_md_escape(out, since));
  PUT(ps_buf_puts(out, " ago"));
  if (reg + imp == 0) {
    PUT(ps_buf_puts(out, "; nothing changed.\n"));
    return rc;
  }
  PUT(ps_buf_puts(
      out, ".\n\n| verdict | change | host | what | series | run | value | "
           "baseline | change began in | triage |\n|---|--:|---|---|---|---|--:|--:|---|---|\n"));
  size_t shown = 0;
  for (size_t i = 0; rc == 0 && i < n; i++) {
    if (!is(&rows[i], "regression") && !is(&rows[i], "improvement"))
      continue;
    if (shown++ < PS_VERDICTS_MD_MAX_ROWS)
      rc = md_row(out, &rows[i]);
  }
  if (rc == 0 && shown > PS_VERDICTS_MD_MAX_ROWS)
    rc = ps_buf_printf(out, "\n%zu more not shown (`perfship verdicts` lists them all).\n",
                       shown - PS_VERDICTS_MD_MAX_ROWS);
  return rc;
}
