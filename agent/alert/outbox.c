/*
 * alert/outbox.c: pending events and their retries (include/alert/outbox.h).
 *
 * Design
 * - Entries are separately allocated and the array holds pointers, so an
 *   attempt in flight keeps a valid pointer while other entries come and
 *   go. An entry with an attempt in flight is never dropped or removed:
 *   its channel is still pending.
 * - The event's time is saved as a decimal string of microseconds: the
 *   perfship_alert point sent again after a restart must land on the same
 *   timestamp, and a JSON number goes through a double, which cJSON prints
 *   with 15 digits when they look close enough.
 * - Nothing leaves before it is saved (docs/alerts.md "Delivered once,
 *   never lost"): a new entry is `unsaved` until ps_outbox_saved(), and no
 *   channel is offered it before; read back from the state file, it was.
 */
#include "alert/outbox.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS (5 * 60 * 1000)

void ps_outbox_init(ps_outbox *o, const char *const *names, size_t nchannels, size_t max) {
  memset(o, 0, sizeof *o);
  o->nchannels = nchannels < PS_OUTBOX_MAX_CHANNELS ? nchannels : PS_OUTBOX_MAX_CHANNELS;
  for (size_t i = 0; i < o->nchannels; i++)
    o->names[i] = names[i];
  o->max = max ? max : PS_OUTBOX_MAX;
}

int64_t ps_outbox_backoff_ms(unsigned attempts) {
  int64_t d = BACKOFF_FIRST_MS;
  for (unsigned i = 1; i < attempts && d < BACKOFF_MAX_MS; i++)
    d *= 2;
  return d < BACKOFF_MAX_MS ? d : BACKOFF_MAX_MS;
}

static void remove_at(ps_outbox *o, size_t i) {
  ps_alert_event_free(&o->v[i]->ev);
  free(o->v[i]);
  memmove(&o->v[i], &o->v[i + 1], (o->n - i - 1) * sizeof *o->v);
  o->n--;
}

static int append(ps_outbox *o, ps_outbox_entry *e) {
  if (o->n == o->max) {
    size_t i = 0;
    while (i < o->n && o->v[i]->busy)
      i++;
    if (i == o->n)
      return -ENOSPC;
    remove_at(o, i);
    o->dropped++;
  }
  if (o->n == o->cap) {
    size_t cap = o->cap ? o->cap * 2 : 16;
    ps_outbox_entry **v = realloc(o->v, cap * sizeof *v);
    if (!v)
      return -ENOMEM;
    o->v = v;
    o->cap = cap;
  }
  o->v[o->n++] = e;
  return 0;
}

ps_outbox_entry *ps_outbox_add(ps_outbox *o, ps_alert_event *ev, unsigned pending,
                               int64_t now_ms) {
  ps_outbox_entry *e = calloc(1, sizeof *e);
  if (!e)
    return NULL;
  e->pending = pending & ((1u << o->nchannels) - 1u);
  e->unsaved = 1;
  for (size_t c = 0; c < PS_OUTBOX_MAX_CHANNELS; c++)
    e->next_ms[c] = now_ms;
  ps_alert_event_move(&e->ev, ev);
  if (append(o, e) < 0) {
    ps_alert_event_move(ev, &e->ev);
    free(e);
    return NULL;
  }
  return e;
}

ps_outbox_entry *ps_outbox_due(ps_outbox *o, unsigned channel, int64_t now_ms, int once) {
  unsigned bit = 1u << channel;
  for (size_t i = 0; i < o->n; i++) {
    ps_outbox_entry *e = o->v[i];
    if (!(e->pending & bit) || (e->busy & bit) || e->unsaved)
      continue;
    if (once ? !(e->tried & bit) : e->next_ms[channel] <= now_ms)
      return e;
  }
  return NULL;
}

void ps_outbox_begin(ps_outbox_entry *e, unsigned channel) {
  e->busy |= 1u << channel;
  e->tried |= 1u << channel;
}

int ps_outbox_result(ps_outbox *o, ps_outbox_entry *e, unsigned channel, int delivered,
                     int64_t now_ms) {
  unsigned bit = 1u << channel;
  e->busy &= ~bit;
  if (delivered) {
    e->pending &= ~bit;
  } else {
    e->attempts[channel]++;
    e->next_ms[channel] = now_ms + ps_outbox_backoff_ms(e->attempts[channel]);
  }
  if (e->pending)
    return 0;
  for (size_t i = 0; i < o->n; i++)
    if (o->v[i] == e) {
      remove_at(o, i);
      return 1;
    }
  return 0;
}

int64_t ps_outbox_next_ms(const ps_outbox *o, unsigned mask) {
  int64_t best = INT64_MAX;
  for (size_t i = 0; i < o->n; i++)
    for (size_t c = 0; c < o->nchannels; c++) {
      unsigned bit = 1u << c;
      const ps_outbox_entry *e = o->v[i];
      if ((mask & bit) && (e->pending & bit) && !(e->busy & bit) && !e->unsaved &&
          e->next_ms[c] < best)
        best = e->next_ms[c];
    }
  return best;
}

size_t ps_outbox_untried(const ps_outbox *o, unsigned mask) {
  size_t n = 0;
  for (size_t i = 0; i < o->n; i++)
    n += !o->v[i]->unsaved && (o->v[i]->pending & mask & ~o->v[i]->tried) != 0;
  return n;
}

void ps_outbox_saved(ps_outbox *o) {
  for (size_t i = 0; i < o->n; i++)
    o->v[i]->unsaved = 0;
}

size_t ps_outbox_unsaved(const ps_outbox *o) {
  size_t n = 0;
  for (size_t i = 0; i < o->n; i++)
    n += o->v[i]->unsaved != 0;
  return n;
}

size_t ps_outbox_failed(const ps_outbox *o, unsigned mask) {
  size_t n = 0;
  for (size_t i = 0; i < o->n; i++)
    n += (o->v[i]->pending & mask & o->v[i]->tried & ~o->v[i]->busy) != 0;
  return n;
}

size_t ps_outbox_keep_channels(ps_outbox *o, unsigned mask) {
  size_t gone = 0;
  for (size_t i = o->n; i > 0; i--) {
    ps_outbox_entry *e = o->v[i - 1];
    e->pending &= mask | e->busy;
    if (!e->pending) {
      remove_at(o, i - 1);
      gone++;
    }
  }
  return gone;
}

cJSON *ps_outbox_to_cjson(const ps_outbox *o) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < o->n; i++) {
    const ps_outbox_entry *e = o->v[i];
    cJSON *item = cJSON_CreateObject();
    cJSON *ev = ps_alert_event_to_cjson(&e->ev);
    cJSON *pending = cJSON_CreateArray();
    cJSON *attempts = cJSON_CreateObject();
    if (!item || !ev || !pending || !attempts) {
      cJSON_Delete(item);
      cJSON_Delete(ev);
      cJSON_Delete(pending);
      cJSON_Delete(attempts);
      break;
    }
    for (size_t c = 0; c < o->nchannels; c++) {
      if (!(e->pending & (1u << c)))
        continue;
      cJSON_AddItemToArray(pending, cJSON_CreateString(o->names[c]));
      if (e->attempts[c])
        cJSON_AddNumberToObject(attempts, o->names[c], e->attempts[c]);
    }
    cJSON_AddItemToObject(item, "alert", ev);
    char us[32];
    snprintf(us, sizeof us, "%lld", (long long)(e->ev.time_ns / 1000));
    cJSON_AddStringToObject(item, "time_us", us);
    cJSON_AddItemToObject(item, "pending", pending);
    cJSON_AddItemToObject(item, "attempts", attempts);
    cJSON_AddItemToArray(arr, item);
  }
  return arr;
}

/* Microseconds since 1970 as saved: digits only, before the year 2262. */
static int read_us(const cJSON *t, int64_t *out) {
  if (!cJSON_IsString(t) || !t->valuestring[0] || strlen(t->valuestring) > 16 ||
      strspn(t->valuestring, "0123456789") != strlen(t->valuestring))
    return -EINVAL;
  long long v = strtoll(t->valuestring, NULL, 10);
  if (v > 9000000000000000LL)
    return -ERANGE;
  *out = v;
  return 0;
}

static int channel_of(const ps_outbox *o, const char *name) {
  for (size_t c = 0; c < o->nchannels; c++)
    if (strcmp(o->names[c], name) == 0)
      return (int)c;
  return -1;
}

void ps_outbox_from_cjson(ps_outbox *o, const cJSON *arr, int64_t now_ms, ps_alert_recall *r) {
  ps_alert_recall ignored = {0};
  if (!r)
    r = &ignored;
  size_t skip = 0;
  for (const cJSON *item = ps_alert_recall_tail(arr, o->max, r); item; item = item->next) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(item, "time_us");
    const cJSON *pending = cJSON_GetObjectItemCaseSensitive(item, "pending");
    const cJSON *attempts = cJSON_GetObjectItemCaseSensitive(item, "attempts");
    ps_alert_event ev;
    int64_t us = 0;
    if (read_us(t, &us) < 0 || !cJSON_IsArray(pending) ||
        ps_alert_event_from_cjson(&ev, cJSON_GetObjectItemCaseSensitive(item, "alert")) < 0) {
      skip++;
      continue;
    }
    ev.time_ns = us * 1000;
    unsigned mask = 0;
    const cJSON *name;
    cJSON_ArrayForEach(name, pending) {
      int c = cJSON_IsString(name) ? channel_of(o, name->valuestring) : -1;
      if (c >= 0)
        mask |= 1u << c;
    }
    ps_outbox_entry *e = mask ? ps_outbox_add(o, &ev, mask, now_ms) : NULL;
    if (!e) {
      ps_alert_event_free(&ev);
      skip++;
      continue;
    }
    e->unsaved = 0; /* it was read from the saved state */
    for (size_t c = 0; c < o->nchannels; c++) {
      const cJSON *a = cJSON_GetObjectItemCaseSensitive(attempts, o->names[c]);
      if (cJSON_IsNumber(a) && a->valuedouble > 0 && a->valuedouble < 1e6)
        e->attempts[c] = (unsigned)a->valuedouble;
    }
  }
  r->bad += skip;
}

void ps_outbox_free(ps_outbox *o) {
  while (o->n)
    remove_at(o, o->n - 1);
  free(o->v);
  o->v = NULL;
  o->cap = 0;
}
