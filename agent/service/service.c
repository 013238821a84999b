/*
 * service.c: `perfship run`: starts the stages, routes path events, handles
 * signals, and stops in order. See include/service/service.h and
 * docs/architecture.md.
 *
 * Design
 * - One thread, one uv loop. The service owns every stage and wires them
 *   with hooks; stages never call back up into it. The data path's stages
 *   are files of their own under agent/pipeline/ (registry, router, reader,
 *   delivery, commit, runtracker, selfmetrics, createdb), the judges one
 *   object behind judging/judging.h; this file and reload.c are the only
 *   ones that see both layers, and only decide what happens when.
 * - Run events and the judges' points are handed to the judging layer
 *   (on_run_event, on_tap), which wires its own stages to each other.
 * - Path events (inotify or a scan) go to the router (pipeline/router.h),
 *   which decides what each means for the tracked files.
 * - The loop sleeps when there is nothing to do: the only timers are the
 *   rescan, the flush of a non-empty batch, settling documents, the state
 *   save after an acknowledgement, the run evaluations and the self-metrics.
 * - A stop (SIGTERM/SIGINT, or --once done) stops reading, sends what is
 *   batched, waits (bounded) for the batches in flight, saves the state and
 *   closes every handle; the loop must then close cleanly.
 */
#include "service/service.h"

#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "core/log.h"
#include "core/util.h"
#include "core/sysexits_ps.h"
#include "input/watch.h"
#include "judging/judging.h"
#include "pipeline/commit.h"
#include "pipeline/createdb.h"
#include "pipeline/delivery.h"
#include "pipeline/gens.h"
#include "pipeline/reader.h"
#include "pipeline/registry.h"
#include "service/reload.h"
#include "pipeline/selfmetrics.h"
#include "pipeline/router.h"
#include "pipeline/runtracker.h"
#include "pipeline/slogs.h"
#include "pipeline/shared.h"
#include "state/state.h"

#define MOD "pipeline"
#define DRAIN_WAIT_MS 10000
#define CHECK_MS 1000

typedef struct ps_service {
  pl_shared sh;
  pl_gens gens;
  ps_state saved;
  pl_registry reg;
  pl_commit commit;
  pl_delivery dl;
  pl_reader rd;
  pl_runs runs;
  pl_slogs slogs; /* chain slogs of the run folders (pipeline/slogs.h) */
  int judges_cycles; /* the judges subscribe to PL_SLOGS_TAP too */
  pl_router router;
  jd_judging judging;
  pl_selfmetrics selfmetrics;
  pl_createdb createdb;
  ps_watch *watch;
  uv_timer_t rescan_timer, check_timer;
  uv_signal_t sig_term, sig_int, sig_hup;
  int final_stats_sent; /* --once: the closing self-metrics point */
  int end_done;         /* --once: everything present was acknowledged */
  int data_rejected;    /* --once: some input was rejected */
  uint64_t stop_deadline;
  int exit_code;
  unsigned runs_since_rescan, runs_rescan_before; /* run events: when to trim */
} ps_service;

/* --- rescans ------------------------------------------------------------- */

static void rescan(ps_service *pl) { pl_router_rescan(&pl->router, pl->watch); }

/* A run's end brings its largest allocations (the perf-finish line's
 * parse, the verdicts, the report page on the threadpool's own arena); freed,
 * they stay with the allocator, which then serves later ones from scattered
 * holes: a live agent grew by about 120 KB a run, for good. Giving free
 * pages back at the first two rescans after runs ended keeps it where it
 * started (docs/benchmarks.md, "A year of nightly runs"); it costs a walk
 * of the heap, well under a millisecond at this size. */
static void trim_after_runs(ps_service *pl) {
  if (pl->runs_since_rescan || pl->runs_rescan_before) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
  }
  pl->runs_rescan_before = pl->runs_since_rescan;
  pl->runs_since_rescan = 0;
}

static void rescan_cb(uv_timer_t *t) {
  ps_service *pl = t->data;
  rescan(pl);
  pl_reader_close_idle(&pl->rd);
  pl_runs_mark_unended(&pl->runs); /* stall detection needs time, not a change */
  trim_after_runs(pl);
}

/* --- stopping ------------------------------------------------------------ */

static void watch_closed(void *arg) {
  ps_service *pl = arg;
  ps_watch_free(pl->watch);
  pl->watch = NULL;
}

static void close_all(ps_service *pl) {
  if (pl->sh.stopping == 2)
    return;
  pl->sh.stopping = 2;
  uv_handle_t *hs[] = {
      (uv_handle_t *)&pl->rescan_timer, (uv_handle_t *)&pl->check_timer,
      (uv_handle_t *)&pl->sig_term,     (uv_handle_t *)&pl->sig_int,
      (uv_handle_t *)&pl->sig_hup,
  };
  for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
    if (!uv_is_closing(hs[i]))
      uv_close(hs[i], NULL);
  pl_reader_close(&pl->rd);
  pl_runs_close(&pl->runs);
  pl_slogs_close(&pl->slogs);
  jd_judging_close(&pl->judging); /* before the delivery: its points are cancelled */
  pl_selfmetrics_close(&pl->selfmetrics);
  pl_createdb_close(&pl->createdb);
  pl_commit_close(&pl->commit);
  if (pl->watch)
    ps_watch_close(pl->watch, watch_closed, pl);
  pl_delivery_close(&pl->dl);
  size_t held = jd_judging_held(&pl->judging);
  int saved = pl_commit_save(&pl->commit);
  if (pl->sh.once && saved == 0 && held) {
    PS_ERROR(MOD, "%zu alert events were held while the state could not be saved; they are "
                  "saved now and sent at the next start",
             held);
    if (pl->exit_code == PS_EXIT_OK || pl->exit_code == PS_EXIT_DATAERR)
      pl->exit_code = PS_EXIT_UNAVAILABLE;
  }
  if (pl->sh.once && saved < 0) {
    /* Weighs more than anything else: the next run reads again what this
     * one read, and raises again what it held (docs/run.md). */
    ps_buf path;
    ps_buf_init(&path, 0);
    ps_state_path(pl->sh.cfg->state_dir, &path);
    PS_ERROR(MOD, "%s: the state could not be saved (%s): %zu alert events held, not sent; "
                  "the next run reads these files again",
             path.data ? path.data : "state.json",
             strerror(-saved), held);
    ps_buf_free(&path);
    pl->exit_code = PS_EXIT_IOERR;
  }
  const char *verb = pl->end_done                           ? "done"
                     : pl->exit_code == PS_EXIT_UNAVAILABLE ? "gave up"
                                                            : "stopped";
  pl_selfmetrics_summary(&pl->selfmetrics, verb, pl->data_rejected);
}

/* --once: everything present is acknowledged; the verdict, then stop. */
static void finish_once(ps_service *pl) {
  const pl_counters *n = &pl->sh.n;
  if (n->records_rejected + n->points_refused + n->server_rejected) {
    pl->exit_code = PS_EXIT_DATAERR;
    pl->data_rejected = 1;
  }
  /* An event nobody heard of weighs more than a rejected line: 69. */
  if (jd_judging_undelivered(&pl->judging)) {
    PS_ERROR(MOD, "some alert events could not be delivered (see above); they are kept "
                  "in the state and sent at the next start");
    pl->exit_code = PS_EXIT_UNAVAILABLE;
  }
  pl->end_done = 1;
  close_all(pl);
}

/* Called whenever something may have finished: a stop that drained, or a
 * --once run with everything present read and acknowledged. */
static void check_done(ps_service *pl) {
  if (pl->sh.stopping == 2)
    return;
  if (pl->sh.stopping == 1) {
    if (pl_delivery_quiet(&pl->dl) && !jd_judging_busy(&pl->judging)) {
      close_all(pl);
    } else if (uv_now(pl->sh.loop) >= pl->stop_deadline) {
      PS_WARN(MOD,
              "%zu batches still unacknowledged after %d s; they will be "
              "sent again at the next start",
              pl->dl.bt.inflight_count, DRAIN_WAIT_MS / 1000);
      close_all(pl);
    }
    return;
  }
  if (!pl->sh.once || pl->sh.initial_scan || !pl_reader_done(&pl->rd))
    return;
  if (!pl->runs.final) {
    pl_runs_evaluate_all(&pl->runs);
    if (!pl_reader_done(&pl->rd))
      return;
  }
  pl_slogs_kick(&pl->slogs); /* every run's cycles are known now (slogs_wait) */
  if (pl_slogs_busy(&pl->slogs))
    return; /* back here when the slogs are read and acknowledged */
  if (!jd_judging_quiet(&pl->judging))
    return; /* back here when its verdicts are answered */
  pl_delivery_flush(&pl->dl);
  if (!pl_delivery_quiet(&pl->dl))
    return;
  /* The events what was read raised reach people before the end; their
   * points are aux batches, hence the second look at the delivery. */
  jd_judging_finish(&pl->judging);
  if (!jd_judging_done(&pl->judging) || !pl_delivery_quiet(&pl->dl))
    return;
  if (!pl->final_stats_sent) {
    /* A backfill leaves a heartbeat with its final counters. */
    pl->final_stats_sent = 1;
    if (pl_selfmetrics_send(&pl->selfmetrics) == 0)
      return; /* back here once it is answered */
  }
  finish_once(pl);
}

static void check_cb(uv_timer_t *t);

static void begin_stop(ps_service *pl, const char *why) {
  if (pl->sh.stopping)
    return;
  PS_INFO(MOD, "%s: sending what is in flight, then stopping", why);
  pl->sh.stopping = 1;
  pl->stop_deadline = uv_now(pl->sh.loop) + DRAIN_WAIT_MS;
  pl_reader_stop(&pl->rd);
  jd_judging_hold(&pl->judging); /* what is in flight finishes; the rest waits */
  uv_timer_stop(&pl->rescan_timer);
  pl_selfmetrics_stop(&pl->selfmetrics);
  pl_delivery_flush(&pl->dl);
  uv_timer_start(&pl->check_timer, check_cb, 200, 200);
  check_done(pl);
}

/* --once gives up when the server stayed unreachable (or kept refusing)
 * past influxdb.unreachable_deadline_s; a stop's drain is bounded too. */
static void check_cb(uv_timer_t *t) {
  ps_service *pl = t->data;
  if (pl->sh.stopping == 1 || !pl->sh.once) {
    check_done(pl);
    return;
  }
  const ps_config *cfg = pl->sh.cfg;
  const ps_sink_stats *ss = pl_delivery_sink_stats(&pl->dl);
  uint64_t now = uv_now(pl->sh.loop);
  uint64_t deadline = (uint64_t)cfg->influxdb.unreachable_deadline_s * 1000;
  uint64_t since = ss->unreachable_since_ms;
  size_t waiting = pl_delivery_waiting(&pl->dl);
  if (!since && waiting)
    since = pl->dl.last_answer_ms; /* answering, but not accepting (401/404) */
  if (!since || !waiting || now - since <= deadline)
    return;
  if (pl->final_stats_sent && !pl->dl.bt.inflight_count && pl->selfmetrics.selfstats_in_flight &&
      waiting == 1) {
    /* Only the heartbeat is left: the data's verdict stands. */
    PS_WARN(MOD, "%s: the closing self-metrics point was not acknowledged "
                 "(everything else was)",
            cfg->influxdb.url);
    finish_once(pl);
    return;
  }
  PS_ERROR(MOD,
           "%s: the server stayed unreachable for %" PRId64
           " s (influxdb.unreachable_deadline_s); giving up; offsets stay "
           "where they are",
           cfg->influxdb.url, cfg->influxdb.unreachable_deadline_s);
  pl_commit_error(&pl->commit, "run --once: server unreachable past the deadline");
  pl->exit_code = PS_EXIT_UNAVAILABLE;
  close_all(pl);
}

/* --- hooks the stages call ------------------------------------------------ */

static void on_answered(void *ctx) {
  ps_service *pl = ctx;
  pl_reader_resume(&pl->rd);
  check_done(pl);
}

static void on_missing_database(void *ctx) {
  ps_service *pl = ctx;
  pl_createdb_start(&pl->createdb, 0);
}

static void on_reader_idle(void *ctx) {
  ps_service *pl = ctx;
  pl_slogs_kick(&pl->slogs); /* slogs wait for the lines (pipeline/slogs.h) */
  check_done(pl);
}

/* What waited for more stages (judging/verdicts.h) goes on at once. */
static void on_slogs_idle(void *ctx) {
  ps_service *pl = ctx;
  jd_judging_slogs_idle(&pl->judging);
  check_done(pl);
}

/* The slog's stage points carry the kernel growth the judges hold against
 * its limit (judging/judging.h). */
static void on_slog_point(void *ctx, const ps_point *p) {
  ps_service *pl = ctx;
  jd_judging_slog_point(&pl->judging, p);
}

/* ... and once a complete stage is acknowledged, its run's slog stage
 * drift is judged from the server (judging/verdicts_slogdrift.h). */
static void on_slog_stage_done(void *ctx, const char *run, const char *test_type,
                               int64_t stage_ns) {
  ps_service *pl = ctx;
  jd_judging_slog_stage_done(&pl->judging, run, test_type, stage_ns);
}

/* Slogs wait for the lines, and in --once for the closing evaluation of
 * the runs too: it reads an ended run's unterminated perf-finish, whose
 * cycles the stages' growth needs (else each stage is read twice). */
static int slogs_wait(void *ctx) {
  ps_service *pl = ctx;
  return !pl_reader_done(&pl->rd) || (pl->sh.once && !pl->runs.final);
}

/* Run events go to the judges (their markers were acknowledged). */
static void on_run_event(void *ctx, const pl_run_event *ev) {
  ps_service *pl = ctx;
  pl->runs_since_rescan++;
  jd_judging_run_event(&pl->judging, ev);
}

/* The points the judges need (judging/judging.h). */
static void on_tap(void *ctx, const ps_point *p, const ps_source_cfg *src, const char *path) {
  ps_service *pl = ctx;
  if (strcmp(p->measurement, PL_SLOGS_TAP) == 0) {
    pl_slogs_tap(&pl->slogs, p, path);
    if (!pl->judges_cycles)
      return; /* subscribed for the slog reader alone */
  }
  jd_judging_point(&pl->judging, p, src, path);
}

/* Every path a scan or event names goes to the router (the files read as
 * lines or documents) and to the slog reader (the run folders' slogs). */
static void on_path(void *ctx, const ps_source_cfg *src, const char *path, int content_only) {
  ps_service *pl = ctx;
  pl_router_path(&pl->router, src, path, content_only);
  pl_slogs_note_path(&pl->slogs, src, path);
}

static char *slogs_json(void *ctx) { return pl_slogs_to_json(&((ps_service *)ctx)->slogs); }

static void on_judging_settled(void *ctx) { check_done(ctx); }

static void on_parser_opened(void *ctx, pl_file *f) {
  ps_service *pl = ctx;
  pl_runs_restore_facts(&pl->runs, f);
}

static void on_file_at_end(void *ctx, pl_file *f) {
  ps_service *pl = ctx;
  /* A run's perf.jsonl read so far is the moment to look at the run again. */
  pl_runs_note_path(&pl->runs, f->src, f->cur_path, 1);
}

/* The judges wait (bounded) while lines are still to read and while run
 * markers wait for their answer: a backfill's run ends arrive with the
 * answers, batch by batch, and a series judged between two of them raised
 * alerts about a step it saw at the wrong run (docs/verdicts.md). */
static int reader_busy(void *ctx) {
  ps_service *pl = ctx;
  return !pl_reader_done(&pl->rd) || pl_runs_in_flight(&pl->runs);
}

static int slogs_busy(void *ctx) {
  ps_service *pl = ctx;
  return pl_slogs_busy(&pl->slogs);
}

static int slog_pending(void *ctx, const char *run) {
  ps_service *pl = ctx;
  return pl_slogs_run_pending(&pl->slogs, run);
}

static const char *last_error(void *ctx) {
  ps_service *pl = ctx;
  return pl->saved.nerrors ? pl->saved.errors[pl->saved.nerrors - 1] : NULL;
}

static void on_report_failed(void *ctx, const char *why) {
  ps_service *pl = ctx;
  pl_commit_error(&pl->commit, "report: %s", why);
}

static char *runs_json(void *ctx) {
  ps_service *pl = ctx;
  return pl_runs_to_json(&pl->runs);
}

static size_t pending_points(void *ctx) {
  ps_service *pl = ctx;
  return pl_delivery_pending_points(&pl->dl);
}

/* --- signals and reload ---------------------------------------------------- */

static void reload(ps_service *pl) {
  const char *file = pl->sh.cfg->file;
  if (!file) {
    PS_INFO(MOD, "SIGHUP: no configuration file to reread");
    return;
  }
  ps_config *n = NULL;
  if (pl_reload_read(file, pl->sh.cfg, &n) < 0)
    return;
  if (pl_gens_push(&pl->gens, n) < 0) {
    PS_ERROR(MOD, "SIGHUP: out of memory; keeping the running configuration");
    ps_config_free(n);
    free(n);
    return;
  }
  /* The replaced configuration stays while files read with its sources. */
  pl->sh.cfg = n;
  ps_log_set_level(n->log_level);
  pl_delivery_reconfigure(&pl->dl, n);
  ps_watch_set_sources(pl->watch, n->sources, n->nsources);
  uv_timer_start(&pl->rescan_timer, rescan_cb, (uint64_t)n->watch.rescan_interval_ms,
                 (uint64_t)n->watch.rescan_interval_ms);
  pl_selfmetrics_start(&pl->selfmetrics);
  jd_judging_reconfigured(&pl->judging);
  rescan(pl);
  /* A burst of signals (a deploy tool sending one per host change) is one
   * reload each but need not be a line each: the next line counts them. */
  ps_log_limited(PS_LOG_INFO, MOD, "configuration reread", 10.0, "configuration reread from %s",
                 n->file ? n->file : "defaults");
}

static void signal_cb(uv_signal_t *h, int signum) {
  ps_service *pl = h->data;
  if (signum == SIGHUP && pl->sh.once) {
    /* A one-shot run keeps the configuration it started with: its watcher
     * is already closed (nothing new is wanted), so a reload would have
     * nothing to apply its sources to. A log rotation may send HUP while a
     * backfill runs; it must not end it. */
    PS_INFO(MOD, "SIGHUP: ignored by run --once (it keeps the configuration "
                 "it started with)");
    return;
  }
  if (signum == SIGHUP) {
    /* Logs go to stderr (the journal or a redirect): nothing to reopen. */
    reload(pl);
    return;
  }
  begin_stop(pl, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

/* --- start and end ---------------------------------------------------------- */

static int take_state_dir(ps_service *pl, const char *sd, int *lock_fd) {
  *lock_fd = ps_state_lock(sd, 1);
  if (*lock_fd >= 0)
    return 0;
  if (*lock_fd == -EWOULDBLOCK)
    fprintf(stderr,
            "perfship: %s: another perfship agent is running with this "
            "state_dir; stop it first\n",
            sd);
  else
    fprintf(stderr,
            "perfship: %s: cannot use the state directory (%s); set "
            "state_dir to a writable folder\n",
            sd, strerror(-*lock_fd));
  (void)pl;
  return *lock_fd == -EWOULDBLOCK ? PS_EXIT_TEMPFAIL : PS_EXIT_CONFIG;
}

static void report_open_handle(uv_handle_t *h, void *arg) {
  (void)arg;
  PS_ERROR(MOD, "handle still open at shutdown: %s%s",
           uv_handle_type_name(uv_handle_get_type(h)), uv_is_closing(h) ? " (closing)" : "");
}

/* Wires the stages: each gets the shared block and the stages below it,
 * and hooks into this file for what it must tell. */
static int start_stages(ps_service *pl) {
  pl_registry_init(&pl->reg, &pl->sh, &pl->gens, &pl->saved);
  pl_commit_hooks ch = {pending_points, pl};
  pl_commit_init(&pl->commit, &pl->sh, &pl->reg, &pl->saved, &ch);
  pl_delivery_hooks dh = {on_answered, on_missing_database, on_tap, pl};
  int rc = pl_delivery_init(&pl->dl, &pl->sh, &pl->reg, &pl->commit, &dh);
  if (rc < 0) {
    pl_commit_close(&pl->commit);
    return rc;
  }
  pl_aux_out out = pl_delivery_aux_out(&pl->dl);
  jd_judging_hooks jh = {on_judging_settled, reader_busy, slogs_busy,  last_error,
                         on_report_failed,   pl,          slog_pending};
  rc = jd_judging_init(&pl->judging, &pl->sh, pl->gens.boot.cfg, &pl->dl, &pl->rd, &pl->runs,
                       &pl->commit, &out, &jh);
  if (rc < 0) {
    pl_delivery_close(&pl->dl);
    pl_commit_close(&pl->commit);
    return rc;
  }
  /* The delivery shows the judges only the points they judge (PL_TAP_MAX
   * is room for all of them, so none is left out). */
  const char *want[PL_TAP_MAX];
  size_t nwant = jd_judging_measurements(want, PL_TAP_MAX);
  for (size_t i = 0; i < nwant; i++) {
    pl_delivery_subscribe(&pl->dl, want[i]);
    if (strcmp(want[i], PL_SLOGS_TAP) == 0)
      pl->judges_cycles = 1;
  }
  /* and the slog reader its stages' finished cycles (pipeline/slogs.h) */
  if (pl_delivery_subscribe(&pl->dl, PL_SLOGS_TAP) < 0)
    PS_WARN(MOD, "no room to tap %s: slog growth per cycle needs convert", PL_SLOGS_TAP);
  pl_reader_hooks rh = {on_parser_opened, on_file_at_end, on_reader_idle, pl};
  pl_reader_init(&pl->rd, &pl->sh, &pl->reg, &pl->dl, &pl->commit, &rh);
  pl_runs_hooks runh = {on_run_event, pl};
  pl_runs_init(&pl->runs, &pl->sh, &pl->reg, &pl->rd, &out, &pl->commit, &runh);
  pl_router_init(&pl->router, &pl->sh, &pl->reg, &pl->rd, &pl->runs);
  pl_slogs_hooks slh = {on_slogs_idle, slogs_wait, pl, on_slog_point, on_slog_stage_done};
  pl_slogs_init(&pl->slogs, &pl->sh, &out, &slh);
  pl_slogs_from_json(&pl->slogs, ps_state_section(&pl->saved, "slogs"));
  pl_commit_add_section(&pl->commit, "slogs", slogs_json, pl);
  pl_runs_from_json(&pl->runs, ps_state_section(&pl->saved, "runs"));
  pl_commit_add_section(&pl->commit, "runs", runs_json, pl);
  jd_judging_restore(&pl->judging, &pl->saved, &pl->commit);
  pl_selfmetrics_init(&pl->selfmetrics, &pl->sh, &pl->reg, &pl->dl, &pl->runs);
  pl_createdb_init(&pl->createdb, pl->sh.loop, pl->gens.boot.cfg, &pl->dl, &pl->sh.stopping);
  return 0;
}

/* The allocator set for a process that lives for months (docs/benchmarks.md,
 * "A year of nightly runs"): one arena, so what the threadpool's jobs (the
 * report page, history reads) free is trimmed with the rest instead of
 * staying in four arenas of their own; and a fixed mmap threshold, so a
 * run's multi-megabyte buffers are mapped and unmapped whole, not carved
 * out of the heap after glibc raised the threshold past them. What is
 * allocated per request stays below it (the sink's curl upload buffer):
 * a mapping per request cost 1.7 times the CPU of a point. */
static void allocator_for_a_long_life(void) {
#ifdef __GLIBC__
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

/* The saved state (its trouble said as a warning), and what its absence
 * means for start_at = end. */
static void load_state(ps_service *pl, const char *sd) {
  ps_buf warn;
  ps_buf_init(&warn, 4096);
  ps_state_load(&pl->saved, sd, &warn);
  if (warn.len)
    PS_WARN("state", "%s", warn.data);
  ps_buf_free(&warn);
  pl->sh.first_start_end = !pl->saved.existed && pl->sh.cfg->watch.start_at == PS_START_END;
}

/* The rescan and --once check timers (started later), and the signals
 * that stop and reload. */
static void timers_and_signals_init(ps_service *pl, uv_loop_t *loop) {
  uv_timer_init(loop, &pl->rescan_timer);
  uv_timer_init(loop, &pl->check_timer);
  pl->rescan_timer.data = pl->check_timer.data = pl;
  uv_signal_t *sigs[] = {&pl->sig_term, &pl->sig_int, &pl->sig_hup};
  int signums[] = {SIGTERM, SIGINT, SIGHUP};
  for (size_t i = 0; i < 3; i++) {
    uv_signal_init(loop, sigs[i]);
    sigs[i]->data = pl;
    uv_signal_start(sigs[i], signal_cb, signums[i]);
  }
}

int ps_service_run(ps_config *cfg, const ps_service_opts *opts) {
  allocator_for_a_long_life();
  ps_service *pl = calloc(1, sizeof *pl);
  if (!pl)
    return PS_EXIT_SOFTWARE;
  const char *sd = cfg->state_dir && cfg->state_dir[0] ? cfg->state_dir : ".";
  int lock_fd, code = take_state_dir(pl, sd, &lock_fd);
  if (code) {
    free(pl);
    return code;
  }
  pl->sh.cfg = cfg;
  pl->sh.once = opts && opts->once;
  pl->exit_code = PS_EXIT_OK;
  pl_gens_init(&pl->gens, cfg);
  load_state(pl, sd);

  uv_loop_t loop;
  uv_loop_init(&loop);
  pl->sh.loop = &loop;
  pl->sh.start_ms = uv_now(&loop);
  int rc = start_stages(pl);
  if (rc < 0) {
    fprintf(stderr, "perfship: cannot start the HTTP sink or the alert channels (%s)\n",
            strerror(-rc));
    uv_run(&loop, UV_RUN_DEFAULT); /* the commit timer's close */
    uv_loop_close(&loop);
    pl_delivery_free(&pl->dl);
    ps_state_free(&pl->saved);
    close(lock_fd);
    free(pl);
    return PS_EXIT_SOFTWARE;
  }
  timers_and_signals_init(pl, &loop);
  ps_watch_new(&pl->watch, &loop, cfg->sources, cfg->nsources, on_path, pl);
  pl_createdb_start(&pl->createdb, 1);
  jd_judging_start(&pl->judging);

  PS_INFO(MOD, "starting%s: %zu sources, state in %s", pl->sh.once ? " (--once)" : "",
          cfg->nsources, sd);
  pl->sh.initial_scan = 1;
  rescan(pl);
  pl->sh.initial_scan = 0;
  pl_selfmetrics_start(&pl->selfmetrics);
  jd_judging_scanned(&pl->judging);
  if (!pl->sh.once) {
    if (cfg->watch.rescan_interval_ms > 0)
      uv_timer_start(&pl->rescan_timer, rescan_cb, (uint64_t)cfg->watch.rescan_interval_ms,
                     (uint64_t)cfg->watch.rescan_interval_ms);
  } else {
    uv_timer_start(&pl->check_timer, check_cb, CHECK_MS, CHECK_MS);
    ps_watch_close(pl->watch, watch_closed, pl); /* nothing new is wanted */
  }
  pl_commit_save(&pl->commit);
  check_done(pl);

  uv_run(&loop, UV_RUN_DEFAULT);

  pl_registry_free(&pl->reg);
  pl_runs_free(&pl->runs);
  pl_slogs_free(&pl->slogs);
  jd_judging_free(&pl->judging);
  /* Every handle must be closed by now: one left open is a leak, or a
   * callback that could still run on freed memory, so it fails the run. */
  int loop_rc = uv_loop_close(&loop);
  if (loop_rc != 0) {
    uv_walk(&loop, report_open_handle, NULL);
    PS_ERROR(MOD, "shutdown left handles open in the event loop (%s); this is a bug",
             uv_strerror(loop_rc));
  }
  code = pl->exit_code;
  if (loop_rc != 0 && code == 0)
    code = PS_EXIT_SOFTWARE;
  ps_state_free(&pl->saved);
  pl_delivery_free(&pl->dl);
  pl_gens_free(&pl->gens);
  close(lock_fd);
  free(pl);
  return code;
}
