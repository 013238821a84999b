/*
 * fuzz_state: the state file loader on arbitrary bytes.
 *
 * A state file can be damaged by a disk, a person or a tool; loading it must
 * never crash or leak. Whatever loads must save and load back to the same
 * entries (the writer and the reader agree).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "state/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "/tmp/fuzz-state-XXXXXX");
    if (!mkdtemp(dir))
      abort();
  }
  char path[128];
  snprintf(path, sizeof path, "%s/state.json", dir);
  fuzz_write_file(path, data, size);
  ps_state s;
  ps_buf warn;
  ps_buf_init(&warn, 0);
  if (ps_state_load(&s, dir, &warn) != 0)
    abort();
  /* A corrupt file is empty; a section of the wrong type only warns. Which
   * warning it is: the words right after the path (a section's name, from
   * the data, may say anything further on). */
  static const char corrupt[] = ": the state file is corrupt";
  size_t plen = strlen(path);
  if (warn.len && s.nfiles && warn.len > plen && strncmp(warn.data, path, plen) == 0 &&
      strncmp(warn.data + plen, corrupt, sizeof corrupt - 1) == 0)
    abort();
  if (ps_state_save(&s, dir) != 0)
    abort();
  ps_state t;
  ps_buf_reset(&warn);
  if (ps_state_load(&t, dir, &warn) != 0 || warn.len || t.nfiles != s.nfiles ||
      t.nerrors != s.nerrors)
    abort();
  for (size_t i = 0; i < s.nfiles; i++) {
    const ps_state_file *a = &s.files[i], *b = &t.files[i];
    if (strcmp(a->path, b->path) || a->offset != b->offset || a->line != b->line ||
        a->id.dev != b->id.dev || a->id.ino != b->id.ino ||
        a->id.fp_len != b->id.fp_len || a->id.fp_hash != b->id.fp_hash ||
        a->has_doc != b->has_doc || (a->has_doc && a->doc_hash != b->doc_hash))
      abort();
  }
  ps_state_free(&s);
  ps_state_free(&t);
  ps_buf_free(&warn);
  return 0;
}
