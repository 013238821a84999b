/*
 * test_jsonspan.c: the lookups a reader of checked JSON makes: a member by
 * name with and without the index of a long record's containers, and the
 * member table of an object looked up many times (what loadgen's
 * perf-finish reader relies on).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/jsonspan.h"

static ps_jv check(const char *text) {
  ps_jv v;
  assert_int_equal(ps_json_check(text, strlen(text), 64, &v), 0);
  return v;
}

/* The text of a value, for comparing what was found. */
static void assert_span(ps_jv v, const char *want) {
  assert_non_null(v.p);
  assert_int_equal((size_t)(v.end - v.p), strlen(want));
  assert_memory_equal(v.p, want, strlen(want));
}

static const char RECORD[] =
    "{\"type\":\"perf-finish\",\"stats\":{\"stages\":{\"0\":{\"blocks\":{\"1\":{\"a\":1},"
    "\"2\":{\"a\":2}}}},\"duration\":12.5},\"type\":\"again\",\"t\\u0069me\":7}";

static void test_indexed_lookup_finds_what_the_walk_finds(void **st) {
  (void)st;
  uint32_t open[16], close[16];
  ps_jindex ix = {.open = open, .close = close, .cap = 16, .depth = 6};
  ps_jv root;
  assert_int_equal(ps_json_check_indexed(RECORD, strlen(RECORD), 64, &ix, &root), 0);
  assert_true(ix.n > 0);
  const char *keys[] = {"type", "stats", "time"};
  for (size_t i = 0; i < 3; i++) {
    ps_jv walked, indexed;
    assert_int_equal(ps_jv_get(root, keys[i], &walked), 1);
    assert_int_equal(ps_jv_get_ix(root, keys[i], &ix, &indexed), 1);
    assert_ptr_equal(walked.p, indexed.p);
    assert_ptr_equal(walked.end, indexed.end);
  }
  ps_jv v;
  assert_int_equal(ps_jv_get_ix(root, "type", &ix, &v), 1);
  assert_span(v, "\"perf-finish\""); /* the first of two */
  assert_int_equal(ps_jv_get_ix(root, "time", &ix, &v), 1);
  assert_span(v, "7"); /* an escaped key, unescaped for the comparison */
  assert_int_equal(ps_jv_get_ix(root, "missing", &ix, &v), 0);
  assert_null(v.p);
  ps_jv stats;
  ps_jv_get_ix(root, "stats", &ix, &stats);
  assert_int_equal(ps_jv_get_ix(stats, "duration", &ix, &v), 1);
  assert_span(v, "12.5"); /* found after skipping the indexed stages */
}

/* Two keys spelling the same name, the first escaped long (363 bytes for
 * 63): the first is the one found, by the walk, the index and the table,
 * as cJSON finds it (found by tests/fuzz/fuzz_jsonspan.c). A key escaped
 * to a longer name, or a shorter one, is not that name. */
static void test_long_escaped_key_is_the_first_of_its_name(void **st) {
  (void)st;
  char text[1024], name[128];
  size_t n = 0, k = 0;
  n += (size_t)snprintf(text + n, sizeof text - n, "{\"");
  for (int i = 0; i < 60; i++) {
    n += (size_t)snprintf(text + n, sizeof text - n, "\\u005c");
    name[k++] = '\\';
  }
  memcpy(name + k, "age", 4);
  n += (size_t)snprintf(text + n, sizeof text - n, "age\":-1,\"apstamp\":71.81,\"");
  for (int i = 0; i < 60; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "\\\\");
  snprintf(text + n, sizeof text - n, "age\":2}");
  ps_jv root = check(text), v;
  assert_int_equal(ps_jv_get(root, name, &v), 1);
  assert_span(v, "-1");
  uint32_t open[4], close[4];
  ps_jindex ix = {.open = open, .close = close, .cap = 4, .depth = 2};
  assert_int_equal(ps_json_check_indexed(text, strlen(text), 64, &ix, &root), 0);
  assert_int_equal(ps_jv_get_ix(root, name, &ix, &v), 1);
  assert_span(v, "-1");
  ps_jtable tab = {0};
  assert_int_equal(ps_jtable_fill(&tab, root, NULL), 0);
  assert_span(ps_jtable_get(&tab, name), "-1");
  ps_jtable_free(&tab);
  name[k + 2] = '\0'; /* "ag": a prefix of what both spell */
  assert_int_equal(ps_jv_get(root, name, &v), 0);
  memcpy(name + k, "ages", 5); /* longer than what both spell */
  assert_int_equal(ps_jv_get(root, name, &v), 0);
}

/* A key whose escaped text is as long as a name and has its bytes is not
 * that name: 32 escaped backslashes and "age" are the bytes of the name
 * 64 escaped backslashes and "age" spell, but spell 16 and "age". Each
 * name finds its own member, as cJSON finds them (the fuzz target's trap). */
static void test_escaped_key_with_the_bytes_of_a_name_is_not_it(void **st) {
  (void)st;
  char text[512], shorter[64], longer[64];
  size_t n = 0;
  memset(shorter, '\\', 16);
  memcpy(shorter + 16, "age", 4);
  memset(longer, '\\', 32);
  memcpy(longer + 32, "age", 4);
  n += (size_t)snprintf(text + n, sizeof text - n, "{\"");
  for (int i = 0; i < 16; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "\\\\");
  n += (size_t)snprintf(text + n, sizeof text - n, "age\":-1,\"apstamp\":71.81,\"");
  for (int i = 0; i < 32; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "\\\\");
  snprintf(text + n, sizeof text - n, "age\":2}");
  ps_jv root = check(text), v;
  assert_int_equal(ps_jv_get(root, longer, &v), 1);
  assert_span(v, "2");
  assert_int_equal(ps_jv_get(root, shorter, &v), 1);
  assert_span(v, "-1");
  ps_jtable tab = {0};
  assert_int_equal(ps_jtable_fill(&tab, root, NULL), 0);
  assert_span(ps_jtable_get(&tab, longer), "2");
  ps_jtable_free(&tab);
}

static void test_lookup_in_a_scalar_finds_nothing(void **st) {
  (void)st;
  ps_jv v = {(const char *)1, (const char *)1};
  assert_int_equal(ps_jv_get_ix(check("[1,2]"), "a", NULL, &v), 0);
  assert_null(v.p);
  assert_int_equal(ps_jv_get_ix(check("\"a\""), "a", NULL, &v), 0);
}

static void test_member_table_holds_members_in_order(void **st) {
  (void)st;
  ps_jtable t = {0};
  ps_jv root = check(RECORD);
  assert_int_equal(ps_jtable_fill(&t, root, NULL), 0);
  assert_int_equal(t.n, 4); /* duplicates included */
  assert_span(ps_jtable_get(&t, "type"), "\"perf-finish\"");
  assert_span(ps_jtable_get(&t, "time"), "7");
  assert_null(ps_jtable_get(&t, "blocks").p); /* members, not descendants */
  assert_span(t.m[2].val, "\"again\"");

  /* refilled: emptied first; an array's elements have no key */
  assert_int_equal(ps_jtable_fill(&t, check("[1,{\"a\":2}]"), NULL), 0);
  assert_int_equal(t.n, 2);
  assert_null(t.m[0].key.p);
  assert_null(ps_jtable_get(&t, "a").p);
  /* a scalar or no value has no members */
  assert_int_equal(ps_jtable_fill(&t, check("3"), NULL), 0);
  assert_int_equal(t.n, 0);
  ps_jv none = {NULL, NULL};
  assert_int_equal(ps_jtable_fill(&t, none, NULL), 0);
  assert_int_equal(t.n, 0);
  ps_jtable_free(&t);
  assert_null(t.m);
  assert_int_equal(t.cap, 0);
  ps_jtable_free(NULL);
}

static void test_member_table_grows_past_its_first_size(void **st) {
  (void)st;
  char text[2048];
  size_t n = 0;
  text[n++] = '{';
  for (int i = 0; i < 100; i++)
    n += (size_t)snprintf(text + n, sizeof text - n, "%s\"k%d\":%d", i ? "," : "", i, i);
  text[n++] = '}';
  text[n] = '\0';
  ps_jtable t = {0};
  assert_int_equal(ps_jtable_fill(&t, check(text), NULL), 0);
  assert_int_equal(t.n, 100);
  assert_span(ps_jtable_get(&t, "k0"), "0");
  assert_span(ps_jtable_get(&t, "k99"), "99");
  ps_jtable_free(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_indexed_lookup_finds_what_the_walk_finds),
      cmocka_unit_test(test_long_escaped_key_is_the_first_of_its_name),
      cmocka_unit_test(test_escaped_key_with_the_bytes_of_a_name_is_not_it),
      cmocka_unit_test(test_lookup_in_a_scalar_finds_nothing),
      cmocka_unit_test(test_member_table_holds_members_in_order),
      cmocka_unit_test(test_member_table_grows_past_its_first_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
