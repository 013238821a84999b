/*
 * batch: filling batches of encoded points, and knowing which file offsets
 * may be committed once batches are acknowledged.
 *
 * Contract
 * - Each input file has a ps_cursor. A cursor keeps a FIFO of checkpoints;
 *   a checkpoint covers a run of complete lines (its `end` is the offset
 *   just past the last of them) and counts the batches in flight that hold
 *   points of those lines (`refs`). A line whose points span several batches
 *   (a flush in the middle of it) holds a reference in each of them.
 * - ps_cursor_committed(): the end of the longest prefix of checkpoints
 *   whose batches are all acknowledged. Acknowledgements may come in any
 *   order; an offset never passes a line with a point still in flight, and a
 *   batch that failed (-ECANCELED at shutdown) pins its checkpoints forever.
 * - A point is encoded once, straight into the body it is sent in:
 *   ps_batcher_body() hands out the open batch's body (opening one), the
 *   caller appends one '\n'-terminated line to it, and ps_batcher_commit()
 *   takes that line on behalf of a cursor (or the caller truncates the body
 *   back to `at` and takes nothing). ps_batcher_add() does both for a line
 *   encoded elsewhere. -EAGAIN, taking nothing, when max_pending_bytes are
 *   held by the open batch and the batches in flight (never when both are
 *   empty, so one huge point still passes); the open batch is then
 *   submitted if nothing is in flight (ps_batcher_refuse), else it waits for
 *   acknowledgements to make room and fills on. The open batch is submitted
 *   (through the `submit` callback) once it reaches max_points or max_bytes;
 *   a line that would pass max_bytes goes into the next batch instead.
 *   ps_batcher_flush() submits the open batch early (flush timer, shutdown).
 * - ps_cursor_line_done() marks the end of a line (or document) read by the
 *   cursor, after all of its points were added.
 * - ps_batcher_done() is called once per submitted batch with whether it was
 *   acknowledged; it releases the batch's checkpoints, calls `committed` for
 *   every cursor whose committed offset moved, then frees the batch.
 * - Origins (ps_origin.file) given to ps_batcher_add must stay valid until
 *   the batch holding them is done: the checkpoints a batch holds keep their
 *   cursor alive (ps_cursor.live counts them), and the owner of a cursor
 *   frees it only when it is retired and `live` is 0.
 * - A ps_batch is what the sink sends and acknowledges as one: a body of
 *   '\n'-terminated lines and where they came from, as runs of points (so
 *   that a line the server refuses is reported by file and line). ps_pbatch
 *   wraps it with the checkpoints it holds.
 * - The bodies of acknowledged batches are kept for the next batches (as
 *   many as max_pending holds batches, at most PS_BATCH_SPARES, and none
 *   once nothing is open or in flight): a megabyte body allocated afresh
 *   for every batch cost a page fault per 4 KiB written. A body is
 *   allocated only when no spare is left, so no more bodies live at once
 *   than were in flight together: the peak is the same as without spares.
 * - No libuv here: timers belong to the caller, so this logic is testable.
 */
#ifndef PS_INFLUX_BATCH_H
#define PS_INFLUX_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/emit.h"

/* Where a run of consecutive points of a batch came from: `count` points
 * from `file`, the first from `line`. With `step` 1 each point comes from
 * the line after the previous one (a stream of one point per line), with 0
 * from the same line (a record that gives several points). A steady stream
 * needs one record per batch instead of one per line. */
typedef struct ps_batch_run {
  const char *file;
  uint64_t line;
  size_t first; /* index of its first point in the batch */
  uint32_t count;
  uint32_t step;
} ps_batch_run;

/* What the sink sends and acknowledges as one (influx/sink.h). */
typedef struct ps_batch {
  ps_buf body;          /* '\n'-terminated lines, one per point */
  size_t npoints;
  ps_batch_run *runs;   /* origins of the points, in body order (may be NULL) */
  size_t nruns, runs_cap;
  size_t last_offset;   /* start of the line whose origin was added last */
  int disorder;         /* an origin was added for a line before the last one */
  void *data;           /* the submitter's */
} ps_batch;

void ps_batch_init(ps_batch *b);
/* Appends the origin of the next point, whose line starts at `offset` of the
 * body (origins are added in body order; a batch that broke the order is
 * refused by the sink). 0 or -ENOMEM. */
int ps_batch_add_line_origin(ps_batch *b, size_t offset, const ps_origin *o);
/* Where point i came from; {NULL, i + 1} for a batch without origins. */
ps_origin ps_batch_origin(const ps_batch *b, size_t i);
/* Frees body and origins; the struct may be reused after ps_batch_init. NULL ok. */
void ps_batch_free(ps_batch *b);

typedef struct ps_pbatch ps_pbatch;
typedef struct ps_checkpoint ps_checkpoint;

typedef struct ps_cursor {
  ps_checkpoint *head, *tail;
  uint64_t last_end, last_line; /* end of the last completed line */
  uint64_t last_doc_hash;
  uint64_t committed, committed_line, committed_doc_hash;
  int line_open; /* the current line already gave points */
  int retired;   /* no more commits wanted; free at refs 0 */
  size_t live;   /* checkpoints alive (hold the cursor) */
  uint64_t done_seq; /* the batch whose answer last listed this cursor */
  void *owner;
} ps_cursor;

struct ps_checkpoint {
  ps_checkpoint *next;
  ps_cursor *cursor;
  uint64_t end, line, doc_hash;
  size_t refs;
  int sealed;
  int seal_at_line_end; /* its batch left mid-line: seal when the line ends */
  int failed;
  uint64_t last_seq; /* the batch that took a reference last */
};

struct ps_pbatch {
  ps_batch b; /* what the sink sees; b.data points back here */
  ps_checkpoint **cps;
  size_t ncps, cps_cap;
  uint64_t seq;
  uint64_t created_ms;
  /* A batch outside the checkpoint machinery (run markers, self-metrics):
   * its sender's callback, called once with whether it was acknowledged. */
  void (*on_done)(void *arg, int acked);
  void *done_arg;
  ps_pbatch *prev, *next; /* in flight */
};

/* The most bodies kept for reuse; the batcher keeps fewer when fewer
 * batches fit in max_pending (ps_batcher_init). */
#define PS_BATCH_SPARES 16

/* Bodies of answered batches kept for the next ones: a megabyte body
 * mapped afresh for every batch cost a page fault per 4 KiB written. The
 * owner sets `max` (at most PS_BATCH_SPARES) and says when to keep none:
 * the batcher for its batches, the delivery for the aux batches beside
 * them (pipeline/delivery.h). */
typedef struct ps_body_pool {
  ps_buf bodies[PS_BATCH_SPARES];
  size_t n, max;
} ps_body_pool;

/* A kept body into *body, emptied with its capacity: 1, or 0 when none is
 * kept (*body untouched). */
int ps_body_pool_take(ps_body_pool *pool, ps_buf *body);
/* Keeps *body, leaving it empty, when there is room and its capacity is
 * at least `worth`; otherwise *body stays the caller's to free. */
void ps_body_pool_keep(ps_body_pool *pool, ps_buf *body, size_t worth);
void ps_body_pool_free(ps_body_pool *pool);

typedef struct ps_batcher {
  size_t max_points, max_bytes, max_pending;
  size_t pending_bytes, pending_points; /* open + in flight */
  size_t inflight_count;
  size_t hint_bytes, hint_points; /* the last full batch: sizes the next one */
  uint64_t next_seq;
  ps_pbatch *open;
  ps_pbatch *inflight_head, *inflight_tail;
  ps_body_pool spares; /* bodies of finished batches, for reuse */
  int (*submit)(void *ctx, ps_pbatch *b);
  void (*committed)(void *ctx, ps_cursor *c);
  void *ctx;
} ps_batcher;

void ps_cursor_init(ps_cursor *c, uint64_t offset, uint64_t line, void *owner);
/* Drops checkpoints not held by any batch (for a cursor being retired). */
void ps_cursor_release(ps_cursor *c);
/* `line` is the number of the line starting at `end`. Returns 1 when the
 * committed offset moved (a line without points commits at once), else 0,
 * or a negative errno. */
int ps_cursor_line_done(ps_cursor *c, uint64_t end, uint64_t line, uint64_t doc_hash);
uint64_t ps_cursor_committed(const ps_cursor *c);

/* Sets the limits (0: the default of each) and how many spare bodies
 * they allow; at init and on a reload. */
void ps_batcher_limits(ps_batcher *bt, size_t max_points, size_t max_bytes, size_t max_pending);
void ps_batcher_init(ps_batcher *bt, size_t max_points, size_t max_bytes,
                     size_t max_pending, int (*submit)(void *, ps_pbatch *),
                     void (*committed)(void *, ps_cursor *), void *ctx);
/* The body to encode the next point into, and where that point starts.
 * 0, -EAGAIN (full: ps_batcher_refuse) or -ENOMEM. */
int ps_batcher_body(ps_batcher *bt, ps_buf **body, size_t *at);
/* Takes the line appended to the body since `at` (ps_batcher_body) on
 * behalf of cursor `c` (NULL: none). On failure the line is dropped. */
int ps_batcher_commit(ps_batcher *bt, ps_cursor *c, size_t at, const ps_origin *origin);
/* Both, for a line encoded elsewhere. */
int ps_batcher_add(ps_batcher *bt, ps_cursor *c, const char *line, size_t len,
                   const ps_origin *origin);
/* Would an add be refused now? (Inline: asked for every point, from the
 * delivery.) */
static inline int ps_batcher_full(const ps_batcher *bt) {
  return bt->pending_bytes > 0 && bt->pending_bytes >= bt->max_pending;
}
/* What a refusal does: submits the open batch when nothing is in flight
 * (else acknowledgements make room). Returns -EAGAIN. */
int ps_batcher_refuse(ps_batcher *bt);
int ps_batcher_flush(ps_batcher *bt);
void ps_batcher_done(ps_batcher *bt, ps_pbatch *b, int acked);
/* The oldest batch in flight, or NULL. */
const ps_pbatch *ps_batcher_oldest(const ps_batcher *bt);
/* Frees the open batch (its checkpoints are released unacknowledged) and
 * the spare bodies. */
void ps_batcher_free(ps_batcher *bt);

/* A batch outside the checkpoint machinery (markers, self-metrics). */
ps_pbatch *ps_pbatch_new(void);
void ps_pbatch_free(ps_pbatch *b);

#endif
