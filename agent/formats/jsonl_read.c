/*
 * formats/jsonl_read.c: the jsonl format's JSON reader
 * (agent/formats/jsonl_private.h).
 *
 * Design
 * - A small JSON reader made for this job instead of a tree library: it
 *   walks the line once and records each scalar as a leaf (flattened key,
 *   kind, value), with no allocation per value. A tree parser spent most of
 *   `convert`'s time in malloc, free and a locale-aware strtod per number;
 *   here numbers go through ps_lp_decimal (exact fast path, strtod only for
 *   long or extreme numbers). It is differentially fuzzed against cJSON
 *   (tests/fuzz/fuzz_jsonl.c).
 * - Every number keeps its own text, so declared integers beyond 2^53 and
 *   nanosecond timestamps are read exactly, never through a double.
 * - Nested objects are flattened with '.', arrays are checked for syntax
 *   and skipped (counted, logged at debug level): line protocol has no
 *   arrays, and inventing index names would create fields nobody asked
 *   for.
 * - `null`, and the NaN / Infinity that Python's json module writes, are
 *   leaves of kind JV_NULL: "absent" (docs/schema.md).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsontext.h"
#include "core/log.h"
#include "influx/numfmt.h"
#include "jsonl_private.h"

#define MAX_DEPTH 512

typedef struct jreader {
  ps_parser *p;
  const char *s, *end;
  const char *err;    /* reason of the first error */
  const char *err_at; /* where it is */
  int depth;
} jreader;

static int jfail(jreader *r, const char *at, const char *why) {
  if (!r->err) {
    r->err = why;
    r->err_at = at;
  }
  return -EINVAL;
}

static void skip_ws(jreader *r) {
  while (r->s < r->end &&
         (*r->s == ' ' || *r->s == '\t' || *r->s == '\n' || *r->s == '\r'))
    r->s++;
}

#define PS_LITTLE_ENDIAN (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

/* Non-zero exactly when one of the eight bytes of x (little-endian) is 0;
 * its lowest set bit is the top bit of the first such byte (a flag above
 * it may be a borrow's false alarm, never one below). */
static inline uint64_t has_zero_byte(uint64_t x) {
  return (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL;
}

/* The bytes that end a plain run inside a string: '"', '\\' and NUL. */
static const unsigned char str_stop[256] = {['"'] = 1, ['\\'] = 1, [0] = 1};

/* Reads a string at r->s ('"'), appending it unescaped (and NUL-terminated)
 * to the text buffer; *len excludes the NUL. */
static int read_string(jreader *r, size_t *len) {
  ps_buf *t = &r->p->text;
  const char *q = r->s + 1;
  /* unescaped text is never longer than the rest of the line */
  if (ps_buf_reserve(t, (size_t)(r->end - q) + 1))
    return jfail(r, r->s, "out of memory");
  char *w = t->data + t->len, *w0 = w;
  const char *end = r->end;
  for (;;) {
    /* The plain run, copied eight bytes a step: each step finds the first
     * '"', '\\' or NUL among them (the lowest flag of has_zero_byte is
     * exact) and copies all eight, the bytes past the stop being written
     * over or left past the text's end. The text has room: it was reserved
     * for the rest of the line. Keys and values are short, so a scan and
     * a memcpy call cost more than the bytes. */
    while (PS_LITTLE_ENDIAN && end - q >= 8) {
      uint64_t x, stop;
      memcpy(&x, q, 8);
      memcpy(w, &x, 8);
      stop = has_zero_byte(x) | has_zero_byte(x ^ 0x2222222222222222ULL) |
             has_zero_byte(x ^ 0x5c5c5c5c5c5c5c5cULL);
      if (stop) {
        unsigned k = (unsigned)__builtin_ctzll(stop) / 8;
        q += k;
        w += k;
        break;
      }
      w += 8;
      q += 8;
    }
    while (q < end && !str_stop[(unsigned char)*q])
      *w++ = *q++;
    if (q >= end)
      return jfail(r, r->s, "unterminated string");
    /* caught here, not by a memchr over every string afterwards: no
     * escape can produce a NUL (\u0000 is refused below) */
    if (*q == '\0')
      return jfail(r, r->s, "NUL byte in a string");
    if (*q == '"')
      break;
    /* escape: every reason points at its backslash */
    unsigned cp;
    const char *why = NULL, *next = ps_json_escape(q, r->end, &cp, &why);
    if (!next)
      return jfail(r, q, why);
    if (cp == 0)
      return jfail(r, q, "NUL character (\\u0000) in a string");
    q = next;
    w = ps_utf8_put(w, cp);
  }
  *len = (size_t)(w - w0);
  *w++ = '\0';
  t->len = (size_t)(w - t->data);
  r->s = q + 1;
  return 0;
}

/* JSON number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
 * The digits are taken apart while the syntax is checked, so a number
 * whose mantissa is an exact double needs no second look
 * (ps_decimal_exact); the others go through ps_lp_decimal.
 *
 * The same pass decides the number's form. A decimal without exponent
 * whose text is already the shortest round trip in the encoder's layout
 * (ps_fmt_double: Python's repr) is NUM_FORM_DECIMAL: at most 15
 * significant digits (DBL_DIG: no shorter decimal reaches the same
 * double, so the shortest one is the text itself), no trailing zero in
 * the fraction but a lone "0" (5.0), at most three zeros after "0."
 * (repr writes 1e-05 from 0.00001 on), and not -0. JSON already forbids
 * leading zeros. */
static int read_number(jreader *r, leaf *l) {
  const char *q = r->s, *st = q, *end = r->end;
  uint64_t m = 0;
  int neg = 0, sig = 0, exp10 = 0;
  l->num_form = NUM_FORM_OTHER;
  if (q < end && *q == '-') {
    neg = 1;
    q++;
  }
  if (q >= end || *q < '0' || *q > '9')
    return jfail(r, st, "bad number");
  /* m wraps beyond 19 digits; sig > 19 sends those to ps_lp_decimal */
  unsigned d;
  size_t int_digits = 1;
  if (*q == '0') {
    q++;
  } else {
    const char *a = q;
    for (; q < end && (d = (unsigned)(unsigned char)*q - '0') <= 9; q++)
      m = m * 10 + d;
    sig = (int)(q - a);
    int_digits = (size_t)sig;
  }
  enum num_form form = int_digits <= 15 ? NUM_FORM_WHOLE15
                       : int_digits <= 18 ? NUM_FORM_WHOLE18 : NUM_FORM_OTHER;
  if (q < end && *q == '.') {
    q++;
    if (q >= end || *q < '0' || *q > '9')
      return jfail(r, q, "bad number");
    const char *frac = q;
    if (!m) /* leading zeros of the fraction are not significant */
      for (; q < end && *q == '0'; q++)
        exp10--;
    size_t zeros = (size_t)(q - frac);
    const char *a = q;
    for (; q < end && (d = (unsigned)(unsigned char)*q - '0') <= 9; q++)
      m = m * 10 + d;
    sig += (int)(q - a);
    exp10 -= (int)(q - a);
    size_t frac_digits = (size_t)(q - frac);
    form = int_digits <= 15 && sig <= 15 && zeros <= 3 &&
                   (q[-1] != '0' || frac_digits == 1)
               ? NUM_FORM_DECIMAL
               : NUM_FORM_OTHER;
  }
  if (neg && !m)
    form = NUM_FORM_OTHER; /* -0, -0.0: left to the formatter */
  if (q < end && (*q == 'e' || *q == 'E')) {
    form = NUM_FORM_OTHER;
    q++;
    int eneg = 0, e = 0;
    if (q < end && (*q == '+' || *q == '-'))
      eneg = *q++ == '-';
    if (q >= end || *q < '0' || *q > '9')
      return jfail(r, q, "bad number");
    for (; q < end && *q >= '0' && *q <= '9'; q++)
      if (e <= 400)
        e = e * 10 + (*q - '0'); /* beyond that only the syntax matters */
    exp10 += eneg ? -e : e;
  }
  l->num_text = st;
  l->num_len = (size_t)(q - st);
  l->num_form = form;
  double *v = &l->num;
  size_t *n = &l->num_len;
  if (sig > 19 || !ps_decimal_exact(m, exp10, neg, v)) {
    int rc = ps_lp_decimal(st, *n, v);
    if (rc == -ERANGE)
      return jfail(r, st, "number too large for a double");
    if (rc)
      return jfail(r, st, "bad number");
  }
  r->s = q;
  return 0;
}

static int read_value(jreader *r, size_t key_off, int record);

/* An object whose members' keys are prefixed with text[pfx_off, +pfx_len)
 * (pfx_len 0 at the top). */
static int read_object(jreader *r, size_t pfx_off, size_t pfx_len,
                       int record) {
  ps_parser *p = r->p;
  if (++r->depth > MAX_DEPTH)
    return jfail(r, r->s, "nesting too deep");
  r->s++; /* '{' */
  skip_ws(r);
  if (r->s < r->end && *r->s == '}') {
    r->s++;
    r->depth--;
    return 0;
  }
  for (;;) {
    skip_ws(r);
    if (r->s >= r->end || *r->s != '"')
      return jfail(r, r->s, "expected a key");
    size_t key_off = p->text.len;
    if (pfx_len) {
      if (ps_buf_reserve(&p->text, pfx_len + 1))
        return jfail(r, r->s, "out of memory");
      memcpy(p->text.data + p->text.len, p->text.data + pfx_off, pfx_len);
      p->text.data[p->text.len + pfx_len] = '.';
      p->text.len += pfx_len + 1;
    }
    size_t klen;
    int rc = read_string(r, &klen);
    if (rc)
      return rc;
    skip_ws(r);
    if (r->s >= r->end || *r->s != ':')
      return jfail(r, r->s, "expected ':'");
    r->s++;
    skip_ws(r);
    rc = read_value(r, key_off, record);
    if (rc)
      return rc;
    if (!record)
      ps_buf_truncate(&p->text, key_off);
    skip_ws(r);
    if (r->s < r->end && *r->s == ',') {
      r->s++;
      continue;
    }
    if (r->s < r->end && *r->s == '}') {
      r->s++;
      r->depth--;
      return 0;
    }
    return jfail(r, r->s, "expected ',' or '}'");
  }
}

static int read_array(jreader *r) {
  if (++r->depth > MAX_DEPTH)
    return jfail(r, r->s, "nesting too deep");
  r->s++; /* '[' */
  skip_ws(r);
  if (r->s < r->end && *r->s == ']') {
    r->s++;
    r->depth--;
    return 0;
  }
  for (;;) {
    skip_ws(r);
    size_t mark = r->p->text.len;
    int rc = read_value(r, mark, 0);
    ps_buf_truncate(&r->p->text, mark);
    if (rc)
      return rc;
    skip_ws(r);
    if (r->s < r->end && *r->s == ',') {
      r->s++;
      continue;
    }
    if (r->s < r->end && *r->s == ']') {
      r->s++;
      r->depth--;
      return 0;
    }
    return jfail(r, r->s, "expected ',' or ']'");
  }
}

static int literal(jreader *r, const char *word, size_t n) {
  if ((size_t)(r->end - r->s) < n || memcmp(r->s, word, n) != 0)
    return jfail(r, r->s, "unexpected character");
  r->s += n;
  return 0;
}

/* A value whose (flattened) key starts at text offset key_off; leaves are
 * recorded only when `record` (not inside arrays). */
static int read_value(jreader *r, size_t key_off, int record) {
  ps_parser *p = r->p;
  if (r->s >= r->end)
    return jfail(r, r->s, "expected a value");
  leaf l = {.key_off = key_off};
  int rc;
  switch (*r->s) {
  case '{': {
    /* the key without its NUL; none for an object inside an array */
    size_t klen = p->text.len > key_off ? p->text.len - key_off - 1 : 0;
    return read_object(r, key_off, klen, record);
  }
  case '[':
    if (record)
      p->arrays_skipped++;
    return read_array(r);
  case '"':
    l.kind = JV_STR;
    l.str_off = p->text.len;
    rc = read_string(r, &l.str_len);
    break;
  case 't':
    l.kind = JV_TRUE;
    rc = literal(r, "true", 4);
    break;
  case 'f':
    l.kind = JV_FALSE;
    rc = literal(r, "false", 5);
    break;
  case 'n':
    l.kind = JV_NULL;
    rc = literal(r, "null", 4);
    break;
  case 'N':
    /* not JSON, but Python's json module writes it; docs/schema.md: absent */
    l.kind = JV_NULL;
    rc = literal(r, "NaN", 3);
    break;
  case 'I':
    l.kind = JV_NULL;
    rc = literal(r, "Infinity", 8);
    break;
  case '-':
    if (r->end - r->s > 1 && r->s[1] == 'I') {
      r->s++;
      l.kind = JV_NULL;
      rc = literal(r, "Infinity", 8);
      break;
    }
    l.kind = JV_NUM;
    rc = read_number(r, &l);
    break;
  default:
    l.kind = JV_NUM;
    rc = read_number(r, &l);
    break;
  }
  if (rc || !record)
    return rc;
  if (jsonl_grow((void **)&p->leaves, &p->leaves_cap, p->nleaves + 1, sizeof(leaf)))
    return jfail(r, r->s, "out of memory");
  p->leaves[p->nleaves++] = l;
  return 0;
}

int jsonl_read_line(ps_parser *p, const char *data, size_t len, ps_emitter *em) {
  size_t i = 0;
  while (i < len && (data[i] == ' ' || data[i] == '\t'))
    i++;
  if (i == len)
    return 0; /* blank lines carry nothing; not worth a reject */

  p->nleaves = 0;
  ps_buf_reset(&p->text);
  unsigned long arrays_before = p->arrays_skipped;
  jreader r = {.p = p, .s = data + i, .end = data + len};
  if (data[i] != '{') {
    ps_emit_reject(em, "column %zu: not a JSON object", i + 1);
    return 0;
  }
  int rc = read_object(&r, 0, 0, 1);
  if (rc == 0) {
    skip_ws(&r);
    if (r.s != r.end) {
      ps_emit_reject(em, "column %zu: trailing text after the JSON value",
                     (size_t)(r.s - data) + 1);
      return 0;
    }
  }
  if (rc) {
    if (r.err && strcmp(r.err, "out of memory") == 0)
      return -ENOMEM;
    ps_emit_reject(em, "column %zu: malformed JSON (%s)",
                   (size_t)(r.err_at - data) + 1, r.err ? r.err : "?");
    return 0;
  }

  if (p->arrays_skipped != arrays_before)
    PS_DEBUG("jsonl", "%s:%llu: %lu array value(s) skipped (line protocol "
                      "has no arrays)",
             em->origin.file ? em->origin.file : "-",
             (unsigned long long)em->origin.line,
             p->arrays_skipped - arrays_before);
  return 1;
}
