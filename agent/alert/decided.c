/*
 * alert/decided.c: ids already decided (include/alert/decided.h). Kept in
 * the order they were added, so the oldest are dropped first; searched
 * linearly (a few thousand 33-byte ids, looked up once per event); a saved
 * list is read from its newest PS_ALERT_DECIDED_MAX only, so a list of any
 * length costs one walk and at most that many searches.
 */
#include "alert/decided.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

void ps_alert_decided_init(ps_alert_decided *l) { memset(l, 0, sizeof *l); }

int ps_alert_decided_has(const ps_alert_decided *l, const char *id) {
  for (size_t i = l->n; i > 0; i--)
    if (strcmp(l->v[i - 1].id, id) == 0)
      return 1;
  return 0;
}

static void drop_front(ps_alert_decided *l, size_t k) {
  memmove(l->v, l->v + k, (l->n - k) * sizeof *l->v);
  l->n -= k;
}

int ps_alert_decided_add(ps_alert_decided *l, const char *id, int64_t now_s) {
  if (!id || strlen(id) != PS_ALERT_ID_LEN)
    return -EINVAL;
  if (ps_alert_decided_has(l, id))
    return 0;
  if (l->n == PS_ALERT_DECIDED_MAX)
    drop_front(l, 1);
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    ps_alert_decided_entry *v = realloc(l->v, cap * sizeof *v);
    if (!v)
      return -ENOMEM;
    l->v = v;
    l->cap = cap;
  }
  memcpy(l->v[l->n].id, id, PS_ALERT_ID_LEN + 1);
  l->v[l->n].at_s = now_s;
  l->n++;
  return 0;
}

void ps_alert_decided_prune(ps_alert_decided *l, int64_t now_s, int64_t keep_s) {
  size_t k = 0;
  while (k < l->n && now_s - l->v[k].at_s > keep_s)
    k++;
  drop_front(l, k);
}

cJSON *ps_alert_decided_to_cjson(const ps_alert_decided *l) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < l->n; i++) {
    cJSON *o = cJSON_CreateObject();
    if (!o)
      break;
    cJSON_AddStringToObject(o, "id", l->v[i].id);
    cJSON_AddNumberToObject(o, "at", (double)l->v[i].at_s);
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

void ps_alert_decided_from_cjson(ps_alert_decided *l, const cJSON *arr, ps_alert_recall *r) {
  ps_alert_recall ignored = {0};
  if (!r)
    r = &ignored;
  for (const cJSON *o = ps_alert_recall_tail(arr, PS_ALERT_DECIDED_MAX, r); o; o = o->next) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(o, "at");
    if (!cJSON_IsString(id) || !cJSON_IsNumber(at) || !isfinite(at->valuedouble) ||
        fabs(at->valuedouble) > 1e15 || strlen(id->valuestring) != PS_ALERT_ID_LEN) {
      r->bad++;
      continue;
    }
    if (ps_alert_decided_add(l, id->valuestring, (int64_t)at->valuedouble) == -ENOMEM)
      return;
  }
}

void ps_alert_decided_free(ps_alert_decided *l) {
  free(l->v);
  memset(l, 0, sizeof *l);
}
