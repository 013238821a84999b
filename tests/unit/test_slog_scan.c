/*
 * test_slog_scan: what the slog line scanner reads of a line, and what it
 * leaves alone (docs/schema.md "Slog figures").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/slog_scan.h"

static int scan(const char *line, ps_slog_rec *r, const char **why) {
  return ps_slog_scan(line, strlen(line), NULL, 0, 0, 1, r, why);
}

static void era_from_the_first_key_not_the_date(void **st) {
  (void)st;
  ps_slog_rec r;
  const char *why;
  /* a time-first line with a 2030 date is still the early writer's shape */
  assert_int_equal(scan("{\"time\":1900000000.5,\"type\":\"cosmic-swingset-begin-block\","
                        "\"blockHeight\":7,\"blockTime\":1900000000}", &r, &why), 1);
  assert_int_equal(r.era, PS_SLOG_ERA_TIME_FIRST);
  assert_int_equal(r.type, PS_SLOG_BEGIN_BLOCK);
  assert_int_equal(r.height, 7);
  assert_true(r.time == 1900000000.5);
  /* and a type-first one with a 2021 date the later writer's */
  assert_int_equal(scan("{\"type\":\"cosmic-swingset-begin-block\",\"blockHeight\":8,"
                        "\"time\":1620000000.25,\"monotime\":3.5}", &r, &why), 1);
  assert_int_equal(r.era, PS_SLOG_ERA_TYPE_FIRST);
  assert_true(r.time == 1620000000.25);
}

static void unused_types_are_not_read(void **st) {
  (void)st;
  ps_slog_rec r;
  const char *why;
  /* whatever follows the type of a line perfship does not use */
  assert_int_equal(scan("{\"type\":\"syscall-result\",\"ksr\":[[[[broken", &r, &why), 0);
  assert_int_equal(scan("{\"type\":\"console\",\"args\":\"}}}}\"", &r, &why), 0);
  /* a syscall is read up to `replay`: its arguments may be anything */
  assert_int_equal(scan("{\"type\":\"syscall\",\"crankNum\":5,\"vatID\":\"v9\",\"deliveryNum\":3,"
                        "\"syscallNum\":0,\"replay\":false,\"ksc\":[\"send\",{\"unclosed", &r, &why),
                   1);
  assert_int_equal(r.type, PS_SLOG_SYSCALL);
  assert_string_equal(r.vat, "v9");
  assert_int_equal(r.replay, 0);
}

static void delivery_members(void **st) {
  (void)st;
  ps_slog_rec r;
  const char *why;
  assert_int_equal(scan("{\"type\":\"deliver\",\"crankNum\":1,\"vatID\":\"v2\",\"deliveryNum\":4,"
                        "\"replay\":false,\"kd\":[\"bringOutYourDead\"],\"vd\":[\"bringOutYourDead\"],"
                        "\"time\":10.5,\"monotime\":1}", &r, &why), 1);
  assert_true(r.boyd);
  assert_true(r.time == 10.5);
  assert_int_equal(scan("{\"type\":\"deliver-result\",\"crankNum\":1,\"vatID\":\"v2\",\"replay\":false,"
                        "\"dr\":[\"ok\",null,{\"meterType\":\"xs-meter-37\",\"compute\":1234,"
                        "\"timestamps\":[1,2]}],\"time\":11,\"monotime\":2,\"seconds\":0.25}",
                        &r, &why), 1);
  assert_true(r.has & PS_SR_COMPUTE);
  assert_true(r.compute == 1234);
  assert_true(r.seconds == 0.25);
  /* a nested "seconds" or "time" is not the envelope's */
  assert_int_equal(scan("{\"time\":5,\"type\":\"deliver-result\",\"vatID\":\"v2\",\"replay\":false,"
                        "\"dr\":[\"ok\",{\"seconds\":9,\"time\":9},null]}", &r, &why), 1);
  assert_false(r.has & PS_SR_SECONDS);
  assert_true(r.time == 5);
}

static void hostile_values_are_rejected(void **st) {
  (void)st;
  ps_slog_rec r;
  const char *why = NULL;
  assert_int_equal(scan("not json", &r, &why), -1);
  assert_non_null(why);
  assert_int_equal(scan("{\"vatID\":\"v1\",\"type\":\"syscall\"}", &r, &why), -1);
  assert_int_equal(scan("{\"type\":\"clist\",\"mode\":\"export\",\"vatID\":\"v1 x=1\"}", &r, &why), -1);
  assert_string_equal(why, "vatID is not a vat ID");
  assert_int_equal(scan("{\"type\":\"cosmic-swingset-begin-block\",\"blockHeight\":1.5}", &r, &why),
                   -1);
}

static void long_line_from_head_and_tail(void **st) {
  (void)st;
  ps_slog_rec r;
  const char *why;
  const char *head = "{\"type\":\"create-vat\",\"vatID\":\"v16\",\"dynamic\":true,"
                     "\"name\":\"zcf-amm\",\"vatSourceBundle\":{\"endoZipBase64\":\"UEsDB";
  const char *tail = "AAAA\"},\"time\":1700000000.125,\"monotime\":9.5}";
  assert_int_equal(ps_slog_scan(head, strlen(head), tail, strlen(tail), 1, 1, &r, &why), 1);
  assert_string_equal(r.vat, "v16");
  assert_string_equal(r.name, "zcf-amm");
  assert_true(r.time == 1700000000.125);
}

/* A deliver line whose kd and vd bodies are `body` bytes each, as
 * gzlines hands it over: its first `window` bytes and its last 512. */
static char *long_deliver(int time_first, size_t body, size_t *len) {
  const char *pre = time_first ? "{\"time\":1647216520.723883,\"type\":\"deliver\","
                               : "{\"type\":\"deliver\",";
  const char *mid = "\"crankNum\":2153,\"vatID\":\"v13\",\"deliveryNum\":78,"
                    "\"replay\":false,\"kd\":[\"message\",\"ko820\",{\"methargs\":{\"body\":\"";
  const char *vd = "\",\"slots\":[]},\"result\":\"kp1763\"}],\"vd\":[\"message\",\"o+127\","
                   "{\"methargs\":{\"body\":\"";
  const char *end = time_first ? "\",\"slots\":[]},\"result\":\"p-66\"}]}"
                               : "\",\"slots\":[]},\"result\":\"p-66\"}],"
                                 "\"time\":1700000000.125,\"monotime\":9.5}";
  size_t n = strlen(pre) + strlen(mid) + body + strlen(vd) + body + strlen(end);
  char *s = malloc(n + 1), *p = s;
  assert_non_null(s);
  p = stpcpy(p, pre);
  p = stpcpy(p, mid);
  memset(p, 'x', body);
  p = stpcpy(p + body, vd);
  memset(p, 'y', body);
  p = stpcpy(p + body, end);
  *len = n;
  return s;
}

static int scan_cut(const char *s, size_t n, size_t window, ps_slog_rec *r, const char **why) {
  if (n <= window)
    return ps_slog_scan(s, n, NULL, 0, 0, 1, r, why);
  return ps_slog_scan(s, window, s + n - 512, 512, 1, 1, r, why);
}

/* docs/loadgen.md "Slogs": a line longer than the kept head is read from
 * its head; a member cut by the head is where reading stops, not broken
 * JSON (a 66 kB deliver was rejected and its time lost). */
static void long_delivery_read_from_its_head(void **st) {
  (void)st;
  static const size_t bodies[] = {33000, 40000, 3 << 20};
  for (int tf = 0; tf < 2; tf++)
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
      size_t n;
      char *line = long_deliver(tf, bodies[i], &n);
      ps_slog_rec r;
      const char *why = "unset";
      assert_true(n > 65536);
      assert_int_equal(scan_cut(line, n, 65536, &r, &why), 1);
      assert_null(why);
      assert_int_equal(r.type, PS_SLOG_DELIVER);
      assert_string_equal(r.vat, "v13");
      assert_true((r.has & PS_SR_REPLAY) && !r.replay);
      assert_true(r.has & PS_SR_KIND);
      assert_false(r.boyd);
      assert_true(r.has & PS_SR_TIME);
      assert_true(r.time == (tf ? 1647216520.723883 : 1700000000.125));
      /* the same line whole reads the same */
      ps_slog_rec whole;
      assert_int_equal(ps_slog_scan(line, n, NULL, 0, 0, 1, &whole, &why), 1);
      assert_string_equal(whole.vat, r.vat);
      assert_true(whole.time == r.time);
      free(line);
    }
}

/* Cut anywhere after its type, a line is read as far as the cut: never
 * rejected, and a value the cut went through is missing, not shortened
 * (a vatID "v1" of "v13", a height 12 of 1234). */
static void a_cut_anywhere_is_no_fault(void **st) {
  (void)st;
  const char *lines[] = {
      "{\"type\":\"deliver\",\"crankNum\":2153,\"vatID\":\"v13\",\"deliveryNum\":78,"
      "\"replay\":false,\"kd\":[\"bringOutYourDead\",{\"a\":[1,2,{\"b\":\"}]\\\"\"}]}],"
      "\"vd\":[\"bringOutYourDead\"],\"time\":5.5,\"monotime\":1}",
      "{\"type\":\"cosmic-swingset-begin-block\",\"blockHeight\":1234,\"time\":7,\"monotime\":1}",
      "{\"type\":\"deliver-result\",\"crankNum\":1,\"vatID\":\"v13\",\"deliveryNum\":3,"
      "\"replay\":false,\"dr\":[\"ok\",null,{\"meterType\":\"m\",\"compute\":117158}],"
      "\"time\":9,\"monotime\":1}",
      "{\"type\":\"create-vat\",\"vatID\":\"v16\",\"dynamic\":true,\"name\":\"zcf-amm\","
      "\"vatSourceBundle\":{\"endoZipBase64\":\"UEsDB\"},\"time\":3,\"monotime\":1}",
      "{\"time\":3.25,\"type\":\"kernel-stats\",\"stats\":{\"kernelObjects\":1200,"
      "\"kpUnresolved\":30,\"vats\":7}}",
  };
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
    size_t n = strlen(lines[i]);
    ps_slog_rec whole, r;
    const char *why;
    assert_int_equal(ps_slog_scan(lines[i], n, NULL, 0, 0, 1, &whole, &why), 1);
    size_t from = (size_t)(strchr(strchr(lines[i], ':') + 2, '"') - lines[i]) + 1;
    if (lines[i][2] == 't' && lines[i][3] == 'i') /* time first: past the type */
      from = (size_t)(strstr(lines[i], "\",\"") - lines[i]) + 2;
    for (size_t k = from; k < n; k++) {
      why = NULL;
      int rc = ps_slog_scan(lines[i], k, NULL, 0, 1, 1, &r, &why);
      if (rc != 1)
        fail_msg("line %zu cut at %zu: %d (%s)", i, k, rc, why ? why : "");
      assert_int_equal(r.type, whole.type);
      if (r.has & PS_SR_VAT)
        assert_string_equal(r.vat, whole.vat);
      if (r.has & PS_SR_HEIGHT)
        assert_int_equal(r.height, whole.height);
      if (r.has & PS_SR_COMPUTE)
        assert_true(r.compute == whole.compute);
      if (r.has & PS_SR_NAME)
        assert_string_equal(r.name, whole.name);
      for (int c = 0; c < PS_SLOG_NCOUNTERS; c++)
        if (r.counters_has & (1u << c))
          assert_true(r.counters[c] == whole.counters[c]);
    }
  }
}

/* A cut line is still checked as far as it goes: what is wrong before the
 * cut is as wrong as in a whole line. */
static void a_cut_line_is_still_checked(void **st) {
  (void)st;
  ps_slog_rec r;
  const char *why;
  const char *bad_vat = "{\"type\":\"deliver\",\"vatID\":\"v1 x=1\",\"kd\":[\"message\",\"xxxx";
  assert_int_equal(ps_slog_scan(bad_vat, strlen(bad_vat), NULL, 0, 1, 1, &r, &why), -1);
  assert_string_equal(why, "vatID is not a vat ID");
  const char *bad_nest =
      "{\"type\":\"deliver\",\"vatID\":\"v1\",\"x\":[1,2},\"kd\":[\"message\",\"xx";
  assert_int_equal(ps_slog_scan(bad_nest, strlen(bad_nest), NULL, 0, 1, 1, &r, &why), -1);
  assert_string_equal(why, "broken JSON");
  const char *bad_height =
      "{\"type\":\"cosmic-swingset-begin-block\",\"blockHeight\":\"12\",\"x\":\"";
  assert_int_equal(ps_slog_scan(bad_height, strlen(bad_height), NULL, 0, 1, 1, &r, &why), -1);
}

static void kernel_counters(void **st) {
  (void)st;
  ps_slog_rec r;
  const char *why;
  assert_int_equal(scan("{\"type\":\"kernel-stats\",\"stats\":{\"kernelObjects\":12,"
                        "\"kernelObjectsUp\":40,\"kpUnresolved\":3,\"clistEntries\":30,\"vats\":7},"
                        "\"time\":1,\"monotime\":1}", &r, &why), 1);
  assert_true(r.counters_has & (1u << PS_SLOG_KERNEL_OBJECTS));
  assert_true(r.counters[PS_SLOG_KERNEL_OBJECTS] == 12);
  assert_true(r.counters[PS_SLOG_CLIST_ENTRIES] == 30);
  assert_false(r.counters_has & (1u << PS_SLOG_KERNEL_PROMISES));
}

/* Numbers read without strtod (plain decimals) and with it (exponents,
 * signs, more than 2^53) come out as strtod reads them, bit for bit. */
static void times_read_as_strtod_reads_them(void **st) {
  (void)st;
  static const char *const texts[] = {"1647302906.991563",
                                      "1647302912.04963",
                                      "0.1",
                                      "-0",
                                      "-0.5",
                                      "5.",
                                      ".25",
                                      "007",
                                      "9007199254740993",
                                      "9007199254740992",
                                      "123456789012345678901",
                                      "1.0000000000000000000001",
                                      "1e3",
                                      "2.5E-3",
                                      "+7",
                                      "0.30000000000000004",
                                      "1700000000.1234567",
                                      "4503599627370497.5"};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    char line[200];
    snprintf(line, sizeof line,
             "{\"type\":\"cosmic-swingset-begin-block\",\"blockHeight\":1,"
             "\"blockTime\":2,\"time\":%s,\"monotime\":1}",
             texts[i]);
    ps_slog_rec r;
    const char *why = NULL;
    assert_int_equal(scan(line, &r, &why), 1);
    double want = strtod(texts[i], NULL);
    assert_true(r.has & PS_SR_TIME);
    assert_memory_equal(&r.time, &want, sizeof want);
  }
  /* not numbers: no time read, whichever path looked (the line itself
   * stays, as a line with no time); the flag, not the value, tells: "."
   * read as 0 would leave the time 0 as well */
  static const char *const bad[] = {".", "-", "1.2.3", "--5", "1-2"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char line[200];
    snprintf(line, sizeof line,
             "{\"type\":\"cosmic-swingset-begin-block\",\"blockHeight\":1,"
             "\"blockTime\":2,\"time\":%s,\"monotime\":1}",
             bad[i]);
    ps_slog_rec r;
    memset(&r, 0, sizeof r);
    const char *why = NULL;
    scan(line, &r, &why);
    assert_false(r.has & PS_SR_TIME);
    assert_true(r.time == 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(era_from_the_first_key_not_the_date),
      cmocka_unit_test(times_read_as_strtod_reads_them),
      cmocka_unit_test(unused_types_are_not_read),
      cmocka_unit_test(delivery_members),
      cmocka_unit_test(hostile_values_are_rejected),
      cmocka_unit_test(long_line_from_head_and_tail),
      cmocka_unit_test(kernel_counters),
      cmocka_unit_test(long_delivery_read_from_its_head),
      cmocka_unit_test(a_cut_anywhere_is_no_fault),
      cmocka_unit_test(a_cut_line_is_still_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
