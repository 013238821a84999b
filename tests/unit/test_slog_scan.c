/*
 * test_slog_scan: what the slog line scanner reads of a line, and what it
 * leaves alone (docs/schema.md "Slog figures").
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(era_from_the_first_key_not_the_date),
      cmocka_unit_test(unused_types_are_not_read),
      cmocka_unit_test(delivery_members),
      cmocka_unit_test(hostile_values_are_rejected),
      cmocka_unit_test(long_line_from_head_and_tail),
      cmocka_unit_test(kernel_counters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
