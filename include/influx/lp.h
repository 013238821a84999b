/*
 * lp: the one place that knows InfluxDB line protocol.
 *
 * Contract
 * - ps_lp_encode() appends exactly one line (with its trailing '\n') for a
 *   point to `out`, or appends nothing and returns a negative errno with a
 *   human reason in *reason (a static string). It never allocates per field:
 *   the only allocation is `out` growing.
 * - Tags are emitted sorted by key (byte order), merged with `extra_tags`
 *   (the configuration's global tags; a point's own tag of the same key
 *   wins). Empty tag values are left out (InfluxDB rejects them).
 * - Escaping per element (measurement: comma, space; tag key/value and field
 *   key: comma, equals, space; string field: double quote and backslash).
 * - Refused, with a reason: NaN/Inf floats, an empty measurement or key, a
 *   key named `time`, a tag key or value ending in a backslash, CR or LF in a
 *   measurement, key or tag value, duplicate tag keys, a point with no field,
 *   a timestamp outside InfluxDB's range. Invalid UTF-8 in names and values
 *   is refused too (InfluxDB would silently turn it into U+FFFD).
 * - Newline policy for string field values: CR and LF are replaced by the two
 *   characters `\n` / `\r` (backslash + letter), because InfluxDB has no
 *   escape for them and a raw newline splits the point on some servers.
 *   Documented in docs/line-protocol.md.
 * - Floats are printed in the shortest form that reads back to the same
 *   double (ps_fmt_double); integers get `i`, unsigned `u`, booleans `true`/`false`.
 *
 * ps_lp_parse_line() validates one line of line protocol and normalises it
 * into `out` (sorted tags and fields, canonical numbers, trailing '\n'); it is what the
 * `lp` format uses. It returns 0, 1 for a blank or comment line (nothing
 * appended), or a negative errno with a reason.
 */
#ifndef PS_LP_H
#define PS_LP_H

#include <stddef.h>

#include "core/buf.h"
#include "formats/point.h"

#define PS_LP_MAX_TAGS 256
#define PS_LP_MIN_TIME_NS (-9223372036854775806LL)
#define PS_LP_MAX_TIME_NS (9223372036854775806LL)

int ps_lp_encode(ps_buf *out, const ps_point *p, const ps_tag *extra_tags,
                 size_t nextra, const char **reason);

/* Shortest round-trip decimal for a finite double into buf (>= 32 bytes).
 * Returns the length. Laid out as Python's repr does: a float always shows
 * a decimal point or an exponent ("100.0", "0.5", "1e-05", "1.5e+20"), so a
 * reader sees the type; exponent form below 1e-4 and from 1e16. */
size_t ps_fmt_double(double v, char *buf);
/* A decimal number's text ([-]digits[.digits][e[+-]digits], also what JSON
 * allows) to the nearest double, as strtod would give it but without a
 * copy for the common short case. -EINVAL for bad syntax, -ERANGE when the
 * value overflows to infinity. */
int ps_lp_decimal(const char *p, size_t n, double *out);

/* Decimal int64 into buf (>= 21 bytes); returns the length. */
size_t ps_fmt_int64(int64_t v, char *buf);

/* Parsing without re-encoding, for drivers that encode later (the `lp`
 * format): the point's strings live in the scratch, unescaped, until the
 * next parse. One scratch per parser; no allocation once it has grown. */
typedef struct ps_lp_scratch {
  ps_buf text;
  ps_tag tags[PS_LP_MAX_TAGS];
  ps_field *fields;
  size_t fields_cap;
  ps_field *sort_tmp;
  size_t sort_tmp_cap;
  size_t err_col; /* 1-based column of the last parse error, 0 if none */
} ps_lp_scratch;

void ps_lp_scratch_init(ps_lp_scratch *s);
void ps_lp_scratch_free(ps_lp_scratch *s);
/* 0 and *out filled, 1 for a blank or comment line, or a negative errno with
 * a reason (and s->err_col). Names are checked later, by ps_lp_encode. */
int ps_lp_parse_point(ps_lp_scratch *s, const char *line, size_t len,
                      ps_point *out, const char **reason);

/* Sorts fields by key in byte order, stably (of two equal keys the later
 * still wins in InfluxDB). Parsers call it on their own arrays so that
 * output is canonical (the encoder keeps the order it is given); `tmp` is
 * the caller's reusable scratch for long lines. */
int ps_lp_sort_fields(ps_field *f, size_t n, ps_field **tmp, size_t *tmp_cap);

int ps_lp_parse_line(ps_buf *out, const char *line, size_t len,
                     const ps_tag *extra_tags, size_t nextra,
                     const char **reason);

#endif
