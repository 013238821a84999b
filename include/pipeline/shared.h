/*
 * pipeline/shared: what every stage of `perfship run` reads, set by the
 * service (docs/architecture.md draws the stages).
 *
 * Contract
 * - One pl_shared per running pipeline, owned by the service. Stages get a
 *   pointer at init and read the mode flags and the current configuration;
 *   only the service changes them (a reload swaps `cfg`, a stop sets
 *   `stopping`). Stages write only their own counters and `state_dirty`.
 * - Stages never call the service: they return what happened or call a
 *   hook the service gave them. The shared block is data, not a way up.
 */
#ifndef PS_PIPELINE_SHARED_H
#define PS_PIPELINE_SHARED_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "core/config.h"
#include "influx/batch.h"

/* Counters for the self-metrics, the progress line and the exit code. */
typedef struct pl_counters {
  uint64_t lines_read;       /* lines (or documents) read (reader) */
  uint64_t records_parsed;   /* records the parsers took (reader) */
  uint64_t records_rejected; /* bad records, over-long lines (reader) */
  uint64_t points_refused;   /* points the encoder refused (delivery) */
  uint64_t server_rejected;  /* lines the server refused (delivery) */
  uint64_t alerts_raised;     /* events raised (alerting) */
  uint64_t alerts_suppressed; /* repeats dropped by alerts.min_interval_s (alerting) */
  uint64_t alerts_failed;     /* delivery attempts that failed (alerting) */
  uint64_t alerts_pending;    /* events not yet delivered everywhere (gauge, alerting) */
} pl_counters;

typedef struct pl_shared {
  uv_loop_t *loop;
  ps_config *cfg;      /* the current configuration */
  int once;            /* run --once */
  int initial_scan;    /* the first scan at start is running */
  int first_start_end; /* start_at=end and no state yet: skip what exists */
  int stopping;        /* 0 running; 1 draining; 2 closing */
  int state_dirty;     /* something the state file records has changed */
  uint64_t start_ms;   /* uv_now() at start */
  pl_counters n;
} pl_shared;

/* Where a stage that writes points of its own (run markers, alerts, later
 * verdicts) sends them: as aux batches outside the checkpoints, each
 * answered once through `on_done`. The service wires it to the delivery
 * (pipeline/delivery.h); a test can wire it to a capture. `encode` adds
 * the global tags and records the origin; `send` fails without calling
 * `on_done` (the caller keeps the batch). */
typedef struct pl_aux_out {
  int (*encode)(void *ctx, ps_pbatch *b, const ps_point *p, const ps_origin *o,
                const char **reason);
  int (*send)(void *ctx, ps_pbatch *b, void (*on_done)(void *arg, int acked), void *arg);
  void *ctx;
} pl_aux_out;

/* A rate-limit key per kind of message and path, so the same bad file does
 * not flood the log and one kind of trouble does not hide another. The
 * result lives until the next call (one thread; ps_log_limited copies it). */
const char *pl_log_key(const char *kind, const char *path);

#endif
