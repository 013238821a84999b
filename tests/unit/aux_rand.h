/*
 * aux_rand.h: the unit tests' one pseudo-random source (xorshift64), seeded
 * the same in every test program, so a randomized case fails the same way
 * each run and on every machine. Header-only.
 */
#ifndef PS_TEST_AUX_RAND_H
#define PS_TEST_AUX_RAND_H

#include <stdint.h>

static uint64_t test_rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t next_rand(void) {
  test_rng_state ^= test_rng_state << 13;
  test_rng_state ^= test_rng_state >> 7;
  test_rng_state ^= test_rng_state << 17;
  return test_rng_state;
}

#endif
