/*
 * verdict/triage.c: triage decisions as data and what they mean
 * (include/verdict/triage.h; docs/verdicts.md "Triage").
 *
 * Design: decisions are usually few, but a generated triage_file can hold
 * 100,000 lines, so the set keeps hash indexes by id, by run and by the
 * id an undo revokes (open addressing, rebuilt when it grows): adding and
 * every question cost the decisions they are about. Of two acks of the
 * same run the newer one's reason is the one shown.
 */
/* timegm: _GNU_SOURCE comes from the build (CMakeLists.txt) */
#include "verdict/triage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sha256.h"
#include "core/util.h"

static const char *const action_names[PS_TRIAGE_NACTIONS] = {"ack", "exclude", "baseline",
                                                             "undo"};

const char *ps_triage_action_name(ps_triage_action a) {
  return (unsigned)a < PS_TRIAGE_NACTIONS ? action_names[a] : "?";
}

int ps_triage_action_parse(const char *name) {
  for (int i = 0; name && i < PS_TRIAGE_NACTIONS; i++)
    if (strcmp(name, action_names[i]) == 0)
      return i;
  return -1;
}

void ps_triage_set_init(ps_triage_set *s) { memset(s, 0, sizeof *s); }

static void decision_free(ps_triage_decision *d) {
  free(d->id);
  free(d->run);
  free(d->metric);
  free(d->host);
  free(d->who);
  free(d->reason);
  free(d->ticket);
  free(d->revokes);
  free(d->origin);
  memset(d, 0, sizeof *d);
}

static void index_free(ps_triage_set *s) {
  free(s->by_id);
  free(s->by_run);
  free(s->revoked);
  free(s->run_next);
  s->by_id = s->by_run = s->revoked = s->run_next = NULL;
  s->nslots = 0;
}

void ps_triage_set_free(ps_triage_set *s) {
  for (size_t i = 0; i < s->n; i++)
    decision_free(&s->d[i]);
  free(s->d);
  free(s->repeated_id);
  index_free(s);
  ps_triage_set_init(s);
}

/* An absent or empty string is kept as NULL: "" and no value mean the
 * same for every field (no metric = every metric, no host = every host). */
static int dup_opt(char **dst, const char *src) {
  *dst = NULL;
  if (!src || !src[0])
    return 0;
  *dst = strdup(src);
  return *dst ? 0 : -ENOMEM;
}

static int decision_copy(ps_triage_decision *dst, const ps_triage_decision *src) {
  memset(dst, 0, sizeof *dst);
  dst->action = src->action;
  dst->when_ns = src->when_ns;
  if (dup_opt(&dst->id, src->id) || dup_opt(&dst->run, src->run) ||
      dup_opt(&dst->metric, src->metric) || dup_opt(&dst->host, src->host) ||
      dup_opt(&dst->who, src->who) || dup_opt(&dst->reason, src->reason) ||
      dup_opt(&dst->ticket, src->ticket) || dup_opt(&dst->revokes, src->revokes) ||
      dup_opt(&dst->origin, src->origin)) {
    decision_free(dst);
    return -ENOMEM;
  }
  return 0;
}

static int same(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") == 0;
}

/* --- the indexes ---------------------------------------------------------- */

static size_t slot_of(const ps_triage_set *s, const char *key) {
  return (size_t)ps_hash64(PS_HASH_SEED, key, strlen(key)) & (s->nslots - 1);
}

/* The slot of `table` that holds `key` (its decision's field by `field`),
 * or the empty slot where it would go. */
static size_t probe(const ps_triage_set *s, const size_t *table, const char *key,
                    const char *(*field)(const ps_triage_decision *)) {
  size_t i = slot_of(s, key);
  while (table[i] && !same(field(&s->d[table[i] - 1]), key))
    i = (i + 1) & (s->nslots - 1);
  return i;
}

static const char *id_of(const ps_triage_decision *d) { return d->id; }
static const char *run_of(const ps_triage_decision *d) { return d->run; }
static const char *revokes_of(const ps_triage_decision *d) { return d->revokes; }

/* Puts decision `k` in the indexes (the tables have room). */
static void index_one(ps_triage_set *s, size_t k) {
  const ps_triage_decision *d = &s->d[k];
  if (d->id) {
    size_t i = probe(s, s->by_id, d->id, id_of);
    if (!s->by_id[i])
      s->by_id[i] = k + 1;
  }
  if (d->run) {
    size_t i = probe(s, s->by_run, d->run, run_of);
    s->run_next[k] = s->by_run[i];
    s->by_run[i] = k + 1;
  }
  if (d->action == PS_TRIAGE_UNDO && d->revokes) {
    size_t i = probe(s, s->revoked, d->revokes, revokes_of);
    if (!s->revoked[i])
      s->revoked[i] = k + 1;
  }
}

/* Builds the indexes anew for `cap` decisions. 0 or -ENOMEM (then the
 * old ones stay). */
static int reindex(ps_triage_set *s, size_t cap) {
  size_t nslots = 16;
  while (nslots < 2 * cap)
    nslots *= 2;
  size_t *by_id = calloc(nslots, sizeof *by_id), *by_run = calloc(nslots, sizeof *by_run),
         *revoked = calloc(nslots, sizeof *revoked), *run_next = calloc(cap, sizeof *run_next);
  if (!by_id || !by_run || !revoked || !run_next) {
    free(by_id);
    free(by_run);
    free(revoked);
    free(run_next);
    return -ENOMEM;
  }
  index_free(s);
  s->by_id = by_id;
  s->by_run = by_run;
  s->revoked = revoked;
  s->run_next = run_next;
  s->nslots = nslots;
  for (size_t k = 0; k < s->n; k++)
    index_one(s, k);
  return 0;
}

const ps_triage_decision *ps_triage_find(const ps_triage_set *s, const char *id) {
  if (!id || !s->nslots)
    return NULL;
  size_t i = probe(s, s->by_id, id, id_of);
  return s->by_id[i] ? &s->d[s->by_id[i] - 1] : NULL;
}

int ps_triage_add(ps_triage_set *s, const ps_triage_decision *d) {
  ps_triage_decision copy;
  if (decision_copy(&copy, d) < 0)
    return -ENOMEM;
  if (ps_triage_find(s, copy.id)) {
    decision_free(&copy);
    return 1;
  }
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    ps_triage_decision *grown = realloc(s->d, cap * sizeof *grown);
    if (!grown) {
      decision_free(&copy);
      return -ENOMEM;
    }
    s->d = grown;
    if (reindex(s, cap) < 0) {
      decision_free(&copy);
      return -ENOMEM;
    }
    s->cap = cap;
  }
  s->d[s->n++] = copy;
  index_one(s, s->n - 1);
  return 0;
}

static int by_time(const void *a, const void *b) {
  const ps_triage_decision *x = a, *y = b;
  return x->when_ns < y->when_ns ? -1 : x->when_ns > y->when_ns;
}

int ps_triage_sort_by_time(ps_triage_set *s) {
  if (!s->n)
    return 0;
  qsort(s->d, s->n, sizeof *s->d, by_time);
  return reindex(s, s->cap);
}

int ps_triage_merge(ps_triage_set *into, ps_triage_set *from) {
  int rc = 0;
  for (size_t i = 0; i < from->n && rc >= 0; i++)
    rc = ps_triage_add(into, &from->d[i]);
  ps_triage_set_free(from);
  return rc < 0 ? rc : 0;
}

int ps_triage_revoked(const ps_triage_set *s, const ps_triage_decision *d) {
  if (d->action == PS_TRIAGE_UNDO || !d->id || !s->nslots)
    return 0;
  return s->revoked[probe(s, s->revoked, d->id, revokes_of)] != 0;
}

static int host_matches(const ps_triage_decision *d, const char *host) {
  return !d->host || same(d->host, host);
}

/* The newest decision in force of `action` about (host, run) for which
 * `extra` (may be NULL) holds. */
static const ps_triage_decision *newest(const ps_triage_set *s, ps_triage_action action,
                                        const char *host, const char *run,
                                        int (*extra)(const ps_triage_decision *, const void *),
                                        const void *ctx) {
  const ps_triage_decision *best = NULL;
  if (!run || !s->nslots)
    return NULL;
  for (size_t k = s->by_run[probe(s, s->by_run, run, run_of)]; k; k = s->run_next[k - 1]) {
    const ps_triage_decision *d = &s->d[k - 1];
    if (d->action != action || !host_matches(d, host))
      continue;
    if (extra && !extra(d, ctx))
      continue;
    if (ps_triage_revoked(s, d))
      continue;
    /* >=: the chain runs newest-added first, and of two at one time the
     * first added is the one shown, as it always was */
    if (!best || d->when_ns >= best->when_ns)
      best = d;
  }
  return best;
}

static int metric_matches(const ps_triage_decision *d, const void *metric) {
  return !d->metric || same(d->metric, metric);
}

const ps_triage_decision *ps_triage_ack_of(const ps_triage_set *s, const char *host,
                                           const char *run, const char *change_run,
                                           const char *metric) {
  const ps_triage_decision *a = newest(s, PS_TRIAGE_ACK, host, run, metric_matches, metric);
  /* the same change, seen from a later run at the new level */
  if (!a && change_run && (!run || strcmp(change_run, run) != 0))
    a = newest(s, PS_TRIAGE_ACK, host, change_run, metric_matches, metric);
  return a;
}

const ps_triage_decision *ps_triage_excluded(const ps_triage_set *s, const char *host,
                                             const char *run) {
  return newest(s, PS_TRIAGE_EXCLUDE, host, run, NULL, NULL);
}

const ps_triage_decision *ps_triage_baseline_of(const ps_triage_set *s, const char *host,
                                                const char *run) {
  return newest(s, PS_TRIAGE_BASELINE, host, run, NULL, NULL);
}

size_t ps_triage_baseline_start(const ps_triage_set *s, const ps_verdict_run *runs, size_t n) {
  for (size_t i = n; s->n && i-- > 0;)
    if (ps_triage_baseline_of(s, runs[i].host, runs[i].name))
      return i;
  return 0;
}

void ps_triage_id(const ps_triage_decision *d, int file, const char *salt, char out[14]) {
  ps_buf b;
  ps_buf_init(&b, 0);
  ps_buf_printf(&b, "%s\n%s\n%s\n%s\n%s\n%s\n%s\n%lld\n%s", ps_triage_action_name(d->action),
                d->run ? d->run : "", d->metric ? d->metric : "", d->host ? d->host : "",
                d->reason ? d->reason : "", d->revokes ? d->revokes : "",
                d->who ? d->who : "", (long long)d->when_ns, salt ? salt : "");
  unsigned char digest[32];
  ps_sha256(b.data, b.len, digest);
  ps_buf_free(&b);
  out[0] = file ? 'f' : 't';
  for (int i = 0; i < 6; i++)
    snprintf(out + 1 + 2 * i, 3, "%02x", digest[i]);
}

/* --- the triage_file ---------------------------------------------------- */

/* "2026-12-01T10:00:00Z" (or a date alone) in ns; -1 when not that. */
static int64_t parse_when(const char *t) {
  struct tm tm = {0};
  char z = 0;
  int n = 0;
  if (sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
             &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &z, &n) == 7 &&
      z == 'Z' && t[n] == '\0') {
  } else if (memset(&tm, 0, sizeof tm),
             sscanf(t, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) == 3 &&
                 t[n] == '\0') {
  } else {
    return -1;
  }
  static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = tm.tm_year % 4 == 0 && (tm.tm_year % 100 != 0 || tm.tm_year % 400 == 0);
  /* timegm would move 2026-02-31 to 2026-03-03 without a word */
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > mdays[tm.tm_mon - 1] ||
      (tm.tm_mon == 2 && tm.tm_mday == 29 && !leap) || tm.tm_hour > 23 || tm.tm_min > 59 ||
      tm.tm_sec > 59 || tm.tm_year < 1970 || tm.tm_year > 2200)
    return -1;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  time_t s = timegm(&tm);
  return s < 0 ? -1 : (int64_t)s * 1000000000;
}

/* The next token of `p` (a bare word, key=word or key="quoted") into
 * `tok` (unquoted); advances *p. 1 a token, 0 the end, -1 with *why. */
static int next_token(const char **p, const char *end, ps_buf *tok, const char **why) {
  const char *s = *p;
  while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
    s++;
  ps_buf_reset(tok);
  if (s >= end) {
    *p = s;
    return 0;
  }
  int quoted = 0;
  while (s < end && (quoted || (*s != ' ' && *s != '\t' && *s != '\r'))) {
    char c = *s++;
    if (c == '"') {
      quoted = !quoted;
      continue;
    }
    if (quoted && c == '\\') {
      if (s >= end || (*s != '"' && *s != '\\')) {
        *why = "in quotes, a backslash is followed by \" or \\ only";
        return -1;
      }
      c = *s++;
    }
    if ((unsigned char)c < 0x20 && c != '\t') {
      *why = "a control character";
      return -1;
    }
    if (ps_buf_putc(tok, c) < 0) {
      *why = "out of memory";
      return -1;
    }
  }
  if (quoted) {
    *why = "a quote is not closed";
    return -1;
  }
  if (ps_buf_putc(tok, '\0') < 0) {
    *why = "out of memory";
    return -1;
  }
  tok->len--;
  *p = s;
  return 1;
}

static const char *const file_keys[] = {"id", "run", "metric", "host", "who",
                                        "reason", "ticket", "revokes", "when", NULL};

/* One line into `d` (its strings point into `vals`); NULL, or why not. */
static const char *parse_line(const char *p, const char *end, ps_triage_decision *d,
                              char *vals[9], ps_buf *tok) {
  const char *why = NULL;
  int r = next_token(&p, end, tok, &why);
  if (r <= 0)
    return why ? why : "empty";
  int a = ps_triage_action_parse(tok->data);
  if (a < 0)
    return "the line does not begin with ack, exclude, baseline or undo";
  d->action = (ps_triage_action)a;
  while ((r = next_token(&p, end, tok, &why)) > 0) {
    char *eq = strchr(tok->data, '=');
    if (!eq)
      return "a word that is not key=value (quote a value that holds spaces)";
    *eq = '\0';
    int k = 0;
    while (file_keys[k] && strcmp(file_keys[k], tok->data) != 0)
      k++;
    if (!file_keys[k])
      return "an unknown key (id, run, metric, host, who, reason, ticket, revokes, when)";
    if (vals[k])
      return "a key given twice";
    if (!(vals[k] = strdup(eq + 1)))
      return "out of memory";
  }
  if (r < 0)
    return why;
  /* An empty id would be no id at all (the set keeps "" as NULL), and
   * undo, list and the change test all name a decision by it. */
  if (vals[0] && !vals[0][0])
    return "id= is empty (leave it out to have one made from the line)";
  d->id = vals[0];
  d->run = vals[1];
  d->metric = vals[2];
  d->host = vals[3];
  d->who = vals[4];
  d->reason = vals[5];
  d->ticket = vals[6];
  d->revokes = vals[7];
  if (vals[8] && (d->when_ns = parse_when(vals[8])) < 0)
    return "when= is not a date YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ that exists";
  if (d->action == PS_TRIAGE_UNDO) {
    if (!d->revokes || !d->revokes[0])
      return "undo needs revokes=ID";
    if (d->run || d->metric)
      return "undo takes revokes=ID, not run= or metric=";
  } else {
    if (!d->run || !d->run[0])
      return "run= is required";
    if (d->revokes)
      return "revokes= belongs to undo";
    if (d->action != PS_TRIAGE_ACK && (d->metric || d->ticket))
      return "metric= and ticket= belong to ack";
  }
  if (!d->reason || !d->reason[0])
    return "reason= is required";
  if (d->ticket && strncmp(d->ticket, "https://", 8) != 0 && strncmp(d->ticket, "http://", 7) != 0)
    return "ticket= is not an http(s) URL";
  return NULL;
}

/* Why a decision whose id `had` holds already is left out. */
static int taken_id(ps_buf *why, const ps_triage_decision *d, const ps_triage_decision *had) {
  int rc = had->origin ? ps_buf_printf(why, "id=%s is the id of %s already; the line is left out",
                                       d->id, had->origin)
                       : ps_buf_printf(why,
                                       "id=%s is the id of a decision on the server already "
                                       "(perfship_triage), which stays in force; the line is "
                                       "left out",
                                       d->id);
  return rc < 0 ? -ENOMEM : 0;
}

size_t ps_triage_check_file(const ps_triage_set *s, ps_triage_bad_fn bad, void *ctx) {
  size_t n = 0;
  for (size_t i = 0; i < s->n; i++) {
    const ps_triage_decision *d = &s->d[i];
    if (!d->origin || d->action != PS_TRIAGE_UNDO || ps_triage_find(s, d->revokes))
      continue;
    n++;
    if (!bad)
      continue;
    /* origin is "FILE:LINE", as parse_text made it */
    const char *colon = strrchr(d->origin, ':');
    char file[4096];
    snprintf(file, sizeof file, "%.*s", colon ? (int)(colon - d->origin) : 0, d->origin);
    bad(ctx, file, colon ? strtoul(colon + 1, NULL, 10) : 0,
        "revokes= names no decision of the file or the server");
  }
  return n;
}

long ps_triage_parse_text(ps_triage_set *s, const char *name, const char *text, size_t len,
                          ps_triage_bad_fn bad, void *ctx) {
  long nbad = 0;
  size_t lineno = 0;
  const char *p = text, *end = text + len;
  ps_buf tok, origin;
  ps_buf_init(&tok, 0);
  ps_buf_init(&origin, 0);
  int rc = 0;
  while (p < end && rc == 0) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *eol = nl ? nl : end;
    lineno++;
    const char *q = p;
    while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r'))
      q++;
    if (q < eol && *q != '#') {
      ps_triage_decision d = {0};
      char *vals[9] = {0};
      const char *why = memchr(q, '\0', (size_t)(eol - q)) ? "a NUL byte"
                                                            : parse_line(q, eol, &d, vals, &tok);
      if (why && strcmp(why, "out of memory") == 0) {
        rc = -ENOMEM;
      } else if (why) {
        nbad++;
        if (bad)
          bad(ctx, name, lineno, why);
      } else {
        char id[14];
        if (!d.id) {
          /* the line's own words: the same line keeps its id */
          ps_buf_reset(&origin);
          ps_buf_append(&origin, q, (size_t)(eol - q));
          ps_buf_putc(&origin, '\0');
          ps_triage_id(&d, 1, origin.data, id);
          d.id = id;
        }
        const ps_triage_decision *had = ps_triage_find(s, d.id);
        ps_buf_reset(&origin);
        if (had) {
          /* the first keeps the id: a copied line must not silently
           * replace a decision someone relies on */
          nbad++;
          rc = taken_id(&origin, &d, had);
          if (rc == 0 && bad)
            bad(ctx, name, lineno, origin.data);
        } else if (ps_buf_printf(&origin, "%s:%zu", name ? name : "-", lineno) < 0) {
          rc = -ENOMEM;
        } else {
          d.origin = origin.data;
          rc = ps_triage_add(s, &d);
        }
      }
      for (int k = 0; k < 9; k++)
        free(vals[k]);
    }
    p = nl ? nl + 1 : end;
  }
  ps_buf_free(&tok);
  ps_buf_free(&origin);
  return rc < 0 ? rc : nbad;
}
