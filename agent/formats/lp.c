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
 */
#include <errno.h>
#include <stdlib.h>

#include "formats/format.h"
#include "influx/lp_parse.h"

struct ps_parser {
  ps_lp_scratch scratch;
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
  *out = p;
  return 0;
}

static int lp_line(ps_parser *p, const char *data, size_t len, ps_emitter *em) {
  ps_point pt;
  const char *reason = NULL;
  int rc = ps_lp_parse_point(&p->scratch, data, len, &pt, &reason);
  if (rc == 1)
    return 0;
  if (rc < 0) {
    ps_emit_reject(em, "column %zu: %s", p->scratch.err_col, reason);
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
