/*
 * readback/statement: building the InfluxQL perfship sends, so that a name
 * or value taken from data can never end the quote it sits in, and every
 * SELECT is bounded in time.
 *
 * Contract
 * - ps_rb_ident() appends a double-quoted identifier, ps_rb_string() a
 *   single-quoted string literal: the one quoting of InfluxQL
 *   (influx/influxql.h, whose rules and refusals they keep: -EINVAL for a
 *   carriage return or NULL, appending nothing). No reader above this layer
 *   quotes any other way, or includes influx/influxql.h.
 * - ps_rb_tag_is() appends ` AND "tag" = 'value'` (nothing for a NULL
 *   value: no filter on that tag).
 * - ps_rb_time_range() appends ` WHERE time >= since` (since below 0 is 0)
 *   and, when until_ns > 0, ` AND time < until`; ps_rb_and_time_range()
 *   the same with AND, after a WHERE of the caller's. Every SELECT a reader
 *   builds carries one of them: InfluxDB 3 answers an unbounded read over
 *   all its files, or refuses it.
 * - All return 0, -ENOMEM or -E2BIG when `q` cannot grow; on an error the
 *   statement is to be dropped.
 */
#ifndef PS_READBACK_STATEMENT_H
#define PS_READBACK_STATEMENT_H

#include <stdint.h>

#include "core/buf.h"

int ps_rb_ident(ps_buf *q, const char *name);
int ps_rb_string(ps_buf *q, const char *value);
int ps_rb_tag_is(ps_buf *q, const char *tag, const char *value);
int ps_rb_time_range(ps_buf *q, int64_t since_ns, int64_t until_ns);
int ps_rb_and_time_range(ps_buf *q, int64_t since_ns, int64_t until_ns);

#endif
