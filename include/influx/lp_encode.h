/*
 * lp_encode: points to InfluxDB line protocol; the only code that writes it.
 *
 * Contract
 * - ps_lp_encode() appends exactly one line (with its trailing '\n') for a
 *   point to `out`, or appends nothing and returns a negative errno with a
 *   human reason in *reason (a static string; `reason` may be NULL). It
 *   never allocates per field: the only allocation is `out` growing.
 * - Tags are emitted sorted by key (byte order), merged with `extra_tags`
 *   (the configuration's global tags; a point's own tag of the same key
 *   wins). Empty tag values are left out (InfluxDB rejects them).
 * - Fields are written in the order given: callers that want canonical
 *   output sort them first with ps_lp_sort_fields().
 * - Escaping per element (measurement: comma, space; tag key/value and field
 *   key: comma, equals, space; string field: double quote and backslash).
 * - Refused, with a reason: NaN/Inf floats, an empty measurement or key, a
 *   key named `time`, a measurement starting with '#', a tag key or value
 *   ending in a backslash, CR or LF in a measurement, key or tag value,
 *   duplicate tag keys, more than PS_LP_MAX_TAGS tags, a series key over
 *   64 KiB, a point with no field, a timestamp outside InfluxDB's range.
 *   Invalid UTF-8 in names and values is refused too (InfluxDB would
 *   silently turn it into U+FFFD).
 * - Newline policy for string field values: CR and LF are replaced by the two
 *   characters `\n` / `\r` (backslash + letter), because InfluxDB has no
 *   escape for them and a raw newline splits the point on some servers.
 *   Documented in docs/line-protocol.md.
 * - Numbers are printed by influx/numfmt.h: floats in the shortest form that
 *   reads back to the same double; integers get `i`, unsigned `u`, booleans
 *   `true`/`false`.
 */
#ifndef PS_INFLUX_LP_ENCODE_H
#define PS_INFLUX_LP_ENCODE_H

#include <stddef.h>

#include "core/buf.h"
#include "core/point.h"

#define PS_LP_MAX_TAGS 256
#define PS_LP_MIN_TIME_NS (-9223372036854775806LL)
#define PS_LP_MAX_TIME_NS (9223372036854775806LL)

int ps_lp_encode(ps_buf *out, const ps_point *p, const ps_tag *extra_tags,
                 size_t nextra, const char **reason);

/* Sorts fields by key in byte order, stably (of two equal keys the later
 * still wins in InfluxDB). Parsers call it on their own arrays so that
 * output is canonical (the encoder keeps the order it is given); `tmp` is
 * the caller's reusable scratch for long lines. 0 or -ENOMEM. */
int ps_lp_sort_fields(ps_field *f, size_t n, ps_field **tmp, size_t *tmp_cap);

#endif
