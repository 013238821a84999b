/*
 * shared.c: the one helper every stage shares. See include/pipeline/shared.h.
 */
#include "pipeline/shared.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/util.h"

const char *pl_log_key(const char *kind, const char *path) {
  static char buf[48]; /* one thread; ps_log_limited copies the key */
  snprintf(buf, sizeof buf, "%s:%016" PRIx64, kind,
           ps_hash64(PS_HASH_SEED, path, strlen(path)));
  return buf;
}
