/*
 * numfmt: numbers to text and text to numbers, exactly and without locale,
 * for the line-protocol encoder and parser and the JSON formats.
 *
 * Contract
 * - The formatters write into the caller's buffer, NUL-terminate it and
 *   return the length (without the NUL). They never allocate and never fail.
 * - ps_fmt_double() prints the shortest decimal that reads back as the same
 *   double, laid out as Python's repr does: a float always shows a decimal
 *   point or an exponent ("100.0", "0.5", "1e-05", "1.5e+20"), so a reader
 *   sees the type; exponent form below 1e-4 and from 1e16. Finite values
 *   only (the encoder refuses NaN and Infinity before calling it).
 *   docs/line-protocol.md, "Numbers", is the user's view of this.
 * - The parsers take a (pointer, length) slice, need no NUL, accept exactly
 *   the syntax named and nothing around it, and return 0, -EINVAL for bad
 *   syntax or -ERANGE for a value out of range (*out is unspecified then).
 *   ps_lp_decimal() may allocate for texts of 64 bytes or more (strtod's
 *   copy) and then also returns -ENOMEM.
 */
#ifndef PS_INFLUX_NUMFMT_H
#define PS_INFLUX_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

/* Buffer sizes that always suffice, NUL included. */
#define PS_FMT_INT64_SIZE 21
#define PS_FMT_DOUBLE_SIZE 32

/* Decimal int64 / uint64 into buf (>= PS_FMT_INT64_SIZE bytes). */
size_t ps_fmt_int64(int64_t v, char *buf);
size_t ps_fmt_uint64(uint64_t v, char *buf);

/* Shortest round-trip decimal for a finite double into buf
 * (>= PS_FMT_DOUBLE_SIZE bytes). */
size_t ps_fmt_double(double v, char *buf);

/* A decimal number's text ([-]digits[.digits][e[+-]digits], also what JSON
 * and line protocol allow, ".5" included) to the nearest double, as strtod
 * would give it but without a copy for the common short case. -ERANGE when
 * the value overflows to infinity. (The name predates this module; the
 * JSON formats and the line-protocol parser both use it.) */
int ps_lp_decimal(const char *p, size_t n, double *out);

/* Whether a byte may belong to a number's text (digits, sign, point,
 * exponent): how a reader finds where a number ends before it reads it. */
static inline int ps_number_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* The fast path of ps_lp_decimal() for a reader that took the digits apart
 * itself: m * 10^exp10, negated when `neg`, where m holds every significant
 * digit. Returns 1 with *out set when m and 10^|exp10| are exact doubles
 * (m <= 2^53, |exp10| <= 22), so that one IEEE operation gives the
 * correctly rounded value, the one strtod gives; 0 when the text needs
 * ps_lp_decimal(). */
extern const double ps_pow10_exact[23];
static inline int ps_decimal_exact(uint64_t m, int exp10, int neg, double *out) {
  if (exp10 < -22 || exp10 > 22 || m > (1ULL << 53))
    return 0;
  double d = (double)m;
  d = exp10 < 0 ? d / ps_pow10_exact[-exp10] : d * ps_pow10_exact[exp10];
  *out = neg ? -d : d;
  return 1;
}

/* [-]digits as int64; digits as uint64. */
int ps_parse_int64(const char *p, size_t n, int64_t *out);
int ps_parse_uint64(const char *p, size_t n, uint64_t *out);

#endif
