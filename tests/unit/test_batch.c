/*
 * test_batch: which offsets may be committed when batches are acknowledged
 * in any order (include/influx/batch.h), and the batch limits and back-pressure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "influx/batch.h"

typedef struct rig {
  ps_batcher bt;
  ps_pbatch *sent[64];
  size_t nsent;
  int commits;
} rig;

static int submit(void *ctx, ps_pbatch *b) {
  rig *r = ctx;
  r->sent[r->nsent++] = b;
  return 0;
}

static void committed(void *ctx, ps_cursor *c) {
  (void)c;
  ((rig *)ctx)->commits++;
}

static void rig_init(rig *r, size_t max_points, size_t max_bytes, size_t max_pending) {
  memset(r, 0, sizeof *r);
  ps_batcher_init(&r->bt, max_points, max_bytes, max_pending, submit, committed, r);
}

static const ps_origin org = {"f", 1};

/* One point per line "pN\n"; line k ends at offset 10*k. */
static void add(rig *r, ps_cursor *c) {
  assert_int_equal(ps_batcher_add(&r->bt, c, "p\n", 2, &org), 0);
}

static void out_of_order_acks_commit_only_the_prefix(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 1, 1 << 20, 1 << 20); /* one point per batch */
  ps_cursor c;
  ps_cursor_init(&c, 0, 1, NULL);
  for (int k = 1; k <= 3; k++) {
    add(&r, &c);
    ps_cursor_line_done(&c, 10u * k, k + 1, 0);
  }
  assert_int_equal(r.nsent, 3);
  ps_batcher_done(&r.bt, r.sent[2], 1);
  assert_int_equal(ps_cursor_committed(&c), 0);
  ps_batcher_done(&r.bt, r.sent[0], 1);
  assert_int_equal(ps_cursor_committed(&c), 10);
  assert_int_equal(c.committed_line, 2);
  ps_batcher_done(&r.bt, r.sent[1], 1);
  assert_int_equal(ps_cursor_committed(&c), 30);
  assert_int_equal(c.committed_line, 4);
  assert_int_equal(c.live, 0); /* every checkpoint acknowledged and freed */
  assert_int_equal(r.bt.pending_bytes, 0);
  ps_cursor_release(&c);
  assert_int_equal(c.live, 0);
}

static void a_line_spanning_batches_waits_for_all(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 2, 1 << 20, 1 << 20);
  ps_cursor c;
  ps_cursor_init(&c, 100, 7, NULL);
  /* Line 7 gives five points: batches [2] [2] and [1 + line 8's point]. */
  for (int i = 0; i < 5; i++)
    add(&r, &c);
  ps_cursor_line_done(&c, 200, 8, 0);
  add(&r, &c);
  ps_cursor_line_done(&c, 300, 9, 0);
  assert_int_equal(r.nsent, 3);
  ps_batcher_done(&r.bt, r.sent[1], 1);
  ps_batcher_done(&r.bt, r.sent[2], 1);
  assert_int_equal(ps_cursor_committed(&c), 100); /* first part still out */
  ps_batcher_done(&r.bt, r.sent[0], 1);
  assert_int_equal(ps_cursor_committed(&c), 300);
  ps_cursor_release(&c);
}

static void many_files_in_one_batch(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 100, 1 << 20, 1 << 20);
  ps_cursor a, b;
  ps_cursor_init(&a, 0, 1, NULL);
  ps_cursor_init(&b, 0, 1, NULL);
  add(&r, &a);
  ps_cursor_line_done(&a, 5, 2, 0);
  add(&r, &b);
  ps_cursor_line_done(&b, 7, 2, 0);
  add(&r, &a);
  ps_cursor_line_done(&a, 9, 3, 0);
  assert_int_equal(ps_batcher_flush(&r.bt), 0);
  assert_int_equal(r.nsent, 1);
  assert_int_equal(r.sent[0]->b.npoints, 3);
  /* Lines read after the flush are not covered by the first batch. */
  add(&r, &a);
  ps_cursor_line_done(&a, 20, 4, 0);
  ps_batcher_done(&r.bt, r.sent[0], 1);
  assert_int_equal(ps_cursor_committed(&a), 9);
  assert_int_equal(ps_cursor_committed(&b), 7);
  assert_int_equal(r.commits, 2);
  ps_batcher_flush(&r.bt);
  ps_batcher_done(&r.bt, r.sent[1], 1);
  assert_int_equal(ps_cursor_committed(&a), 20);
  ps_cursor_release(&a);
  ps_cursor_release(&b);
}

static void lines_without_points_commit_behind_the_prefix(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 100, 1 << 20, 1 << 20);
  ps_cursor c;
  ps_cursor_init(&c, 0, 1, NULL);
  /* A rejected line with nothing in flight commits at once. */
  assert_int_equal(ps_cursor_line_done(&c, 4, 2, 0), 1);
  assert_int_equal(ps_cursor_committed(&c), 4);
  add(&r, &c);
  ps_cursor_line_done(&c, 8, 3, 0);
  ps_batcher_flush(&r.bt);
  /* Rejected lines after an unacknowledged one wait for it. */
  assert_int_equal(ps_cursor_line_done(&c, 12, 4, 0), 0);
  assert_int_equal(ps_cursor_line_done(&c, 16, 5, 0), 0);
  assert_int_equal(ps_cursor_committed(&c), 4);
  ps_batcher_done(&r.bt, r.sent[0], 1);
  assert_int_equal(ps_cursor_committed(&c), 16);
  assert_int_equal(c.committed_line, 5);
  ps_cursor_release(&c);
}

static void failed_batch_pins_the_offset(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 1, 1 << 20, 1 << 20);
  ps_cursor c;
  ps_cursor_init(&c, 0, 1, NULL);
  add(&r, &c);
  ps_cursor_line_done(&c, 10, 2, 0);
  add(&r, &c);
  ps_cursor_line_done(&c, 20, 3, 0);
  ps_batcher_done(&r.bt, r.sent[0], 0); /* cancelled at shutdown */
  ps_batcher_done(&r.bt, r.sent[1], 1);
  assert_int_equal(ps_cursor_committed(&c), 0);
  ps_cursor_release(&c);
  assert_int_equal(c.live, 0);
}

static void back_pressure_refuses_then_resumes(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 2, 1 << 20, 6); /* 6 bytes pending: three points */
  ps_cursor c;
  ps_cursor_init(&c, 0, 1, NULL);
  add(&r, &c);
  add(&r, &c);
  add(&r, &c);
  assert_true(ps_batcher_full(&r.bt));
  assert_int_equal(ps_batcher_add(&r.bt, &c, "p\n", 2, &org), -EAGAIN);
  /* A batch is in flight: its ack makes room, and the open batch fills
   * on instead of going out half empty. */
  assert_int_equal(r.nsent, 1);
  assert_int_equal(r.bt.pending_points, 3);
  ps_batcher_done(&r.bt, r.sent[0], 1);
  assert_false(ps_batcher_full(&r.bt));
  add(&r, &c); /* the open batch is full now: sent */
  assert_int_equal(r.nsent, 2);
  assert_int_equal(r.sent[1]->b.npoints, 2);
  add(&r, &c);
  ps_cursor_line_done(&c, 50, 2, 0);
  ps_batcher_done(&r.bt, r.sent[1], 1);
  assert_int_equal(ps_cursor_committed(&c), 0); /* the line's last point is open */
  ps_batcher_flush(&r.bt);
  ps_batcher_done(&r.bt, r.sent[2], 1);
  assert_int_equal(ps_cursor_committed(&c), 50);
  ps_cursor_release(&c);
}

/* With nothing in flight no acknowledgement can make room: a refusal
 * sends the open batch. */
static void back_pressure_with_nothing_in_flight_sends_the_open_batch(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 10, 1 << 20, 4); /* two points fill the pending bytes */
  add(&r, NULL);
  add(&r, NULL);
  assert_int_equal(r.nsent, 0);
  assert_int_equal(ps_batcher_add(&r.bt, NULL, "p\n", 2, &org), -EAGAIN);
  assert_int_equal(r.nsent, 1);
  assert_int_equal(r.sent[0]->b.npoints, 2);
  ps_batcher_done(&r.bt, r.sent[0], 1);
  assert_false(ps_batcher_full(&r.bt));
  assert_int_equal(r.bt.pending_bytes, 0);
}

static void one_point_larger_than_pending_still_passes(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 10, 1 << 20, 4);
  char big[100];
  memset(big, 'x', sizeof big);
  assert_int_equal(ps_batcher_add(&r.bt, NULL, big, sizeof big, &org), 0);
  assert_int_equal(ps_batcher_add(&r.bt, NULL, big, sizeof big, &org), -EAGAIN);
  ps_batcher_done(&r.bt, r.sent[0], 1);
  assert_int_equal(r.bt.pending_bytes, 0);
}

static void max_bytes_splits_before_overflow(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 1000, 10, 1 << 20);
  assert_int_equal(ps_batcher_add(&r.bt, NULL, "aaaa\n", 5, &org), 0);
  assert_int_equal(ps_batcher_add(&r.bt, NULL, "bbbb\n", 5, &org), 0); /* = 10: sent */
  assert_int_equal(r.nsent, 1);
  assert_int_equal(ps_batcher_add(&r.bt, NULL, "cccccc\n", 7, &org), 0);
  assert_int_equal(ps_batcher_add(&r.bt, NULL, "dddd\n", 5, &org), 0); /* 12 > 10 */
  assert_int_equal(r.nsent, 2);
  assert_int_equal(r.sent[1]->b.body.len, 7);
  assert_int_equal(r.sent[0]->b.npoints, 2);
  ps_origin o1 = ps_batch_origin(&r.sent[0]->b, 1);
  assert_string_equal(o1.file, "f");
  assert_int_equal(o1.line, 1);
  ps_batcher_done(&r.bt, r.sent[0], 1);
  ps_batcher_done(&r.bt, r.sent[1], 1);
  ps_batcher_free(&r.bt);
}

static void retired_cursor_is_released_when_batches_finish(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 100, 1 << 20, 1 << 20);
  ps_cursor c;
  ps_cursor_init(&c, 0, 1, NULL);
  add(&r, &c);
  ps_cursor_line_done(&c, 10, 2, 0);
  ps_batcher_flush(&r.bt);
  ps_cursor_release(&c);       /* truncated: a new cursor takes over */
  assert_int_equal(c.live, 1); /* the batch still holds it */
  int before = r.commits;
  ps_batcher_done(&r.bt, r.sent[0], 1);
  assert_int_equal(c.live, 0);
  assert_int_equal(r.commits, before + 1);      /* the owner hears of it to free */
  assert_int_equal(ps_cursor_committed(&c), 0); /* no commits once retired */
}

static void documents_commit_their_hash(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 100, 1 << 20, 1 << 20);
  ps_cursor c;
  ps_cursor_init(&c, 0, 0, NULL);
  add(&r, &c);
  ps_cursor_line_done(&c, 123, 0, 0xabcdef);
  assert_int_equal(c.committed_doc_hash, 0);
  ps_batcher_flush(&r.bt);
  ps_batcher_done(&r.bt, r.sent[0], 1);
  assert_true(c.committed_doc_hash == 0xabcdef);
  ps_cursor_release(&c);
}

/* Acknowledged bodies come back for the next batches, as many as
 * max_pending holds batches: with only two kept, most of eight in flight
 * were freed and the next ones faulted in afresh. None stay once nothing
 * is open or in flight. */
static void acknowledged_bodies_are_kept_for_the_next_batches(void **st) {
  (void)st;
  rig r;
  rig_init(&r, 1000, 1024, 8 * 1024);
  assert_int_equal(r.bt.spares.max, 8);
  ps_cursor c;
  ps_cursor_init(&c, 0, 1, NULL);
  char line[600];
  memset(line, 'x', sizeof line - 1);
  line[sizeof line - 1] = '\n';
  for (int k = 1; k <= 8; k++) { /* eight full batches, one line each */
    assert_int_equal(ps_batcher_add(&r.bt, &c, line, sizeof line, &org), 0);
    ps_cursor_line_done(&c, (uint64_t)k * sizeof line, k + 1, 0);
    ps_batcher_flush(&r.bt);
  }
  assert_int_equal(r.nsent, 8);
  const char *bodies[8];
  for (int k = 0; k < 8; k++)
    bodies[k] = r.sent[k]->b.body.data;
  for (int k = 0; k < 7; k++) /* the last stays in flight: busy */
    ps_batcher_done(&r.bt, r.sent[k], 1);
  assert_int_equal(r.bt.spares.n, 7);
  for (int k = 0; k < 7; k++) { /* the next batches write into them */
    assert_int_equal(ps_batcher_add(&r.bt, &c, line, sizeof line, &org), 0);
    const char *now = r.bt.open->b.body.data;
    int reused = 0;
    for (int j = 0; j < 7; j++)
      reused |= now == bodies[j];
    assert_true(reused);
    ps_cursor_line_done(&c, (uint64_t)(9 + k) * sizeof line, 10 + k, 0);
    ps_batcher_flush(&r.bt);
  }
  assert_int_equal(r.bt.spares.n, 0);
  for (size_t k = 7; k < r.nsent; k++)
    ps_batcher_done(&r.bt, r.sent[k], 1);
  assert_int_equal(r.bt.spares.n, 0); /* nothing left to send: none kept */
  ps_cursor_release(&c);
  ps_batcher_free(&r.bt);

  /* batches cut by max_points, far below max_bytes: kept all the same */
  rig_init(&r, 1, 1 << 20, 8 << 20);
  ps_cursor_init(&c, 0, 1, NULL);
  for (int k = 1; k <= 3; k++) {
    assert_int_equal(ps_batcher_add(&r.bt, &c, line, sizeof line, &org), 0);
    ps_cursor_line_done(&c, (uint64_t)k * sizeof line, k + 1, 0);
  }
  assert_int_equal(r.nsent, 3);
  ps_batcher_done(&r.bt, r.sent[0], 1);
  assert_int_equal(r.bt.spares.n, 1);
  const char *kept = r.bt.spares.bodies[0].data;
  assert_int_equal(ps_batcher_add(&r.bt, &c, line, sizeof line, &org), 0);
  ps_cursor_line_done(&c, 4 * sizeof line, 5, 0);
  assert_int_equal(r.nsent, 4);
  assert_ptr_equal(r.sent[3]->b.body.data, kept);
  for (size_t k = 1; k < r.nsent; k++)
    ps_batcher_done(&r.bt, r.sent[k], 1);
  ps_cursor_release(&c);
  ps_batcher_free(&r.bt);

  rig_init(&r, 1000, 1024, 1024); /* one batch fits: two kept still */
  assert_int_equal(r.bt.spares.max, 2);
  ps_batcher_limits(&r.bt, 1000, 1024, 1 << 30);
  assert_int_equal(r.bt.spares.max, PS_BATCH_SPARES);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(out_of_order_acks_commit_only_the_prefix),
      cmocka_unit_test(a_line_spanning_batches_waits_for_all),
      cmocka_unit_test(many_files_in_one_batch),
      cmocka_unit_test(lines_without_points_commit_behind_the_prefix),
      cmocka_unit_test(failed_batch_pins_the_offset),
      cmocka_unit_test(back_pressure_refuses_then_resumes),
      cmocka_unit_test(back_pressure_with_nothing_in_flight_sends_the_open_batch),
      cmocka_unit_test(one_point_larger_than_pending_still_passes),
      cmocka_unit_test(max_bytes_splits_before_overflow),
      cmocka_unit_test(retired_cursor_is_released_when_batches_finish),
      cmocka_unit_test(documents_commit_their_hash),
      cmocka_unit_test(acknowledged_bodies_are_kept_for_the_next_batches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
