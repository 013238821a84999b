/*
 * formats/jsonl.c: the generic `jsonl` format, one JSON object per line,
 * mapped to a point by the source configuration (include/formats/format.h,
 * docs/schema.md "Generic sources").
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
 * - Types are fixed per key (docs/schema.md): a number is a float unless
 *   `types` declares the key. `null`, and the NaN / Infinity that Python's
 *   json module writes, mean "absent" (docs/schema.md), so those fields are left
 *   out instead of failing the line.
 * - All per-line storage (keys, unescaped strings, leaves, tags, fields)
 *   lives in buffers owned by the parser and reused.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/format.h"
#include "core/jsontext.h"
#include "core/log.h"
#include "influx/lp_encode.h"
#include "influx/numfmt.h"

#define TWO53 9007199254740992.0
#define MAX_DEPTH 512

enum { JV_NULL, JV_FALSE, JV_TRUE, JV_NUM, JV_STR };

/* Whether a number's text is already what the encoder would write for it
 * (ps_field.text), so it is copied instead of formatted. */
enum num_form {
  NUM_FORM_OTHER = 0, /* formatted from the value */
  NUM_FORM_WHOLE15,   /* integer digits, at most 15: an integer, or a whole float + ".0" */
  NUM_FORM_WHOLE18,   /* 16 to 18 integer digits: an integer only */
  NUM_FORM_DECIMAL,   /* a float written the shortest way (see read_number) */
};

typedef struct leaf {
  size_t key_off;
  int kind;
  double num;
  const char *num_text; /* the number as written */
  size_t num_len;
  enum num_form num_form;
  size_t str_off, str_len; /* unescaped string in the parser's text */
} leaf;

struct ps_parser {
  const ps_source_cfg *src;
  ps_buf text; /* flattened keys, unescaped strings, formatted tag values */
  leaf *leaves;
  size_t nleaves, leaves_cap;
  ps_tag *tags;
  size_t tags_cap;
  ps_field *fields;
  size_t fields_cap;
  ps_field *sort_tmp;
  size_t sort_tmp_cap;
  unsigned long arrays_skipped;
};

static ps_input_kind jsonl_input_kind(const ps_source_cfg *src,
                                      const char *path) {
  (void)src;
  (void)path;
  return PS_INPUT_LINES;
}

static int jsonl_open(ps_parser **out, const ps_source_cfg *src,
                      const ps_input_head *head, ps_buf *err) {
  (void)head;
  *out = NULL;
  ps_parser *p = calloc(1, sizeof *p);
  if (!p) {
    ps_buf_puts(err, "out of memory");
    return -ENOMEM;
  }
  p->src = src;
  ps_buf_init(&p->text, 0);
  *out = p;
  return 0;
}

static void jsonl_free(ps_parser *p) {
  if (!p)
    return;
  ps_buf_free(&p->text);
  free(p->leaves);
  free(p->tags);
  free(p->fields);
  free(p->sort_tmp);
  free(p);
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t c = *cap ? *cap : 16;
  while (c < need)
    c *= 2;
  void *n = realloc(*arr, c * elem);
  if (!n)
    return -ENOMEM;
  *arr = n;
  *cap = c;
  return 0;
}

/* ------------------------------------------------------------ JSON reader */

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
  if (grow((void **)&p->leaves, &p->leaves_cap, p->nleaves + 1, sizeof(leaf)))
    return jfail(r, r->s, "out of memory");
  p->leaves[p->nleaves++] = l;
  return 0;
}

/* Exact integer from JSON number text; -EINVAL if it has a fraction or an
 * exponent, -ERANGE beyond the type. */
static int text_to_u64(const char *s, size_t n, int *neg, uint64_t *out) {
  *neg = 0;
  if (n && *s == '-') {
    *neg = 1;
    s++;
    n--;
  }
  if (!n)
    return -EINVAL;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -EINVAL;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -ERANGE;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

static int exact_i64(const leaf *l, int64_t *out) {
  double v = l->num;
  if (v != floor(v))
    return -EINVAL;
  if (fabs(v) < TWO53) {
    *out = (int64_t)v;
    return 0;
  }
  int neg;
  uint64_t u;
  int rc = text_to_u64(l->num_text, l->num_len, &neg, &u);
  if (rc == -EINVAL)
    return -EDOM; /* e.g. 1e19: whole, but digits beyond 2^53 are unknown */
  if (rc)
    return rc;
  if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX)
    return -ERANGE;
  *out = neg ? (int64_t)(0 - u) : (int64_t)u;
  return 0;
}

static int exact_u64(const leaf *l, uint64_t *out) {
  double v = l->num;
  if (v != floor(v))
    return -EINVAL;
  if (v < 0)
    return -ERANGE;
  if (v < TWO53) {
    *out = (uint64_t)v;
    return 0;
  }
  int neg;
  int rc = text_to_u64(l->num_text, l->num_len, &neg, out);
  if (rc == -EINVAL)
    return -EDOM;
  return rc;
}

/* Key comparison runs several times per value; most keys differ in the
 * first two bytes (time, type, tx_count), which saves the call. */
static inline int key_eq(const char *a, const char *b) {
  if (a[0] != b[0])
    return 0;
  if (!a[0])
    return 1;
  if (a[1] != b[1])
    return 0;
  return !a[1] || strcmp(a + 2, b + 2) == 0;
}

static int in_list(char *const *list, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (list[i] && key_eq(list[i], key))
      return 1;
  return 0;
}

static int declared_type(const ps_source_cfg *src, const char *key,
                         ps_ftype *t) {
  for (size_t i = 0; i < src->ntypes; i++)
    if (src->types[i].key && key_eq(src->types[i].key, key)) {
      *t = src->types[i].type;
      return 1;
    }
  return 0;
}

static const char *json_kind(const leaf *l) {
  switch (l->kind) {
  case JV_NUM:
    return "a number";
  case JV_STR:
    return "a string";
  case JV_TRUE:
  case JV_FALSE:
    return "a boolean";
  default:
    return "a value of another kind";
  }
}

/* The point's time from the time key's value, honouring time_unit_exp. */
static int leaf_time(const ps_parser *p, const leaf *l, int64_t *ns,
                     const char **why) {
  const char *text = p->text.data;
  int exp = p->src->time_unit_exp;
  int64_t factor = exp <= -9 ? 1 : exp == -6 ? 1000 : exp == -3 ? 1000000
                                                                 : 1000000000;
  const char *s = NULL;
  size_t n = 0;
  double v;
  if (l->kind == JV_NUM) {
    v = l->num;
    if (v == floor(v) && fabs(v) >= TWO53) {
      s = l->num_text;
      n = l->num_len;
    }
  } else if (l->kind == JV_STR) {
    s = text + l->str_off;
    n = l->str_len;
    if (ps_lp_decimal(s, n, &v) < 0) {
      *why = "is not a number";
      return -EINVAL;
    }
  } else {
    *why = "is not a number";
    return -EINVAL;
  }
  if (s) {
    int neg;
    uint64_t u;
    int rc = text_to_u64(s, n, &neg, &u);
    if (rc == -ERANGE || (!rc && u > (uint64_t)INT64_MAX / (uint64_t)factor)) {
      *why = "is outside InfluxDB's time range";
      return -ERANGE;
    }
    if (!rc) {
      *ns = (neg ? -(int64_t)u : (int64_t)u) * factor;
      return 0;
    }
  }
  /* seconds, ms, us: rounded to the microsecond (docs/schema.md) */
  double limit = 9.2e18 / (double)factor;
  if (!(fabs(v) < limit)) {
    *why = "is outside InfluxDB's time range";
    return -ERANGE;
  }
  if (factor == 1000000000)
    *ns = ps_seconds_to_ns(v);
  else if (factor == 1000000)
    *ns = (int64_t)nearbyint(v * 1000.0) * 1000;
  else if (factor == 1000)
    *ns = (int64_t)nearbyint(v) * 1000;
  else
    *ns = (int64_t)nearbyint(v);
  return 0;
}

/* Lends the number's own text to the encoder when it is already what the
 * encoder would write for the field's type (read_number's forms). */
static void number_text(ps_field *f, const leaf *l) {
  int ok;
  switch (f->type) {
  case PS_F_FLOAT:
    ok = l->num_form == NUM_FORM_DECIMAL || l->num_form == NUM_FORM_WHOLE15;
    f->text_whole = l->num_form == NUM_FORM_WHOLE15;
    break;
  case PS_F_INT:
    ok = l->num_form == NUM_FORM_WHOLE15 || l->num_form == NUM_FORM_WHOLE18;
    break;
  case PS_F_UINT:
    ok = (l->num_form == NUM_FORM_WHOLE15 || l->num_form == NUM_FORM_WHOLE18) &&
         l->num_text[0] != '-';
    break;
  default:
    ok = 0;
  }
  if (ok) {
    f->text = l->num_text;
    f->text_len = (uint16_t)l->num_len;
  }
}

static int jsonl_line(ps_parser *p, const char *data, size_t len,
                      ps_emitter *em) {
  const ps_source_cfg *src = p->src;
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
  if (ps_buf_reserve(&p->text, 32 * p->nleaves + 1) ||
      grow((void **)&p->tags, &p->tags_cap, p->nleaves, sizeof(ps_tag)) ||
      grow((void **)&p->fields, &p->fields_cap, p->nleaves, sizeof(ps_field)))
    return -ENOMEM;

  char *text = p->text.data; /* final: nothing appends past the reserve */
  ps_point pt = {.measurement = src->measurement ? src->measurement : "jsonl"};
  size_t ntags = 0, nfields = 0;
  int have_time = 0;
  for (size_t k = 0; k < p->nleaves; k++) {
    const leaf *l = &p->leaves[k];
    const char *key = text + l->key_off;
    if (l->kind == JV_NULL)
      continue;
    if (src->time_key && key_eq(key, src->time_key)) {
      const char *why = NULL;
      if (leaf_time(p, l, &pt.time_ns, &why)) {
        ps_emit_reject(em, "time key '%s' %s", key, why);
        return 0;
      }
      have_time = 1;
      continue;
    }
    if (in_list(src->tag_keys, src->ntag_keys, key)) {
      ps_tag *t = &p->tags[ntags++];
      t->key = key;
      if (l->kind == JV_STR) {
        t->value = text + l->str_off;
      } else if (l->kind == JV_TRUE || l->kind == JV_FALSE) {
        t->value = l->kind == JV_TRUE ? "true" : "false";
      } else {
        /* a tag is a label: 3, not 3.0 */
        char *w = text + p->text.len;
        double d = l->num;
        size_t n = d == floor(d) && fabs(d) < TWO53
                       ? ps_fmt_int64((int64_t)d, w)
                       : ps_fmt_double(d, w);
        p->text.len += n + 1;
        t->value = w;
      }
      continue;
    }
    if (src->nfield_keys && !in_list(src->field_keys, src->nfield_keys, key))
      continue;
    ps_field *f = &p->fields[nfields];
    *f = (ps_field){.key = key};
    ps_ftype decl;
    if (!declared_type(src, key, &decl)) {
      if (l->kind == JV_NUM) {
        f->type = PS_F_FLOAT;
        f->v.f = l->num;
        number_text(f, l);
      } else if (l->kind == JV_STR) {
        f->type = PS_F_STRING;
        f->v.s.p = text + l->str_off;
        f->v.s.n = l->str_len;
      } else {
        f->type = PS_F_BOOL;
        f->v.b = l->kind == JV_TRUE;
      }
      nfields++;
      continue;
    }
    static const char *type_word[] = {"float", "integer", "unsigned",
                                      "boolean", "string"};
    int ok = 0;
    const char *why = NULL;
    switch (decl) {
    case PS_F_FLOAT:
      ok = l->kind == JV_NUM;
      f->v.f = l->num;
      break;
    case PS_F_INT:
      if (l->kind == JV_NUM) {
        int e = exact_i64(l, &f->v.i);
        ok = e == 0;
        why = e == -EINVAL ? "has a fraction"
              : e == -EDOM ? "is beyond 2^53 in exponent form, so its "
                             "digits are not known exactly"
                           : "does not fit a 64-bit integer";
      }
      break;
    case PS_F_UINT:
      if (l->kind == JV_NUM) {
        int e = exact_u64(l, &f->v.u);
        ok = e == 0;
        why = e == -EINVAL ? "has a fraction"
              : e == -EDOM ? "is beyond 2^53 in exponent form, so its "
                             "digits are not known exactly"
                           : "does not fit an unsigned 64-bit integer";
      }
      break;
    case PS_F_BOOL:
      ok = l->kind == JV_TRUE || l->kind == JV_FALSE;
      f->v.b = l->kind == JV_TRUE;
      break;
    case PS_F_STRING:
      ok = l->kind == JV_STR;
      f->v.s.p = text + l->str_off;
      f->v.s.n = l->str_len;
      break;
    }
    if (!ok) {
      unsigned ti = (unsigned)decl < 5 ? (unsigned)decl : 0;
      if (why)
        ps_emit_reject(em, "field '%s' is declared %s but its value %s", key,
                       type_word[ti], why);
      else
        ps_emit_reject(em, "field '%s' is declared %s but holds %s", key,
                       type_word[ti], json_kind(l));
      return 0;
    }
    f->type = decl;
    if (l->kind == JV_NUM)
      number_text(f, l);
    nfields++;
  }
  if (!have_time) {
    if (src->time_key)
      ps_emit_reject(em, "no time key '%s' in the object", src->time_key);
    else
      ps_emit_reject(em, "no time key configured (--time-key or time_key), so "
                         "the line has no timestamp");
    return 0;
  }
  if (ps_lp_sort_fields(p->fields, nfields, &p->sort_tmp, &p->sort_tmp_cap))
    return -ENOMEM;
  pt.tags = p->tags;
  pt.ntags = ntags;
  pt.fields = p->fields;
  pt.nfields = nfields;
  return ps_emit_point(em, &pt);
}

const ps_format_ops ps_format_jsonl = {
    .id = PS_FMT_JSONL,
    .name = "jsonl",
    .input_kind = jsonl_input_kind,
    .open = jsonl_open,
    .line = jsonl_line,
    .document = NULL,
    .finish = NULL,
    .free = jsonl_free,
    .source_mapping = 1,
};
