/*
 * alert/text.c: the lines people read (include/alert/text.h).
 *
 * Durations are written the way the run markers write them
 * (ps_run_format_duration), times as RFC 3339 in UTC, so the alert, the
 * marker and the dashboards say the same thing in the same words.
 */
#include "alert/text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void stamp(char *buf, size_t n, int64_t secs) {
  ps_alert_rfc3339(buf, n, secs * 1000000000LL);
}

int ps_alert_text_run(ps_buf *out, ps_alert_kind kind, const ps_run_view *v) {
  char dur[64] = "", code[40] = "";
  if (v->have_duration)
    ps_run_format_duration(dur, sizeof dur, v->duration_s);
  if (v->have_exit_code && v->exit_code != 0)
    snprintf(code, sizeof code, " (exit code %d)", v->exit_code);
  const char *err = v->error_line;
  switch (kind) {
  case PS_ALERT_RUN_FAILED:
  case PS_ALERT_RUN_INTERRUPTED:
    return ps_buf_printf(out, "%s %s%s%s%s%s%s", v->id.run,
                         kind == PS_ALERT_RUN_FAILED ? "failed" : "was interrupted",
                         dur[0] ? " after " : "", dur, code, err[0] ? ": " : "", err);
  case PS_ALERT_RUN_STALLED: {
    char quiet[64];
    ps_run_format_duration(quiet, sizeof quiet, (double)(v->end_ns - v->newest_mtime_ns) / 1e9);
    return ps_buf_printf(out, "%s stalled: no file changed for %s", v->id.run, quiet);
  }
  case PS_ALERT_RUN_RECOVERED:
    if (v->state != PS_RUN_ENDED)
      return ps_buf_printf(out, "%s is writing again after a stall", v->id.run);
    return ps_buf_printf(out, "%s ended after a stall: %s%s%s%s", v->id.run,
                         ps_run_status_name(v->status), dur[0] ? " after " : "", dur, code);
  default:
    return ps_buf_printf(out, "%s: %s", v->id.run, ps_alert_kind_name(kind));
  }
}

/* ref: the reference arm the line already named (NULL: none). */
static int put_metric(ps_buf *out, const ps_alert_metric *m, const char *ref) {
  int rc = ps_buf_puts(out, m->metric);
  if (m->stage)
    rc |= ps_buf_printf(out, " of stage %s", m->stage);
  if (m->arm)
    rc |= ps_buf_printf(out, " of %s", m->arm);
  if (m->have_change_pct)
    rc |= ps_buf_printf(out, " %+.1f%%", m->change_pct);
  if (m->have_value && m->have_baseline)
    rc |= ps_buf_printf(out, " (%.6g against %.6g%s%s)", m->value, m->baseline,
                        m->reference && !ref ? " of " : "",
                        m->reference && !ref ? m->reference : "");
  if (m->against && !ref)
    rc |= ps_buf_printf(out, " against the current %s level", m->against);
  return rc ? -ENOMEM : 0;
}

/* The series every metric's candidate verdict was judged against, when
 * they share one, else NULL. */
static const char *one_against(const ps_alert_event *ev) {
  const char *a = NULL;
  for (size_t i = 0; i < ev->nmetrics; i++) {
    const ps_alert_metric *m = &ev->metrics[i];
    if (!m->against || (a && strcmp(a, m->against)))
      return NULL;
    a = m->against;
  }
  return a;
}

/* The reference arm when every metric is an arm comparison against the
 * same one (a DSS test), else NULL. */
static const char *one_reference(const ps_alert_event *ev) {
  const char *ref = NULL;
  for (size_t i = 0; i < ev->nmetrics; i++) {
    const ps_alert_metric *m = &ev->metrics[i];
    if (!m->arm || !m->reference || (ref && strcmp(ref, m->reference)))
      return NULL;
    ref = m->reference;
  }
  return ref;
}

int ps_alert_text_verdict(ps_buf *out, const ps_alert_event *ev) {
  const char *word = ev->kind == PS_ALERT_IMPROVEMENT ? "improvement" : "regression";
  int rc = ps_buf_printf(out, "%s: %s", ev->run ? ev->run : "?", word);
  /* A DSS verdict compares arms of one run, not the run with earlier ones
   * (docs/verdicts.md): the text names the test and the reference arm. */
  const char *ref = one_reference(ev);
  int arms = 0;
  for (size_t i = 0; i < ev->nmetrics; i++)
    arms |= ev->metrics[i].arm != NULL;
  if (arms && ev->series)
    rc |= ps_buf_printf(out, " in test %s", ev->series);
  /* A candidate is judged against another series' level, not its own
   * earlier runs (docs/verdicts.md, "Candidates"). */
  const char *against = one_against(ev);
  if (ref)
    rc |= ps_buf_printf(out, " against the reference arm %s", ref);
  else if (against)
    rc |= ps_buf_printf(out, " against the current %s level", against);
  else if (!arms && ev->series)
    rc |= ps_buf_printf(out, " against earlier %s runs", ev->series);
  if (ev->nmetrics == 1)
    rc |= ps_buf_puts(out, " in ");
  else
    rc |= ps_buf_printf(out, " in %zu metrics: ", ev->nmetrics);
  const char *since = NULL;
  for (size_t i = 0; i < ev->nmetrics; i++) {
    if (i)
      rc |= ps_buf_puts(out, ", ");
    rc |= put_metric(out, &ev->metrics[i], ref ? ref : against);
    if (ev->metrics[i].change_run && (!ev->run || strcmp(ev->metrics[i].change_run, ev->run)))
      since = ev->metrics[i].change_run;
  }
  if (since)
    rc |= ps_buf_printf(out, "; the change began with %s", since);
  /* One revision range per line: the first metric that has one (the
   * metrics of one run's change share it, docs/verdicts.md). */
  for (size_t i = 0; i < ev->nmetrics; i++) {
    const ps_alert_metric *m = &ev->metrics[i];
    if (!m->good_revision || !m->bad_revision)
      continue;
    rc |= ps_buf_printf(out, "; revisions %s..%s", m->good_revision, m->bad_revision);
    if (m->compare_url)
      rc |= ps_buf_printf(out, ": %s", m->compare_url);
    break;
  }
  /* A benchmarker report's steps: one note per run, every metric has it */
  for (size_t i = 0; i < ev->nmetrics; i++)
    if (ev->metrics[i].note) {
      rc |= ps_buf_printf(out, "; %s", ev->metrics[i].note);
      break;
    }
  return rc ? -ENOMEM : 0;
}

int ps_alert_text_no_new_run(ps_buf *out, const char *what, const char *path,
                             int64_t silent_s, int64_t last_start_s,
                             int64_t watching_since_s) {
  char dur[64], when[40];
  ps_run_format_duration(dur, sizeof dur, (double)silent_s);
  if (last_start_s > 0) {
    stamp(when, sizeof when, last_start_s);
    return ps_buf_printf(out, "no new %s run in %s for %s (the last one started %s)", what,
                         path, dur, when);
  }
  stamp(when, sizeof when, watching_since_s);
  return ps_buf_printf(out, "no %s run in %s for %s (watched since %s)", what, path, dur,
                       when);
}

int ps_alert_text_server(ps_buf *out, const char *url, int64_t for_s, int recovered,
                         uint64_t waiting) {
  char dur[64];
  ps_run_format_duration(dur, sizeof dur, (double)for_s);
  if (recovered)
    return ps_buf_printf(out, "InfluxDB at %s takes writes again, after %s", url, dur);
  return ps_buf_printf(out,
                       "InfluxDB at %s has not taken a write for %s (%" PRIu64
                       " requests waiting); points are kept and sent when it does",
                       url, dur, waiting);
}

int ps_alert_text_rejected(ps_buf *out, uint64_t count, const char *last_error) {
  return ps_buf_printf(out, "%" PRIu64 " input record%s rejected%s%s (perfship status lists "
                       "the last ones)",
                       count, count == 1 ? "" : "s", last_error && last_error[0] ? "; the last: " : "",
                       last_error ? last_error : "");
}

