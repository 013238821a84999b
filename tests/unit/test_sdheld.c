/*
 * Unit tests of the stage drift's per-block rows held as the slog reader
 * encodes them (judging/verdicts_sdheld.c): the rows are the ones a read
 * back would give, a stage read again from its start holds each row once,
 * and a run is used only when every stage the server holds was read whole
 * here; the bounds hold.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "judging/verdicts_sdheld.h"

#define NS 1000000000LL

static uint64_t clock_ms = 1000; /* the loop's clock the points come at */

/* One slog point as formats/slog_reduce.c writes it: run, stage and (for
 * block vats) vat tags; delivery (and BOYD) seconds. */
static void feed(jd_sdheld *h, const char *measurement, const char *run, const char *stage,
                 const char *vat, const char *host, int64_t t, double secs) {
  ps_tag tags[4];
  size_t nt = 0;
  tags[nt++] = (ps_tag){"run", run};
  tags[nt++] = (ps_tag){"stage", stage};
  if (vat)
    tags[nt++] = (ps_tag){"vat", vat};
  if (host)
    tags[nt++] = (ps_tag){"host", host};
  ps_field f[2] = {ps_field_float("deliverySeconds", secs),
                   ps_field_float("boydSeconds", secs / 2)};
  ps_point p = {measurement, tags, nt, f, 2, t};
  jd_sdheld_point(h, "bench", &p, clock_ms);
}

static void block(jd_sdheld *h, const char *run, const char *stage, int64_t t, double secs) {
  feed(h, "loadgen_slog_block", run, stage, NULL, NULL, t, secs);
}

static void block_vat(jd_sdheld *h, const char *run, const char *stage, const char *vat, int64_t t,
                      double secs) {
  feed(h, "loadgen_slog_block_vat", run, stage, vat, NULL, t, secs);
}

/* The stage's summary, which counts its blocks (slog_reduce.c). */
static void stage_point(jd_sdheld *h, const char *run, const char *stage, int partial, int blocks) {
  ps_tag tags[2] = {{"run", run}, {"stage", stage}};
  ps_field f[2] = {ps_field_bool("partial", partial), ps_field_int("blocks", blocks)};
  ps_point p = {"loadgen_slog_stage", tags, 2, f, 2, 99 * NS};
  jd_sdheld_point(h, "bench", &p, clock_ms);
}

/* A stage of `n` blocks from `t0` on, each closing with two vats' rows
 * first (as a block is closed), then its final stage point. */
static void whole_stage(jd_sdheld *h, const char *run, const char *stage, int64_t t0, int n) {
  for (int i = 0; i < n; i++) {
    block_vat(h, run, stage, "v1", t0 + i * 5 * NS, 0.1 * (i + 1));
    block_vat(h, run, stage, "v9", t0 + i * 5 * NS, 0.2 * (i + 1));
    block(h, run, stage, t0 + i * 5 * NS, 0.5 * (i + 1));
  }
  stage_point(h, run, stage, 0, n);
}

/* The server's stages: slog figures (time_ns >= 0) for each given. */
static size_t server_stages(ps_slog_drift_stage *s, const int *nums, size_t n) {
  for (size_t i = 0; i < n; i++)
    s[i] = (ps_slog_drift_stage){nums[i], 1, 0, NAN, NAN, NAN, 10 * NS};
  return n;
}

static void test_rows_as_a_read_gives_them(void **state) {
  jd_sdheld h = {0};
  whole_stage(&h, "r1", "0", 100 * NS, 3);
  whole_stage(&h, "r1", "1", 200 * NS, 2);
  whole_stage(&h, "r2", "0", 300 * NS, 4); /* another run: not r1's */
  jd_sdheld_run *r = jd_sdheld_take(&h, "r1");
  assert_non_null(r);
  assert_null(jd_sdheld_take(&h, "r1")); /* taken: forgotten */
  ps_slog_drift_stage st[2];
  jd_verdicts_sdblocks b = {0};
  assert_int_equal(jd_sdheld_fill(r, st, server_stages(st, (int[]){0, 1}, 2), 0, INT64_MAX, &b), 1);
  assert_int_equal(b.nblocks, 5);
  assert_int_equal(b.nvats, 10);
  assert_int_equal(b.blocks[0].stage, 0);
  assert_int_equal(b.blocks[0].time_ns, 100 * NS);
  assert_true(b.blocks[2].delivery_s == 1.5 && b.blocks[2].boyd_s == 0.75);
  assert_int_equal(b.vats[1].time_ns, 100 * NS);
  assert_string_equal(b.vats[1].vat, "v9");
  assert_true(b.vats[1].delivery_s == 0.2);
  assert_ptr_equal(b.vats[0].vat, b.vats[2].vat); /* a vat ID held once */
  /* the read's time bounds: from inclusive, to exclusive */
  jd_verdicts_sdblocks_free(&b);
  assert_int_equal(jd_sdheld_fill(r, st, 2, 105 * NS, 200 * NS, &b), 1);
  assert_int_equal(b.nblocks, 2);
  assert_int_equal(b.blocks[0].time_ns, 105 * NS);
  jd_verdicts_sdblocks_free(&b);
  jd_sdheld_run_free(r);
  jd_sdheld_free(&h);
}

static void test_whole_only_when_every_server_stage_was_read_here(void **state) {
  jd_sdheld h = {0};
  whole_stage(&h, "r1", "1", 200 * NS, 2);
  /* stage 2 still being written: its snapshot is partial */
  block(&h, "r1", "2", 300 * NS, 1.0);
  stage_point(&h, "r1", "2", 1, 1);
  jd_sdheld_run *r = jd_sdheld_take(&h, "r1");
  ps_slog_drift_stage st[3];
  jd_verdicts_sdblocks b = {0};
  /* the server has stage 0 too (read before a restart): read it back */
  assert_int_equal(jd_sdheld_fill(r, st, server_stages(st, (int[]){0, 1}, 2), 0, INT64_MAX, &b), 0);
  assert_null(b.blocks);
  /* stage 2 not complete here */
  assert_int_equal(jd_sdheld_fill(r, st, server_stages(st, (int[]){1, 2}, 2), 0, INT64_MAX, &b), 0);
  /* a stage the server has no slog figures of asks nothing */
  server_stages(st, (int[]){1, 5}, 2);
  st[1].time_ns = -1;
  assert_int_equal(jd_sdheld_fill(r, st, 2, 0, INT64_MAX, &b), 1);
  jd_verdicts_sdblocks_free(&b);
  assert_int_equal(jd_sdheld_fill(NULL, st, 2, 0, INT64_MAX, &b), 0);
  jd_sdheld_run_free(r);
  jd_sdheld_free(&h);
}

static void test_a_stage_read_again_holds_each_row_once(void **state) {
  jd_sdheld h = {0};
  whole_stage(&h, "r1", "0", 100 * NS, 3);
  whole_stage(&h, "r1", "1", 200 * NS, 2);
  /* stage 0 read again from its start (a batch was lost): its first
   * block's vat rows come before the block row that shows it */
  block_vat(&h, "r1", "0", "v1", 100 * NS, 0.1);
  block_vat(&h, "r1", "0", "v9", 100 * NS, 0.2);
  jd_sdheld_run *peek = h.runs;
  assert_int_equal(peek->rows.nvats, 12);
  block(&h, "r1", "0", 100 * NS, 0.5);
  assert_int_equal(peek->rows.nblocks, 3); /* stage 1's two, stage 0's first again */
  assert_int_equal(peek->rows.nvats, 6);   /* stage 1's four, this block's two */
  assert_int_equal(h.nrows, 9);
  ps_slog_drift_stage st[2];
  server_stages(st, (int[]){0, 1}, 2);
  jd_verdicts_sdblocks b = {0};
  /* not whole until the stage's final point comes again */
  jd_sdheld_run *r = jd_sdheld_take(&h, "r1");
  assert_int_equal(jd_sdheld_fill(r, st, 2, 0, INT64_MAX, &b), 0);
  jd_sdheld_run_free(r);
  whole_stage(&h, "r1", "0", 100 * NS, 3);
  whole_stage(&h, "r1", "1", 200 * NS, 2);
  for (int again = 0; again < 2; again++)
    whole_stage(&h, "r1", "0", 100 * NS, 3);
  r = jd_sdheld_take(&h, "r1");
  assert_int_equal(jd_sdheld_fill(r, st, 2, 0, INT64_MAX, &b), 1);
  assert_int_equal(b.nblocks, 5);
  assert_int_equal(b.nvats, 10);
  jd_verdicts_sdblocks_free(&b);
  jd_sdheld_run_free(r);
  jd_sdheld_free(&h);
}

static void test_a_stage_held_from_its_middle_is_never_whole(void **state) {
  jd_sdheld h = {0};
  whole_stage(&h, "r1", "1", 100 * NS, 2);
  /* stage 2 is being read when a read takes the run */
  block_vat(&h, "r1", "2", "v1", 200 * NS, 0.1);
  block(&h, "r1", "2", 200 * NS, 0.5);
  jd_sdheld_run_free(jd_sdheld_take(&h, "r1"));
  /* stage 1 read again from its start, stage 2 read on to its end */
  whole_stage(&h, "r1", "1", 100 * NS, 2);
  block(&h, "r1", "2", 205 * NS, 0.5);
  stage_point(&h, "r1", "2", 0, 2); /* its two blocks; one held */
  jd_sdheld_run *r = jd_sdheld_take(&h, "r1");
  ps_slog_drift_stage st[2];
  jd_verdicts_sdblocks b = {0};
  assert_int_equal(jd_sdheld_fill(r, st, server_stages(st, (int[]){1, 2}, 2), 0, INT64_MAX, &b), 0);
  jd_sdheld_run_free(r);
  /* a count that does not match either way is not whole */
  block(&h, "r2", "0", 100 * NS, 0.5);
  stage_point(&h, "r2", "0", 0, 0);
  r = jd_sdheld_take(&h, "r2");
  assert_int_equal(jd_sdheld_fill(r, st, server_stages(st, (int[]){0}, 1), 0, INT64_MAX, &b), 0);
  jd_sdheld_run_free(r);
  jd_sdheld_free(&h);
}

static void test_other_hosts_and_bad_points_are_passed_over(void **state) {
  jd_sdheld h = {0};
  feed(&h, "loadgen_slog_block", "r1", "0", NULL, "elsewhere", 100 * NS, 1.0);
  feed(&h, "loadgen_slog_block", "r1", "x", NULL, NULL, 100 * NS, 1.0);
  feed(&h, "loadgen_slog_block", "r1", "0", NULL, NULL, -5, 1.0);
  feed(&h, "loadgen_slog_block_vat", "r1", "0", NULL, NULL, 100 * NS, 1.0); /* no vat */
  feed(&h, "loadgen_slog_vat", "r1", "0", "v1", NULL, 100 * NS, 1.0);
  assert_int_equal(h.nrows, 0);
  feed(&h, "loadgen_slog_block", "r1", "0", NULL, "bench", 100 * NS, 1.0);
  assert_int_equal(h.nrows, 1);
  jd_sdheld_free(&h);
}

static void test_bounded(void **state) {
  jd_sdheld h = {0};
  char run[16];
  for (int i = 0; i < JD_SDHELD_RUNS + 3; i++) {
    snprintf(run, sizeof run, "r%d", i);
    whole_stage(&h, run, "0", 100 * NS, 2);
  }
  assert_int_equal(h.nruns, JD_SDHELD_RUNS);
  assert_null(jd_sdheld_take(&h, "r0")); /* the least lately touched went first */
  assert_int_equal(h.nrows, JD_SDHELD_RUNS * 6);
  jd_sdheld_free(&h);
  /* a run whose points stopped an hour before a new one came goes */
  whole_stage(&h, "stale", "0", 100 * NS, 2);
  clock_ms += JD_SDHELD_IDLE_MS - 1;
  whole_stage(&h, "fresh", "0", 100 * NS, 2);
  assert_int_equal(h.nruns, 2); /* not yet an hour */
  clock_ms += 1;
  whole_stage(&h, "fresh", "1", 200 * NS, 2); /* a known run: nothing goes */
  assert_int_equal(h.nruns, 2);
  whole_stage(&h, "newest", "0", 100 * NS, 2);
  assert_int_equal(h.nruns, 2);
  assert_null(jd_sdheld_take(&h, "stale"));
  assert_int_equal(h.nrows, 18);
  jd_sdheld_free(&h);
  /* a run past the row bound holds nothing and is never whole */
  for (size_t i = 0; i <= JD_SDHELD_MAX_ROWS; i++)
    block(&h, "big", "0", (int64_t)(i + 1) * NS, 1.0);
  stage_point(&h, "big", "0", 0, (int)JD_SDHELD_MAX_ROWS + 1);
  assert_int_equal(h.nrows, 0);
  jd_sdheld_run *r = jd_sdheld_take(&h, "big");
  ps_slog_drift_stage st[1];
  jd_verdicts_sdblocks b = {0};
  assert_int_equal(jd_sdheld_fill(r, st, server_stages(st, (int[]){0}, 1), 0, INT64_MAX, &b), 0);
  jd_sdheld_run_free(r);
  jd_sdheld_free(&h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rows_as_a_read_gives_them),
      cmocka_unit_test(test_whole_only_when_every_server_stage_was_read_here),
      cmocka_unit_test(test_a_stage_read_again_holds_each_row_once),
      cmocka_unit_test(test_a_stage_held_from_its_middle_is_never_whole),
      cmocka_unit_test(test_other_hosts_and_bad_points_are_passed_over),
      cmocka_unit_test(test_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
