/*
 * formats/loadgen_read.c: a loadgen line as a checked JSON value
 * (agent/formats/loadgen_private.h).
 *
 * - A line in the strict grammar (core/jsonspan.h) is read where it lies.
 * - A record that is not strict JSON (cJSON accepts trailing text, raw
 *   control characters in strings, "01" and "1.") is read by cJSON as
 *   before and written back as strict JSON (numbers with 17 digits, the
 *   same doubles), which is then read like any record: the same points
 *   either way, through one reader.
 * - A long line gets an index of its containers, so that skipping a
 *   stage's thousands of blocks to reach the member after them is a
 *   lookup.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "loadgen_private.h"

/* Lines longer than this get an index of their containers down to the
 * items of a stage (record > stats > stages > stage > blocks > block): a
 * full run's perf-finish has about 30,000 of them. */
#define INDEX_FROM_BYTES ((size_t)64 << 10)
#define INDEX_DEPTH 6
#define INDEX_CAP ((size_t)1 << 16)

static int put_json(ps_buf *b, const cJSON *v, int depth);

static int put_json_string(ps_buf *b, const char *s) {
  static const char hex[] = "0123456789abcdef";
  int rc = ps_buf_putc(b, '"');
  for (const unsigned char *c = (const unsigned char *)s; *c && !rc; c++) {
    if (*c == '"' || *c == '\\') {
      char e[2] = {'\\', (char)*c};
      rc = ps_buf_append(b, e, 2);
    } else if (*c < 0x20) {
      char e[6] = {'\\', 'u', '0', '0', hex[*c >> 4], hex[*c & 15]};
      rc = ps_buf_append(b, e, 6);
    } else {
      rc = ps_buf_putc(b, (char)*c);
    }
  }
  return rc ? rc : ps_buf_putc(b, '"');
}

/* A cJSON value as strict JSON: numbers with 17 significant digits (the
 * same double read back), non-finite numbers as null (neither is a finite
 * number, which is all this parser asks of either). */
static int put_json(ps_buf *b, const cJSON *v, int depth) {
  if (depth > LG_MAX_DEPTH)
    return -EINVAL;
  if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
    int obj = cJSON_IsObject(v), rc = ps_buf_putc(b, obj ? '{' : '[');
    const cJSON *it;
    int first = 1;
    cJSON_ArrayForEach(it, v) {
      if (!rc && !first)
        rc = ps_buf_putc(b, ',');
      first = 0;
      if (!rc && obj)
        rc = put_json_string(b, it->string ? it->string : "");
      if (!rc && obj)
        rc = ps_buf_putc(b, ':');
      if (!rc)
        rc = put_json(b, it, depth + 1);
    }
    return rc ? rc : ps_buf_putc(b, obj ? '}' : ']');
  }
  if (cJSON_IsString(v))
    return put_json_string(b, v->valuestring ? v->valuestring : "");
  if (cJSON_IsNumber(v)) {
    if (!isfinite(v->valuedouble))
      return ps_buf_puts(b, "null");
    return ps_buf_printf(b, "%.17g", v->valuedouble);
  }
  if (cJSON_IsTrue(v))
    return ps_buf_puts(b, "true");
  if (cJSON_IsFalse(v))
    return ps_buf_puts(b, "false");
  return ps_buf_puts(b, "null");
}

/* An index for a long record (none for a short one, or when there is no
 * memory for it: it only saves time). */
static ps_jindex *index_for(ps_parser *p, size_t len) {
  if (len < INDEX_FROM_BYTES)
    return NULL;
  if (!p->rec.ix.open) {
    p->rec.ix.open = malloc(INDEX_CAP * sizeof *p->rec.ix.open);
    p->rec.ix.close = malloc(INDEX_CAP * sizeof *p->rec.ix.close);
    if (!p->rec.ix.open || !p->rec.ix.close) {
      free(p->rec.ix.open);
      free(p->rec.ix.close);
      p->rec.ix.open = p->rec.ix.close = NULL;
      return NULL;
    }
    p->rec.ix.cap = INDEX_CAP;
    p->rec.ix.depth = INDEX_DEPTH;
  }
  return &p->rec.ix;
}

int lg_read_record(ps_parser *p, const char *data, size_t len, ps_jv *root, int *owned) {
  *owned = 0;
  ps_jindex *ix = index_for(p, len);
  p->rec.ixp = NULL;
  if (ps_json_check_indexed(data, len, LG_MAX_DEPTH, ix, root) == 0) {
    p->rec.ixp = ix;
    return 0;
  }
  cJSON *t = cJSON_ParseWithLength(data, len);
  if (!t)
    return -EINVAL;
  ps_buf_reset(&p->rec.norm);
  int rc = put_json(&p->rec.norm, t, 0);
  cJSON_Delete(t);
  if (rc < 0)
    return rc == -ENOMEM ? -ENOMEM : -EINVAL;
  ix = index_for(p, p->rec.norm.len);
  if (ps_json_check_indexed(p->rec.norm.data, p->rec.norm.len, LG_MAX_DEPTH + 1, ix, root) < 0)
    return -EINVAL;
  p->rec.ixp = ix;
  *owned = 1;
  return 0;
}

void lg_record_free(lg_record *r) {
  free(r->ix.open);
  free(r->ix.close);
  r->ix.open = r->ix.close = NULL;
  r->ix.cap = r->ix.n = 0;
  r->ixp = NULL;
  ps_buf_free(&r->norm);
}

void lg_record_rebase(lg_record *r, ptrdiff_t d) { r->ix.base += d; }

void lg_record_trim(lg_record *r) {
  if (r->norm.cap > ((size_t)1 << 20))
    ps_buf_free(&r->norm);
}
