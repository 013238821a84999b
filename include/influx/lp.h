/*
 * lp: line protocol as a whole, for code that needs all of it.
 *
 * The line-protocol code is three modules, each with its own contract:
 * - influx/numfmt.h: numbers to text and back (ps_fmt_int64,
 *   ps_fmt_double, ps_lp_decimal, ...);
 * - influx/lp_encode.h: points to line protocol (ps_lp_encode, the one
 *   writer; ps_lp_sort_fields);
 * - influx/lp_parse.h: line protocol to points (ps_lp_parse_point, which
 *   the `lp` format uses; ps_lp_parse_line, parse and re-encode in one call,
 *   for tests and fuzz targets).
 * Include the one you need; this header includes all three.
 */
#ifndef PS_LP_H
#define PS_LP_H

#include "influx/lp_encode.h"
#include "influx/lp_parse.h"
#include "influx/numfmt.h"

#endif
