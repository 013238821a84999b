/*
 * triage: the decisions people take about verdicts (acknowledge a change,
 * keep a spoiled run out, start a series anew at a run, undo one of
 * these), as data, and what they mean for one verdict or run
 * (docs/verdicts.md "Triage"; the point is `perfship_triage`,
 * docs/schema.md "Triage decisions").
 *
 * Contract
 * - A ps_triage_set holds decisions from any origin: `perfship_triage`
 *   points read back from the server (readback/triage.h) and the lines of
 *   a triage_file (ps_triage_parse_text). Strings are copied in;
 *   the set owns them.
 * - A decision is in force unless an `undo` decision names its id
 *   (revokes). An undo cannot be undone (decide again instead), so undoing
 *   restores exactly what was before the decision.
 * - The questions, all over decisions in force, newest first:
 *   ps_triage_ack_of()  is this verdict (host, run, change_run, metric)
 *     acknowledged? An ack names the run whose verdict is acknowledged: it
 *     covers that run's verdicts and every later verdict whose change_run
 *     is that run (the same change seen from later runs), not a later,
 *     different change. An ack without metric covers every metric.
 *   ps_triage_excluded() is the run (host, run) kept out of judging?
 *   ps_triage_baseline_of() does the series start anew at this run?
 *   ps_triage_baseline_start() the index in a series' runs (judge.h
 *     order) from which its comparison starts: the newest run with a
 *     baseline decision in force, or 0.
 *   A decision without host (NULL or "") matches the run on every host.
 * - ps_triage_parse_text() reads a triage_file: one decision per line,
 *   `ACTION key=value...` (values bare or "double quoted" with \" and \\),
 *   `#` comments and blank lines ignored. A bad line is reported through
 *   `bad` as (name, line, reason) and skipped; every other line is kept.
 *   A line whose id= the set holds already (an earlier line, or a server
 *   decision read before the file) is a bad line: the first one stays.
 *   A when= that is no date (2026-02-31) is a bad line. Returns the
 *   number of bad lines, or -ENOMEM.
 * - ps_triage_id() makes the id of a new decision from what it says and
 *   when: 12 hex digits after "t" (server) or "f" (a file line without
 *   id=, so the same line keeps its id across reloads).
 * - No I/O, no globals.
 */
#ifndef PS_VERDICT_TRIAGE_H
#define PS_VERDICT_TRIAGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "verdict/judge.h"

#define PS_TRIAGE_MEASUREMENT "perfship_triage"
/* What one read from the server takes at most: decisions are few (people
 * take them), and a bounded read keeps a flood from costing the agent. */
#define PS_TRIAGE_MAX_READ 10000

typedef enum ps_triage_action {
  PS_TRIAGE_ACK = 0,
  PS_TRIAGE_EXCLUDE,
  PS_TRIAGE_BASELINE,
  PS_TRIAGE_UNDO,
  PS_TRIAGE_NACTIONS
} ps_triage_action;

typedef struct ps_triage_decision {
  char *id;
  ps_triage_action action;
  char *run;     /* NULL for undo */
  char *metric;  /* ack: NULL = every metric */
  char *host;    /* NULL = the run on every host */
  char *who;
  char *reason;
  char *ticket;  /* NULL when none */
  char *revokes; /* undo: the id it revokes */
  int64_t when_ns; /* 0 when unknown (a file line without when=) */
  char *origin;  /* "FILE:LINE" for a file's line, NULL for the server */
} ps_triage_decision;

/* The hash indexes (slots hold an index into d plus one, 0 is empty) make
 * every question cost the decisions it is about, not the whole set: a
 * file of 100,000 lines was quadratic to load and to ask. d is read-only
 * to callers; reorder it only through ps_triage_sort_by_time(). */
typedef struct ps_triage_set {
  ps_triage_decision *d;
  size_t n, cap;
  size_t *by_id;    /* id -> its decision */
  size_t *by_run;   /* run -> the newest-added decision about it */
  size_t *revoked;  /* an id -> the first undo that revokes it */
  size_t *run_next; /* per decision: the one added before it about its run */
  size_t nslots;    /* a power of two, at least twice n */
  /* server points whose id a newer point has (the newer is in force),
   * and the first such id */
  size_t repeated;
  char *repeated_id;
} ps_triage_set;

void ps_triage_set_init(ps_triage_set *s);
void ps_triage_set_free(ps_triage_set *s);
/* Appends a copy of `d` (its strings copied): 0, or -ENOMEM; 1 when the
 * set holds a decision with its id already, which stays (the server's
 * points are read newest first and before the file's lines, so the
 * newest point holds, and a file line cannot replace a server decision
 * or an earlier line). */
int ps_triage_add(ps_triage_set *s, const ps_triage_decision *d);
/* Moves every decision of `from` into `into` (as ps_triage_add) and
 * empties `from`. 0 or -ENOMEM. */
int ps_triage_merge(ps_triage_set *into, ps_triage_set *from);

const char *ps_triage_action_name(ps_triage_action a);
/* -1 when `name` is no action. */
int ps_triage_action_parse(const char *name);

/* 1 when an undo in force names this decision's id. */
int ps_triage_revoked(const ps_triage_set *s, const ps_triage_decision *d);
/* The decision with this id, or NULL. */
const ps_triage_decision *ps_triage_find(const ps_triage_set *s, const char *id);
/* Orders the decisions oldest first (no time first), indexes kept true.
 * 0 or -ENOMEM (the set is then as before, unordered). */
int ps_triage_sort_by_time(ps_triage_set *s);

const ps_triage_decision *ps_triage_ack_of(const ps_triage_set *s, const char *host,
                                           const char *run, const char *change_run,
                                           const char *metric);
const ps_triage_decision *ps_triage_excluded(const ps_triage_set *s, const char *host,
                                             const char *run);
const ps_triage_decision *ps_triage_baseline_of(const ps_triage_set *s, const char *host,
                                                const char *run);
size_t ps_triage_baseline_start(const ps_triage_set *s, const ps_verdict_run *runs, size_t n);

typedef void (*ps_triage_bad_fn)(void *ctx, const char *name, size_t line, const char *why);
long ps_triage_parse_text(ps_triage_set *s, const char *name, const char *text, size_t len,
                          ps_triage_bad_fn bad, void *ctx);
/* Reports through `bad` each file line (a decision with an origin) that
 * undoes an id no decision of `s` has; returns how many. Ask it once the
 * server's decisions are in `s` too. */
size_t ps_triage_check_file(const ps_triage_set *s, ps_triage_bad_fn bad, void *ctx);

/* Writes "t" or "f" (by `file`) and 12 hex digits, NUL-terminated, into
 * out[14]. */
void ps_triage_id(const ps_triage_decision *d, int file, const char *salt, char out[14]);

#endif
