/*
 * influxql: quoting names and values taken from data into InfluxQL text, so
 * that a measurement, tag or run name can never end the quote it sits in
 * and change the query around it.
 *
 * Contract
 * - ps_influxql_quote_ident() appends `name` as a double-quoted identifier
 *   ("..."), ps_influxql_quote_string() `value` as a single-quoted string
 *   literal ('...'). Inside the quotes a backslash becomes `\\`, the quote
 *   character `\"` or `\'`, a line feed `\n`: the escapes InfluxQL's scanner
 *   reads back to exactly the original bytes. Everything else is copied.
 * - Refused with -EINVAL, appending nothing: a carriage return (the scanner
 *   reads CR as a line break, which ends a quoted text, and has no escape
 *   for it), NULL. -ENOMEM or -E2BIG (its limit) when `out` cannot grow.
 * - Used to build the queries that ps_influx_query() (influx/client.h)
 *   sends; a caller never pastes data into a query any other way.
 */
#ifndef PS_INFLUX_INFLUXQL_H
#define PS_INFLUX_INFLUXQL_H

#include "core/buf.h"

int ps_influxql_quote_ident(ps_buf *out, const char *name);
int ps_influxql_quote_string(ps_buf *out, const char *value);

#endif
