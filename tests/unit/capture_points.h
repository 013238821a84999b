/*
 * capture_points.h: an emitter for unit tests that copies every point and
 * reject a parser hands over, so a test can look points up by measurement
 * and tags and check their fields, types and times. It can also refuse
 * points with -EAGAIN on chosen calls, to exercise the resume rule of emit.h.
 * Header-only so each test program gets its own copy.
 */
#ifndef PS_TEST_CAPTURE_POINTS_H
#define PS_TEST_CAPTURE_POINTS_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "point.h"

#define CAP_MAX_TAGS 16
#define CAP_MAX_FIELDS 64

typedef struct cap_field {
  char *key;
  ps_ftype type;
  double f;
  int64_t i;
  int b;
  char *s;
} cap_field;

typedef struct cap_point {
  char *measurement;
  char *tag_keys[CAP_MAX_TAGS];
  char *tag_values[CAP_MAX_TAGS];
  size_t ntags;
  cap_field fields[CAP_MAX_FIELDS];
  size_t nfields;
  int64_t time_ns;
  uint64_t line;
} cap_point;

typedef struct cap_reject {
  uint64_t line;
  char *reason;
} cap_reject;

typedef struct capture {
  cap_point *points;
  size_t npoints, cap;
  cap_reject *rejects;
  size_t nrejects;
  /* refuse with -EAGAIN every `refuse_every`-th offered point (0: never) */
  size_t refuse_every;
  size_t offered;
} capture;

static inline char *cap_strndup(const char *s, size_t n) {
  char *d = malloc(n + 1);
  memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

static inline int cap_on_point(void *ctx, const ps_point *p,
                               const ps_origin *o) {
  capture *c = ctx;
  c->offered++;
  if (c->refuse_every && c->offered % c->refuse_every == 0)
    return -EAGAIN;
  if (c->npoints == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 64;
    c->points = realloc(c->points, c->cap * sizeof *c->points);
  }
  cap_point *cp = &c->points[c->npoints++];
  memset(cp, 0, sizeof *cp);
  cp->measurement = strdup(p->measurement);
  for (size_t i = 0; i < p->ntags && i < CAP_MAX_TAGS; i++) {
    cp->tag_keys[i] = strdup(p->tags[i].key);
    cp->tag_values[i] = strdup(p->tags[i].value);
    cp->ntags++;
  }
  for (size_t i = 0; i < p->nfields && i < CAP_MAX_FIELDS; i++) {
    cap_field *f = &cp->fields[cp->nfields++];
    f->key = strdup(p->fields[i].key);
    f->type = p->fields[i].type;
    switch (f->type) {
    case PS_F_FLOAT:
      f->f = p->fields[i].v.f;
      break;
    case PS_F_INT:
      f->i = p->fields[i].v.i;
      break;
    case PS_F_UINT:
      f->i = (int64_t)p->fields[i].v.u;
      break;
    case PS_F_BOOL:
      f->b = p->fields[i].v.b;
      break;
    case PS_F_STRING:
      f->s = cap_strndup(p->fields[i].v.s.p, p->fields[i].v.s.n);
      break;
    }
  }
  cp->time_ns = p->time_ns;
  cp->line = o ? o->line : 0;
  return 0;
}

static inline void cap_on_reject(void *ctx, const ps_origin *o,
                                 const char *reason) {
  capture *c = ctx;
  c->rejects = realloc(c->rejects, (c->nrejects + 1) * sizeof *c->rejects);
  c->rejects[c->nrejects].line = o ? o->line : 0;
  c->rejects[c->nrejects].reason = strdup(reason);
  c->nrejects++;
}

static inline ps_emitter cap_emitter(capture *c, const char *file) {
  ps_emitter em;
  memset(&em, 0, sizeof em);
  em.point = cap_on_point;
  em.reject = cap_on_reject;
  em.ctx = c;
  em.origin.file = file;
  return em;
}

static inline void cap_free(capture *c) {
  for (size_t i = 0; i < c->npoints; i++) {
    cap_point *p = &c->points[i];
    free(p->measurement);
    for (size_t t = 0; t < p->ntags; t++) {
      free(p->tag_keys[t]);
      free(p->tag_values[t]);
    }
    for (size_t f = 0; f < p->nfields; f++) {
      free(p->fields[f].key);
      free(p->fields[f].s);
    }
  }
  free(c->points);
  for (size_t i = 0; i < c->nrejects; i++)
    free(c->rejects[i].reason);
  free(c->rejects);
  memset(c, 0, sizeof *c);
}

static inline const char *cap_tag(const cap_point *p, const char *key) {
  for (size_t i = 0; i < p->ntags; i++)
    if (strcmp(p->tag_keys[i], key) == 0)
      return p->tag_values[i];
  return NULL;
}

static inline const cap_field *cap_field_of(const cap_point *p,
                                            const char *key) {
  for (size_t i = 0; i < p->nfields; i++)
    if (strcmp(p->fields[i].key, key) == 0)
      return &p->fields[i];
  return NULL;
}

/* The n-th (0-based) point of `measurement` whose tags include every
 * "key=value" pair given (NULL-terminated list), or NULL. */
static inline const cap_point *cap_find_nth(const capture *c,
                                            const char *measurement, size_t n,
                                            const char *const *kv) {
  for (size_t i = 0; i < c->npoints; i++) {
    const cap_point *p = &c->points[i];
    if (strcmp(p->measurement, measurement) != 0)
      continue;
    int ok = 1;
    for (size_t k = 0; kv && kv[k] && ok; k++) {
      const char *eq = strchr(kv[k], '=');
      char key[128];
      size_t kl = (size_t)(eq - kv[k]);
      memcpy(key, kv[k], kl);
      key[kl] = '\0';
      const char *v = cap_tag(p, key);
      ok = v && strcmp(v, eq + 1) == 0;
    }
    if (ok && n-- == 0)
      return p;
  }
  return NULL;
}

static inline size_t cap_count(const capture *c, const char *measurement) {
  size_t n = 0;
  for (size_t i = 0; i < c->npoints; i++)
    n += strcmp(c->points[i].measurement, measurement) == 0;
  return n;
}

#endif
