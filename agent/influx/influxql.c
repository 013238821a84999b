/*
 * influx/influxql.c: quoting for InfluxQL (include/influx/influxql.h).
 *
 * DESIGN: the rules are those of the scanner of InfluxDB 1.x (influxql's
 * ScanString, which reads both quoted identifiers and string literals): it
 * knows exactly four escapes (\n, \\, \" and \'), fails on any other, ends
 * a quoted text at a line break, and reads CR and CRLF as line breaks. So
 * the one character that cannot be carried is CR; it is refused rather
 * than changed, because a query for a changed name would quietly match
 * nothing (the encoder never stores a CR in a name either:
 * docs/line-protocol.md).
 */
#include "influx/influxql.h"

#include <errno.h>
#include <string.h>

static int quote(ps_buf *out, const char *s, char q) {
  if (!s || strchr(s, '\r'))
    return -EINVAL;
  size_t start = out->len;
  int rc = ps_buf_putc(out, q);
  for (const char *p = s; !rc && *p; p++) {
    if (*p == '\n')
      rc = ps_buf_puts(out, "\\n");
    else if (*p == '\\' || *p == q)
      rc = ps_buf_append(out, (const char[2]){'\\', *p}, 2);
    else
      rc = ps_buf_putc(out, *p);
  }
  if (!rc)
    rc = ps_buf_putc(out, q);
  if (rc)
    ps_buf_truncate(out, start);
  return rc;
}

int ps_influxql_quote_ident(ps_buf *out, const char *name) { return quote(out, name, '"'); }

int ps_influxql_quote_string(ps_buf *out, const char *value) {
  return quote(out, value, '\'');
}
