/*
 * verdicts_send.c: verdict points in aux batches, answered as one.
 * See include/judging/verdicts_send.h.
 */
#include "judging/verdicts_send.h"

#include <errno.h>
#include <stdlib.h>

#include "core/log.h"

/* One list in flight: its batches' answers, counted down. */
typedef struct sending {
  pl_aux_out out;
  void (*done)(void *arg, int ok);
  void *arg;
  size_t batches; /* in flight, plus one while sending */
  int failed;
  ps_pbatch *b;   /* being filled */
  size_t in_batch;
} sending;

static void batch_done(void *arg, int acked) {
  sending *s = arg;
  if (!acked)
    s->failed = 1;
  if (--s->batches)
    return;
  void (*done)(void *, int) = s->done;
  void *done_arg = s->arg;
  int ok = !s->failed;
  free(s);
  done(done_arg, ok);
}

static void flush(sending *s) {
  if (!s->b || !s->b->b.npoints)
    return;
  if (s->out.send(s->out.ctx, s->b, batch_done, s) < 0) {
    ps_pbatch_free(s->b);
    s->failed = 1;
  } else {
    s->batches++;
  }
  s->b = NULL;
  s->in_batch = 0;
}

static int verdict_point(void *ctx, const ps_point *p, const ps_origin *o) {
  sending *s = ctx;
  if (!s->b && !(s->b = ps_pbatch_new()))
    return -ENOMEM;
  const char *reason = NULL;
  int rc = s->out.encode(s->out.ctx, s->b, p, o, &reason);
  if (rc < 0 && reason) {
    ps_log_limited(PS_LOG_WARNING, "verdicts", "encode", 60, "verdict of %s refused: %s",
                   o->file, reason);
    return 0;
  }
  if (rc == 0 && ++s->in_batch >= PL_VERDICTS_PER_BATCH)
    flush(s);
  return rc;
}

int pl_verdicts_send(const pl_aux_out *out, const ps_verdict_list *l,
                     void (*done)(void *arg, int ok), void *arg) {
  sending *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  *s = (sending){.out = *out, .done = done, .arg = arg, .batches = 1};
  ps_emitter em = {.point = verdict_point, .reject = NULL, .ctx = s};
  for (size_t i = 0; i < l->n; i++) {
    em.origin.file = l->v[i].run;
    if (ps_verdict_emit(&em, &l->v[i]) < 0)
      s->failed = 1;
  }
  flush(s);
  batch_done(s, 1); /* the hold taken while sending */
  return 0;
}
