/*
 * readback/statement.c: InfluxQL for reads (include/readback/statement.h).
 */
#include "readback/statement.h"

#include <inttypes.h>

#include "influx/influxql.h"

int ps_rb_ident(ps_buf *q, const char *name) { return ps_influxql_quote_ident(q, name); }

int ps_rb_string(ps_buf *q, const char *value) { return ps_influxql_quote_string(q, value); }

int ps_rb_tag_is(ps_buf *q, const char *tag, const char *value) {
  if (!value)
    return 0;
  int rc = ps_buf_puts(q, " AND ");
  rc = rc ? rc : ps_rb_ident(q, tag);
  rc = rc ? rc : ps_buf_puts(q, " = ");
  return rc ? rc : ps_rb_string(q, value);
}

static int range(ps_buf *q, const char *word, int64_t since_ns, int64_t until_ns) {
  int rc = ps_buf_printf(q, " %s time >= %" PRId64, word, since_ns > 0 ? since_ns : 0);
  if (rc == 0 && until_ns > 0)
    rc = ps_buf_printf(q, " AND time < %" PRId64, until_ns);
  return rc;
}

int ps_rb_time_range(ps_buf *q, int64_t since_ns, int64_t until_ns) {
  return range(q, "WHERE", since_ns, until_ns);
}

int ps_rb_and_time_range(ps_buf *q, int64_t since_ns, int64_t until_ns) {
  return range(q, "AND", since_ns, until_ns);
}
