/*
 * cmd/verdicts_format: what `perfship verdicts --format junit|markdown`
 * writes, for a CI job to show as failed tests or to post as a
 * pull-request comment (docs/verdicts.md, "In CI").
 *
 * Contract
 * - Pure: rows in, text appended to a ps_buf out; no I/O. Every function
 *   returns 0 or the buffer's -ENOMEM / -E2BIG.
 * - The rows come sorted as `perfship verdicts` shows them (regressions
 *   first); any string of a row may be NULL (absent in the point).
 * - ps_xml_escape(): text safe inside an XML 1.0 element or a quoted
 *   attribute: & < > " ' as entities; characters XML 1.0 cannot carry at
 *   all (C0 controls but tab, newline and CR; U+FFFE, U+FFFF) and the
 *   direction controls (core/visible.h) as the text "\uXXXX"; a byte that
 *   is not part of valid UTF-8 as U+FFFD. With `attr`, tab, newline and CR
 *   become character references, so an attribute keeps them.
 * - ps_md_escape(): text safe in a GitHub/GitLab markdown table cell: every
 *   ASCII punctuation character markdown could read (| ` * _ [ ] ( ) # < >
 *   ! ~ \ and the rest, @ included so a run name cannot mention a person)
 *   gets a backslash; newline and CR become a space; controls and
 *   direction controls as in core/visible.h.
 * - JUnit: one <testcase> per judged series and metric (host, source,
 *   series, metric, stage or arm) with a verdict in range; it holds a
 *   <failure> when one of its verdicts is a regression nobody
 *   acknowledged, naming the runs; when every regression of the case was
 *   acknowledged, a <skipped> naming who and why instead (the CI system
 *   shows it as known, not as passed). Counts on <testsuite> and
 *   <testsuites> agree with the cases.
 * - Markdown: a heading with the counts, then a table of the regressions
 *   and improvements (at most PS_VERDICTS_MD_MAX_ROWS, then how many were
 *   left out), so it stays under a comment's size limit. An acknowledged
 *   change says so, with who, why and the ticket (a link only when it is
 *   a plain http(s) URL; else escaped text).
 */
#ifndef PS_CMD_VERDICTS_FORMAT_H
#define PS_CMD_VERDICTS_FORMAT_H

#include <stddef.h>

#include "core/buf.h"

#define PS_VERDICTS_MD_MAX_ROWS 50

typedef struct ps_verdict_row {
  const char *verdict; /* regression, improvement, none */
  const char *host, *source, *series, *metric, *stage, *arm, *reference;
  const char *vat; /* stage drift of a vat's figure; NULL or "" otherwise */
  const char *run, *change_run, *revision, *method;
  const char *note; /* a benchmarker report's steps (docs/verdicts.md); NULL or "" none */
  double value, baseline, change_pct; /* NAN when absent */
  double time_s;                      /* the verdict's time, seconds; NAN when absent */
  /* a triage decision acknowledged this change (verdict/triage.h); the
   * strings may be NULL */
  int acknowledged;
  const char *ack_who, *ack_reason, *ack_ticket;
} ps_verdict_row;

int ps_xml_escape(ps_buf *out, const char *s, int attr);
int ps_md_escape(ps_buf *out, const char *s);

/* `since` is the range as the user gave it ("7d"), for the titles. */
int ps_verdicts_junit(ps_buf *out, const ps_verdict_row *rows, size_t n, const char *since);
int ps_verdicts_markdown(ps_buf *out, const ps_verdict_row *rows, size_t n, const char *since);

#endif
