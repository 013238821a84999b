/*
 * formats/jsonl.c: the generic `jsonl` format, one JSON object per line,
 * mapped to a point by the source configuration (include/formats/format.h,
 * docs/schema.md "Generic sources").
 *
 * Design
 * - The line is read by the format's own JSON reader (jsonl_read.c) into
 *   leaves: every scalar with its flattened key; this file maps them.
 * - Types are fixed per key (docs/schema.md): a number is a float unless
 *   `types` declares the key. `null`, and the NaN / Infinity that Python's
 *   json module writes, mean "absent" (docs/schema.md), so those fields are left
 *   out instead of failing the line.
 * - All per-line storage (keys, unescaped strings, leaves, tags, fields)
 *   lives in buffers owned by the parser and reused.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "influx/lp_encode.h"
#include "influx/numfmt.h"
#include "jsonl_private.h"

static ps_input_kind jsonl_input_kind(const ps_source_cfg *src,
                                      const char *path) {
  (void)src;
  (void)path;
  return PS_INPUT_LINES;
}

static int jsonl_open(ps_parser **out, const ps_source_cfg *src,
                      const ps_input_head *head, ps_buf *err) {
  (void)head;
  *out = NULL;
  ps_parser *p = calloc(1, sizeof *p);
  if (!p) {
    ps_buf_puts(err, "out of memory");
    return -ENOMEM;
  }
  p->src = src;
  ps_buf_init(&p->text, 0);
  *out = p;
  return 0;
}

static void jsonl_free(ps_parser *p) {
  if (!p)
    return;
  ps_buf_free(&p->text);
  free(p->leaves);
  free(p->tags);
  free(p->fields);
  free(p->sort_tmp);
  free(p);
}

/* Exact integer from JSON number text; -EINVAL if it has a fraction or an
 * exponent, -ERANGE beyond the type. */
static int text_to_u64(const char *s, size_t n, int *neg, uint64_t *out) {
  *neg = 0;
  if (n && *s == '-') {
    *neg = 1;
    s++;
    n--;
  }
  if (!n)
    return -EINVAL;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -EINVAL;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -ERANGE;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

static int exact_i64(const leaf *l, int64_t *out) {
  double v = l->num;
  if (v != floor(v))
    return -EINVAL;
  if (fabs(v) < TWO53) {
    *out = (int64_t)v;
    return 0;
  }
  int neg;
  uint64_t u;
  int rc = text_to_u64(l->num_text, l->num_len, &neg, &u);
  if (rc == -EINVAL)
    return -EDOM; /* e.g. 1e19: whole, but digits beyond 2^53 are unknown */
  if (rc)
    return rc;
  if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX)
    return -ERANGE;
  *out = neg ? (int64_t)(0 - u) : (int64_t)u;
  return 0;
}

static int exact_u64(const leaf *l, uint64_t *out) {
  double v = l->num;
  if (v != floor(v))
    return -EINVAL;
  if (v < 0)
    return -ERANGE;
  if (v < TWO53) {
    *out = (uint64_t)v;
    return 0;
  }
  int neg;
  int rc = text_to_u64(l->num_text, l->num_len, &neg, out);
  if (rc == -EINVAL)
    return -EDOM;
  return rc;
}

/* Key comparison runs several times per value; most keys differ in the
 * first two bytes (time, type, tx_count), which saves the call. */
static inline int key_eq(const char *a, const char *b) {
  if (a[0] != b[0])
    return 0;
  if (!a[0])
    return 1;
  if (a[1] != b[1])
    return 0;
  return !a[1] || strcmp(a + 2, b + 2) == 0;
}

static int in_list(char *const *list, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (list[i] && key_eq(list[i], key))
      return 1;
  return 0;
}

static int declared_type(const ps_source_cfg *src, const char *key,
                         ps_ftype *t) {
  for (size_t i = 0; i < src->ntypes; i++)
    if (src->types[i].key && key_eq(src->types[i].key, key)) {
      *t = src->types[i].type;
      return 1;
    }
  return 0;
}

static const char *json_kind(const leaf *l) {
  switch (l->kind) {
  case JV_NUM:
    return "a number";
  case JV_STR:
    return "a string";
  case JV_TRUE:
  case JV_FALSE:
    return "a boolean";
  default:
    return "a value of another kind";
  }
}

/* The point's time from the time key's value, honouring time_unit_exp. */
static int leaf_time(const ps_parser *p, const leaf *l, int64_t *ns,
                     const char **why) {
  const char *text = p->text.data;
  int exp = p->src->time_unit_exp;
  int64_t factor = exp <= -9 ? 1 : exp == -6 ? 1000 : exp == -3 ? 1000000
                                                                 : 1000000000;
  const char *s = NULL;
  size_t n = 0;
  double v;
  if (l->kind == JV_NUM) {
    v = l->num;
    if (v == floor(v) && fabs(v) >= TWO53) {
      s = l->num_text;
      n = l->num_len;
    }
  } else if (l->kind == JV_STR) {
    s = text + l->str_off;
    n = l->str_len;
    if (ps_lp_decimal(s, n, &v) < 0) {
      *why = "is not a number";
      return -EINVAL;
    }
  } else {
    *why = "is not a number";
    return -EINVAL;
  }
  if (s) {
    int neg;
    uint64_t u;
    int rc = text_to_u64(s, n, &neg, &u);
    if (rc == -ERANGE || (!rc && u > (uint64_t)INT64_MAX / (uint64_t)factor)) {
      *why = "is outside InfluxDB's time range";
      return -ERANGE;
    }
    if (!rc) {
      *ns = (neg ? -(int64_t)u : (int64_t)u) * factor;
      return 0;
    }
  }
  /* seconds, ms, us: rounded to the microsecond (docs/schema.md) */
  double limit = 9.2e18 / (double)factor;
  if (!(fabs(v) < limit)) {
    *why = "is outside InfluxDB's time range";
    return -ERANGE;
  }
  if (factor == 1000000000)
    *ns = ps_seconds_to_ns(v);
  else if (factor == 1000000)
    *ns = (int64_t)nearbyint(v * 1000.0) * 1000;
  else if (factor == 1000)
    *ns = (int64_t)nearbyint(v) * 1000;
  else
    *ns = (int64_t)nearbyint(v);
  return 0;
}

/* Lends the number's own text to the encoder when it is already what the
 * encoder would write for the field's type (read_number's forms). */
static void number_text(ps_field *f, const leaf *l) {
  int ok;
  switch (f->type) {
  case PS_F_FLOAT:
    ok = l->num_form == NUM_FORM_DECIMAL || l->num_form == NUM_FORM_WHOLE15;
    f->text_whole = l->num_form == NUM_FORM_WHOLE15;
    break;
  case PS_F_INT:
    ok = l->num_form == NUM_FORM_WHOLE15 || l->num_form == NUM_FORM_WHOLE18;
    break;
  case PS_F_UINT:
    ok = (l->num_form == NUM_FORM_WHOLE15 || l->num_form == NUM_FORM_WHOLE18) &&
         l->num_text[0] != '-';
    break;
  default:
    ok = 0;
  }
  if (ok) {
    f->text = l->num_text;
    f->text_len = (uint16_t)l->num_len;
  }
}

/* A tag's value: strings as they are, booleans as words, numbers as
 * labels (3, not 3.0) formatted into the parser's text, which has room. */
static const char *tag_value(ps_parser *p, const leaf *l) {
  if (l->kind == JV_STR)
    return p->text.data + l->str_off;
  if (l->kind == JV_TRUE || l->kind == JV_FALSE)
    return l->kind == JV_TRUE ? "true" : "false";
  char *w = p->text.data + p->text.len;
  double d = l->num;
  size_t n = d == floor(d) && fabs(d) < TWO53 ? ps_fmt_int64((int64_t)d, w)
                                             : ps_fmt_double(d, w);
  p->text.len += n + 1;
  return w;
}

/* A field of a key without a declared type: numbers are floats, strings
 * and booleans as they are. */
static void plain_field(ps_field *f, const leaf *l, const char *text) {
  if (l->kind == JV_NUM) {
    f->type = PS_F_FLOAT;
    f->v.f = l->num;
    number_text(f, l);
  } else if (l->kind == JV_STR) {
    f->type = PS_F_STRING;
    f->v.s.p = text + l->str_off;
    f->v.s.n = l->str_len;
  } else {
    f->type = PS_F_BOOL;
    f->v.b = l->kind == JV_TRUE;
  }
}

/* A field of a key declared `decl`: 1 when the value is one, else 0 after
 * rejecting the line with what the value is. */
static int declared_field(ps_field *f, const leaf *l, const char *text, ps_ftype decl,
                          ps_emitter *em) {
  static const char *type_word[] = {"float", "integer", "unsigned", "boolean", "string"};
  int ok = 0;
  const char *why = NULL;
  switch (decl) {
  case PS_F_FLOAT:
    ok = l->kind == JV_NUM;
    f->v.f = l->num;
    break;
  case PS_F_INT:
    if (l->kind == JV_NUM) {
      int e = exact_i64(l, &f->v.i);
      ok = e == 0;
      why = e == -EINVAL ? "has a fraction"
            : e == -EDOM ? "is beyond 2^53 in exponent form, so its "
                           "digits are not known exactly"
                         : "does not fit a 64-bit integer";
    }
    break;
  case PS_F_UINT:
    if (l->kind == JV_NUM) {
      int e = exact_u64(l, &f->v.u);
      ok = e == 0;
      why = e == -EINVAL ? "has a fraction"
            : e == -EDOM ? "is beyond 2^53 in exponent form, so its "
                           "digits are not known exactly"
                         : "does not fit an unsigned 64-bit integer";
    }
    break;
  case PS_F_BOOL:
    ok = l->kind == JV_TRUE || l->kind == JV_FALSE;
    f->v.b = l->kind == JV_TRUE;
    break;
  case PS_F_STRING:
    ok = l->kind == JV_STR;
    f->v.s.p = text + l->str_off;
    f->v.s.n = l->str_len;
    break;
  }
  if (!ok) {
    unsigned ti = (unsigned)decl < 5 ? (unsigned)decl : 0;
    if (why)
      ps_emit_reject(em, "field '%s' is declared %s but its value %s", f->key,
                     type_word[ti], why);
    else
      ps_emit_reject(em, "field '%s' is declared %s but holds %s", f->key,
                     type_word[ti], json_kind(l));
    return 0;
  }
  f->type = decl;
  if (l->kind == JV_NUM)
    number_text(f, l);
  return 1;
}

/* The leaves as the point's time, tags and fields, by the source's
 * mapping. 1 with them in *pt; 0 when the line was rejected. */
static int map_leaves(ps_parser *p, ps_emitter *em, ps_point *pt) {
  const ps_source_cfg *src = p->src;
  char *text = p->text.data; /* final: nothing appends past the reserve */
  size_t ntags = 0, nfields = 0;
  int have_time = 0;
  for (size_t k = 0; k < p->nleaves; k++) {
    const leaf *l = &p->leaves[k];
    const char *key = text + l->key_off;
    if (l->kind == JV_NULL)
      continue;
    if (src->time_key && key_eq(key, src->time_key)) {
      const char *why = NULL;
      if (leaf_time(p, l, &pt->time_ns, &why)) {
        ps_emit_reject(em, "time key '%s' %s", key, why);
        return 0;
      }
      have_time = 1;
      continue;
    }
    if (in_list(src->tag_keys, src->ntag_keys, key)) {
      ps_tag *t = &p->tags[ntags++];
      t->key = key;
      t->value = tag_value(p, l);
      continue;
    }
    if (src->nfield_keys && !in_list(src->field_keys, src->nfield_keys, key))
      continue;
    ps_field *f = &p->fields[nfields];
    *f = (ps_field){.key = key};
    ps_ftype decl;
    if (!declared_type(src, key, &decl))
      plain_field(f, l, text);
    else if (!declared_field(f, l, text, decl, em))
      return 0;
    nfields++;
  }
  if (!have_time) {
    if (src->time_key)
      ps_emit_reject(em, "no time key '%s' in the object", src->time_key);
    else
      ps_emit_reject(em, "no time key configured (--time-key or time_key), so "
                         "the line has no timestamp");
    return 0;
  }
  pt->tags = p->tags;
  pt->ntags = ntags;
  pt->fields = p->fields;
  pt->nfields = nfields;
  return 1;
}

static int jsonl_line(ps_parser *p, const char *data, size_t len,
                      ps_emitter *em) {
  int rc = jsonl_read_line(p, data, len, em);
  if (rc <= 0)
    return rc;
  /* room for every leaf as a tag or field, and a formatted tag value each */
  if (ps_buf_reserve(&p->text, 32 * p->nleaves + 1) ||
      jsonl_grow((void **)&p->tags, &p->tags_cap, p->nleaves, sizeof(ps_tag)) ||
      jsonl_grow((void **)&p->fields, &p->fields_cap, p->nleaves, sizeof(ps_field)))
    return -ENOMEM;
  ps_point pt = {.measurement = p->src->measurement ? p->src->measurement : "jsonl"};
  if (!map_leaves(p, em, &pt))
    return 0;
  if (ps_lp_sort_fields(p->fields, pt.nfields, &p->sort_tmp, &p->sort_tmp_cap))
    return -ENOMEM;
  return ps_emit_point(em, &pt);
}

const ps_format_ops ps_format_jsonl = {
    .id = PS_FMT_JSONL,
    .name = "jsonl",
    .input_kind = jsonl_input_kind,
    .open = jsonl_open,
    .line = jsonl_line,
    .document = NULL,
    .finish = NULL,
    .free = jsonl_free,
    .source_mapping = 1,
};

