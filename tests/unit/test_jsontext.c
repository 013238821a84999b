/*
 * test_jsontext.c: the NUL check every JSON parser runs before cJSON,
 * which would otherwise cut a string at its first NUL without an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/jsontext.h"

#define CHECK(lit, colp) ps_json_nul_check(lit, sizeof(lit) - 1, colp)

static void test_clean_text_passes(void **st) {
  (void)st;
  size_t col = 99;
  assert_null(CHECK("{\"a\": \"b\\u0041\", \"c\": 1}", &col));
  assert_int_equal(col, 99);
  assert_null(CHECK("", NULL));
  /* an escaped backslash followed by the text u0000 is not a NUL */
  assert_null(CHECK("{\"s\": \"a\\\\u0000b\"}", NULL));
  /* \u00001 is two characters short of a NUL only if the four digits are 0 */
  assert_null(CHECK("{\"s\": \"\\u0001\"}", NULL));
  /* a lone backslash at the very end is cJSON's problem, not a NUL */
  assert_null(CHECK("{\"s\": \"\\", NULL));
}

static void test_raw_nul_found_with_its_column(void **st) {
  (void)st;
  size_t col = 0;
  const char *why = CHECK("{\"k\": \"a\0b\"}", &col);
  assert_non_null(why);
  assert_string_equal(why, "NUL byte in the line");
  assert_int_equal(col, 9);
}

static void test_escaped_nul_found(void **st) {
  (void)st;
  size_t col = 0;
  const char *why = CHECK("{\"s\": \"nul\\u0000inside\"}", &col);
  assert_non_null(why);
  assert_int_equal(col, 11);
  /* after an escaped backslash, a real escape still counts */
  assert_non_null(CHECK("{\"s\": \"\\\\\\u0000\"}", NULL));
  /* truncated escape at the end: too short to be \u0000 */
  assert_null(CHECK("{\"s\": \"\\u000", NULL));
}

static void test_hex4_reads_any_case_and_refuses_the_rest(void **st) {
  (void)st;
  unsigned v = 0;
  assert_int_equal(ps_json_hex4("00e9", &v), 0);
  assert_int_equal(v, 0xE9);
  assert_int_equal(ps_json_hex4("D83D", &v), 0);
  assert_int_equal(v, 0xD83D);
  assert_int_equal(ps_json_hex4("aBcF", &v), 0);
  assert_int_equal(v, 0xABCF);
  assert_int_equal(ps_json_hex4("12g4", &v), -1);
  assert_int_equal(ps_json_hex4("12 4", &v), -1);
}

/* Each width of UTF-8, at both ends of its range. */
static void test_utf8_put_writes_each_width(void **st) {
  (void)st;
  struct {
    unsigned cp;
    const char *utf8;
  } cases[] = {
      {0x41, "A"},
      {0x7F, "\x7f"},
      {0x80, "\xc2\x80"},
      {0xE9, "\xc3\xa9"},
      {0x7FF, "\xdf\xbf"},
      {0x800, "\xe0\xa0\x80"},
      {0x20AC, "\xe2\x82\xac"},
      {0xFFFF, "\xef\xbf\xbf"},
      {0x10000, "\xf0\x90\x80\x80"},
      {0x1F600, "\xf0\x9f\x98\x80"},
      {0x10FFFF, "\xf4\x8f\xbf\xbf"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char buf[8] = {0};
    char *end = ps_utf8_put(buf, cases[i].cp);
    assert_int_equal((size_t)(end - buf), strlen(cases[i].utf8));
    assert_memory_equal(buf, cases[i].utf8, strlen(cases[i].utf8));
  }
}

/* One escape at a time, as both JSON readers take them: the character,
 * where the escape ends, or why it is refused. */
static void test_escape_reads_one_escape_or_says_why(void **st) {
  (void)st;
  static const struct {
    const char *text;
    unsigned cp;
    size_t used;
  } good[] = {
      {"\\\"", '"', 2},     {"\\\\", '\\', 2},        {"\\/", '/', 2},
      {"\\b", '\b', 2},     {"\\f", '\f', 2},         {"\\n", '\n', 2},
      {"\\r", '\r', 2},     {"\\tx", '\t', 2},        {"\\u00e9", 0xE9, 6},
      {"\\u0000", 0, 6},    {"\\uD83D\\uDE00", 0x1F600, 12},
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    unsigned cp = 1234;
    const char *why = NULL, *t = good[i].text;
    const char *next = ps_json_escape(t, t + strlen(t), &cp, &why);
    assert_ptr_equal(next, t + good[i].used);
    assert_int_equal(cp, good[i].cp);
    assert_null(why);
  }
  static const struct {
    const char *text, *why;
  } bad[] = {
      {"\\", "unterminated string"},
      {"\\x", "bad escape in string"},
      {"\\u12g4", "bad \\u escape"},
      {"\\u12", "bad \\u escape"},
      {"\\uDE00", "lone low surrogate in \\u escape"},
      {"\\uD83D", "high surrogate without its low half"},
      {"\\uD83D\\u0041", "high surrogate without its low half"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    unsigned cp;
    const char *why = NULL, *t = bad[i].text;
    assert_null(ps_json_escape(t, t + strlen(t), &cp, &why));
    assert_string_equal(why, bad[i].why);
    assert_null(ps_json_escape(t, t + strlen(t), &cp, NULL)); /* the reason is optional */
  }
}

/* The grammar both in-place readers (jsonspan and the streaming tokenizer)
 * take a number by: the longest prefix, or none. */
static void test_number_end_takes_the_longest_json_number(void **st) {
  (void)st;
  static const struct {
    const char *text;
    int used; /* -1: no number begins here */
  } cases[] = {
      {"0", 1},   {"-0", 2},    {"7", 1},   {"123", 3},       {"1.5", 3},  {"-12.25e+3", 9},
      {"1E9", 3}, {"2e-07", 5}, {"01", 1},  {"0.5.1", 3},     {"1,", 1},   {"12}", 2},
      {"1.", -1}, {"1.e3", -1}, {".5", -1}, {"-", -1},        {"-a", -1},  {"+1", -1},
      {"1e", -1}, {"1e+", -1},  {"", -1},   {"Infinity", -1}, {"NaN", -1}, {"-.1", -1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *t = cases[i].text;
    const char *e = ps_json_number_end(t, t + strlen(t));
    if (cases[i].used < 0)
      assert_null(e);
    else
      assert_ptr_equal(e, t + cases[i].used);
  }
  /* the end bounds the number: "12" seen as its first byte only */
  const char *twelve = "12";
  assert_ptr_equal(ps_json_number_end(twelve, twelve + 1), twelve + 1);
}

/* cJSON copies a string's bytes as they are: a reason with a Latin-1
 * byte made `triage list --json` output no JSON reader accepts. */
static void test_utf8_repair_replaces_what_begins_no_character(void **st) {
  (void)st;
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"plain \xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80", "plain \xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80"},
      {"caf\xe9!", "caf\xef\xbf\xbd!"},                           /* Latin-1 */
      {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},                   /* overlong '/' */
      {"\xed\xa0\x80x", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx"}, /* a surrogate */
      {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
      {"end \xe2\x82", "end \xef\xbf\xbd\xef\xbf\xbd"}, /* cut short */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ps_buf out;
    ps_buf_init(&out, 0);
    assert_int_equal(ps_utf8_repair(&out, cases[i].in, strlen(cases[i].in)), 0);
    assert_string_equal(out.data, cases[i].out);
    ps_buf_free(&out);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_clean_text_passes),
      cmocka_unit_test(test_utf8_repair_replaces_what_begins_no_character),
      cmocka_unit_test(test_raw_nul_found_with_its_column),
      cmocka_unit_test(test_escaped_nul_found),
      cmocka_unit_test(test_hex4_reads_any_case_and_refuses_the_rest),
      cmocka_unit_test(test_utf8_put_writes_each_width),
      cmocka_unit_test(test_escape_reads_one_escape_or_says_why),
      cmocka_unit_test(test_number_end_takes_the_longest_json_number),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
