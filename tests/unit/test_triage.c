/*
 * test_triage: triage decisions as data (agent/verdict/triage.c): what an
 * ack, an exclude and a baseline decision cover, that undo restores what
 * was, and that a triage_file's bad line is reported with its line and
 * loses nothing else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "readback/triage.h"
#include "verdict/triage.h"

typedef struct bad_lines {
  size_t n;
  size_t line[8];
  char why[8][128];
} bad_lines;

static void on_bad(void *ctx, const char *name, size_t line, const char *why) {
  bad_lines *b = ctx;
  assert_string_equal(name, "decisions.triage");
  if (b->n < 8) {
    b->line[b->n] = line;
    snprintf(b->why[b->n], sizeof b->why[b->n], "%s", why);
  }
  b->n++;
}

static const char file_text[] =
    "# kept in git\n"
    "ack run=r3 metric=cycle_avg_s reason=\"expected: the new feature costs 3 %\" "
    "ticket=https://tickets.example/42 who=ann when=2026-11-30T08:00:00Z\n"
    "\n"
    "exclude run=r5 host=m1 reason=\"noisy neighbour\"\n"
    "ack run=r6 reason=\"no quote at the end\n"
    "baseline run=r8 reason=\"new hardware\" id=base8\n"
    "ack run=r9 mteric=x reason=typo\n"
    "undo revokes=base8 reason=\"wrong run\"\n"
    "ack id= run=r10 reason=y\n";

static void file_lines(void **state) {
  (void)state;
  ps_triage_set s;
  ps_triage_set_init(&s);
  bad_lines b = {0};
  long nbad = ps_triage_parse_text(&s, "decisions.triage", file_text, strlen(file_text),
                                   on_bad, &b);
  assert_int_equal(nbad, 3);
  assert_int_equal(b.n, 3);
  assert_int_equal(b.line[0], 5);
  assert_non_null(strstr(b.why[0], "quote"));
  assert_int_equal(b.line[1], 7);
  assert_non_null(strstr(b.why[1], "unknown key"));
  assert_int_equal(b.line[2], 9); /* an empty id crashed the service at start */
  assert_non_null(strstr(b.why[2], "id= is empty"));
  assert_int_equal(s.n, 4); /* the good lines around the bad ones are all kept */
  const ps_triage_decision *a = ps_triage_ack_of(&s, "m1", "r3", NULL, "cycle_avg_s");
  assert_non_null(a);
  assert_string_equal(a->reason, "expected: the new feature costs 3 %");
  assert_string_equal(a->ticket, "https://tickets.example/42");
  assert_string_equal(a->origin, "decisions.triage:2");
  assert_int_equal(a->when_ns, 1796025600LL * 1000000000);
  assert_int_equal(a->id[0], 'f');
  /* the same line keeps its id across reloads */
  ps_triage_set again;
  ps_triage_set_init(&again);
  assert_int_equal(ps_triage_parse_text(&again, "decisions.triage", file_text,
                                        strlen(file_text), NULL, NULL), 3);
  assert_string_equal(ps_triage_ack_of(&again, "m1", "r3", NULL, "cycle_avg_s")->id, a->id);
  ps_triage_set_free(&again);
  assert_non_null(ps_triage_excluded(&s, "m1", "r5"));
  assert_null(ps_triage_excluded(&s, "m2", "r5")); /* host=m1 only */
  assert_null(ps_triage_baseline_of(&s, "m1", "r8")); /* undone */
  ps_triage_set_free(&s);
}

static void add(ps_triage_set *s, const char *id, ps_triage_action a, const char *run,
                const char *metric, const char *revokes, int64_t when) {
  ps_triage_decision d = {.id = (char *)id, .action = a, .run = (char *)run,
                          .metric = (char *)metric, .reason = (char *)"why",
                          .revokes = (char *)revokes, .when_ns = when};
  assert_int_equal(ps_triage_add(s, &d), 0);
}

static void ack_covers_its_change_only(void **state) {
  (void)state;
  ps_triage_set s;
  ps_triage_set_init(&s);
  add(&s, "t1", PS_TRIAGE_ACK, "r10", "cycle_avg_s", NULL, 1);
  /* the run's own verdict, and later runs pointing back at it */
  assert_non_null(ps_triage_ack_of(&s, "h", "r10", "r10", "cycle_avg_s"));
  assert_non_null(ps_triage_ack_of(&s, "h", "r12", "r10", "cycle_avg_s"));
  /* another metric, and a later, different change, are not covered */
  assert_null(ps_triage_ack_of(&s, "h", "r10", "r10", "success_rate"));
  assert_null(ps_triage_ack_of(&s, "h", "r20", "r20", "cycle_avg_s"));
  /* undo restores what was; the server may answer the same point twice */
  add(&s, "t2", PS_TRIAGE_UNDO, NULL, NULL, "t1", 2);
  ps_triage_decision again = s.d[1];
  assert_int_equal(ps_triage_add(&s, &again), 1); /* held already: the first stays */
  assert_int_equal(s.n, 2);
  assert_null(ps_triage_ack_of(&s, "h", "r10", "r10", "cycle_avg_s"));
  ps_triage_set_free(&s);
}

static void baseline_start(void **state) {
  (void)state;
  ps_triage_set s;
  ps_triage_set_init(&s);
  ps_verdict_run runs[6];
  char names[6][4];
  for (int i = 0; i < 6; i++) {
    snprintf(names[i], sizeof names[i], "r%d", i);
    runs[i] = (ps_verdict_run){.name = names[i], .host = "h"};
  }
  assert_int_equal(ps_triage_baseline_start(&s, runs, 6), 0);
  add(&s, "b2", PS_TRIAGE_BASELINE, "r2", NULL, NULL, 1);
  add(&s, "b4", PS_TRIAGE_BASELINE, "r4", NULL, NULL, 2);
  assert_int_equal(ps_triage_baseline_start(&s, runs, 6), 4);
  add(&s, "u4", PS_TRIAGE_UNDO, NULL, NULL, "b4", 3);
  assert_int_equal(ps_triage_baseline_start(&s, runs, 6), 2);
  ps_triage_set_free(&s);
}

static void server_answer(void **state) {
  (void)state;
  static const char answer[] =
      "{\"results\":[{\"statement_id\":0,\"series\":[{\"name\":\"perfship_triage\","
      "\"columns\":[\"time\",\"id\",\"action\",\"run\",\"metric\",\"host\",\"who\",\"reason\","
      "\"ticket\",\"revokes\"],\"values\":["
      "[1764547300000000000,\"t2\",\"undo\",null,null,null,\"ann\",\"oops\",null,\"t1\"],"
      "[1764547200000000000,\"t1\",\"exclude\",\"r5\",null,\"m1\",\"ann\",\"noisy\",null,null],"
      "[1764547100000000000,\"t0\",\"ack\",\"r3\",null,null,\"bob\",\"known\",null,null],"
      "[1764547000000000000,\"tx\",\"frobnicate\",\"r3\",null,null,\"bob\",\"?\",null,null]"
      "]}]}]}";
  ps_triage_set s;
  ps_triage_set_init(&s);
  assert_int_equal(ps_rb_triage_parse_answer(&s, answer, strlen(answer)), 3);
  assert_null(ps_triage_excluded(&s, "m1", "r5"));
  const ps_triage_decision *a = ps_triage_ack_of(&s, "m9", "r3", NULL, "anything");
  assert_non_null(a);
  assert_string_equal(a->who, "bob");
  assert_int_equal(ps_rb_triage_parse_answer(&s, "not json", 8), 0);
  ps_buf q;
  ps_buf_init(&q, 0);
  assert_int_equal(ps_rb_triage_statement(&q), 0);
  assert_non_null(strstr(q.data, "LIMIT"));
  ps_buf_free(&q);
  ps_triage_set_free(&s);
}

/* 100,000 lines, an undo in every ten: the set answers by its indexes (a
 * linear search per added line made this quadratic: 28 s to list), and
 * they stay true when the set is sorted by time. */
static void large_file(void **state) {
  (void)state;
  enum { LINES = 100000 };
  ps_buf text;
  ps_buf_init(&text, 0);
  for (int i = 0; i < LINES; i++)
    assert_int_equal(
        i % 10 == 9 ? ps_buf_printf(&text, "undo revokes=f%d reason=wrong\n", i - 1)
                    : ps_buf_printf(&text, "ack id=f%d run=r%d reason=seen when=2026-%02d-%02d\n",
                                    i, i % 5000, 1 + i % 12, 1 + i % 28),
        0);
  ps_triage_set s;
  ps_triage_set_init(&s);
  assert_int_equal(ps_triage_parse_text(&s, "big.triage", text.data, text.len, NULL, NULL), 0);
  assert_int_equal(s.n, LINES);
  for (int pass = 0; pass < 2; pass++) {
    /* r8 is acked by f8, f5008, ...: every tenth decision's next is undone */
    const ps_triage_decision *a = ps_triage_ack_of(&s, "h", "r8", NULL, "m");
    assert_null(a);
    a = ps_triage_ack_of(&s, "h", "r7", NULL, "m");
    assert_non_null(a);
    assert_string_equal(a->run, "r7");
    assert_non_null(ps_triage_find(&s, "f99997"));
    assert_true(ps_triage_revoked(&s, ps_triage_find(&s, "f99998")));
    assert_false(ps_triage_revoked(&s, ps_triage_find(&s, "f99997")));
    assert_null(ps_triage_find(&s, "f99999")); /* an undo's line, with an id of its own */
    assert_int_equal(ps_triage_sort_by_time(&s), 0);
    for (size_t i = 1; i < s.n; i++)
      assert_true(s.d[i - 1].when_ns <= s.d[i].when_ns);
  }
  ps_triage_set_free(&s);
  ps_buf_free(&text);
}

/* Problems of a file that were silent: a repeated id replaced the earlier
 * line, a server decision's id was taken over by a line, an undo of no
 * decision did nothing, an impossible date moved to the next month. */
static void file_problems_are_said(void **state) {
  (void)state;
  static const char server[] =
      "{\"results\":[{\"series\":[{\"columns\":[\"time\",\"id\",\"action\",\"run\","
      "\"reason\"],\"values\":["
      "[1764547300000000000,\"t1\",\"exclude\",\"r5\",\"newer\"],"
      "[1764547200000000000,\"t1\",\"exclude\",\"r6\",\"older\"]]}]}]}";
  static const char text[] = "ack id=a1 run=r1 reason=first\n"
                             "ack id=a1 run=r2 reason=copied\n"
                             "exclude id=t1 run=r9 reason=\"the server's id\"\n"
                             "undo revokes=nosuch reason=typo\n"
                             "undo revokes=t1 reason=ok\n"
                             "ack run=r3 reason=x when=2026-02-31\n"
                             "ack run=r3 reason=x when=2026-02-29T10:00:00Z\n"
                             "ack run=r4 reason=x when=2028-02-29\n"
                             "ack run=r4 reason=x when=2026-04-31\n";
  ps_triage_set s;
  ps_triage_set_init(&s);
  assert_int_equal(ps_rb_triage_parse_answer(&s, server, strlen(server)), 1);
  /* of two points with one id the newest holds, and the repeat is told */
  assert_int_equal(s.n, 1);
  assert_string_equal(s.d[0].reason, "newer");
  assert_int_equal(s.repeated, 1);
  assert_string_equal(s.repeated_id, "t1");
  bad_lines b = {0};
  assert_int_equal(ps_triage_parse_text(&s, "decisions.triage", text, strlen(text), on_bad, &b), 5);
  assert_int_equal(b.line[0], 2);
  assert_non_null(strstr(b.why[0], "id=a1 is the id of decisions.triage:1 already"));
  assert_int_equal(b.line[1], 3);
  assert_non_null(strstr(b.why[1], "id=t1 is the id of a decision on the server"));
  assert_int_equal(b.line[2], 6);
  assert_non_null(strstr(b.why[2], "when="));
  assert_int_equal(b.line[3], 7);
  assert_int_equal(b.line[4], 9);
  assert_string_equal(ps_triage_find(&s, "a1")->run, "r1");
  assert_string_equal(ps_triage_find(&s, "t1")->run, "r5");
  assert_non_null(ps_triage_ack_of(&s, "h", "r4", NULL, NULL)); /* 2028 is a leap year */
  /* an undo of an id nobody has: said with its line once all is read */
  memset(&b, 0, sizeof b);
  assert_int_equal(ps_triage_check_file(&s, on_bad, &b), 1);
  assert_int_equal(b.n, 1);
  assert_int_equal(b.line[0], 4);
  assert_non_null(strstr(b.why[0], "revokes= names no decision"));
  ps_triage_set_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(file_lines),     cmocka_unit_test(ack_covers_its_change_only),
      cmocka_unit_test(baseline_start), cmocka_unit_test(server_answer),
      cmocka_unit_test(large_file),     cmocka_unit_test(file_problems_are_said),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
