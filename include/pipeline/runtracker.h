/*
 * pipeline/runtracker: the run folders of a source (loadgen), their
 * lifecycle markers, and the run events the judging parts plug into.
 *
 * Contract
 * - pl_runs_note_path() is told of every path a source event or scan names,
 *   and of every line file read to its end. A path inside a run folder
 *   (runs/runs.h) makes that run due for evaluation; a rescan naming it
 *   again counts only when the folder has a newer modification time.
 *   Evaluations run from a short timer, never inside the caller.
 * - A run is judged (runs/runs.h ps_run_evaluate) only once its perf.jsonl
 *   was read to the end: judging earlier would call a good run failed. An
 *   ended run's unterminated last line is read first (the reader).
 * - `backfill` is decided the first time a folder is judged (ended already:
 *   true) and kept for good. Start and end markers (measurement `runs`,
 *   docs/schema.md) go as aux batches through `out`; a stalled run
 *   gets a `stalled` end marker once, and its real end marker later.
 * - Once a marker batch is acknowledged, the `event` hook reports the run:
 *   started, ended (with its status), stalled, or resumed after a stall,
 *   with the run's view (identity, status, times, facts) and `backfill`.
 *   Each event is reported once per run (after a crash, at most once more).
 * - The tracker's memory (backfill, acknowledged markers, facts) is saved
 *   in the state file as JSON (pl_runs_to_json / pl_runs_from_json), so a
 *   restart neither re-sends markers nor forgets facts learned from lines
 *   before its offset.
 */
#ifndef PS_PIPELINE_RUNTRACKER_H
#define PS_PIPELINE_RUNTRACKER_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "pipeline/commit.h"
#include "pipeline/reader.h"
#include "pipeline/registry.h"
#include "pipeline/shared.h"
#include "runs/runs.h"

typedef enum pl_run_event_kind {
  PL_RUN_STARTED = 1,
  PL_RUN_ENDED,   /* view->status says how */
  PL_RUN_STALLED,
  PL_RUN_RESUMED, /* new data after a stall (an end after a stall is ENDED) */
} pl_run_event_kind;

typedef struct pl_run_event {
  pl_run_event_kind kind;
  const char *folder;        /* the run folder's path */
  const ps_run_view *view;   /* as judged when the markers were sent */
  int backfill;              /* the run had ended before perfship saw it */
  int after_stall;           /* ENDED: a stalled marker was sent earlier */
} pl_run_event;

typedef struct pl_runs_hooks {
  void (*event)(void *ctx, const pl_run_event *ev);
  void *ctx;
} pl_runs_hooks;

typedef struct pl_run pl_run;

typedef struct pl_runs {
  pl_shared *sh;
  pl_registry *reg;
  pl_reader *rd; /* may be NULL: no file is read (tests) */
  pl_aux_out out;
  pl_commit *commit;
  pl_runs_hooks hooks;
  pl_run *runs;
  uv_timer_t timer;
  int final; /* --once: the closing evaluation was made */
} pl_runs;

void pl_runs_init(pl_runs *t, pl_shared *sh, pl_registry *reg, pl_reader *rd,
                  const pl_aux_out *out, pl_commit *commit, const pl_runs_hooks *hooks);
/* Restores what a previous agent saved (pl_runs_to_json); NULL is fine. */
void pl_runs_from_json(pl_runs *t, const char *text);
/* The tracker's memory as JSON text (malloc'd), or NULL. */
char *pl_runs_to_json(pl_runs *t);

/* Something happened at `path` of source `src` (force: count it even when
 * the folder's modification time did not move). */
void pl_runs_note_path(pl_runs *t, const ps_source_cfg *src, const char *path, int force);
/* A line file's parser was opened: give it the facts of its run learned
 * before its offset (persisted, else re-derived from the file). */
void pl_runs_restore_facts(pl_runs *t, pl_file *f);
/* Stall detection needs time to pass: every run not ended is due again. */
void pl_runs_mark_unended(pl_runs *t);
/* --once, once everything present was read: every run judged once more,
 * so ended runs get their end markers and silent ones are judged stalled. */
void pl_runs_evaluate_all(pl_runs *t);

/* Whether a run's markers wait for their answer: its event (an end the
 * judges want) comes with it, so a judge that looks now may miss a run. */
int pl_runs_in_flight(const pl_runs *t);

/* For the progress line: run folders, and those judged with their markers
 * answered and their perf.jsonl read and acknowledged. */
void pl_runs_progress(pl_runs *t, size_t *runs, size_t *runs_done);

void pl_runs_close(pl_runs *t);
void pl_runs_free(pl_runs *t);

#endif
