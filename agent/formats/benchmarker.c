/*
 * formats/benchmarker.c: the `benchmarker` format, the raw report of the
 * InterUSS benchmarker (a BenchmarkRunReport, `<output>/<name>.json`;
 * docs/schema.md "Benchmarker").
 *
 * DESIGN
 * - A report is a document the tool writes once at the end of a run, but
 *   a long run's holds millions of operations and, with query details,
 *   gigabytes: it is read as a STREAM (format.h `stream`), token by token
 *   (json_stream.h), never as a tree. What is kept is 24 bytes per
 *   operation (its times, type and outcome), the steps and the
 *   configuration's names; query details are skipped as they pass.
 * - The tool writes with sorted keys, so a scenario's operations come
 *   before its steps and an operation group's origins before its `type`:
 *   operations are kept until the scenario's steps are known, and a group's
 *   operations get their type when the group closes. Any key order works.
 * - Figures are made once the document has ended (benchmarker_figures.c).
 * - Bad parts are rejected with their byte offset (the tool writes the
 *   whole report on one line) and dropped; the rest is still read. A
 *   document that is not JSON gives one reject and no points.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "formats/format.h"
#include "formats/json_stream.h"
#include "benchmarker_private.h"

#define BM_RUN_SOURCE "benchmarker"
#define BM_RUN_TITLE "benchmarker"
#define BM_FRAMES_MAX 24
/* A query detail larger than this is reported: a report meant for figures
 * should not carry it (record_query_details), and it is where a broken
 * writer's runaway body shows. Its operation is still counted. */
#define BM_QUERY_MAX (1024 * 1024)
/* Rejects listed per report: a writer that breaks every operation of a
 * million would otherwise print a million lines; the rest are counted in
 * one closing line. */
#define BM_REJECTS_LISTED 100

typedef enum bm_role {
  R_SKIP,
  R_ROOT,
  R_CONFIG,
  R_CFG_SCENS,
  R_CFG_SCEN,
  R_CFG_SETUP,
  R_CFG_ACTIONS,
  R_CFG_ACTION,
  R_RUNCMD,
  R_ENV,
  R_REPORT,
  R_SCENS,
  R_SCEN,
  R_META,
  R_OPS,
  R_OPTYPE,
  R_ORIGINS,
  R_ORIGIN,
  R_OUTCOMES,
  R_OUTCOME,
  R_OPLIST,
  R_OP,
  R_STEPS,
  R_STEP,
} bm_role;

typedef enum bm_key {
  K_OTHER,
  K_CONFIGURATION,
  K_REPORT,
  K_SCENARIOS,
  K_NAME,
  K_METADATA,
  K_SETUP,
  K_ACTIONS,
  K_RUN_COMMAND,
  K_ENV,
  K_OPERATIONS,
  K_STEPS,
  K_TYPE,
  K_ORIGINS,
  K_OUTCOMES,
  K_SUCCESSFUL,
  K_UNSUCCESSFUL,
  K_QUERY,
  K_T0,
  K_T1,
  K_LOAD_FACTOR,
  K_START_TIME,
  K_STABILITY,
  K_END_TIME,
  K_REASON,
  K_META_ARM,
  K_META_IMAGE,
  K_META_DATASTORE,
  K_DSS_IMAGE,
  K_DB_TYPE,
  K_CODEBASE_VERSION,
  K_COMMIT_HASH,
  K_LOAD,
} bm_key;

static const struct {
  const char *name;
  bm_key key;
} KEYS[] = {
    {"configuration", K_CONFIGURATION},
    {"report", K_REPORT},
    {"scenarios", K_SCENARIOS},
    {"name", K_NAME},
    {"metadata", K_METADATA},
    {"setup", K_SETUP},
    {"actions", K_ACTIONS},
    {"run_command", K_RUN_COMMAND},
    {"env", K_ENV},
    {"operations", K_OPERATIONS},
    {"steps", K_STEPS},
    {"type", K_TYPE},
    {"origins", K_ORIGINS},
    {"outcomes", K_OUTCOMES},
    {"successful", K_SUCCESSFUL},
    {"unsuccessful", K_UNSUCCESSFUL},
    {"query", K_QUERY},
    {"t0", K_T0},
    {"t1", K_T1},
    {"load_factor", K_LOAD_FACTOR},
    {"start_time", K_START_TIME},
    {"throughput_stability_time", K_STABILITY},
    {"end_time", K_END_TIME},
    {"termination_reason", K_REASON},
    {"arm", K_META_ARM},
    {"dss_image", K_META_IMAGE},
    {"image", K_META_IMAGE},
    {"datastore", K_META_DATASTORE},
    {"db_type", K_META_DATASTORE},
    {"DSS_IMAGE", K_DSS_IMAGE},
    {"DB_TYPE", K_DB_TYPE},
    {"codebase_version", K_CODEBASE_VERSION},
    {"commit_hash", K_COMMIT_HASH},
    {"load", K_LOAD},
};

typedef struct bm_frame {
  bm_role role;
  int is_object;
  bm_key key;   /* the member being read (objects) */
  size_t index; /* elements so far (arrays) */
} bm_frame;

struct ps_parser {
  int backfill;
  ps_json_stream js;
  bm_frame frames[BM_FRAMES_MAX];
  size_t depth;
  size_t skip_depth; /* > 0: inside a subtree nobody reads */
  int skip_is_query;
  uint64_t skip_begin;
  bm_names *meta; /* the metadata object being read */
  /* the operation, group and step being read */
  int64_t t0, t1;
  int has_t0, has_t1, op_bad, op_successful;
  uint64_t op_offset;
  size_t group_start;
  int group_type, group_bad;
  bm_step step;
  int step_bad;
  uint64_t step_offset;
  ps_emitter *em;   /* during a feed: where rejects go */
  int failed;       /* not JSON: no points */
  uint64_t rejects; /* problems found so far; those past BM_REJECTS_LISTED are only counted */
  size_t cursor;    /* points already delivered (back-pressure) */
  bm_report r;
};

static ps_input_kind bm_input_kind(const ps_source_cfg *src, const char *path) {
  (void)src;
  size_t n = strlen(path);
  return n > 5 && strcmp(path + n - 5, ".json") == 0 ? PS_INPUT_DOCUMENT : PS_INPUT_IGNORE;
}

/* The configuration is the folder the report is in: the benchmarker's
 * default output folder is named after its configuration file. */
static void folder_name(const ps_input_head *head, char *out, size_t cap) {
  const char *p = head->real_path ? head->real_path : head->path;
  const char *end = p ? strrchr(p, '/') : NULL;
  out[0] = '\0';
  if (!end)
    return;
  const char *start = end;
  while (start > p && start[-1] != '/')
    start--;
  size_t n = (size_t)(end - start);
  if (n >= cap)
    n = cap - 1;
  memcpy(out, start, n);
  out[n] = '\0';
}

static int bm_open(ps_parser **out, const ps_source_cfg *src, const ps_input_head *head,
                   ps_buf *err) {
  *out = NULL;
  ps_parser *p = calloc(1, sizeof *p);
  if (!p) {
    ps_buf_puts(err, "out of memory");
    return -ENOMEM;
  }
  p->backfill = 1;
  ps_js_init(&p->js);
  folder_name(head, p->r.configuration, sizeof p->r.configuration);
  if (src && src->arm)
    snprintf(p->r.configured_arm, sizeof p->r.configured_arm, "%s", src->arm);
  *out = p;
  return 0;
}

static void bm_set_backfill(ps_parser *p, int backfill) {
  if (p)
    p->backfill = backfill != 0;
}

static void bm_free(ps_parser *p) {
  if (!p)
    return;
  ps_benchmarker_report_free(&p->r);
  free(p);
}

static void copy_name(char *dst, const ps_js_token *t) {
  size_t n = t->len < BM_NAME_MAX - 1 ? t->len : BM_NAME_MAX - 1;
  memcpy(dst, t->text, n);
  dst[n] = '\0';
}

/* Grows an array of `size`-byte elements to hold one more. */
static int grow(void **arr, size_t *cap, size_t n, size_t size) {
  if (n < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 8;
  void *a = realloc(*arr, ncap * size);
  if (!a)
    return -ENOMEM;
  memset((char *)a + *cap * size, 0, (ncap - *cap) * size);
  *arr = a;
  *cap = ncap;
  return 0;
}

static bm_scenario *cur_scen(ps_parser *p) {
  return p->r.nscen ? &p->r.scen[p->r.nscen - 1] : NULL;
}

/* ---- RFC 3339 ------------------------------------------------------------ */

static int digits(const char *s, size_t n, int *out) {
  int v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return 0;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return 1;
}

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* "YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)" to ns since the epoch. */
static int parse_time(const char *s, size_t n, int64_t *out) {
  int y, mo, d, h, mi, se;
  if (n < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      s[13] != ':' || s[16] != ':' || !digits(s, 4, &y) || !digits(s + 5, 2, &mo) ||
      !digits(s + 8, 2, &d) || !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) ||
      !digits(s + 17, 2, &se) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
      se > 60)
    return 0;
  size_t i = 19;
  int64_t frac = 0, scale = 1000000000;
  if (i < n && s[i] == '.') {
    i++;
    size_t start = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
      if (scale > 1) {
        scale /= 10;
        frac += (s[i] - '0') * scale;
      }
      i++;
    }
    if (i == start)
      return 0;
  }
  int64_t offset_s = 0;
  if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
    i++;
  } else if (i + 6 == n && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    int oh, om;
    if (!digits(s + i + 1, 2, &oh) || !digits(s + i + 4, 2, &om))
      return 0;
    offset_s = (int64_t)(oh * 3600 + om * 60) * (s[i] == '+' ? 1 : -1);
    i += 6;
  } else {
    return 0;
  }
  if (i != n)
    return 0;
  int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset_s;
  /* nanoseconds since 1970 in 64 bits, and not before it, so that the
   * difference of two times fits as well: years 1970 to 2261 */
  if (secs < 0 || secs >= INT64_MAX / 1000000000LL)
    return 0;
  *out = secs * 1000000000LL + frac;
  return 1;
}

/* ---- the reader's callbacks ---------------------------------------------- */

#define REJECT(p, at, ...) bm_reject(p, at, __VA_ARGS__)

__attribute__((format(printf, 3, 4))) static void bm_reject(ps_parser *p, uint64_t at,
                                                            const char *fmt, ...) {
  if (++p->rejects > BM_REJECTS_LISTED)
    return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ps_emit_reject(p->em, "byte %llu: %s", (unsigned long long)at, msg);
}

static bm_key key_of(const ps_js_token *t) {
  if (t->has_nul || t->truncated)
    return K_OTHER;
  for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
    if (strcmp(KEYS[i].name, t->text) == 0)
      return KEYS[i].key;
  return K_OTHER;
}

static int scen_no(ps_parser *p) { return (int)p->r.nscen; }

static void op_begin(ps_parser *p, uint64_t at) {
  p->has_t0 = p->has_t1 = p->op_bad = 0;
  p->op_offset = at;
}

static int op_end(ps_parser *p) {
  bm_scenario *s = cur_scen(p);
  if (p->op_bad || !s)
    return 0;
  if (!p->has_t0 || !p->has_t1) {
    REJECT(p, p->op_offset, "scenario %d: an operation without %s; dropped", scen_no(p),
           p->has_t0 ? "t1" : "t0");
    return 0;
  }
  if (p->t1 < p->t0) {
    REJECT(p, p->op_offset, "scenario %d: an operation ends (t1) before it starts (t0); dropped",
           scen_no(p));
    return 0;
  }
  if (grow((void **)&s->ops, &s->cap, s->nops, sizeof *s->ops))
    return -ENOMEM;
  bm_op *o = &s->ops[s->nops++];
  o->t0_ns = p->t0;
  o->t1_ns = p->t1;
  o->type = 0;
  o->successful = (uint8_t)p->op_successful;
  return 0;
}

static void group_end(ps_parser *p, uint64_t at) {
  bm_scenario *s = cur_scen(p);
  if (!s)
    return;
  if (p->group_type < 0 || p->group_bad) {
    if (s->nops > p->group_start || p->group_type < 0)
      REJECT(p, at, "scenario %d: operations of %s; %zu dropped", scen_no(p),
             p->group_bad ? "an unusable type" : "no type", s->nops - p->group_start);
    s->nops = p->group_start;
    return;
  }
  for (size_t i = p->group_start; i < s->nops; i++)
    s->ops[i].type = (uint16_t)p->group_type;
}

/* The type's index in the scenario, added when new; -1 when too many. */
static int type_index(bm_scenario *s, const ps_js_token *t) {
  for (size_t i = 0; i < s->ntypes; i++)
    if (strcmp(s->types[i], t->text) == 0)
      return (int)i;
  if (s->ntypes >= BM_TYPES_MAX || t->truncated || !t->len)
    return -1;
  s->types[s->ntypes] = strdup(t->text);
  return s->types[s->ntypes] ? (int)s->ntypes++ : -1;
}

static int reason_of(const char *s) {
  if (strcmp(s, "Completed") == 0)
    return BM_REASON_COMPLETED;
  if (strcmp(s, "Unstable") == 0)
    return BM_REASON_UNSTABLE;
  if (strcmp(s, "StabilityNotAchieved") == 0)
    return BM_REASON_NOT_STABLE;
  return BM_REASON_NONE;
}

static const char *const STEP_KEY_NAMES[] = {[K_LOAD_FACTOR] = "load_factor",
                                             [K_START_TIME] = "start_time",
                                             [K_STABILITY] = "throughput_stability_time",
                                             [K_END_TIME] = "end_time",
                                             [K_REASON] = "termination_reason"};

static void step_bad(ps_parser *p, const ps_js_token *t, bm_key k, const char *why) {
  if (!p->step_bad)
    REJECT(p, t->offset, "scenario %d step %zu: %s %s; step dropped", scen_no(p),
           cur_scen(p) ? cur_scen(p)->nsteps + 1 : 0, STEP_KEY_NAMES[k], why);
  p->step_bad = 1;
}

static void step_scalar(ps_parser *p, bm_key k, const ps_js_token *t) {
  bm_step *st = &p->step;
  if (k == K_LOAD_FACTOR) {
    char *end;
    double v = t->kind == PS_JS_NUMBER ? strtod(t->text, &end) : 0.0;
    if (t->kind != PS_JS_NUMBER || !(v > 0.0) || v > 1e15)
      step_bad(p, t, k, "is not a positive number");
    st->load_factor = v;
    st->has_load = 1;
  } else if (k == K_START_TIME || k == K_END_TIME || k == K_STABILITY) {
    if (k == K_STABILITY && t->kind == PS_JS_NULL)
      return;
    int64_t v;
    if (t->kind != PS_JS_STRING || !parse_time(t->text, t->len, &v)) {
      step_bad(p, t, k, "is not an RFC 3339 time");
      return;
    }
    *(k == K_START_TIME ? &st->start_ns : k == K_END_TIME ? &st->end_ns : &st->stable_ns) = v;
    *(k == K_START_TIME ? &st->has_start : k == K_END_TIME ? &st->has_end : &st->has_stable) = 1;
  } else if (k == K_REASON) {
    st->reason = t->kind == PS_JS_STRING ? reason_of(t->text) : BM_REASON_NONE;
    if (st->reason == BM_REASON_NONE)
      step_bad(p, t, k, "is not Completed, Unstable or StabilityNotAchieved");
  }
}

static int step_end(ps_parser *p) {
  bm_scenario *s = cur_scen(p);
  bm_step *st = &p->step;
  if (!s || p->step_bad)
    return 0;
  size_t no = s->nsteps + 1;
  if (!st->has_load || !st->has_start || !st->has_end || st->reason == BM_REASON_NONE) {
    REJECT(p, p->step_offset, "scenario %d step %zu: no %s; step dropped", scen_no(p), no,
           !st->has_load    ? "load_factor"
           : !st->has_start ? "start_time"
           : !st->has_end   ? "end_time"
                            : "termination_reason");
    return 0;
  }
  st->usable = 1;
  st->has_window = st->has_stable;
  if (st->reason != BM_REASON_NOT_STABLE && !st->has_stable)
    REJECT(p, p->step_offset,
           "scenario %d step %zu: %s without a throughput_stability_time; "
           "no figures for its window",
           scen_no(p), no, st->reason == BM_REASON_COMPLETED ? "Completed" : "Unstable");
  if (st->has_stable && (st->stable_ns < st->start_ns || st->end_ns < st->stable_ns)) {
    REJECT(p, p->step_offset,
           "scenario %d step %zu: its times are out of order (start, "
           "stability, end); no figures for its window",
           scen_no(p), no);
    st->has_window = 0;
  }
  if (grow((void **)&s->steps, &s->steps_cap, s->nsteps, sizeof *s->steps))
    return -ENOMEM;
  s->steps[s->nsteps++] = *st;
  return 0;
}

static void meta_scalar(ps_parser *p, bm_key k, const ps_js_token *t) {
  if (!p->meta || t->kind != PS_JS_STRING)
    return;
  if (k == K_META_ARM)
    copy_name(p->meta->arm, t);
  else if (k == K_META_IMAGE)
    copy_name(p->meta->image, t);
  else if (k == K_META_DATASTORE)
    copy_name(p->meta->datastore, t);
}

static void op_scalar(ps_parser *p, bm_key k, const ps_js_token *t) {
  if (k != K_T0 && k != K_T1)
    return;
  int64_t v;
  if (t->kind != PS_JS_STRING || !parse_time(t->text, t->len, &v)) {
    if (!p->op_bad)
      REJECT(p, t->offset, "scenario %d: an operation's %s is not an RFC 3339 time; dropped",
             scen_no(p), k == K_T0 ? "t0" : "t1");
    p->op_bad = 1;
    return;
  }
  if (k == K_T0) {
    p->t0 = v;
    p->has_t0 = 1;
  } else {
    p->t1 = v;
    p->has_t1 = 1;
  }
}

/* A scalar member or element, by where it is. */
static void on_scalar(ps_parser *p, const ps_js_token *t) {
  bm_frame *f = &p->frames[p->depth - 1];
  bm_key k = f->is_object ? f->key : K_OTHER;
  if (t->kind == PS_JS_STRING && t->has_nul && f->role != R_OP && f->role != R_STEP &&
      (k != K_OTHER || f->role == R_CFG_SETUP)) {
    /* a name cut at its NUL would silently become another name */
    REJECT(p, t->offset, "scenario %d: a name holding \\u0000; ignored", scen_no(p));
    if (f->role == R_OPTYPE && k == K_TYPE)
      p->group_bad = 1, p->group_type = -1;
    return;
  }
  switch (f->role) {
  case R_ROOT:
    if ((k == K_COMMIT_HASH || k == K_CODEBASE_VERSION) && t->kind == PS_JS_STRING)
      copy_name(k == K_COMMIT_HASH ? p->r.commit : p->r.version, t);
    break;
  case R_CFG_SCEN:
    if ((k == K_NAME || k == K_LOAD) && t->kind == PS_JS_STRING)
      copy_name(k == K_NAME ? p->r.cfg[p->r.ncfg - 1].name : p->r.cfg[p->r.ncfg - 1].load, t);
    break;
  case R_CFG_SETUP: {
    bm_config_scenario *c = &p->r.cfg[p->r.ncfg - 1];
    if (t->kind == PS_JS_STRING && c->nsetup < 8)
      copy_name(c->setup[c->nsetup++], t);
    break;
  }
  case R_CFG_ACTION:
    if (k == K_NAME && t->kind == PS_JS_STRING)
      copy_name(p->r.actions[p->r.nactions - 1].name, t);
    break;
  case R_ENV:
    if ((k == K_DSS_IMAGE || k == K_DB_TYPE) && t->kind == PS_JS_STRING) {
      bm_action *a = &p->r.actions[p->r.nactions - 1];
      copy_name(k == K_DSS_IMAGE ? a->image : a->datastore, t);
    }
    break;
  case R_META: meta_scalar(p, k, t); break;
  case R_OPTYPE:
    if (k == K_TYPE) {
      p->group_type = t->kind == PS_JS_STRING ? type_index(cur_scen(p), t) : -1;
      p->group_bad = p->group_type < 0;
    }
    break;
  case R_OP: op_scalar(p, k, t); break;
  case R_STEP:
    if (k >= K_LOAD_FACTOR && k <= K_REASON)
      step_scalar(p, k, t);
    break;
  case R_SCEN:
    if (k == K_OPERATIONS || k == K_STEPS)
      REJECT(p, t->offset, "scenario %d: %s is not a list", scen_no(p),
             k == K_STEPS ? "steps" : "operations");
    break;
  default: break;
  }
}

/* The role of a container opening here, and whether it must be an object. */
static bm_role child_role(const bm_frame *f, int *want_object) {
  static const struct {
    bm_role parent;
    bm_key key; /* K_OTHER: any element of an array */
    bm_role child;
    int object;
  } MAP[] = {
      {R_ROOT, K_CONFIGURATION, R_CONFIG, 1},
      {R_ROOT, K_REPORT, R_REPORT, 1},
      {R_CONFIG, K_SCENARIOS, R_CFG_SCENS, 0},
      {R_CONFIG, K_ACTIONS, R_CFG_ACTIONS, 0},
      {R_CFG_SCENS, K_OTHER, R_CFG_SCEN, 1},
      {R_CFG_SCEN, K_METADATA, R_META, 1},
      {R_CFG_SCEN, K_SETUP, R_CFG_SETUP, 0},
      {R_CFG_ACTIONS, K_OTHER, R_CFG_ACTION, 1},
      {R_CFG_ACTION, K_RUN_COMMAND, R_RUNCMD, 1},
      {R_RUNCMD, K_ENV, R_ENV, 1},
      {R_REPORT, K_SCENARIOS, R_SCENS, 0},
      {R_SCENS, K_OTHER, R_SCEN, 1},
      {R_SCEN, K_METADATA, R_META, 1},
      {R_SCEN, K_OPERATIONS, R_OPS, 0},
      {R_SCEN, K_STEPS, R_STEPS, 0},
      {R_OPS, K_OTHER, R_OPTYPE, 1},
      {R_OPTYPE, K_ORIGINS, R_ORIGINS, 0},
      {R_ORIGINS, K_OTHER, R_ORIGIN, 1},
      {R_ORIGIN, K_OUTCOMES, R_OUTCOMES, 0},
      {R_OUTCOMES, K_OTHER, R_OUTCOME, 1},
      {R_OUTCOME, K_SUCCESSFUL, R_OPLIST, 0},
      {R_OUTCOME, K_UNSUCCESSFUL, R_OPLIST, 0},
      {R_OPLIST, K_OTHER, R_OP, 1},
      {R_STEPS, K_OTHER, R_STEP, 1},
  };
  bm_key k = f->is_object ? f->key : K_OTHER;
  for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++)
    if (MAP[i].parent == f->role && MAP[i].key == k) {
      *want_object = MAP[i].object;
      return MAP[i].child;
    }
  return R_SKIP;
}

/* Work on entering a container of `role`; a negative errno on no memory. */
static int enter(ps_parser *p, bm_role role, const bm_frame *parent, uint64_t at) {
  bm_report *r = &p->r;
  switch (role) {
  case R_CFG_SCEN:
    if (grow((void **)&r->cfg, &r->cfg_cap, r->ncfg, sizeof *r->cfg))
      return -ENOMEM;
    r->ncfg++;
    break;
  case R_CFG_ACTION:
    if (grow((void **)&r->actions, &r->actions_cap, r->nactions, sizeof *r->actions))
      return -ENOMEM;
    r->nactions++;
    break;
  case R_SCEN:
    if (grow((void **)&r->scen, &r->scen_cap, r->nscen, sizeof *r->scen))
      return -ENOMEM;
    r->nscen++;
    break;
  case R_META:
    p->meta = parent->role == R_SCEN ? &cur_scen(p)->meta : &r->cfg[r->ncfg - 1].meta;
    break;
  case R_OPTYPE:
    p->group_start = cur_scen(p)->nops;
    p->group_type = -1;
    p->group_bad = 0;
    break;
  case R_OPLIST: p->op_successful = parent->key == K_SUCCESSFUL; break;
  case R_OP: op_begin(p, at); break;
  case R_STEP:
    memset(&p->step, 0, sizeof p->step);
    p->step_bad = 0;
    p->step_offset = at;
    break;
  default: break;
  }
  return 0;
}

static int leave(ps_parser *p, const bm_frame *f, uint64_t at) {
  switch (f->role) {
  case R_META: p->meta = NULL; break;
  case R_OPTYPE: group_end(p, at); break;
  case R_OP: return op_end(p);
  case R_STEP: return step_end(p);
  case R_SCEN: cur_scen(p)->complete = 1; break;
  default: break;
  }
  return 0;
}

static void skip_begin(ps_parser *p, const bm_frame *parent, uint64_t at) {
  p->skip_depth = 1;
  p->skip_is_query = parent && parent->role == R_OP && parent->key == K_QUERY;
  p->skip_begin = at;
}

static void skip_end(ps_parser *p, uint64_t at) {
  uint64_t size = at + 1 - p->skip_begin;
  if (p->skip_is_query && size > BM_QUERY_MAX)
    REJECT(p, p->skip_begin,
           "scenario %d: a query detail of %llu bytes (more than %d); "
           "skipped, its operation counted",
           scen_no(p), (unsigned long long)size, BM_QUERY_MAX);
}

/* A container opens where a scalar was expected (or the wrong kind). */
static void wrong_container(ps_parser *p, const bm_frame *f, uint64_t at) {
  if (f->role == R_OP && (f->key == K_T0 || f->key == K_T1)) {
    if (!p->op_bad)
      REJECT(p, at, "scenario %d: an operation's %s is not an RFC 3339 time; dropped", scen_no(p),
             f->key == K_T0 ? "t0" : "t1");
    p->op_bad = 1;
  } else if (f->role == R_STEP && f->key >= K_LOAD_FACTOR && f->key <= K_REASON) {
    ps_js_token t = {0};
    t.offset = at;
    step_bad(p, &t, f->key, "is not a scalar");
  } else if (f->role == R_OPTYPE && f->key == K_TYPE) {
    p->group_bad = 1;
  }
}

static int on_begin(ps_parser *p, const ps_js_token *t) {
  int is_object = t->kind == PS_JS_OBJECT_BEGIN;
  if (p->skip_depth) {
    p->skip_depth++;
    return 0;
  }
  if (p->depth == 0) {
    if (!is_object) {
      REJECT(p, t->offset, "not a benchmarker report: not an object");
      skip_begin(p, NULL, t->offset);
      return 0;
    }
    p->frames[0] = (bm_frame){R_ROOT, 1, K_OTHER, 0};
    p->depth = 1;
    return 0;
  }
  bm_frame *parent = &p->frames[p->depth - 1];
  if (!parent->is_object)
    parent->index++;
  int want_object = 0;
  bm_role role = child_role(parent, &want_object);
  if (role != R_SKIP && want_object != is_object) {
    REJECT(p, t->offset, "scenario %d: %s where %s belongs; skipped", scen_no(p),
           is_object ? "an object" : "a list", want_object ? "an object" : "a list");
    role = R_SKIP;
  } else if (role == R_SKIP) {
    wrong_container(p, parent, t->offset);
  }
  if (role == R_SKIP || p->depth >= BM_FRAMES_MAX) {
    skip_begin(p, parent, t->offset);
    return 0;
  }
  int rc = enter(p, role, parent, t->offset);
  p->frames[p->depth++] = (bm_frame){role, is_object, K_OTHER, 0};
  return rc;
}

static int on_token(void *ctx, const ps_js_token *t) {
  ps_parser *p = ctx;
  switch (t->kind) {
  case PS_JS_OBJECT_BEGIN:
  case PS_JS_ARRAY_BEGIN: return on_begin(p, t);
  case PS_JS_OBJECT_END:
  case PS_JS_ARRAY_END:
    if (p->skip_depth) {
      if (--p->skip_depth == 0)
        skip_end(p, t->offset);
      return 0;
    }
    if (p->depth == 0)
      return 0;
    p->depth--;
    return leave(p, &p->frames[p->depth], t->offset);
  case PS_JS_KEY:
    if (!p->skip_depth && p->depth)
      p->frames[p->depth - 1].key = key_of(t);
    return 0;
  default:
    if (p->skip_depth || p->depth == 0)
      return 0;
    if (!p->frames[p->depth - 1].is_object)
      p->frames[p->depth - 1].index++;
    on_scalar(p, t);
    return 0;
  }
}

static void reject_syntax(ps_parser *p) {
  /* always said, however many problems came before it */
  ps_emit_reject(p->em, "byte %llu: invalid JSON: %s; the report gives no points",
                 (unsigned long long)p->js.err_offset, p->js.why);
  p->failed = 1;
}

static int bm_stream(ps_parser *p, const char *data, size_t len, int last, ps_emitter *em) {
  em->origin.line = 0;
  p->em = em;
  if (p->failed)
    return 0;
  if (!last) {
    int rc = ps_js_feed(&p->js, data, len, on_token, p);
    if (rc == PS_JS_ERROR)
      reject_syntax(p);
    return rc == PS_JS_STOPPED ? -ENOMEM : 0;
  }
  if (!p->r.built) {
    int rc = ps_js_finish(&p->js, on_token, p);
    if (p->rejects > BM_REJECTS_LISTED)
      ps_emit_reject(em, "%llu more problems in this report, not listed",
                     (unsigned long long)(p->rejects - BM_REJECTS_LISTED));
    if (rc == PS_JS_ERROR) {
      reject_syntax(p);
      return 0;
    }
    if (rc == PS_JS_STOPPED || ps_benchmarker_figures_build(&p->r))
      return -ENOMEM;
  }
  return ps_benchmarker_figures_emit(&p->r, em, &p->cursor, p->backfill);
}

/* A whole document (fuzz targets, unit tests): the stream in one piece. */
static int bm_document(ps_parser *p, const char *data, size_t len, ps_emitter *em) {
  int rc = p->r.built ? 0 : bm_stream(p, data, len, 0, em);
  return rc ? rc : bm_stream(p, NULL, 0, 1, em);
}

const ps_format_ops ps_format_benchmarker = {
    .id = PS_FMT_BENCHMARKER,
    .name = "benchmarker",
    .needs = PS_FMT_NEEDS_REAL_PATH,
    .input_kind = bm_input_kind,
    .open = bm_open,
    .line = NULL,
    .document = bm_document,
    .stream = bm_stream,
    .finish = NULL,
    .free = bm_free,
    .set_backfill = bm_set_backfill,
    .run_source = BM_RUN_SOURCE,
    .run_title = BM_RUN_TITLE,
    .source_arm = 1,
};
