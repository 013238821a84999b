/*
 * lp_syntax.h (private to agent/influx/): what the line-protocol encoder and
 * parser must agree on about names, so that a line the parser normalises
 * lands in InfluxDB exactly as the original would have.
 *
 * InfluxDB 1.x unescapes, per element, only that element's escape set:
 * comma and space everywhere, '=' in tag keys, tag values and field keys.
 * A backslash before any other character stays a backslash, `\\` included,
 * so `a\\ b` is a backslash and an escaped space. In a tag that carries a
 * backslash before a separator; in a measurement or a field key (or before
 * a '"' in a field key) it cannot be carried (influxdb#6008, tried on
 * 1.6.7). docs/line-protocol.md has the user's view.
 */
#ifndef PS_INFLUX_LP_SYNTAX_H
#define PS_INFLUX_LP_SYNTAX_H

enum ps_lp_name_kind {
  PS_LP_MEASUREMENT,
  PS_LP_TAG_KEY,
  PS_LP_TAG_VALUE,
  PS_LP_FIELD_KEY
};

static inline int ps_lp_needs_escape(enum ps_lp_name_kind k, char c) {
  if (c == ',' || c == ' ')
    return 1;
  if (c == '=')
    return k != PS_LP_MEASUREMENT;
  return 0;
}

/* Characters a backslash must not stand before: those 1.x would unescape
 * (so the backslash would vanish) or that end the element. */
static inline int ps_lp_unescaped_after_backslash(enum ps_lp_name_kind k, char c) {
  if (ps_lp_needs_escape(k, c))
    return 1;
  return k == PS_LP_FIELD_KEY && c == '"';
}

#endif
