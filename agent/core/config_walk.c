/*
 * config_walk.c: the walker and the typed getters (agent/core/config_private.h),
 * the enums' lookups, and the two table walks that fill the defaults and
 * free what was loaded. It calls the list kinds' parts only through their
 * rows' hooks.
 *
 * DESIGN
 * - Every key is a row of a table. One walker visits each group of the file
 *   member by member and looks the member up in its table, so an unknown key
 *   is found at every level for free, and a typo gets the nearest known key
 *   as a suggestion. Looking keys up with config_lookup_*() instead would
 *   silently ignore both typos and wrong types (libconfig returns "false"
 *   for a missing and for a mistyped setting alike).
 * - The walker writes straight into ps_config through the offsets; strings
 *   are copied out at once, so config_t is destroyed before returning.
 * - libconfig 1.5 truncates a plain integer beyond 32 bits without a word
 *   (10000000000 reads as 1410065408). Byte sizes are large, so for a plain
 *   integer the literal is read again from the file's text and used when it
 *   differs: "1048576" and "1048576L" both mean what they say.
 * - Defaults and freeing read the same rows, so a key is written once.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "config_private.h"

/* ---- defaults and freeing ---------------------------------------------- */

void ps_cfg_free_strv(char **v, size_t n) {
  for (size_t i = 0; v && i < n; i++)
    free(v[i]);
  free(v);
}

void ps_cfg_free_secret(char **s) {
  if (*s) {
    memset(*s, 0, strlen(*s));
    free(*s);
    *s = NULL;
  }
}

/* ---- the enums ---------------------------------------------------------- */

int ps_cfg_enum_lookup(const ps_cfg_enum *t, const char *name, int *out) {
  if (!name)
    return -EINVAL;
  for (; t->name; t++)
    if (strcmp(t->name, name) == 0) {
      *out = t->value;
      return 0;
    }
  return -EINVAL;
}

void ps_cfg_enum_list(ps_buf *b, const ps_cfg_enum *t) {
  size_t n = 0;
  while (t[n].name)
    n++;
  for (size_t i = 0; i < n; i++)
    ps_buf_printf(b, "%s\"%s\"", i == 0 ? "" : (i + 1 == n ? " or " : ", "), t[i].name);
}

const char *ps_cfg_enum_name_of(const ps_cfg_enum *t, int value) {
  for (; t->name; t++)
    if (t->value == value)
      return t->name;
  return "unknown";
}

static void *at(void *base, size_t off) { return (char *)base + off; }

void ps_cfg_defaults(const ps_cfg_key *table, void *base) {
  for (const ps_cfg_key *k = table; k->name; k++) {
    void *p = at(base, k->offset);
    switch (k->kind) {
    case PS_K_STR:
    case PS_K_URL:
    case PS_K_HOOK_URL:
      /* an allocation failure leaves NULL, which every reader takes as unset */
      *(char **)p = k->def_str ? strdup(k->def_str) : NULL;
      break;
    case PS_K_INT:
      *(int64_t *)p = k->def_int;
      break;
    case PS_K_FLOAT:
      *(double *)p = k->def_num;
      break;
    case PS_K_BOOL:
    case PS_K_ENUM:
      *(int *)p = (int)k->def_int;
      break;
    case PS_K_ENUMLIST:
      *(unsigned *)p = (unsigned)k->def_int;
      break;
    case PS_K_GROUP:
      ps_cfg_defaults(k->sub, base);
      break;
    case PS_K_VMETRICS: k->set_default(k, base); break;
    case PS_K_STRLIST:
    case PS_K_TYPES:
    case PS_K_TAGS:
    case PS_K_SOURCES:
      break; /* lists of the file's own: none by default (the caller zeroed) */
    }
  }
}

void ps_cfg_free(const ps_cfg_key *table, void *base) {
  for (const ps_cfg_key *k = table; k->name; k++)
    ps_cfg_free_key(k, base);
}

void ps_cfg_free_key(const ps_cfg_key *k, void *base) {
  void *p = at(base, k->offset);
  size_t *count = at(base, k->offset2);
  switch (k->kind) {
  case PS_K_STR:
  case PS_K_URL:
  case PS_K_HOOK_URL:
    free(*(char **)p);
    *(char **)p = NULL;
    break;
  case PS_K_STRLIST:
    ps_cfg_free_strv(*(char ***)p, *count);
    *(char ***)p = NULL;
    *count = 0;
    break;
  case PS_K_TYPES: {
    ps_type_decl *v = *(ps_type_decl **)p;
    for (size_t i = 0; v && i < *count; i++)
      free(v[i].key);
    free(v);
    *(ps_type_decl **)p = NULL;
    *count = 0;
    break;
  }
  case PS_K_TAGS: {
    ps_kv *v = *(ps_kv **)p;
    for (size_t i = 0; v && i < *count; i++) {
      free(v[i].key);
      free(v[i].value);
    }
    free(v);
    *(ps_kv **)p = NULL;
    *count = 0;
    break;
  }
  case PS_K_SOURCES: {
    ps_source_cfg *v = *(ps_source_cfg **)p;
    for (size_t i = 0; v && i < *count; i++)
      ps_cfg_free(k->sub, &v[i]);
    free(v);
    *(ps_source_cfg **)p = NULL;
    *count = 0;
    break;
  }
  case PS_K_GROUP:
    ps_cfg_free(k->sub, base);
    break;
  case PS_K_VMETRICS: k->release(k, base); break;
  case PS_K_INT:
  case PS_K_FLOAT:
  case PS_K_BOOL:
  case PS_K_ENUM:
  case PS_K_ENUMLIST:
    break;
  }
}

/* ---- messages ---------------------------------------------------------- */

const char *ps_cfg_type_word(int t) {
  switch (t) {
  case CONFIG_TYPE_GROUP: return "a group";
  case CONFIG_TYPE_INT:
  case CONFIG_TYPE_INT64: return "an integer";
  case CONFIG_TYPE_FLOAT: return "a float";
  case CONFIG_TYPE_STRING: return "a string";
  case CONFIG_TYPE_BOOL: return "a boolean";
  case CONFIG_TYPE_ARRAY: return "an array";
  case CONFIG_TYPE_LIST: return "a list";
  }
  return "nothing";
}

int ps_cfg_fail(ps_cfg_loader *L, const config_setting_t *s, const char *fmt, ...) {
  if (L->err && L->err->len == 0) {
    const char *file = s && config_setting_source_file(s) ? config_setting_source_file(s)
                                                          : L->path;
    unsigned line = s ? config_setting_source_line(s) : 0;
    if (line)
      ps_buf_printf(L->err, "%s:%u: ", file, line);
    else
      ps_buf_printf(L->err, "%s: ", file);
    va_list ap;
    va_start(ap, fmt);
    ps_buf_vprintf(L->err, fmt, ap);
    va_end(ap);
  }
  return -EINVAL;
}

/* The dotted name of a setting for messages: "batch.max_points",
 * "sources[2].format", "tags.host". */
static void setting_path(ps_buf *b, const config_setting_t *s) {
  if (!s || config_setting_is_root(s))
    return;
  const config_setting_t *parent = config_setting_parent(s);
  setting_path(b, parent);
  if (config_setting_name(s)) {
    if (b->len)
      ps_buf_putc(b, '.');
    ps_buf_puts(b, config_setting_name(s));
  } else {
    ps_buf_printf(b, "[%d]", config_setting_index(s) + 1);
  }
}

static size_t edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64)
    return SIZE_MAX;
  size_t prev[65], cur[65];
  for (size_t j = 0; j <= lb; j++)
    prev[j] = j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
      size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
      cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
    memcpy(prev, cur, (lb + 1) * sizeof *prev);
  }
  return prev[lb];
}

const char *ps_cfg_nearest_key(const ps_cfg_key *table, const char *name) {
  const char *best = NULL;
  size_t best_d = SIZE_MAX;
  for (const ps_cfg_key *k = table; k->name; k++) {
    size_t d = edit_distance(name, k->name);
    if (d < best_d) {
      best_d = d;
      best = k->name;
    }
  }
  size_t len = strlen(name);
  size_t limit = len < 6 ? 2 : len / 3 + 1;
  return best_d <= limit ? best : NULL;
}

static int fail_unknown(ps_cfg_loader *L, const config_setting_t *s, const ps_cfg_key *table,
                        const char *where) {
  const char *name = config_setting_name(s);
  const char *near = ps_cfg_nearest_key(table, name);
  ps_buf known;
  ps_buf_init(&known, 0);
  if (!near)
    for (const ps_cfg_key *k = table; k->name; k++)
      ps_buf_printf(&known, "%s%s", k == table ? "" : ", ", k->name);
  int rc;
  if (near)
    rc = ps_cfg_fail(L, s, "unknown key '%s' in %s; did you mean '%s'?", name, where, near);
  else
    rc = ps_cfg_fail(L, s, "unknown key '%s' in %s; known keys: %s", name, where,
                     known.data ? known.data : "");
  ps_buf_free(&known);
  return rc;
}

/* ---- typed getters ----------------------------------------------------- */

static int set_string(ps_cfg_loader *L, char **dst, const char *v) {
  char *copy = strdup(v);
  if (!copy)
    return ps_cfg_fail(L, NULL, "out of memory");
  free(*dst);
  *dst = copy;
  return 0;
}

/* libconfig 1.5 keeps only 32 bits of a plain integer literal; find the
 * literal after "name =" or "name:" on the setting's line and read it whole. */
static int reread_int(const ps_cfg_loader *L, const config_setting_t *s, int64_t *out) {
  const char *file = config_setting_source_file(s);
  const char *name = config_setting_name(s);
  unsigned line = config_setting_source_line(s);
  if (!L->text || !file || strcmp(file, L->path) != 0 || !name || line == 0)
    return -ENOENT;
  const char *p = L->text, *end = L->text + L->text_len;
  for (unsigned n = 1; n < line && p < end; n++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      return -ENOENT;
    p = nl + 1;
  }
  const char *eol = memchr(p, '\n', (size_t)(end - p));
  if (!eol)
    eol = end;
  size_t nlen = strlen(name);
  for (const char *q = p; q + nlen <= eol; q++) {
    if (memcmp(q, name, nlen) != 0)
      continue;
    if (q > p && (q[-1] == '_' || q[-1] == '-' || (q[-1] >= '0' && q[-1] <= '9') ||
                  ((q[-1] | 0x20) >= 'a' && (q[-1] | 0x20) <= 'z')))
      continue;
    const char *r = q + nlen;
    while (r < eol && (*r == ' ' || *r == '\t'))
      r++;
    if (r >= eol || (*r != '=' && *r != ':'))
      continue;
    r++;
    while (r < eol && (*r == ' ' || *r == '\t'))
      r++;
    char num[40];
    size_t k = 0;
    while (r < eol && k + 1 < sizeof num &&
           (*r == '-' || *r == '+' || *r == 'x' || *r == 'X' ||
            (*r >= '0' && *r <= '9') || ((*r | 0x20) >= 'a' && (*r | 0x20) <= 'f')))
      num[k++] = *r++;
    num[k] = '\0';
    /* libconfig reads "010" as ten, not as octal: only 0x switches base */
    const char *digits = num + (num[0] == '-' || num[0] == '+');
    int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
    char *stop;
    errno = 0;
    long long v = strtoll(num, &stop, base);
    if (k == 0 || *stop != '\0' || errno)
      return -ERANGE;
    *out = v;
    return 0;
  }
  return -ENOENT;
}

static int get_int(ps_cfg_loader *L, const config_setting_t *s, const ps_cfg_key *k,
                   const char *key, int64_t *out) {
  int t = config_setting_type(s);
  if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
    return ps_cfg_fail(L, s, "key '%s': expected an integer (%s), got %s; write a whole "
                       "number without quotes, e.g. %s = %lld;",
                       key, k->doc, ps_cfg_type_word(t), k->name,
                       (long long)(k->min > 1000 ? k->min : 1000));
  int64_t v = config_setting_get_int64(s);
  if (t == CONFIG_TYPE_INT) {
    int64_t whole = 0;
    int rc = reread_int(L, s, &whole);
    if (rc == -ERANGE)
      return ps_cfg_fail(L, s, "key '%s': the number is out of range; use a value between "
                         "%lld and %lld", key, (long long)k->min, (long long)k->max);
    if (rc == 0)
      v = whole;
  }
  if (v < k->min || v > k->max) {
    if (k->max == INT64_MAX)
      return ps_cfg_fail(L, s, "key '%s': %lld is too small; use at least %lld (%s)", key,
                         (long long)v, (long long)k->min, k->doc);
    return ps_cfg_fail(L, s, "key '%s': %lld is out of range; use a value from %lld to %lld "
                       "(%s)",
                       key, (long long)v, (long long)k->min, (long long)k->max, k->doc);
  }
  *out = v;
  return 0;
}

static int want_string(ps_cfg_loader *L, const config_setting_t *s, const ps_cfg_key *k,
                       const char *key, const char **out) {
  int t = config_setting_type(s);
  if (t != CONFIG_TYPE_STRING)
    return ps_cfg_fail(L, s, "key '%s': expected a string (%s), got %s; put the value in "
                       "double quotes", key, k->doc, ps_cfg_type_word(t));
  *out = config_setting_get_string(s);
  return 0;
}

static int apply_enum(ps_cfg_loader *L, const config_setting_t *s, const ps_cfg_key *k,
                      const char *key, int *out) {
  if (config_setting_type(s) == CONFIG_TYPE_BOOL && k->takes_bool &&
      ps_cfg_enum_lookup(k->names, config_setting_get_bool(s) ? "true" : "false", out) == 0)
    return 0;
  const char *v = NULL;
  int rc = want_string(L, s, k, key, &v);
  if (rc)
    return rc;
  if (ps_cfg_enum_lookup(k->names, v, out) == 0)
    return 0;
  ps_buf choices;
  ps_buf_init(&choices, 0);
  ps_cfg_enum_list(&choices, k->names);
  rc = ps_cfg_fail(L, s, "key '%s': \"%s\" is not valid (%s); use %s", key, v, k->doc,
                   choices.data ? choices.data : "");
  ps_buf_free(&choices);
  return rc;
}

static int apply_strlist(ps_cfg_loader *L, const config_setting_t *s, const ps_cfg_key *k,
                         const char *key, void *base) {
  int t = config_setting_type(s);
  if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
    return ps_cfg_fail(L, s, "key '%s': expected %s, got %s", key, k->doc,
                       ps_cfg_type_word(t));
  char ***vec = (char ***)((char *)base + k->offset);
  size_t *count = (size_t *)((char *)base + k->offset2);
  int n = config_setting_length(s);
  for (int i = 0; i < n; i++) {
    const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
    if (config_setting_type(e) != CONFIG_TYPE_STRING)
      return ps_cfg_fail(L, e, "key '%s': element %d is %s; every element must be a string "
                         "in double quotes (%s)",
                         key, i + 1, ps_cfg_type_word(config_setting_type(e)), k->doc);
    const char *v = config_setting_get_string(e);
    if (!v[0])
      return ps_cfg_fail(L, e, "key '%s': element %d is empty; remove it", key, i + 1);
  }
  ps_cfg_free_key(k, base);
  if (n == 0)
    return 0;
  char **v = calloc((size_t)n, sizeof *v);
  if (!v)
    return ps_cfg_fail(L, s, "out of memory");
  *vec = v;
  for (int i = 0; i < n; i++) {
    v[i] = strdup(config_setting_get_string(config_setting_get_elem(s, (unsigned)i)));
    if (!v[i])
      return ps_cfg_fail(L, s, "out of memory");
    *count = (size_t)i + 1;
  }
  return 0;
}

/* A list of names of `k->names` into a bit set: ["run_failed", ...]. */
static int apply_enumlist(ps_cfg_loader *L, const config_setting_t *s, const ps_cfg_key *k,
                          const char *key, void *base) {
  int t = config_setting_type(s);
  if (t != CONFIG_TYPE_ARRAY && t != CONFIG_TYPE_LIST)
    return ps_cfg_fail(L, s, "key '%s': expected %s, got %s", key, k->doc,
                       ps_cfg_type_word(t));
  unsigned bits = 0;
  for (int i = 0; i < config_setting_length(s); i++) {
    const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
    int v = 0;
    const char *name = config_setting_type(e) == CONFIG_TYPE_STRING
                           ? config_setting_get_string(e)
                           : NULL;
    if (name && ps_cfg_enum_lookup(k->names, name, &v) == 0) {
      bits |= 1u << (unsigned)v;
      continue;
    }
    ps_buf choices;
    ps_buf_init(&choices, 0);
    ps_cfg_enum_list(&choices, k->names);
    const char *use = choices.data ? choices.data : "";
    int rc = name ? ps_cfg_fail(L, e, "key '%s': \"%s\" is not a known name; use %s", key,
                                name, use)
                  : ps_cfg_fail(L, e, "key '%s': element %d is %s; use %s", key, i + 1,
                                ps_cfg_type_word(config_setting_type(e)), use);
    ps_buf_free(&choices);
    return rc;
  }
  *(unsigned *)((char *)base + k->offset) = bits;
  return 0;
}

static int apply_types(ps_cfg_loader *L, const config_setting_t *s, const ps_cfg_key *k,
                       const char *key, void *base) {
  if (config_setting_type(s) != CONFIG_TYPE_GROUP)
    return ps_cfg_fail(L, s, "key '%s': expected %s, e.g. types = { count = \"integer\"; }, "
                       "got %s", key, k->doc, ps_cfg_type_word(config_setting_type(s)));
  ps_type_decl **vec = (ps_type_decl **)((char *)base + k->offset);
  size_t *count = (size_t *)((char *)base + k->offset2);
  int n = config_setting_length(s);
  ps_type_decl *v = n ? calloc((size_t)n, sizeof *v) : NULL;
  if (n && !v)
    return ps_cfg_fail(L, s, "out of memory");
  ps_cfg_free_key(k, base);
  *vec = v;
  for (int i = 0; i < n; i++) {
    const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
    if (config_setting_type(e) != CONFIG_TYPE_STRING)
      return ps_cfg_fail(L, e, "key '%s.%s': expected a type name in double quotes, got %s; "
                         "use \"integer\", \"unsigned\", \"float\", \"string\" or \"boolean\"",
                         key, config_setting_name(e),
                         ps_cfg_type_word(config_setting_type(e)));
    const char *tn = config_setting_get_string(e);
    int type = 0;
    if (ps_cfg_enum_lookup(k->names, tn, &type))
      return ps_cfg_fail(L, e, "key '%s.%s': \"%s\" is not a field type; use \"integer\", "
                         "\"unsigned\", \"float\", \"string\" or \"boolean\"",
                         key, config_setting_name(e), tn);
    v[i].type = (ps_ftype)type;
    v[i].key = strdup(config_setting_name(e));
    if (!v[i].key)
      return ps_cfg_fail(L, e, "out of memory");
    *count = (size_t)i + 1;
  }
  return 0;
}

/* What follows "http://" or "https://" in v; NULL for any other scheme. */
const char *ps_cfg_after_http_scheme(const char *v) {
  if (strncmp(v, "http://", 7) == 0)
    return v + 7;
  if (strncmp(v, "https://", 8) == 0)
    return v + 8;
  return NULL;
}

static int check_url(ps_cfg_loader *L, const config_setting_t *s, const char *key,
                     const char *v) {
  const char *rest = ps_cfg_after_http_scheme(v);
  if (!rest || !rest[0] || rest[0] == '/' || strpbrk(v, " \t\r\n?#"))
    return ps_cfg_fail(L, s, "key '%s': \"%s\" is not an http(s) URL; write it as "
                       "\"http://HOST:PORT\" (or https://), without a path or query",
                       key, v);
  /* The URL is printed by check, mark and the unreachable-server messages:
   * a password inside it would reach every log. */
  size_t host_len = strcspn(rest, "/");
  if (memchr(rest, '@', host_len))
    return ps_cfg_fail(L, s, "key '%s': the URL holds credentials (USER:PASSWORD@); "
                       "they would be printed in messages; write the URL without them "
                       "and use influxdb.username with password_file (v1) or "
                       "token_file (v2)", key);
  return 0;
}

/* A webhook URL may have a path and a query (Slack's are all path); it is
 * a secret, so messages never repeat it. */
static int check_hook_url(ps_cfg_loader *L, const config_setting_t *s, const char *key,
                          const char *v) {
  const char *rest = ps_cfg_after_http_scheme(v);
  if (!rest || !rest[0] || rest[0] == '/' || strpbrk(v, " \t\r\n"))
    return ps_cfg_fail(L, s, "key '%s': not an http(s) URL (the value is not repeated: a "
                       "webhook URL is a secret); write it as \"https://HOST/PATH\" without "
                       "spaces", key);
  return 0;
}

int ps_cfg_get_float(ps_cfg_loader *L, const config_setting_t *s, const ps_cfg_key *k,
                     const char *key, double *out) {
  int t = config_setting_type(s);
  double lo = (double)k->min / 1e6, hi = (double)k->max / 1e6, v = 0;
  if (t == CONFIG_TYPE_FLOAT) {
    v = config_setting_get_float(s);
  } else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64) {
    int64_t whole = config_setting_get_int64(s);
    if (t == CONFIG_TYPE_INT && reread_int(L, s, &whole) == -ERANGE)
      return ps_cfg_fail(L, s, "key '%s': the number is out of range; use a value from %g "
                         "to %g (%s)", key, lo, hi, k->doc);
    v = (double)whole;
  } else {
    return ps_cfg_fail(L, s, "key '%s': expected a number (%s), got %s; write the number "
                       "without quotes", key, k->doc, ps_cfg_type_word(t));
  }
  if (!isfinite(v) || v < lo || v > hi)
    return ps_cfg_fail(L, s, "key '%s': %g is out of range; use a value from %g to %g (%s)",
                       key, v, lo, hi, k->doc);
  *out = v;
  return 0;
}

/* ---- the walker -------------------------------------------------------- */

static int apply_key(ps_cfg_loader *L, const config_setting_t *s, const ps_cfg_key *k,
                     void *base) {
  ps_buf kb;
  ps_buf_init(&kb, 0);
  setting_path(&kb, s);
  const char *key = kb.data ? kb.data : k->name;
  int rc = 0;
  switch (k->kind) {
  case PS_K_STR:
  case PS_K_URL:
  case PS_K_HOOK_URL: {
    const char *v = NULL;
    rc = want_string(L, s, k, key, &v);
    if (!rc && k->nonempty && !v[0])
      rc = ps_cfg_fail(L, s, "key '%s': must not be empty; give %s", key, k->doc);
    if (!rc && k->kind == PS_K_URL)
      rc = check_url(L, s, key, v);
    if (!rc && k->kind == PS_K_HOOK_URL)
      rc = check_hook_url(L, s, key, v);
    if (!rc)
      rc = set_string(L, at(base, k->offset), v);
    break;
  }
  case PS_K_INT: {
    int64_t v = 0;
    rc = get_int(L, s, k, key, &v);
    if (!rc)
      *(int64_t *)at(base, k->offset) = v;
    break;
  }
  case PS_K_BOOL:
    if (config_setting_type(s) != CONFIG_TYPE_BOOL)
      rc = ps_cfg_fail(L, s, "key '%s': expected true or false (without quotes), got %s; "
                       "write %s = true; or %s = false;", key,
                       ps_cfg_type_word(config_setting_type(s)), k->name, k->name);
    else
      *(int *)at(base, k->offset) = config_setting_get_bool(s) ? 1 : 0;
    break;
  case PS_K_ENUM: {
    int v = 0;
    rc = apply_enum(L, s, k, key, &v);
    if (!rc)
      *(int *)at(base, k->offset) = v;
    break;
  }
  case PS_K_STRLIST:
    rc = apply_strlist(L, s, k, key, base);
    break;
  case PS_K_ENUMLIST:
    rc = apply_enumlist(L, s, k, key, base);
    break;
  case PS_K_TYPES:
    rc = apply_types(L, s, k, key, base);
    break;
  case PS_K_GROUP:
    if (config_setting_type(s) != CONFIG_TYPE_GROUP)
      rc = ps_cfg_fail(L, s, "key '%s': expected a group %s = { ... };, got %s", key, key,
                       ps_cfg_type_word(config_setting_type(s)));
    else
      rc = ps_cfg_walk_group(L, s, k->sub, base, key);
    break;
  case PS_K_TAGS: rc = k->apply(L, s, k, key, base); break;
  case PS_K_SOURCES: rc = k->apply(L, s, k, key, base); break;
  case PS_K_FLOAT:
    rc = ps_cfg_get_float(L, s, k, key, at(base, k->offset));
    break;
  case PS_K_VMETRICS: rc = k->apply(L, s, k, key, base); break;
  }
  ps_buf_free(&kb);
  return rc;
}

int ps_cfg_walk_group(ps_cfg_loader *L, const config_setting_t *g, const ps_cfg_key *table,
                      void *base, const char *where) {
  int n = config_setting_length(g);
  for (int i = 0; i < n; i++) {
    const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
    const char *name = config_setting_name(s);
    const ps_cfg_key *k = table;
    while (k->name && strcmp(k->name, name) != 0)
      k++;
    if (!k->name)
      return fail_unknown(L, s, table, where);
    int rc = apply_key(L, s, k, base);
    if (rc)
      return rc;
  }
  return 0;
}
