/*
 * ledger: the runs of each judged series, as the agent knows them: what
 * verdicts across revisions are computed from (docs/verdicts.md, "Where the
 * history comes from").
 *
 * Contract
 * - A series is (source, series name, host): a loadgen `test_type` on one
 *   host, or on every host when its host is "" (verdicts.series_by,
 *   docs/verdicts.md "A series is per host"). Its runs are kept in (start
 *   time, name) order, the order ps_verdict_judge() wants; a run is
 *   identified by (host, name), since two machines running the same
 *   revisions name their run folders alike, and putting a run again
 *   replaces it (values, status and start time may have changed) and
 *   moves it to its place. The index it lands at is returned: verdicts
 *   from there on may change.
 * - Values are kept per metric *name* (docs/schema.md field names): the
 *   ledger is built for a list of metric names, and a saved ledger read with
 *   another list keeps the values of the names both know.
 * - `judged` marks a run whose verdicts were written and acknowledged; a
 *   run put again, or a run before which another arrived, is not judged
 *   again by this module: the caller marks what it re-judged.
 * - Every put gives the run a new `put_seq`: a caller that judged a run
 *   and learns later that the verdicts were acknowledged marks it judged
 *   only if the seq is still the one it judged, since a run put again in
 *   between (its own end replacing what the server said of it) was not.
 *   A caller that sends runs back to be judged for a reason of its own
 *   (a triage decision, a late run candidates were judged against) gives
 *   them a new seq from `last_put_seq` for the same reason.
 * - A series keeps at most PS_LEDGER_MAX_RUNS runs (the oldest go): far
 *   more than any verdict window looks back.
 * - A benchmarker run also keeps how each of its steps ended, by load
 *   factor (ps_ledger_set_steps, after the put that made it: a put
 *   replaces the run and what it kept): what the verdict of the next
 *   report says of a load it no longer held (docs/verdicts.md "Benchmarker:
 *   across releases").
 * - ps_ledger_to_json()/ps_ledger_from_json() write and read the whole
 *   ledger as a cJSON value for the state file; reading skips what it does
 *   not understand, so a damaged section loses runs, never the agent. A
 *   state saved before runs had hosts holds runs read from the server
 *   without theirs: its series are taken as `series_host`'s, its unjudged
 *   runs (the agent's own, waiting) as `run_host`'s, and its judged runs
 *   are left out, to be read back from the server with their hosts.
 * - No I/O, no globals. Strings are copied in.
 */
#ifndef PS_VERDICT_LEDGER_H
#define PS_VERDICT_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "runs/runs.h"
#include "verdict/judge.h"

#define PS_LEDGER_MAX_RUNS 2000

/* How a benchmarker step ended, in the benchmarker's words
 * (ps_ledger_step_end_name). */
typedef enum ps_step_end {
  PS_STEP_COMPLETED = 0,
  PS_STEP_UNSTABLE,
  PS_STEP_NOT_STABLE, /* StabilityNotAchieved */
} ps_step_end;

typedef struct ps_ledger_step {
  double load; /* the step's load factor (users) */
  ps_step_end end;
} ps_ledger_step;

typedef struct ps_ledger_run {
  char *host;     /* the host tag of the run's points */
  char *name;
  char *revision; /* NULL when unknown */
  int64_t start_ns;
  ps_run_status status;
  int backfill;
  int judged;
  uint64_t put_seq; /* which put made this entry (see the contract) */
  double *values; /* one per metric of the ledger; NaN = absent */
  ps_ledger_step *steps; /* a benchmarker run's steps, by load; NULL for others */
  size_t nsteps;
} ps_ledger_run;

typedef struct ps_ledger_series {
  char *source;
  char *series;
  char *host; /* "" = every host's runs */
  ps_ledger_run *runs;
  size_t nruns, cap;
} ps_ledger_series;

typedef struct ps_ledger {
  char **metrics; /* names, copied */
  size_t nmetrics;
  ps_ledger_series *series;
  size_t nseries, cap;
  uint64_t last_put_seq;
} ps_ledger;

int ps_ledger_init(ps_ledger *l, const char *const *metrics, size_t nmetrics);
void ps_ledger_free(ps_ledger *l);

/* The series, created when `create` (NULL when absent or out of memory). */
ps_ledger_series *ps_ledger_series_get(ps_ledger *l, const char *source, const char *series,
                                       const char *host, int create);
/* Puts a run (values: nmetrics entries, NaN = absent; copied). Returns the
 * index it now has, or a negative errno. */
long ps_ledger_put(ps_ledger *l, ps_ledger_series *s, const char *host, const char *name,
                   const char *revision, int64_t start_ns, ps_run_status status, int backfill,
                   const double *values);
/* Keeps how the run's steps ended (copied; n 0 forgets them). 0 or -ENOMEM
 * (the run then keeps none). */
int ps_ledger_set_steps(ps_ledger_run *r, const ps_ledger_step *steps, size_t n);
/* "Completed", "Unstable", "StabilityNotAchieved". */
const char *ps_ledger_step_end_name(ps_step_end end);

/* The index of the run (host, name), or -1. */
long ps_ledger_find(const ps_ledger_series *s, const char *host, const char *name);

/* The series as the judge reads it: `out` gets s->nruns entries borrowing
 * the ledger's strings and values (valid until the ledger changes). */
void ps_ledger_view(const ps_ledger_series *s, ps_verdict_run *out);

cJSON *ps_ledger_to_json(const ps_ledger *l);
/* Returns how many entries (a series, a run) were damaged and left out;
 * the others are read. */
size_t ps_ledger_from_json(ps_ledger *l, const cJSON *json, const char *series_host,
                           const char *run_host);

#endif
