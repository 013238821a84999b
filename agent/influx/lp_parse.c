/*
 * influx/lp_parse.c: reading line protocol (include/influx/lp_parse.h).
 *
 * Design
 * - The parser mirrors the 1.x scanner (a separator is escaped when a
 *   backslash stands right before it; only the element's escape set is
 *   unescaped, any other backslash is kept, see agent/influx/lp_syntax.h),
 *   so a normalised line lands exactly as the original would have.
 * - Strings are unescaped into one scratch buffer reserved up front for the
 *   worst case, so pointers into it stay valid for the whole line; they are
 *   kept as offsets while the line is read and turned into pointers at the
 *   end.
 * - Numbers are read by influx/numfmt.h with 1.x's rules: a trailing `i` or
 *   `u` makes an integer, anything else that is a decimal a float.
 */
#include "influx/lp_parse.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "influx/numfmt.h"
#include "lp_syntax.h"

void ps_lp_scratch_init(ps_lp_scratch *s) {
  memset(s, 0, sizeof *s);
  ps_buf_init(&s->text, 0);
}

void ps_lp_scratch_free(ps_lp_scratch *s) {
  if (!s)
    return;
  ps_buf_free(&s->text);
  free(s->fields);
  free(s->sort_tmp);
  s->fields = NULL;
  s->sort_tmp = NULL;
  s->fields_cap = s->sort_tmp_cap = 0;
}

typedef struct lp_cursor {
  const char *line;
  const char *p;
  const char *end;
  ps_lp_scratch *s;
} lp_cursor;

static int parse_fail(lp_cursor *c, const char *at, const char **reason,
                      const char *why) {
  *reason = why;
  c->s->err_col = (size_t)(at - c->line) + 1;
  return -EINVAL;
}

/* Scans a name up to an unescaped terminator, copying it unescaped into the
 * scratch text. Returns the offset of the copy in s->text. */
static size_t scan_name(lp_cursor *c, enum ps_lp_name_kind k, const char *stops) {
  ps_buf *t = &c->s->text;
  size_t off = t->len;
  char *w = t->data + t->len;
  while (c->p < c->end && !strchr(stops, *c->p)) {
    char ch = *c->p;
    /* 1.x's rule: a backslash escapes only a character of its element's
     * set; any other backslash is itself, and the byte after it is read
     * afresh (`a\\ b` is `a\` and an escaped space: `a\ b`). */
    if (ch == '\\' && c->p + 1 < c->end && ps_lp_unescaped_after_backslash(k, c->p[1])) {
      *w++ = c->p[1];
      c->p += 2;
      continue;
    }
    *w++ = ch;
    c->p++;
  }
  *w++ = '\0';
  t->len = (size_t)(w - t->data);
  return off;
}

static int parse_bool(const char *p, size_t n, int *out) {
  static const char *t[] = {"t", "T", "true", "True", "TRUE"};
  static const char *f[] = {"f", "F", "false", "False", "FALSE"};
  for (int i = 0; i < 5; i++) {
    if (strlen(t[i]) == n && memcmp(p, t[i], n) == 0) {
      *out = 1;
      return 1;
    }
    if (strlen(f[i]) == n && memcmp(p, f[i], n) == 0) {
      *out = 0;
      return 1;
    }
  }
  return 0;
}

/* ",key=value" pairs after the measurement, as offsets of their unescaped
 * copies. 0 or -EINVAL. */
static int parse_tags(lp_cursor *c, size_t tag_off[][2], size_t *ntags_out,
                      const char **reason) {
  size_t ntags = 0;
  while (c->p < c->end && *c->p == ',') {
    c->p++;
    const char *at = c->p;
    if (ntags == PS_LP_MAX_TAGS)
      return parse_fail(c, at, reason, "more than 256 tags");
    tag_off[ntags][0] = scan_name(c, PS_LP_TAG_KEY, ",= ");
    if (c->p >= c->end || *c->p != '=')
      return parse_fail(c, c->p, reason, "tag without '=value'");
    c->p++;
    const char *vat = c->p;
    tag_off[ntags][1] = scan_name(c, PS_LP_TAG_VALUE, ", ");
    if (c->s->text.data[tag_off[ntags][1]] == '\0')
      return parse_fail(c, vat, reason, "missing tag value");
    ntags++;
  }
  *ntags_out = ntags;
  return 0;
}

/* A "..." field value at c->p, unescaped into the scratch text (its offset
 * in f->v.s.p until the line is read). 0 or -EINVAL. */
static int parse_string_value(lp_cursor *c, ps_field *f, const char **reason) {
  const char *v = c->p;
  c->p++;
  ps_buf *t = &c->s->text;
  size_t soff = t->len;
  char *w = t->data + t->len;
  int closed = 0;
  while (c->p < c->end) {
    char ch = *c->p;
    if (ch == '\\' && c->p + 1 < c->end && (c->p[1] == '"' || c->p[1] == '\\')) {
      *w++ = c->p[1];
      c->p += 2;
      continue;
    }
    if (ch == '"') {
      closed = 1;
      c->p++;
      break;
    }
    *w++ = ch;
    c->p++;
  }
  if (!closed) {
    c->s->open_string = 1;
    return parse_fail(c, v, reason, "unterminated string field");
  }
  f->type = PS_F_STRING;
  f->v.s.n = (size_t)(w - (t->data + soff));
  *w++ = '\0';
  t->len = (size_t)(w - t->data);
  f->v.s.p = (const char *)(uintptr_t)soff;
  return 0;
}

/* An unquoted field value at c->p: 1.x's integer (`i`), unsigned (`u`),
 * float or boolean. 0 or -EINVAL. */
static int parse_scalar_value(lp_cursor *c, ps_field *f, const char **reason) {
  /* the scan runs on a local pointer: stores through `f` could alias the
   * cursor, which kept it in memory */
  const char *v = c->p, *q = v, *end = c->end;
  while (q < end && *q != ',' && *q != ' ')
    q++;
  c->p = q;
  size_t n = (size_t)(q - v);
  if (n == 0)
    return parse_fail(c, v, reason, "missing field value");
  char last = v[n - 1];
  int64_t iv;
  uint64_t uv;
  int nrc;
  if (last == 'i' && (nrc = ps_parse_int64(v, n - 1, &iv)) != -EINVAL) {
    if (nrc)
      return parse_fail(c, v, reason, "integer out of range");
    f->type = PS_F_INT;
    f->v.i = iv;
  } else if (last == 'u' && (nrc = ps_parse_uint64(v, n - 1, &uv)) != -EINVAL) {
    if (nrc)
      return parse_fail(c, v, reason, "unsigned integer out of range");
    f->type = PS_F_UINT;
    f->v.u = uv;
  } else if ((nrc = ps_lp_decimal(v, n, &f->v.f)) != -EINVAL) {
    if (nrc == -ENOMEM)
      return parse_fail(c, v, reason, "out of memory");
    if (nrc)
      return parse_fail(c, v, reason, "float out of range");
    f->type = PS_F_FLOAT;
  } else if (parse_bool(v, n, &f->v.b)) {
    f->type = PS_F_BOOL;
  } else {
    return parse_fail(c, v, reason, "invalid field value");
  }
  return 0;
}

/* "key=value" fields, comma-separated, into s->fields (keys as offsets in
 * the scratch text until the line is read). 0 or -EINVAL. */
static int parse_fields(lp_cursor *c, size_t *nfields_out, const char **reason) {
  ps_lp_scratch *s = c->s;
  size_t nfields = 0;
  for (;;) {
    const char *at = c->p;
    size_t koff = scan_name(c, PS_LP_FIELD_KEY, ",= ");
    if (c->p >= c->end || *c->p != '=')
      return parse_fail(c, c->p, reason, "field without '=value'");
    if (s->text.data[koff] == '\0')
      return parse_fail(c, at, reason, "empty field key");
    c->p++;
    if (nfields == s->fields_cap) {
      size_t cap = s->fields_cap ? s->fields_cap * 2 : 16;
      ps_field *nf = realloc(s->fields, cap * sizeof *nf);
      if (!nf)
        return parse_fail(c, at, reason, "out of memory");
      s->fields = nf;
      s->fields_cap = cap;
    }
    ps_field *f = &s->fields[nfields++];
    *f = (ps_field){.key = (const char *)(uintptr_t)koff}; /* key resolved below */
    const char *v = c->p;
    if (v < c->end && *v == '"') {
      if (parse_string_value(c, f, reason))
        return -EINVAL;
    } else if (parse_scalar_value(c, f, reason)) {
      return -EINVAL;
    }
    if (c->p < c->end && *c->p == ',') {
      c->p++;
      continue;
    }
    break;
  }
  *nfields_out = nfields;
  return 0;
}

/* The timestamp after the fields, and nothing but blanks after it. 0 or
 * -EINVAL. */
static int parse_timestamp(lp_cursor *c, int64_t *t, const char **reason) {
  if (c->p < c->end && *c->p != ' ')
    return parse_fail(c, c->p, reason, "unexpected character after field value");
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
    c->p++;
  if (c->p == c->end)
    return parse_fail(c, c->p, reason,
                      "missing timestamp (perfship needs the time from the "
                      "data so that replays overwrite instead of duplicate)");
  const char *ts = c->p;
  while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
    c->p++;
  int rc = ps_parse_int64(ts, (size_t)(c->p - ts), t);
  if (rc == -ERANGE || (!rc && (*t < PS_LP_MIN_TIME_NS || *t > PS_LP_MAX_TIME_NS)))
    return parse_fail(c, ts, reason, "timestamp outside InfluxDB's range");
  if (rc)
    return parse_fail(c, ts, reason, "bad timestamp (expected integer nanoseconds)");
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
    c->p++;
  if (c->p != c->end)
    return parse_fail(c, c->p, reason, "unexpected text after the timestamp");
  return 0;
}

int ps_lp_parse_point(ps_lp_scratch *s, const char *line, size_t len,
                      ps_point *out, const char **reason) {
  const char *dummy;
  if (!reason)
    reason = &dummy;
  s->err_col = 0;
  s->open_string = 0;
  lp_cursor c = {line, line, line + len, s};
  while (c.p < c.end && (*c.p == ' ' || *c.p == '\t'))
    c.p++;
  if (c.p == c.end || *c.p == '#')
    return 1;
  if (memchr(c.p, '\0', (size_t)(c.end - c.p)))
    return parse_fail(&c, memchr(c.p, '\0', (size_t)(c.end - c.p)), reason,
                      "NUL byte in line");
  /* Unescaped text never exceeds the input, plus one NUL per element. */
  ps_buf_reset(&s->text);
  if (ps_buf_reserve(&s->text, 2 * len + 16))
    return parse_fail(&c, c.p, reason, "out of memory");

  size_t moff = scan_name(&c, PS_LP_MEASUREMENT, ", ");
  size_t ntags = 0, nfields = 0;
  size_t tag_off[PS_LP_MAX_TAGS][2];
  int rc = parse_tags(&c, tag_off, &ntags, reason);
  if (rc)
    return rc;
  if (c.p >= c.end || *c.p != ' ')
    return parse_fail(&c, c.p, reason, "no fields (expected a space after the "
                                       "measurement and tags)");
  while (c.p < c.end && *c.p == ' ')
    c.p++;
  int64_t t;
  if ((rc = parse_fields(&c, &nfields, reason)) || (rc = parse_timestamp(&c, &t, reason)))
    return rc;

  /* The scratch text is final now: turn offsets into pointers. */
  char *base = s->text.data;
  for (size_t i = 0; i < ntags; i++) {
    s->tags[i].key = base + tag_off[i][0];
    s->tags[i].value = base + tag_off[i][1];
  }
  for (size_t i = 0; i < nfields; i++) {
    ps_field *f = &s->fields[i];
    f->key = base + (size_t)(uintptr_t)f->key;
    if (f->type == PS_F_STRING)
      f->v.s.p = base + (size_t)(uintptr_t)f->v.s.p;
  }
  if (ps_lp_sort_fields(s->fields, nfields, &s->sort_tmp, &s->sort_tmp_cap))
    return parse_fail(&c, line, reason, "out of memory");
  out->measurement = base + moff;
  out->tags = s->tags;
  out->ntags = ntags;
  out->fields = s->fields;
  out->nfields = nfields;
  out->time_ns = t;
  return 0;
}

int ps_lp_parse_line(ps_buf *out, const char *line, size_t len,
                     const ps_tag *extra_tags, size_t nextra,
                     const char **reason) {
  const char *dummy;
  if (!reason)
    reason = &dummy;
  ps_lp_scratch s;
  ps_lp_scratch_init(&s);
  ps_point pt;
  int rc = ps_lp_parse_point(&s, line, len, &pt, reason);
  if (rc == 0)
    rc = ps_lp_encode(out, &pt, extra_tags, nextra, reason);
  ps_lp_scratch_free(&s);
  return rc;
}
