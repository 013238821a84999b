/*
 * format_jsonl.c: the generic `jsonl` format, one JSON object per line,
 * mapped to a point by the source configuration (include/format.h,
 * SCHEMA.md "Generic sources").
 *
 * Design
 * - cJSON parses the line (require_null_terminated=0, then we check the
 *   tail ourselves, so a line need not be NUL-terminated and trailing
 *   garbage is reported with its column).
 * - Nested objects are flattened with '.', arrays are skipped (counted,
 *   logged at debug level): line protocol has no arrays, and guessing an
 *   index scheme would invent field names nobody asked for.
 * - Types are fixed per key: a number is a float unless `types` declares
 *   the key. cJSON stores numbers as doubles, so an integer beyond 2^53
 *   would silently lose digits; for those (declared integers and
 *   nanosecond timestamps) we go back to the number's own text. The n-th
 *   number item of the tree is the n-th number token of the line, because
 *   cJSON keeps document order.
 * - All per-line storage (flattened keys, tags, fields) lives in buffers
 *   owned by the parser and reused, so a line costs no allocation of ours
 *   once they have grown.
 * - cJSON allocates every item and key separately, which made malloc/free
 *   a tenth of `convert`. While a line is parsed, its allocations come from
 *   a bump arena that is simply rewound for the next line (no cJSON_Delete
 *   walk). Outside that window, and once the arena is full, the hooks fall
 *   through to malloc/free, so other modules' cJSON use is unaffected.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "format.h"
#include "log.h"
#include "lp.h"

#define TWO53 9007199254740992.0
#define ARENA_BYTES (256 * 1024)

/* One process-wide arena: lines are parsed one at a time (one loop, one
 * thread), and a line's tree never outlives jsonl_line(). */
static struct {
  char *base;
  size_t used;
  int active;
  int spilled; /* an allocation went to malloc: the tree needs cJSON_Delete */
} arena;

static void *arena_malloc(size_t n) {
  if (arena.active) {
    size_t need = (n + 15) & ~(size_t)15;
    if (need <= ARENA_BYTES - arena.used) {
      void *p = arena.base + arena.used;
      arena.used += need;
      return p;
    }
    arena.spilled = 1;
  }
  return malloc(n);
}

static void arena_free(void *p) {
  if (arena.base && (char *)p >= arena.base &&
      (char *)p < arena.base + ARENA_BYTES)
    return;
  free(p);
}

static void arena_install(void) {
  if (arena.base)
    return;
  arena.base = malloc(ARENA_BYTES);
  if (!arena.base)
    return; /* plain cJSON allocation still works */
  cJSON_Hooks hooks = {.malloc_fn = arena_malloc, .free_fn = arena_free};
  cJSON_InitHooks(&hooks);
}

static cJSON *parse_in_arena(const char *data, size_t len, const char **end) {
  arena.active = arena.base != NULL;
  arena.used = 0;
  arena.spilled = 0;
  cJSON *root = cJSON_ParseWithLengthOpts(data, len, end, 0);
  arena.active = 0;
  return root;
}

static void tree_release(cJSON *root) {
  if (root && (arena.spilled || !arena.base))
    cJSON_Delete(root); /* arena nodes are skipped by arena_free */
}

typedef struct leaf {
  size_t key_off;
  const cJSON *item;
  size_t num_ordinal; /* index among number tokens, for exact re-reads */
} leaf;

struct ps_parser {
  const ps_source_cfg *src;
  ps_buf text; /* flattened keys and formatted tag values */
  leaf *leaves;
  size_t nleaves, leaves_cap;
  ps_tag *tags;
  size_t tags_cap;
  ps_field *fields;
  size_t fields_cap;
  ps_field *sort_tmp;
  size_t sort_tmp_cap;
  size_t num_count;
  unsigned long arrays_skipped;
  const char *line;
  size_t line_len;
};

static ps_input_kind jsonl_input_kind(const ps_source_cfg *src,
                                      const char *path) {
  (void)src;
  (void)path;
  return PS_INPUT_LINES;
}

static int jsonl_open(ps_parser **out, const ps_source_cfg *src,
                      const char *path, ps_buf *err) {
  (void)path;
  *out = NULL;
  ps_parser *p = calloc(1, sizeof *p);
  if (!p) {
    ps_buf_puts(err, "out of memory");
    return -ENOMEM;
  }
  p->src = src;
  ps_buf_init(&p->text, 0);
  arena_install();
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

static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t c = *cap ? *cap : 16;
  while (c < need)
    c *= 2;
  void *n = realloc(*arr, c * elem);
  if (!n)
    return -ENOMEM;
  *arr = n;
  *cap = c;
  return 0;
}

static size_t count_numbers(const cJSON *it) {
  if (cJSON_IsNumber(it))
    return 1;
  size_t n = 0;
  for (const cJSON *c = it->child; c; c = c->next)
    n += count_numbers(c);
  return n;
}

/* Appends the leaves of object `obj` under the key prefix text[pfx, len). */
static int flatten(ps_parser *p, const cJSON *obj, size_t pfx_off,
                   size_t pfx_len) {
  for (const cJSON *c = obj->child; c; c = c->next) {
    const char *name = c->string ? c->string : "";
    size_t nlen = strlen(name);
    if (cJSON_IsArray(c)) {
      p->arrays_skipped++;
      p->num_count += count_numbers(c);
      PS_DEBUG("jsonl", "skipping array '%s' (line protocol has no arrays)",
               name);
      continue;
    }
    size_t off = p->text.len;
    if (ps_buf_reserve(&p->text, pfx_len + 1 + nlen + 1))
      return -ENOMEM;
    char *w = p->text.data + off;
    if (pfx_len) {
      memmove(w, p->text.data + pfx_off, pfx_len);
      w[pfx_len] = '.';
      w += pfx_len + 1;
    }
    memcpy(w, name, nlen);
    w[nlen] = '\0';
    size_t klen = (pfx_len ? pfx_len + 1 : 0) + nlen;
    p->text.len = off + klen + 1;
    if (cJSON_IsObject(c)) {
      int rc = flatten(p, c, off, klen);
      if (rc)
        return rc;
      continue;
    }
    if (grow((void **)&p->leaves, &p->leaves_cap, p->nleaves + 1, sizeof(leaf)))
      return -ENOMEM;
    leaf *l = &p->leaves[p->nleaves++];
    l->key_off = off;
    l->item = c;
    l->num_ordinal = cJSON_IsNumber(c) ? p->num_count++ : 0;
  }
  return 0;
}

/* The text of the n-th number token of the line (cJSON validated the JSON,
 * so a token scan that skips strings is enough). */
static int number_text(const ps_parser *p, size_t ordinal, const char **s,
                       size_t *n) {
  const char *q = p->line, *end = p->line + p->line_len;
  size_t seen = 0;
  while (q < end) {
    char ch = *q;
    if (ch == '"') {
      q++;
      while (q < end && *q != '"')
        q += (*q == '\\') ? 2 : 1;
      q++;
      continue;
    }
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
      const char *st = q;
      while (q < end && (strchr("0123456789+-.eE", *q)))
        q++;
      if (seen++ == ordinal) {
        *s = st;
        *n = (size_t)(q - st);
        return 0;
      }
      continue;
    }
    q++;
  }
  return -ENOENT;
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

static int exact_i64(const ps_parser *p, const leaf *l, int64_t *out) {
  double v = l->item->valuedouble;
  if (v != floor(v))
    return -EINVAL;
  if (fabs(v) < TWO53) {
    *out = (int64_t)v;
    return 0;
  }
  const char *s;
  size_t n;
  int neg;
  uint64_t u;
  if (number_text(p, l->num_ordinal, &s, &n))
    return -EINVAL;
  int rc = text_to_u64(s, n, &neg, &u);
  if (rc == -EINVAL)
    return -EDOM; /* e.g. 1e19: whole, but digits beyond 2^53 are unknown */
  if (rc)
    return rc;
  if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX)
    return -ERANGE;
  *out = neg ? (int64_t)(0 - u) : (int64_t)u;
  return 0;
}

static int exact_u64(const ps_parser *p, const leaf *l, uint64_t *out) {
  double v = l->item->valuedouble;
  if (v != floor(v))
    return -EINVAL;
  if (v < 0)
    return -ERANGE;
  if (v < TWO53) {
    *out = (uint64_t)v;
    return 0;
  }
  const char *s;
  size_t n;
  int neg;
  if (number_text(p, l->num_ordinal, &s, &n))
    return -EINVAL;
  int rc = text_to_u64(s, n, &neg, out);
  if (rc == -EINVAL)
    return -EDOM;
  return rc;
}

static int in_list(char *const *list, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (list[i] && strcmp(list[i], key) == 0)
      return 1;
  return 0;
}

static int declared_type(const ps_source_cfg *src, const char *key,
                         ps_ftype *t) {
  for (size_t i = 0; i < src->ntypes; i++)
    if (src->types[i].key && strcmp(src->types[i].key, key) == 0) {
      *t = src->types[i].type;
      return 1;
    }
  return 0;
}

static const char *json_kind(const cJSON *it) {
  if (cJSON_IsNumber(it))
    return "a number";
  if (cJSON_IsString(it))
    return "a string";
  if (cJSON_IsBool(it))
    return "a boolean";
  return "a value of another kind";
}

/* The point's time from the time key's value, honouring time_unit_exp. */
static int leaf_time(const ps_parser *p, const leaf *l, int64_t *ns,
                     const char **why) {
  int exp = p->src->time_unit_exp;
  int64_t factor = exp <= -9 ? 1 : exp == -6 ? 1000 : exp == -3 ? 1000000
                                                                 : 1000000000;
  const cJSON *it = l->item;
  const char *s = NULL;
  size_t n = 0;
  double v;
  char tmp[64];
  if (cJSON_IsNumber(it)) {
    v = it->valuedouble;
    if (v == floor(v) && fabs(v) >= TWO53 && number_text(p, l->num_ordinal, &s, &n))
      s = NULL;
  } else if (cJSON_IsString(it)) {
    s = it->valuestring;
    n = strlen(s);
    if (!n || n >= sizeof tmp) {
      *why = "is not a number";
      return -EINVAL;
    }
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    char *e;
    v = strtod(tmp, &e);
    if (*e || !isfinite(v)) {
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
  /* seconds, ms, us: rounded to the microsecond (SCHEMA.md) */
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

static int jsonl_line(ps_parser *p, const char *data, size_t len,
                      ps_emitter *em) {
  const ps_source_cfg *src = p->src;
  size_t i = 0;
  while (i < len && (data[i] == ' ' || data[i] == '\t'))
    i++;
  if (i == len)
    return 0; /* blank lines carry nothing; not worth a reject */

  const char *end = NULL;
  cJSON *root = parse_in_arena(data, len, &end);
  if (!root) {
    size_t col = end ? (size_t)(end - data) + 1 : 1;
    ps_emit_reject(em, "column %zu: malformed JSON", col);
    return 0;
  }
  for (const char *q = end; q < data + len; q++)
    if (*q != ' ' && *q != '\t' && *q != '\r' && *q != '\n') {
      ps_emit_reject(em, "column %zu: trailing text after the JSON value",
                     (size_t)(q - data) + 1);
      tree_release(root);
      return 0;
    }
  if (!cJSON_IsObject(root)) {
    ps_emit_reject(em, "column %zu: not a JSON object", i + 1);
    tree_release(root);
    return 0;
  }

  p->line = data;
  p->line_len = len;
  p->nleaves = 0;
  p->num_count = 0;
  ps_buf_reset(&p->text);
  int rc = flatten(p, root, 0, 0);
  if (rc) {
    tree_release(root);
    return rc;
  }
  if (ps_buf_reserve(&p->text, 32 * p->nleaves + 1) ||
      grow((void **)&p->tags, &p->tags_cap, p->nleaves, sizeof(ps_tag)) ||
      grow((void **)&p->fields, &p->fields_cap, p->nleaves, sizeof(ps_field))) {
    tree_release(root);
    return -ENOMEM;
  }

  ps_point pt = {.measurement = src->measurement ? src->measurement : "jsonl"};
  size_t ntags = 0, nfields = 0;
  int have_time = 0;
  for (size_t k = 0; k < p->nleaves; k++) {
    const leaf *l = &p->leaves[k];
    const char *key = p->text.data + l->key_off;
    const cJSON *it = l->item;
    if (cJSON_IsNull(it))
      continue;
    if (src->time_key && strcmp(key, src->time_key) == 0) {
      const char *why = NULL;
      if (leaf_time(p, l, &pt.time_ns, &why)) {
        ps_emit_reject(em, "time key '%s' %s", key, why);
        tree_release(root);
        return 0;
      }
      have_time = 1;
      continue;
    }
    if (in_list(src->tag_keys, src->ntag_keys, key)) {
      ps_tag *t = &p->tags[ntags++];
      t->key = key;
      if (cJSON_IsString(it)) {
        t->value = it->valuestring;
      } else if (cJSON_IsBool(it)) {
        t->value = cJSON_IsTrue(it) ? "true" : "false";
      } else if (cJSON_IsNumber(it) && isfinite(it->valuedouble)) {
        /* a tag is a label: 3, not 3.0 */
        char *w = p->text.data + p->text.len;
        double d = it->valuedouble;
        size_t n = d == floor(d) && fabs(d) < TWO53
                       ? ps_fmt_int64((int64_t)d, w)
                       : ps_fmt_double(d, w);
        p->text.len += n + 1;
        t->value = w;
      } else {
        ntags--;
      }
      continue;
    }
    if (src->nfield_keys && !in_list(src->field_keys, src->nfield_keys, key))
      continue;
    ps_field *f = &p->fields[nfields];
    f->key = key;
    ps_ftype decl;
    if (!declared_type(src, key, &decl)) {
      if (cJSON_IsNumber(it)) {
        if (!isfinite(it->valuedouble))
          continue; /* absent, as SCHEMA.md says */
        f->type = PS_F_FLOAT;
        f->v.f = it->valuedouble;
      } else if (cJSON_IsBool(it)) {
        f->type = PS_F_BOOL;
        f->v.b = cJSON_IsTrue(it);
      } else if (cJSON_IsString(it)) {
        f->type = PS_F_STRING;
        f->v.s.p = it->valuestring;
        f->v.s.n = strlen(it->valuestring);
      } else {
        continue;
      }
      nfields++;
      continue;
    }
    static const char *type_word[] = {"float", "integer", "unsigned",
                                      "boolean", "string"};
    int ok = 0;
    const char *why = NULL;
    switch (decl) {
    case PS_F_FLOAT:
      ok = cJSON_IsNumber(it);
      f->v.f = it->valuedouble;
      break;
    case PS_F_INT:
      if (cJSON_IsNumber(it)) {
        int r = exact_i64(p, l, &f->v.i);
        ok = r == 0;
        why = r == -EINVAL  ? "has a fraction"
              : r == -EDOM  ? "is beyond 2^53 in exponent form, so its "
                              "digits are not known exactly"
                            : "does not fit a 64-bit integer";
      }
      break;
    case PS_F_UINT:
      if (cJSON_IsNumber(it)) {
        int r = exact_u64(p, l, &f->v.u);
        ok = r == 0;
        why = r == -EINVAL  ? "has a fraction"
              : r == -EDOM  ? "is beyond 2^53 in exponent form, so its "
                              "digits are not known exactly"
                            : "does not fit an unsigned 64-bit integer";
      }
      break;
    case PS_F_BOOL:
      ok = cJSON_IsBool(it);
      f->v.b = cJSON_IsTrue(it);
      break;
    case PS_F_STRING:
      ok = cJSON_IsString(it);
      if (ok) {
        f->v.s.p = it->valuestring;
        f->v.s.n = strlen(it->valuestring);
      }
      break;
    }
    if (!ok) {
      unsigned ti = (unsigned)decl < 5 ? (unsigned)decl : 0;
      if (why)
        ps_emit_reject(em, "field '%s' is declared %s but its value %s", key,
                       type_word[ti], why);
      else
        ps_emit_reject(em, "field '%s' is declared %s but holds %s", key,
                       type_word[ti], json_kind(it));
      tree_release(root);
      return 0;
    }
    f->type = decl;
    nfields++;
  }
  if (!have_time) {
    if (src->time_key)
      ps_emit_reject(em, "no time key '%s' in the object", src->time_key);
    else
      ps_emit_reject(em, "no time key configured (--time-key or time_key), so "
                         "the line has no timestamp");
    tree_release(root);
    return 0;
  }
  if (ps_lp_sort_fields(p->fields, nfields, &p->sort_tmp, &p->sort_tmp_cap)) {
    tree_release(root);
    return -ENOMEM;
  }
  pt.tags = p->tags;
  pt.ntags = ntags;
  pt.fields = p->fields;
  pt.nfields = nfields;
  rc = ps_emit_point(em, &pt);
  tree_release(root);
  return rc;
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
    .convert_path = NULL,
};
