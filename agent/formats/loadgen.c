/*
 * formats/loadgen.c: Agoric testnet-load-generator results (perf.jsonl)
 * into the loadgen_* measurements of docs/schema.md (docs/loadgen.md).
 *
 * Design
 * - Only perf.jsonl is read, line by line. Streamed lines are small and map
 *   to one point each (a storage line to one point per area plus `total`);
 *   the single perf-finish line holds everything else and can be ~10 MB.
 * - Back-pressure (emit.h -EAGAIN): the perf-finish tree is parsed once and
 *   kept with a cursor (phase, stage, item) naming the next point to emit, so
 *   a resumed call continues at the refused point without re-parsing and
 *   without re-walking what was already sent. Small records remember how many
 *   of their points were accepted and skip those on the resumed call.
 * - Types follow docs/schema.md's integer list by field name; every other number
 *   is a float, whatever the JSON text looked like. A null, a missing key, a
 *   non-finite number or a non-integral value for an integer field is an
 *   absent field, never a zero.
 * - Points borrow their strings from the cJSON tree and from per-parser
 *   scratch arrays, so nothing is allocated per field.
 * - A record's tree is kept until the next record (perf-finish is resumed
 *   from it) and built with cJSON's ordinary allocator. An arena through
 *   cJSON_InitHooks was faster, but those hooks are process-global: a
 *   cJSON call on libuv's threadpool (CREATE DATABASE's answer) during a
 *   parse allocated from, or freed into, the wrong allocator and crashed.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/jsontext.h"
#include "formats/format.h"
#include "runs/runs.h"

#define LG_MAX_FIELDS 96
#define LG_MAX_TAGS 8
#define LG_KEY_LEN 64

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

struct ps_parser {
  int64_t mtime_ns; /* of perf.jsonl when opened: the origin's fallback */
  ps_run_id id;
  ps_run_facts facts;

  /* resume state of a small record */
  int resuming;
  uint64_t resume_hash; /* of the record being resumed (and of perf-finish) */
  size_t accepted; /* points of the current record the emitter took */
  size_t skip;     /* points still to skip on a resumed call */

  cJSON *tree; /* the current record's tree */

  /* resume state of perf-finish */
  cJSON *fin_root;
  size_t fin_len;
  finish_phase phase;
  cJSON *fin_stage;
  cJSON *fin_item;
  double fin_wall;
  char fin_envelope_stage[24];

  /* scratch for one point */
  ps_tag tags[LG_MAX_TAGS];
  size_t ntags;
  ps_field fields[LG_MAX_FIELDS];
  size_t nfields;
  char keybuf[LG_MAX_FIELDS][LG_KEY_LEN];
  char tagbuf[4][96];
  char strbuf[64];

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

/* ---- building a point --------------------------------------------------- */

static void pt_reset(ps_parser *p) {
  p->ntags = 0;
  p->nfields = 0;
}

static void tag_add(ps_parser *p, const char *key, const char *value) {
  if (!value || !*value || p->ntags >= LG_MAX_TAGS)
    return;
  p->tags[p->ntags].key = key;
  p->tags[p->ntags].value = value;
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
  ps_field *f = &p->fields[p->nfields++];
  f->key = key;
  f->type = t;
  return f;
}

static int json_finite(const cJSON *v, double *out) {
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
    return 0;
  *out = v->valuedouble;
  return 1;
}

static void add_float(ps_parser *p, const char *key, const cJSON *v) {
  double d;
  ps_field *f;
  if (json_finite(v, &d) && (f = field_new(p, key, PS_F_FLOAT)))
    f->v.f = d;
}

static int json_int(const cJSON *v, int64_t *out) {
  double d;
  if (!json_finite(v, &d) || d != floor(d) || d < -9.2e18 || d > 9.2e18)
    return 0;
  *out = (int64_t)d;
  return 1;
}

static void add_int(ps_parser *p, const char *key, const cJSON *v) {
  int64_t i;
  ps_field *f;
  if (json_int(v, &i) && (f = field_new(p, key, PS_F_INT)))
    f->v.i = i;
}

static void add_bool(ps_parser *p, const char *key, const cJSON *v) {
  ps_field *f;
  if (cJSON_IsBool(v) && (f = field_new(p, key, PS_F_BOOL)))
    f->v.b = cJSON_IsTrue(v);
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

/* Every scalar member of `obj` as a field: integers by name, other numbers
 * as floats, booleans and strings as they are; nested values are skipped.
 * With a prefix, keys are composed in the parser's key buffer. */
static void add_object_fields(ps_parser *p, const cJSON *obj,
                              const char *const *ints,
                              const char *const *skip, const char *prefix) {
  const cJSON *it;
  cJSON_ArrayForEach(it, obj) {
    const char *key = it->string;
    if (!key || in_list(skip, key))
      continue;
    if (prefix) {
      if (p->nfields >= LG_MAX_FIELDS)
        return;
      char *kb = p->keybuf[p->nfields];
      int n = snprintf(kb, LG_KEY_LEN, "%s%s", prefix, key);
      if (n < 0 || n >= LG_KEY_LEN)
        continue;
      key = kb;
    }
    if (cJSON_IsNumber(it)) {
      if (in_list(ints, prefix ? it->string : key))
        add_int(p, key, it);
      else
        add_float(p, key, it);
    } else if (cJSON_IsBool(it)) {
      add_bool(p, key, it);
    } else if (cJSON_IsString(it) && it->valuestring) {
      add_string(p, key, it->valuestring);
    }
  }
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
  ps_point pt = {measurement, p->tags,    p->ntags,
                 p->fields,   p->nfields, time_ns};
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
static void origin_from_first(ps_parser *p, const cJSON *root,
                              double timestamp) {
  if (p->facts.have_origin)
    return;
  const cJSON *to = cJSON_GetObjectItemCaseSensitive(root, "timeOrigin");
  double origin, mtime;
  if (json_finite(to, &origin)) {
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

static double line_timestamp(const cJSON *root, int *ok) {
  double t = 0;
  *ok = json_finite(cJSON_GetObjectItemCaseSensitive(root, "timestamp"), &t);
  return t;
}

/* ---- open / free ---------------------------------------------------------- */

/* Parses one record, dropping the previous record's tree. */
static cJSON *parse_record(ps_parser *p, const char *data, size_t len) {
  cJSON_Delete(p->tree);
  p->tree = cJSON_ParseWithLength(data, len);
  return p->tree;
}

static void finish_reset(ps_parser *p) {
  if (p->fin_root) { /* the perf-finish tree: tens of MB */
    cJSON_Delete(p->tree);
    p->tree = NULL;
  }
  p->fin_root = NULL;
  p->fin_len = 0;
  p->phase = FP_DONE;
  p->fin_stage = p->fin_item = NULL;
}

static void loadgen_free(ps_parser *p) {
  if (!p)
    return;
  finish_reset(p);
  cJSON_Delete(p->tree);
  free(p->areas);
  free(p);
}

/* The origin from the first line the driver read, so that a parser opened
 * mid-file (after a restart) knows it; only a complete line is given, a
 * half-written one might not parse. */
static void origin_from_head(ps_parser *p, const ps_input_head *head) {
  if (!head->first_line)
    return;
  cJSON *root = cJSON_ParseWithLength(head->first_line, head->first_len);
  int ok;
  double ts = root ? line_timestamp(root, &ok) : 0;
  if (root && cJSON_IsObject(root) && ok)
    origin_from_first(p, root, ts);
  cJSON_Delete(root);
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

static void stage_tag(const cJSON *root, char *buf, size_t n) {
  int64_t s;
  buf[0] = '\0';
  if (json_int(cJSON_GetObjectItemCaseSensitive(root, "stage"), &s))
    snprintf(buf, n, "%lld", (long long)s);
}

static int emit_event(ps_parser *p, ps_emitter *em, const cJSON *root,
                      const char *type, const char *stage, int64_t t) {
  pt_reset(p);
  tags_run(p);
  tag_add(p, "stage", stage);
  tag_add(p, "event", strncmp(type, "perf-", 5) == 0 ? type + 5 : type);
  add_float(p, "elapsed", cJSON_GetObjectItemCaseSensitive(root, "elapsed"));
  add_object_fields(p, root, INT_EVENT, SKIP_ENVELOPE, NULL);
  return pt_emit(p, em, "loadgen_event", t);
}

static int emit_process(ps_parser *p, ps_emitter *em, const cJSON *root,
                        const char *stage, int64_t t) {
  const cJSON *ptype = cJSON_GetObjectItemCaseSensitive(root, "processType");
  const cJSON *vat = cJSON_GetObjectItemCaseSensitive(root, "vatID");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
  char *proc = p->tagbuf[0];
  if (!cJSON_IsString(ptype) || !ptype->valuestring[0]) {
    ps_emit_reject(em, "perf-chain-process-usage without a processType");
    return 0;
  }
  if (strcmp(ptype->valuestring, "vat") == 0 && cJSON_IsString(vat) &&
      vat->valuestring[0]) {
    if (cJSON_IsString(name) && name->valuestring[0])
      snprintf(proc, sizeof p->tagbuf[0], "%s:%s", vat->valuestring,
               name->valuestring);
    else
      snprintf(proc, sizeof p->tagbuf[0], "%s", vat->valuestring);
  } else {
    snprintf(proc, sizeof p->tagbuf[0], "%s", ptype->valuestring);
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

static int emit_storage(ps_parser *p, ps_emitter *em, const cJSON *root,
                        const char *stage, int64_t t) {
  const cJSON *chain = cJSON_GetObjectItemCaseSensitive(root, "chain");
  if (!cJSON_IsObject(chain)) {
    ps_emit_reject(em, "perf-chain-storage-usage without a \"chain\" object");
    return 0;
  }
  p->nareas = 0;
  int64_t total = 0;
  int any = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, chain) {
    int64_t kib;
    if (!it->string || !json_int(it, &kib))
      continue;
    storage_area *a = area_get(p, it->string);
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

static const cJSON *obj_get(const cJSON *o, const char *k) {
  return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* Time of stage-level points; 0 when the stage has no startedAt. */
static int stage_time(const cJSON *stage, int64_t *t) {
  double s;
  if (!json_finite(obj_get(stage, "startedAt"), &s))
    return 0;
  *t = ps_seconds_to_ns(s);
  return 1;
}

static int emit_stage_point(ps_parser *p, ps_emitter *em, const cJSON *stage) {
  int64_t t;
  if (!stage_time(stage, &t)) {
    ps_emit_reject(em,
                   "perf-finish: stage %s has no startedAt; its stage and "
                   "summary points are left out",
                   stage->string ? stage->string : "?");
    return 0;
  }
  pt_reset(p);
  tags_run(p);
  tag_add(p, "stage", stage->string);
  static const char *const ints[] = {"stageIndex",       "blockCount",
                                     "cycleCount",       "previousCycleCount",
                                     "firstBlockHeight", "lastBlockHeight"};
  static const char *const floats[] = {"duration", "readyDuration",
                                       "chainInitDuration",
                                       "clientInitDuration",
                                       "loadgenInitDuration"};
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
    add_int(p, ints[i], obj_get(stage, ints[i]));
  for (size_t i = 0; i < sizeof floats / sizeof *floats; i++)
    add_float(p, floats[i], obj_get(stage, floats[i]));
  const cJSON *cfg = obj_get(stage, "stageConfig");
  const cJSON *chain_only = obj_get(cfg, "chainOnly");
  const cJSON *dur = obj_get(cfg, "durationConfig");
  add_bool(p, "chainOnly", chain_only);
  add_float(p, "durationConfig", dur);
  if (cJSON_IsObject(cfg)) {
    /* the same test as perf_to_stats_csv.jq: chainOnly != true and
     * durationConfig != 0 (a missing value passes both) */
    int loadgen = !cJSON_IsTrue(chain_only) &&
                  !(cJSON_IsNumber(dur) && dur->valuedouble == 0);
    add_bool_value(p, "loadgen", loadgen);
  }
  return pt_emit(p, em, "loadgen_stage", t);
}

static int emit_summary(ps_parser *p, ps_emitter *em, const cJSON *stage,
                        const cJSON *item, int blocks) {
  int64_t t;
  if (!cJSON_IsObject(item) || !item->string || !stage_time(stage, &t))
    return 0;
  pt_reset(p);
  tags_run(p);
  tag_add(p, "stage", stage->string);
  tag_add(p, blocks ? "summary" : "task", item->string);
  add_object_fields(p, item, INT_SUMMARY, NULL, NULL);
  return pt_emit(p, em, blocks ? "loadgen_stage_blocks" : "loadgen_stage_cycles",
                 t);
}

static int emit_block(ps_parser *p, ps_emitter *em, const cJSON *stage,
                      const cJSON *b) {
  if (!cJSON_IsObject(b))
    return 0;
  double s;
  if (!json_finite(obj_get(b, "beginAt"), &s) &&
      !json_finite(obj_get(b, "blockTime"), &s)) {
    ps_emit_reject(em, "perf-finish: stage %s block %s has no beginAt or "
                       "blockTime; left out",
                   stage->string ? stage->string : "?",
                   b->string ? b->string : "?");
    return 0;
  }
  const cJSON *live = obj_get(b, "liveMode");
  pt_reset(p);
  tags_run(p);
  tag_add(p, "stage", stage->string);
  if (cJSON_IsBool(live))
    tag_add(p, "live", cJSON_IsTrue(live) ? "true" : "false");
  add_object_fields(p, b, INT_BLOCK, SKIP_BLOCK, NULL);
  return pt_emit(p, em, "loadgen_block", ps_seconds_to_ns(s));
}

static int emit_cycle(ps_parser *p, ps_emitter *em, const cJSON *stage,
                      const cJSON *c) {
  if (!cJSON_IsObject(c))
    return 0;
  double s;
  const cJSON *task = obj_get(c, "task");
  if (!json_finite(obj_get(c, "startedAt"), &s) || !cJSON_IsString(task)) {
    ps_emit_reject(em, "perf-finish: stage %s cycle %s has no startedAt or "
                       "task; left out",
                   stage->string ? stage->string : "?",
                   c->string ? c->string : "?");
    return 0;
  }
  pt_reset(p);
  tags_run(p);
  tag_add(p, "stage", stage->string);
  tag_add(p, "task", task->valuestring);
  add_int(p, "seq", obj_get(c, "seq"));
  add_bool(p, "success", obj_get(c, "success"));
  double ended;
  add_bool_value(p, "finished", json_finite(obj_get(c, "endedAt"), &ended));
  add_float(p, "duration", obj_get(c, "duration"));
  add_int(p, "blockCount", obj_get(c, "blockCount"));
  add_int(p, "startBlockHeight", obj_get(c, "startBlockHeight"));
  add_int(p, "endBlockHeight", obj_get(c, "endBlockHeight"));
  return pt_emit(p, em, "loadgen_cycle", ps_seconds_to_ns(s));
}

static int emit_run(ps_parser *p, ps_emitter *em, const cJSON *stats) {
  double s;
  int64_t t;
  if (json_finite(obj_get(stats, "startedAt"), &s))
    t = ps_seconds_to_ns(s);
  else if (p->facts.have_first_wall)
    t = ps_seconds_to_ns(p->facts.first_wall_s);
  else
    return 0;
  const cJSON *meta = obj_get(stats, "metadata");
  const cJSON *profile = obj_get(meta, "profile");
  const cJSON *test_data = obj_get(meta, "testData");
  const cJSON *cycles = obj_get(stats, "cyclesSummary");
  pt_reset(p);
  tags_run(p);
  if (cJSON_IsString(profile))
    tag_add(p, "profile", profile->valuestring);
  double d;
  /* the CSV's `success`: .duration != null */
  add_bool_value(p, "success", json_finite(obj_get(stats, "duration"), &d));
  add_float(p, "duration", obj_get(stats, "duration"));
  const cJSON *boot = obj_get(stats, "chainBootstrapDuration");
  if (!json_finite(boot, &d))
    boot = obj_get(obj_get(obj_get(stats, "stages"), "0"), "chainInitDuration");
  add_float(p, "chainBootstrapDuration", boot);
  add_float(p, "walletDeployDuration", obj_get(stats, "walletDeployDuration"));
  add_float(p, "loadgenDeployDuration",
            obj_get(stats, "loadgenDeployDuration"));
  add_int(p, "totalBlockCount", obj_get(stats, "totalBlockCount"));
  add_int(p, "stageCount", obj_get(stats, "stageCount"));
  add_float(p, "cycleSuccessRate", obj_get(cycles, "cycleSuccessRate"));
  add_float(p, "cycleAvgDuration", obj_get(cycles, "avgDuration"));
  const cJSON *rev = obj_get(test_data, "sdkRevision");
  if (cJSON_IsString(rev)) {
    add_string(p, "sdkRevision", rev->valuestring);
  } else if (json_finite(rev, &d)) {
    /* yargs-parser made an all-digit revision a number; the jq script
     * applies tostring, and so do we */
    if (d == floor(d) && fabs(d) < 1e15)
      snprintf(p->strbuf, sizeof p->strbuf, "%.0f", d);
    else
      snprintf(p->strbuf, sizeof p->strbuf, "%.17g", d);
    add_string(p, "sdkRevision", p->strbuf);
  }
  add_int(p, "sdkCommitTime", obj_get(test_data, "sdkCommitTime"));
  add_object_fields(p, obj_get(stats, "liveBlocksSummary"), INT_SUMMARY, NULL,
                    "live_");
  return pt_emit(p, em, "loadgen_run", t);
}

static cJSON *first_child(const cJSON *stage, const char *key) {
  const cJSON *o = obj_get(stage, key);
  return cJSON_IsObject(o) ? o->child : NULL;
}

/* Walks the cached perf-finish tree from the cursor. Returns 0 when every
 * point was emitted, -EAGAIN with the cursor on the refused point, or
 * another negative errno (the tree is then dropped). */
static int finish_continue(ps_parser *p, ps_emitter *em) {
  const cJSON *stats = obj_get(p->fin_root, "stats");
  int rc = 0;
  while (rc == 0) {
    switch (p->phase) {
    case FP_EVENT:
      rc = emit_event(p, em, p->fin_root, "perf-finish",
                      p->fin_envelope_stage, ps_seconds_to_ns(p->fin_wall));
      if (rc == 0) {
        p->phase = FP_STAGE;
        p->fin_stage = first_child(stats, "stages");
      }
      break;
    case FP_STAGE:
      if (!p->fin_stage) {
        p->phase = FP_RUN;
        break;
      }
      rc = emit_stage_point(p, em, p->fin_stage);
      if (rc == 0) {
        p->phase = FP_BLOCKSUM;
        p->fin_item = first_child(p->fin_stage, "blocksSummaries");
      }
      break;
    case FP_BLOCKSUM:
    case FP_CYCLESUM:
    case FP_BLOCKS:
    case FP_CYCLES:
      if (!p->fin_item) {
        static const char *const next_key[] = {
            [FP_BLOCKSUM] = "cyclesSummaries",
            [FP_CYCLESUM] = "blocks",
            [FP_BLOCKS] = "cycles",
        };
        if (p->phase == FP_CYCLES) {
          p->fin_stage = p->fin_stage->next;
          p->phase = FP_STAGE;
        } else {
          p->fin_item = first_child(p->fin_stage, next_key[p->phase]);
          p->phase++;
        }
        break;
      }
      if (p->phase == FP_BLOCKSUM || p->phase == FP_CYCLESUM)
        rc = emit_summary(p, em, p->fin_stage, p->fin_item,
                          p->phase == FP_BLOCKSUM);
      else if (p->phase == FP_BLOCKS)
        rc = emit_block(p, em, p->fin_stage, p->fin_item);
      else
        rc = emit_cycle(p, em, p->fin_stage, p->fin_item);
      if (rc == 0)
        p->fin_item = p->fin_item->next;
      break;
    case FP_RUN:
      rc = cJSON_IsObject(stats) ? emit_run(p, em, stats) : 0;
      if (rc == 0)
        p->phase = FP_DONE;
      break;
    case FP_DONE:
      finish_reset(p);
      return 0;
    }
  }
  if (rc != -EAGAIN)
    finish_reset(p);
  return rc;
}

static void finish_facts(ps_parser *p, const cJSON *stats) {
  double d;
  p->facts.finish_seen = 1;
  if ((p->facts.have_started_at =
           json_finite(obj_get(stats, "startedAt"), &d)))
    p->facts.started_at_s = d;
  if ((p->facts.have_ended_at = json_finite(obj_get(stats, "endedAt"), &d)))
    p->facts.ended_at_s = d;
  if ((p->facts.have_duration = json_finite(obj_get(stats, "duration"), &d)))
    p->facts.duration_s = d;
  const cJSON *profile = obj_get(obj_get(stats, "metadata"), "profile");
  if (cJSON_IsString(profile))
    snprintf(p->facts.profile, sizeof p->facts.profile, "%s",
             profile->valuestring);
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
  uint64_t hash = (p->fin_root || p->resuming) ? record_key(data, len, em->origin.line) : 0;
  if (p->fin_root) {
    if (len == p->fin_len && hash == p->resume_hash)
      return finish_continue(p, em);
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
  cJSON *root = parse_record(p, data, len);
  if (!root || !cJSON_IsObject(root)) {
    ps_emit_reject(em, root ? "not a JSON object" : "not valid JSON");
    return 0;
  }
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "type");
  int ok;
  double ts = line_timestamp(root, &ok);
  if (!cJSON_IsString(type) || !type->valuestring[0]) {
    ps_emit_reject(em, "no \"type\" string");
    return 0;
  }
  if (!ok) {
    ps_emit_reject(em, "%s: no numeric \"timestamp\"", type->valuestring);
    return 0;
  }
  origin_from_first(p, root, ts);
  if (!p->facts.have_origin) {
    ps_emit_reject(em, "%s: no timeOrigin known for this run",
                   type->valuestring);
    return 0;
  }
  double wall = p->facts.origin_s + ts;
  p->facts.have_last_wall = 1;
  p->facts.last_wall_s = wall;
  int64_t t = ps_seconds_to_ns(wall);
  char stage[24];
  stage_tag(root, stage, sizeof stage);
  const char *ty = type->valuestring;

  if (strcmp(ty, "perf-finish") == 0) {
    finish_facts(p, obj_get(root, "stats"));
    p->fin_root = root;
    p->fin_len = len;
    p->resume_hash = hash ? hash : record_key(data, len, em->origin.line);
    p->fin_wall = wall;
    memcpy(p->fin_envelope_stage, stage, sizeof stage);
    p->phase = FP_EVENT;
    return finish_continue(p, em);
  }

  int rc;
  if (strcmp(ty, "perf-chain-process-usage") == 0)
    rc = emit_process(p, em, root, stage, t);
  else if (strcmp(ty, "perf-chain-storage-usage") == 0)
    rc = emit_storage(p, em, root, stage, t);
  else
    rc = emit_event(p, em, root, ty, stage, t);
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
