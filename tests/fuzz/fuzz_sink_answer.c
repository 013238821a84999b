/*
 * fuzz_sink_answer.c: InfluxDB's answer to a write, as the sink reads it
 * (agent/influx/sink_answer.c): the JSON error text, the lines it names as
 * unparsable, "dropped=N", and how the rest of the batch is then split,
 * resent or taken as stored.
 *
 * Input: the answer body, a NUL byte, then the line-protocol body that was
 * sent (tests/fuzz/corpus/sink_answer/ holds real 1.6.7 answers).
 * Property: after the sink handles a 400 or 422, every line of the body is
 * accounted for exactly once: rejected, counted as written, or inside a
 * piece queued to be sent again; and a rejected line is one of the body's.
 *
 * DESIGN: the answer handling is internal to the sink, declared in its
 * private header (agent/influx/sink_private.h) rather than in
 * include/influx/sink.h, so the sink's contract stays narrow. The target
 * builds a sink state by hand, without a loop that runs or a transport.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../agent/influx/sink_private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t body_lines;

static void on_reject_check(ps_sink *s, const ps_origin *o, const char *line,
                            size_t len, const char *reason) {
  (void)s;
  (void)line;
  (void)len;
  if (o->line < 1 || o->line > body_lines || !reason)
    abort();
}

static void on_done_check(ps_sink *s, ps_batch *b, int status,
                          size_t rejected) {
  (void)s;
  (void)b;
  if (status != 0 || rejected > body_lines)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static uv_loop_t loop;
  static int loop_ready;
  if (!loop_ready) {
    if (uv_loop_init(&loop))
      abort();
    loop_ready = 1;
  }
  const uint8_t *nul = memchr(data, 0, size);
  if (!nul || size < 2)
    return 0;
  size_t alen = (size_t)(nul - data);
  long code = (alen && data[0] == '{') ? 400 : 422;

  ps_sink s;
  memset(&s, 0, sizeof s);
  s.loop = &loop;
  s.rng = 1;
  s.on_reject = on_reject_check;
  s.done = on_done_check;

  ps_buf answer;
  ps_buf_init(&answer, 0);
  ps_batch b;
  ps_batch_init(&b);
  tracked *t = calloc(1, sizeof *t);
  piece *p = ps_sink_piece_new(t, 0, 0);
  if (!t || !p || ps_buf_append(&answer, data, alen) ||
      ps_buf_append(&b.body, nul + 1, size - alen - 1))
    abort();
  t->batch = &b;
  if (ps_sink_index_lines(t))
    abort();
  body_lines = t->nlines;
  t->open_pieces = 1;
  s.batches = t;
  s.nbatches = 1;
  p->l1 = t->nlines;

  char *msg = ps_sink_answer_message(&answer);
  if (!msg)
    abort();
  if (ps_sink_is_data_error(code, msg))
    ps_sink_on_data_error(&s, p, msg);
  else
    ps_sink_on_too_large(&s, p);
  free(msg);

  size_t queued = 0, npieces = 0;
  piece *q;
  while ((q = ps_sink_queue_pop(&s))) {
    if (q->t != t || q->l0 >= q->l1 || q->l1 > body_lines)
      abort();
    queued += q->l1 - q->l0;
    npieces++;
    free(q);
  }
  if (queued + s.stats.points_written + s.stats.points_rejected != body_lines)
    abort();
  if (npieces) {
    /* The batch is open exactly as long as pieces of it are. */
    if (s.nbatches != 1 || t->open_pieces != npieces)
      abort();
    free(t->offsets);
    free(t);
  } else if (s.nbatches != 0) {
    abort();
  }
  ps_batch_free(&b);
  ps_buf_free(&answer);
  return 0;
}
