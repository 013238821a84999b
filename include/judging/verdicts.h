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

typedef struct jd_verdicts {
  pl_shared *sh;
  const ps_config *cfg; /* the configuration at start: settings and the server */
  pl_aux_out out;
  jd_verdicts_hooks hooks;
  const char **metrics; /* the judged loadgen_run fields, in cfg order */
  size_t nmetrics;
  char host[256];          /* this agent's host (core/config.h ps_config_host) */
  const char *series_host; /* the ledger's series key: host, or "" for every host */
  ps_ledger ledger;
  jd_verdicts_collect collect;
  jd_vseries *series; /* judging state per series */
  jd_vpass *passes;   /* passes in flight */
  /* judged slog stages until their limit verdicts are acknowledged (saved;
   * at most JD_VERDICTS_GROWTH_HELD_MAX, read back or not) */
  struct jd_vgrowth *growth_held;
  size_t ngrowth_held;
  uint64_t growth_seq;
  jd_vsdjob *slog_drift; /* runs whose slog stage drift is read back; the first in flight */
  uv_timer_t sd_timer;   /* a read that waits for the run's own points */
  int sd_timer_on;
  /* The slog drift verdicts sent lately (hashes): judging a run again as
   * each of its stages is acknowledged writes only what changed. */
  /* the verdict points acknowledged lately (judging/verdicts_send.h) */
  struct jd_verdicts_sent *sent;
  uint64_t sd_sent[JD_VERDICTS_SD_SENT];
  unsigned sd_sent_next;
  uv_timer_t timer;
  int fetching;      /* a history query is on the threadpool */
  /* Triage decisions (verdict/triage.h): the server's, the triage_file's,
   * and both together, the set judging and alerts ask. */
  ps_triage_set triage_server, triage_file, triage;
  uint64_t triage_next; /* uv_now() at which the server is asked again */
  int triage_fetching;
  int triage_synced;    /* the server was asked once (answered or not) */
  int triage_checked;   /* the file's lines were checked against the server's */
  /* the triage_file is read and parsed on the threadpool (a file of
   * 100,000 lines held the loop; docs/benchmarks.md "Triage at scale"):
   * judging waits for it; a reload meanwhile reads again after it */
  int triage_reading;
  char *triage_read_next; /* the path to read once this read is done */
  int triage_read_again;
  int triage_restored; /* the state gave the decisions judged under */
  uint64_t busy_since;
  uint64_t growth_since; /* runs wait to be judged again for growth since */
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
 * (verdict/growth_limit.h); every other point is ignored. */
void jd_verdicts_slog_point(jd_verdicts *vd, const ps_point *p);
/* Every point of a complete slog stage of `run` (a loadgen run of test
 * type `series`) was acknowledged; `stage_ns` is its loadgen_slog_stage
 * point's time. The run's slog figures are read back from the server and
 * its stages judged against its first loadgen stage
 * (judging/verdicts_slogdrift.h). */
void jd_verdicts_slog_stage_done(jd_verdicts *vd, const char *run, const char *series,
                                 int64_t stage_ns);

/* The configuration was reread: its triage_file is read again and the
 * server's decisions asked for at once. */
void jd_verdicts_reconfigured(jd_verdicts *vd, const ps_config *cfg);

int jd_verdicts_quiet(const jd_verdicts *vd);
void jd_verdicts_close(jd_verdicts *vd);
void jd_verdicts_free(jd_verdicts *vd);

#endif
