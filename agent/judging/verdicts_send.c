/*
 * verdicts_send.c: verdict points in aux batches, answered as one.
 * See include/judging/verdicts_send.h.
 */
#include "judging/verdicts_send.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"

/* One list in flight: its batches' answers, counted down. */
typedef struct sending {
  pl_aux_out out;
  void (*done)(void *arg, int ok);
  void *arg;
  size_t batches; /* in flight, plus one while sending */
  int failed;
  ps_pbatch *b;   /* being filled */
  size_t in_batch;
  jd_verdicts_sent *sent;
  uint64_t (*told)[2]; /* (key, content) of each point sent, for `sent` */
  size_t ntold, told_cap;
} sending;

/* A point's parts hashed: the series and time as the key, every field as
 * the content (a field's own digits, when it has them, are what is
 * written, so they are what is compared). */
static uint64_t mix(uint64_t h, const void *p, size_t n) { return ps_hash64(h, p, n); }

static uint64_t mix_str(uint64_t h, const char *s) { return mix(h, s ? s : "", s ? strlen(s) + 1 : 1); }

static void point_hashes(const ps_point *p, uint64_t *key, uint64_t *content) {
  uint64_t k = mix_str(PS_HASH_SEED, p->measurement);
  for (size_t i = 0; i < p->ntags; i++)
    k = mix_str(mix_str(k, p->tags[i].key), p->tags[i].value);
  k = mix(k, &p->time_ns, sizeof p->time_ns);
  uint64_t c = k;
  for (size_t i = 0; i < p->nfields; i++) {
    const ps_field *f = &p->fields[i];
    c = mix(mix_str(c, f->key), &f->type, sizeof f->type);
    if (f->text)
      c = mix(c, f->text, f->text_len);
    else if (f->type == PS_F_STRING)
      c = mix(c, f->v.s.p, f->v.s.n);
    else
      c = mix(c, &f->v, sizeof f->v);
  }
  *key = k;
  *content = c;
}

static void batch_done(void *arg, int acked) {
  sending *s = arg;
  if (!acked)
    s->failed = 1;
  if (--s->batches)
    return;
  void (*done)(void *, int) = s->done;
  void *done_arg = s->arg;
  int ok = !s->failed;
  for (size_t i = 0; ok && s->sent && i < s->ntold; i++) {
    size_t slot = s->told[i][0] % JD_VERDICTS_SENT_SLOTS;
    s->sent->key[slot] = s->told[i][0];
    s->sent->content[slot] = s->told[i][1];
  }
  free(s->told);
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
  uint64_t key = 0, content = 0;
  if (s->sent) {
    point_hashes(p, &key, &content);
    size_t slot = key % JD_VERDICTS_SENT_SLOTS;
    if (s->sent->key[slot] == key && s->sent->content[slot] == content)
      return 0; /* the server has it, exactly */
    if (s->ntold == s->told_cap) {
      size_t cap = s->told_cap ? 2 * s->told_cap : 64;
      void *grown = realloc(s->told, cap * sizeof *s->told);
      if (!grown)
        return -ENOMEM;
      s->told = grown;
      s->told_cap = cap;
    }
  }
  if (!s->b && !(s->b = ps_pbatch_new()))
    return -ENOMEM;
  const char *reason = NULL;
  int rc = s->out.encode(s->out.ctx, s->b, p, o, &reason);
  if (rc < 0 && reason) {
    ps_log_limited(PS_LOG_WARNING, "verdicts", "encode", 60, "verdict of %s refused: %s",
                   o->file, reason);
    return 0;
  }
  if (rc == 0 && s->sent) {
    s->told[s->ntold][0] = key;
    s->told[s->ntold++][1] = content;
  }
  if (rc == 0 && ++s->in_batch >= JD_VERDICTS_PER_BATCH)
    flush(s);
  return rc;
}

int jd_verdicts_send(const pl_aux_out *out, jd_verdicts_sent *sent, const ps_verdict_list *l,
                     void (*done)(void *arg, int ok), void *arg) {
  sending *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  *s = (sending){.out = *out, .done = done, .arg = arg, .batches = 1, .sent = sent};
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
