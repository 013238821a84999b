/*
 * fuzz_common.h: the pieces every fuzz target's harness shares.
 *
 * Contract
 * - fuzz_refusing_emitter(): an emitter whose point callback refuses every
 *   `period`-th offered point with -EAGAIN (0: never), so the parsers'
 *   resume paths are fuzzed too, and aborts on a point that breaks the
 *   parser contract (no fields, or a string not readable to its end); its
 *   reject callback aborts on a reject without a reason.
 * - fuzz_write_file(): puts the input into a file for loaders that read
 *   paths; aborts when it cannot (a harness fault, not a finding).
 * - fuzz_temp_file(): one private temporary file per process, made on first
 *   use from a "/tmp/...-XXXXXX" template.
 * Header-only: each target is its own program.
 */
#ifndef PS_FUZZ_COMMON_H
#define PS_FUZZ_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/emit.h"

typedef struct fuzz_refusal {
  unsigned long period; /* refuse every period-th point; 0: never */
  unsigned long offered;
} fuzz_refusal;

static inline int fuzz_on_point(void *ctx, const ps_point *p,
                                const ps_origin *o) {
  (void)o;
  fuzz_refusal *r = ctx;
  if (r->period && ++r->offered % r->period == 0)
    return -EAGAIN;
  /* every string a parser hands over must be readable to its end */
  size_t sum = strlen(p->measurement);
  for (size_t i = 0; i < p->ntags; i++)
    sum += strlen(p->tags[i].key) + strlen(p->tags[i].value);
  for (size_t i = 0; i < p->nfields; i++) {
    sum += strlen(p->fields[i].key);
    if (p->fields[i].type == PS_F_STRING && p->fields[i].v.s.n)
      sum += (unsigned char)p->fields[i].v.s.p[p->fields[i].v.s.n - 1];
  }
  if (p->nfields == 0 || sum == 0)
    abort();
  return 0;
}

static inline void fuzz_on_reject(void *ctx, const ps_origin *o,
                                  const char *reason) {
  (void)ctx;
  (void)o;
  if (!reason || !reason[0])
    abort();
}

static inline ps_emitter fuzz_refusing_emitter(fuzz_refusal *r) {
  ps_emitter em = {fuzz_on_point, fuzz_on_reject, r, {"fuzz", 0}};
  return em;
}

static inline void fuzz_write_file(const char *path, const uint8_t *data,
                                   size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f)
    abort();
  if (size && fwrite(data, 1, size, f) != size)
    abort();
  fclose(f);
}

/* `path` starts empty; the first call makes the file from `tmpl` and leaves
 * its name there, later calls keep it. */
static inline void fuzz_temp_file(char *path, size_t n, const char *tmpl) {
  if (path[0])
    return;
  snprintf(path, n, "%s", tmpl);
  int fd = mkstemp(path);
  if (fd < 0)
    abort();
  close(fd);
}

#endif
