/*
 * fuzz_jsonspan: core/jsonspan.h against cJSON. Whatever ps_json_check()
 * accepts, cJSON must accept too, and walking the spans must give what
 * cJSON's tree holds: the same kinds, keys, strings (unescaped) and
 * numbers (ps_lp_decimal of the span against cJSON's strtod), members in
 * the same order, and ps_jv_get() finding the first member of a name, the
 * one cJSON finds (but after a key holding a NUL, which cJSON reads only
 * up to it). The
 * walk goes once without an index and once with one of a depth and size
 * taken from the first input byte (so indexed and walked skips meet).
 * A member found by name is also found, the same span, by the indexed
 * lookup (ps_jv_get_ix) and in the object's member table (ps_jtable).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/jsonspan.h"
#include "influx/numfmt.h"

static void same(ps_jv v, const cJSON *c, const ps_jindex *ix, ps_buf *scratch, int depth);

/* Returns the unescaped length. */
static size_t same_string(ps_jv inner, const char *want, ps_buf *scratch, int key) {
  size_t off, len;
  ps_buf_reset(scratch);
  int rc = key ? ps_jkey_string(inner, scratch, &off, &len)
               : ps_jv_string(inner, scratch, &off, &len);
  if (rc != 0)
    __builtin_trap();
  /* cJSON's C string ends at an unescaped \u0000; compare that far */
  if (strcmp(scratch->data + off, want) != 0)
    __builtin_trap();
  return len;
}

/* The first member whose key, unescaped in full, is `name`: found here by
 * unescaping every key, apart from ps_jkey_is's compare as it goes. */
static ps_jv first_named(ps_jv obj, const char *name, ps_buf *scratch) {
  ps_jiter it = ps_jv_iter_ix(obj, NULL);
  ps_jmember m;
  size_t off, len, n = strlen(name);
  while (ps_jiter_next(&it, &m)) {
    ps_buf_reset(scratch);
    if (ps_jkey_string(m.key, scratch, &off, &len) != 0)
      __builtin_trap();
    if (len == n && memcmp(scratch->data + off, name, n) == 0)
      return m.val;
  }
  __builtin_trap();
}

/* The first member of that name is the one every lookup finds, however
 * long its escaped key, and the one cJSON finds, unless a key before it
 * holds a NUL: cJSON compares its keys as C strings, so "a\u0000b" is an
 * "a" to it, and jsonspan's "a" is the later member named "a" in full. */
static void same_lookup(ps_jv v, const cJSON *c, const char *name, const ps_jindex *ix,
                        ps_buf *scratch, int depth, int nul_before) {
  ps_jv got, by_ix, first = first_named(v, name, scratch);
  if (!ps_jv_get(v, name, &got) || got.p != first.p || got.end != first.end)
    __builtin_trap();
  if (!nul_before) {
    const cJSON *want = cJSON_GetObjectItemCaseSensitive(c, name);
    if (!want)
      __builtin_trap();
    same(got, want, ix, scratch, depth + 1);
  }
  if (!ps_jv_get_ix(v, name, ix, &by_ix) || by_ix.p != got.p || by_ix.end != got.end)
    __builtin_trap();
  ps_jtable tab = {0};
  if (ps_jtable_fill(&tab, v, ix) == 0) {
    ps_jv in_tab = ps_jtable_get(&tab, name);
    if (in_tab.p != got.p || in_tab.end != got.end)
      __builtin_trap();
  }
  ps_jtable_free(&tab);
}

static void same(ps_jv v, const cJSON *c, const ps_jindex *ix, ps_buf *scratch, int depth) {
  switch (ps_jv_kind(v)) {
  case PS_JV_NULL:
    if (!cJSON_IsNull(c))
      __builtin_trap();
    return;
  case PS_JV_TRUE:
  case PS_JV_FALSE:
    if (!cJSON_IsBool(c) || (ps_jv_kind(v) == PS_JV_TRUE) != cJSON_IsTrue(c))
      __builtin_trap();
    return;
  case PS_JV_NUMBER: {
    double d;
    if (!cJSON_IsNumber(c))
      __builtin_trap();
    int rc = ps_lp_decimal(v.p, (size_t)(v.end - v.p), &d);
    if (rc == -ERANGE ? isfinite(c->valuedouble) : (rc != 0 || d != c->valuedouble))
      __builtin_trap();
    return;
  }
  case PS_JV_STRING:
    if (!cJSON_IsString(c))
      __builtin_trap();
    same_string(v, c->valuestring, scratch, 0);
    return;
  case PS_JV_ARRAY:
  case PS_JV_OBJECT: {
    int obj = ps_jv_kind(v) == PS_JV_OBJECT;
    if (obj ? !cJSON_IsObject(c) : !cJSON_IsArray(c))
      __builtin_trap();
    ps_jiter it = ps_jv_iter_ix(v, ix);
    ps_jmember m;
    const cJSON *child = c->child;
    int nul_before = 0;
    while (ps_jiter_next(&it, &m)) {
      if (!child || (obj && !m.key.p) || (!obj && m.key.p))
        __builtin_trap();
      if (obj) {
        size_t klen = same_string(m.key, child->string, scratch, 1);
        /* keys holding a NUL are not looked up by name: cJSON's C string
         * ends there */
        if (klen == strlen(child->string))
          same_lookup(v, c, child->string, ix, scratch, depth, nul_before);
        nul_before |= klen != strlen(child->string);
      }
      same(m.val, child, ix, scratch, depth + 1);
      child = child->next;
    }
    if (child)
      __builtin_trap();
    return;
  }
  default:
    __builtin_trap();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  unsigned depth = 1 + data[0] % 8, cap = 1u << (data[0] >> 5);
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  ps_jv root;
  if (ps_json_check(text, len, 64, &root) != 0)
    return 0;
  cJSON *c = cJSON_ParseWithLength(text, len);
  if (!c)
    __builtin_trap(); /* strict JSON that cJSON refuses */
  ps_buf scratch;
  ps_buf_init(&scratch, 0);
  same(root, c, NULL, &scratch, 0);
  uint32_t open[128], close[128];
  ps_jindex ix = {.open = open, .close = close, .cap = cap, .depth = depth};
  ps_jv again;
  if (ps_json_check_indexed(text, len, 64, &ix, &again) != 0 || again.p != root.p ||
      again.end != root.end)
    __builtin_trap();
  same(root, c, &ix, &scratch, 0);
  cJSON_Delete(c);
  ps_buf_free(&scratch);
  return 0;
}
