/*
 * emit.c: the formatted reject helper of include/formats/emit.h, and the time
 * conversion of include/formats/point.h that every format shares.
 */
#include "formats/emit.h"

#include <math.h>
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

int64_t ps_seconds_to_ns(double seconds) {
  /* Times come from the data: 1e30 or NaN must not reach the conversion to
   * int64_t below, which is undefined for them. INT64_MIN lies outside
   * InfluxDB's range, so the encoder refuses the point with that reason. */
  if (!(seconds > -9.2e9 && seconds < 9.2e9))
    return INT64_MIN;
  /* Split so the microsecond rounding never passes through a double that
   * has to hold 1e15 and a fraction at once. */
  double whole = floor(seconds);
  double frac_us = nearbyint((seconds - whole) * 1e6);
  return (int64_t)whole * 1000000000LL + (int64_t)frac_us * 1000LL;
}
