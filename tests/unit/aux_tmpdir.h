/*
 * aux_tmpdir.h: fresh directories under /tmp for test programs whose cases
 * read and write files, and their removal with all they hold.
 *
 * - aux_tmpdir_make(buf, size, tag) makes "/tmp/ps-test-<tag>-XXXXXX" and
 *   leaves its name in `buf`; aux_tmpdir_remove(path) removes it and
 *   everything under it (without a shell). Both return 0 or -1. For a
 *   fixture of a test's own (one directory per case).
 * - With AUX_TMPDIR_TAG (a string literal naming the program) defined
 *   before including: `dir` names one directory for the whole program, and
 *   tmpdir_setup/tmpdir_teardown are the cmocka group fixtures that make it
 *   and remove it.
 * Header-only; include after <cmocka.h>.
 */
#ifndef PS_TEST_AUX_TMPDIR_H
#define PS_TEST_AUX_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int aux_tmpdir_make(char *buf, size_t size, const char *tag) {
  int n = snprintf(buf, size, "/tmp/ps-test-%s-XXXXXX", tag);
  if (n < 0 || (size_t)n >= size)
    return -1;
  return mkdtemp(buf) ? 0 : -1;
}

static inline int aux_tmpdir_remove_entry(const char *path, const struct stat *sb, int flag,
                                          struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static inline int aux_tmpdir_remove(const char *path) {
  return nftw(path, aux_tmpdir_remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : -1;
}

#ifdef AUX_TMPDIR_TAG
static char dir[64];

static int tmpdir_setup(void **st) {
  (void)st;
  return aux_tmpdir_make(dir, sizeof dir, AUX_TMPDIR_TAG);
}

static int tmpdir_teardown(void **st) {
  (void)st;
  return aux_tmpdir_remove(dir);
}
#endif

#endif
