/*
 * alerting.c: the alert stage as the service sees it. See
 * include/judging/alerting.h and docs/alerts.md.
 *
 * Design
 * - It owns the stage's three parts and wires them bottom up: the raiser
 *   (alerting_raise.c) first, the clock (alerting_clock.c) raising through
 *   it, the run alerts (alerting_runs.c) raising through it and telling
 *   the clock when runs start. What comes in is handed to the part it
 *   concerns; the state section is the parts' members in one object.
 */
#include "judging/alerting.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/jsonspan.h"
#include "core/log.h"

int jd_alerting_init(jd_alerting *al, pl_shared *sh, pl_delivery *dl, pl_reader *rd, pl_runs *runs,
                     pl_commit *commit, const pl_aux_out *out, const jd_alerting_hooks *hooks) {
  memset(al, 0, sizeof *al);
  al->sh = sh;
  int rc = jd_alerting_raise_init(&al->raiser, sh, commit, out, hooks ? hooks->settled : NULL,
                                  hooks ? hooks->ctx : NULL);
  if (rc < 0)
    return rc;
  jd_alerting_clock_init(&al->clock, sh, &al->raiser, dl, rd, runs, commit);
  jd_alerting_runs_init(&al->runs, sh, &al->raiser, &al->clock, hooks ? hooks->slog_pending : NULL,
                        hooks ? hooks->ctx : NULL);
  return 0;
}

/* --- the section cut to its caps before a tree is built ------------------- */

/* The lists this stage reads and how: the newest `cap` (the last ones) of
 * outbox, throttle and seen; the first sources up to the cap of distinct
 * readable keys. A list cut here is cut exactly where its reader would
 * stop, and the entries left out are counted as the reader counts them,
 * so the warning is the same; what is built is at most the caps' worth
 * (a state with 80,000 entries a list built 100 MB of tree). */
enum { CUT_OUTBOX, CUT_THROTTLE, CUT_SEEN, CUT_SOURCES, CUT_HEALTH, CUT_N };
static const char *const CUT_NAMES[CUT_N] = {"outbox", "throttle", "seen", "sources", "health"};

typedef struct key_set {
  ps_buf text;         /* the keys, each NUL-terminated */
  uint32_t slot[4096]; /* offset + 1 into text; 0: empty */
} key_set;

/* 1 when `key` (at text.data + off) was there already, else adds it. */
static int key_set_seen(key_set *ks, size_t off) {
  const char *key = ks->text.data + off;
  uint32_t h = 2166136261u;
  for (const char *c = key; *c; c++)
    h = (h ^ (unsigned char)*c) * 16777619u;
  for (uint32_t i = h % 4096;; i = (i + 1) % 4096) {
    if (!ks->slot[i]) {
      ks->slot[i] = (uint32_t)off + 1;
      return 0;
    }
    if (strcmp(ks->text.data + ks->slot[i] - 1, key) == 0)
      return 1;
  }
}

/* How many of the sources the clock walks before it has its cap: bad and
 * repeated keys do not count toward it (jd_alerting_clock_from_cjson). */
static size_t sources_walked(ps_jv list, size_t total) {
  key_set *ks = calloc(1, sizeof *ks);
  if (!ks)
    return total;
  ps_buf_init(&ks->text, 0);
  ps_jiter it = ps_jv_iter(list);
  ps_jmember m;
  size_t walked = 0, kept = 0;
  while (kept < JD_ALERTING_CLOCK_SOURCES_MAX && ps_jiter_next(&it, &m)) {
    walked++;
    ps_jv key;
    size_t off, n;
    if (ps_jv_get(m.val, "key", &key) < 0 || ps_jv_kind(key) != PS_JV_STRING)
      continue;
    size_t at = ks->text.len;
    if (ps_jv_string(key, &ks->text, &off, &n) < 0) {
      walked = total; /* out of memory: the reader sees it all */
      break;
    }
    if (!ks->text.data[off] || key_set_seen(ks, off))
      ks->text.len = at;
    else
      kept++;
  }
  ps_buf_free(&ks->text);
  free(ks);
  return walked;
}

/* Appends list `v` to `out` keeping the elements [from, to). */
static int put_elements(ps_buf *out, ps_jv v, size_t from, size_t to) {
  ps_jiter it = ps_jv_iter(v);
  ps_jmember m;
  const char *first = NULL, *last = NULL;
  for (size_t i = 0; i < to && ps_jiter_next(&it, &m); i++)
    if (i >= from) {
      first = first ? first : m.val.p;
      last = m.val.end;
    }
  int bad = ps_buf_putc(out, '[') < 0;
  if (first)
    bad |= ps_buf_append(out, first, (size_t)(last - first)) < 0;
  return bad | (ps_buf_putc(out, ']') < 0);
}

static size_t count_elements(ps_jv v) {
  ps_jiter it = ps_jv_iter(v);
  ps_jmember m;
  size_t n = 0;
  while (ps_jiter_next(&it, &m))
    n++;
  return n;
}

/* The section's text with each list cut to its cap; cut[] gets how many
 * entries each lost. NULL when the text is outside jsonspan's grammar or
 * not an object: the whole text is then read as before. */
static char *section_cut(const jd_alerting *al, const char *text, size_t cut[CUT_N]) {
  ps_jv root;
  if (ps_json_check(text, strlen(text), 1000, &root) < 0 || ps_jv_kind(root) != PS_JV_OBJECT)
    return NULL;
  size_t caps[CUT_N] = {al->raiser.box.max, PS_ALERT_THROTTLE_MAX, PS_ALERT_DECIDED_MAX,
                        JD_ALERTING_CLOCK_SOURCES_MAX, 0};
  int done[CUT_N] = {0};
  ps_buf out;
  ps_buf_init(&out, 0);
  int bad = ps_buf_putc(&out, '{') < 0;
  ps_jiter it = ps_jv_iter(root);
  ps_jmember m;
  while (ps_jiter_next(&it, &m)) {
    int k = 0;
    while (k < CUT_N && !ps_jkey_is(m.key, CUT_NAMES[k]))
      k++;
    if (k == CUT_N || done[k]) /* never read: the first of a name is */
      continue;
    done[k] = 1;
    bad |= ps_buf_puts(&out, out.len > 1 ? ",\"" : "\"") < 0;
    bad |= ps_buf_append(&out, m.key.p, (size_t)(m.key.end - m.key.p)) < 0;
    bad |= ps_buf_puts(&out, "\":") < 0;
    size_t n = k == CUT_HEALTH || ps_jv_kind(m.val) != PS_JV_ARRAY ? 0 : count_elements(m.val);
    if (n <= caps[k]) {
      bad |= ps_buf_append(&out, m.val.p, (size_t)(m.val.end - m.val.p)) < 0;
    } else if (k == CUT_SOURCES) {
      size_t walked = sources_walked(m.val, n);
      cut[k] = n - walked;
      bad |= put_elements(&out, m.val, 0, walked);
    } else {
      cut[k] = n - caps[k];
      bad |= put_elements(&out, m.val, n - caps[k], n);
    }
  }
  if (bad || ps_buf_putc(&out, '}') < 0) {
    ps_buf_free(&out); /* the whole text is read, as before */
    memset(cut, 0, CUT_N * sizeof cut[0]);
    return NULL;
  }
  return out.data;
}

void jd_alerting_from_json(jd_alerting *al, const char *text) {
  size_t cut[CUT_N] = {0};
  char *small = text ? section_cut(al, text, cut) : NULL;
  cJSON *root = small ? cJSON_Parse(small) : text ? cJSON_Parse(text) : NULL;
  free(small);
  ps_buf said;
  ps_buf_init(&said, 0);
  if (cJSON_IsObject(root)) {
    ps_alert_recall src = {.over = cut[CUT_SOURCES]};
    jd_alerting_raise_from_cjson(&al->raiser, root, cut, &said);
    jd_alerting_clock_from_cjson(&al->clock, root, &src);
    ps_alert_recall_say(&said, "sources", JD_ALERTING_CLOCK_SOURCES_MAX, &src);
  } else if (text) {
    ps_buf_puts(&said, root ? "; the section is not an object (ignored)"
                            : "; the section is not JSON (ignored)");
  }
  /* one line for the whole section, however much was left out: a state
   * file damaged by hand or by a bug is said, never silently shrunk */
  if (said.len)
    PS_WARN("alerts", "the state file's alerts section was not read whole%s", said.data);
  ps_buf_free(&said);
  cJSON_Delete(root);
}

char *jd_alerting_to_json(jd_alerting *al) {
  cJSON *root = cJSON_CreateObject();
  if (!root)
    return NULL;
  jd_alerting_raise_to_cjson(&al->raiser, root);
  jd_alerting_clock_to_cjson(&al->clock, root);
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return text;
}

void jd_alerting_start(jd_alerting *al) {
  jd_alerting_raise_kick(&al->raiser, 1);
  jd_alerting_clock_start(&al->clock);
}

void jd_alerting_run_event(jd_alerting *al, const pl_run_event *ev) {
  jd_alerting_runs_event(&al->runs, ev);
}

void jd_alerting_tap(jd_alerting *al, const ps_point *p, const ps_source_cfg *src,
                     const char *path) {
  (void)path;
  jd_alerting_runs_tap(&al->runs, p, src);
}

void jd_alerting_verdicts(jd_alerting *al, const jd_alert_verdicts *v) {
  jd_alerting_runs_verdicts(&al->runs, v);
}

void jd_alerting_judged(jd_alerting *al, const jd_run_verdicts *rv) {
  jd_alerting_runs_judged(&al->runs, rv);
}

void jd_alerting_finish(jd_alerting *al) {
  if (al->runs.finished)
    return;
  jd_alerting_runs_finish(&al->runs);
  jd_alerting_clock_finish(&al->clock);
  jd_alerting_raise_kick(&al->raiser, 0);
}

int jd_alerting_done(const jd_alerting *al) {
  return jd_alerting_runs_idle(&al->runs) && jd_alerting_raise_idle(&al->raiser);
}

int jd_alerting_undelivered(const jd_alerting *al) { return jd_alerting_raise_failed(&al->raiser); }

size_t jd_alerting_held(const jd_alerting *al) { return jd_alerting_raise_held(&al->raiser); }

void jd_alerting_hold(jd_alerting *al) {
  jd_alerting_raise_hold(&al->raiser);
  jd_alerting_clock_hold(&al->clock);
}

size_t jd_alerting_busy(const jd_alerting *al) { return jd_alerting_raise_busy(&al->raiser); }

void jd_alerting_close(jd_alerting *al) {
  jd_alerting_clock_close(&al->clock);
  jd_alerting_runs_close(&al->runs);
  jd_alerting_raise_close(&al->raiser);
}

void jd_alerting_free(jd_alerting *al) {
  jd_alerting_raise_free(&al->raiser);
  jd_alerting_clock_free(&al->clock);
  jd_alerting_runs_free(&al->runs);
}
