/*
 * point.c: the time conversion every producer of points shares. See
 * include/core/point.h.
 */
#include "core/point.h"

#include <math.h>

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
