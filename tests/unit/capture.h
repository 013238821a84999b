/*
 * capture.h: the one emitter the unit tests hand to a parser. It keeps a
 * copy of every point and reject so a test can check what a user would see:
 * - structured: look a point up by measurement and tags (cap_find_nth), read
 *   its tags and typed fields (cap_tag, cap_float, cap_int);
 * - as text: each point is also rendered as
 *   "measurement|k=v,...|field:type=value,...|time" with tags sorted
 *   (cap_point.text, cap_find_text), so a test can read like the line
 *   protocol it stands for and compare two runs point by point.
 * It can also refuse every Nth offered point with -EAGAIN to exercise the
 * resume rule of emit.h. Header-only so each test program gets its own copy;
 * include it after <cmocka.h>.
 */
#ifndef PS_TEST_CAPTURE_H
#define PS_TEST_CAPTURE_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/emit.h"
#include "formats/format.h"
#include "core/point.h"
#include "input/feed.h"

#define CAP_MAX_TAGS 16
#define CAP_MAX_FIELDS 64

typedef struct cap_field {
  char *key;
  ps_ftype type;
  double f;
  int64_t i; /* PS_F_INT, and PS_F_UINT cast */
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
  char *text; /* "measurement|tags sorted|fields|time" */
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

static inline int cap_cmp_tag(const void *a, const void *b) {
  return strcmp(((const ps_tag *)a)->key, ((const ps_tag *)b)->key);
}

static inline char *cap_render(const ps_point *p) {
  ps_tag tags[CAP_MAX_TAGS];
  memcpy(tags, p->tags, p->ntags * sizeof *tags);
  qsort(tags, p->ntags, sizeof *tags, cap_cmp_tag);
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
  return b.data;
}

static inline int cap_on_point(void *ctx, const ps_point *p,
                               const ps_origin *o) {
  capture *c = ctx;
  c->offered++;
  if (c->refuse_every && c->offered % c->refuse_every == 0)
    return -EAGAIN;
  /* more than the copy can hold fails loudly instead of losing data */
  if (p->ntags > CAP_MAX_TAGS || p->nfields > CAP_MAX_FIELDS)
    return -E2BIG;
  if (c->npoints == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 64;
    c->points = realloc(c->points, c->cap * sizeof *c->points);
  }
  cap_point *cp = &c->points[c->npoints++];
  memset(cp, 0, sizeof *cp);
  cp->measurement = strdup(p->measurement);
  for (size_t i = 0; i < p->ntags; i++) {
    cp->tag_keys[i] = strdup(p->tags[i].key);
    cp->tag_values[i] = strdup(p->tags[i].value);
    cp->ntags++;
  }
  for (size_t i = 0; i < p->nfields; i++) {
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
  cp->text = cap_render(p);
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
    free(p->text);
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

/* The reason of the latest reject, or "" when there was none. */
static inline const char *cap_last_reject(const capture *c) {
  return c->nrejects ? c->rejects[c->nrejects - 1].reason : "";
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

/* The value of a field that must be there with that type. */
static inline double cap_float(const cap_point *p, const char *key) {
  const cap_field *f = cap_field_of(p, key);
  assert_non_null(f);
  assert_int_equal(f->type, PS_F_FLOAT);
  return f->f;
}

static inline int64_t cap_int(const cap_point *p, const char *key) {
  const cap_field *f = cap_field_of(p, key);
  assert_non_null(f);
  assert_int_equal(f->type, PS_F_INT);
  return f->i;
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

/* The text of the first point of `measurement` whose text contains every
 * needle given (NULL: no condition), or NULL. */
static inline const char *cap_find_text(const capture *c,
                                        const char *measurement,
                                        const char *needle1,
                                        const char *needle2) {
  for (size_t i = 0; i < c->npoints; i++) {
    const cap_point *p = &c->points[i];
    if (strcmp(p->measurement, measurement) != 0)
      continue;
    if (needle1 && !strstr(p->text, needle1))
      continue;
    if (needle2 && !strstr(p->text, needle2))
      continue;
    return p->text;
  }
  return NULL;
}

static inline size_t cap_count(const capture *c, const char *measurement) {
  size_t n = 0;
  for (size_t i = 0; i < c->npoints; i++)
    n += strcmp(c->points[i].measurement, measurement) == 0;
  return n;
}

/* A whole file's bytes, NUL-terminated; the test fails if it cannot. */
static inline char *cap_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *d = malloc((size_t)n + 1);
  assert_int_equal(fread(d, 1, (size_t)n, f), (size_t)n);
  d[n] = '\0';
  fclose(f);
  *len = (size_t)n;
  return d;
}

/* A parser of `ops` opened on `path`, which the format must read as `kind`,
 * with the head the driver reads for it (input/feed.h); the test fails if
 * it cannot. */
static inline ps_parser *cap_open(const ps_format_ops *ops, const char *path,
                                  ps_input_kind kind) {
  assert_int_equal(ops->input_kind(NULL, path), kind);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  assert_true(fd >= 0);
  ps_head_buf hb;
  assert_int_equal(ps_input_read_head(fd, path, ops, kind, &hb), 0);
  close(fd);
  ps_parser *p = NULL;
  ps_buf err;
  ps_buf_init(&err, 0);
  assert_int_equal(ops->open(&p, NULL, &hb.head, &err), 0);
  ps_buf_free(&err);
  ps_head_buf_free(&hb);
  return p;
}

/* Runs a whole document through a document parser the way the driver does,
 * calling again after every -EAGAIN. */
static inline void cap_convert_document(const ps_format_ops *ops,
                                        const char *path, capture *cap) {
  ps_parser *p = cap_open(ops, path, PS_INPUT_DOCUMENT);
  size_t len;
  char *data = cap_slurp(path, &len);
  ps_emitter em = cap_emitter(cap, path);
  int rc, rounds = 0;
  while ((rc = ops->document(p, data, len, &em)) == -EAGAIN)
    assert_true(++rounds < 100000);
  assert_int_equal(rc, 0);
  free(data);
  ops->free(p);
}

#endif
