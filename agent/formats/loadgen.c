/*
 * formats/loadgen.c: Agoric testnet-load-generator results (perf.jsonl)
 * into the loadgen_* measurements of docs/schema.md (docs/loadgen.md).
 *
 * Design
 * - Only perf.jsonl is read, line by line. Streamed lines are small and map
 *   to one point each (a storage line to one point per area plus `total`);
 *   the single perf-finish line holds everything else and can be ~10 MB.
 * - Records are read in place (core/jsonspan.h), not as a tree: the text is
 *   checked once, then members are found by skipping over values, and each
 *   block or cycle of perf-finish is read when its point is emitted. A
 *   cJSON tree of a 9 MB perf-finish line was ~800,000 allocations and a
 *   locale-aware strtod per number, and was built whole, in one loop turn,
 *   before its first point was sent; now its points go out 5,000 a turn
 *   while the rest of the line has not been read yet.
 * - A record that is not strict JSON (cJSON accepts trailing text, raw
 *   control characters in strings, "01" and "1.") is read by cJSON as
 *   before and written back as strict JSON (numbers with 17 digits, the
 *   same doubles), which is then read like any record: the same points
 *   either way, through one reader.
 * - Back-pressure (emit.h -EAGAIN): perf-finish is read once and kept with a
 *   cursor (phase, stage, item) naming the next point to emit, so a resumed
 *   call continues at the refused point without reading the line again.
 *   The cursor holds positions in the line, moved along when the driver
 *   hands the same record over at another address. Small records remember
 *   how many of their points were accepted and skip those on the resumed
 *   call.
 * - Types follow docs/schema.md's integer list by field name; every other number
 *   is a float, whatever the JSON text looked like. A null, a missing key, a
 *   non-finite number or a non-integral value for an integer field is an
 *   absent field, never a zero.
 * - Points borrow their strings from the parser: keys and string values
 *   are unescaped into an arena emptied at each point, and the large
 *   objects (the record, stats, the current stage) are looked up through a
 *   table of their members made once.
 * - The facts the run tracker needs (runs.h) are updated as lines are read
 *   and offered through the ops (run_facts, set_run_facts). Reading a run
 *   folder and judging it is the run module's (input/feed_run.c); this file
 *   only parses what it is given: the first line and mtime of perf.jsonl
 *   come with open() (ps_input_head), so a parser opened mid-file after a
 *   restart still knows timeOrigin.
 */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/jsonspan.h"
#include "core/jsontext.h"
#include "formats/format.h"
#include "influx/numfmt.h"
#include "runs/runs.h"

#define LG_MAX_FIELDS 96
#define LG_MAX_TAGS 8
#define LG_KEY_LEN 64
/* cJSON's nesting limit: a deeper record was refused before, and is now */
#define LG_MAX_DEPTH 1000
#define ARENA_CHUNK 16384
/* Lines longer than this get an index of their containers down to the
 * items of a stage (record > stats > stages > stage > blocks > block): a
 * full run's perf-finish has about 30,000 of them. */
#define INDEX_FROM_BYTES ((size_t)64 << 10)
#define INDEX_DEPTH 6
#define INDEX_CAP ((size_t)1 << 16)

typedef enum finish_phase {
  FP_EVENT = 0,
  FP_STAGE,
  FP_BLOCKSUM,
  FP_CYCLESUM,
  FP_BLOCKS,
  FP_CYCLES,
  FP_RUN,
  FP_DONE,
} finish_phase;

typedef struct storage_area {
  char name[256];
  int64_t kib;
} storage_area;

/* The members of one object, for the objects looked up many times. */
typedef struct jtable {
  ps_jmember *m;
  size_t n, cap;
} jtable;

/* Strings of the point being built: chunks that stay put until reset. */
typedef struct arena_chunk {
  struct arena_chunk *next;
  size_t used, cap;
  char data[];
} arena_chunk;

typedef struct lg_scratch {
  ps_tag tags[LG_MAX_TAGS];
  ps_field fields[LG_MAX_FIELDS];
  char keybuf[LG_MAX_FIELDS][LG_KEY_LEN];
  char tagbuf[4][96];
  char strbuf[64];
} lg_scratch;

struct ps_parser {
  int64_t mtime_ns; /* of perf.jsonl when opened: the origin's fallback */
  ps_run_id id;
  ps_run_facts facts;

  /* resume state of a small record */
  int resuming;
  uint64_t resume_hash; /* of the record being resumed (and of perf-finish) */
  size_t accepted; /* points of the current record the emitter took */
  size_t skip;     /* points still to skip on a resumed call */

  /* the record as strict JSON, when cJSON had to read it first */
  ps_buf norm;
  /* where the containers of a long record end (ixp: &ix while it applies) */
  ps_jindex ix;
  const ps_jindex *ixp;

  /* resume state of perf-finish: positions in its text */
  int fin_active;
  int fin_owned;        /* the text is `norm`, not the driver's line */
  const char *fin_base; /* the text the positions below point into */
  size_t fin_len;
  finish_phase phase;
  ps_jv fin_root, fin_stats;
  jtable root_tab, stats_tab, stage_tab, item_tab;
  ps_jiter stage_it; /* the stages after the current one */
  ps_jmember fin_stage; /* the current stage: its key and value */
  ps_jiter item_it;     /* the items after the current one */
  ps_jmember fin_item;  /* the current item (val.p NULL: none left) */
  double fin_wall;
  char fin_envelope_stage[24];

  /* scratch for one point: 10 KB, allocated by the first line and given
   * back with the perf-finish (release_long), since a run file's parser
   * lives as long as the agent tracks the file */
  lg_scratch *s;
  size_t ntags;
  size_t nfields;
  arena_chunk *arena;

  storage_area *areas;
  size_t nareas, areas_cap;
};

/* ---- names and lists ---------------------------------------------------- */

static const char *const INT_EVENT[] = {"block", NULL};
static const char *const INT_PROCESS[] = {
    "vmData", "vmExe",  "vmHwm",   "vmLib",   "vmLocked",
    "vmPeak", "vmPinned", "vmPte", "vmRss",   "vmSize",
    "vmStack", "vmSwap", "rssAnon", "rssFile", "rssShmem", NULL};
static const char *const INT_BLOCK[] = {
    "blockHeight",  "blockTime",     "chainBlockDuration", "computrons",
    "deliveries",   "firstCrankNum", "lastCrankNum",       "slogLines", NULL};
static const char *const INT_SUMMARY[] = {"blockCount", "cycleCount",
                                          "startBlockHeight", "endBlockHeight",
                                          NULL};
static const char *const SKIP_ENVELOPE[] = {"timestamp", "stage", "elapsed",
                                            "type", NULL};
static const char *const SKIP_PROCESS[] = {"timestamp", "stage", "elapsed",
                                           "type", "processType", "vatID",
                                           "name", NULL};
static const char *const SKIP_BLOCK[] = {"liveMode", NULL};

/* Called for every member of every record: the first byte settles most
 * comparisons without a call. */
static int in_list(const char *const *list, const char *s) {
  for (; list && *list; list++)
    if ((*list)[0] == s[0] && strcmp(*list, s) == 0)
      return 1;
  return 0;
}

/* ---- JSON values ------------------------------------------------------- */

/* A NUL-terminated copy of `n` bytes that lives until the next arena_reset. */
static char *arena_take(ps_parser *p, size_t n) {
  arena_chunk *c = p->arena;
  if (!c || c->cap - c->used < n + 1) {
    size_t cap = n + 1 > ARENA_CHUNK ? n + 1 : ARENA_CHUNK;
    arena_chunk *nc = malloc(sizeof *nc + cap);
    if (!nc)
      return NULL;
    nc->used = 0;
    nc->cap = cap;
    nc->next = c;
    p->arena = c = nc;
  }
  char *s = c->data + c->used;
  c->used += n + 1;
  return s;
}

/* Keeps the first chunk (a point's strings fit it) and empties it. */
static void arena_reset(ps_parser *p) {
  arena_chunk *c = p->arena;
  if (!c)
    return;
  while (c->next) {
    arena_chunk *n = c->next;
    free(c);
    c = n;
  }
  c->used = 0;
  p->arena = c;
}

/* The unescaped text of a key span or a string value, in the arena. */
static const char *span_str(ps_parser *p, ps_jv inner) {
  size_t n = (size_t)(inner.end - inner.p);
  char *s = arena_take(p, n);
  if (!s)
    return NULL;
  if (!memchr(inner.p, '\\', n)) {
    memcpy(s, inner.p, n);
    s[n] = '\0';
    return s;
  }
  ps_buf b = {s, 0, n + 1, 0}; /* room for n bytes and the NUL, no realloc */
  size_t off, len;
  if (ps_jkey_string(inner, &b, &off, &len) < 0)
    return NULL;
  return s;
}

static const char *key_str(ps_parser *p, ps_jmember m) { return span_str(p, m.key); }

/* A string value's text (NULL for any other kind). */
static const char *jv_str(ps_parser *p, ps_jv v) {
  if (ps_jv_kind(v) != PS_JV_STRING)
    return NULL;
  ps_jv inner = {v.p + 1, v.end - 1};
  return span_str(p, inner);
}

/* What cJSON's valuedouble held: the number's correctly rounded value
 * (strtod's), +-Inf beyond the double range. The text was checked as a
 * JSON number, so its digits are gathered without checking them again and
 * most values take the exact fast path (ps_decimal_exact); the others,
 * 17-digit timestamps among them, go through ps_lp_decimal. */
static int jv_number(ps_jv v, double *out) {
  if (ps_jv_kind(v) != PS_JV_NUMBER)
    return 0;
  const char *q = v.p, *end = v.end;
  int neg = *q == '-', exp10 = 0, sig = 0;
  uint64_t m = 0;
  unsigned d;
  q += neg;
  const char *a = q;
  for (; q < end && (d = (unsigned)(unsigned char)*q - '0') <= 9; q++)
    m = m * 10 + d;
  sig = m ? (int)(q - a) : 0;
  if (q < end && *q == '.') {
    a = ++q;
    for (; q < end && (d = (unsigned)(unsigned char)*q - '0') <= 9; q++) {
      m = m * 10 + d;
      sig += m != 0;
    }
    exp10 = -(int)(q - a);
  }
  if (q == end && sig <= 19 && ps_decimal_exact(m, exp10, neg, out))
    return 1;
  int rc = ps_lp_decimal(v.p, (size_t)(v.end - v.p), out);
  if (rc == -ERANGE)
    *out = v.p[0] == '-' ? -INFINITY : INFINITY;
  else if (rc < 0)
    return 0;
  return 1;
}

static int json_finite(ps_jv v, double *out) {
  double d;
  if (!jv_number(v, &d) || !isfinite(d))
    return 0;
  *out = d;
  return 1;
}

static int json_bool(ps_jv v) {
  ps_jv_kind_t k = ps_jv_kind(v);
  return k == PS_JV_TRUE || k == PS_JV_FALSE;
}

static int json_true(ps_jv v) { return ps_jv_kind(v) == PS_JV_TRUE; }

static int is_object(ps_jv v) { return ps_jv_kind(v) == PS_JV_OBJECT; }

/* The first member of `o` named `k` (none when `o` is not an object),
 * skipping over the record's indexed containers by lookup. */
static ps_jv obj_get(const ps_parser *p, ps_jv o, const char *k) {
  ps_jv none = {NULL, NULL};
  if (!is_object(o))
    return none;
  ps_jiter it = ps_jv_iter_ix(o, p->ixp);
  ps_jmember m;
  while (ps_jiter_next(&it, &m))
    if (m.key.p && ps_jkey_is(m.key, k))
      return m.val;
  return none;
}


/* The members of a large object, once: its lookups then cost a walk of a
 * few dozen spans instead of a skip over megabytes. */
static int table_fill(const ps_jindex *ix, jtable *t, ps_jv obj) {
  t->n = 0;
  ps_jiter it = ps_jv_iter_ix(obj, ix);
  ps_jmember m;
  while (ps_jiter_next(&it, &m)) {
    if (t->n == t->cap) {
      size_t cap = t->cap ? t->cap * 2 : 32;
      ps_jmember *n = realloc(t->m, cap * sizeof *n);
      if (!n)
        return -ENOMEM;
      t->m = n;
      t->cap = cap;
    }
    t->m[t->n++] = m;
  }
  return 0;
}

static ps_jv table_get(const jtable *t, const char *k) {
  for (size_t i = 0; i < t->n; i++)
    if (t->m[i].key.p && ps_jkey_is(t->m[i].key, k))
      return t->m[i].val;
  ps_jv none = {NULL, NULL};
  return none;
}

/* ---- building a point --------------------------------------------------- */

static void pt_reset(ps_parser *p) {
  p->ntags = 0;
  p->nfields = 0;
  arena_reset(p);
}

static void tag_add(ps_parser *p, const char *key, const char *value) {
  if (!value || !*value || p->ntags >= LG_MAX_TAGS)
    return;
  p->s->tags[p->ntags].key = key;
  p->s->tags[p->ntags].value = value;
  p->ntags++;
}

static void tags_run(ps_parser *p) {
  tag_add(p, "run", p->id.run);
  tag_add(p, "test_type", p->id.test_type);
  tag_add(p, "revision", p->id.revision);
}

static ps_field *field_new(ps_parser *p, const char *key, ps_ftype t) {
  if (p->nfields >= LG_MAX_FIELDS)
    return NULL;
  ps_field *f = &p->s->fields[p->nfields++];
  *f = (ps_field){.key = key, .type = t};
  return f;
}

static void add_float(ps_parser *p, const char *key, ps_jv v) {
  double d;
  ps_field *f;
  if (json_finite(v, &d) && (f = field_new(p, key, PS_F_FLOAT)))
    f->v.f = d;
}

static int json_int(ps_jv v, int64_t *out) {
  double d;
  if (!json_finite(v, &d) || d != floor(d) || d < -9.2e18 || d > 9.2e18)
    return 0;
  *out = (int64_t)d;
  return 1;
}

static void add_int(ps_parser *p, const char *key, ps_jv v) {
  int64_t i;
  ps_field *f;
  if (json_int(v, &i) && (f = field_new(p, key, PS_F_INT)))
    f->v.i = i;
}

static void add_bool(ps_parser *p, const char *key, ps_jv v) {
  ps_field *f;
  if (json_bool(v) && (f = field_new(p, key, PS_F_BOOL)))
    f->v.b = json_true(v);
}

static void add_bool_value(ps_parser *p, const char *key, int b) {
  ps_field *f = field_new(p, key, PS_F_BOOL);
  if (f)
    f->v.b = b;
}

static void add_string(ps_parser *p, const char *key, const char *s) {
  ps_field *f = field_new(p, key, PS_F_STRING);
  if (f) {
    f->v.s.p = s;
    f->v.s.n = strlen(s);
  }
}

/* A scalar member as a field: integers by name, other numbers as floats,
 * booleans and strings as they are; nested values and null are skipped.
 * With a prefix, keys are composed in the parser's key buffer. Returns 0
 * when no more fields fit. */
static int add_member_field(ps_parser *p, ps_jmember m, const char *const *ints,
                            const char *const *skip, const char *prefix) {
  ps_jv_kind_t k = ps_jv_kind(m.val);
  if (!m.key.p || k == PS_JV_OBJECT || k == PS_JV_ARRAY || k == PS_JV_NULL)
    return 1;
  const char *name = key_str(p, m);
  if (!name || in_list(skip, name))
    return 1;
  const char *key = name;
  if (prefix) {
    if (p->nfields >= LG_MAX_FIELDS)
      return 0;
    char *kb = p->s->keybuf[p->nfields];
    int n = snprintf(kb, LG_KEY_LEN, "%s%s", prefix, name);
    if (n < 0 || n >= LG_KEY_LEN)
      return 1;
    key = kb;
  }
  if (k == PS_JV_NUMBER) {
    if (in_list(ints, name))
      add_int(p, key, m.val);
    else
      add_float(p, key, m.val);
  } else if (k == PS_JV_TRUE || k == PS_JV_FALSE) {
    add_bool(p, key, m.val);
  } else {
    const char *str = jv_str(p, m.val);
    if (str)
      add_string(p, key, str);
  }
  return 1;
}

/* Every scalar member of `obj` as a field (add_member_field). */
static void add_object_fields(ps_parser *p, ps_jv obj, const char *const *ints,
                              const char *const *skip, const char *prefix) {
  ps_jiter it = ps_jv_iter_ix(obj, p->ixp);
  ps_jmember m;
  while (ps_jiter_next(&it, &m))
    if (!add_member_field(p, m, ints, skip, prefix))
      return;
}

/* The same from a member table (perf-finish's record: its members walked
 * without skipping over stats again). */
static void add_table_fields(ps_parser *p, const jtable *t, const char *const *ints,
                             const char *const *skip) {
  for (size_t i = 0; i < t->n; i++)
    if (!add_member_field(p, t->m[i], ints, skip, NULL))
      return;
}

/* Emits the built point; a point without fields is not a fact, so nothing
 * is sent. Counts accepted points so a resumed small record skips them. */
static int pt_emit(ps_parser *p, ps_emitter *em, const char *measurement,
                   int64_t time_ns) {
  if (p->nfields == 0)
    return 0;
  if (p->skip) {
    p->skip--;
    return 0;
  }
  ps_point pt = {measurement, p->s->tags,    p->ntags,
                 p->s->fields,   p->nfields, time_ns};
  int rc = ps_emit_point(em, &pt);
  if (rc == 0)
    p->accepted++;
  return rc;
}

/* ---- run identity and origin -------------------------------------------- */

/* The run is the folder holding perf.jsonl. A path whose folder part is "."
 * or ".." ("perf.jsonl" given relative) names the folder only once
 * resolved, so the driver's resolved path is used then. */
static void id_from_head(const ps_input_head *head, ps_run_id *id) {
  char *copy = strdup(head->path);
  char *real = NULL;
  if (!copy) {
    ps_run_id_from_name("", id);
    return;
  }
  char *dir = dirname(copy);
  if ((strcmp(dir, ".") == 0 || strcmp(dir, "..") == 0 ||
       strcmp(basename(dir), "..") == 0) &&
      head->real_path && (real = strdup(head->real_path)))
    dir = dirname(real);
  ps_run_id_from_name(dir, id);
  free(real);
  free(copy);
}

static int file_mtime_s(const ps_parser *p, double *out) {
  if (!p->mtime_ns)
    return 0;
  *out = (double)(p->mtime_ns / 1000000000LL) +
         (double)(p->mtime_ns % 1000000000LL) / 1e9;
  return 1;
}

/* Sets the origin from the first line: its timeOrigin, or (older or odd
 * files) the mtime of perf.jsonl when first seen, so that the first line's
 * wall time is that mtime (docs/schema.md: the start marker's fallback). */
static void origin_from_first(ps_parser *p, ps_jv time_origin, double timestamp) {
  if (p->facts.have_origin)
    return;
  double origin, mtime;
  if (json_finite(time_origin, &origin)) {
    p->facts.origin_s = origin;
    p->facts.origin_from_mtime = 0;
  } else if (file_mtime_s(p, &mtime)) {
    p->facts.origin_s = mtime - timestamp;
    p->facts.origin_from_mtime = 1;
  } else {
    return;
  }
  p->facts.have_origin = 1;
  p->facts.have_first_wall = 1;
  p->facts.first_wall_s = p->facts.origin_s + timestamp;
}

/* ---- reading a record ------------------------------------------------------ */

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

/* The record as a value: the line itself when it is strict JSON, else what
 * cJSON reads of it, written back as strict JSON into p->norm (*owned). */
/* An index for a long record (none for a short one, or when there is no
 * memory for it: it only saves time). */
static ps_jindex *index_for(ps_parser *p, size_t len) {
  if (len < INDEX_FROM_BYTES)
    return NULL;
  if (!p->ix.open) {
    p->ix.open = malloc(INDEX_CAP * sizeof *p->ix.open);
    p->ix.close = malloc(INDEX_CAP * sizeof *p->ix.close);
    if (!p->ix.open || !p->ix.close) {
      free(p->ix.open);
      free(p->ix.close);
      p->ix.open = p->ix.close = NULL;
      return NULL;
    }
    p->ix.cap = INDEX_CAP;
    p->ix.depth = INDEX_DEPTH;
  }
  return &p->ix;
}

static int read_record(ps_parser *p, const char *data, size_t len, ps_jv *root, int *owned) {
  *owned = 0;
  ps_jindex *ix = index_for(p, len);
  p->ixp = NULL;
  if (ps_json_check_indexed(data, len, LG_MAX_DEPTH, ix, root) == 0) {
    p->ixp = ix;
    return 0;
  }
  cJSON *t = cJSON_ParseWithLength(data, len);
  if (!t)
    return -EINVAL;
  ps_buf_reset(&p->norm);
  int rc = put_json(&p->norm, t, 0);
  cJSON_Delete(t);
  if (rc < 0)
    return rc == -ENOMEM ? -ENOMEM : -EINVAL;
  ix = index_for(p, p->norm.len);
  if (ps_json_check_indexed(p->norm.data, p->norm.len, LG_MAX_DEPTH + 1, ix, root) < 0)
    return -EINVAL;
  p->ixp = ix;
  *owned = 1;
  return 0;
}

/* ---- open / free ---------------------------------------------------------- */

static void finish_reset(ps_parser *p) {
  p->fin_active = 0;
  p->fin_owned = 0;
  p->fin_base = NULL;
  p->fin_len = 0;
  p->phase = FP_DONE;
  p->root_tab.n = p->stats_tab.n = p->stage_tab.n = 0;
  if (p->norm.cap > ((size_t)1 << 20))
    ps_buf_free(&p->norm); /* a normalised perf-finish: megabytes */
}

/* What only a long record needed, given back once it is done: a run's
 * perf-finish is its last line, and its parser stays open as long as the
 * file is tracked (the agent's life). Kept, the index (512 KB) and the
 * tables and arena of every run ever read were most of a long-running
 * agent's growth (docs/benchmarks.md, "A year of nightly runs"). The next
 * long record, if one comes, allocates them again. */
static void release_long(ps_parser *p) {
  free(p->ix.open);
  free(p->ix.close);
  p->ix.open = p->ix.close = NULL;
  p->ix.cap = p->ix.n = 0;
  p->ixp = NULL;
  jtable *tabs[] = {&p->root_tab, &p->stats_tab, &p->stage_tab, &p->item_tab};
  for (size_t i = 0; i < sizeof tabs / sizeof tabs[0]; i++) {
    free(tabs[i]->m);
    memset(tabs[i], 0, sizeof *tabs[i]);
  }
  arena_reset(p);
  free(p->arena);
  p->arena = NULL;
  ps_buf_free(&p->norm);
  free(p->s);
  p->s = NULL;
}

static void loadgen_free(ps_parser *p) {
  if (!p)
    return;
  finish_reset(p);
  ps_buf_free(&p->norm);
  free(p->root_tab.m);
  free(p->stats_tab.m);
  free(p->stage_tab.m);
  free(p->item_tab.m);
  free(p->ix.open);
  free(p->ix.close);
  arena_reset(p); /* down to the first chunk */
  free(p->arena);
  free(p->areas);
  free(p->s);
  free(p);
}

/* The origin from the first line the driver read, so that a parser opened
 * mid-file (after a restart) knows it; only a complete line is given, a
 * half-written one might not parse. */
static void origin_from_head(ps_parser *p, const ps_input_head *head) {
  if (!head->first_line)
    return;
  ps_jv root;
  int owned;
  if (read_record(p, head->first_line, head->first_len, &root, &owned) < 0 ||
      !is_object(root))
    return;
  double ts = 0;
  if (json_finite(obj_get(p, root, "timestamp"), &ts))
    origin_from_first(p, obj_get(p, root, "timeOrigin"), ts);
}

static int loadgen_open(ps_parser **out, const ps_source_cfg *src,
                        const ps_input_head *head, ps_buf *err) {
  (void)src;
  *out = NULL;
  ps_parser *p = calloc(1, sizeof *p);
  if (!p) {
    if (err)
      ps_buf_printf(err, "%s: out of memory", head->path);
    return -ENOMEM;
  }
  p->phase = FP_DONE;
  ps_buf_init(&p->norm, 0);
  p->mtime_ns = head->mtime_ns;
  id_from_head(head, &p->id);
  origin_from_head(p, head);
  *out = p;
  return 0;
}

static ps_input_kind loadgen_input_kind(const ps_source_cfg *src,
                                        const char *path) {
  (void)src;
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  return strcmp(base, "perf.jsonl") == 0 ? PS_INPUT_LINES : PS_INPUT_IGNORE;
}

static const ps_run_facts *loadgen_run_facts(const ps_parser *p) {
  return p ? &p->facts : NULL;
}

static void loadgen_set_run_facts(ps_parser *p, const ps_run_facts *f) {
  if (p && f)
    p->facts = *f;
}

/* The folder holding the path: perf.jsonl, exit_code, docker.log and the
 * slogs of a run are its direct children. */
static int loadgen_run_folder(const char *path, char *folder, size_t n) {
  const char *slash = strrchr(path, '/');
  if (!slash || slash == path || (size_t)(slash - path) >= n)
    return 0;
  memcpy(folder, path, (size_t)(slash - path));
  folder[slash - path] = '\0';
  return 1;
}

/* ---- streamed records ------------------------------------------------------ */

static void stage_tag(ps_jv stage, char *buf, size_t n) {
  int64_t s;
  buf[0] = '\0';
  if (json_int(stage, &s))
    snprintf(buf, n, "%lld", (long long)s);
}

/* The envelope's `elapsed` first, then every other scalar member (the
 * record's own fields), from the record or from its member table. */
static int emit_event(ps_parser *p, ps_emitter *em, ps_jv root, const jtable *tab,
                      ps_jv elapsed, const char *type, const char *stage, int64_t t) {
  pt_reset(p);
  tags_run(p);
  tag_add(p, "stage", stage);
  tag_add(p, "event", strncmp(type, "perf-", 5) == 0 ? type + 5 : type);
  add_float(p, "elapsed", elapsed);
  if (tab)
    add_table_fields(p, tab, INT_EVENT, SKIP_ENVELOPE);
  else
    add_object_fields(p, root, INT_EVENT, SKIP_ENVELOPE, NULL);
  return pt_emit(p, em, "loadgen_event", t);
}

static int emit_process(ps_parser *p, ps_emitter *em, ps_jv root,
                        const char *stage, int64_t t) {
  char *proc = p->s->tagbuf[0];
  pt_reset(p);
  const char *ptype = jv_str(p, obj_get(p, root, "processType"));
  const char *vat = jv_str(p, obj_get(p, root, "vatID"));
  const char *name = jv_str(p, obj_get(p, root, "name"));
  if (!ptype || !ptype[0]) {
    ps_emit_reject(em, "perf-chain-process-usage without a processType");
    return 0;
  }
  if (strcmp(ptype, "vat") == 0 && vat && vat[0]) {
    if (name && name[0])
      snprintf(proc, sizeof p->s->tagbuf[0], "%s:%s", vat, name);
    else
      snprintf(proc, sizeof p->s->tagbuf[0], "%s", vat);
  } else {
    snprintf(proc, sizeof p->s->tagbuf[0], "%s", ptype);
  }
  pt_reset(p);
  tags_run(p);
  tag_add(p, "stage", stage);
  tag_add(p, "process", proc);
  add_object_fields(p, root, INT_PROCESS, SKIP_PROCESS, NULL);
  return pt_emit(p, em, "loadgen_process", t);
}

static storage_area *area_get(ps_parser *p, const char *path) {
  char name[256];
  const char *s1 = strchr(path, '/');
  const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
  size_t n = s2 ? (size_t)(s2 - path) : strlen(path);
  if (n == 0 || n >= sizeof name)
    return NULL;
  memcpy(name, path, n);
  name[n] = '\0';
  for (size_t i = 0; i < p->nareas; i++)
    if (strcmp(p->areas[i].name, name) == 0)
      return &p->areas[i];
  if (p->nareas == p->areas_cap) {
    size_t cap = p->areas_cap ? p->areas_cap * 2 : 16;
    storage_area *a = realloc(p->areas, cap * sizeof *a);
    if (!a)
      return NULL;
    p->areas = a;
    p->areas_cap = cap;
  }
  storage_area *a = &p->areas[p->nareas++];
  memcpy(a->name, name, n + 1);
  a->kib = 0;
  return a;
}

static int emit_storage(ps_parser *p, ps_emitter *em, ps_jv root,
                        const char *stage, int64_t t) {
  ps_jv chain = obj_get(p, root, "chain");
  if (!is_object(chain)) {
    ps_emit_reject(em, "perf-chain-storage-usage without a \"chain\" object");
    return 0;
  }
  p->nareas = 0;
  int64_t total = 0;
  int any = 0;
  ps_jiter it = ps_jv_iter_ix(chain, p->ixp);
  ps_jmember m;
  pt_reset(p);
  while (ps_jiter_next(&it, &m)) {
    int64_t kib;
    if (!m.key.p || !json_int(m.val, &kib))
      continue;
    const char *key = key_str(p, m);
    storage_area *a = key ? area_get(p, key) : NULL;
    if (!a)
      continue;
    a->kib += kib;
    total += kib;
    any = 1;
  }
  int rc = 0;
  for (size_t i = 0; i <= p->nareas && rc == 0; i++) {
    if (i == p->nareas && !any)
      break;
    pt_reset(p);
    tags_run(p);
    tag_add(p, "stage", stage);
    tag_add(p, "area", i < p->nareas ? p->areas[i].name : "total");
    ps_field *f = field_new(p, "kib", PS_F_INT);
    f->v.i = i < p->nareas ? p->areas[i].kib : total;
    rc = pt_emit(p, em, "loadgen_storage", t);
  }
  return rc;
}

/* ---- perf-finish ------------------------------------------------------------ */

/* Time of stage-level points; 0 when the stage has no startedAt. */
static int stage_time(ps_parser *p, int64_t *t) {
  double s;
  if (!json_finite(table_get(&p->stage_tab, "startedAt"), &s))
    return 0;
  *t = ps_seconds_to_ns(s);
  return 1;
}

static const char *stage_name(ps_parser *p) {
  return p->fin_stage.key.p ? key_str(p, p->fin_stage) : NULL;
}

static int emit_stage_point(ps_parser *p, ps_emitter *em) {
  int64_t t;
  pt_reset(p);
  if (!stage_time(p, &t)) {
    const char *name = stage_name(p);
    ps_emit_reject(em,
                   "perf-finish: stage %s has no startedAt; its stage and "
                   "summary points are left out",
                   name ? name : "?");
    return 0;
  }
  tags_run(p);
  tag_add(p, "stage", stage_name(p));
  static const char *const ints[] = {"stageIndex",       "blockCount",
                                     "cycleCount",       "previousCycleCount",
                                     "firstBlockHeight", "lastBlockHeight"};
  static const char *const floats[] = {"duration", "readyDuration",
                                       "chainInitDuration",
                                       "clientInitDuration",
                                       "loadgenInitDuration"};
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
    add_int(p, ints[i], table_get(&p->stage_tab, ints[i]));
  for (size_t i = 0; i < sizeof floats / sizeof *floats; i++)
    add_float(p, floats[i], table_get(&p->stage_tab, floats[i]));
  ps_jv cfg = table_get(&p->stage_tab, "stageConfig");
  ps_jv chain_only = obj_get(p, cfg, "chainOnly");
  ps_jv dur = obj_get(p, cfg, "durationConfig");
  add_bool(p, "chainOnly", chain_only);
  add_float(p, "durationConfig", dur);
  if (is_object(cfg)) {
    /* the same test as perf_to_stats_csv.jq: chainOnly != true and
     * durationConfig != 0 (a missing value passes both) */
    double d;
    int loadgen = !json_true(chain_only) && !(jv_number(dur, &d) && d == 0);
    add_bool_value(p, "loadgen", loadgen);
  }
  return pt_emit(p, em, "loadgen_stage", t);
}

/* An item's members are looked up several times: read them once. */
static int item_table(ps_parser *p, ps_jmember item) {
  p->item_tab.n = 0;
  return is_object(item.val) ? table_fill(p->ixp, &p->item_tab, item.val) : 0;
}

static int emit_summary(ps_parser *p, ps_emitter *em, ps_jmember item, int blocks) {
  int64_t t;
  if (!is_object(item.val) || !item.key.p || !stage_time(p, &t))
    return 0;
  if (item_table(p, item) < 0)
    return -ENOMEM;
  pt_reset(p);
  tags_run(p);
  tag_add(p, "stage", stage_name(p));
  tag_add(p, blocks ? "summary" : "task", key_str(p, item));
  add_table_fields(p, &p->item_tab, INT_SUMMARY, NULL);
  return pt_emit(p, em, blocks ? "loadgen_stage_blocks" : "loadgen_stage_cycles",
                 t);
}

static int emit_block(ps_parser *p, ps_emitter *em, ps_jmember item) {
  if (!is_object(item.val))
    return 0;
  if (item_table(p, item) < 0)
    return -ENOMEM;
  const jtable *b = &p->item_tab;
  pt_reset(p);
  double s;
  if (!json_finite(table_get(b, "beginAt"), &s) &&
      !json_finite(table_get(b, "blockTime"), &s)) {
    const char *stage = stage_name(p), *key = item.key.p ? key_str(p, item) : NULL;
    ps_emit_reject(em, "perf-finish: stage %s block %s has no beginAt or "
                       "blockTime; left out",
                   stage ? stage : "?", key ? key : "?");
    return 0;
  }
  ps_jv live = table_get(b, "liveMode");
  tags_run(p);
  tag_add(p, "stage", stage_name(p));
  if (json_bool(live))
    tag_add(p, "live", json_true(live) ? "true" : "false");
  add_table_fields(p, b, INT_BLOCK, SKIP_BLOCK);
  return pt_emit(p, em, "loadgen_block", ps_seconds_to_ns(s));
}

static int emit_cycle(ps_parser *p, ps_emitter *em, ps_jmember item) {
  if (!is_object(item.val))
    return 0;
  if (item_table(p, item) < 0)
    return -ENOMEM;
  const jtable *c = &p->item_tab;
  pt_reset(p);
  double s;
  const char *task = jv_str(p, table_get(c, "task"));
  if (!json_finite(table_get(c, "startedAt"), &s) || !task) {
    const char *stage = stage_name(p), *key = item.key.p ? key_str(p, item) : NULL;
    ps_emit_reject(em, "perf-finish: stage %s cycle %s has no startedAt or "
                       "task; left out",
                   stage ? stage : "?", key ? key : "?");
    return 0;
  }
  tags_run(p);
  tag_add(p, "stage", stage_name(p));
  tag_add(p, "task", task);
  add_int(p, "seq", table_get(c, "seq"));
  add_bool(p, "success", table_get(c, "success"));
  double ended;
  add_bool_value(p, "finished", json_finite(table_get(c, "endedAt"), &ended));
  add_float(p, "duration", table_get(c, "duration"));
  add_int(p, "blockCount", table_get(c, "blockCount"));
  add_int(p, "startBlockHeight", table_get(c, "startBlockHeight"));
  add_int(p, "endBlockHeight", table_get(c, "endBlockHeight"));
  return pt_emit(p, em, "loadgen_cycle", ps_seconds_to_ns(s));
}

static int emit_run(ps_parser *p, ps_emitter *em) {
  const jtable *st = &p->stats_tab;
  double s;
  int64_t t;
  if (json_finite(table_get(st, "startedAt"), &s))
    t = ps_seconds_to_ns(s);
  else if (p->facts.have_first_wall)
    t = ps_seconds_to_ns(p->facts.first_wall_s);
  else
    return 0;
  ps_jv meta = table_get(st, "metadata");
  ps_jv test_data = obj_get(p, meta, "testData");
  ps_jv cycles = table_get(st, "cyclesSummary");
  pt_reset(p);
  const char *profile = jv_str(p, obj_get(p, meta, "profile"));
  tags_run(p);
  if (profile)
    tag_add(p, "profile", profile);
  double d;
  /* the CSV's `success`: .duration != null */
  add_bool_value(p, "success", json_finite(table_get(st, "duration"), &d));
  add_float(p, "duration", table_get(st, "duration"));
  ps_jv boot = table_get(st, "chainBootstrapDuration");
  if (!json_finite(boot, &d))
    boot = obj_get(p, obj_get(p, table_get(st, "stages"), "0"), "chainInitDuration");
  add_float(p, "chainBootstrapDuration", boot);
  add_float(p, "walletDeployDuration", table_get(st, "walletDeployDuration"));
  add_float(p, "loadgenDeployDuration", table_get(st, "loadgenDeployDuration"));
  add_int(p, "totalBlockCount", table_get(st, "totalBlockCount"));
  add_int(p, "stageCount", table_get(st, "stageCount"));
  add_float(p, "cycleSuccessRate", obj_get(p, cycles, "cycleSuccessRate"));
  add_float(p, "cycleAvgDuration", obj_get(p, cycles, "avgDuration"));
  ps_jv rev = obj_get(p, test_data, "sdkRevision");
  const char *rev_s = jv_str(p, rev);
  if (rev_s) {
    add_string(p, "sdkRevision", rev_s);
  } else if (json_finite(rev, &d)) {
    /* yargs-parser made an all-digit revision a number; the jq script
     * applies tostring, and so do we */
    if (d == floor(d) && fabs(d) < 1e15)
      snprintf(p->s->strbuf, sizeof p->s->strbuf, "%.0f", d);
    else
      snprintf(p->s->strbuf, sizeof p->s->strbuf, "%.17g", d);
    add_string(p, "sdkRevision", p->s->strbuf);
  }
  add_int(p, "sdkCommitTime", obj_get(p, test_data, "sdkCommitTime"));
  add_object_fields(p, table_get(st, "liveBlocksSummary"), INT_SUMMARY, NULL,
                    "live_");
  return pt_emit(p, em, "loadgen_run", t);
}

/* Positions the item walk on the first member of the current stage's
 * `key` object (none when it is not an object). */
static void items_start(ps_parser *p, const char *key) {
  ps_jv o = table_get(&p->stage_tab, key);
  p->item_it = ps_jv_iter_ix(is_object(o) ? o : (ps_jv){NULL, NULL}, p->ixp);
  if (!ps_jiter_next(&p->item_it, &p->fin_item))
    p->fin_item.val.p = NULL;
}

/* Moves to the next stage (fin_stage.val.p NULL: none), with its table. */
static int stage_next(ps_parser *p) {
  if (!ps_jiter_next(&p->stage_it, &p->fin_stage)) {
    p->fin_stage.val.p = NULL;
    return 0;
  }
  /* the stages object iterates its members; a member that is not an
   * object has no members to look up (the old tree's lookups found none) */
  p->stage_tab.n = 0;
  return is_object(p->fin_stage.val) ? table_fill(p->ixp, &p->stage_tab, p->fin_stage.val) : 0;
}

/* The cursor's positions point into the text the record was read from;
 * the driver may hand the same record over at another address. */
static void rebase_jv(ps_jv *v, ptrdiff_t d) {
  if (v->p) {
    v->p += d;
    v->end += d;
  }
}

static void rebase_member(ps_jmember *m, ptrdiff_t d) {
  rebase_jv(&m->key, d);
  rebase_jv(&m->val, d);
}

static void rebase_table(jtable *t, ptrdiff_t d) {
  for (size_t i = 0; i < t->n; i++)
    rebase_member(&t->m[i], d);
}

static void finish_rebase(ps_parser *p, const char *data) {
  ptrdiff_t d = data - p->fin_base;
  if (p->fin_owned || d == 0)
    return;
  p->ix.base += d;
  rebase_jv(&p->fin_root, d);
  rebase_jv(&p->fin_stats, d);
  rebase_table(&p->root_tab, d);
  rebase_table(&p->stats_tab, d);
  rebase_table(&p->stage_tab, d);
  rebase_member(&p->fin_stage, d);
  rebase_member(&p->fin_item, d);
  if (p->stage_it.p) {
    p->stage_it.p += d;
    p->stage_it.end += d;
  }
  if (p->item_it.p) {
    p->item_it.p += d;
    p->item_it.end += d;
  }
  p->fin_base = data;
}

/* Walks perf-finish from the cursor. Returns 0 when every point was
 * emitted, -EAGAIN with the cursor on the refused point, or another
 * negative errno (the cursor is then dropped). */
static int finish_continue(ps_parser *p, ps_emitter *em) {
  int rc = 0;
  while (rc == 0) {
    switch (p->phase) {
    case FP_EVENT:
      rc = emit_event(p, em, p->fin_root, &p->root_tab, table_get(&p->root_tab, "elapsed"),
                      "perf-finish", p->fin_envelope_stage,
                      ps_seconds_to_ns(p->fin_wall));
      if (rc == 0) {
        ps_jv stages = table_get(&p->stats_tab, "stages");
        p->stage_it = ps_jv_iter_ix(is_object(stages) ? stages : (ps_jv){NULL, NULL}, p->ixp);
        if ((rc = stage_next(p)) == 0)
          p->phase = FP_STAGE;
      }
      break;
    case FP_STAGE:
      if (!p->fin_stage.val.p) {
        p->phase = FP_RUN;
        break;
      }
      rc = emit_stage_point(p, em);
      if (rc == 0) {
        p->phase = FP_BLOCKSUM;
        items_start(p, "blocksSummaries");
      }
      break;
    case FP_BLOCKSUM:
    case FP_CYCLESUM:
    case FP_BLOCKS:
    case FP_CYCLES:
      if (!p->fin_item.val.p) {
        static const char *const next_key[] = {
            [FP_BLOCKSUM] = "cyclesSummaries",
            [FP_CYCLESUM] = "blocks",
            [FP_BLOCKS] = "cycles",
        };
        if (p->phase == FP_CYCLES) {
          rc = stage_next(p);
          p->phase = FP_STAGE;
        } else {
          items_start(p, next_key[p->phase]);
          p->phase++;
        }
        break;
      }
      if (p->phase == FP_BLOCKSUM || p->phase == FP_CYCLESUM)
        rc = emit_summary(p, em, p->fin_item, p->phase == FP_BLOCKSUM);
      else if (p->phase == FP_BLOCKS)
        rc = emit_block(p, em, p->fin_item);
      else
        rc = emit_cycle(p, em, p->fin_item);
      if (rc == 0 && !ps_jiter_next(&p->item_it, &p->fin_item))
        p->fin_item.val.p = NULL;
      break;
    case FP_RUN:
      rc = is_object(p->fin_stats) ? emit_run(p, em) : 0;
      if (rc == 0)
        p->phase = FP_DONE;
      break;
    case FP_DONE:
      finish_reset(p);
      release_long(p);
      return 0;
    }
  }
  if (rc != -EAGAIN) {
    finish_reset(p);
    release_long(p);
  }
  return rc;
}

static void finish_facts(ps_parser *p) {
  const jtable *st = &p->stats_tab;
  double d;
  p->facts.finish_seen = 1;
  if ((p->facts.have_started_at = json_finite(table_get(st, "startedAt"), &d)))
    p->facts.started_at_s = d;
  if ((p->facts.have_ended_at = json_finite(table_get(st, "endedAt"), &d)))
    p->facts.ended_at_s = d;
  if ((p->facts.have_duration = json_finite(table_get(st, "duration"), &d)))
    p->facts.duration_s = d;
  pt_reset(p);
  const char *profile = jv_str(p, obj_get(p, table_get(st, "metadata"), "profile"));
  if (profile)
    snprintf(p->facts.profile, sizeof p->facts.profile, "%s", profile);
}

/* ---- line ------------------------------------------------------------------ */

/* Recognises the record a resumed call must continue, so a driver that
 * hands over a different line cannot make us skip its points. The driver
 * promises the same record (emit.h); this is the check that it kept the
 * promise, and it runs at every resume after back-pressure, dozens of
 * times for one 9 MB perf-finish line: hashing all of it each time was
 * 15 % of a backfill agent's CPU. So the key is the line's number and
 * length, its first and last 4 KB, and one word of every 4 KB between. */
static uint64_t mix(uint64_t h, const char *p, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  memcpy(&w, p + i, n - i);
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 29);
}

#define KEY_EDGE 4096

static uint64_t record_key(const char *data, size_t len, uint64_t line_no) {
  uint64_t h = (0x9e3779b97f4a7c15ULL ^ len) * 0xff51afd7ed558ccdULL ^ line_no;
  if (len <= 3 * KEY_EDGE)
    return mix(h, data, len);
  h = mix(h, data, KEY_EDGE);
  for (size_t i = KEY_EDGE; i + 8 <= len - KEY_EDGE; i += KEY_EDGE)
    h = mix(h, data + i, 8);
  return mix(h, data + len - KEY_EDGE, KEY_EDGE);
}

static int loadgen_line(ps_parser *p, const char *data, size_t len,
                        ps_emitter *em) {
  if (!p->s && !(p->s = malloc(sizeof *p->s)))
    return -ENOMEM;
  uint64_t hash = (p->fin_active || p->resuming) ? record_key(data, len, em->origin.line) : 0;
  if (p->fin_active) {
    if (len == p->fin_len && hash == p->resume_hash) {
      finish_rebase(p, data);
      return finish_continue(p, em);
    }
    finish_reset(p); /* not the record we were resuming: start over */
  }
  if (p->resuming && hash == p->resume_hash) {
    p->skip = p->accepted;
  } else {
    p->skip = 0;
    p->accepted = 0;
  }
  p->resuming = 0;

  size_t blank = 0;
  while (blank < len && (data[blank] == ' ' || data[blank] == '\t'))
    blank++;
  if (blank == len) /* an empty line carries no record */
    return 0;
  size_t nul_col;
  const char *nul = ps_json_nul_check(data, len, &nul_col);
  if (nul) {
    ps_emit_reject(em, "column %zu: %s", nul_col, nul);
    return 0;
  }
  ps_jv root;
  int owned;
  int rc = read_record(p, data, len, &root, &owned);
  if (rc == -ENOMEM)
    return rc;
  if (rc < 0 || !is_object(root)) {
    ps_emit_reject(em, rc < 0 ? "not valid JSON" : "not a JSON object");
    return 0;
  }
  /* perf-finish is looked up many times through a table of its members;
   * a small record's few lookups walk it */
  int big = len > 4096;
  if (big && table_fill(p->ixp, &p->root_tab, root) < 0)
    return -ENOMEM;
#define ROOT(k) (big ? table_get(&p->root_tab, (k)) : obj_get(p, root, (k)))
  pt_reset(p);
  const char *ty = jv_str(p, ROOT("type"));
  double ts = 0;
  int ok = json_finite(ROOT("timestamp"), &ts);
  if (!ty || !ty[0]) {
    ps_emit_reject(em, "no \"type\" string");
    return 0;
  }
  if (!ok) {
    ps_emit_reject(em, "%s: no numeric \"timestamp\"", ty);
    return 0;
  }
  origin_from_first(p, ROOT("timeOrigin"), ts);
  if (!p->facts.have_origin) {
    ps_emit_reject(em, "%s: no timeOrigin known for this run", ty);
    return 0;
  }
  double wall = p->facts.origin_s + ts;
  p->facts.have_last_wall = 1;
  p->facts.last_wall_s = wall;
  int64_t t = ps_seconds_to_ns(wall);
  char stage[24];
  stage_tag(ROOT("stage"), stage, sizeof stage);

  if (strcmp(ty, "perf-finish") == 0) {
    if (!big && table_fill(p->ixp, &p->root_tab, root) < 0)
      return -ENOMEM;
    p->fin_stats = table_get(&p->root_tab, "stats");
    if (table_fill(p->ixp, &p->stats_tab, is_object(p->fin_stats) ? p->fin_stats
                                                           : (ps_jv){NULL, NULL}) < 0)
      return -ENOMEM;
    finish_facts(p);
    p->fin_active = 1;
    p->fin_owned = owned;
    p->fin_base = owned ? p->norm.data : data;
    p->fin_root = root;
    p->fin_len = len;
    p->resume_hash = hash ? hash : record_key(data, len, em->origin.line);
    p->fin_wall = wall;
    memcpy(p->fin_envelope_stage, stage, sizeof stage);
    p->phase = FP_EVENT;
    return finish_continue(p, em);
  }

  ps_jv elapsed = ROOT("elapsed");
#undef ROOT
  if (strcmp(ty, "perf-chain-process-usage") == 0)
    rc = emit_process(p, em, root, stage, t);
  else if (strcmp(ty, "perf-chain-storage-usage") == 0)
    rc = emit_storage(p, em, root, stage, t);
  else {
    char *type = strdup(ty); /* the arena is emptied for the point */
    if (!type)
      return -ENOMEM;
    rc = emit_event(p, em, root, big ? &p->root_tab : NULL, elapsed, type, stage, t);
    free(type);
  }
  if (rc == -EAGAIN) {
    p->resuming = 1;
    p->resume_hash = record_key(data, len, em->origin.line);
  }
  return rc;
}

const ps_format_ops ps_format_loadgen = {
    .id = PS_FMT_LOADGEN,
    .name = "loadgen",
    .needs = PS_FMT_NEEDS_FIRST_LINE | PS_FMT_NEEDS_REAL_PATH,
    .input_kind = loadgen_input_kind,
    .open = loadgen_open,
    .line = loadgen_line,
    .document = NULL,
    .finish = NULL,
    .free = loadgen_free,
    .run_folder = loadgen_run_folder,
    .run_facts = loadgen_run_facts,
    .set_run_facts = loadgen_set_run_facts,
    .run_source = PS_RUN_MARKER_SOURCE,
    .run_title = "loadgen",
};
