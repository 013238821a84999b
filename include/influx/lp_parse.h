/*
 * lp_parse: reading InfluxDB line protocol, as InfluxDB 1.x reads it.
 *
 * Contract
 * - ps_lp_parse_point() reads one line into a point whose strings live,
 *   unescaped, in the scratch until the next parse with it. Returns 0 with
 *   *out filled, 1 for a blank or comment line, or -EINVAL with a reason (a
 *   static string) and the 1-based column in s->err_col. A line without a
 *   timestamp is refused (a replay must overwrite, not add: docs/line-protocol.md).
 *   Names are not checked here but by the encoder, so that every format
 *   is refused for the same reasons. Fields come out sorted by key
 *   (ps_lp_sort_fields), so re-encoding gives canonical output.
 *   This is what the `lp` format uses (agent/formats/lp.c).
 * - One scratch per parser; no allocation once it has grown to the longest
 *   line.
 * - ps_lp_parse_line() parses one line and re-encodes it with
 *   ps_lp_encode() into `out` (sorted tags and fields, canonical numbers,
 *   `extra_tags` merged, trailing '\n'): the normalisation in one call, for
 *   tests and fuzz targets that check the round trip. It returns 0, 1 for a
 *   blank or comment line (nothing appended), or a negative errno with a
 *   reason. It allocates a scratch per call: not for hot paths.
 */
#ifndef PS_INFLUX_LP_PARSE_H
#define PS_INFLUX_LP_PARSE_H

#include <stddef.h>

#include "core/buf.h"
#include "core/point.h"
#include "influx/lp_encode.h"

typedef struct ps_lp_scratch {
  ps_buf text;
  ps_tag tags[PS_LP_MAX_TAGS];
  ps_field *fields;
  size_t fields_cap;
  ps_field *sort_tmp;
  size_t sort_tmp_cap;
  size_t err_col; /* 1-based column of the last parse error, 0 if none */
  int open_string; /* the last parse ran to the line's end inside a quoted
                      string value: a raw newline broke the string */
} ps_lp_scratch;

void ps_lp_scratch_init(ps_lp_scratch *s);
/* Accepts NULL. */
void ps_lp_scratch_free(ps_lp_scratch *s);
int ps_lp_parse_point(ps_lp_scratch *s, const char *line, size_t len,
                      ps_point *out, const char **reason);

int ps_lp_parse_line(ps_buf *out, const char *line, size_t len,
                     const ps_tag *extra_tags, size_t nextra,
                     const char **reason);

#endif
