/*
 * runs: the lifecycle of a loadgen run folder (docs/schema.md "Run lifecycle
 * and markers", docs/loadgen.md): running / ended / stalled, the end status, and the `runs`
 * start/end markers.
 *
 * Contract
 * - Pure with respect to perfship's state: ps_run_evaluate() looks only at
 *   the folder (exit_code, docker.log, file modification times), at the
 *   facts the parser learned from perf.jsonl (ps_run_facts), and at the
 *   `now` and `stall_after_s` it is given. Same inputs, same view; that is
 *   what makes the service, `run --once`, a restart and `convert` agree.
 * - Facts come from the loadgen parser (its ops->run_facts, format.h) as it
 *   reads lines. They survive a restart in one of two ways: the pipeline
 *   persists them with ps_run_facts_to_json() and restores them with
 *   ps_run_facts_from_json() + ops->set_run_facts, or it re-derives them
 *   with ps_run_scan_facts() (input/feed_run.h: reads the file up to the
 *   committed offset; the only fact that cannot be re-derived exactly is the
 *   mtime-based origin of a perf.jsonl whose perf-start has no timeOrigin).
 * - Which folder a file belongs to is the format's string work
 *   (ops->run_folder); whether that folder is a run is ps_run_is_folder().
 *
 * How the pipeline calls it
 * - When anything in a run folder changes (inotify or rescan) and after each
 *   batch of perf.jsonl lines: ps_run_evaluate(). The first time a folder
 *   is seen, remember backfill = (view.state == PS_RUN_ENDED) for that run
 *   for good (persist it); pass it to every ps_run_emit_markers() call.
 * - Emit PS_RUN_MARK_START once a view has_start (first line read). Emit
 *   PS_RUN_MARK_END when the view first becomes ENDED, and again as STALLED
 *   each time a stall is newly detected. Re-emitting is harmless (same
 *   measurement, tags and time: InfluxDB merges), so "once" may be
 *   approximate after a crash.
 * - On a timer (e.g. every rescan) for every folder not yet ended:
 *   ps_run_evaluate() with the current time, so a silent run becomes
 *   STALLED although nothing changes on disk. At the end of `run --once`:
 *   the same, once, for every folder.
 * - A run's unterminated last line: tail it only once the view is ENDED
 *   (or, for a folder without an exit_code file, when it is a complete
 *   perf-finish), then evaluate again: its endedAt changes the end time.
 *
 * Markers (measurement `runs`, tags source=loadgen, run, revision, event,
 * status; fields text, exitCode, duration, backfill) and, for an ended run,
 * a `loadgen_run` point at the run's start time with `status` and
 * `exitCode` (and `success=false` when no perf-finish was read), which
 * InfluxDB merges into the parser's loadgen_run point of the same series.
 */
#ifndef PS_RUNS_RUNS_H
#define PS_RUNS_RUNS_H

#include <stdint.h>

#include "core/buf.h"
#include "core/emit.h"

/* Default of alerts.stall_after_s (perfship.cfg(5)). */
#define PS_RUN_STALL_AFTER_DEFAULT_S 1800

/* The `source` tag of the markers written here (docs/schema.md "runs"): the
 * loadgen format's ops->run_source, and how the agent's alerts name the
 * runs the run tracker follows. */
#define PS_RUN_MARKER_SOURCE "loadgen"
/* The measurement of every run marker (docs/schema.md "runs"). */
#define PS_RUN_MARKER_MEASUREMENT "runs"

/* What the loadgen parser learned from perf.jsonl. Times are epoch seconds
 * as read from the data (rounded to the microsecond only when turned into
 * timestamps, so every module rounds the same double the same way). */
typedef struct ps_run_facts {
  int have_origin;        /* origin_s is known */
  int origin_from_mtime;  /* no timeOrigin: origin came from perf.jsonl mtime */
  double origin_s;        /* wall time = origin_s + line.timestamp */
  int have_first_wall;    /* the first line was read */
  double first_wall_s;    /* its wall time: the start marker's time */
  int have_last_wall;
  double last_wall_s;     /* wall time of the last line read */
  int finish_seen;        /* a perf-finish line was read */
  int have_started_at;
  double started_at_s;    /* stats.startedAt */
  int have_ended_at;
  double ended_at_s;      /* stats.endedAt */
  int have_duration;
  double duration_s;      /* stats.duration */
  char profile[64];       /* stats.metadata.profile, "" if unknown */
} ps_run_facts;

/* The identity tags of a run, from its folder name (docs/schema.md). */
typedef struct ps_run_id {
  char run[256];       /* the folder name */
  char test_type[256]; /* "" when the name has no revision part */
  char revision[64];   /* "" when the part after the last '-' is no revision */
} ps_run_id;

typedef enum ps_run_state {
  PS_RUN_RUNNING = 0,
  PS_RUN_ENDED,
  PS_RUN_STALLED,
} ps_run_state;

typedef enum ps_run_status {
  PS_RUN_STATUS_NONE = 0, /* running */
  PS_RUN_STATUS_SUCCESS,
  PS_RUN_STATUS_FAILED,
  PS_RUN_STATUS_INTERRUPTED,
  PS_RUN_STATUS_STALLED,
} ps_run_status;

typedef struct ps_run_view {
  ps_run_id id;
  ps_run_facts facts;
  ps_run_state state;
  ps_run_status status;
  int have_exit_file;   /* an exit_code file exists (queue-driven run) */
  int have_exit_code;
  int exit_code;
  int have_start;
  int64_t start_ns;     /* start marker time */
  int have_end;
  int64_t end_ns;       /* end marker time (ENDED) or stall marker time */
  int have_duration;
  double duration_s;
  int64_t newest_mtime_ns; /* newest modification time in the folder */
  char error_line[512];    /* last error line of docker.log, "" if none */
} ps_run_view;

/* The revision part of a run name (docs/schema.md): the text after its last '-'
 * when something precedes that '-' and the text is all digits or 7..40 hex
 * digits, short enough for ps_run_id.revision. Returns a pointer into
 * `run`, or NULL when the name has no revision. The one rule for folders
 * (ps_run_id_from_name) and names given by hand (`perfship mark --run`). */
const char *ps_run_revision(const char *run);

/* Fills `id` from a folder name (a path is fine: its last component). */
void ps_run_id_from_name(const char *folder, ps_run_id *id);

/* Is `folder` a run folder: does it hold perf.jsonl or exit_code (either
 * may come first)? Used on folders a format's run_folder() named. */
int ps_run_is_folder(const char *folder);

/* Evaluates the folder at `folder` (the run folder, not perf.jsonl).
 * `facts` may be NULL (nothing read yet). Returns 0, or a negative errno
 * when the folder cannot be read (message in err). */
int ps_run_evaluate(const char *folder, int64_t now_s, int64_t stall_after_s,
                    const ps_run_facts *facts, ps_run_view *view, ps_buf *err);

enum { PS_RUN_MARK_START = 1, PS_RUN_MARK_END = 2 };

/* Emits the markers selected by `which` that the view supports: a start
 * marker needs have_start; an end marker needs state ENDED or STALLED.
 * Returns 0 or the emitter's negative errno (-EAGAIN: nothing is lost;
 * call again later, re-emitting an accepted marker is harmless). */
int ps_run_emit_markers(const ps_run_view *view, int backfill, int which,
                        ps_emitter *em);

const char *ps_run_status_name(ps_run_status s);
/* A duration as the markers write it: "37m37s", "2h0m5s", "12s". */
void ps_run_format_duration(char *buf, size_t n, double s);

/* Facts as a small JSON object for the pipeline's state file, and back.
 * from_json returns -EINVAL for text that is not such an object. */
int ps_run_facts_to_json(const ps_run_facts *f, ps_buf *out);
int ps_run_facts_from_json(const char *text, ps_run_facts *f);

#endif
