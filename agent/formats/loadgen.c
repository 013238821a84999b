/*
 * formats/loadgen.c: Agoric testnet-load-generator results (perf.jsonl)
 * into the loadgen_* measurements of docs/schema.md (docs/loadgen.md).
 * This file is the format's face: its ops table, open and free, the run's
 * identity and time origin, and each line's dispatch; the parts it uses
 * are listed in loadgen_private.h.
 *
 * Design
 * - Only perf.jsonl is read, line by line. Streamed lines are small and map
 *   to one point each (a storage line to one point per area plus `total`:
 *   loadgen_records.c); the single perf-finish line holds everything else
 *   and can be ~10 MB (loadgen_finish.c).
 * - Records are read in place (core/jsonspan.h), not as a tree: the text is
 *   checked once, then members are found by skipping over values, and each
 *   block or cycle of perf-finish is read when its point is emitted. A
 *   cJSON tree of a 9 MB perf-finish line was ~800,000 allocations and a
 *   locale-aware strtod per number, and was built whole, in one loop turn,
 *   before its first point was sent; now its points go out 5,000 a turn
 *   while the rest of the line has not been read yet. A record that is not
 *   strict JSON goes through cJSON once and is read the same way
 *   (loadgen_read.c).
 * - Back-pressure (emit.h -EAGAIN): perf-finish keeps a cursor
 *   (loadgen_finish.c). Small records remember how many of their points
 *   were accepted and skip those on the resumed call; a key of the record
 *   (record_key below) tells that the resumed call got the same record.
 * - The facts the run tracker needs (runs.h) are updated as lines are read
 *   and offered through the ops (run_facts, set_run_facts). Reading a run
 *   folder and judging it is the run module's (input/feed_run.c); this file
 *   only parses what it is given: the first line and mtime of perf.jsonl
 *   come with open() (ps_input_head), so a parser opened mid-file after a
 *   restart still knows timeOrigin.
 */
#include <errno.h>
#include <libgen.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsontext.h"
#include "loadgen_private.h"

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
  if (lg_json_finite(time_origin, &origin)) {
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

/* The origin from the first line the driver read, so that a parser opened
 * mid-file (after a restart) knows it; only a complete line is given, a
 * half-written one might not parse. */
static void origin_from_head(ps_parser *p, const ps_input_head *head) {
  if (!head->first_line)
    return;
  ps_jv root;
  int owned;
  if (lg_read_record(p, head->first_line, head->first_len, &root, &owned) < 0 ||
      !lg_is_object(root))
    return;
  double ts = 0;
  if (lg_json_finite(lg_obj_get(p, root, "timestamp"), &ts))
    origin_from_first(p, lg_obj_get(p, root, "timeOrigin"), ts);
}

/* ---- open / free ---------------------------------------------------------- */

static void loadgen_free(ps_parser *p) {
  if (!p)
    return;
  lg_finish_reset(p);
  lg_finish_free(&p->fin);
  ps_jtable_free(&p->root_tab);
  lg_record_free(&p->rec);
  lg_point_free(p);
  lg_storage_free(&p->storage);
  free(p);
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
  ps_buf_init(&p->rec.norm, 0);
  lg_finish_reset(p);
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

/* What every record carries: its type, its time (from the run's origin),
 * its stage and elapsed time. */
typedef struct envelope {
  const char *type; /* in the arena: valid until the next point starts */
  double wall;
  char stage[24];
  ps_jv elapsed;
} envelope;

/* Reads the envelope of `root` (through its member table when `tab` is
 * given) and moves the run's facts on. 1, or 0 after rejecting the record. */
static int read_envelope(ps_parser *p, ps_emitter *em, ps_jv root, const ps_jtable *tab,
                         envelope *env) {
#define ROOT(k) (tab ? ps_jtable_get(tab, (k)) : lg_obj_get(p, root, (k)))
  lg_pt_reset(p);
  const char *ty = lg_jv_str(p, ROOT("type"));
  double ts = 0;
  int ok = lg_json_finite(ROOT("timestamp"), &ts);
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
  env->type = ty;
  env->wall = p->facts.origin_s + ts;
  p->facts.have_last_wall = 1;
  p->facts.last_wall_s = env->wall;
  lg_stage_tag(ROOT("stage"), env->stage, sizeof env->stage);
  env->elapsed = ROOT("elapsed");
#undef ROOT
  return 1;
}

/* A streamed record's point; remembers the record when it is refused. */
static int emit_streamed(ps_parser *p, ps_emitter *em, ps_jv root, const ps_jtable *tab,
                         const envelope *env, const char *data, size_t len) {
  int64_t t = ps_seconds_to_ns(env->wall);
  int rc;
  if (strcmp(env->type, "perf-chain-process-usage") == 0)
    rc = lg_emit_process(p, em, root, env->stage, t);
  else if (strcmp(env->type, "perf-chain-storage-usage") == 0)
    rc = lg_emit_storage(p, em, root, env->stage, t);
  else {
    char *type = strdup(env->type); /* the arena is emptied for the point */
    if (!type)
      return -ENOMEM;
    rc = lg_emit_event(p, em, root, tab, env->elapsed, type, env->stage, t);
    free(type);
  }
  if (rc == -EAGAIN) {
    p->resume.active = 1;
    p->resume.hash = record_key(data, len, em->origin.line);
  }
  return rc;
}

static int loadgen_line(ps_parser *p, const char *data, size_t len,
                        ps_emitter *em) {
  if (lg_point_ready(p) < 0)
    return -ENOMEM;
  uint64_t hash = (p->fin.active || p->resume.active) ? record_key(data, len, em->origin.line) : 0;
  if (p->fin.active) {
    if (len == p->fin.len && hash == p->fin.key) {
      lg_finish_rebase(p, data);
      return lg_finish_continue(p, em);
    }
    lg_finish_reset(p); /* not the record we were resuming: start over */
  }
  if (p->resume.active && hash == p->resume.hash) {
    p->resume.skip = p->resume.accepted;
  } else {
    p->resume.skip = 0;
    p->resume.accepted = 0;
  }
  p->resume.active = 0;

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
  int rc = lg_read_record(p, data, len, &root, &owned);
  if (rc == -ENOMEM)
    return rc;
  if (rc < 0 || !lg_is_object(root)) {
    ps_emit_reject(em, rc < 0 ? "not valid JSON" : "not a JSON object");
    return 0;
  }
  /* perf-finish is looked up many times through a table of its members;
   * a small record's few lookups walk it */
  int big = len > 4096;
  if (big && ps_jtable_fill(&p->root_tab, root, p->rec.ixp) < 0)
    return -ENOMEM;
  envelope env;
  if (!read_envelope(p, em, root, big ? &p->root_tab : NULL, &env))
    return 0;
  if (strcmp(env.type, "perf-finish") != 0)
    return emit_streamed(p, em, root, big ? &p->root_tab : NULL, &env, data, len);
  if (!big && ps_jtable_fill(&p->root_tab, root, p->rec.ixp) < 0)
    return -ENOMEM;
  lg_finish_line fl = {.root = root,
                       .owned = owned,
                       .data = data,
                       .len = len,
                       .key = hash ? hash : record_key(data, len, em->origin.line),
                       .wall = env.wall,
                       .stage = env.stage};
  return lg_finish_start(p, em, &fl);
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
