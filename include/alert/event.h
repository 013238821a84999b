/*
 * alert/event: one event perfship raises itself (a failed, stalled or
 * missing run, a regression, a sick agent), its stable id, and the object
 * people and programs receive (docs/alerts.md "The event object").
 *
 * Contract
 * - A ps_alert_event owns every string it points to (NULL for "not
 *   known"); ps_alert_event_free() frees them and accepts a zeroed event.
 * - ps_alert_id() is a pure function of (event, host, source, run, the
 *   run's marker time): the same event raised again, after a restart or a
 *   replayed input, has the same id, so a receiver can drop the copy; a
 *   DSS results folder reused for a new run has a new marker time and so a
 *   new id, and two machines' runs of the same name (same revisions, same
 *   folder names) have two ids, so a receiver that drops repeated ids
 *   keeps both. 32 lowercase hex digits.
 * - ps_alert_event_to_cjson() builds the object sent to every channel:
 *   id, event, time (RFC 3339, UTC), host, source, run, series, test_type,
 *   revision, status, text, suppressed, metrics, cause (an object: why a
 *   regression of time in the chain happened); keys whose value is not
 *   known are left out. ps_alert_event_from_cjson() reads such an object
 *   back (the outbox in the state file) and refuses one without a known
 *   event, a well-formed id, a source, a run or a text (-EINVAL).
 * - ps_alert_event_slack() is the same event as Slack's incoming-webhook
 *   body {"text": ...}, with '&', '<' and '>' escaped so that a run name
 *   cannot mention a channel or hide a link, and direction and other
 *   controls shown as their escapes ("\u202e", core/visible.h) so that it
 *   cannot make the message read otherwise.
 * - Strings from the data are never interpreted: they are JSON-escaped by
 *   cJSON and go nowhere else.
 */
#ifndef PS_ALERT_EVENT_H
#define PS_ALERT_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"

struct cJSON;

#define PS_ALERT_ID_LEN 32

/* One metric that changed (regression and improvement events). */
typedef struct ps_alert_metric {
  char *metric;
  char *stage;      /* stage drift: the compared stage, else NULL */
  char *arm;        /* DSS: the compared arm and its reference, else NULL */
  char *reference;
  char *change_run; /* where the change began, when not the run itself */
  char *against;    /* a candidate's verdict: the series it was judged against */
  /* The revision range (docs/verdicts.md, "The revision range"): the last
   * revision at the old level and the first at the new, and the link
   * verdicts.compare_url makes of them; NULL when unknown. */
  char *good_revision, *bad_revision, *compare_url;
  /* a benchmarker report's steps against the report before it
   * (docs/verdicts.md "Benchmarker: across releases"), else NULL */
  char *note;
  int improvement;  /* the verdict: 0 regression, 1 improvement */
  int have_value, have_baseline, have_change_pct;
  double value, baseline, change_pct;
  /* across revisions: the runs the baseline is the median of (the cause's
   * old level), 0 when not told */
  int64_t baseline_runs;
} ps_alert_metric;

typedef struct ps_alert_event {
  ps_alert_kind kind;
  char id[PS_ALERT_ID_LEN + 1];
  int64_t time_ns; /* when it was raised (the agent's clock) */
  char *host;      /* the configuration's `host` tag, NULL when none */
  char *source;    /* as the runs markers write it; "perfship" for the agent */
  char *run;       /* the run; the source path (no_new_run); "agent" */
  char *series;
  char *test_type;
  char *revision;
  char *status;
  char *text;        /* one line a person understands */
  uint64_t suppressed; /* repeats of this (event, key) dropped before it */
  char *cause;       /* regression: the slog's cause as JSON text of an object
                        (verdict/explain.h; docs/alerts.md), NULL when none */
  ps_alert_metric *metrics;
  size_t nmetrics;
} ps_alert_event;

void ps_alert_event_init(ps_alert_event *ev, ps_alert_kind kind);
void ps_alert_event_free(ps_alert_event *ev);
/* Replaces *field with a copy of `value` (NULL or "" leave it NULL).
 * Returns 0 or -ENOMEM. */
int ps_alert_set(char **field, const char *value);
/* Appends a copy of `m`. Returns 0 or -ENOMEM. */
int ps_alert_event_add_metric(ps_alert_event *ev, const ps_alert_metric *m);
/* Moves the contents of `from` into `to` (which must be free); `from` is
 * left zeroed. */
void ps_alert_event_move(ps_alert_event *to, ps_alert_event *from);

void ps_alert_id(char out[PS_ALERT_ID_LEN + 1], ps_alert_kind kind, const char *host,
                 const char *source, const char *run, int64_t marker_ns);
/* "2024-03-16T00:41:45Z" for a time in ns (UTC, whole seconds). */
void ps_alert_rfc3339(char *buf, size_t n, int64_t time_ns);

struct cJSON *ps_alert_event_to_cjson(const ps_alert_event *ev);
int ps_alert_event_from_cjson(ps_alert_event *ev, const struct cJSON *o);
/* The object (or the Slack body) as compact JSON text, malloc'd; NULL when
 * out of memory. */
char *ps_alert_event_json(const ps_alert_event *ev);
char *ps_alert_event_slack(const ps_alert_event *ev);

/* What reading one saved list of the state file's alerts section left out
 * (docs/alerts.md "What the agent remembers"): the oldest entries beyond
 * its cap (`over`), entries that could not be read (`bad`), and a member
 * that is not a list at all (`wrong_type`: what it is instead, else NULL). */
typedef struct ps_alert_recall {
  size_t over, bad;
  const char *wrong_type;
} ps_alert_recall;

/* The first of the newest `cap` elements of the list `arr` (its last
 * ones), counting the older ones in r->over: reading from there keeps a
 * list of any length to its cap in one walk. NULL when `arr` is missing,
 * empty or not a list (r->wrong_type then says what it is). */
const struct cJSON *ps_alert_recall_tail(const struct cJSON *arr, size_t cap,
                                         ps_alert_recall *r);
/* Appends "; NAME: N over its cap of CAP (the oldest), N unreadable" or
 * "; NAME: a string, not a list" to `out` when `r` left anything out.
 * Returns 1 when it did. */
int ps_alert_recall_say(ps_buf *out, const char *name, size_t cap, const ps_alert_recall *r);

#endif
