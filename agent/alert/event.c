/*
 * alert/event.c: the event, its id and its JSON (include/alert/event.h).
 *
 * Design
 * - The id hashes the five identifying parts, each followed by a NUL so
 *   that ("ab", "c") and ("a", "bc") differ, twice: FNV-1a 64 forwards and
 *   backwards with different seeds, printed as 32 hex digits. No secret is
 *   involved; the id only has to be stable and not collide among the few
 *   thousand events a site sees.
 * - Everything is rendered with cJSON, which escapes every string; numbers
 *   that are not finite are left out (JSON has no NaN).
 */
#include "alert/event.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/visible.h"

void ps_alert_event_init(ps_alert_event *ev, ps_alert_kind kind) {
  memset(ev, 0, sizeof *ev);
  ev->kind = kind;
}

static void metric_free(ps_alert_metric *m) {
  free(m->metric);
  free(m->stage);
  free(m->arm);
  free(m->reference);
  free(m->change_run);
  free(m->against);
  free(m->good_revision);
  free(m->bad_revision);
  free(m->compare_url);
  free(m->note);
}

void ps_alert_event_free(ps_alert_event *ev) {
  if (!ev)
    return;
  char **strs[] = {&ev->host,      &ev->source,   &ev->run,    &ev->series,
                   &ev->test_type, &ev->revision, &ev->status, &ev->text, &ev->cause};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
    free(*strs[i]);
  for (size_t i = 0; i < ev->nmetrics; i++)
    metric_free(&ev->metrics[i]);
  free(ev->metrics);
  memset(ev, 0, sizeof *ev);
}

int ps_alert_set(char **field, const char *value) {
  char *copy = NULL;
  if (value && value[0] && !(copy = strdup(value)))
    return -ENOMEM;
  free(*field);
  *field = copy;
  return 0;
}

int ps_alert_event_add_metric(ps_alert_event *ev, const ps_alert_metric *m) {
  ps_alert_metric *grown = realloc(ev->metrics, (ev->nmetrics + 1) * sizeof *grown);
  if (!grown)
    return -ENOMEM;
  ev->metrics = grown;
  ps_alert_metric *c = &ev->metrics[ev->nmetrics];
  *c = *m;
  c->metric = c->stage = c->arm = c->reference = c->change_run = NULL;
  c->against = c->good_revision = c->bad_revision = c->compare_url = c->note = NULL;
  if (ps_alert_set(&c->metric, m->metric) || ps_alert_set(&c->stage, m->stage) ||
      ps_alert_set(&c->arm, m->arm) || ps_alert_set(&c->reference, m->reference) ||
      ps_alert_set(&c->change_run, m->change_run) || ps_alert_set(&c->against, m->against) ||
      ps_alert_set(&c->good_revision, m->good_revision) ||
      ps_alert_set(&c->bad_revision, m->bad_revision) ||
      ps_alert_set(&c->compare_url, m->compare_url) || ps_alert_set(&c->note, m->note)) {
    metric_free(c);
    return -ENOMEM;
  }
  ev->nmetrics++;
  return 0;
}

void ps_alert_event_move(ps_alert_event *to, ps_alert_event *from) {
  *to = *from;
  memset(from, 0, sizeof *from);
}

/* ---- the id ---------------------------------------------------------------- */

#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv_forward(uint64_t h, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)p[i];
    h *= FNV_PRIME;
  }
  return h;
}

static uint64_t fnv_backward(uint64_t h, const char *p, size_t n) {
  for (size_t i = n; i > 0; i--) {
    h ^= (unsigned char)p[i - 1];
    h *= FNV_PRIME;
  }
  return h;
}

void ps_alert_id(char out[PS_ALERT_ID_LEN + 1], ps_alert_kind kind, const char *host,
                 const char *source, const char *run, int64_t marker_ns) {
  ps_buf b;
  ps_buf_init(&b, 0);
  char when[32];
  snprintf(when, sizeof when, "%" PRId64, marker_ns);
  const char *parts[] = {ps_alert_kind_name(kind), host ? host : "", source ? source : "",
                         run ? run : "", when};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    if (ps_buf_puts(&b, parts[i]) < 0 || ps_buf_putc(&b, '\0') < 0)
      break;
  /* Out of memory above leaves a shorter text: still a stable hash of it. */
  const char *text = b.data ? b.data : "";
  uint64_t h1 = fnv_forward(0xcbf29ce484222325ULL, text, b.len);
  uint64_t h2 = fnv_backward(0x6c62272e07bb0142ULL, text, b.len);
  snprintf(out, PS_ALERT_ID_LEN + 1, "%016" PRIx64 "%016" PRIx64, h1, h2);
  ps_buf_free(&b);
}

static int id_ok(const char *s) {
  if (!s || strlen(s) != PS_ALERT_ID_LEN)
    return 0;
  for (const char *p = s; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
      return 0;
  return 1;
}

void ps_alert_rfc3339(char *buf, size_t n, int64_t time_ns) {
  time_t secs = (time_t)(time_ns / 1000000000LL);
  struct tm tm;
  if (!gmtime_r(&secs, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
    snprintf(buf, n, "1970-01-01T00:00:00Z");
}

/* ---- JSON ------------------------------------------------------------------ */

static void add_str(cJSON *o, const char *key, const char *v) {
  if (v)
    cJSON_AddStringToObject(o, key, v);
}

static void add_num(cJSON *o, const char *key, int have, double v) {
  if (have && isfinite(v))
    cJSON_AddNumberToObject(o, key, v);
}

cJSON *ps_alert_event_to_cjson(const ps_alert_event *ev) {
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return NULL;
  char when[40];
  ps_alert_rfc3339(when, sizeof when, ev->time_ns);
  add_str(o, "id", ev->id);
  add_str(o, "event", ps_alert_kind_name(ev->kind));
  add_str(o, "time", when);
  add_str(o, "host", ev->host);
  add_str(o, "source", ev->source);
  add_str(o, "run", ev->run);
  add_str(o, "series", ev->series);
  add_str(o, "test_type", ev->test_type);
  add_str(o, "revision", ev->revision);
  add_str(o, "status", ev->status);
  add_str(o, "text", ev->text);
  if (ev->suppressed)
    cJSON_AddNumberToObject(o, "suppressed", (double)ev->suppressed);
  cJSON *cause = ev->cause ? cJSON_Parse(ev->cause) : NULL;
  if (cJSON_IsObject(cause))
    cJSON_AddItemToObject(o, "cause", cause);
  else
    cJSON_Delete(cause);
  if (ev->nmetrics) {
    cJSON *arr = cJSON_AddArrayToObject(o, "metrics");
    for (size_t i = 0; arr && i < ev->nmetrics; i++) {
      const ps_alert_metric *m = &ev->metrics[i];
      cJSON *mo = cJSON_CreateObject();
      if (!mo)
        break;
      add_str(mo, "metric", m->metric);
      add_num(mo, "value", m->have_value, m->value);
      add_num(mo, "baseline", m->have_baseline, m->baseline);
      add_num(mo, "change_pct", m->have_change_pct, m->change_pct);
      add_str(mo, "stage", m->stage);
      add_str(mo, "arm", m->arm);
      add_str(mo, "reference", m->reference);
      add_str(mo, "change_run", m->change_run);
      add_str(mo, "against", m->against);
      add_str(mo, "good_revision", m->good_revision);
      add_str(mo, "bad_revision", m->bad_revision);
      add_str(mo, "compare_url", m->compare_url);
      add_str(mo, "note", m->note);
      cJSON_AddItemToArray(arr, mo);
    }
  }
  return o;
}

static const char *get_str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int get_num(const cJSON *o, const char *key, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
    return 0;
  *out = v->valuedouble;
  return 1;
}

int ps_alert_event_from_cjson(ps_alert_event *ev, const cJSON *o) {
  ps_alert_kind kind;
  if (!cJSON_IsObject(o) || ps_alert_kind_from_name(get_str(o, "event"), &kind) < 0 ||
      !id_ok(get_str(o, "id")) || !get_str(o, "source") || !get_str(o, "run") ||
      !get_str(o, "text"))
    return -EINVAL;
  ps_alert_event_init(ev, kind);
  memcpy(ev->id, get_str(o, "id"), PS_ALERT_ID_LEN + 1);
  struct {
    char **field;
    const char *key;
  } strs[] = {{&ev->host, "host"},     {&ev->source, "source"},       {&ev->run, "run"},
              {&ev->series, "series"}, {&ev->test_type, "test_type"}, {&ev->revision, "revision"},
              {&ev->status, "status"}, {&ev->text, "text"}};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
    if (ps_alert_set(strs[i].field, get_str(o, strs[i].key)) < 0)
      goto oom;
  /* A source, run or text that was "" is not an event worth keeping. */
  if (!ev->source || !ev->run || !ev->text) {
    ps_alert_event_free(ev);
    return -EINVAL;
  }
  double d;
  if (get_num(o, "suppressed", &d) && d > 0 && d < 1e18)
    ev->suppressed = (uint64_t)d;
  const cJSON *cause = cJSON_GetObjectItemCaseSensitive(o, "cause");
  if (cJSON_IsObject(cause) && !(ev->cause = cJSON_PrintUnformatted(cause)))
    goto oom;
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "metrics");
  const cJSON *mo;
  const cJSON *list = cJSON_IsArray(arr) ? arr : NULL;
  cJSON_ArrayForEach(mo, list) {
    const char *name = cJSON_IsObject(mo) ? get_str(mo, "metric") : NULL;
    if (!name || !name[0])
      continue; /* a metric without a name says nothing */
    ps_alert_metric m = {
        .metric = (char *)get_str(mo, "metric"),
        .stage = (char *)get_str(mo, "stage"),
        .arm = (char *)get_str(mo, "arm"),
        .reference = (char *)get_str(mo, "reference"),
        .change_run = (char *)get_str(mo, "change_run"),
        .against = (char *)get_str(mo, "against"),
        .good_revision = (char *)get_str(mo, "good_revision"),
        .bad_revision = (char *)get_str(mo, "bad_revision"),
        .compare_url = (char *)get_str(mo, "compare_url"),
        .note = (char *)get_str(mo, "note"),
        .improvement = kind == PS_ALERT_IMPROVEMENT,
    };
    m.have_value = get_num(mo, "value", &m.value);
    m.have_baseline = get_num(mo, "baseline", &m.baseline);
    m.have_change_pct = get_num(mo, "change_pct", &m.change_pct);
    if (ps_alert_event_add_metric(ev, &m) < 0)
      goto oom;
  }
  return 0;
oom:
  ps_alert_event_free(ev);
  return -ENOMEM;
}

char *ps_alert_event_json(const ps_alert_event *ev) {
  cJSON *o = ps_alert_event_to_cjson(ev);
  char *text = o ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return text;
}

/* Slack reads &, < and > as markup (<!channel>, <url|label>); direction
 * controls and other controls are shown as their escapes, so a run name
 * cannot make the message read otherwise (core/visible.h). */
static void slack_escape(ps_buf *b, const char *raw) {
  ps_buf shown;
  ps_buf_init(&shown, 0);
  if (ps_visible(&shown, raw, PS_VISIBLE_KEEP_LINES) < 0)
    return;
  for (const char *s = shown.data; s && *s; s++) {
    if (*s == '&')
      ps_buf_puts(b, "&amp;");
    else if (*s == '<')
      ps_buf_puts(b, "&lt;");
    else if (*s == '>')
      ps_buf_puts(b, "&gt;");
    else
      ps_buf_putc(b, *s);
  }
  ps_buf_free(&shown);
}

char *ps_alert_event_slack(const ps_alert_event *ev) {
  ps_buf b;
  ps_buf_init(&b, 0);
  ps_buf_printf(&b, "*%s*", ps_alert_kind_name(ev->kind));
  if (ev->host) {
    ps_buf_puts(&b, " on ");
    slack_escape(&b, ev->host);
  }
  ps_buf_puts(&b, ": ");
  slack_escape(&b, ev->text);
  for (size_t i = 0; i < ev->nmetrics; i++) {
    const ps_alert_metric *m = &ev->metrics[i];
    ps_buf_puts(&b, "\n\xE2\x80\xA2 ");
    slack_escape(&b, m->metric);
    if (m->have_value && m->have_baseline)
      ps_buf_printf(&b, ": %.6g against %.6g", m->value, m->baseline);
    if (m->have_change_pct)
      ps_buf_printf(&b, " (%+.1f %%)", m->change_pct);
  }
  char *text = NULL;
  cJSON *o = cJSON_CreateObject();
  if (o && b.data && cJSON_AddStringToObject(o, "text", b.data))
    text = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  ps_buf_free(&b);
  return text;
}

/* --- reading saved lists -------------------------------------------------------- */

static const char *type_word(const cJSON *v) {
  if (cJSON_IsString(v))
    return "a string";
  if (cJSON_IsNumber(v))
    return "a number";
  if (cJSON_IsBool(v))
    return "a boolean";
  if (cJSON_IsNull(v))
    return "null";
  if (cJSON_IsObject(v))
    return "an object";
  return "not JSON";
}

const cJSON *ps_alert_recall_tail(const cJSON *arr, size_t cap, ps_alert_recall *r) {
  if (!arr)
    return NULL;
  if (!cJSON_IsArray(arr)) {
    r->wrong_type = type_word(arr);
    return NULL;
  }
  /* cJSON keeps the last element as the first one's `prev`: the walk back
   * touches only the elements that are kept */
  const cJSON *first = arr->child;
  if (!first)
    return NULL;
  const cJSON *e = first->prev;
  size_t kept = 1;
  while (e != first && kept < cap) {
    e = e->prev;
    kept++;
  }
  for (const cJSON *o = first; o != e; o = o->next)
    r->over++;
  return cap ? e : NULL;
}

int ps_alert_recall_say(ps_buf *out, const char *name, size_t cap, const ps_alert_recall *r) {
  if (r->wrong_type)
    return ps_buf_printf(out, "; %s: %s, not a list (ignored)", name, r->wrong_type) == 0;
  if (!r->over && !r->bad)
    return 0;
  ps_buf_printf(out, "; %s:", name);
  if (r->over)
    ps_buf_printf(out, " %zu over its cap of %zu (the oldest)%s", r->over, cap,
                  r->bad ? "," : "");
  if (r->bad)
    ps_buf_printf(out, " %zu unreadable", r->bad);
  return 1;
}
