/*
 * formats/loadgen_points.c: the point a loadgen record becomes, and the
 * JSON values it is made of (agent/formats/loadgen_private.h; the fields
 * of each measurement are in docs/schema.md).
 *
 * - Points borrow their strings from the parser: keys and string values
 *   are unescaped into an arena emptied at each point, so building a point
 *   allocates nothing once the first chunk exists.
 * - Types follow docs/schema.md's integer list by field name; every other
 *   number is a float, whatever the JSON text looked like. A null, a
 *   missing key, a non-finite number or a non-integral value for an
 *   integer field is an absent field, never a zero.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "influx/numfmt.h"
#include "loadgen_private.h"

#define ARENA_CHUNK 16384

/* Called for every member of every record. */
static int in_list(const char *const *list, const char *s) {
  for (; list && *list; list++)
    if (ps_same_str(*list, s))
      return 1;
  return 0;
}

/* ---- JSON values ------------------------------------------------------- */

/* A NUL-terminated copy of `n` bytes that lives until the next
 * lg_arena_reset. */
static char *arena_take(ps_parser *p, size_t n) {
  lg_arena_chunk *c = p->pt.arena;
  if (!c || c->cap - c->used < n + 1) {
    size_t cap = n + 1 > ARENA_CHUNK ? n + 1 : ARENA_CHUNK;
    lg_arena_chunk *nc = malloc(sizeof *nc + cap);
    if (!nc)
      return NULL;
    nc->used = 0;
    nc->cap = cap;
    nc->next = c;
    p->pt.arena = c = nc;
  }
  char *s = c->data + c->used;
  c->used += n + 1;
  return s;
}

/* Keeps the first chunk (a point's strings fit it) and empties it. */
void lg_arena_reset(ps_parser *p) {
  lg_arena_chunk *c = p->pt.arena;
  if (!c)
    return;
  while (c->next) {
    lg_arena_chunk *n = c->next;
    free(c);
    c = n;
  }
  c->used = 0;
  p->pt.arena = c;
}

/* The unescaped text of a key span or a string value, in the arena. */
const char *lg_span_str(ps_parser *p, ps_jv inner) {
  size_t n = (size_t)(inner.end - inner.p);
  char *s = arena_take(p, n);
  if (!s)
    return NULL;
  if (!memchr(inner.p, '\\', n)) {
    memcpy(s, inner.p, n);
    s[n] = '\0';
    return s;
  }
  ps_buf b = {s, 0, n + 1, 0}; /* room for n bytes and the NUL, no realloc */
  size_t off, len;
  if (ps_jkey_string(inner, &b, &off, &len) < 0)
    return NULL;
  return s;
}

/* A string value's text (NULL for any other kind). */
const char *lg_jv_str(ps_parser *p, ps_jv v) {
  if (ps_jv_kind(v) != PS_JV_STRING)
    return NULL;
  ps_jv inner = {v.p + 1, v.end - 1};
  return lg_span_str(p, inner);
}

/* What cJSON's valuedouble held: the number's correctly rounded value
 * (strtod's), +-Inf beyond the double range. The text was checked as a
 * JSON number, so its digits are gathered without checking them again and
 * most values take the exact fast path (ps_decimal_exact); the others,
 * 17-digit timestamps among them, go through ps_lp_decimal. */
int lg_jv_number(ps_jv v, double *out) {
  if (ps_jv_kind(v) != PS_JV_NUMBER)
    return 0;
  const char *q = v.p, *end = v.end;
  int neg = *q == '-', exp10 = 0, sig = 0;
  uint64_t m = 0;
  unsigned d;
  q += neg;
  const char *a = q;
  for (; q < end && (d = (unsigned)(unsigned char)*q - '0') <= 9; q++)
    m = m * 10 + d;
  sig = m ? (int)(q - a) : 0;
  if (q < end && *q == '.') {
    a = ++q;
    for (; q < end && (d = (unsigned)(unsigned char)*q - '0') <= 9; q++) {
      m = m * 10 + d;
      sig += m != 0;
    }
    exp10 = -(int)(q - a);
  }
  if (q == end && sig <= 19 && ps_decimal_exact(m, exp10, neg, out))
    return 1;
  int rc = ps_lp_decimal(v.p, (size_t)(v.end - v.p), out);
  if (rc == -ERANGE)
    *out = v.p[0] == '-' ? -INFINITY : INFINITY;
  else if (rc < 0)
    return 0;
  return 1;
}

int lg_json_int(ps_jv v, int64_t *out) {
  double d;
  if (!lg_json_finite(v, &d) || d != floor(d) || d < -9.2e18 || d > 9.2e18)
    return 0;
  *out = (int64_t)d;
  return 1;
}

/* ---- building a point --------------------------------------------------- */

void lg_pt_reset(ps_parser *p) {
  p->pt.ntags = 0;
  p->pt.nfields = 0;
  lg_arena_reset(p);
}

void lg_tag_add(ps_parser *p, const char *key, const char *value) {
  if (!value || !*value || p->pt.ntags >= LG_MAX_TAGS)
    return;
  p->pt.s->tags[p->pt.ntags].key = key;
  p->pt.s->tags[p->pt.ntags].value = value;
  p->pt.ntags++;
}

void lg_tags_run(ps_parser *p) {
  lg_tag_add(p, "run", p->id.run);
  lg_tag_add(p, "test_type", p->id.test_type);
  lg_tag_add(p, "revision", p->id.revision);
}

ps_field *lg_field_new(ps_parser *p, const char *key, ps_ftype t) {
  if (p->pt.nfields >= LG_MAX_FIELDS)
    return NULL;
  ps_field *f = &p->pt.s->fields[p->pt.nfields++];
  *f = (ps_field){.key = key, .type = t};
  return f;
}

void lg_add_float(ps_parser *p, const char *key, ps_jv v) {
  double d;
  ps_field *f;
  if (lg_json_finite(v, &d) && (f = lg_field_new(p, key, PS_F_FLOAT)))
    f->v.f = d;
}


void lg_add_int(ps_parser *p, const char *key, ps_jv v) {
  int64_t i;
  ps_field *f;
  if (lg_json_int(v, &i) && (f = lg_field_new(p, key, PS_F_INT)))
    f->v.i = i;
}

void lg_add_bool(ps_parser *p, const char *key, ps_jv v) {
  ps_field *f;
  if (lg_json_bool(v) && (f = lg_field_new(p, key, PS_F_BOOL)))
    f->v.b = lg_json_true(v);
}

void lg_add_bool_value(ps_parser *p, const char *key, int b) {
  ps_field *f = lg_field_new(p, key, PS_F_BOOL);
  if (f)
    f->v.b = b;
}

void lg_add_string(ps_parser *p, const char *key, const char *s) {
  ps_field *f = lg_field_new(p, key, PS_F_STRING);
  if (f) {
    f->v.s.p = s;
    f->v.s.n = strlen(s);
  }
}

/* A scalar member as a field: integers by name, other numbers as floats,
 * booleans and strings as they are; nested values and null are skipped.
 * With a prefix, keys are composed in the parser's key buffer. Returns 0
 * when no more fields fit. */
static int add_member_field(ps_parser *p, ps_jmember m, const char *const *ints,
                            const char *const *skip, const char *prefix) {
  ps_jv_kind_t k = ps_jv_kind(m.val);
  if (!m.key.p || k == PS_JV_OBJECT || k == PS_JV_ARRAY || k == PS_JV_NULL)
    return 1;
  const char *name = lg_key_str(p, m);
  if (!name || in_list(skip, name))
    return 1;
  const char *key = name;
  if (prefix) {
    if (p->pt.nfields >= LG_MAX_FIELDS)
      return 0;
    char *kb = p->pt.s->keybuf[p->pt.nfields];
    int n = snprintf(kb, LG_KEY_LEN, "%s%s", prefix, name);
    if (n < 0 || n >= LG_KEY_LEN)
      return 1;
    key = kb;
  }
  if (k == PS_JV_NUMBER) {
    if (in_list(ints, name))
      lg_add_int(p, key, m.val);
    else
      lg_add_float(p, key, m.val);
  } else if (k == PS_JV_TRUE || k == PS_JV_FALSE) {
    lg_add_bool(p, key, m.val);
  } else {
    const char *str = lg_jv_str(p, m.val);
    if (str)
      lg_add_string(p, key, str);
  }
  return 1;
}

/* Every scalar member of `obj` as a field (add_member_field). */
void lg_add_object_fields(ps_parser *p, ps_jv obj, const char *const *ints,
                              const char *const *skip, const char *prefix) {
  ps_jiter it = ps_jv_iter_ix(obj, p->rec.ixp);
  ps_jmember m;
  while (ps_jiter_next(&it, &m))
    if (!add_member_field(p, m, ints, skip, prefix))
      return;
}

/* The same from a member table (perf-finish's record: its members walked
 * without skipping over stats again). */
void lg_add_table_fields(ps_parser *p, const ps_jtable *t, const char *const *ints,
                             const char *const *skip) {
  for (size_t i = 0; i < t->n; i++)
    if (!add_member_field(p, t->m[i], ints, skip, NULL))
      return;
}

/* Emits the built point; a point without fields is not a fact, so nothing
 * is sent. Counts accepted points so a resumed small record skips them. */
int lg_pt_emit(ps_parser *p, ps_emitter *em, const char *measurement,
                   int64_t time_ns) {
  if (p->pt.nfields == 0)
    return 0;
  if (p->resume.skip) {
    p->resume.skip--;
    return 0;
  }
  ps_point pt = {measurement, p->pt.s->tags, p->pt.ntags, p->pt.s->fields, p->pt.nfields, time_ns};
  int rc = ps_emit_point(em, &pt);
  if (rc == 0)
    p->resume.accepted++;
  return rc;
}

int lg_point_ready(ps_parser *p) {
  if (!p->pt.s && !(p->pt.s = malloc(sizeof *p->pt.s)))
    return -ENOMEM;
  return 0;
}

void lg_point_free(ps_parser *p) {
  lg_arena_reset(p);
  free(p->pt.arena);
  p->pt.arena = NULL;
  free(p->pt.s);
  p->pt.s = NULL;
}
