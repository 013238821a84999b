/*
 * aux_capture.h: the encode half of a pl_aux_out (pipeline/shared.h) for
 * the unit tests of stages that send their own points (run markers, alert
 * points): it encodes as the delivery does, without global tags, so a test
 * reads the line protocol a server would get. Each test keeps its own send
 * half, which captures the batch. Header-only; include after <cmocka.h>.
 */
#ifndef PS_TEST_AUX_CAPTURE_H
#define PS_TEST_AUX_CAPTURE_H

#include "influx/batch.h"
#include "influx/lp_encode.h"

static int aux_encode_plain(void *ctx, ps_pbatch *b, const ps_point *p, const ps_origin *o,
                            const char **reason) {
  (void)ctx;
  size_t at = b->b.body.len;
  int rc = ps_lp_encode(&b->b.body, p, NULL, 0, reason);
  return rc < 0 ? rc : ps_batch_add_line_origin(&b->b, at, o);
}

#endif
