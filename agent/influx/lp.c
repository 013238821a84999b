/*
 * lp.c: line protocol encoding, number formatting and line parsing
 * (include/influx/lp.h).
 *
 * Design
 * - The encoder validates each element before writing it, so a refused
 *   point leaves `out` exactly as it was (we truncate back to the start on
 *   any refusal; nothing half-written ever reaches a batch).
 * - Names (measurement, tag keys and values, field keys) are escaped per
 *   element as InfluxDB 1.x unescapes them. 1.x never unescapes `\\` in a
 *   name, so a backslash is written raw; a backslash directly before a
 *   character that must be escaped in that element (or at its end) cannot be
 *   represented at all (influxdb#5407, #6008), and is refused instead of
 *   silently landing as something else.
 * - Tags are sorted with an on-stack index array: no allocation per point.
 * - Floats: whole values below 2^53 take an integer path; values in
 *   [1e-7, 2^53) get exact shortest digits from 128-bit integer arithmetic
 *   (shortest_digits); only values outside that range fall back to
 *   %.15e/%.16e/%.17e with a strtod check, also shortest, only slower. The
 *   layout is Python's repr (also JavaScript's, within a rule): "100.0",
 *   "0.001", "1e-05", "1e+16" - the form most reference tools print.
 * - The parser mirrors the 1.x scanner (a backslash always skips the next
 *   byte while scanning; only the element's escape set is unescaped), so a
 *   normalised line lands exactly as the original would have.
 */
#include "influx/lp.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- numbers */

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static size_t fmt_u64(uint64_t v, char *buf) {
  char tmp[24];
  char *p = tmp + sizeof tmp;
  while (v >= 100) {
    unsigned d = (unsigned)(v % 100) * 2;
    v /= 100;
    *--p = digit_pairs[d + 1];
    *--p = digit_pairs[d];
  }
  if (v >= 10) {
    unsigned d = (unsigned)v * 2;
    *--p = digit_pairs[d + 1];
    *--p = digit_pairs[d];
  } else {
    *--p = (char)('0' + v);
  }
  size_t n = (size_t)(tmp + sizeof tmp - p);
  memcpy(buf, p, n);
  buf[n] = '\0';
  return n;
}

size_t ps_fmt_int64(int64_t v, char *buf) {
  if (v < 0) {
    buf[0] = '-';
    /* negate in unsigned arithmetic so INT64_MIN does not overflow */
    return 1 + fmt_u64((uint64_t)0 - (uint64_t)v, buf + 1);
  }
  return fmt_u64((uint64_t)v, buf);
}

static size_t fmt_uint64(uint64_t v, char *buf) { return fmt_u64(v, buf); }

#define TWO53 9007199254740992.0

/* Shortest digits for 1e-7 <= a < 2^53, exactly (Ryu's digit loop on
 * 128-bit integers). a = m2 * 2^e; the values that read back as a are the
 * open (closed when m2 is even: ties go to even) interval between the
 * midpoints to its neighbours. Scaled by 10^q and 4 * 2^-e these are
 * integers small enough for 128 bits in this range, so no tables and no
 * approximation are needed. Returns the decimal mantissa; *exp10 its
 * power of ten. */
static uint64_t shortest_digits(double a, int *exp10) {
  static const uint64_t pow5[28] = {
      1ULL, 5ULL, 25ULL, 125ULL, 625ULL, 3125ULL, 15625ULL, 78125ULL,
      390625ULL, 1953125ULL, 9765625ULL, 48828125ULL, 244140625ULL,
      1220703125ULL, 6103515625ULL, 30517578125ULL, 152587890625ULL,
      762939453125ULL, 3814697265625ULL, 19073486328125ULL,
      95367431640625ULL, 476837158203125ULL, 2384185791015625ULL,
      11920928955078125ULL, 59604644775390625ULL, 298023223876953125ULL,
      1490116119384765625ULL, 7450580596923828125ULL};
  uint64_t bits;
  memcpy(&bits, &a, sizeof bits);
  uint64_t frac = bits & ((1ULL << 52) - 1);
  int bexp = (int)((bits >> 52) & 0x7FF) - 1023; /* a in [2^bexp, 2^bexp+1) */
  uint64_t m2 = frac | (1ULL << 52);
  int e = bexp - 52;
  int accept_bounds = (m2 & 1) == 0;
  unsigned mm_shift = frac != 0; /* at a power of two the lower gap halves */
  /* q so that a * 10^q is about 1e17: the interval is then >= 10 wide */
  int k10 = (int)floor((double)bexp * 0.30102999566398120);
  int q = 17 - k10;
  typedef unsigned __int128 u128;
  u128 p5 = pow5[q];
  u128 xv = (u128)(4 * m2) * p5;
  u128 xp = (u128)(4 * m2 + 2) * p5;
  u128 xm = (u128)(4 * m2 - 1 - mm_shift) * p5;
  int t = e - 2 + q;
  uint64_t vr, vp, vm;
  int vr_tz, vp_tz, vm_tz;
  if (t >= 0) {
    vr = (uint64_t)(xv << t);
    vp = (uint64_t)(xp << t);
    vm = (uint64_t)(xm << t);
    vr_tz = vp_tz = vm_tz = 1;
  } else {
    int sh = -t;
    u128 mask = ((u128)1 << sh) - 1;
    vr = (uint64_t)(xv >> sh);
    vp = (uint64_t)(xp >> sh);
    vm = (uint64_t)(xm >> sh);
    vr_tz = (xv & mask) == 0;
    vp_tz = (xp & mask) == 0;
    vm_tz = (xm & mask) == 0;
  }
  if (!accept_bounds) {
    vp -= (uint64_t)vp_tz; /* the exact upper midpoint is excluded */
    vm_tz = 0;             /* and so is the lower one */
  }
  int removed = 0;
  unsigned last = 0;
  if (!vm_tz && !vr_tz) {
    /* the common case: no exact bound, no tie; drop digits in pairs
     * first (Ryu does pairs; short values save most from
     * bigger steps), then one by one */
    while (vp / 100000000 > vm / 100000000) {
      last = (unsigned)(vr % 100000000 / 10000000);
      vr /= 100000000;
      vp /= 100000000;
      vm /= 100000000;
      removed += 8;
    }
    while (vp / 10000 > vm / 10000) {
      last = (unsigned)(vr % 10000 / 1000);
      vr /= 10000;
      vp /= 10000;
      vm /= 10000;
      removed += 4;
    }
    while (vp / 100 > vm / 100) {
      last = (unsigned)(vr % 100) / 10;
      vr /= 100;
      vp /= 100;
      vm /= 100;
      removed += 2;
    }
  }
  while (vp / 10 > vm / 10) {
    vm_tz &= vm % 10 == 0;
    vr_tz &= last == 0;
    last = (unsigned)(vr % 10);
    vr /= 10;
    vp /= 10;
    vm /= 10;
    removed++;
  }
  if (vm_tz) {
    while (vm % 10 == 0) {
      vr_tz &= last == 0;
      last = (unsigned)(vr % 10);
      vr /= 10;
      vp /= 10;
      vm /= 10;
      removed++;
    }
  }
  if (vr_tz && last == 5 && vr % 2 == 0)
    last = 4; /* exactly half way: round to even */
  uint64_t out = vr + ((vr == vm && !vm_tz) || last >= 5);
  *exp10 = removed - q;
  return out;
}

/* Shortest digits of a (> 0) by trying 15, 16, 17 significant digits with
 * a strtod check: slow, only for the extremes outside shortest_digits. */
static size_t digits_slow(double a, char *digits, int *decpt) {
  char tmp[40];
  /* For normal doubles every decimal of <= 15 digits survives the round
   * trip, so %.15e stripped of zeros is already shortest; subnormals hold
   * fewer digits and must be tried from one digit up. */
  int first = a < 2.2250738585072014e-308 ? 1 : 15;
  for (int prec = first; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*e", prec - 1, a);
    if (prec == 17 || strtod(tmp, NULL) == a)
      break;
  }
  /* tmp is d.ddddde[+-]XX */
  size_t nd = 0;
  const char *p = tmp;
  for (; *p && *p != 'e'; p++)
    if (*p >= '0' && *p <= '9')
      digits[nd++] = *p;
  *decpt = atoi(p + 1) + 1;
  while (nd > 1 && digits[nd - 1] == '0')
    nd--;
  return nd;
}

/* Lays out digits (value 0.d1d2... * 10^decpt) the way Python's repr and
 * JavaScript do: fixed notation with at least one decimal ("100.0", so a
 * float always looks like one), exponent notation outside 1e-4 .. 1e16. */
static size_t layout(char *buf, size_t n, const char *digits, size_t nd,
                     int decpt) {
  if (decpt <= -4 || decpt > 16) {
    buf[n++] = digits[0];
    if (nd > 1) {
      buf[n++] = '.';
      memcpy(buf + n, digits + 1, nd - 1);
      n += nd - 1;
    }
    int e = decpt - 1;
    buf[n++] = 'e';
    buf[n++] = e < 0 ? '-' : '+';
    if (e < 0)
      e = -e;
    if (e >= 100)
      buf[n++] = (char)('0' + e / 100);
    buf[n++] = (char)('0' + e / 10 % 10);
    buf[n++] = (char)('0' + e % 10);
  } else if (decpt <= 0) {
    buf[n++] = '0';
    buf[n++] = '.';
    for (int z = decpt; z < 0; z++)
      buf[n++] = '0';
    memcpy(buf + n, digits, nd);
    n += nd;
  } else if ((size_t)decpt >= nd) {
    memcpy(buf + n, digits, nd);
    n += nd;
    for (size_t z = nd; z < (size_t)decpt; z++)
      buf[n++] = '0';
    buf[n++] = '.';
    buf[n++] = '0';
  } else {
    memcpy(buf + n, digits, (size_t)decpt);
    n += (size_t)decpt;
    buf[n++] = '.';
    memcpy(buf + n, digits + decpt, nd - (size_t)decpt);
    n += nd - (size_t)decpt;
  }
  buf[n] = '\0';
  return n;
}

size_t ps_fmt_double(double v, char *buf) {
  size_t n = 0;
  double a = v;
  if (signbit(v)) {
    buf[n++] = '-';
    a = -v;
  }
  char digits[24];
  size_t nd;
  int decpt;
  if (a == 0) {
    memcpy(buf + n, "0.0", 4);
    return n + 3;
  }
  if (a < TWO53 && a == floor(a)) {
    /* whole: the integer digits are the shortest form (below 1e16) */
    n += fmt_u64((uint64_t)a, buf + n);
    buf[n++] = '.';
    buf[n++] = '0';
    buf[n] = '\0';
    return n;
  }
  if (a >= TWO53 || a < 1e-7) {
    nd = digits_slow(a, digits, &decpt);
  } else {
    int exp10;
    uint64_t m = shortest_digits(a, &exp10);
    while (m % 10 == 0) {
      m /= 10;
      exp10++;
    }
    nd = fmt_u64(m, digits);
    decpt = (int)nd + exp10;
  }
  return layout(buf, n, digits, nd, decpt);
}

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

enum name_kind { NAME_MEASUREMENT, NAME_TAG_KEY, NAME_TAG_VALUE, NAME_FIELD_KEY };

static int needs_escape(enum name_kind k, char c) {
  if (c == ',' || c == ' ')
    return 1;
  if (c == '=')
    return k != NAME_MEASUREMENT;
  return 0;
}

/* Characters a backslash must not stand before: those 1.x would unescape
 * (so the backslash would vanish) or that end the element. */
static int unescaped_after_backslash(enum name_kind k, char c) {
  if (needs_escape(k, c))
    return 1;
  return k == NAME_FIELD_KEY && c == '"';
}

/* Checks a name and returns its escaped length, or 0 with *reason set. */
static size_t check_name(enum name_kind k, const char *s, const char **reason) {
  static const char *empty[] = {"empty measurement", "empty tag key",
                                "empty tag value", "empty field key"};
  static const char *crlf[] = {"CR or LF in measurement", "CR or LF in tag key",
                               "CR or LF in tag value", "CR or LF in field key"};
  static const char *trail[] = {
      "measurement ends in a backslash (InfluxDB cannot parse it, influxdb#5407)",
      "tag key ends in a backslash (InfluxDB cannot parse it, influxdb#5407)",
      "tag value ends in a backslash (InfluxDB cannot parse it, influxdb#5407)",
      "field key ends in a backslash (InfluxDB cannot parse it, influxdb#5407)"};
  static const char *bsesc[] = {
      "measurement has a backslash before a comma or space; line protocol "
      "cannot carry it (influxdb#6008)",
      "tag key has a backslash before a comma, '=' or space; line protocol "
      "cannot carry it (influxdb#6008)",
      "tag value has a backslash before a comma, '=' or space; line protocol "
      "cannot carry it (influxdb#6008)",
      "field key has a backslash before a comma, '=', space or quote; line "
      "protocol cannot carry it (influxdb#6008)"};
  static const char *badutf[] = {
      "invalid UTF-8 in measurement", "invalid UTF-8 in tag key",
      "invalid UTF-8 in tag value", "invalid UTF-8 in field key"};
  if (!s || !*s) {
    *reason = empty[k];
    return 0;
  }
  size_t n = 0, extra = 0;
  int high = 0;
  for (const char *p = s; *p; p++, n++) {
    char c = *p;
    if (c == '\n' || c == '\r') {
      *reason = crlf[k];
      return 0;
    }
    if (c == '\\') {
      if (p[1] == '\0') {
        *reason = trail[k];
        return 0;
      }
      if (unescaped_after_backslash(k, p[1])) {
        *reason = bsesc[k];
        return 0;
      }
    }
    if (needs_escape(k, c))
      extra++;
    high |= (unsigned char)c & 0x80;
  }
  if (high && !utf8_valid(s, n)) {
    *reason = badutf[k];
    return 0;
  }
  /* n is known: no strcmp call for every key of every point */
  if ((k == NAME_TAG_KEY || k == NAME_FIELD_KEY) && n == 4 && memcmp(s, "time", 4) == 0) {
    *reason = k == NAME_TAG_KEY ? "tag key named 'time' (InfluxDB drops it)"
                                : "field key named 'time' (InfluxDB drops it)";
    return 0;
  }
  return n + extra;
}

static char *put_name(char *w, enum name_kind k, const char *s) {
  for (; *s; s++) {
    if (needs_escape(k, *s))
      *w++ = '\\';
    *w++ = *s;
  }
  return w;
}

/* ---------------------------------------------------------------- encoder */

typedef struct tag_ref {
  const ps_tag *t;
  int own; /* 1: the point's own tag, 0: a global tag */
} tag_ref;

static int encode_fail(ps_buf *out, size_t start, const char **reason,
                       const char *why, int rc) {
  ps_buf_truncate(out, start);
  if (reason)
    *reason = why;
  return rc;
}

int ps_lp_encode(ps_buf *out, const ps_point *p, const ps_tag *extra_tags,
                 size_t nextra, const char **reason) {
  const char *why = NULL;
  size_t start = out->len;
  if (!p)
    return encode_fail(out, start, reason, "no point", -EINVAL);
  size_t mlen = check_name(NAME_MEASUREMENT, p->measurement, &why);
  if (!mlen)
    return encode_fail(out, start, reason, why, -EINVAL);
  if (p->measurement[0] == '#')
    return encode_fail(out, start, reason,
                       "measurement starts with '#' (InfluxDB would read the "
                       "line as a comment)",
                       -EINVAL);
  if (p->nfields == 0)
    return encode_fail(out, start, reason, "point has no field", -EINVAL);
  if (p->time_ns < PS_LP_MIN_TIME_NS || p->time_ns > PS_LP_MAX_TIME_NS)
    return encode_fail(out, start, reason,
                       "timestamp outside InfluxDB's range (1677-09-21 .. "
                       "2262-04-11)",
                       -ERANGE);

  /* Collect, sort (stable insertion: own tags before globals on equal
   * keys), then drop globals shadowed by an own tag. */
  tag_ref refs[PS_LP_MAX_TAGS];
  size_t nref = 0;
  for (int pass = 0; pass < 2; pass++) {
    const ps_tag *arr = pass == 0 ? p->tags : extra_tags;
    size_t cnt = pass == 0 ? p->ntags : nextra;
    for (size_t i = 0; i < cnt; i++) {
      if (!arr[i].value || !arr[i].value[0])
        continue; /* empty value: absent (InfluxDB refuses empty values) */
      if (nref == PS_LP_MAX_TAGS)
        return encode_fail(out, start, reason, "more than 256 tags", -E2BIG);
      refs[nref].t = &arr[i];
      refs[nref].own = pass == 0;
      size_t j = nref++;
      while (j > 0 && strcmp(refs[j - 1].t->key ? refs[j - 1].t->key : "",
                             refs[j].t->key ? refs[j].t->key : "") > 0) {
        tag_ref tmp = refs[j];
        refs[j] = refs[j - 1];
        refs[j - 1] = tmp;
        j--;
      }
    }
  }

  size_t keylen = mlen;
  size_t kept = 0;
  for (size_t i = 0; i < nref; i++) {
    const char *key = refs[i].t->key;
    if (kept > 0 && key && strcmp(refs[kept - 1].t->key, key) == 0) {
      if (refs[i].own && refs[kept - 1].own)
        return encode_fail(out, start, reason, "duplicate tag key", -EINVAL);
      continue; /* a global tag shadowed by the point's own */
    }
    size_t kl = check_name(NAME_TAG_KEY, key, &why);
    if (!kl)
      return encode_fail(out, start, reason, why, -EINVAL);
    size_t vl = check_name(NAME_TAG_VALUE, refs[i].t->value, &why);
    if (!vl)
      return encode_fail(out, start, reason, why, -EINVAL);
    keylen += 2 + kl + vl;
    refs[kept++] = refs[i];
  }
  if (keylen > 65535)
    return encode_fail(out, start, reason,
                       "series key (measurement and tags) longer than 65535 "
                       "bytes",
                       -E2BIG);

  int rc = ps_buf_reserve(out, keylen + 1);
  if (rc)
    return encode_fail(out, start, reason, "out of memory", rc);
  char *w = out->data + out->len;
  w = put_name(w, NAME_MEASUREMENT, p->measurement);
  for (size_t i = 0; i < kept; i++) {
    *w++ = ',';
    w = put_name(w, NAME_TAG_KEY, refs[i].t->key);
    *w++ = '=';
    w = put_name(w, NAME_TAG_VALUE, refs[i].t->value);
  }
  *w++ = ' ';
  out->len = (size_t)(w - out->data);

  for (size_t i = 0; i < p->nfields; i++) {
    const ps_field *f = &p->fields[i];
    size_t kl = check_name(NAME_FIELD_KEY, f->key, &why);
    if (!kl)
      return encode_fail(out, start, reason, why, -EINVAL);
    /* worst case for a non-string value: 32 bytes; strings are measured */
    size_t need = kl + 2 + 34;
    if (f->type == PS_F_STRING) {
      if (f->v.s.n && !f->v.s.p)
        return encode_fail(out, start, reason, "string field without data",
                           -EINVAL);
      if (!utf8_valid(f->v.s.p, f->v.s.n))
        return encode_fail(out, start, reason, "invalid UTF-8 in string field",
                           -EINVAL);
      need += 3 * f->v.s.n; /* worst case: LF becomes \\n */
    }
    rc = ps_buf_reserve(out, need);
    if (rc)
      return encode_fail(out, start, reason, "out of memory", rc);
    w = out->data + out->len;
    if (i)
      *w++ = ',';
    w = put_name(w, NAME_FIELD_KEY, f->key);
    *w++ = '=';
    switch (f->type) {
    case PS_F_FLOAT:
      if (!isfinite(f->v.f))
        return encode_fail(out, start, reason,
                           "NaN or Infinity float (InfluxDB rejects them)",
                           -EINVAL);
      w += ps_fmt_double(f->v.f, w);
      break;
    case PS_F_INT:
      w += ps_fmt_int64(f->v.i, w);
      *w++ = 'i';
      break;
    case PS_F_UINT:
      w += fmt_uint64(f->v.u, w);
      *w++ = 'u';
      break;
    case PS_F_BOOL:
      memcpy(w, f->v.b ? "true" : "false", f->v.b ? 4 : 5);
      w += f->v.b ? 4 : 5;
      break;
    case PS_F_STRING: {
      *w++ = '"';
      const char *s = f->v.s.p;
      for (size_t j = 0; j < f->v.s.n; j++) {
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
      break;
    }
    default:
      return encode_fail(out, start, reason, "unknown field type", -EINVAL);
    }
    out->len = (size_t)(w - out->data);
  }
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

/* ----------------------------------------------------------------- parser */

void ps_lp_scratch_init(ps_lp_scratch *s) {
  memset(s, 0, sizeof *s);
  ps_buf_init(&s->text, 0);
}

void ps_lp_scratch_free(ps_lp_scratch *s) {
  if (!s)
    return;
  ps_buf_free(&s->text);
  free(s->fields);
  free(s->sort_tmp);
  s->fields = NULL;
  s->sort_tmp = NULL;
  s->fields_cap = s->sort_tmp_cap = 0;
}

typedef struct lp_cursor {
  const char *line;
  const char *p;
  const char *end;
  ps_lp_scratch *s;
} lp_cursor;

static int parse_fail(lp_cursor *c, const char *at, const char **reason,
                      const char *why) {
  *reason = why;
  c->s->err_col = (size_t)(at - c->line) + 1;
  return -EINVAL;
}

/* Scans a name up to an unescaped terminator, copying it unescaped into the
 * scratch text. Returns the offset of the copy in s->text. */
static size_t scan_name(lp_cursor *c, enum name_kind k, const char *stops) {
  ps_buf *t = &c->s->text;
  size_t off = t->len;
  char *w = t->data + t->len;
  while (c->p < c->end && !strchr(stops, *c->p)) {
    char ch = *c->p;
    if (ch == '\\' && c->p + 1 < c->end) {
      char nx = c->p[1];
      if (unescaped_after_backslash(k, nx)) {
        *w++ = nx;
      } else {
        *w++ = '\\';
        *w++ = nx;
      }
      c->p += 2;
      continue;
    }
    *w++ = ch;
    c->p++;
  }
  *w++ = '\0';
  t->len = (size_t)(w - t->data);
  return off;
}

static int parse_bool(const char *p, size_t n, int *out) {
  static const char *t[] = {"t", "T", "true", "True", "TRUE"};
  static const char *f[] = {"f", "F", "false", "False", "FALSE"};
  for (int i = 0; i < 5; i++) {
    if (strlen(t[i]) == n && memcmp(p, t[i], n) == 0) {
      *out = 1;
      return 1;
    }
    if (strlen(f[i]) == n && memcmp(p, f[i], n) == 0) {
      *out = 0;
      return 1;
    }
  }
  return 0;
}

/* A float as 1.x accepts it: [-](digits[.digits]|.digits)[(e|E)[+-]digits] */
static int float_syntax(const char *p, size_t n) {
  size_t i = 0, d = 0;
  if (i < n && p[i] == '-')
    i++;
  while (i < n && p[i] >= '0' && p[i] <= '9')
    i++, d++;
  if (i < n && p[i] == '.') {
    i++;
    while (i < n && p[i] >= '0' && p[i] <= '9')
      i++, d++;
  }
  if (!d)
    return 0;
  if (i < n && (p[i] == 'e' || p[i] == 'E')) {
    i++;
    if (i < n && (p[i] == '+' || p[i] == '-'))
      i++;
    size_t e = 0;
    while (i < n && p[i] >= '0' && p[i] <= '9')
      i++, e++;
    if (!e)
      return 0;
  }
  return i == n;
}

/* Clinger's fast path: a decimal of at most 15 significant digits with a
 * power of ten up to 22 is m * 10^e or m / 10^e of two exact doubles, and
 * one IEEE operation rounds that correctly - the same double strtod gives,
 * without strtod's copy, locale lookup and big-number fallback. Returns 0
 * when the text is outside that path (the caller uses strtod). The syntax
 * has been checked by float_syntax() already. */
static int decimal_fast(const char *p, size_t n, double *out) {
  static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  size_t i = 0;
  int neg = 0, digits = 0, exp10 = 0;
  uint64_t m = 0;
  if (p[i] == '-') {
    neg = 1;
    i++;
  }
  for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
    if (m || p[i] != '0')
      digits++;
    m = m * 10 + (uint64_t)(p[i] - '0');
    if (digits > 15)
      return 0;
  }
  if (i < n && p[i] == '.') {
    for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
      if (m || p[i] != '0')
        digits++;
      m = m * 10 + (uint64_t)(p[i] - '0');
      exp10--;
      if (digits > 15)
        return 0;
    }
  }
  if (i < n) {
    /* exponent: [eE][+-]digits */
    i++;
    int eneg = 0, e = 0;
    if (p[i] == '+' || p[i] == '-')
      eneg = p[i++] == '-';
    for (; i < n; i++) {
      e = e * 10 + (p[i] - '0');
      if (e > 400)
        return 0;
    }
    exp10 += eneg ? -e : e;
  }
  double d = (double)m;
  if (exp10 < -22 || exp10 > 22)
    return 0;
  d = exp10 < 0 ? d / p10[-exp10] : d * p10[exp10];
  *out = neg ? -d : d;
  return 1;
}

int ps_lp_decimal(const char *p, size_t n, double *out) {
  if (!float_syntax(p, n))
    return -EINVAL;
  if (decimal_fast(p, n, out))
    return 0;
  char tmp[64];
  char *heap = NULL, *src = tmp;
  if (n >= sizeof tmp) {
    heap = malloc(n + 1);
    if (!heap)
      return -ENOMEM;
    src = heap;
  }
  memcpy(src, p, n);
  src[n] = '\0';
  *out = strtod(src, NULL);
  free(heap);
  return isfinite(*out) ? 0 : -ERANGE;
}

static int all_digits(const char *p, size_t n) {
  if (!n)
    return 0;
  for (size_t i = 0; i < n; i++)
    if (p[i] < '0' || p[i] > '9')
      return 0;
  return 1;
}

/* Exact decimal integer parse (optional '-') with overflow detection. */
static int parse_i64(const char *p, size_t n, int64_t *out) {
  int neg = 0;
  if (n && *p == '-') {
    neg = 1;
    p++;
    n--;
  }
  if (!all_digits(p, n))
    return -EINVAL;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned d = (unsigned)(p[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -ERANGE;
    v = v * 10 + d;
  }
  if (neg) {
    if (v > (uint64_t)INT64_MAX + 1)
      return -ERANGE;
    *out = (int64_t)(0 - v);
  } else {
    if (v > (uint64_t)INT64_MAX)
      return -ERANGE;
    *out = (int64_t)v;
  }
  return 0;
}

static int parse_u64(const char *p, size_t n, uint64_t *out) {
  if (!all_digits(p, n))
    return -EINVAL;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned d = (unsigned)(p[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -ERANGE;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int ps_lp_parse_point(ps_lp_scratch *s, const char *line, size_t len,
                      ps_point *out, const char **reason) {
  const char *dummy;
  if (!reason)
    reason = &dummy;
  s->err_col = 0;
  lp_cursor c = {line, line, line + len, s};
  while (c.p < c.end && (*c.p == ' ' || *c.p == '\t'))
    c.p++;
  if (c.p == c.end || *c.p == '#')
    return 1;
  if (memchr(c.p, '\0', (size_t)(c.end - c.p)))
    return parse_fail(&c, memchr(c.p, '\0', (size_t)(c.end - c.p)), reason,
                      "NUL byte in line");
  /* Unescaped text never exceeds the input, plus one NUL per element. */
  ps_buf_reset(&s->text);
  if (ps_buf_reserve(&s->text, 2 * len + 16))
    return parse_fail(&c, c.p, reason, "out of memory");

  size_t moff = scan_name(&c, NAME_MEASUREMENT, ", ");
  size_t ntags = 0;
  size_t tag_off[PS_LP_MAX_TAGS][2];
  while (c.p < c.end && *c.p == ',') {
    c.p++;
    const char *at = c.p;
    if (ntags == PS_LP_MAX_TAGS)
      return parse_fail(&c, at, reason, "more than 256 tags");
    tag_off[ntags][0] = scan_name(&c, NAME_TAG_KEY, ",= ");
    if (c.p >= c.end || *c.p != '=')
      return parse_fail(&c, c.p, reason, "tag without '=value'");
    c.p++;
    const char *vat = c.p;
    tag_off[ntags][1] = scan_name(&c, NAME_TAG_VALUE, ", ");
    if (s->text.data[tag_off[ntags][1]] == '\0')
      return parse_fail(&c, vat, reason, "missing tag value");
    ntags++;
  }
  if (c.p >= c.end || *c.p != ' ')
    return parse_fail(&c, c.p, reason, "no fields (expected a space after the "
                                       "measurement and tags)");
  while (c.p < c.end && *c.p == ' ')
    c.p++;

  size_t nfields = 0;
  for (;;) {
    const char *at = c.p;
    size_t koff = scan_name(&c, NAME_FIELD_KEY, ",= ");
    if (c.p >= c.end || *c.p != '=')
      return parse_fail(&c, c.p, reason, "field without '=value'");
    if (s->text.data[koff] == '\0')
      return parse_fail(&c, at, reason, "empty field key");
    c.p++;
    if (nfields == s->fields_cap) {
      size_t cap = s->fields_cap ? s->fields_cap * 2 : 16;
      ps_field *nf = realloc(s->fields, cap * sizeof *nf);
      if (!nf)
        return parse_fail(&c, at, reason, "out of memory");
      s->fields = nf;
      s->fields_cap = cap;
    }
    ps_field *f = &s->fields[nfields++];
    f->key = (const char *)(uintptr_t)koff; /* resolved below */
    const char *v = c.p;
    if (v < c.end && *v == '"') {
      c.p++;
      ps_buf *t = &s->text;
      size_t soff = t->len;
      char *w = t->data + t->len;
      int closed = 0;
      while (c.p < c.end) {
        char ch = *c.p;
        if (ch == '\\' && c.p + 1 < c.end &&
            (c.p[1] == '"' || c.p[1] == '\\')) {
          *w++ = c.p[1];
          c.p += 2;
          continue;
        }
        if (ch == '"') {
          closed = 1;
          c.p++;
          break;
        }
        *w++ = ch;
        c.p++;
      }
      if (!closed)
        return parse_fail(&c, v, reason, "unterminated string field");
      f->type = PS_F_STRING;
      f->v.s.n = (size_t)(w - (t->data + soff));
      *w++ = '\0';
      t->len = (size_t)(w - t->data);
      f->v.s.p = (const char *)(uintptr_t)soff;
    } else {
      while (c.p < c.end && *c.p != ',' && *c.p != ' ')
        c.p++;
      size_t n = (size_t)(c.p - v);
      if (n == 0)
        return parse_fail(&c, v, reason, "missing field value");
      char last = v[n - 1];
      if (last == 'i' && float_syntax(v, n - 1) &&
          !memchr(v, '.', n - 1) && !memchr(v, 'e', n - 1) &&
          !memchr(v, 'E', n - 1)) {
        f->type = PS_F_INT;
        if (parse_i64(v, n - 1, &f->v.i))
          return parse_fail(&c, v, reason, "integer out of range");
      } else if (last == 'u' && all_digits(v, n - 1)) {
        f->type = PS_F_UINT;
        if (parse_u64(v, n - 1, &f->v.u))
          return parse_fail(&c, v, reason, "unsigned integer out of range");
      } else if (float_syntax(v, n)) {
        f->type = PS_F_FLOAT;
        if (decimal_fast(v, n, &f->v.f))
          goto parsed_float;
        char tmp[64];
        char *heap = NULL;
        char *src = tmp;
        if (n >= sizeof tmp) {
          heap = malloc(n + 1);
          if (!heap)
            return parse_fail(&c, v, reason, "out of memory");
          src = heap;
        }
        memcpy(src, v, n);
        src[n] = '\0';
        f->v.f = strtod(src, NULL);
        free(heap);
        if (!isfinite(f->v.f))
          return parse_fail(&c, v, reason, "float out of range");
      parsed_float:;
      } else if (parse_bool(v, n, &f->v.b)) {
        f->type = PS_F_BOOL;
      } else {
        return parse_fail(&c, v, reason, "invalid field value");
      }
    }
    if (c.p < c.end && *c.p == ',') {
      c.p++;
      continue;
    }
    break;
  }
  if (c.p < c.end && *c.p != ' ')
    return parse_fail(&c, c.p, reason, "unexpected character after field value");
  while (c.p < c.end && (*c.p == ' ' || *c.p == '\t'))
    c.p++;
  if (c.p == c.end)
    return parse_fail(&c, c.p, reason,
                      "missing timestamp (perfship needs the time from the "
                      "data so that replays overwrite instead of duplicate)");
  const char *ts = c.p;
  while (c.p < c.end && *c.p != ' ' && *c.p != '\t')
    c.p++;
  int64_t t;
  int rc = parse_i64(ts, (size_t)(c.p - ts), &t);
  if (rc == -ERANGE || (!rc && (t < PS_LP_MIN_TIME_NS || t > PS_LP_MAX_TIME_NS)))
    return parse_fail(&c, ts, reason, "timestamp outside InfluxDB's range");
  if (rc)
    return parse_fail(&c, ts, reason, "bad timestamp (expected integer nanoseconds)");
  while (c.p < c.end && (*c.p == ' ' || *c.p == '\t'))
    c.p++;
  if (c.p != c.end)
    return parse_fail(&c, c.p, reason, "unexpected text after the timestamp");

  /* The scratch text is final now: turn offsets into pointers. */
  char *base = s->text.data;
  for (size_t i = 0; i < ntags; i++) {
    s->tags[i].key = base + tag_off[i][0];
    s->tags[i].value = base + tag_off[i][1];
  }
  for (size_t i = 0; i < nfields; i++) {
    ps_field *f = &s->fields[i];
    f->key = base + (size_t)(uintptr_t)f->key;
    if (f->type == PS_F_STRING)
      f->v.s.p = base + (size_t)(uintptr_t)f->v.s.p;
  }
  if (ps_lp_sort_fields(s->fields, nfields, &s->sort_tmp, &s->sort_tmp_cap))
    return parse_fail(&c, line, reason, "out of memory");
  out->measurement = base + moff;
  out->tags = s->tags;
  out->ntags = ntags;
  out->fields = s->fields;
  out->nfields = nfields;
  out->time_ns = t;
  return 0;
}

int ps_lp_parse_line(ps_buf *out, const char *line, size_t len,
                     const ps_tag *extra_tags, size_t nextra,
                     const char **reason) {
  const char *dummy;
  if (!reason)
    reason = &dummy;
  ps_lp_scratch s;
  ps_lp_scratch_init(&s);
  ps_point pt;
  int rc = ps_lp_parse_point(&s, line, len, &pt, reason);
  if (rc == 0)
    rc = ps_lp_encode(out, &pt, extra_tags, nextra, reason);
  ps_lp_scratch_free(&s);
  return rc;
}
