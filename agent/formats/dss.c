/*
 * formats/dss.c: the `dss-bench` format, the results.json of the InterUSS
 * local DSS bench tool (docs/dss-locust.md, docs/schema.md "DSS bench").
 *
 * DESIGN
 * - The tool writes results.json once, after the whole matrix, and rewrites
 *   it on the next run, so the file is a DOCUMENT: parsed whole with cJSON.
 *   It holds no timestamps at all; the file's modification time (whole
 *   seconds, read by the driver: ps_input_head) is the time of every
 *   point, which keeps a re-read idempotent.
 * - Both file eras are read: final (meta.sweep, processes, rps_per_target)
 *   and the earlier per-DSS one (meta.context, "processes/DSS",
 *   rps_per_dss). `processes` is always the total number of workers, so the
 *   legacy per-DSS count is multiplied by num_uss * num_nodes (its meaning
 *   is then the same in both eras).
 * - The tool writes 0.0 for a percentile of an empty sample set; those are
 *   left out (docs/schema.md) so a failed point never graphs as a 0 ms latency.
 * - Back-pressure (emit.h): every unit this document produces (point or
 *   reject) is numbered; after -EAGAIN the parsed tree is kept and the next
 *   call skips the units already delivered.
 * - A document cJSON refuses is located by a small syntax scan, so the
 *   reject names line and column (a truncated copy is the usual cause).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/util.h"
#include "formats/format.h"
#include "core/jsontext.h"

#define DSS_RUN_MAX 256
#define DSS_MARKER_TEXT_MAX 512
/* Its `runs` markers' source tag, and how its texts name its runs. */
#define DSS_RUN_SOURCE "dss_bench"
#define DSS_RUN_TITLE "DSS bench"

struct ps_parser {
  char run[DSS_RUN_MAX];
  int64_t mtime_s;
  int backfill; /* the marker's field: true unless the agent saw it happen */
  /* resume state (emit.h back-pressure) */
  cJSON *root;
  size_t cursor; /* units of the current document already delivered */
};

/* One pass over the document; counts units so a resumed pass skips them. */
typedef struct dss_walk {
  ps_parser *p;
  ps_emitter *em;
  size_t unit;
  int rc;
} dss_walk;

static ps_input_kind dss_input_kind(const ps_source_cfg *src,
                                    const char *path) {
  (void)src;
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  return strcmp(base, "results.json") == 0 ? PS_INPUT_DOCUMENT
                                           : PS_INPUT_IGNORE;
}

/* The run is the folder holding results.json: the tool always writes the
 * same file name, so the folder (--outdir) is what tells runs apart. The
 * resolved path names it even for a bare "results.json". */
static void dss_run_name(const ps_input_head *head, char *out, size_t cap) {
  const char *p = head->real_path ? head->real_path : head->path;
  const char *end = strrchr(p, '/');
  out[0] = '\0';
  if (end) {
    const char *start = end;
    while (start > p && start[-1] != '/')
      start--;
    size_t n = (size_t)(end - start);
    if (n >= cap)
      n = cap - 1;
    memcpy(out, start, n);
    out[n] = '\0';
  }
}

static int dss_open(ps_parser **out, const ps_source_cfg *src,
                    const ps_input_head *head, ps_buf *err) {
  (void)src;
  *out = NULL;
  ps_parser *p = calloc(1, sizeof *p);
  if (!p) {
    ps_buf_puts(err, "out of memory");
    return -ENOMEM;
  }
  /* A rewritten file is a new document and gets a new parser (the pipeline
   * opens one per version), so the time read when it was opened is its own. */
  p->mtime_s = ps_whole_seconds(head->mtime_ns);
  /* `convert` reads runs that ended long ago (as loadgen's convert does);
   * the agent clears it for a file it saw appear or change. */
  p->backfill = 1;
  dss_run_name(head, p->run, sizeof p->run);
  *out = p;
  return 0;
}

static void dss_set_backfill(ps_parser *p, int backfill) {
  if (p)
    p->backfill = backfill != 0;
}

static void dss_free(ps_parser *p) {
  if (!p)
    return;
  cJSON_Delete(p->root);
  free(p);
}

/* ---- locating a syntax error ------------------------------------------ */

typedef struct json_scan {
  const char *s;
  size_t len, pos;
  const char *why;
} json_scan;

#define JSON_SCAN_MAX_DEPTH 1000

/* strchr() also "finds" the terminating NUL; input bytes may be NUL. */
static int in_set(char c, const char *set) {
  return c != '\0' && strchr(set, c) != NULL;
}

static void scan_ws(json_scan *j) {
  while (j->pos < j->len && (j->s[j->pos] == ' ' || j->s[j->pos] == '\t' ||
                             j->s[j->pos] == '\n' || j->s[j->pos] == '\r'))
    j->pos++;
}

static int scan_fail(json_scan *j, const char *why) {
  if (j->pos >= j->len)
    why = "unexpected end";
  j->why = why;
  return -1;
}

static int scan_literal(json_scan *j, const char *lit) {
  size_t n = strlen(lit);
  for (size_t i = 0; i < n; i++, j->pos++)
    if (j->pos >= j->len || j->s[j->pos] != lit[i])
      return scan_fail(j, "invalid literal");
  return 0;
}

static int scan_string(json_scan *j) {
  j->pos++; /* opening quote */
  while (j->pos < j->len) {
    unsigned char c = (unsigned char)j->s[j->pos];
    if (c == '"') {
      j->pos++;
      return 0;
    }
    if (c < 0x20)
      return scan_fail(j, "control character in string");
    if (c == '\\') {
      j->pos++;
      if (j->pos >= j->len)
        break;
      if (!in_set(j->s[j->pos], "\"\\/bfnrtu"))
        return scan_fail(j, "invalid escape in string");
    }
    j->pos++;
  }
  return scan_fail(j, "unterminated string");
}

/* Loose on purpose: this scan only runs after cJSON refused the document,
 * to say where; cJSON stays the judge of what a valid number is. */
static int scan_number(json_scan *j) {
  if (j->s[j->pos] == '-')
    j->pos++;
  size_t digits = 0;
  while (j->pos < j->len && in_set(j->s[j->pos], "0123456789.eE+-"))
    j->pos++, digits++;
  if (digits == 0)
    return scan_fail(j, "invalid number");
  return 0;
}

static int scan_value(json_scan *j, int depth) {
  if (depth > JSON_SCAN_MAX_DEPTH)
    return scan_fail(j, "nested too deeply");
  scan_ws(j);
  if (j->pos >= j->len)
    return scan_fail(j, "unexpected end");
  char c = j->s[j->pos];
  if (c == '{' || c == '[') {
    char close = c == '{' ? '}' : ']';
    j->pos++;
    scan_ws(j);
    if (j->pos < j->len && j->s[j->pos] == close) {
      j->pos++;
      return 0;
    }
    for (;;) {
      if (c == '{') {
        scan_ws(j);
        if (j->pos >= j->len || j->s[j->pos] != '"')
          return scan_fail(j, "expected a member name");
        if (scan_string(j))
          return -1;
        scan_ws(j);
        if (j->pos >= j->len || j->s[j->pos] != ':')
          return scan_fail(j, "expected ':'");
        j->pos++;
      }
      if (scan_value(j, depth + 1))
        return -1;
      scan_ws(j);
      if (j->pos >= j->len)
        return scan_fail(j, "unexpected end");
      if (j->s[j->pos] == ',') {
        j->pos++;
        continue;
      }
      if (j->s[j->pos] == close) {
        j->pos++;
        return 0;
      }
      return scan_fail(j, c == '{' ? "expected ',' or '}'"
                                   : "expected ',' or ']'");
    }
  }
  if (c == '"')
    return scan_string(j);
  if (c == '-' || (c >= '0' && c <= '9'))
    return scan_number(j);
  if (c == 't')
    return scan_literal(j, "true");
  if (c == 'f')
    return scan_literal(j, "false");
  if (c == 'n')
    return scan_literal(j, "null");
  return scan_fail(j, "unexpected character");
}

static void reject_invalid_json(ps_emitter *em, const char *data, size_t len,
                                const char *cjson_err) {
  json_scan j = {data, len, 0, NULL};
  if (scan_value(&j, 0) == 0) {
    scan_ws(&j);
    if (j.pos < j.len)
      scan_fail(&j, "text after the document");
  }
  size_t at;
  const char *why;
  if (j.why) {
    at = j.pos < len ? j.pos : len;
    why = j.why;
  } else {
    /* cJSON refused something the scan accepts (e.g. its nesting limit). */
    at = cjson_err && cjson_err >= data && cjson_err <= data + len
             ? (size_t)(cjson_err - data)
             : 0;
    why = "not accepted by the JSON parser";
  }
  uint64_t line = 1, col = 1;
  for (size_t i = 0; i < at; i++) {
    if (data[i] == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  ps_emit_reject(em,
                 "invalid JSON at line %llu, column %llu (byte %zu): %s",
                 (unsigned long long)line, (unsigned long long)col, at, why);
}

/* ---- points --------------------------------------------------------------- */

/* A unit is either delivered now or was delivered by an earlier call. */
static int walk_skip(dss_walk *w) { return w->unit++ < w->p->cursor; }

static int walk_point(dss_walk *w, const ps_point *pt) {
  if (walk_skip(w))
    return 0;
  int rc = ps_emit_point(w->em, pt);
  if (rc) {
    w->unit--; /* not taken: the next call starts with it */
    w->rc = rc;
  }
  return rc;
}

static void walk_reject(dss_walk *w, const char *test, const char *arm,
                        int idx, const char *why) {
  if (walk_skip(w))
    return;
  ps_emit_reject(w->em, "by_test.%s.%s[%d]: %s", test, arm, idx, why);
}

static int json_number(const cJSON *obj, const char *key, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
    return 0;
  *out = v->valuedouble;
  return 1;
}

/* Integer fields (docs/schema.md) only take whole numbers in int64 range. */
static int json_int(const cJSON *obj, const char *key, int64_t *out) {
  double d;
  if (!json_number(obj, key, &d) || d != floor(d) || d < -9.2e18 ||
      d > 9.2e18)
    return 0;
  *out = (int64_t)d;
  return 1;
}

static const char *json_string(const cJSON *obj, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

typedef struct dss_meta {
  const char *sweep, *datastore, *image;
  int has_processes, has_duration, has_uss, has_nodes;
  int64_t processes, num_uss, num_nodes;
  double duration_s;
} dss_meta;

static void read_meta(const cJSON *meta, dss_meta *m) {
  memset(m, 0, sizeof *m);
  if (!cJSON_IsObject(meta))
    return;
  m->sweep = json_string(meta, "sweep");
  if (!m->sweep)
    m->sweep = json_string(meta, "context");
  m->datastore = json_string(meta, "datastore");
  m->image = json_string(meta, "image");
  m->has_uss = json_int(meta, "num_uss", &m->num_uss);
  m->has_nodes = json_int(meta, "num_nodes", &m->num_nodes);
  m->has_duration = json_number(meta, "duration_s", &m->duration_s);
  m->has_processes = json_int(meta, "processes", &m->processes);
  if (!m->has_processes) {
    int64_t per_dss;
    if (json_int(meta, "processes/DSS", &per_dss) && m->has_uss &&
        m->has_nodes && per_dss >= 0 && per_dss < (1LL << 20) &&
        m->num_uss >= 0 && m->num_uss < (1LL << 20) && m->num_nodes >= 0 &&
        m->num_nodes < (1LL << 20)) {
      m->processes = per_dss * m->num_uss * m->num_nodes;
      m->has_processes = 1;
    }
  }
}

enum { TAG_RUN, TAG_TEST, TAG_ARM, TAG_VARIANT, TAG_SWEEP, TAG_BASE_DS,
       TAG_BASE_IMAGE, TAG_TARGET, TAG_MAX };

static size_t set_tag(ps_tag *tags, size_t n, const char *key,
                      const char *value) {
  if (value && *value) {
    tags[n].key = key;
    tags[n].value = value;
    n++;
  }
  return n;
}

static size_t add_float(ps_field *f, size_t n, const char *key, double v) {
  f[n] = ps_field_float(key, v);
  return n + 1;
}

static size_t add_int(ps_field *f, size_t n, const char *key, int64_t v) {
  f[n] = ps_field_int(key, v);
  return n + 1;
}

/* A latency of 0.0 from an empty sample set is "no data", not 0 ms. */
static size_t add_latency(ps_field *f, size_t n, const cJSON *dp,
                          const char *key, int no_samples) {
  double v;
  if (!json_number(dp, key, &v) || (no_samples && v == 0.0))
    return n;
  return add_float(f, n, key, v);
}

static void emit_datapoint(dss_walk *w, const dss_meta *m, const char *test,
                           const char *arm, int idx, const cJSON *dp,
                           int *any_success) {
  if (!cJSON_IsObject(dp)) {
    walk_reject(w, test, arm, idx, "not an object");
    return;
  }
  const char *label = json_string(dp, "label");
  if (!label || !*label) {
    walk_reject(w, test, arm, idx, "no \"label\" (the variant) string");
    return;
  }
  ps_tag tags[TAG_MAX];
  size_t nt = 0;
  nt = set_tag(tags, nt, "run", w->p->run);
  nt = set_tag(tags, nt, "test", test);
  nt = set_tag(tags, nt, "arm", arm);
  nt = set_tag(tags, nt, "variant", label);
  nt = set_tag(tags, nt, "sweep", m->sweep);
  nt = set_tag(tags, nt, "base_datastore", m->datastore);
  nt = set_tag(tags, nt, "base_image", m->image);

  double rps = 0.0;
  int has_rps = json_number(dp, "rps_total", &rps);
  int64_t errors = 0;
  int has_errors = json_int(dp, "errors", &errors);
  /* rps_total counts only successes; 0.0 with a 0.0 percentile means the
   * success sample set was empty. */
  int no_success = !has_rps || rps == 0.0;
  int no_error = !has_errors || errors == 0;
  if (has_rps && rps > 0.0)
    *any_success = 1;

  ps_field f[16];
  size_t nf = 0;
  nf = add_int(f, nf, "variantIndex", idx);
  if (has_rps)
    nf = add_float(f, nf, "rps_total", rps);
  nf = add_latency(f, nf, dp, "p50_ms", no_success);
  nf = add_latency(f, nf, dp, "p95_ms", no_success);
  if (has_errors)
    nf = add_int(f, nf, "errors", errors);
  nf = add_latency(f, nf, dp, "err_p50_ms", no_error);
  nf = add_latency(f, nf, dp, "err_p95_ms", no_error);
  nf = add_latency(f, nf, dp, "p50_all_ms", no_success && no_error);
  nf = add_latency(f, nf, dp, "p95_all_ms", no_success && no_error);
  if (m->has_processes)
    nf = add_int(f, nf, "processes", m->processes);
  if (m->has_duration)
    nf = add_float(f, nf, "duration_s", m->duration_s);
  if (m->has_uss)
    nf = add_int(f, nf, "num_uss", m->num_uss);
  if (m->has_nodes)
    nf = add_int(f, nf, "num_nodes", m->num_nodes);

  ps_point pt = {"dss_bench", tags, nt, f, nf, w->p->mtime_s * 1000000000LL};
  if (walk_point(w, &pt))
    return;

  const cJSON *targets = cJSON_GetObjectItemCaseSensitive(dp, "rps_per_target");
  if (!targets)
    targets = cJSON_GetObjectItemCaseSensitive(dp, "rps_per_dss");
  if (!cJSON_IsObject(targets))
    return;
  const cJSON *t;
  cJSON_ArrayForEach(t, targets) {
    if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || !t->string ||
        !*t->string)
      continue;
    tags[nt].key = "target";
    tags[nt].value = t->string;
    ps_field rf;
    add_float(&rf, 0, "rps", t->valuedouble);
    ps_point tp = {"dss_bench_target", tags, nt + 1, &rf, 1, pt.time_ns};
    if (walk_point(w, &tp))
      return;
  }
}

static void emit_marker(dss_walk *w, size_t npoints, int any_success) {
  const char *status = any_success ? "success" : "failed";
  ps_tag tags[5];
  size_t nt = 0;
  nt = set_tag(tags, nt, "source", DSS_RUN_SOURCE);
  nt = set_tag(tags, nt, "run", w->p->run);
  nt = set_tag(tags, nt, "event", "end");
  nt = set_tag(tags, nt, "status", status);
  char text[DSS_MARKER_TEXT_MAX];
  int n;
  if (any_success)
    n = snprintf(text, sizeof text,
                 DSS_RUN_TITLE " run %s ended: success, %zu data points.",
                 w->p->run[0] ? w->p->run : "(unnamed)", npoints);
  else
    n = snprintf(text, sizeof text,
                 DSS_RUN_TITLE " run %s ended: failed, no successful request in "
                 "any of its %zu data points.",
                 w->p->run[0] ? w->p->run : "(unnamed)", npoints);
  if (n < 0)
    n = 0;
  if ((size_t)n >= sizeof text)
    n = (int)sizeof text - 1;
  ps_field f[2] = {ps_field_string("text", text, (size_t)n),
                   ps_field_bool("backfill", w->p->backfill)};
  ps_point pt = {"runs", tags, nt, f, 2, w->p->mtime_s * 1000000000LL};
  walk_point(w, &pt);
}

static void walk_document(dss_walk *w, const cJSON *root) {
  const cJSON *by_test = cJSON_GetObjectItemCaseSensitive(root, "by_test");
  if (!cJSON_IsObject(root) || !cJSON_IsObject(by_test)) {
    if (!walk_skip(w))
      ps_emit_reject(w->em, "not a DSS bench results document: no "
                            "\"by_test\" object");
    return;
  }
  dss_meta m;
  read_meta(cJSON_GetObjectItemCaseSensitive(root, "meta"), &m);
  int any_success = 0;
  size_t npoints = 0;
  const cJSON *test;
  cJSON_ArrayForEach(test, by_test) {
    const char *tname = test->string ? test->string : "";
    if (!cJSON_IsObject(test)) {
      if (!walk_skip(w))
        ps_emit_reject(w->em, "by_test.%s: not an object of arms", tname);
      continue;
    }
    const cJSON *arm;
    cJSON_ArrayForEach(arm, test) {
      const char *aname = arm->string ? arm->string : "";
      if (!cJSON_IsArray(arm)) {
        if (!walk_skip(w))
          ps_emit_reject(w->em, "by_test.%s.%s: not a list of data points",
                         tname, aname);
        continue;
      }
      int idx = 0;
      const cJSON *dp;
      cJSON_ArrayForEach(dp, arm) {
        emit_datapoint(w, &m, tname, aname, idx, dp, &any_success);
        if (w->rc)
          return;
        if (cJSON_IsObject(dp))
          npoints++;
        if (idx < INT_MAX)
          idx++;
      }
    }
  }
  emit_marker(w, npoints, any_success);
}

static int dss_document(ps_parser *p, const char *data, size_t len,
                        ps_emitter *em) {
  em->origin.line = 0;
  if (!p->root) {
    p->cursor = 0;
    size_t nul_col;
    const char *nul = ps_json_nul_check(data, len, &nul_col);
    if (nul) {
      unsigned long long line = 1, col = 1;
      for (size_t i = 0; i + 1 < nul_col; i++) {
        col = data[i] == '\n' ? 1 : col + 1;
        line += data[i] == '\n';
      }
      ps_emit_reject(em, "invalid JSON at line %llu, column %llu (byte %zu): %s", line,
                     col, nul_col - 1, nul);
      return 0;
    }
    const char *end = NULL;
    p->root = cJSON_ParseWithLengthOpts(data, len, &end, 0);
    if (!p->root) {
      reject_invalid_json(em, data, len, end);
      return 0;
    }
  }
  dss_walk w = {p, em, 0, 0};
  walk_document(&w, p->root);
  if (w.rc == -EAGAIN) {
    p->cursor = w.unit;
    return -EAGAIN;
  }
  cJSON_Delete(p->root);
  p->root = NULL;
  p->cursor = 0;
  return w.rc;
}

const ps_format_ops ps_format_dss_bench = {
    .id = PS_FMT_DSS_BENCH,
    .name = "dss-bench",
    .needs = PS_FMT_NEEDS_REAL_PATH,
    .input_kind = dss_input_kind,
    .open = dss_open,
    .line = NULL,
    .document = dss_document,
    .finish = NULL,
    .free = dss_free,
    .set_backfill = dss_set_backfill,
    .run_source = DSS_RUN_SOURCE,
    .run_title = DSS_RUN_TITLE,
};
