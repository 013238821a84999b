/*
 * test_explain_read: the report's chart of delivery seconds per block as
 * readback/explain.c reads it: which vats are the run's top ones, the
 * statement that asks for their points (names from the data quoted, the
 * read bounded), and the answer's rows kept within the bound. The
 * statement runs against a real influxd in
 * tests/integration/test_slog_judged.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "readback/explain.h"

#define T0 1647216135581548000LL

static void parse(ps_explain_data *d, int statement, const char *json) {
  assert_int_equal(ps_rb_explain_parse_answer(d, statement, json, strlen(json)), 0);
}

/* Run "new": stage 1 and 3 take part, stage 0 (setup) and the partial
 * stage 2 do not, whatever their vats spent. Old run "a" is not the run. */
static const char stages[] =
    "{\"results\":[{\"series\":[{\"name\":\"loadgen_slog_stage\",\"columns\":[\"time\","
    "\"run\",\"stage\",\"partial\",\"finishedCycles\",\"deliverySeconds\"],\"values\":["
    "[1,\"new\",\"0\",false,5,100],[2,\"new\",\"1\",false,10,9],[3,\"new\",\"2\",true,10,99],"
    "[4,\"new\",\"3\",false,10,9],[5,\"a\",\"1\",false,10,99]]}]}]}";

/* Seven vats; v'q (a quote in its ID) is second over stages 1 and 3. */
static const char vats[] =
    "{\"results\":[{\"series\":[{\"name\":\"loadgen_slog_vat\",\"columns\":[\"time\","
    "\"deliverySeconds\",\"name\",\"run\",\"stage\",\"vat\"],\"values\":["
    "[1,50,\"boot\",\"new\",\"0\",\"v0\"],"
    "[2,1,\"amm\",\"new\",\"1\",\"v1\"],[4,4,\"amm\",\"new\",\"3\",\"v1\"],"
    "[2,3,null,\"new\",\"1\",\"v'q\"],"
    "[2,2,\"b\",\"new\",\"1\",\"v2\"],[2,2,\"c\",\"new\",\"1\",\"v3\"],"
    "[2,1,\"d\",\"new\",\"1\",\"v4\"],[2,0.5,\"e\",\"new\",\"1\",\"v5\"],"
    "[3,90,\"p\",\"new\",\"2\",\"v6\"],[2,70,\"x\",\"a\",\"1\",\"v7\"]]}]}]}";

static void top_vats_and_their_statement(void **state) {
  (void)state;
  ps_explain_data d;
  ps_rb_explain_data_init(&d, "new", "bench-1", 1000, T0);
  d.found = 1;
  d.run_ns = T0;
  parse(&d, PS_EQ_STAGES, stages);
  parse(&d, PS_EQ_VATS, vats);
  ps_rb_explain_chart_pick(&d);
  /* by delivery seconds in stages 1 and 3; v2 and v3 tie: by vat ID */
  assert_int_equal(d.nchart, PS_EXPLAIN_TOP);
  const char *want[] = {"v1", "v'q", "v2", "v3", "v4"};
  for (int i = 0; i < PS_EXPLAIN_TOP; i++)
    assert_string_equal(d.chart[i].vat, want[i]);
  assert_string_equal(d.chart[0].name, "amm");
  assert_null(d.chart[1].name);
  assert_int_equal(d.nchart_stages, 2);

  ps_buf q;
  ps_buf_init(&q, 0);
  assert_int_equal(ps_rb_explain_statement(&d, PS_EQ_BLOCK_VATS, &q), 0);
  char expect[1024];
  snprintf(expect, sizeof expect,
           "SELECT \"blockHeight\", \"deliverySeconds\" FROM \"loadgen_slog_block_vat\" WHERE "
           "\"run\" = 'new' AND \"host\" = 'bench-1' AND (\"vat\" = 'v1' OR \"vat\" = 'v\\'q' OR "
           "\"vat\" = 'v2' OR \"vat\" = 'v3' OR \"vat\" = 'v4') AND (\"stage\" = '1' OR "
           "\"stage\" = '3') AND time >= %lld AND time < %lld GROUP BY \"vat\" LIMIT %d",
           T0 - 1000, T0 + 7LL * 86400 * 1000000000, PS_EXPLAIN_BLOCK_POINTS + 1);
  assert_string_equal(q.data, expect);
  ps_buf_free(&q);
  ps_rb_explain_data_free(&d);
}

static void points_kept_within_the_bound(void **state) {
  (void)state;
  ps_explain_data d;
  ps_rb_explain_data_init(&d, "new", NULL, 1000, T0);
  parse(&d, PS_EQ_STAGES, stages);
  parse(&d, PS_EQ_VATS, vats);
  /* v1: one point more than the bound; v2 one point; a vat not asked for
   * and a row without a number are left out */
  ps_buf a;
  ps_buf_init(&a, 0);
  ps_buf_puts(&a, "{\"results\":[{\"series\":[{\"name\":\"loadgen_slog_block_vat\",\"tags\":"
                  "{\"vat\":\"v1\"},\"columns\":[\"time\",\"blockHeight\",\"deliverySeconds\"],"
                  "\"values\":[");
  for (int i = 0; i <= PS_EXPLAIN_BLOCK_POINTS; i++)
    ps_buf_printf(&a, "%s[%d,%d,0.5]", i ? "," : "", i, 100 + i);
  ps_buf_puts(&a, "]},{\"name\":\"loadgen_slog_block_vat\",\"tags\":{\"vat\":\"v2\"},"
                  "\"columns\":[\"time\",\"blockHeight\",\"deliverySeconds\"],\"values\":"
                  "[[1,7,0.25],[2,8,null]]},{\"name\":\"loadgen_slog_block_vat\",\"tags\":"
                  "{\"vat\":\"v9\"},\"columns\":[\"time\",\"blockHeight\",\"deliverySeconds\"],"
                  "\"values\":[[1,7,0.25]]}]}]}");
  assert_int_equal(ps_rb_explain_parse_answer(&d, PS_EQ_BLOCK_VATS, a.data, a.len), 0);
  ps_buf_free(&a);
  assert_int_equal(d.chart_picked, 1);
  assert_int_equal(d.chart[0].npoints, PS_EXPLAIN_BLOCK_POINTS);
  assert_int_equal(d.chart[0].more, 1);
  assert_int_equal(d.chart[2].npoints, 1);
  assert_int_equal(d.chart[2].more, 0);
  assert_int_equal(d.nblocks, PS_EXPLAIN_BLOCK_POINTS + 1);
  const ps_explain_block_row *last = &d.blocks[d.nblocks - 1];
  assert_int_equal(last->vat, 2);
  assert_true(last->height == 7 && last->delivery_s == 0.25);
  assert_true(d.blocks[0].height == 100 && d.blocks[0].delivery_s == 0.5);
  ps_rb_explain_data_free(&d);
}

static void no_stage_takes_part_no_chart(void **state) {
  (void)state;
  ps_explain_data d;
  ps_rb_explain_data_init(&d, "a", NULL, 1000, T0);
  parse(&d, PS_EQ_VATS, vats); /* no stage rows: nothing takes part */
  ps_rb_explain_chart_pick(&d);
  assert_int_equal(d.nchart, 0);
  ps_buf q;
  ps_buf_init(&q, 0);
  assert_int_equal(ps_rb_explain_statement(&d, PS_EQ_BLOCK_VATS, &q), -ENOENT);
  ps_buf_free(&q);
  ps_rb_explain_data_free(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(top_vats_and_their_statement),
      cmocka_unit_test(points_kept_within_the_bound),
      cmocka_unit_test(no_stage_takes_part_no_chart),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
