/*
 * influx/numfmt.c: numbers to text and back (include/influx/numfmt.h).
 *
 * Design
 * - Integers: two digits per division from a pair table.
 * - Floats: whole values below 2^53 take the integer path; values in
 *   [1e-7, 2^53) get exact shortest digits from 128-bit integer arithmetic
 *   (shortest_digits); only values outside that range fall back to
 *   %.15e/%.16e/%.17e with a strtod check, also shortest, only slower. The
 *   layout is Python's repr (also JavaScript's, within a rule): "100.0",
 *   "0.001", "1e-05", "1e+16" - the form most reference tools print.
 * - Parsing decimals: Clinger's fast path covers what benchmarks and
 *   loaders write (a mantissa up to 2^53: 15 digits always, 16 often, so
 *   also epoch seconds with microseconds); strtod, on a copy, the rest.
 */
#include "influx/numfmt.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- output */

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Digits of v, from its bit length: 1233/4096 is just above log10(2), so
 * t is floor(log10(v)) or one more, which one comparison settles. */
static unsigned digit_count(uint64_t v) {
  static const uint64_t p10[20] = {
      1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
      100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
      10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
      100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL};
  if (!v)
    return 1;
  unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12; /* at most 19 */
  return t + (v >= p10[t]);
}

/* Written from the last digit back, straight into buf: no temporary and
 * no memcpy call (two digits per division from the pair table). */
static size_t fmt_u64(uint64_t v, char *buf) {
  unsigned n = digit_count(v);
  char *p = buf + n;
  *p = '\0';
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

size_t ps_fmt_uint64(uint64_t v, char *buf) { return fmt_u64(v, buf); }

#define TWO53 9007199254740992.0

/* a's value and the bounds of the interval that reads back as a, as
 * integers scaled by 10^q (see shortest_digits), and whether the value's
 * and the lower bound's scaling dropped only zero bits (exact). */
typedef struct scaled {
  uint64_t vr, vp, vm;
  int vr_tz, vm_tz;
  int q;
} scaled;

static scaled scale_interval(double a) {
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
  return (scaled){vr, vp, vm, vr_tz, vm_tz, q};
}

/* Drops the digits the interval leaves free (Ryu's digit loop), then
 * rounds the last kept one; *removed_out is how many went. */
static uint64_t drop_free_digits(scaled s, int *removed_out) {
  uint64_t vr = s.vr, vp = s.vp, vm = s.vm;
  int vr_tz = s.vr_tz, vm_tz = s.vm_tz;
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
  *removed_out = removed;
  return out;
}

/* Shortest digits for 1e-7 <= a < 2^53, exactly (Ryu's digit loop on
 * 128-bit integers). a = m2 * 2^e; the values that read back as a are the
 * open (closed when m2 is even: ties go to even) interval between the
 * midpoints to its neighbours. Scaled by 10^q and 4 * 2^-e these are
 * integers small enough for 128 bits in this range, so no tables and no
 * approximation are needed. Returns the decimal mantissa; *exp10 its
 * power of ten. */
static uint64_t shortest_digits(double a, int *exp10) {
  int removed;
  scaled s = scale_interval(a);
  uint64_t out = drop_free_digits(s, &removed);
  *exp10 = removed - s.q;
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

/* Most measured values have a few decimals (527.5, 0.25, 135.31): for
 * 1e-4 <= a < 2^31, the first k in 1..6 for which m = round(a * 10^k)
 * gives m / 10^k == a (exact m and 10^k, one correctly rounded division:
 * the decimal m * 10^-k reads back as a) names the shortest digits, and no
 * other k-digit decimal reads back as a, since 10^-k is more than twice
 * a's spacing below 2^31. That is what shortest_digits() finds, laid out
 * as layout() would (no exponent in this range), at a few instructions per
 * try. Writes the text and returns its length, or 0 when no k fits. */
static size_t few_decimals(double a, char *buf) {
  static const double p10[7] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6};
  static const uint64_t u10[7] = {1, 10, 100, 1000, 10000, 100000, 1000000};
  for (int k = 1; k <= 6; k++) {
    uint64_t m = (uint64_t)(a * p10[k] + 0.5);
    if ((double)m / p10[k] != a)
      continue;
    size_t n = fmt_u64(m / u10[k], buf);
    uint64_t frac = m % u10[k];
    buf[n++] = '.';
    for (int j = k - 1; j >= 0; j--) {
      buf[n + (size_t)j] = (char)('0' + frac % 10);
      frac /= 10;
    }
    n += (size_t)k;
    buf[n] = '\0';
    return n;
  }
  return 0;
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
  if (a < TWO53 && (double)(uint64_t)a == a) {
    /* whole: the integer digits are the shortest form (below 1e16) */
    n += fmt_u64((uint64_t)a, buf + n);
    buf[n++] = '.';
    buf[n++] = '0';
    buf[n] = '\0';
    return n;
  }
  size_t few;
  if (a >= 1e-4 && a < 2147483648.0 && (few = few_decimals(a, buf + n)))
    return n + few;
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

/* ----------------------------------------------------------------- input */

/* A float as 1.x accepts it: [-](digits[.digits]|.digits)[(e|E)[+-]digits],
 * checked in the same pass that gathers its digits for Clinger's fast
 * path: the significant digits into *m (up to 19 of them: *all says
 * whether that was every one), the power of ten into *exp10. Returns 0 for
 * bad syntax. */
static int decimal_parts(const char *p, size_t n, uint64_t *m, int *exp10, int *neg,
                         int *all) {
  size_t i = 0, d = 0;
  int sig = 0, e10 = 0;
  uint64_t v = 0;
  *neg = 0;
  if (i < n && p[i] == '-') {
    *neg = 1;
    i++;
  }
  for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, d++) {
    if (!v && p[i] == '0')
      continue; /* a leading zero */
    if (++sig <= 19)
      v = v * 10 + (uint64_t)(p[i] - '0');
    else
      e10++;
  }
  if (i < n && p[i] == '.') {
    for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++, d++) {
      if (!v && p[i] == '0') {
        e10--;
        continue;
      }
      if (++sig <= 19) {
        v = v * 10 + (uint64_t)(p[i] - '0');
        e10--;
      }
    }
  }
  if (!d)
    return 0;
  if (i < n && (p[i] == 'e' || p[i] == 'E')) {
    i++;
    int eneg = 0, e = 0;
    if (i < n && (p[i] == '+' || p[i] == '-'))
      eneg = p[i++] == '-';
    size_t ed = 0;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++, ed++)
      if (e <= 400)
        e = e * 10 + (p[i] - '0'); /* beyond that only the syntax matters */
    if (!ed)
      return 0;
    e10 += eneg ? -e : e;
  }
  if (i != n)
    return 0;
  *m = v;
  *exp10 = e10;
  *all = sig <= 19;
  return 1;
}

const double ps_pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

int ps_lp_decimal(const char *p, size_t n, double *out) {
  uint64_t m;
  int exp10, neg, all;
  if (!decimal_parts(p, n, &m, &exp10, &neg, &all))
    return -EINVAL;
  if (all && ps_decimal_exact(m, exp10, neg, out))
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

/* Exact, with overflow detection: no strtoll, which skips blanks, takes
 * '+' and needs a NUL. */
int ps_parse_int64(const char *p, size_t n, int64_t *out) {
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

int ps_parse_uint64(const char *p, size_t n, uint64_t *out) {
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
