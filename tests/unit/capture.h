/*
 * A capturing emitter for the loadgen/runs unit tests: points become text
 * ("measurement|k=v,...|field:type=value,...|time", tags sorted) so a test
 * reads like the line protocol a user would look at.
 */
#ifndef PS_TEST_CAPTURE_H
#define PS_TEST_CAPTURE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "emit.h"

#define CAP_UNUSED __attribute__((unused))

typedef struct capture {
  char **pts;
  size_t n, cap;
  int rejects;
  char last_reject[512];
  int refuse_every; /* >0: refuse every Nth offered point with -EAGAIN */
  int offered;
} capture;

CAP_UNUSED static int cmp_tag(const void *a, const void *b) {
  return strcmp(((const ps_tag *)a)->key, ((const ps_tag *)b)->key);
}

CAP_UNUSED static int cap_point(void *ctx, const ps_point *p, const ps_origin *o) {
  (void)o;
  capture *c = ctx;
  c->offered++;
  if (c->refuse_every && c->offered % c->refuse_every == 0)
    return -EAGAIN;
  ps_tag tags[16];
  if (p->ntags > 16)
    return -E2BIG;
  memcpy(tags, p->tags, p->ntags * sizeof *tags);
  qsort(tags, p->ntags, sizeof *tags, cmp_tag);
  ps_buf b;
  ps_buf_init(&b, 0);
  ps_buf_printf(&b, "%s|", p->measurement);
  for (size_t i = 0; i < p->ntags; i++)
    ps_buf_printf(&b, "%s%s=%s", i ? "," : "", tags[i].key, tags[i].value);
  ps_buf_puts(&b, "|");
  for (size_t i = 0; i < p->nfields; i++) {
    const ps_field *f = &p->fields[i];
    ps_buf_printf(&b, "%s%s:", i ? "," : "", f->key);
    switch (f->type) {
    case PS_F_FLOAT:
      ps_buf_printf(&b, "f=%.17g", f->v.f);
      break;
    case PS_F_INT:
      ps_buf_printf(&b, "i=%lld", (long long)f->v.i);
      break;
    case PS_F_UINT:
      ps_buf_printf(&b, "u=%llu", (unsigned long long)f->v.u);
      break;
    case PS_F_BOOL:
      ps_buf_printf(&b, "b=%s", f->v.b ? "true" : "false");
      break;
    case PS_F_STRING:
      ps_buf_printf(&b, "s=%.*s", (int)f->v.s.n, f->v.s.p);
      break;
    }
  }
  ps_buf_printf(&b, "|%lld", (long long)p->time_ns);
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 64;
    c->pts = realloc(c->pts, c->cap * sizeof *c->pts);
  }
  c->pts[c->n++] = b.data;
  return 0;
}

CAP_UNUSED static void cap_reject(void *ctx, const ps_origin *o, const char *reason) {
  (void)o;
  capture *c = ctx;
  c->rejects++;
  snprintf(c->last_reject, sizeof c->last_reject, "%s", reason);
}

CAP_UNUSED static void cap_free(capture *c) {
  for (size_t i = 0; i < c->n; i++)
    free(c->pts[i]);
  free(c->pts);
  memset(c, 0, sizeof *c);
}

CAP_UNUSED static ps_emitter cap_emitter(capture *c) {
  ps_emitter em = {cap_point, cap_reject, c, {"perf.jsonl", 0}};
  return em;
}

/* The captured point of `measurement` whose text contains every needle. */
CAP_UNUSED static const char *find_pt(const capture *c, const char *measurement,
                           const char *needle1, const char *needle2) {
  size_t ml = strlen(measurement);
  for (size_t i = 0; i < c->n; i++) {
    if (strncmp(c->pts[i], measurement, ml) != 0 || c->pts[i][ml] != '|')
      continue;
    if (needle1 && !strstr(c->pts[i], needle1))
      continue;
    if (needle2 && !strstr(c->pts[i], needle2))
      continue;
    return c->pts[i];
  }
  return NULL;
}

CAP_UNUSED static size_t count_pts(const capture *c, const char *measurement) {
  size_t n = 0, ml = strlen(measurement);
  for (size_t i = 0; i < c->n; i++)
    if (strncmp(c->pts[i], measurement, ml) == 0 && c->pts[i][ml] == '|')
      n++;
  return n;
}

#endif
