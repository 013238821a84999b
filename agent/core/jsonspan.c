/*
 * jsonspan.c: strict JSON checked once, then read in place. See
 * include/core/jsonspan.h.
 *
 * DESIGN
 * - The check is a loop over the text with a stack of one byte per open
 *   container, no recursion: a multi-megabyte record costs one pass and
 *   max_depth bytes of stack.
 * - Everything after the check trusts the text: skipping a value only
 *   matches brackets and finds string ends (memchr for the quote, then a
 *   count of the backslashes before it), which is what lets a reader jump
 *   over a megabyte of blocks to reach the member after them.
 * - A byte class table drives the inner loops: one lookup per byte decides
 *   that an ordinary byte needs nothing.
 */
#include "core/jsonspan.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsontext.h"

#define MAX_NUMBER_LEN 63
#define STACK_MAX 1024

/* Bytes a string's plain run stops at: the quote, the backslash and the
 * control characters strict JSON refuses raw. */
static const unsigned char str_stop[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, [(unsigned char)'"'] = 1, [(unsigned char)'\\'] = 1};

/* Bytes that matter while skipping a container: quotes and brackets. */
static const unsigned char skip_stop[256] = {
    [(unsigned char)'"'] = 1, [(unsigned char)'{'] = 2, [(unsigned char)'['] = 2,
    [(unsigned char)'}'] = 3, [(unsigned char)']'] = 3};

static const char *ws(const char *p, const char *end) {
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

/* Non-zero when a byte of x is below 0x20, '"' or '\\' (the usual
 * "has a byte below n" test on x and on x xor the two characters); its
 * lowest set bit is the top bit of the first such byte (a flag above it
 * may come from a borrow, none below). */
static inline uint64_t string_stops(uint64_t x) {
  const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
  return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((b - ones) & ~b)) & high;
}

/* A string at p ('"'): the byte after its closing quote, or NULL. Plain
 * runs go eight bytes a step (little-endian hosts). */
static const char *check_string(const char *p, const char *end) {
  p++;
  for (;;) {
    while (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && end - p >= 8) {
      uint64_t x;
      memcpy(&x, p, 8);
      uint64_t stop = string_stops(x);
      if (stop) {
        p += __builtin_ctzll(stop) / 8;
        break;
      }
      p += 8;
    }
    while (p < end && !str_stop[(unsigned char)*p])
      p++;
    if (p >= end || (unsigned char)*p < 0x20)
      return NULL;
    if (*p == '"')
      return p + 1;
    unsigned cp;
    if (!(p = ps_json_escape(p, end, &cp, NULL)))
      return NULL;
  }
}

static const char *check_number(const char *p, const char *end) {
  const char *e = ps_json_number_end(p, end);
  return e && e - p > MAX_NUMBER_LEN ? NULL : e;
}

static const char *check_literal(const char *p, const char *end, const char *word, size_t n) {
  return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

int ps_json_check(const char *text, size_t len, unsigned max_depth, ps_jv *out) {
  return ps_json_check_indexed(text, len, max_depth, NULL, out);
}

/* The containers open at the checker's position: '{' or '[' per level,
 * and the level's index entry when it has one. */
typedef struct open_levels {
  unsigned char kind[STACK_MAX];
  uint32_t slot[STACK_MAX]; /* UINT32_MAX: not indexed */
  unsigned depth, max_depth;
  const char *text;
  ps_jindex *ix; /* NULL: no index */
} open_levels;

/* What comes at the checker's position. */
enum check_next { NEXT_VALUE, NEXT_MEMBER, VALUE_ENDED };

/* The index `ix` starts over on `text`; NULL (no index) for a text its
 * 32-bit offsets cannot hold. */
static ps_jindex *index_start(ps_jindex *ix, const char *text, size_t len) {
  if (!ix)
    return NULL;
  ix->base = text;
  ix->n = 0;
  return len >= UINT32_MAX ? NULL : ix;
}

/* Leaves the innermost container, whose closing bracket ends at p. */
static inline const char *close_level(open_levels *lv, const char *p) {
  lv->depth--;
  if (lv->slot[lv->depth] != UINT32_MAX)
    lv->ix->close[lv->slot[lv->depth]] = (uint32_t)(p - lv->text);
  return p;
}

/* Enters the container at p ('{' or '['), indexing it while the index has
 * room at that depth: the position of what comes first in it, *next saying
 * what that is (VALUE_ENDED: the container is empty and closed), or NULL. */
static inline const char *open_level(open_levels *lv, const char *p, const char *end,
                                     enum check_next *next) {
  unsigned d = lv->depth;
  ps_jindex *ix = lv->ix;
  if (d == lv->max_depth)
    return NULL;
  lv->slot[d] = UINT32_MAX;
  if (ix && d < ix->depth && ix->n < ix->cap) {
    lv->slot[d] = (uint32_t)ix->n;
    ix->open[ix->n] = (uint32_t)(p - lv->text);
    ix->close[ix->n++] = (uint32_t)(p - lv->text); /* until closed */
  }
  lv->kind[d] = (unsigned char)*p;
  lv->depth = d + 1;
  p = ws(p + 1, end);
  if (p < end && (*p == '}' || *p == ']')) {
    if ((*p == '}') != (lv->kind[d] == '{'))
      return NULL;
    *next = VALUE_ENDED;
    return close_level(lv, p + 1);
  }
  *next = lv->kind[d] == '[' ? NEXT_VALUE : NEXT_MEMBER;
  return p;
}

/* The value at p: a container is entered (open_level), any other value
 * checked whole (*next left as it was: the value ended); NULL when it is
 * not JSON. */
static inline const char *check_value(open_levels *lv, const char *p, const char *end,
                                      enum check_next *next) {
  switch (*p) {
  case '{':
  case '[': return open_level(lv, p, end, next);
  case '"': return check_string(p, end);
  case 't': return check_literal(p, end, "true", 4);
  case 'f': return check_literal(p, end, "false", 5);
  case 'n': return check_literal(p, end, "null", 4);
  default: return check_number(p, end);
  }
}

/* After a value ending at p: the containers that end there are closed, and
 * the position is that of the next element (*next NEXT_VALUE) or member
 * (NEXT_MEMBER) past the comma, or the end of the text when the outermost
 * value ended there (*next left as it was); NULL when the text is not
 * JSON. */
static inline const char *after_value(open_levels *lv, const char *p, const char *end,
                                      enum check_next *next) {
  for (;;) {
    if (!p)
      return NULL;
    p = ws(p, end);
    if (!lv->depth)
      return p == end ? p : NULL;
    if (p >= end)
      return NULL;
    unsigned char top = lv->kind[lv->depth - 1];
    if (*p == ',') {
      *next = top == '[' ? NEXT_VALUE : NEXT_MEMBER;
      return ws(p + 1, end);
    }
    if (*p != (top == '{' ? '}' : ']'))
      return NULL;
    p = close_level(lv, p + 1);
  }
}

/* A member's key and colon at p: the position of its value, or NULL. */
static inline const char *check_key(const char *p, const char *end) {
  if (p >= end || *p != '"' || !(p = check_string(p, end)))
    return NULL;
  p = ws(p, end);
  if (p >= end || *p != ':')
    return NULL;
  return ws(p + 1, end);
}

/* The outermost value from `start`, without the whitespace the text ends
 * with. */
static ps_jv value_span(const char *start, const char *end) {
  while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
    end--;
  return (ps_jv){start, end};
}

int ps_json_check_indexed(const char *text, size_t len, unsigned max_depth, ps_jindex *ix,
                          ps_jv *out) {
  open_levels lv;
  lv.depth = 0;
  lv.max_depth = max_depth > STACK_MAX ? STACK_MAX : max_depth;
  lv.text = text;
  lv.ix = index_start(ix, text, len);
  const char *end = text + len, *p = ws(text, end), *start = p;
  for (;;) {
    if (p >= end)
      return -EINVAL;
    enum check_next next = VALUE_ENDED;
    p = check_value(&lv, p, end, &next);
    if (next == VALUE_ENDED) {
      if (!(p = after_value(&lv, p, end, &next)))
        return -EINVAL;
      if (next == VALUE_ENDED) {
        *out = value_span(start, end);
        return 0;
      }
    }
    if (next == NEXT_MEMBER && !(p = check_key(p, end)))
      return -EINVAL;
  }
}

ps_jv_kind_t ps_jv_kind(ps_jv v) {
  if (!v.p || v.p >= v.end)
    return PS_JV_NONE;
  switch (*v.p) {
  case '{': return PS_JV_OBJECT;
  case '[': return PS_JV_ARRAY;
  case '"': return PS_JV_STRING;
  case 't': return PS_JV_TRUE;
  case 'f': return PS_JV_FALSE;
  case 'n': return PS_JV_NULL;
  default: return PS_JV_NUMBER;
  }
}

/* ---- reading checked text ---------------------------------------------- */

/* The byte after the string starting at p ('"'): the first quote not
 * escaped, found by memchr and a count of the backslashes before it. */
static const char *skip_string(const char *p, const char *end) {
  const char *q = p + 1;
  for (;;) {
    const char *quote = memchr(q, '"', (size_t)(end - q));
    if (!quote)
      return end;
    const char *b = quote;
    while (b > q && b[-1] == '\\')
      b--;
    if ((quote - b) % 2 == 0)
      return quote + 1;
    q = quote + 1;
  }
}

/* The end of the indexed container starting at p, or NULL. */
static const char *indexed_end(const ps_jindex *ix, const char *p) {
  if (!ix || !ix->n || p < ix->base)
    return NULL;
  size_t at = (size_t)(p - ix->base), lo = 0, hi = ix->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ix->open[mid] < at)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < ix->n && ix->open[lo] == at ? ix->base + ix->close[lo] : NULL;
}

static const char *skip_value(const char *p, const char *end, const ps_jindex *ix) {
  if (*p == '"')
    return skip_string(p, end);
  if (*p != '{' && *p != '[') {
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' &&
           *p != '\n' && *p != '\r')
      p++;
    return p;
  }
  const char *known = indexed_end(ix, p);
  if (known)
    return known;
  size_t depth = 0;
  while (p < end) {
    unsigned char c = skip_stop[(unsigned char)*p];
    if (!c) {
      p++;
      continue;
    }
    if (c == 1) {
      p = skip_string(p, end);
      continue;
    }
    p++;
    if (c == 2)
      depth++;
    else if (--depth == 0)
      return p;
  }
  return end;
}

ps_jiter ps_jv_iter_ix(ps_jv c, const ps_jindex *ix) {
  ps_jiter it = {NULL, NULL, ix};
  if (c.p && c.p < c.end && (*c.p == '{' || *c.p == '[')) {
    it.p = ws(c.p + 1, c.end);
    it.end = c.end;
  }
  return it;
}

ps_jiter ps_jv_iter(ps_jv c) { return ps_jv_iter_ix(c, NULL); }

int ps_jiter_next(ps_jiter *it, ps_jmember *m) {
  const char *p = it->p, *end = it->end;
  if (!p || p >= end || *p == '}' || *p == ']')
    return 0;
  m->key.p = m->key.end = NULL;
  if (*p == '"') {
    const char *k = skip_string(p, end);
    p = ws(k, end);
    if (p < end && *p == ':') { /* an object's key, not an array's string */
      m->key.p = it->p + 1;
      m->key.end = k - 1;
      p = ws(p + 1, end);
    } else {
      p = it->p;
    }
  }
  m->val.p = p;
  m->val.end = skip_value(p, end, it->ix);
  p = ws(m->val.end, end);
  if (p < end && *p == ',')
    p = ws(p + 1, end);
  it->p = p;
  return 1;
}

/* Unescapes [p, end) (the inside of a string) into w, which has room for
 * end - p bytes (escapes never lengthen); returns the end of what it wrote. */
static char *unescape(const char *p, const char *end, char *w) {
  while (p < end) {
    const char *run = p;
    while (p < end && *p != '\\')
      p++;
    memcpy(w, run, (size_t)(p - run));
    w += p - run;
    if (p >= end)
      break;
    unsigned cp = 0;
    const char *next = ps_json_escape(p, end, &cp, NULL);
    if (!next)
      break; /* not after check_string(), which refused it */
    p = next;
    w = ps_utf8_put(w, cp);
  }
  return w;
}

int ps_jkey_string(ps_jv key, ps_buf *out, size_t *off, size_t *len) {
  size_t n = (size_t)(key.end - key.p);
  int rc = ps_buf_reserve(out, n); /* and the NUL, as every reserve */
  if (rc)
    return rc;
  char *w0 = out->data + out->len;
  char *w = unescape(key.p, key.end, w0);
  *w = '\0';
  *off = out->len;
  *len = (size_t)(w - w0);
  out->len += *len + 1;
  return 0;
}

int ps_jv_string(ps_jv v, ps_buf *out, size_t *off, size_t *len) {
  if (ps_jv_kind(v) != PS_JV_STRING)
    return -EINVAL;
  ps_jv inner = {v.p + 1, v.end - 1};
  return ps_jkey_string(inner, out, off, len);
}

/* Whether `s` (n bytes, from `*at`) goes on with `len` bytes of `p`. */
static int goes_on(const char *s, size_t n, size_t *at, const char *p, size_t len) {
  if (len > n - *at || memcmp(s + *at, p, len) != 0)
    return 0;
  *at += len;
  return 1;
}

/* Unescaped as it is compared, however long the key: a bound on what is
 * unescaped would miss a long-escaped first member cJSON finds, and find
 * a later one of that name instead (tests/fuzz/fuzz_jsonspan.c). An escape
 * spells at least one byte in at most six (\u0061), so a key longer than
 * 6n cannot spell n bytes. */
int ps_jkey_is_escaped(ps_jv key, const char *s, size_t n) {
  size_t kl = (size_t)(key.end - key.p), at = 0;
  if (kl / 6 > n || !memchr(key.p, '\\', kl))
    return 0;
  const char *p = key.p;
  while (p < key.end) {
    const char *run = p;
    while (p < key.end && *p != '\\')
      p++;
    if (!goes_on(s, n, &at, run, (size_t)(p - run)))
      return 0;
    if (p == key.end)
      break;
    unsigned cp = 0;
    char spelt[4];
    const char *next = ps_json_escape(p, key.end, &cp, NULL);
    if (!next || !goes_on(s, n, &at, spelt, (size_t)(ps_utf8_put(spelt, cp) - spelt)))
      return 0;
    p = next;
  }
  return at == n;
}

int ps_jv_get_ix(ps_jv obj, const char *key, const ps_jindex *ix, ps_jv *out) {
  out->p = out->end = NULL;
  if (ps_jv_kind(obj) != PS_JV_OBJECT)
    return 0;
  ps_jiter it = ps_jv_iter_ix(obj, ix);
  ps_jmember m;
  while (ps_jiter_next(&it, &m))
    if (m.key.p && ps_jkey_is(m.key, key)) {
      *out = m.val;
      return 1;
    }
  return 0;
}

int ps_jv_get(ps_jv obj, const char *key, ps_jv *out) { return ps_jv_get_ix(obj, key, NULL, out); }

/* ---- member tables ------------------------------------------------------ */

int ps_jtable_fill(ps_jtable *t, ps_jv container, const ps_jindex *ix) {
  t->n = 0;
  ps_jiter it = ps_jv_iter_ix(container, ix);
  ps_jmember m;
  while (ps_jiter_next(&it, &m)) {
    if (t->n == t->cap) {
      size_t cap = t->cap ? t->cap * 2 : 32;
      ps_jmember *n = realloc(t->m, cap * sizeof *n);
      if (!n)
        return -ENOMEM;
      t->m = n;
      t->cap = cap;
    }
    t->m[t->n++] = m;
  }
  return 0;
}

void ps_jtable_free(ps_jtable *t) {
  if (!t)
    return;
  free(t->m);
  t->m = NULL;
  t->n = t->cap = 0;
}
