/*
 * judging/verdicts: perfship's own judgement of each run, written as
 * `perfship_verdict` points (docs/schema.md; the method: docs/verdicts.md).
 *
 * Contract
 * - Input: the points of the measurements the judged figures come from
 *   (jd_verdicts_tap(), from the delivery's tap through the judging face;
 *   judging/verdicts_collect.h picks what is judged, by the table
 *   core/figures.h) and every run end the run tracker reports
 *   (jd_verdicts_run_ended()).
 * - A series is the test type (loadgen) or test (DSS) on this agent's host,
 *   or on every host (verdicts.series_by); a run is (host, name). Verdicts
 *   are written only about this host's runs (the point's host is the
 *   agent's global tag); a tapped point that names another host is not
 *   judged, and other hosts' runs read back are history only.
 * - Loadgen, across revisions: an ended run goes into its series' history
 *   (verdict/ledger.h, saved in the state file), and the series is judged
 *   from that run's place to its newest run, so a run that arrives late
 *   (a backfill reads folders in name order) rewrites every later verdict
 *   it changes. Judging waits while the reader has a backlog (one pass
 *   after a backfill, not one per run), and for the series' history on the
 *   server (judging/verdicts_history.h), read once per series and start
 *   and back only as far as the judge's window needs (a span from the runs
 *   to judge, doubled until the window is full): a server that cannot be
 *   reached delays verdicts, never loses them; one
 *   without InfluxQL (VictoriaMetrics) or without the database leaves the
 *   agent's own history.
 * - Loadgen, within a run: a successful run's stages against its first
 *   loadgen stage, once, when it ends; each complete stage's kernel growth
 *   per cycle against verdicts.max_growth_per_cycle when its slog stage
 *   point is written (jd_verdicts_slog_point()). DSS bench: a results file's arms
 *   against its reference arm, when its end marker passes.
 * - Verdict points go through `out` (aux batches). Until every batch of a
 *   pass is acknowledged, the runs it judged stay unjudged in the state: a
 *   crash judges them again (the points overwrite themselves; the same
 *   history gives the same points).
 * - Hooks: `judged` once per run whose verdicts a pass wrote, when they are
 *   sent (the alert stage raises regression/improvement events from it);
 *   `written` when a pass was acknowledged (the report may be rewritten).
 * - jd_verdicts_quiet(): nothing waits to be judged or sent (a --once run
 *   may end). In --once, a history the server cannot give now is left for
 *   the next start (the runs stay unjudged in the state).
 * - Triage (docs/verdicts.md "Triage"): the decisions of triage_file (read
 *   at start and reload) and of the server (`perfship_triage`, one bounded
 *   read before a judging pass when the last is older than a few seconds,
 *   and every minute; series wait for the first). An excluded run is kept
 *   out of every window and baseline and its verdicts are rewritten as
 *   `excluded`; a baseline decision starts the series at its run (its
 *   verdicts rewritten as `baseline`); a change of either re-judges the
 *   series from the first run it touches, as a late run does. Acknowledged
 *   verdicts are written as ever but not given to the `judged` hook, so
 *   they raise no alert.
 * - Settings are read at start (a reload keeps them, but for triage_file).
 * - Parts (docs/architecture.md "Seams"): verdicts.c drives the stage (the
 *   look on its timer, the passes and their answers, the state section) and
 *   owns the fields every part reads (settings, host, ledger) and its own
 *   (timer, passes, the points sent lately). Each part keeps its fields in
 *   a sub-struct of jd_verdicts that it alone writes: `collect`
 *   (verdicts_collect.c: what is judged, from the tapped points),
 *   `history` (verdicts_fetch.c: each series' history read back),
 *   `triage` (verdicts_triage.c: the decisions and their reads), `growth`
 *   (verdicts_growth.c: slog stages held for their limit verdicts) and
 *   `slogdrift` (verdicts_slogdrift.c: the runs whose stage drift is read
 *   back). The judges (verdicts_judge.c) keep no state. The others read a
 *   part's fields or ask it through a function (agent/judging/
 *   verdicts_private.h); the ledger is written by the parts that put runs
 *   in it or judge them again. The driver calls down into the parts and
 *   never the other way: a judge returns its pass for the driver to send,
 *   and a part's read or point that ends on the loop hands back through
 *   the driver's table (jd_vdriver: a look, a pass to send).
 */
#ifndef PS_JUDGING_VERDICTS_H
#define PS_JUDGING_VERDICTS_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/config.h"
#include "pipeline/runtracker.h"
#include "pipeline/shared.h"
#include "judging/verdicts_collect.h"
#include "judging/verdicts_sdheld.h"
#include "verdict/ledger.h"
#include "verdict/triage.h"
#include "verdict/verdict.h"

/* One run's verdicts of a pass, for the alert stage. */
typedef struct jd_run_verdicts {
  const char *source, *series, *run, *revision;
  int64_t time_ns;
  int backfill;
  const ps_verdict *v; /* this run's verdicts (all metrics and methods) */
  size_t n;
  const char *host; /* the run's: always the agent's own */
} jd_run_verdicts;

typedef struct jd_verdicts_hooks {
  void (*judged)(void *ctx, const jd_run_verdicts *rv);
  void (*written)(void *ctx);
  /* Nonzero while the reader has a backlog or run markers wait for their
   * answer (run ends still to come): judging waits (bounded). */
  int (*busy)(void *ctx);
  /* Nonzero while the slog reader has stages to read: a run judged again
   * for a stage's kernel growth waits (bounded) for the other stages' (a
   * backfill's growth comes run after run, and each judged again every run
   * after it: quadratic in the runs, docs/benchmarks.md). */
  int (*slogs_busy)(void *ctx);
  /* A read the stage waited for is in (the triage_file's, on the
   * threadpool): what waited on the stage looks again (a --once run with
   * nothing new to ship has nothing else to wake it). */
  void (*settled)(void *ctx);
  void *ctx;
} jd_verdicts_hooks;

/* Far more slog stages than a night's runs have: a flood of slogs of runs
 * that never end cannot grow the state without bound. */
#define JD_VERDICTS_GROWTH_HELD_MAX 4096

typedef struct jd_vseries jd_vseries;
typedef struct jd_vpass jd_vpass;
typedef struct jd_vsdjob jd_vsdjob;
#define JD_VERDICTS_SD_SENT 1024

/* The parts' own state (docs/architecture.md "Seams"): each sub-struct is
 * written by its part alone; the driver (verdicts.c) and the other parts
 * read it, or ask the part through a function. */

/* verdicts_fetch.c: each series' history read back from the server. */
typedef struct jd_vhistory_state {
  jd_vseries *series; /* read state per series */
  int fetching;       /* a history query is on the threadpool */
} jd_vhistory_state;

/* verdicts_triage.c: the decisions (verdict/triage.h): the server's, the
 * triage_file's, and both together, the set judging and alerts ask. */
typedef struct jd_vtriage_state {
  ps_triage_set server, file, in_force;
  uint64_t next; /* uv_now() at which the server is asked again */
  int fetching;
  int synced;  /* the server was asked once (answered or not) */
  int checked; /* the file's lines were checked against the server's */
  /* the triage_file is read and parsed on the threadpool (a file of
   * 100,000 lines held the loop; docs/benchmarks.md "Triage at scale"):
   * judging waits for it; a reload meanwhile reads again after it */
  int reading;
  char *read_next; /* the path to read once this read is done */
  int read_again;
  int restored; /* the state gave the decisions judged under */
} jd_vtriage_state;

/* verdicts_growth.c: judged slog stages held until their limit verdicts
 * are acknowledged (saved; at most JD_VERDICTS_GROWTH_HELD_MAX, read back
 * or not). */
typedef struct jd_vgrowth_state {
  struct jd_vgrowth *held;
  size_t nheld;
  uint64_t seq;
  uint64_t rejudge_since; /* runs wait to be judged again for growth since */
} jd_vgrowth_state;

/* verdicts_slogdrift.c: the runs whose slog stage drift is read back. */
typedef struct jd_vslogdrift_state {
  jd_vsdjob *jobs;  /* the first in flight */
  uv_timer_t timer; /* a read that waits for the run's own points */
  int timer_on;
  /* The slog drift verdicts sent lately (hashes): judging a run again as
   * each of its stages is acknowledged writes only what changed. */
  uint64_t sent[JD_VERDICTS_SD_SENT];
  unsigned sent_next;
  jd_sdheld held; /* the per-block rows of the runs whose slogs are read now */
} jd_vslogdrift_state;

typedef struct jd_verdicts {
  /* What every part reads; set at init, written by the driver alone (the
   * ledger also by the parts that put runs in it or judge them again). */
  const struct jd_vdriver *driver; /* what the parts hand back (verdicts_private.h) */
  pl_shared *sh;
  const ps_config *cfg; /* the configuration at start: settings and the server */
  pl_aux_out out;
  jd_verdicts_hooks hooks;
  const char **metrics; /* the judged loadgen_run fields, in cfg order */
  size_t nmetrics;
  char host[256];          /* this agent's host (core/config.h ps_config_host) */
  const char *series_host; /* the ledger's series key: host, or "" for every host */
  ps_ledger ledger;
  jd_verdicts_collect collect; /* verdicts_collect.c's */
  /* The parts' own. */
  jd_vhistory_state history;
  jd_vtriage_state triage;
  jd_vgrowth_state growth;
  jd_vslogdrift_state slogdrift;
  /* The driver's: the look, the passes in flight, and the verdict points
   * acknowledged lately (judging/verdicts_send.h). */
  uv_timer_t timer;
  uint64_t busy_since;
  jd_vpass *passes;
  struct jd_verdicts_sent *sent;
} jd_verdicts;

int jd_verdicts_init(jd_verdicts *vd, pl_shared *sh, const ps_config *cfg, const pl_aux_out *out,
                     const jd_verdicts_hooks *hooks);
/* Restores the state section "verdicts" (jd_verdicts_to_json); NULL is fine. */
void jd_verdicts_from_json(jd_verdicts *vd, const char *text);
char *jd_verdicts_to_json(jd_verdicts *vd);

void jd_verdicts_tap(jd_verdicts *vd, const ps_point *p);
void jd_verdicts_run_ended(jd_verdicts *vd, const pl_run_event *ev);
/* A point of the chain's slog (pipeline/slogs.h): a complete
 * loadgen_slog_stage after stage 0 gets its growth-limit verdicts at once
 * (verdict/growth_limit.h); the per-block rows are held for the run's
 * stage drift (judging/verdicts_sdheld.h); every other point is ignored. */
void jd_verdicts_slog_point(jd_verdicts *vd, const ps_point *p);
/* Every point of a complete slog stage of `run` (a loadgen run of test
 * type `series`) was acknowledged; `stage_ns` is its loadgen_slog_stage
 * point's time. The run's slog figures are read back from the server and
 * its stages judged against its first loadgen stage
 * (judging/verdicts_slogdrift.h). */
void jd_verdicts_slog_stage_done(jd_verdicts *vd, const char *run, const char *series,
                                 int64_t stage_ns);
/* The slog reader has nothing left to read or acknowledge: what waited
 * for more of its stages (a run's stage drift, growth judged again) goes
 * on now instead of at its timer. */
void jd_verdicts_slogs_idle(jd_verdicts *vd);

/* The configuration was reread: its triage_file is read again and the
 * server's decisions asked for at once. */
void jd_verdicts_reconfigured(jd_verdicts *vd, const ps_config *cfg);

int jd_verdicts_quiet(const jd_verdicts *vd);
void jd_verdicts_close(jd_verdicts *vd);
void jd_verdicts_free(jd_verdicts *vd);

#endif
