/*
 * test_sink.c: the sink's life cycle and the pieces that need no server:
 * the batch container, refused submits, and closing with batches still
 * waiting (every batch answered once with -ECANCELED, the loop closable
 * afterwards). What a server answers is tested against a real
 * InfluxDB in tests/integration/test_sink.py; its URLs in test_endpoint.c.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "influx/sink.h"

#include "aux_loop.h"

/* Built by hand rather than by ps_config_defaults(), whose strings would
 * then be owned here: unset strings are NULL, which the sink must accept. */
static ps_config base_config(void) {
  ps_config c;
  memset(&c, 0, sizeof c);
  c.influxdb.api = PS_API_V1;
  c.influxdb.tls_verify = 1;
  c.influxdb.timeout_ms = 2000;
  return c;
}

static void test_batch_lines_grow(void **state) {
  (void)state;
  ps_batch b;
  ps_batch_init(&b);
  for (size_t i = 0; i < 1000; i++) {
    ps_origin o = {"f.lp", i + 1};
    assert_int_equal(ps_batch_add_line_origin(&b, i * 10, &o), 0);
  }
  assert_int_equal(b.npoints, 1000);
  assert_int_equal(b.nruns, 1); /* a stream of lines is one record */
  ps_origin o = ps_batch_origin(&b, 999);
  assert_string_equal(o.file, "f.lp");
  assert_int_equal(o.line, 1000);
  ps_batch_free(&b);
  assert_null(b.runs);
  ps_batch_free(NULL);
}

/* Lines of one file, several points of one line, another file, a gap:
 * each point still names its own file and line. */
static void test_batch_origin_runs(void **state) {
  (void)state;
  static const ps_origin seq[] = {
      {"a", 1}, {"a", 2}, {"a", 3}, {"a", 3}, {"a", 3}, {"b", 7}, {"b", 7},
      {"b", 8}, {"a", 4}, {"a", 9}, {"a", 10}, {"a", 10}, {NULL, 0}, {NULL, 0}};
  size_t n = sizeof seq / sizeof seq[0];
  ps_batch b;
  ps_batch_init(&b);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(ps_batch_add_line_origin(&b, i, &seq[i]), 0);
  assert_int_equal(b.npoints, n);
  assert_true(b.nruns < n);
  for (size_t i = 0; i < n; i++) {
    ps_origin o = ps_batch_origin(&b, i);
    assert_ptr_equal(o.file, seq[i].file);
    assert_int_equal(o.line, seq[i].line);
  }
  ps_origin none = ps_batch_origin(&b, n); /* past the end: numbered only */
  assert_null(none.file);
  ps_batch_free(&b);
}

typedef struct {
  int done_calls;
  int cancelled;
  int closed_calls;
  ps_sink *sink;
  ps_sink_stats stats_at_close;
} ctx_t;

static void on_done(ps_sink *s, ps_batch *b, int status, size_t rejected) {
  ctx_t *c = ps_sink_data(s);
  c->done_calls++;
  if (status == -ECANCELED)
    c->cancelled++;
  assert_int_equal(rejected, 0);
  /* A new batch while closing is refused and never called back. */
  ps_batch other;
  ps_batch_init(&other);
  assert_int_equal(ps_sink_submit(s, &other), -ECANCELED);
  ps_batch_free(b);
}

static void on_closed(void *arg) {
  ctx_t *c = arg;
  c->closed_calls++;
}

static void test_close_idle(void **state) {
  (void)state;
  uv_loop_t loop;
  assert_int_equal(uv_loop_init(&loop), 0);
  ps_config c = base_config();
  ctx_t ctx = {0};
  ps_sink *s;
  assert_int_equal(ps_sink_init(&s, &loop, &c, on_done, NULL, &ctx), 0);
  assert_ptr_equal(ps_sink_data(s), &ctx);
  assert_int_equal(ps_sink_in_flight(s), 0);
  ps_sink_close(s, on_closed, &ctx);
  ps_sink_close(s, on_closed, &ctx); /* a second close is ignored */
  assert_int_equal(ctx.closed_calls, 0); /* only once handles are closed */
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(ctx.closed_calls, 1);
  aux_loop_close(&loop);
  ps_sink_close(NULL, NULL, NULL);
}

static void close_timer_cb(uv_timer_t *t) {
  ctx_t *c = t->data;
  c->stats_at_close = *ps_sink_get_stats(c->sink);
  ps_sink_close(c->sink, on_closed, c);
  uv_close((uv_handle_t *)t, NULL);
}

static void test_close_cancels_waiting_batches(void **state) {
  (void)state;
  uv_loop_t loop;
  assert_int_equal(uv_loop_init(&loop), 0);
  ps_config c = base_config();
  /* Port 1 on loopback refuses: every attempt fails and is retried. */
  char url[] = "http://127.0.0.1:1", db[] = "perf";
  c.influxdb.url = url;
  c.influxdb.database = db;
  ctx_t ctx = {0};
  assert_int_equal(ps_sink_init(&ctx.sink, &loop, &c, on_done, NULL, &ctx), 0);

  ps_batch b1, b2, bad;
  ps_batch_init(&b1);
  ps_batch_init(&b2);
  ps_batch_init(&bad);
  assert_int_equal(ps_buf_puts(&b1.body, "m v=1 1\nm v=2 2\n"), 0);
  assert_int_equal(ps_buf_puts(&b2.body, "m v=3 3\n"), 0);
  /* Origins added out of the body's order: refused, and never called back. */
  ps_origin o = {"x", 1};
  assert_int_equal(ps_buf_puts(&bad.body, "a b=1\nc d=2\n"), 0);
  assert_int_equal(ps_batch_add_line_origin(&bad, 6, &o), 0);
  assert_int_equal(ps_batch_add_line_origin(&bad, 0, &o), 0);
  assert_int_equal(ps_sink_submit(ctx.sink, &bad), -EINVAL);
  ps_batch_free(&bad);

  assert_int_equal(ps_sink_submit(ctx.sink, &b1), 0);
  assert_int_equal(ps_sink_submit(ctx.sink, &b2), 0);
  assert_int_equal(ps_sink_in_flight(ctx.sink), 2);

  uv_timer_t t;
  uv_timer_init(&loop, &t);
  t.data = &ctx;
  uv_timer_start(&t, close_timer_cb, 700, 0);
  uv_run(&loop, UV_RUN_DEFAULT);

  assert_int_equal(ctx.done_calls, 2);
  assert_int_equal(ctx.cancelled, 2);
  assert_int_equal(ctx.closed_calls, 1);
  /* Refused connections: retried with back-off, not in a busy loop (a
   * 200 ms first step allows only a handful in 700 ms). */
  assert_true(ctx.stats_at_close.http_retries >= 1);
  assert_true(ctx.stats_at_close.http_retries <= 8);
  assert_true(ctx.stats_at_close.unreachable_since_ms > 0);
  assert_int_equal(ctx.stats_at_close.points_written, 0);
  aux_loop_close(&loop);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batch_lines_grow),
      cmocka_unit_test(test_batch_origin_runs),
      cmocka_unit_test(test_close_idle),
      cmocka_unit_test(test_close_cancels_waiting_batches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
