/*
 * report/html_format.c: numbers, times and durations as a person reads
 * them on the page (html_private.h). Times are UTC; a missing value is a
 * dash, never "nan" or an epoch.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "html_private.h"

void ps_html_fmt_time(page *p, int64_t ns) {
  if (!ns) {
    put(p, "–");
    return;
  }
  time_t t = (time_t)(ns / 1000000000);
  struct tm tm;
  char b[32];
  if (!gmtime_r(&t, &tm) || !strftime(b, sizeof b, "%Y-%m-%d %H:%M", &tm)) {
    put(p, "–");
    return;
  }
  put(p, b);
}

void ps_html_fmt_num(page *p, double v) {
  if (isnan(v)) {
    put(p, "–");
    return;
  }
  double a = fabs(v);
  putf(p, a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : "%.3f", v);
}

void ps_html_fmt_count(page *p, double v) {
  if (isnan(v)) {
    put(p, "–");
    return;
  }
  /* thousands separated by a thin space, readable in any locale */
  char b[32];
  snprintf(b, sizeof b, "%.0f", v);
  size_t n = strlen(b), lead = b[0] == '-';
  for (size_t i = 0; i < n; i++) {
    putn(p, b + i, 1);
    size_t rest = n - i - 1;
    if (rest && rest % 3 == 0 && i >= lead)
      put(p, "\u2009");
  }
}

void ps_html_fmt_duration(page *p, double s) {
  if (isnan(s) || s < 0) {
    put(p, "–");
    return;
  }
  int64_t t = (int64_t)(s + 0.5);
  if (t >= 86400)
    putf(p, "%" PRId64 "d %" PRId64 "h", t / 86400, t % 86400 / 3600);
  else if (t >= 3600)
    putf(p, "%" PRId64 "h %02" PRId64 "m", t / 3600, t % 3600 / 60);
  else if (t >= 60)
    putf(p, "%" PRId64 "m %02" PRId64 "s", t / 60, t % 60);
  else
    putf(p, "%" PRId64 "s", t);
}

void ps_html_fmt_change(page *p, double pct) {
  if (isnan(pct))
    return;
  putf(p, "%s%.1f\u00a0%%", pct > 0 ? "+" : pct < 0 ? "\u2212" : "±", fabs(pct));
}

void ps_html_badge(page *p, ps_rstatus s) {
  putf(p, "<span class=\"st st-%s\">%s</span>", ps_rb_status_name(s), ps_rb_status_name(s));
}
