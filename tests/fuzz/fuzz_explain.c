/*
 * fuzz_explain.c: the explanation's reading of InfluxDB answers
 * (agent/readback/explain.c) and the explanation made from what it yielded
 * (agent/verdict/explain.c).
 *
 * Input: a byte choosing the statement (readback/explain.h PS_EQ_*, modulo
 * their count), then the answer's text; the same answer is read as every
 * statement after it too, so the rows of one feed the next.
 * Properties: any answer is read without a crash or a leak; the
 * explanation holds at most PS_EXPLAIN_TOP vats, each a NUL-terminated
 * string within its buffer, and its text is made; the chart holds at most
 * PS_EXPLAIN_TOP vats of at most PS_EXPLAIN_BLOCK_POINTS points each, every
 * point of one of them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "readback/explain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  ps_explain_data d;
  ps_rb_explain_data_init(&d, "daily-perf-1", NULL, 1000000000LL, 2000000000000000000LL);
  for (int s = data[0] % PS_EXPLAIN_NSTATEMENTS; s < PS_EXPLAIN_NSTATEMENTS; s++) {
    ps_buf q;
    ps_buf_init(&q, 0);
    if (s == PS_EQ_BLOCK_VATS)
      ps_rb_explain_chart_pick(&d); /* as ps_rb_explain_query_blocks() does */
    (void)ps_rb_explain_statement(&d, s, &q);
    ps_buf_free(&q);
    if (ps_rb_explain_parse_answer(&d, s, (const char *)data + 1, size - 1) < 0)
      break;
  }
  if (ps_explain(d.run, (const char *const *)d.old, d.nold, d.stages, d.nstages, d.vats,
                 d.nvats, &d.e) == 0) {
    if (d.e.ntop > PS_EXPLAIN_TOP)
      abort();
    for (size_t i = 0; i < d.e.ntop; i++)
      if (!memchr(d.e.top[i].vat, 0, sizeof d.e.top[i].vat) ||
          !memchr(d.e.top[i].name, 0, sizeof d.e.top[i].name))
        abort();
    ps_buf t;
    ps_buf_init(&t, 0);
    (void)ps_explain_text(&d.e, &t);
    ps_buf_free(&t);
  }
  if (d.nchart > PS_EXPLAIN_TOP)
    abort();
  for (size_t i = 0; i < d.nchart; i++)
    if (d.chart[i].npoints > PS_EXPLAIN_BLOCK_POINTS)
      abort();
  for (size_t i = 0; i < d.nblocks; i++)
    if (d.blocks[i].vat >= d.nchart)
      abort();
  ps_rb_explain_data_free(&d);
  return 0;
}
