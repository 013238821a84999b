/*
 * loadgen_private.h (private to agent/formats/loadgen*.c): the loadgen
 * parser's state and the functions its parts share. The format's design
 * (what is read, how, and why) is told atop loadgen.c; docs/loadgen.md
 * maps records to points.
 *
 * - loadgen.c: the ops table, open and free, the run's identity and time
 *   origin, the resume key of a record, and each line's dispatch.
 * - loadgen_read.c: a line as a checked value: in place when it is strict
 *   JSON, else read by cJSON and written back as strict JSON; the index
 *   of a long record's containers.
 * - loadgen_points.c: the point under construction (tags, fields, the
 *   arena its strings live in), JSON values as field values, emitting.
 *   It calls none of the other parts.
 * - loadgen_records.c: the streamed records (events, process samples,
 *   storage), one point each (storage: one per area and `total`).
 * - loadgen_finish.c: perf-finish, emitted from a cursor that survives
 *   back-pressure (emit.h -EAGAIN) and the line moving in memory.
 *
 * Each part's fields are a struct of the part's own inside ps_parser
 * (lg_resume, lg_record, lg_finish, lg_point, lg_storage): the part that
 * owns them writes them, and frees them through its own function; the
 * others read them (lg_resume is shared by the dispatch and the emitting,
 * as it says).
 *
 * Everything runs on the caller's thread; a parser is one file's.
 */
#ifndef PS_FORMATS_LOADGEN_PRIVATE_H
#define PS_FORMATS_LOADGEN_PRIVATE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/jsonspan.h"
#include "formats/format.h"
#include "runs/runs.h"

#define LG_MAX_FIELDS 96
#define LG_MAX_TAGS 8
#define LG_KEY_LEN 64
/* cJSON's nesting limit: a deeper record was refused before, and is now */
#define LG_MAX_DEPTH 1000

/* Where the perf-finish cursor stands: the point it emits next. */
typedef enum lg_finish_phase {
  FP_EVENT = 0,
  FP_STAGE,
  FP_BLOCKSUM,
  FP_CYCLESUM,
  FP_BLOCKS,
  FP_CYCLES,
  FP_RUN,
  FP_DONE,
} lg_finish_phase;

typedef struct lg_storage_area {
  char name[256];
  int64_t kib;
} lg_storage_area;

/* One point's tags, fields and their texts: 10 KB, allocated by a file's
 * first line and given back with its perf-finish (lg_release_long), since a
 * run file's parser lives as long as the agent tracks the file. */
typedef struct lg_scratch {
  ps_tag tags[LG_MAX_TAGS];
  ps_field fields[LG_MAX_FIELDS];
  char keybuf[LG_MAX_FIELDS][LG_KEY_LEN];
  char tagbuf[4][96];
  char strbuf[64];
} lg_scratch;

/* Strings of the point being built: chunks that stay put until reset. */
typedef struct lg_arena_chunk {
  struct lg_arena_chunk *next;
  size_t used, cap;
  char data[];
} lg_arena_chunk;

/* Each part's fields, in a struct of the part's own (the part that writes
 * them; the others read them or ask the part). */

/* A small record's resume state (emit.h -EAGAIN): loadgen.c decides
 * whether a line resumes the record refused (active, hash) and sets how
 * many points to skip; lg_pt_emit counts them down and counts what the
 * emitter took. */
typedef struct lg_resume {
  int active;
  uint64_t hash;   /* of the record being resumed (and of perf-finish) */
  size_t accepted; /* points of the current record the emitter took */
  size_t skip;     /* points still to skip on a resumed call */
} lg_resume;

/* loadgen_read.c: the record read. */
typedef struct lg_record {
  /* the record as strict JSON, when cJSON had to read it first */
  ps_buf norm;
  /* where the containers of a long record end (ixp: &ix while it applies) */
  ps_jindex ix;
  const ps_jindex *ixp;
} lg_record;

/* loadgen_finish.c: the perf-finish cursor, positions in its text. */
typedef struct lg_finish {
  int active;
  uint64_t key;     /* the line's resume key */
  int owned;        /* the text is the record's `norm`, not the driver's line */
  const char *base; /* the text the positions below point into */
  size_t len;
  lg_finish_phase phase;
  ps_jv root, stats;
  ps_jtable stats_tab, stage_tab, item_tab;
  ps_jiter stage_it; /* the stages after the current one */
  ps_jmember stage;  /* the current stage: its key and value */
  ps_jiter item_it;  /* the items after the current one */
  ps_jmember item;   /* the current item (val.p NULL: none left) */
  double wall;
  char envelope_stage[24];
} lg_finish;

/* loadgen_points.c: the point under construction. */
typedef struct lg_point {
  lg_scratch *s; /* lg_point_ready; its text buffers are lent to the parts */
  size_t ntags;
  size_t nfields;
  lg_arena_chunk *arena;
} lg_point;

/* loadgen_records.c: the storage record's areas, kept between records. */
typedef struct lg_storage {
  lg_storage_area *areas;
  size_t n, cap;
} lg_storage;

struct ps_parser {
  /* the run's identity and time origin (loadgen.c; perf-finish adds facts) */
  int64_t mtime_ns; /* of perf.jsonl when opened: the origin's fallback */
  ps_run_id id;
  ps_run_facts facts;
  /* the record's members, filled by the dispatch for a long record and for
   * perf-finish (whose cursor moves them with the text) */
  ps_jtable root_tab;

  lg_resume resume;
  lg_record rec;
  lg_finish fin;
  lg_point pt;
  lg_storage storage;
};

/* ---- loadgen_read.c ---------------------------------------------------- */

/* The record as a value: the line itself when it is strict JSON, else what
 * cJSON reads of it, written back as strict JSON into p->norm (*owned).
 * Sets p->rec.ixp for the text read. 0, -EINVAL or -ENOMEM. */
int lg_read_record(ps_parser *p, const char *data, size_t len, ps_jv *root, int *owned);
/* Gives back the normalised text and the index (the next long record
 * allocates them again). */
void lg_record_free(lg_record *r);
/* The record's text moved by d bytes (perf-finish handed over again). */
void lg_record_rebase(lg_record *r, ptrdiff_t d);
/* Gives back a normalised text of megabytes (a perf-finish read by cJSON). */
void lg_record_trim(lg_record *r);

/* ---- loadgen_points.c: JSON values ------------------------------------- */

/* The scratch of one point, allocated once; -ENOMEM. */
int lg_point_ready(ps_parser *p);
/* Gives back the scratch and the arena. */
void lg_point_free(ps_parser *p);
/* Empties the arena down to its first chunk. */
void lg_arena_reset(ps_parser *p);
/* The unescaped text of a key span or a string value, in the arena (valid
 * until the next point is started); NULL without memory or, for jv_str,
 * for a value that is not a string. */
const char *lg_span_str(ps_parser *p, ps_jv inner);
const char *lg_jv_str(ps_parser *p, ps_jv v);
static inline const char *lg_key_str(ps_parser *p, ps_jmember m) { return lg_span_str(p, m.key); }
/* What cJSON's valuedouble held for a number value; 0 for another kind. */
int lg_jv_number(ps_jv v, double *out);

static inline int lg_json_finite(ps_jv v, double *out) {
  double d;
  if (!lg_jv_number(v, &d) || !isfinite(d))
    return 0;
  *out = d;
  return 1;
}
/* A finite, integral number within int64. */
int lg_json_int(ps_jv v, int64_t *out);
static inline int lg_json_bool(ps_jv v) {
  ps_jv_kind_t k = ps_jv_kind(v);
  return k == PS_JV_TRUE || k == PS_JV_FALSE;
}
static inline int lg_json_true(ps_jv v) { return ps_jv_kind(v) == PS_JV_TRUE; }
static inline int lg_is_object(ps_jv v) { return ps_jv_kind(v) == PS_JV_OBJECT; }
/* The first member of `o` named `k` (none when `o` is not an object),
 * skipping over the record's indexed containers by lookup. */
static inline ps_jv lg_obj_get(const ps_parser *p, ps_jv o, const char *k) {
  ps_jv v;
  ps_jv_get_ix(o, k, p->rec.ixp, &v);
  return v;
}

/* ---- loadgen_points.c: the point --------------------------------------- */

void lg_pt_reset(ps_parser *p);
/* A tag, unless the value is empty or the tags are full. */
void lg_tag_add(ps_parser *p, const char *key, const char *value);
/* run, test_type and revision. */
void lg_tags_run(ps_parser *p);
/* NULL when the fields are full. */
ps_field *lg_field_new(ps_parser *p, const char *key, ps_ftype t);
/* Fields from values; a value of another kind (or absent, null,
 * non-finite, or not integral for an int) adds nothing. */
void lg_add_float(ps_parser *p, const char *key, ps_jv v);
void lg_add_int(ps_parser *p, const char *key, ps_jv v);
void lg_add_bool(ps_parser *p, const char *key, ps_jv v);
void lg_add_bool_value(ps_parser *p, const char *key, int b);
void lg_add_string(ps_parser *p, const char *key, const char *s);
/* Every scalar member of `obj` as a field: names in `ints` as integers,
 * other numbers as floats, booleans and strings as they are; names in
 * `skip`, nested values and null left out; keys prefixed with `prefix`
 * when it is given. */
void lg_add_object_fields(ps_parser *p, ps_jv obj, const char *const *ints,
                          const char *const *skip, const char *prefix);
/* The same from a member table. */
void lg_add_table_fields(ps_parser *p, const ps_jtable *t, const char *const *ints,
                         const char *const *skip);
/* Emits the built point (none without fields), skipping the points a
 * resumed small record already had accepted. */
int lg_pt_emit(ps_parser *p, ps_emitter *em, const char *measurement, int64_t time_ns);

/* ---- loadgen_records.c ------------------------------------------------- */

/* The record's `stage` as a tag value ("" when it is not an integer). */
void lg_stage_tag(ps_jv stage, char *buf, size_t n);
/* A loadgen_event point: `elapsed`, then the record's other scalar
 * members, read from its member table when `tab` is given. */
int lg_emit_event(ps_parser *p, ps_emitter *em, ps_jv root, const ps_jtable *tab,
                  ps_jv elapsed, const char *type, const char *stage, int64_t t);
int lg_emit_process(ps_parser *p, ps_emitter *em, ps_jv root, const char *stage, int64_t t);
int lg_emit_storage(ps_parser *p, ps_emitter *em, ps_jv root, const char *stage, int64_t t);
void lg_storage_free(lg_storage *st);

/* ---- loadgen_finish.c -------------------------------------------------- */

/* What a perf-finish line is read from: the record, the text its
 * positions point into (the line, or p->rec.norm when owned), the line's
 * length and resume key, and its envelope's time and stage tag. */
typedef struct lg_finish_line {
  ps_jv root;
  int owned;
  const char *data;
  size_t len;
  uint64_t key;
  double wall;
  const char *stage;
} lg_finish_line;

/* Reads perf-finish's run facts and emits its points from the start
 * (p->root_tab must hold the record's members). As lg_finish_continue. */
int lg_finish_start(ps_parser *p, ps_emitter *em, const lg_finish_line *line);
/* Moves the cursor to the same record handed over at `data`. */
void lg_finish_rebase(ps_parser *p, const char *data);
/* Emits from the cursor: 0 when every point was emitted, -EAGAIN with the
 * cursor on the refused point, another negative errno (cursor dropped). */
int lg_finish_continue(ps_parser *p, ps_emitter *em);
/* Drops the cursor (and a normalised record's megabytes). */
void lg_finish_reset(ps_parser *p);
/* Gives back the cursor's tables (the parser is freed). */
void lg_finish_free(lg_finish *f);

#endif
