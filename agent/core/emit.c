/*
 * emit.c: the formatted reject helper and the origin text of
 * include/core/emit.h.
 */
#include "core/emit.h"

#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>

void ps_emit_reject(ps_emitter *em, const char *fmt, ...) {
  char reason[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  if (em->reject)
    em->reject(em->ctx, &em->origin, reason);
}

const char *ps_origin_str(char *buf, size_t n, const char *file, uint64_t line) {
  if (line)
    snprintf(buf, n, "%s:%llu", file ? file : "-", (unsigned long long)line);
  else
    snprintf(buf, n, "%s", file ? file : "-");
  return buf;
}
