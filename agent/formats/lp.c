/*
 * formats/lp.c: the `lp` format, line protocol passed through after
 * validation (include/formats/format.h).
 *
 * Each line is parsed into a point (lp.c) and handed on like any other
 * format's point, so the driver's encoder normalises it (sorted tags,
 * canonical numbers, global tags) and applies the same refusals. A line
 * InfluxDB would reject is reported here with its column instead of
 * bouncing a whole batch later. One point per line, so back-pressure needs
 * no resume state: a refused point is simply parsed again next time.
 *
 * A raw newline inside a quoted string (InfluxDB 1.x accepts it) is
 * refused once, at the record's first line; the lines up to the string's
 * closing quote are the rest of that record and are skipped without a
 * message of their own (docs/line-protocol.md). A skipped line that reads
 * as a whole point on its own ends the skipping and lands, so a stray
 * quote never swallows good lines. After a restart inside such a record
 * its remaining lines are refused one by one: nothing is skipped unseen.
 *
 * An unsigned value (`5u`) is written as an integer (`5i`): InfluxDB 1.x
 * has no unsigned type unless built with one (Debian's 1.6.7 answers
 * `invalid number`, and the batch holding the line fails), and an integer
 * holds every value up to 2^63 - 1. A larger one is refused with its line
 * (docs/line-protocol.md "Numbers").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "formats/format.h"
#include "influx/lp_parse.h"

struct ps_parser {
  ps_lp_scratch scratch;
  int in_string; /* skipping the rest of a record refused for a raw newline */
};

static ps_input_kind lp_input_kind(const ps_source_cfg *src, const char *path) {
  (void)src;
  (void)path;
  return PS_INPUT_LINES;
}

static int lp_open(ps_parser **out, const ps_source_cfg *src,
                   const ps_input_head *head, ps_buf *err) {
  (void)src;
  (void)head;
  *out = NULL;
  ps_parser *p = malloc(sizeof *p);
  if (!p) {
    ps_buf_puts(err, "out of memory");
    return -ENOMEM;
  }
  ps_lp_scratch_init(&p->scratch);
  p->in_string = 0;
  *out = p;
  return 0;
}

/* Whether a line that continues a string value holds its closing quote
 * (escapes as in a string value: \" and \\). */
static int string_closes(const char *data, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (data[i] == '\\' && i + 1 < len && (data[i + 1] == '"' || data[i + 1] == '\\'))
      i++;
    else if (data[i] == '"')
      return 1;
  }
  return 0;
}

/* The line's unsigned fields (the parser's scratch) as integers (above);
 * -ERANGE names the first that does not fit. */
static int uint_as_int(ps_field *f, size_t n, const char **key, uint64_t *value) {
  for (size_t i = 0; i < n; i++) {
    if (f[i].type != PS_F_UINT)
      continue;
    if (f[i].v.u > (uint64_t)INT64_MAX) {
      *key = f[i].key;
      *value = f[i].v.u;
      return -ERANGE;
    }
    int64_t v = (int64_t)f[i].v.u;
    f[i].type = PS_F_INT;
    f[i].v.i = v;
    f[i].text = NULL; /* formatted from the value, with its `i` */
  }
  return 0;
}

static int lp_line(ps_parser *p, const char *data, size_t len, ps_emitter *em) {
  ps_point pt;
  const char *reason = NULL;
  int rc = ps_lp_parse_point(&p->scratch, data, len, &pt, &reason);
  if (p->in_string && rc != 0) {
    if (string_closes(data, len))
      p->in_string = 0;
    return 0;
  }
  p->in_string = 0;
  if (rc == 1)
    return 0;
  if (rc < 0 && p->scratch.open_string) {
    ps_emit_reject(em,
                   "column %zu: string field not closed on its line: a raw newline in a "
                   "string is refused with the lines up to its closing quote (write it "
                   "as \\n)",
                   p->scratch.err_col);
    p->in_string = 1;
    return 0;
  }
  if (rc < 0) {
    ps_emit_reject(em, "column %zu: %s", p->scratch.err_col, reason);
    return 0;
  }
  const char *key = NULL;
  uint64_t big = 0;
  if (uint_as_int(p->scratch.fields, pt.nfields, &key, &big) < 0) {
    ps_emit_reject(em,
                   "field '%s': unsigned %" PRIu64 "u does not fit an integer (at most "
                   "9223372036854775807), and InfluxDB 1.x has no unsigned type",
                   key, big);
    return 0;
  }
  return ps_emit_point(em, &pt);
}

static void lp_free(ps_parser *p) {
  if (!p)
    return;
  ps_lp_scratch_free(&p->scratch);
  free(p);
}

const ps_format_ops ps_format_lp = {
    .id = PS_FMT_LP,
    .name = "lp",
    .input_kind = lp_input_kind,
    .open = lp_open,
    .line = lp_line,
    .document = NULL,
    .finish = NULL,
    .free = lp_free,
};
