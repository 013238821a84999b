/*
 * aux_defaults.h: the default configuration as a cmocka fixture, for the
 * unit tests of the judges, which read their settings from it: `cfg` is
 * ps_config_defaults() before every test (defaults_setup) and freed after
 * it (defaults_teardown). Header-only; include after <cmocka.h>.
 */
#ifndef PS_TEST_AUX_DEFAULTS_H
#define PS_TEST_AUX_DEFAULTS_H

#include "core/config.h"

static ps_config cfg;

static int defaults_setup(void **state) {
  (void)state;
  ps_config_defaults(&cfg);
  return 0;
}

static int defaults_teardown(void **state) {
  (void)state;
  ps_config_free(&cfg);
  return 0;
}

#endif
