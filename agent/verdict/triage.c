/*
 * verdict/triage.c: triage decisions as data and what they mean
 * (include/verdict/triage.h; docs/verdicts.md "Triage").
 *
 * Design: decisions are few (people take them), so every question is a
 * linear scan over the set; newest first, so that of two acks of the same
 * run the newer one's reason is the one shown.
 */
/* timegm: _GNU_SOURCE comes from the build (CMakeLists.txt) */
#include "verdict/triage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/sha256.h"

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

void ps_triage_set_free(ps_triage_set *s) {
  for (size_t i = 0; i < s->n; i++)
    decision_free(&s->d[i]);
  free(s->d);
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

int ps_triage_add(ps_triage_set *s, const ps_triage_decision *d) {
  ps_triage_decision copy;
  if (decision_copy(&copy, d) < 0)
    return -ENOMEM;
  for (size_t i = 0; copy.id && i < s->n; i++)
    if (same(s->d[i].id, copy.id)) {
      decision_free(&s->d[i]);
      s->d[i] = copy;
      return 0;
    }
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    ps_triage_decision *grown = realloc(s->d, cap * sizeof *grown);
    if (!grown) {
      decision_free(&copy);
      return -ENOMEM;
    }
    s->d = grown;
    s->cap = cap;
  }
  s->d[s->n++] = copy;
  return 0;
}

int ps_triage_merge(ps_triage_set *into, ps_triage_set *from) {
  int rc = 0;
  for (size_t i = 0; i < from->n && rc == 0; i++)
    rc = ps_triage_add(into, &from->d[i]);
  ps_triage_set_free(from);
  return rc;
}

int ps_triage_revoked(const ps_triage_set *s, const ps_triage_decision *d) {
  if (d->action == PS_TRIAGE_UNDO || !d->id)
    return 0;
  for (size_t i = 0; i < s->n; i++)
    if (s->d[i].action == PS_TRIAGE_UNDO && same(s->d[i].revokes, d->id))
      return 1;
  return 0;
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
  for (size_t i = 0; run && i < s->n; i++) {
    const ps_triage_decision *d = &s->d[i];
    if (d->action != action || !d->run || !host_matches(d, host) || strcmp(d->run, run) != 0)
      continue;
    if (extra && !extra(d, ctx))
      continue;
    if (ps_triage_revoked(s, d))
      continue;
    if (!best || d->when_ns > best->when_ns)
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
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60 || tm.tm_year < 1970 || tm.tm_year > 2200)
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
    return "when= is not YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ";
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
        ps_buf_reset(&origin);
        if (ps_buf_printf(&origin, "%s:%zu", name ? name : "-", lineno) < 0) {
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
