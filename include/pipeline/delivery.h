/*
 * pipeline/delivery: points -> line protocol -> batches -> the sink, and
 * the sink's answers back to the checkpoints.
 *
 * Contract
 * - pl_delivery_point() / pl_delivery_reject() are the emitter functions of
 *   every tracked file (core/emit.h; the emitter's context is the file,
 *   whose `emit_ctx` is the delivery). A point is encoded once with the
 *   global tags (influx/lp_encode.h), straight into the open batch's body, on
 *   behalf of the file's cursor (the global tags include `host` = the
 *   machine's name, gethostname(), unless the configuration's tags set
 *   it). A point the encoder refuses is counted, logged and
 *   recorded among the state's errors; it is not an error for the parser.
 * - Back-pressure: a point is refused with -EAGAIN when max_pending_bytes
 *   are held (the open batch is sent then if nothing is in flight), or when this loop turn's
 *   point budget is spent (the file is marked `yielded`: it continues first
 *   in the next turn). pl_delivery_new_turn() starts a turn's budget.
 * - A point taken into a batch is also shown to the `tap` hook when its
 *   measurement is one subscribed to (pl_delivery_subscribe: the judges
 *   name what they judge), after the encoder accepted it; a point refused
 *   for back-pressure is shown when it is offered again and taken. Every
 *   other point costs one byte test, or a few string compares when its
 *   first byte is a subscribed name's.
 * - Acknowledgements release checkpoints (influx/batch.h); a file whose
 *   committed offset moved is reported to the commit stage, and a retired
 *   file no batch holds any more is freed through the registry.
 * - Aux batches (run markers, self-metrics) go outside the checkpoints:
 *   pl_delivery_send_aux() submits one and calls its `on_done` once with
 *   whether it was acknowledged, then frees it. Its body is kept for the
 *   next aux batch (at most PL_AUX_SPARES of them) while other aux
 *   batches are in flight or the batcher is busy; an idle delivery keeps
 *   none.
 * - After every answer of the sink (acknowledged, rejected or cancelled),
 *   the `answered` hook runs: the service resumes reading and checks
 *   whether a --once run is complete. The sink's "database not found"
 *   (create_database on) is passed on through `missing_database`.
 * - The sink's trouble (influx/sink.h ps_sink_trouble: status, message,
 *   since when) is saved in the state's "server" section with every save,
 *   and each episode's start, change of status and end is one of the last
 *   errors, so `perfship status` shows it while the agent runs.
 */
#ifndef PS_PIPELINE_DELIVERY_H
#define PS_PIPELINE_DELIVERY_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "influx/batch.h"
#include "influx/sink.h"
#include "pipeline/commit.h"
#include "pipeline/registry.h"
#include "pipeline/shared.h"

typedef struct pl_delivery_hooks {
  void (*answered)(void *ctx);
  void (*missing_database)(void *ctx);
  /* The points of the subscribed measurements a source's parser gave that
   * were taken into a batch, with the source and file they came from
   * (NULL: none wanted). The judges look here instead of reading the data
   * back. */
  void (*tap)(void *ctx, const ps_point *p, const ps_source_cfg *src, const char *path);
  void *ctx;
} pl_delivery_hooks;

/* The measurements whose points go to the tap. */
#define PL_TAP_MAX 16
typedef struct pl_tap_set {
  unsigned char first[32]; /* a bit per first byte of the names */
  uint64_t lengths;        /* a bit per length (63: 63 or more) */
  const char *name[PL_TAP_MAX];
  size_t len[PL_TAP_MAX];
  size_t n;
} pl_tap_set;

/* A slog batch grew its body from nothing by doublings, each past the
 * mmap threshold a fresh mapping faulted in page by page
 * (docs/benchmarks.md, "Seventh pass"). */
#define PL_AUX_SPARES 4

typedef struct pl_delivery {
  pl_shared *sh;
  pl_registry *reg;
  pl_commit *commit;
  pl_delivery_hooks hooks;
  pl_tap_set taps;
  ps_sink *sink;
  char hostname[256];      /* the `host` tag when the configuration sets none */
  int64_t trouble_since_s; /* the sink's current trouble episode began (0: none) */
  ps_batcher bt;
  uv_timer_t flush_timer;
  ps_tag *tags; /* the configuration's global tags */
  size_t ntags;
  size_t turn_points; /* encoded in this loop turn */
  size_t aux_in_flight;
  ps_body_pool aux_spares; /* acknowledged aux bodies for the next ones */
  uint64_t last_answer_ms; /* uv_now() of the last acknowledgement */
} pl_delivery;

/* Builds the sink for the configuration (sh->cfg: its influxdb group stays
 * for the life of the pipeline). Returns 0 or a negative errno. */
int pl_delivery_init(pl_delivery *d, pl_shared *sh, pl_registry *reg, pl_commit *commit,
                     const pl_delivery_hooks *hooks);
/* Shows the points of `measurement` (static, or outliving the delivery)
 * to the tap from now on. Returns 0, or -ENOSPC past PL_TAP_MAX names. */
int pl_delivery_subscribe(pl_delivery *d, const char *measurement);
/* Applies batch limits and global tags of a reloaded configuration. */
int pl_delivery_reconfigure(pl_delivery *d, const ps_config *cfg);

int pl_delivery_point(void *file, const ps_point *p, const ps_origin *o);
void pl_delivery_reject(void *file, const ps_origin *o, const char *reason);
/* The emitter functions own a file's `yielded` and `record_rejected`: the
 * reader asks them here. A file's turn starts: its yield to the per-turn
 * point budget is forgotten. */
void pl_delivery_file_turn(pl_file *f);
/* Whether a point of the record just parsed was rejected; forgets it for
 * the next record. */
int pl_delivery_take_rejected(pl_file *f);
void pl_delivery_new_turn(pl_delivery *d);
/* Would a point be refused now for back-pressure? */
int pl_delivery_full(const pl_delivery *d);

/* Encodes `p` with the global tags into an aux batch, its origin recorded
 * for messages. Returns 0, or a negative errno with `reason` set when the
 * encoder refused the point. `d` is the delivery (pl_aux_out's ctx). */
int pl_delivery_encode_aux(void *d, ps_pbatch *b, const ps_point *p, const ps_origin *o,
                           const char **reason);
/* Submits an aux batch. A failed submit returns a negative errno, frees
 * nothing and never calls `on_done` (the caller keeps the batch). */
int pl_delivery_send_aux(void *d, ps_pbatch *b, void (*on_done)(void *arg, int acked),
                         void *arg);
/* Both, as the output of stages that write points of their own. */
pl_aux_out pl_delivery_aux_out(pl_delivery *d);

/* Submits the open batch now (shutdown, --once). */
void pl_delivery_flush(pl_delivery *d);
/* Nothing batched, nothing in flight. */
int pl_delivery_quiet(const pl_delivery *d);
size_t pl_delivery_pending_points(const pl_delivery *d);
/* Age of the oldest batch in flight in ms, 0 when none. */
uint64_t pl_delivery_oldest_ms(const pl_delivery *d);
const ps_sink_stats *pl_delivery_sink_stats(const pl_delivery *d);
/* Requests the sink is still working on (batches and aux batches). */
size_t pl_delivery_waiting(const pl_delivery *d);
/* Holds the sink's requests (CREATE DATABASE at start) or releases them. */
void pl_delivery_hold(pl_delivery *d, int hold);

/* Stops the flush timer, cancels what is in flight (never acknowledged:
 * its offsets stay for the next start), frees the open batch. The sink's
 * handles are closed by the time the loop ends. */
void pl_delivery_close(pl_delivery *d);
void pl_delivery_free(pl_delivery *d);

#endif
