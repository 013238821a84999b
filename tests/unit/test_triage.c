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
  add(&s, "t2", PS_TRIAGE_UNDO, NULL, NULL, "t1", 2);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(file_lines),
      cmocka_unit_test(ack_covers_its_change_only),
      cmocka_unit_test(baseline_start),
      cmocka_unit_test(server_answer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
