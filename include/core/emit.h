/*
 * emit: how a producer of points (a format parser; also the run markers
 * and the verdicts) hands its results to whoever drives it. It is part of
 * core because every layer speaks it: formats produce through it, the
 * batches keep its origins, the pipeline and `convert` drive it.
 *
 * Contract
 * - A parser calls ps_emit_point() for every point and ps_emit_reject() for
 *   every record (line, row, document) it cannot use, with a reason that says
 *   what is wrong. The driver decides what happens: `convert` encodes to
 *   stdout and prints rejects as FILE:LINE: reason; `run` encodes into a batch
 *   and counts rejects in the self-metrics.
 * - `origin` names where the data came from; parsers fill `line` (1-based,
 *   0 when the unit is a whole document) and leave `file` as given.
 * - ps_emit_point() returns 0, or a negative errno when the driver could not
 *   take the point (e.g. -ENOMEM).
 * - Back-pressure: ps_emit_point() returns -EAGAIN when the pipeline holds
 *   max_pending_bytes and cannot take more now. The point was NOT taken. The
 *   parser then returns -EAGAIN from line()/document() and remembers how many
 *   points of this record it already emitted; the driver calls it again later
 *   with the same record, and the parser resumes with the refused point
 *   (never re-emitting accepted ones). A parser may cache its parse of the
 *   record between such calls (loadgen's 10 MB perf-finish line is parsed
 *   once). `convert` never returns -EAGAIN.
 * - A point the encoder refuses (NaN, a key
 *   named `time`, ...) is not an error for the parser: the driver reports it as
 *   a rejected point with its origin and returns 0.
 */
#ifndef PS_CORE_EMIT_H
#define PS_CORE_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "core/point.h"

typedef struct ps_origin {
  const char *file;
  uint64_t line;
} ps_origin;

typedef struct ps_emitter {
  int (*point)(void *ctx, const ps_point *p, const ps_origin *o);
  void (*reject)(void *ctx, const ps_origin *o, const char *reason);
  void *ctx;
  ps_origin origin; /* the current record; parsers update `line` */
} ps_emitter;

static inline int ps_emit_point(ps_emitter *em, const ps_point *p) {
  return em->point(em->ctx, p, &em->origin);
}

/* "FILE:LINE" into buf, or just "FILE" for a whole document (line 0), so
 * every message names its place the same way. Returns buf. */
const char *ps_origin_str(char *buf, size_t n, const char *file, uint64_t line);

void ps_emit_reject(ps_emitter *em, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
