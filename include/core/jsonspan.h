/*
 * jsonspan: reading JSON where it lies, without building a tree.
 *
 * Contract
 * - ps_json_check() accepts text that is exactly one JSON value in the
 *   strict grammar of RFC 8259 (whitespace: space, tab, CR, LF; strings
 *   without raw control characters, with valid escapes and surrogate
 *   pairs; numbers -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? of at most 63
 *   characters), nested at most `max_depth` deep, with only whitespace
 *   around it. That is the subset every JSON reader reads alike (cJSON
 *   included), so a caller may fall back to a lenient reader for the rest
 *   and get the same values. It reports the value as a span of the text,
 *   or -EINVAL. Nothing is allocated; the text is read once.
 * - Every other function takes spans of text that ps_json_check()
 *   accepted (or parts of it), and skips values without checking them
 *   again: given anything else their results are undefined (but they never
 *   read outside the span).
 * - A value is the span of its own text: "..." for a string (quotes
 *   included), {...} for an object. ps_jv_kind() tells its kind from its
 *   first byte.
 * - Members of an object come in document order, duplicates included;
 *   ps_jv_get() finds the first with a key, comparing unescaped keys as
 *   bytes (what cJSON_GetObjectItemCaseSensitive does), in full however
 *   long their escaped text; a key holding \u0000 is all of its bytes,
 *   where cJSON's C string would end at the NUL.
 * - An object looked up many times is read once into a member table
 *   (ps_jtable): a lookup is then a walk over its members' spans, not a
 *   skip over their bytes. The table is the only thing here that
 *   allocates; it borrows the text, so the text outlives its use.
 * - Strings are unescaped into the caller's buffer, NUL-terminated.
 *   Numbers are handed out as their text: converting them is the caller's
 *   (influx/numfmt.h), so a declared integer can be read exactly.
 */
#ifndef PS_CORE_JSONSPAN_H
#define PS_CORE_JSONSPAN_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

typedef struct ps_jv {
  const char *p, *end; /* [p, end): the value's text; p == NULL: none */
} ps_jv;

typedef enum ps_jv_kind_t {
  PS_JV_NONE = 0,
  PS_JV_NULL,
  PS_JV_FALSE,
  PS_JV_TRUE,
  PS_JV_NUMBER,
  PS_JV_STRING,
  PS_JV_ARRAY,
  PS_JV_OBJECT,
} ps_jv_kind_t;

/* A member of an object: `key` spans the key's text between its quotes
 * (escapes not undone), `val` its value. */
typedef struct ps_jmember {
  ps_jv key;
  ps_jv val;
} ps_jmember;

/* Where the containers of a checked text end, for those nested at most
 * `depth` deep (the outermost value is depth 1): skipping one of them is
 * then a lookup, not a walk over its bytes. Offsets count from `base`; the
 * caller owns the arrays (`cap` entries each) and may point `base` at a
 * copy of the same text. A text with more containers than `cap` gets the
 * first `cap` of them (the others are walked over). */
typedef struct ps_jindex {
  const char *base;
  uint32_t *open, *close; /* ascending `open` */
  size_t n, cap;
  unsigned depth;
} ps_jindex;

/* Walks the members of an object (or the elements of an array: `key` is
 * then empty). */
typedef struct ps_jiter {
  const char *p, *end;
  const ps_jindex *ix; /* NULL: none */
} ps_jiter;

int ps_json_check(const char *text, size_t len, unsigned max_depth, ps_jv *out);
/* The same, filling `ix` (NULL: none) for a text below 4 GiB. */
int ps_json_check_indexed(const char *text, size_t len, unsigned max_depth, ps_jindex *ix,
                          ps_jv *out);

ps_jv_kind_t ps_jv_kind(ps_jv v);

/* The members of `obj` (or elements of an array); an iterator that yields
 * nothing for any other kind. */
ps_jiter ps_jv_iter(ps_jv container);
/* The same, skipping the indexed containers by lookup. */
ps_jiter ps_jv_iter_ix(ps_jv container, const ps_jindex *ix);
/* 1 with the next member, 0 at the end. */
int ps_jiter_next(ps_jiter *it, ps_jmember *m);
/* The first member of `obj` named `key`; 0 and a NONE value when there is
 * none or `obj` is not an object. */
int ps_jv_get(ps_jv obj, const char *key, ps_jv *out);
/* The same, skipping the indexed containers by lookup. */
int ps_jv_get_ix(ps_jv obj, const char *key, const ps_jindex *ix, ps_jv *out);
/* Does the (raw) key span spell `s` once unescaped? Inline for the common
 * case: a key without escapes is equal only when it has the same bytes,
 * and escapes only make a key's text longer than what it spells. So a key
 * as long as `s` is `s` when it has the same bytes and they hold no
 * backslash: "\\\\" (two escaped backslashes) spells two bytes, not the four
 * of a name it has the bytes of (found by tests/fuzz/fuzz_jsonspan.c). */
int ps_jkey_is_escaped(ps_jv key, const char *s, size_t n);
static inline int ps_jkey_is(ps_jv key, const char *s) {
  size_t kl = (size_t)(key.end - key.p), n = __builtin_strlen(s);
  if (kl == n)
    return __builtin_memcmp(key.p, s, n) == 0 && !__builtin_memchr(s, '\\', n);
  /* longer, so only escapes could make it equal: one starts the key, or
   * the first byte already matches */
  return kl > n && (key.p[0] == s[0] || key.p[0] == '\\') && ps_jkey_is_escaped(key, s, n);
}

/* The members of a container in document order (an array's elements have
 * no key). {0} is an empty table; the caller frees it with
 * ps_jtable_free(). */
typedef struct ps_jtable {
  ps_jmember *m;
  size_t n, cap;
} ps_jtable;

/* Empties `t` and fills it with the members of `container` (none for a
 * scalar or a NONE value), skipping by `ix` (NULL: none). 0 or -ENOMEM
 * (the table then holds the first members only). */
int ps_jtable_fill(ps_jtable *t, ps_jv container, const ps_jindex *ix);
void ps_jtable_free(ps_jtable *t);
/* The first member named `key`; a NONE value when there is none. Inline:
 * perf-finish asks a table a dozen times per point. */
static inline ps_jv ps_jtable_get(const ps_jtable *t, const char *key) {
  for (size_t i = 0; i < t->n; i++)
    if (t->m[i].key.p && ps_jkey_is(t->m[i].key, key))
      return t->m[i].val;
  ps_jv none = {NULL, NULL};
  return none;
}

/* Appends the unescaped text of a string value (or of a key span) and a
 * NUL to `out`; *off gets where it starts and *len its length. 0, -EINVAL
 * (not a string) or -ENOMEM. */
int ps_jv_string(ps_jv v, ps_buf *out, size_t *off, size_t *len);
int ps_jkey_string(ps_jv key, ps_buf *out, size_t *off, size_t *len);

#endif
