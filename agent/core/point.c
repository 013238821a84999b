/*
 * point.c: the time conversion every producer of points shares, and
 * reading a point back. See include/core/point.h.
 */
#include "core/point.h"

#include <math.h>

#include "core/util.h"

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

const char *ps_point_tag(const ps_point *p, const char *key) {
  for (size_t i = 0; i < p->ntags; i++)
    if (ps_same_str(p->tags[i].key, key))
      return p->tags[i].value;
  return NULL;
}

const ps_field *ps_point_field(const ps_point *p, const char *key) {
  for (size_t i = 0; i < p->nfields; i++)
    if (ps_same_str(p->fields[i].key, key))
      return &p->fields[i];
  return NULL;
}

double ps_point_number(const ps_point *p, const char *key) {
  const ps_field *f = ps_point_field(p, key);
  double v = NAN;
  if (f && f->type == PS_F_FLOAT)
    v = f->v.f;
  else if (f && f->type == PS_F_INT)
    v = (double)f->v.i;
  else if (f && f->type == PS_F_UINT)
    v = (double)f->v.u;
  return isfinite(v) ? v : NAN;
}
