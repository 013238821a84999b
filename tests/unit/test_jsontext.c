/*
 * test_jsontext.c: the NUL check every JSON parser runs before cJSON,
 * which would otherwise cut a string at its first NUL without an error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_clean_text_passes),
      cmocka_unit_test(test_raw_nul_found_with_its_column),
      cmocka_unit_test(test_escaped_nul_found),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
