/*
 * formats/slog_scan.c: a slog line's type by prefix, and the few members
 * perfship uses. See include/formats/slog_scan.h.
 *
 * Design
 * - The cost budget (docs/benchmarks.md "Slog"): reducing a stage may cost
 *   at most twice inflating it, so most lines must cost about a memchr.
 *   Syscalls and their results are half of a slog's lines; a syscall is
 *   read up to `replay` (its fifth member), a syscall-result not at all.
 * - Values are skipped by a small lenient scanner (strings with escapes,
 *   nesting), not checked: a line perfship reads is as good as the
 *   members it needs. Keys in nested values never match a top-level key
 *   because only top-level members are compared.
 * - The envelope of the type-first writer puts `time`, `monotime` and
 *   `seconds` after every other member (docs/loadgen.md "Slogs"), so
 *   they are found from the end: the last `"time":` of the line, and
 *   `"seconds":` after it. Nothing nested follows them, so that is the
 *   envelope's and not a value's.
 */
#include "formats/slog_scan.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "influx/numfmt.h"

const char *const ps_slog_counter_names[PS_SLOG_NCOUNTERS] = {
    "kernelObjects", "kernelPromises", "kpUnresolved", "clistEntries",
    "promiseQueuesLength", "runQueueLength", "vats"};

#define MAX_DEPTH 64
/* how far from a line's end the type-first envelope is looked for */
#define ENVELOPE 512

/* `cut`: the text is the kept head of a longer line, so a value that
 * reaches `end` may go on beyond it. `ran_out`: a scanner wanted bytes
 * past `end`; on a cut line that is where reading stops, not a fault. */
typedef struct cur {
  const char *p, *end;
  int cut, ran_out;
} cur;

static void ws(cur *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
    c->p++;
}

static int lit(cur *c, char ch) {
  ws(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  c->ran_out |= c->p >= c->end;
  return 0;
}

/* Past a string whose opening quote is at c->p. 0 when it does not end. */
static int skip_string(cur *c) {
  const char *s = c->p + 1;
  for (;;) {
    const char *q = s < c->end ? memchr(s, '"', (size_t)(c->end - s)) : NULL;
    if (!q) {
      c->ran_out = 1;
      return 0;
    }
    size_t bs = 0;
    for (const char *b = q; b > s && b[-1] == '\\'; b--)
      bs++;
    if (bs % 2 == 0) {
      c->p = q + 1;
      return 1;
    }
    s = q + 1;
  }
}

/* Past one value. 0 when it is broken or does not end within the text. */
static int skip_value(cur *c) {
  ws(c);
  if (c->p >= c->end) {
    c->ran_out = 1;
    return 0;
  }
  char ch = *c->p;
  if (ch == '"')
    return skip_string(c);
  if (ch == '{' || ch == '[') {
    char stack[MAX_DEPTH];
    int depth = 0;
    while (c->p < c->end) {
      ch = *c->p;
      if (ch == '"') {
        if (!skip_string(c))
          return 0;
        continue;
      }
      if (ch == '{' || ch == '[') {
        if (depth == MAX_DEPTH)
          return 0;
        stack[depth++] = ch == '{' ? '}' : ']';
      } else if (ch == '}' || ch == ']') {
        if (depth == 0 || stack[depth - 1] != ch)
          return 0;
        if (--depth == 0) {
          c->p++;
          return 1;
        }
      }
      c->p++;
    }
    c->ran_out = 1;
    return 0;
  }
  const char *s = c->p;
  while (c->p < c->end && *c->p != ',' && *c->p != '}' && *c->p != ']' && *c->p != ' ' &&
         *c->p != '\t' && *c->p != '\r' && *c->p != '\n')
    c->p++;
  c->ran_out |= c->p >= c->end;
  return c->p > s && c->p < c->end;
}

/* A number at c->p (no skipping of what follows). 0 when it is none. */
static int number(cur *c, double *out) {
  ws(c);
  char buf[64];
  size_t n = 0;
  while (c->p + n < c->end && n < sizeof buf - 1 && ps_number_byte((unsigned char)c->p[n]))
    n++;
  if (c->cut && c->p + n >= c->end) { /* its last digits may lie past the cut */
    c->ran_out = 1;
    return 0;
  }
  if (n == 0 || n == sizeof buf - 1)
    return 0;
  /* Most slog numbers (every time, 16 digits) are exact without strtod and
   * its copy, which were a tenth of reducing a slog (docs/benchmarks.md,
   * "Seventh pass"); an overflow is the infinity strtod gives. What the
   * decimal reader refuses ("+7") is strtod's to judge, as before. */
  int rc = ps_lp_decimal(c->p, n, out);
  if (rc == 0 || rc == -ERANGE) {
    c->p += n;
    return 1;
  }
  memcpy(buf, c->p, n);
  buf[n] = '\0';
  char *e = NULL;
  double v = strtod(buf, &e);
  if (e != buf + n)
    return 0;
  c->p += n;
  *out = v;
  return 1;
}

/* A key: its bytes between the quotes (escapes left as they are, so a
 * key with an escape matches no key perfship knows). */
static int key(cur *c, const char **k, size_t *n) {
  ws(c);
  if (c->p >= c->end || *c->p != '"') {
    c->ran_out |= c->p >= c->end;
    return 0;
  }
  const char *s = c->p + 1;
  if (!skip_string(c))
    return 0;
  *k = s;
  *n = (size_t)(c->p - 1 - s);
  return lit(c, ':');
}

static int key_is(const char *k, size_t n, const char *want) {
  return strlen(want) == n && memcmp(k, want, n) == 0;
}

static int put_utf8(char *o, size_t *j, size_t cap, unsigned cp) {
  char b[4];
  size_t n;
  if (cp < 0x80) {
    b[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    b[0] = (char)(0xc0 | (cp >> 6));
    b[1] = (char)(0x80 | (cp & 0x3f));
    n = 2;
  } else {
    b[0] = (char)(0xe0 | (cp >> 12));
    b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    b[2] = (char)(0x80 | (cp & 0x3f));
    n = 3;
  }
  if (*j + n >= cap)
    return 0;
  memcpy(o + *j, b, n);
  *j += n;
  return 1;
}

/* A string value unescaped into out (cut at cap - 1 bytes, never inside an
 * escape). A surrogate pair's halves, NUL and other control characters
 * become U+FFFD: this text ends up in a field, not back in JSON. */
static int string_value(cur *c, char *out, size_t cap) {
  ws(c);
  if (c->p >= c->end || *c->p != '"') {
    c->ran_out |= c->p >= c->end;
    return 0;
  }
  const char *s = c->p + 1;
  if (!skip_string(c))
    return 0;
  const char *e = c->p - 1;
  size_t j = 0;
  for (const char *q = s; q < e; q++) {
    unsigned char ch = (unsigned char)*q;
    if (ch == '\\' && q + 1 < e) {
      char x = *++q;
      unsigned cp = (unsigned char)x;
      if (x == 'n')
        cp = '\n';
      else if (x == 't')
        cp = '\t';
      else if (x == 'r')
        cp = '\r';
      else if (x == 'b')
        cp = '\b';
      else if (x == 'f')
        cp = '\f';
      else if (x == 'u' && e - q > 4) {
        char hex[5] = {q[1], q[2], q[3], q[4], 0};
        char *he = NULL;
        cp = (unsigned)strtoul(hex, &he, 16);
        if (he != hex + 4)
          cp = 0xfffd;
        q += 4;
      }
      if (cp < 0x20 || (cp >= 0xd800 && cp <= 0xdfff))
        cp = 0xfffd;
      if (!put_utf8(out, &j, cap, cp))
        break;
      continue;
    }
    if (ch < 0x20)
      ch = '?';
    if (j + 1 >= cap)
      break;
    out[j++] = (char)ch;
  }
  out[j] = '\0';
  return 1;
}

static int vat_id(cur *c, ps_slog_rec *r, const char **why) {
  char v[PS_SLOG_VAT_MAX + 8];
  if (!string_value(c, v, sizeof v)) {
    *why = "vatID is not a string";
    return 0;
  }
  size_t n = strlen(v);
  /* a tag value: a kernel vat ID is "v" and digits; accept the safe
   * alphabet of IDs only, so a hostile line cannot invent series names */
  if (n == 0 || n >= PS_SLOG_VAT_MAX || strspn(v, "abcdefghijklmnopqrstuvwxyz"
                                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != n) {
    *why = "vatID is not a vat ID";
    return 0;
  }
  memcpy(r->vat, v, n + 1);
  r->has |= PS_SR_VAT;
  return 1;
}

static int bool_value(cur *c, int *out) {
  ws(c);
  if (c->end - c->p >= 4 && memcmp(c->p, "true", 4) == 0) {
    c->p += 4;
    *out = 1;
    return 1;
  }
  if (c->end - c->p >= 5 && memcmp(c->p, "false", 5) == 0) {
    c->p += 5;
    *out = 0;
    return 1;
  }
  c->ran_out |= c->end - c->p < 5; /* a word cut short */
  return 0;
}

/* Members of an object at c->p: calls `fn` per member with the value at
 * c->p; fn consumes the value (returns 1), skips it (returns 2: skip
 * here), stops the walk (3), or fails (0). 1: walked or stopped; 0: broken. */
typedef int (*member_fn)(void *ctx, const char *k, size_t kn, cur *c);

static int walk(cur *c, member_fn fn, void *ctx) {
  if (!lit(c, '{'))
    return 0;
  if (lit(c, '}'))
    return 1;
  for (;;) {
    const char *k;
    size_t kn;
    if (!key(c, &k, &kn))
      return 0;
    int r = fn(ctx, k, kn, c);
    if (r == 0)
      return 0;
    if (r == 3)
      return 1;
    if (r == 2 && !skip_value(c))
      return 0;
    if (lit(c, ','))
      continue;
    return lit(c, '}');
  }
}

typedef struct walk_ctx {
  ps_slog_rec *r;
  const char **why;
} walk_ctx;

static int counter_member(void *ctx, const char *k, size_t kn, cur *c) {
  ps_slog_rec *r = ctx;
  for (int i = 0; i < PS_SLOG_NCOUNTERS; i++)
    if (key_is(k, kn, ps_slog_counter_names[i])) {
      double v;
      if (!number(c, &v))
        return 2;
      r->counters[i] = v;
      r->counters_has |= 1u << i;
      return 1;
    }
  return 2;
}

static int memory_member(void *ctx, const char *k, size_t kn, cur *c) {
  ps_slog_rec *r = ctx;
  double v;
  if (key_is(k, kn, "rss") && number(c, &v)) {
    r->rss = v;
    r->has |= PS_SR_RSS;
    return 1;
  }
  if (key_is(k, kn, "heapUsed") && number(c, &v)) {
    r->heap_used = v;
    r->has |= PS_SR_HEAP_USED;
    return 1;
  }
  return 2;
}

static int meter_member(void *ctx, const char *k, size_t kn, cur *c) {
  ps_slog_rec *r = ctx;
  double v;
  if (key_is(k, kn, "compute") && number(c, &v)) {
    r->compute = v;
    r->has |= PS_SR_COMPUTE;
    return 1;
  }
  return 2;
}

/* dr = [status, problem, meterUsage|null]: the third element's compute. */
static int read_dr(cur *c, ps_slog_rec *r) {
  if (!lit(c, '['))
    return 0;
  for (int i = 0; i < 2; i++) {
    if (!skip_value(c))
      return 0;
    if (!lit(c, ','))
      return 1; /* a short dr: no meter */
  }
  ws(c);
  if (c->p < c->end && *c->p == '{') {
    if (!walk(c, meter_member, r))
      return 0;
  } else if (!skip_value(c))
    return 0;
  while (lit(c, ','))
    if (!skip_value(c))
      return 0;
  return lit(c, ']');
}

/* kd[0]: the delivery's kind. */
static int read_kd(cur *c, ps_slog_rec *r) {
  cur save = *c;
  if (!lit(c, '['))
    return 0;
  char kind[32];
  ws(c);
  if (c->p < c->end && *c->p == '"' && string_value(c, kind, sizeof kind)) {
    r->boyd = strcmp(kind, "bringOutYourDead") == 0;
    r->has |= PS_SR_KIND;
  }
  *c = save;
  return skip_value(c);
}

/* rec_member's answer for a member that is none of its type's own: the
 * envelope's members are tried next. */
#define NOT_MINE (-1)

static int begin_block_member(walk_ctx *w, const char *k, size_t kn, cur *c) {
  ps_slog_rec *r = w->r;
  double v;
  if (!key_is(k, kn, "blockHeight"))
    return NOT_MINE;
  if (!number(c, &v) || v != (double)(int64_t)v) {
    *w->why = "blockHeight is not an integer";
    return 0;
  }
  r->height = (int64_t)v;
  r->has |= PS_SR_HEIGHT;
  return 3;
}

static int crank_finish_member(ps_slog_rec *r, const char *k, size_t kn, cur *c) {
  if (key_is(k, kn, "crankType")) {
    char t[16];
    if (!string_value(c, t, sizeof t))
      return 0;
    r->routing = strcmp(t, "routing") == 0;
    return 3;
  }
  if (key_is(k, kn, "crankNum"))
    return 3;
  return NOT_MINE;
}

static int clist_mode(ps_slog_rec *r, cur *c) {
  char m[16];
  if (!string_value(c, m, sizeof m))
    return 0;
  r->clist_mode = strcmp(m, "import") == 0   ? PS_SLOG_CLIST_IMPORT
                  : strcmp(m, "export") == 0 ? PS_SLOG_CLIST_EXPORT
                  : strcmp(m, "drop") == 0   ? PS_SLOG_CLIST_DROP
                                             : 0;
  return (r->has & PS_SR_VAT) ? 3 : 1;
}

/* The members one type of vat event has beside vatID and replay. */
static int vat_event_own_member(walk_ctx *w, const char *k, size_t kn, cur *c) {
  ps_slog_rec *r = w->r;
  double v;
  if (r->type == PS_SLOG_DELIVER && (key_is(k, kn, "kd") || key_is(k, kn, "vd"))) {
    if (!read_kd(c, r))
      return 0;
    return key_is(k, kn, "kd") ? 3 : 1;
  }
  if (r->type == PS_SLOG_DELIVER_RESULT && key_is(k, kn, "dr")) {
    if (!read_dr(c, r)) {
      *w->why = "dr is not an array";
      return 0;
    }
    return 3;
  }
  if (r->type == PS_SLOG_CLIST && key_is(k, kn, "mode"))
    return clist_mode(r, c);
  if (r->type == PS_SLOG_SNAPSHOT && key_is(k, kn, "uncompressedSize")) {
    if (!number(c, &v))
      return NOT_MINE;
    r->snapshot_size = v;
    r->has |= PS_SR_SNAPSHOT_SIZE;
    return 1;
  }
  if (r->type == PS_SLOG_CREATE_VAT && key_is(k, kn, "name")) {
    if (!string_value(c, r->name, sizeof r->name))
      return 0;
    r->has |= PS_SR_NAME;
    return 3; /* the bundle comes after it */
  }
  if (r->type == PS_SLOG_CREATE_VAT && key_is(k, kn, "vatSourceBundle"))
    return 3;
  return NOT_MINE;
}

/* deliver, deliver-result, syscall, heap-snapshot-save, create-vat, clist */
static int vat_event_member(walk_ctx *w, const char *k, size_t kn, cur *c) {
  ps_slog_rec *r = w->r;
  if (key_is(k, kn, "vatID"))
    return vat_id(c, r, w->why) ? (r->type == PS_SLOG_CLIST && r->clist_mode ? 3 : 1) : 0;
  if (key_is(k, kn, "replay")) {
    if (!bool_value(c, &r->replay)) {
      *w->why = "replay is not true or false";
      return 0;
    }
    r->has |= PS_SR_REPLAY;
    return r->type == PS_SLOG_SYSCALL ? 3 : 1;
  }
  return vat_event_own_member(w, k, kn, c);
}

/* A member whose value is an object read by `fn` (kernel-stats' stats,
 * after-commit-stats' memoryUsage). */
static int object_member(const char *k, size_t kn, const char *want, cur *c, member_fn fn,
                         ps_slog_rec *r) {
  if (!key_is(k, kn, want))
    return NOT_MINE;
  ws(c);
  if (c->p < c->end && *c->p == '{')
    return walk(c, fn, r) ? 3 : 0;
  return NOT_MINE;
}

/* The envelope's members: `time` for the time-first writer (its `time`
 * came first), and `seconds`. */
static int envelope_member(ps_slog_rec *r, const char *k, size_t kn, cur *c) {
  double v;
  if (key_is(k, kn, "time") && r->era == PS_SLOG_ERA_TIME_FIRST && !(r->has & PS_SR_TIME)) {
    if (number(c, &v)) {
      r->time = v;
      r->has |= PS_SR_TIME;
      return 1;
    }
  }
  if (key_is(k, kn, "seconds") && number(c, &v)) {
    r->seconds = v;
    r->has |= PS_SR_SECONDS;
    return 1;
  }
  return 2;
}

static int type_member(walk_ctx *w, const char *k, size_t kn, cur *c) {
  switch (w->r->type) {
  case PS_SLOG_BEGIN_BLOCK: return begin_block_member(w, k, kn, c);
  case PS_SLOG_CRANK_FINISH: return crank_finish_member(w->r, k, kn, c);
  case PS_SLOG_DELIVER:
  case PS_SLOG_DELIVER_RESULT:
  case PS_SLOG_SYSCALL:
  case PS_SLOG_SNAPSHOT:
  case PS_SLOG_CREATE_VAT:
  case PS_SLOG_CLIST: return vat_event_member(w, k, kn, c);
  case PS_SLOG_KERNEL_STATS: return object_member(k, kn, "stats", c, counter_member, w->r);
  case PS_SLOG_AFTER_COMMIT: return object_member(k, kn, "memoryUsage", c, memory_member, w->r);
  default: return NOT_MINE;
  }
}

static int rec_member(void *ctx, const char *k, size_t kn, cur *c) {
  walk_ctx *w = ctx;
  int rc = type_member(w, k, kn, c);
  return rc != NOT_MINE ? rc : envelope_member(w->r, k, kn, c);
}

static const struct {
  const char *name;
  ps_slog_type type;
} TYPES[] = {
    {"cosmic-swingset-begin-block", PS_SLOG_BEGIN_BLOCK},
    {"crank-finish", PS_SLOG_CRANK_FINISH},
    {"deliver", PS_SLOG_DELIVER},
    {"deliver-result", PS_SLOG_DELIVER_RESULT},
    {"syscall", PS_SLOG_SYSCALL},
    {"clist", PS_SLOG_CLIST},
    {"kernel-stats", PS_SLOG_KERNEL_STATS},
    {"cosmic-swingset-commit-block-start", PS_SLOG_COMMIT_START},
    {"cosmic-swingset-commit-block-finish", PS_SLOG_COMMIT_FINISH},
    {"cosmic-swingset-after-commit-stats", PS_SLOG_AFTER_COMMIT},
    {"heap-snapshot-save", PS_SLOG_SNAPSHOT},
    {"create-vat", PS_SLOG_CREATE_VAT},
};

static ps_slog_type type_of(const char *s, size_t n) {
  for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
    if (key_is(s, n, TYPES[i].name))
      return TYPES[i].type;
  return PS_SLOG_OTHER;
}

/* The last occurrence of `pat` in [s, e). */
static const char *last_of(const char *s, const char *e, const char *pat) {
  size_t n = strlen(pat);
  for (const char *q = e - n; q >= s; q--)
    if (*q == *pat && memcmp(q, pat, n) == 0)
      return q;
  return NULL;
}

/* `time` and `seconds` of the type-first envelope, from the line's end. */
static void envelope_from_end(const char *s, size_t n, ps_slog_rec *r) {
  const char *e = s + n;
  const char *from = n > ENVELOPE ? e - ENVELOPE : s;
  const char *t = last_of(from, e, "\"time\":");
  if (!t)
    return;
  cur c = {.p = t + 7, .end = e};
  double v;
  if (number(&c, &v)) {
    r->time = v;
    r->has |= PS_SR_TIME;
  }
  const char *sec = last_of(t, e, "\"seconds\":");
  if (sec) {
    cur d = {.p = sec + 10, .end = e};
    if (number(&d, &v)) {
      r->seconds = v;
      r->has |= PS_SR_SECONDS;
    }
  }
}

/* The line's first members: `time` then `type` (the time-first writer) or
 * `type` (the type-first one); sets the era and the type and leaves c
 * after the type's value. 0, or -1 and *why. */
static int read_type(cur *c, ps_slog_rec *r, const char **why) {
  const char *k;
  size_t kn;
  if (!lit(c, '{') || !key(c, &k, &kn)) {
    *why = "not a JSON object";
    return -1;
  }
  double t;
  if (key_is(k, kn, "time")) {
    r->era = PS_SLOG_ERA_TIME_FIRST;
    if (!number(c, &t) || !lit(c, ',') || !key(c, &k, &kn) || !key_is(k, kn, "type")) {
      *why = "no \"type\" after \"time\"";
      return -1;
    }
    r->time = t;
    r->has |= PS_SR_TIME;
  } else if (key_is(k, kn, "type")) {
    r->era = PS_SLOG_ERA_TYPE_FIRST;
  } else {
    *why = "no \"type\" or \"time\" first";
    return -1;
  }
  ws(c);
  const char *ts = c->p;
  if (c->p >= c->end || *c->p != '"' || !skip_string(c)) {
    *why = "type is not a string";
    return -1;
  }
  ts++; /* past the opening quote */
  r->type = type_of(ts, (size_t)(c->p - 1 - ts));
  return 0;
}

/* The members after the type, as walk() reads them, until rec_member has
 * what it wants. 1: read; 0: broken (*why says how when rec_member knew). */
static int read_members(cur *c, walk_ctx *w) {
  if (!lit(c, ','))
    return lit(c, '}');
  for (;;) {
    const char *k;
    size_t kn;
    if (!key(c, &k, &kn))
      return 1;
    int rc = rec_member(w, k, kn, c);
    if (rc == 0)
      return 0;
    if (rc == 3)
      return 1;
    if (rc == 2 && !skip_value(c))
      return 0;
    if (lit(c, ','))
      continue;
    return lit(c, '}');
  }
}

int ps_slog_scan(const char *head, size_t head_len, const char *tail, size_t tail_len,
                 int truncated, int want_time, ps_slog_rec *r, const char **why) {
  memset(r, 0, offsetof(ps_slog_rec, counters));
  r->vat[0] = '\0';
  r->name[0] = '\0';
  *why = NULL;
  cur c = {head, head + head_len, truncated, 0};
  if (read_type(&c, r, why) < 0)
    return -1;
  const char *endp = tail ? tail : head;
  size_t endn = tail ? tail_len : head_len;
  if (r->type == PS_SLOG_OTHER) {
    if (want_time && r->era == PS_SLOG_ERA_TYPE_FIRST)
      envelope_from_end(endp, endn, r);
    return 0;
  }
  walk_ctx w = {r, why};
  if (!read_members(&c, &w)) {
    if (!truncated || !c.ran_out) {
      if (!*why)
        *why = "broken JSON";
      return -1;
    }
    /* The kept head ended inside a member (a deliver's kd, a create-vat's
     * bundle): what was read before it stands, what lies past the cut is
     * missing, and the envelope is read from the line's end as usual. */
    *why = NULL;
  }
  if (r->era == PS_SLOG_ERA_TYPE_FIRST)
    envelope_from_end(endp, endn, r);
  return 1;
}
