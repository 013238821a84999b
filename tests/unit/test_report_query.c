/*
 * test_report_query: reading InfluxDB's answers into the report's model
 * (report/query.h, report/model.h). The answers are written out as
 * InfluxDB 1.x sends them for the report's statements (the integration
 * test tests/integration/test_report.py runs the same statements against
 * a real influxd); what matters here is how the rows are settled: a run's
 * status from its several witnesses, a rewritten DSS results file, the
 * stage run, and data-derived names quoted in the stage statements.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/model.h"
#include "report/query.h"

#define T0 1647216135581548000LL

static void parse(ps_report_data *d, int statement, const char *json) {
  assert_int_equal(ps_report_parse_answer(d, statement, json, strlen(json)), 0);
}

static const ps_rrun *run(ps_report_data *d, const char *name) {
  const ps_rrun *r = ps_report_find_run(d, name);
  if (!r)
    fail_msg("no run %s", name);
  return r;
}

/* The runs markers, as InfluxDB answers PS_RQ_MARKERS (tags as columns). */
static const char markers[] =
    "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"runs\",\"columns\":[\"time\","
    "\"text\",\"exitCode\",\"duration\",\"source\",\"run\",\"revision\",\"event\",\"status\",\"host\"],"
    "\"values\":["
    /* a run that stalled and later ended: the real end wins */
    "[1647216100000000000,\"started\",null,null,\"loadgen\",\"daily-aaaaaaa\",\"aaaaaaa\",\"start\","
    "\"running\",\"bench-1\"],"
    "[1647216200000000000,\"stalled\",null,null,\"loadgen\",\"daily-aaaaaaa\",\"aaaaaaa\",\"end\","
    "\"stalled\",\"bench-1\"],"
    "[1647216300000000000,\"Error: boom\",2,120.5,\"loadgen\",\"daily-aaaaaaa\",\"aaaaaaa\",\"end\","
    "\"failed\",\"bench-1\"],"
    /* a run with only a start marker and a stall: stalled */
    "[1647216000000000000,\"s\",null,null,\"loadgen\",\"manual-1234567\",null,\"start\",\"running\",\"bench-1\"],"
    "[1647217000000000000,\"no file changed\",null,null,\"loadgen\",\"manual-1234567\",null,\"end\","
    "\"stalled\",\"bench-1\"],"
    /* a DSS results file, written twice: the newer marker wins */
    "[1700000100000000000,\"new\",null,null,\"dss_bench\",\"cmp\",null,\"end\",\"failed\",\"bench-1\"],"
    "[1700000000000000000,\"old\",null,null,\"dss_bench\",\"cmp\",null,\"end\",\"success\",\"bench-1\"],"
    /* a source the page does not show */
    "[1700000000000000000,\"x\",null,null,\"manual\",\"by-hand\",null,\"end\",\"success\",\"bench-1\"]"
    "]}]}]}";

/* loadgen_run points, as InfluxDB answers `SELECT *` (PS_RQ_RUN_POINTS). */
static const char run_points[] =
    "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"loadgen_run\",\"columns\":[\"time\","
    "\"cycleAvgDuration\",\"cycleSuccessRate\",\"duration\",\"exitCode\",\"host\",\"profile\","
    "\"revision\",\"run\",\"status\",\"success\",\"test_type\"],\"values\":["
    "[1647216100000000000,null,null,null,null,\"bench-1\",\"local\",\"aaaaaaa\",\"daily-aaaaaaa\","
    "\"failed\",false,\"daily\"],"
    "[1647216135581548000,24.330188,100,3391.486817,0,\"bench-1\",\"local\",\"bbbbbbb\","
    "\"daily-bbbbbbb\",\"success\",true,\"daily\"]]}]}]}";

static void parse_both(ps_report_data *d) {
  parse(d, PS_RQ_MARKERS, markers);
  parse(d, PS_RQ_RUN_POINTS, run_points);
}

static void test_status_from_markers_and_points(void **state) {
  (void)state;
  ps_report_data d;
  ps_report_data_init(&d, 1800000000000000000LL, 0, NULL);
  parse_both(&d);
  assert_int_equal(ps_report_finish(&d), 0);
  assert_int_equal(d.nruns, 3);
  const ps_rrun *a = run(&d, "daily-aaaaaaa");
  assert_int_equal(a->status, PS_RS_FAILED);
  assert_string_equal(a->text, "Error: boom");
  assert_int_equal(a->start_ns, 1647216100000000000LL);
  assert_true(a->have_exit);
  assert_int_equal(a->exit_code, 2);
  assert_true(fabs(a->duration_s - 120.5) < 1e-9);
  const ps_rrun *b = run(&d, "daily-bbbbbbb");
  assert_int_equal(b->status, PS_RS_SUCCESS);
  assert_string_equal(b->test_type, "daily");
  assert_string_equal(b->revision, "bbbbbbb");
  /* stats.duration, not a difference of marker times */
  assert_true(fabs(b->duration_s - 3391.486817) < 1e-9);
  assert_true(fabs(b->metric[ps_report_metric_index("cycleAvgDuration")] - 24.330188) < 1e-12);
  assert_true(isnan(b->metric[ps_report_metric_index("walletDeployDuration")]));
  /* a time as cJSON keeps it: within a microsecond */
  assert_true(llabs(b->run_point_ns - T0) < 1000);
  const ps_rrun *m = run(&d, "manual-1234567");
  assert_int_equal(m->status, PS_RS_STALLED);
  assert_string_equal(m->test_type, "manual"); /* from the name when no point says */
  assert_null(m->revision); /* the markers carried none */
  assert_true(isnan(m->duration_s)); /* a stalled run has not ended */
  /* newest first */
  assert_string_equal(d.runs[0].name, "daily-bbbbbbb");
  assert_string_equal(d.runs[2].name, "manual-1234567");
  assert_int_equal(d.ndssfiles, 1);
  assert_string_equal(d.dssfiles[0].text, "new");
  assert_int_equal(d.dssfiles[0].status, PS_RS_FAILED);
  ps_report_data_free(&d);
}

static void test_answer_order_does_not_matter(void **state) {
  (void)state;
  ps_report_data d;
  ps_report_data_init(&d, 1800000000000000000LL, 0, NULL);
  parse(&d, PS_RQ_RUN_POINTS, run_points);
  parse(&d, PS_RQ_MARKERS, markers);
  assert_int_equal(ps_report_finish(&d), 0);
  assert_int_equal(run(&d, "daily-aaaaaaa")->status, PS_RS_FAILED);
  assert_int_equal(run(&d, "daily-bbbbbbb")->status, PS_RS_SUCCESS);
  assert_string_equal(d.dssfiles[0].text, "new");
  ps_report_data_free(&d);
}

static void test_rewritten_dss_file_shows_newest(void **state) {
  (void)state;
  ps_report_data d;
  ps_report_data_init(&d, 1800000000000000000LL, 0, NULL);
  parse(&d, PS_RQ_DSS,
        "{\"results\":[{\"statement_id\":0,\"series\":["
        "{\"name\":\"dss_bench\",\"tags\":{\"arm\":\"a\",\"run\":\"f\",\"sweep\":\"s\",\"test\":\"t\","
        "\"variant\":\"10ms\"},\"columns\":[\"time\",\"variantIndex\",\"rps_total\",\"p95_ms\","
        "\"errors\"],\"values\":[[1700000000000000000,1,5.0,100,0],[1700000100000000000,1,6.0,90,1]]},"
        "{\"name\":\"dss_bench\",\"tags\":{\"arm\":\"a\",\"run\":\"f\",\"sweep\":\"s\",\"test\":\"t\","
        "\"variant\":\"0ms\"},\"columns\":[\"time\",\"variantIndex\",\"rps_total\",\"p95_ms\","
        "\"errors\"],\"values\":[[1700000100000000000,0,7.0,80,null]]},"
        "{\"name\":\"dss_bench\",\"tags\":{\"arm\":\"a\",\"run\":\"f\",\"sweep\":\"s\",\"test\":\"t\","
        "\"variant\":\"gone\"},\"columns\":[\"time\",\"variantIndex\",\"rps_total\",\"p95_ms\","
        "\"errors\"],\"values\":[[1700000000000000000,2,1.0,1,0]]}"
        "]}]}");
  assert_int_equal(ps_report_finish(&d), 0);
  /* a file without a marker still gets a row; only its newest version */
  assert_int_equal(d.ndssfiles, 1);
  assert_int_equal(d.dssfiles[0].status, PS_RS_UNKNOWN);
  assert_int_equal(d.ndss, 2);
  assert_string_equal(d.dss[0].variant, "0ms"); /* sweep order */
  assert_true(isnan(d.dss[0].errors));
  assert_string_equal(d.dss[1].variant, "10ms");
  assert_true(d.dss[1].rps == 6.0);
  ps_report_data_free(&d);
}

static void test_stage_run_and_its_query(void **state) {
  (void)state;
  ps_report_data d;
  ps_report_data_init(&d, 1800000000000000000LL, 1600000000000000000LL, NULL);
  parse_both(&d);
  /* the newest loadgen_stage point per run; a run the page does not list
   * (outside the range) is no candidate */
  parse(&d, PS_RQ_STAGE_CANDIDATES,
        "{\"results\":[{\"statement_id\":0,\"series\":["
        "{\"name\":\"loadgen_stage\",\"tags\":{\"run\":\"daily-aaaaaaa\",\"host\":\"bench-1\"},\"columns\":[\"time\","
        "\"last\"],\"values\":[[1647216250000000000,5]]},"
        "{\"name\":\"loadgen_stage\",\"tags\":{\"run\":\"daily-bbbbbbb\",\"host\":\"bench-1\"},\"columns\":[\"time\","
        "\"last\"],\"values\":[[1647216240000000000,5]]},"
        "{\"name\":\"loadgen_stage\",\"tags\":{\"run\":\"elsewhere\",\"host\":\"bench-1\"},\"columns\":[\"time\","
        "\"last\"],\"values\":[[1747216240000000000,5]]}]}]}");
  assert_int_equal(ps_report_pick_stage_run(&d), 0);
  assert_string_equal(d.stage_run, "daily-aaaaaaa");
  ps_buf q;
  ps_buf_init(&q, 0);
  assert_int_equal(ps_report_statements(&d, PS_RQ_STAGE_CYCLES, &q), 0);
  assert_non_null(strstr(q.data, "\"run\" = 'daily-aaaaaaa'"));
  assert_non_null(strstr(q.data, "time >= 1600000000000000000"));
  /* a name from the data is quoted, never pasted */
  free(d.stage_run);
  d.stage_run = strdup("x' OR '1'='1");
  ps_buf_reset(&q);
  assert_int_equal(ps_report_statements(&d, PS_RQ_STAGE_BLOCKS, &q), 0);
  assert_non_null(strstr(q.data, "\"run\" = 'x\\' OR \\'1\\'=\\'1'"));
  ps_buf_free(&q);
  ps_report_data_free(&d);
}

static void test_source_filter(void **state) {
  (void)state;
  ps_report_data d;
  ps_report_data_init(&d, 1800000000000000000LL, 0, "dss_bench");
  parse_both(&d);
  assert_int_equal(ps_report_finish(&d), 0);
  assert_int_equal(d.nruns, 0);
  assert_int_equal(d.ndssfiles, 1);
  ps_report_data_free(&d);
  ps_report_data_init(&d, 1800000000000000000LL, 0, "loadgen");
  parse_both(&d);
  assert_int_equal(ps_report_finish(&d), 0);
  assert_int_equal(d.nruns, 3);
  assert_int_equal(d.ndssfiles, 0);
  ps_report_data_free(&d);
}

/* Two bench machines, the same folder names: runs, DSS files and stage
 * runs are (host, name), never merged; --host narrows every statement. */
static void test_two_hosts_never_merge(void **state) {
  (void)state;
  static const char points[] =
      "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"loadgen_run\",\"columns\":"
      "[\"time\",\"cycleAvgDuration\",\"host\",\"revision\",\"run\",\"status\",\"test_type\"],"
      "\"values\":["
      "[1647216100000000000,24.5,\"bench-a\",\"aaaaaaa\",\"daily-aaaaaaa\",\"success\",\"daily\"],"
      "[1647216200000000000,32.7,\"bench-b\",\"aaaaaaa\",\"daily-aaaaaaa\",\"success\",\"daily\"]"
      "]}]}]}";
  static const char dss[] =
      "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"dss_bench\",\"columns\":"
      "[\"time\",\"variantIndex\",\"rps_total\",\"p95_ms\",\"errors\",\"run\",\"test\",\"arm\","
      "\"variant\",\"sweep\",\"host\"],\"values\":["
      "[1700000000000000000,0,100,5,0,\"cmp\",\"rid_isa\",\"a\",\"v0\",null,\"bench-a\"],"
      "[1700000500000000000,0,70,9,0,\"cmp\",\"rid_isa\",\"a\",\"v0\",null,\"bench-b\"]"
      "]}]}]}";
  static const char stages[] =
      "{\"results\":[{\"statement_id\":0,\"series\":["
      "{\"name\":\"loadgen_stage\",\"tags\":{\"run\":\"daily-aaaaaaa\",\"host\":\"bench-a\"},"
      "\"columns\":[\"time\",\"last\"],\"values\":[[1647216100000000000,3]]},"
      "{\"name\":\"loadgen_stage\",\"tags\":{\"run\":\"daily-aaaaaaa\",\"host\":\"bench-b\"},"
      "\"columns\":[\"time\",\"last\"],\"values\":[[1647216900000000000,3]]}]}]}";
  ps_report_data d;
  ps_report_data_init(&d, 1800000000000000000LL, 0, NULL);
  parse(&d, PS_RQ_RUN_POINTS, points);
  parse(&d, PS_RQ_DSS, dss);
  parse(&d, PS_RQ_STAGE_CANDIDATES, stages);
  assert_int_equal(ps_report_finish(&d), 0);
  assert_int_equal(d.nruns, 2);
  const ps_rrun *a = ps_report_find_host_run(&d, "bench-a", "daily-aaaaaaa");
  const ps_rrun *b = ps_report_find_host_run(&d, "bench-b", "daily-aaaaaaa");
  assert_non_null(a);
  assert_non_null(b);
  assert_true(a->metric[0] == 24.5 && b->metric[0] == 32.7);
  /* a rewritten file on one machine is not a newer version of the other's */
  assert_int_equal(d.ndssfiles, 2);
  assert_int_equal(d.ndss, 2);
  assert_int_equal(ps_report_pick_stage_run(&d), 0);
  assert_string_equal(d.stage_run, "daily-aaaaaaa");
  assert_string_equal(d.stage_host, "bench-b");
  ps_buf q;
  ps_buf_init(&q, 0);
  assert_int_equal(ps_report_statements(&d, PS_RQ_STAGE_CYCLES, &q), 0);
  assert_non_null(strstr(q.data, "\"run\" = 'daily-aaaaaaa' AND \"host\" = 'bench-b'"));
  ps_buf_reset(&q);
  /* --host: every statement asks for those hosts only, quoted */
  const char *const hosts[] = {"bench-a", "x' OR 'a'='a"};
  assert_int_equal(ps_report_set_hosts(&d, hosts, 2), 0);
  for (int st = 0; st < PS_REPORT_NSTATEMENTS; st++) {
    ps_buf_reset(&q);
    assert_int_equal(ps_report_statements(&d, st, &q), 0);
    assert_non_null(strstr(q.data, " AND (\"host\" = 'bench-a' OR \"host\" = 'x\\' OR "
                                   "\\'a\\'=\\'a')"));
  }
  ps_buf_free(&q);
  ps_report_data_free(&d);
}

static void test_shapes_it_does_not_know(void **state) {
  (void)state;
  static const char *const odd[] = {
      "", "null", "[]", "{\"results\":5}", "{\"results\":[{\"statement_id\":-1}]}",
      "{\"results\":[{\"statement_id\":99,\"series\":[]}]}",
      "{\"results\":[{\"statement_id\":0,\"series\":[{\"columns\":\"x\"}]}]}",
      "{\"results\":[{\"statement_id\":0,\"series\":[{\"columns\":[\"time\"],\"values\":[1,2]}]}]}",
      "{\"results\":[{\"statement_id\":1,\"series\":[{\"tags\":{\"run\":5},\"columns\":[\"time\"],"
      "\"values\":[[\"x\"]]}]}]}",
      "{\"error\":\"database not found\"}",
  };
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
    for (int st = 0; st < PS_REPORT_NSTATEMENTS; st++) {
      ps_report_data d;
      ps_report_data_init(&d, 1, 0, NULL);
      assert_int_equal(ps_report_parse_answer(&d, st, odd[i], strlen(odd[i])), 0);
      assert_int_equal(ps_report_finish(&d), 0);
      assert_int_equal(d.nruns + d.ndss + d.nverdicts, 0);
      ps_report_data_free(&d);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_from_markers_and_points),
      cmocka_unit_test(test_answer_order_does_not_matter),
      cmocka_unit_test(test_rewritten_dss_file_shows_newest),
      cmocka_unit_test(test_stage_run_and_its_query),
      cmocka_unit_test(test_source_filter),
      cmocka_unit_test(test_two_hosts_never_merge),
      cmocka_unit_test(test_shapes_it_does_not_know),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
