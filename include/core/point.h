/*
 * point: the one in-memory shape of a stats point, between format parsers and
 * the line-protocol encoder.
 *
 * Contract
 * - A ps_point only borrows: every string and array it points to belongs to
 *   the producer and must stay valid until the call it is passed to returns.
 *   Consumers that keep a point encode it (influx/lp_encode.h) before returning.
 * - Strings are NUL-terminated UTF-8 except string field values, which carry
 *   an explicit length (they may hold any byte; the encoder escapes them).
 * - Tags may come in any order; the encoder sorts them. Global tags from the
 *   configuration are added by the encoder, not by parsers.
 * - time_ns is nanoseconds since the epoch and always comes from the data
 *   (docs/schema.md: replay is idempotent only because of that).
 * - A number field may carry `text`: the value exactly as the encoder would
 *   write it (without the i/u suffix; a whole float's ".0" is added when
 *   `text_whole`). A parser that reads numbers already in that shape sets
 *   it so the encoder copies instead of formatting (docs/benchmarks.md,
 *   round 4); everyone else leaves it NULL. A producer that fills a field
 *   member by member starts from a zeroed field for that reason.
 */
#ifndef PS_CORE_POINT_H
#define PS_CORE_POINT_H

#include <stddef.h>
#include <stdint.h>

typedef enum ps_ftype {
  PS_F_FLOAT = 0,
  PS_F_INT,
  PS_F_UINT,
  PS_F_BOOL,
  PS_F_STRING,
} ps_ftype;

typedef struct ps_field {
  const char *key;
  ps_ftype type;
  uint16_t text_len;  /* of `text` */
  uint8_t text_whole; /* `text` is a whole float's digits: ".0" follows */
  union {
    double f;
    int64_t i;
    uint64_t u;
    int b;
    struct {
      const char *p;
      size_t n;
    } s;
  } v;
  const char *text; /* NULL: format v (see the contract) */
} ps_field;

typedef struct ps_tag {
  const char *key;
  const char *value;
} ps_tag;

typedef struct ps_point {
  const char *measurement;
  const ps_tag *tags;
  size_t ntags;
  const ps_field *fields;
  size_t nfields;
  int64_t time_ns;
} ps_point;

/* A field of each type, for producers that build points by hand (markers,
 * run status, fixed-shape rows). The string is borrowed like every string
 * of a point. */
static inline ps_field ps_field_float(const char *key, double v) {
  ps_field f = {.key = key, .type = PS_F_FLOAT, .v.f = v};
  return f;
}
static inline ps_field ps_field_int(const char *key, int64_t v) {
  ps_field f = {.key = key, .type = PS_F_INT, .v.i = v};
  return f;
}
static inline ps_field ps_field_bool(const char *key, int v) {
  ps_field f = {.key = key, .type = PS_F_BOOL, .v.b = v ? 1 : 0};
  return f;
}
static inline ps_field ps_field_string(const char *key, const char *p, size_t n) {
  ps_field f = {.key = key, .type = PS_F_STRING, .v.s = {p, n}};
  return f;
}

/* Reading a point back (the stages that judge what passes, tests): the
 * value of tag `key` or NULL; field `key` or NULL; a number field of any
 * numeric type as a double, NaN when absent, not a number or not finite. */
const char *ps_point_tag(const ps_point *p, const char *key);
const ps_field *ps_point_field(const ps_point *p, const char *key);
double ps_point_number(const ps_point *p, const char *key);

/* Seconds (as parsed from JSON, e.g. 1647216131.81362) to nanoseconds,
 * rounded to the microsecond first: a double near 1.7e9 s holds only about
 * 7 fractional digits, so anything finer than a microsecond is noise that
 * would make a re-read point land on a different timestamp. */
int64_t ps_seconds_to_ns(double seconds);

#endif
