/*
 * test_sha256.c: SHA-256 against the example vectors of FIPS 180 (the
 * NIST "SHA256.pdf" examples: one block, two blocks, a million 'a') and
 * the padding edges where the length no longer fits the first block; the
 * base64 form against what a browser's CSP check computes for "abc".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/sha256.h"

static void hex_of(const void *data, size_t len, char out[65]) {
  uint8_t d[PS_SHA256_LEN];
  ps_sha256(data, len, d);
  for (int i = 0; i < PS_SHA256_LEN; i++)
    snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void expect(const char *msg, const char *want) {
  char got[65];
  hex_of(msg, strlen(msg), got);
  assert_string_equal(got, want);
}

static void test_fips_one_block(void **state) {
  (void)state;
  expect("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_fips_two_blocks(void **state) {
  (void)state;
  expect("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_fips_million_a(void **state) {
  (void)state;
  size_t n = 1000000;
  char *a = malloc(n);
  assert_non_null(a);
  memset(a, 'a', n);
  char got[65];
  hex_of(a, n, got);
  free(a);
  assert_string_equal(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_empty_and_padding_edges(void **state) {
  (void)state;
  char got[65];
  hex_of(NULL, 0, got);
  assert_string_equal(got, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  /* 55 bytes: the length still fits the block; 56: it takes a second one;
   * 64: the marker starts a block of its own. */
  char buf[64];
  memset(buf, 'a', sizeof buf);
  hex_of(buf, 55, got);
  assert_string_equal(got, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  hex_of(buf, 56, got);
  assert_string_equal(got, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  hex_of(buf, 64, got);
  assert_string_equal(got, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

static void test_base64_form(void **state) {
  (void)state;
  char b64[PS_SHA256_B64_LEN + 1];
  ps_sha256_base64("abc", 3, b64);
  assert_string_equal(b64, "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
  assert_int_equal(strlen(b64), PS_SHA256_B64_LEN);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fips_one_block),
      cmocka_unit_test(test_fips_two_blocks),
      cmocka_unit_test(test_fips_million_a),
      cmocka_unit_test(test_empty_and_padding_edges),
      cmocka_unit_test(test_base64_form),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
