/*
 * aux_tmpdir.h: one fresh directory under /tmp for a test program whose
 * cases read and write files: `dir` names it; tmpdir_setup/tmpdir_teardown
 * are the cmocka group fixtures that make it and remove it with all it
 * holds. Define AUX_TMPDIR_TAG (a string literal naming the program) before
 * including. Header-only; include after <cmocka.h>.
 */
#ifndef PS_TEST_AUX_TMPDIR_H
#define PS_TEST_AUX_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef AUX_TMPDIR_TAG
#error "define AUX_TMPDIR_TAG before including aux_tmpdir.h"
#endif

static char dir[64];

static int tmpdir_setup(void **st) {
  (void)st;
  strcpy(dir, "/tmp/ps-test-" AUX_TMPDIR_TAG "-XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int tmpdir_teardown(void **st) {
  (void)st;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd);
}

#endif
