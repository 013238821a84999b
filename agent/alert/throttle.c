/*
 * alert/throttle.c: min_interval_s per (event, key)
 * (include/alert/throttle.h). A flat array searched linearly: events are
 * rare (a few a day) and the array is bounded; a saved list is read from
 * its newest PS_ALERT_THROTTLE_MAX only, so reading one of any length
 * costs at most that many searches of at most that many entries.
 */
#include "alert/throttle.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

void ps_alert_throttle_init(ps_alert_throttle *t) { memset(t, 0, sizeof *t); }

static ps_alert_throttle_entry *find(ps_alert_throttle *t, ps_alert_kind kind,
                                     const char *key) {
  for (size_t i = 0; i < t->n; i++)
    if (t->v[i].kind == kind && strcmp(t->v[i].key, key) == 0)
      return &t->v[i];
  return NULL;
}

static void remove_at(ps_alert_throttle *t, size_t i) {
  free(t->v[i].key);
  memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof *t->v);
  t->n--;
}

static ps_alert_throttle_entry *add(ps_alert_throttle *t, ps_alert_kind kind,
                                    const char *key, int64_t last_ns) {
  if (t->n == PS_ALERT_THROTTLE_MAX) {
    size_t oldest = 0;
    for (size_t i = 1; i < t->n; i++)
      if (t->v[i].last_ns < t->v[oldest].last_ns)
        oldest = i;
    remove_at(t, oldest);
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 16;
    ps_alert_throttle_entry *v = realloc(t->v, cap * sizeof *v);
    if (!v)
      return NULL;
    t->v = v;
    t->cap = cap;
  }
  char *k = strdup(key);
  if (!k)
    return NULL;
  ps_alert_throttle_entry *e = &t->v[t->n++];
  *e = (ps_alert_throttle_entry){kind, k, last_ns, 0};
  return e;
}

int ps_alert_throttle_pass(ps_alert_throttle *t, ps_alert_kind kind, const char *key,
                           int64_t now_ns, int64_t interval_s, uint64_t *report) {
  *report = 0;
  ps_alert_throttle_entry *e = find(t, kind, key ? key : "");
  if (e && interval_s > 0 && now_ns >= e->last_ns &&
      now_ns - e->last_ns < interval_s * 1000000000LL) {
    e->suppressed++;
    return 0;
  }
  if (!e) {
    if (interval_s <= 0)
      return 1; /* nothing to remember */
    return add(t, kind, key ? key : "", now_ns) ? 1 : -ENOMEM;
  }
  *report = e->suppressed;
  e->suppressed = 0;
  e->last_ns = now_ns;
  return 1;
}

void ps_alert_throttle_prune(ps_alert_throttle *t, int64_t now_ns, int64_t interval_s) {
  for (size_t i = t->n; i > 0; i--) {
    const ps_alert_throttle_entry *e = &t->v[i - 1];
    if (!e->suppressed && (interval_s <= 0 || now_ns - e->last_ns > interval_s * 1000000000LL))
      remove_at(t, i - 1);
  }
}

cJSON *ps_alert_throttle_to_cjson(const ps_alert_throttle *t) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < t->n; i++) {
    cJSON *o = cJSON_CreateObject();
    if (!o)
      break;
    cJSON_AddStringToObject(o, "event", ps_alert_kind_name(t->v[i].kind));
    cJSON_AddStringToObject(o, "key", t->v[i].key);
    cJSON_AddNumberToObject(o, "last_ns", (double)t->v[i].last_ns);
    cJSON_AddNumberToObject(o, "suppressed", (double)t->v[i].suppressed);
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

void ps_alert_throttle_from_cjson(ps_alert_throttle *t, const cJSON *arr, ps_alert_recall *r) {
  ps_alert_recall ignored = {0};
  if (!r)
    r = &ignored;
  for (const cJSON *o = ps_alert_recall_tail(arr, PS_ALERT_THROTTLE_MAX, r); o; o = o->next) {
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "event");
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
    const cJSON *last = cJSON_GetObjectItemCaseSensitive(o, "last_ns");
    const cJSON *sup = cJSON_GetObjectItemCaseSensitive(o, "suppressed");
    ps_alert_kind kind;
    if (!cJSON_IsString(ev) || ps_alert_kind_from_name(ev->valuestring, &kind) < 0 ||
        !cJSON_IsString(key) || !cJSON_IsNumber(last) || !isfinite(last->valuedouble) ||
        fabs(last->valuedouble) > 9e18) {
      r->bad++;
      continue;
    }
    if (find(t, kind, key->valuestring))
      continue; /* a repeat: the first is kept */
    ps_alert_throttle_entry *e = add(t, kind, key->valuestring, (int64_t)last->valuedouble);
    if (!e)
      return;
    if (cJSON_IsNumber(sup) && sup->valuedouble > 0 && sup->valuedouble < 1e18)
      e->suppressed = (uint64_t)sup->valuedouble;
  }
}

void ps_alert_throttle_free(ps_alert_throttle *t) {
  for (size_t i = 0; i < t->n; i++)
    free(t->v[i].key);
  free(t->v);
  memset(t, 0, sizeof *t);
}
