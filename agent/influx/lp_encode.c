/*
 * influx/lp_encode.c: points to line protocol (include/influx/lp_encode.h).
 *
 * Design
 * - The encoder validates each element before writing it, so a refused
 *   point leaves `out` exactly as it was (we truncate back to the start on
 *   any refusal; nothing half-written ever reaches a batch).
 * - Names (measurement, tag keys and values, field keys) are escaped per
 *   element as InfluxDB 1.x unescapes them (agent/influx/lp_syntax.h). 1.x
 *   never unescapes `\\` in a name, so a backslash is written raw. A
 *   backslash at a name's end cannot be represented (influxdb#5407); one
 *   directly before a separator can in a tag (`a\\ b` is `a\ b`) but not
 *   in a measurement or field key (#6008): those are refused instead of
 *   silently landing as something else.
 * - Tags are sorted with an on-stack index array: no allocation per point.
 * - Space is reserved once per element from a worst case, then written
 *   with plain stores: this is the hot path of every format.
 */
#include "influx/lp_encode.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "influx/numfmt.h"
#include "lp_syntax.h"

/* ------------------------------------------------------------- validation */

/* Length of a valid UTF-8 sequence at p (max n bytes), or 0 when invalid
 * (overlongs, surrogates and code points above U+10FFFF included). */
static size_t utf8_seq(const unsigned char *p, size_t n) {
  unsigned c = p[0];
  if (c < 0x80)
    return 1;
  if (c < 0xC2 || c > 0xF4)
    return 0;
  if (c < 0xE0) {
    return (n >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
  }
  if (c < 0xF0) {
    if (n < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
      return 0;
    if (c == 0xE0 && p[1] < 0xA0)
      return 0;
    if (c == 0xED && p[1] >= 0xA0)
      return 0;
    return 3;
  }
  if (n < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 ||
      (p[3] & 0xC0) != 0x80)
    return 0;
  if (c == 0xF0 && p[1] < 0x90)
    return 0;
  if (c == 0xF4 && p[1] >= 0x90)
    return 0;
  return 4;
}

static int utf8_valid(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    if (p[i] < 0x80) {
      i++;
      continue;
    }
    size_t k = utf8_seq(p + i, n - i);
    if (!k)
      return 0;
    i += k;
  }
  return 1;
}

/* What a byte of a name asks of check_name(): one table lookup per byte
 * decides that an ordinary byte needs nothing (most bytes of most names). */
enum {
  NC_SEP = 1,   /* ',' ' ': escaped in every element */
  NC_EQ = 2,    /* '=': escaped in all but the measurement */
  NC_BS = 4,    /* '\\': may not stand before what the element unescapes */
  NC_CRLF = 8,  /* refused */
  NC_HIGH = 16, /* part of a multi-byte sequence: UTF-8 is checked */
  NC_END = 32,  /* the terminating NUL */
};
static const unsigned char name_class[256] = {
    32,  0,  0,  0,  0,  0,  0,  0,  0,  0,  8,  0,  0,  8,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     1,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  1,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  2,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  4,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
     0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
    16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16, 16,
};

/* Checks a name and returns its escaped length, or 0 with *reason set;
 * *raw gets its length as it is (equal to the escaped one: nothing to
 * escape, put_name() copies it whole). */
static size_t check_name(enum ps_lp_name_kind k, const char *s, size_t *raw,
                         const char **reason) {
  static const char *empty[] = {"empty measurement", "empty tag key",
                                "empty tag value", "empty field key"};
  static const char *crlf[] = {"CR or LF in measurement", "CR or LF in tag key",
                               "CR or LF in tag value", "CR or LF in field key"};
  static const char *trail[] = {
      "measurement ends in a backslash (InfluxDB cannot parse it, influxdb#5407)",
      "tag key ends in a backslash (InfluxDB cannot parse it, influxdb#5407)",
      "tag value ends in a backslash (InfluxDB cannot parse it, influxdb#5407)",
      "field key ends in a backslash (InfluxDB cannot parse it, influxdb#5407)"};
  static const char bsesc_measurement[] =
      "measurement has a backslash before a comma or space; line protocol "
      "cannot carry it (influxdb#6008)";
  static const char bsesc_field_key[] =
      "field key has a backslash before a comma, '=', space or quote; line "
      "protocol cannot carry it (influxdb#6008)";
  static const char *badutf[] = {
      "invalid UTF-8 in measurement", "invalid UTF-8 in tag key",
      "invalid UTF-8 in tag value", "invalid UTF-8 in field key"};
  if (!s || !*s) {
    *reason = empty[k];
    return 0;
  }
  unsigned mask = NC_SEP | NC_BS | NC_CRLF | NC_HIGH | NC_END |
                  (k == PS_LP_MEASUREMENT ? 0u : (unsigned)NC_EQ);
  size_t extra = 0;
  int high = 0;
  const unsigned char *p = (const unsigned char *)s;
  for (;; p++) {
    unsigned c = name_class[*p] & mask;
    if (!c)
      continue;
    if (c & NC_END)
      break;
    if (c & NC_CRLF) {
      *reason = crlf[k];
      return 0;
    }
    if (c & NC_BS) {
      if (p[1] == '\0') {
        *reason = trail[k];
        return 0;
      }
      /* In a tag 1.x reads `\\,` as the backslash and an escaped comma
       * (tested on 1.6.7); a measurement loses that backslash and a field
       * key is refused (docs/line-protocol.md). */
      if ((k == PS_LP_MEASUREMENT || k == PS_LP_FIELD_KEY) &&
          ps_lp_unescaped_after_backslash(k, (char)p[1])) {
        *reason = k == PS_LP_MEASUREMENT ? bsesc_measurement : bsesc_field_key;
        return 0;
      }
      continue;
    }
    if (c & NC_HIGH) {
      high = 1;
      continue;
    }
    extra++; /* a separator to escape */
  }
  size_t n = (size_t)((const char *)p - s);
  if (high && !utf8_valid(s, n)) {
    *reason = badutf[k];
    return 0;
  }
  /* n is known: no strcmp call for every key of every point */
  if ((k == PS_LP_TAG_KEY || k == PS_LP_FIELD_KEY) && n == 4 && memcmp(s, "time", 4) == 0) {
    *reason = k == PS_LP_TAG_KEY ? "tag key named 'time' (InfluxDB drops it)"
                                : "field key named 'time' (InfluxDB drops it)";
    return 0;
  }
  *raw = n;
  return n + extra;
}

/* Names and number texts are a few bytes each, a dozen per point: two
 * overlapping fixed-size moves copy them without a call to memcpy, which
 * costs more than the bytes at these sizes. Reads and writes stay inside
 * [s, s + n) and [w, w + n). */
static inline void move_ends(char *w, const char *s, size_t n, size_t k) {
  uint64_t a = 0, b = 0; /* k <= 8, a constant where inlined */
  memcpy(&a, s, k);
  memcpy(&b, s + n - k, k);
  memcpy(w, &a, k);
  memcpy(w + n - k, &b, k);
}

static inline void copy_short(char *w, const char *s, size_t n) {
  if (n > 16)
    memcpy(w, s, n);
  else if (n >= 8)
    move_ends(w, s, n, 8);
  else if (n >= 4)
    move_ends(w, s, n, 4);
  else
    for (size_t i = 0; i < n; i++)
      w[i] = s[i];
}

static char *put_name(char *w, enum ps_lp_name_kind k, const char *s, size_t raw,
                      size_t escaped) {
  if (raw == escaped) {
    copy_short(w, s, raw);
    return w + raw;
  }
  for (; *s; s++) {
    if (ps_lp_needs_escape(k, *s))
      *w++ = '\\';
    *w++ = *s;
  }
  return w;
}

/* ---------------------------------------------------------------- encoder */

typedef struct tag_ref {
  const ps_tag *t;
  int own; /* 1: the point's own tag, 0: a global tag */
  size_t kraw, kesc, vraw, vesc; /* lengths as given and escaped */
} tag_ref;

static int encode_fail(ps_buf *out, size_t start, const char **reason,
                       const char *why, int rc) {
  ps_buf_truncate(out, start);
  if (reason)
    *reason = why;
  return rc;
}

/* What makes a point refused before a byte is written: its measurement,
 * no field, a time InfluxDB cannot store. 0, or a negative errno and *why. */
static int check_point(const ps_point *p, size_t *mlen, size_t *mraw, const char **why) {
  *mlen = check_name(PS_LP_MEASUREMENT, p->measurement, mraw, why);
  if (!*mlen)
    return -EINVAL;
  if (p->measurement[0] == '#') {
    *why = "measurement starts with '#' (InfluxDB would read the line as a comment)";
    return -EINVAL;
  }
  if (p->nfields == 0) {
    *why = "point has no field";
    return -EINVAL;
  }
  if (p->time_ns < PS_LP_MIN_TIME_NS || p->time_ns > PS_LP_MAX_TIME_NS) {
    *why = "timestamp outside InfluxDB's range (1677-09-21 .. 2262-04-11)";
    return -ERANGE;
  }
  return 0;
}

/* Whether tag key a sorts after b (NULL as ""). The first bytes decide
 * most pairs: a strcmp per pair was 1-2 % of a point's encoding. */
static inline int key_after(const char *a, const char *b) {
  unsigned char ca = a ? (unsigned char)a[0] : 0, cb = b ? (unsigned char)b[0] : 0;
  if (ca != cb)
    return ca > cb;
  return ca && strcmp(a, b) > 0;
}

/* The point's tags and the global ones with a value, sorted by key (stable
 * insertion: own tags before globals on equal keys). 0 or -E2BIG. */
static int collect_tags(const ps_point *p, const ps_tag *extra_tags, size_t nextra,
                        tag_ref *refs, size_t *nref_out, const char **why) {
  size_t nref = 0;
  for (int pass = 0; pass < 2; pass++) {
    const ps_tag *arr = pass == 0 ? p->tags : extra_tags;
    size_t cnt = pass == 0 ? p->ntags : nextra;
    for (size_t i = 0; i < cnt; i++) {
      if (!arr[i].value || !arr[i].value[0])
        continue; /* empty value: absent (InfluxDB refuses empty values) */
      if (nref == PS_LP_MAX_TAGS) {
        *why = "more than 256 tags";
        return -E2BIG;
      }
      refs[nref].t = &arr[i];
      refs[nref].own = pass == 0;
      size_t j = nref++;
      while (j > 0 && key_after(refs[j - 1].t->key, refs[j].t->key)) {
        tag_ref tmp = refs[j];
        refs[j] = refs[j - 1];
        refs[j - 1] = tmp;
        j--;
      }
    }
  }
  *nref_out = nref;
  return 0;
}

/* Drops the globals shadowed by an own tag, checks and measures the names
 * kept (*kept of them) and adds their length to *keylen. 0, or -EINVAL
 * and *why. */
static int keep_tags(tag_ref *refs, size_t nref, size_t *kept_out, size_t *keylen,
                     const char **why) {
  size_t kept = 0, len = *keylen;
  for (size_t i = 0; i < nref; i++) {
    const char *key = refs[i].t->key;
    if (kept > 0 && key && ps_same_str(refs[kept - 1].t->key, key)) {
      if (refs[i].own && refs[kept - 1].own) {
        *why = "duplicate tag key";
        return -EINVAL;
      }
      continue; /* a global tag shadowed by the point's own */
    }
    size_t kl = check_name(PS_LP_TAG_KEY, key, &refs[i].kraw, why);
    if (!kl)
      return -EINVAL;
    size_t vl = check_name(PS_LP_TAG_VALUE, refs[i].t->value, &refs[i].vraw, why);
    if (!vl)
      return -EINVAL;
    refs[i].kesc = kl;
    refs[i].vesc = vl;
    len += 2 + kl + vl;
    refs[kept++] = refs[i];
  }
  *kept_out = kept;
  *keylen = len;
  return 0;
}

/* A string field's value, quoted, at w; returns the byte after it. */
static char *put_string_value(char *w, const char *s, size_t n) {
  *w++ = '"';
  for (size_t j = 0; j < n; j++) {
    char c = s[j];
    if (c == '"' || c == '\\') {
      *w++ = '\\';
      *w++ = c;
    } else if (c == '\n' || c == '\r') {
      /* no escape exists: store the two characters \n or \r */
      *w++ = '\\';
      *w++ = '\\';
      *w++ = c == '\n' ? 'n' : 'r';
    } else {
      *w++ = c;
    }
  }
  *w++ = '"';
  return w;
}

/* The number's own text (ps_field.text) with its type's suffix. */
static char *put_number_text(char *w, const ps_field *f) {
  copy_short(w, f->text, f->text_len);
  w += f->text_len;
  if (f->type == PS_F_FLOAT && f->text_whole) {
    *w++ = '.';
    *w++ = '0';
  } else if (f->type == PS_F_INT) {
    *w++ = 'i';
  } else if (f->type == PS_F_UINT) {
    *w++ = 'u';
  }
  return w;
}

/* The fields, comma-separated, appended to `out`. 0, or a negative errno
 * and *why. One loop over them all: a function per field cost the
 * encoder three instructions more a field (callgrind on `convert -f lp`). */
static int put_fields(ps_buf *out, const ps_field *fields, size_t n, const char **why) {
  for (size_t i = 0; i < n; i++) {
    const ps_field *f = &fields[i];
    size_t kraw = 0;
    size_t kl = check_name(PS_LP_FIELD_KEY, f->key, &kraw, why);
    if (!kl)
      return -EINVAL;
    /* worst case for a non-string value: 32 bytes; strings are measured */
    size_t need = kl + 2 + 34 + (f->text ? f->text_len : 0);
    if (f->type == PS_F_STRING) {
      if (f->v.s.n && !f->v.s.p) {
        *why = "string field without data";
        return -EINVAL;
      }
      if (!utf8_valid(f->v.s.p, f->v.s.n)) {
        *why = "invalid UTF-8 in string field";
        return -EINVAL;
      }
      need += 3 * f->v.s.n; /* worst case: LF becomes \\n */
    }
    int rc = ps_buf_reserve(out, need);
    if (rc) {
      *why = "out of memory";
      return rc;
    }
    char *w = out->data + out->len;
    if (i)
      *w++ = ',';
    w = put_name(w, PS_LP_FIELD_KEY, f->key, kraw, kl);
    *w++ = '=';
    if (f->text && (f->type == PS_F_FLOAT || f->type == PS_F_INT || f->type == PS_F_UINT)) {
      /* the source's own digits, already what ps_fmt_* would write */
      w = put_number_text(w, f);
      out->len = (size_t)(w - out->data);
      continue;
    }
    switch (f->type) {
    case PS_F_FLOAT:
      if (!isfinite(f->v.f)) {
        *why = "NaN or Infinity float (InfluxDB rejects them)";
        return -EINVAL;
      }
      w += ps_fmt_double(f->v.f, w);
      break;
    case PS_F_INT:
      w += ps_fmt_int64(f->v.i, w);
      *w++ = 'i';
      break;
    case PS_F_UINT:
      w += ps_fmt_uint64(f->v.u, w);
      *w++ = 'u';
      break;
    case PS_F_BOOL:
      memcpy(w, f->v.b ? "true" : "false", f->v.b ? 4 : 5);
      w += f->v.b ? 4 : 5;
      break;
    case PS_F_STRING:
      w = put_string_value(w, f->v.s.p, f->v.s.n);
      break;
    default:
      *why = "unknown field type";
      return -EINVAL;
    }
    out->len = (size_t)(w - out->data);
  }
  return 0;
}

int ps_lp_encode(ps_buf *out, const ps_point *p, const ps_tag *extra_tags,
                 size_t nextra, const char **reason) {
  const char *why = NULL;
  size_t start = out->len;
  if (!p)
    return encode_fail(out, start, reason, "no point", -EINVAL);
  size_t mraw = 0, mlen = 0;
  int rc = check_point(p, &mlen, &mraw, &why);
  if (rc)
    return encode_fail(out, start, reason, why, rc);

  tag_ref refs[PS_LP_MAX_TAGS];
  size_t nref = 0, kept = 0, keylen = mlen;
  if ((rc = collect_tags(p, extra_tags, nextra, refs, &nref, &why)) ||
      (rc = keep_tags(refs, nref, &kept, &keylen, &why)))
    return encode_fail(out, start, reason, why, rc);
  if (keylen > 65535)
    return encode_fail(out, start, reason,
                       "series key (measurement and tags) longer than 65535 "
                       "bytes",
                       -E2BIG);

  rc = ps_buf_reserve(out, keylen + 1);
  if (rc)
    return encode_fail(out, start, reason, "out of memory", rc);
  char *w = out->data + out->len;
  w = put_name(w, PS_LP_MEASUREMENT, p->measurement, mraw, mlen);
  for (size_t i = 0; i < kept; i++) {
    *w++ = ',';
    w = put_name(w, PS_LP_TAG_KEY, refs[i].t->key, refs[i].kraw, refs[i].kesc);
    *w++ = '=';
    w = put_name(w, PS_LP_TAG_VALUE, refs[i].t->value, refs[i].vraw, refs[i].vesc);
  }
  *w++ = ' ';
  out->len = (size_t)(w - out->data);

  if ((rc = put_fields(out, p->fields, p->nfields, &why)))
    return encode_fail(out, start, reason, why, rc);
  rc = ps_buf_reserve(out, 24);
  if (rc)
    return encode_fail(out, start, reason, "out of memory", rc);
  w = out->data + out->len;
  *w++ = ' ';
  w += ps_fmt_int64(p->time_ns, w);
  *w++ = '\n';
  out->len = (size_t)(w - out->data);
  out->data[out->len] = '\0';
  return 0;
}

/* ------------------------------------------------------------ field order */

static int field_before(const ps_field *x, const ps_field *y) {
  /* first byte inline: most keys differ there, and strcmp is a call */
  unsigned char a = (unsigned char)x->key[0], b = (unsigned char)y->key[0];
  if (a != b)
    return a < b;
  return strcmp(x->key, y->key) < 0;
}

int ps_lp_sort_fields(ps_field *f, size_t n, ps_field **tmp, size_t *tmp_cap) {
  if (n <= 24) {
    /* stable insertion sort: equal keys keep their order (last one wins in
     * InfluxDB, as in the source) */
    for (size_t i = 1; i < n; i++) {
      if (!field_before(&f[i], &f[i - 1]))
        continue;
      ps_field x = f[i];
      size_t j = i;
      while (j > 0 && field_before(&x, &f[j - 1])) {
        f[j] = f[j - 1];
        j--;
      }
      f[j] = x;
    }
    return 0;
  }
  if (*tmp_cap < n) {
    ps_field *t = realloc(*tmp, n * sizeof *t);
    if (!t)
      return -ENOMEM;
    *tmp = t;
    *tmp_cap = n;
  }
  /* bottom-up merge sort, stable, O(n log n) for 20 000-field lines */
  ps_field *src = f, *dst = *tmp;
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n;
      size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        dst[k++] = field_before(&src[j], &src[i]) ? src[j++] : src[i++];
      while (i < mid)
        dst[k++] = src[i++];
      while (j < hi)
        dst[k++] = src[j++];
    }
    ps_field *t = src;
    src = dst;
    dst = t;
  }
  if (src != f)
    memcpy(f, src, n * sizeof *f);
  return 0;
}
