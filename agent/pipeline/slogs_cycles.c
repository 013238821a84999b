/*
 * pipeline/slogs_cycles.c: the finished cycles of each run folder's
 * stages, which a stage's growth per cycle divides by, counted from the
 * tapped loadgen_cycle points and saved with the stages
 * (docs/loadgen.md "Slogs"). See slogs_private.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slogs_private.h"

static size_t seen_hash(uint64_t id, int stage, size_t nslots) {
  uint64_t h = (id ^ ((uint64_t)(unsigned)stage << 56)) * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 32) & (nslots - 1);
}

/* The slot of (id, stage): where it is, or the empty one it would take. */
static uint32_t *seen_slot(const pl_slog_cyc *c, uint64_t id, int stage) {
  size_t i = seen_hash(id, stage, c->nslots);
  while (c->slot[i]) {
    const pl_slog_seen *s = &c->seen[c->slot[i] - 1];
    if (s->id == id && s->stage == stage)
      break;
    i = (i + 1) & (c->nslots - 1);
  }
  return &c->slot[i];
}

/* seen grown to `cap`, and its index to 2 * cap (a power of two). */
static int seen_grow(pl_slog_cyc *c, size_t cap) {
  uint32_t *slot = calloc(2 * cap, sizeof *slot);
  pl_slog_seen *grown = slot ? realloc(c->seen, cap * sizeof *grown) : NULL;
  if (!grown) {
    free(slot);
    return -1;
  }
  c->seen = grown;
  c->seen_cap = cap;
  free(c->slot);
  c->slot = slot;
  c->nslots = 2 * cap;
  for (size_t k = 0; k < c->nseen; k++)
    *seen_slot(c, c->seen[k].id, c->seen[k].stage) = (uint32_t)(k + 1);
  return 0;
}

void pl_slogs_cycle_ids_forget(pl_slog_cyc *c) {
  free(c->seen);
  free(c->slot);
  c->seen = NULL;
  c->slot = NULL;
  c->nseen = c->seen_cap = c->nslots = 0;
}

/* Remembers the cycle `id` of `stage`; returns whether it was new. */
static int cycle_remember(pl_slog_cyc *c, int stage, uint64_t id) {
  if (c->nslots && *seen_slot(c, id, stage))
    return 0;
  if (c->nseen == PL_SLOGS_CYCLES_MAX)
    return 0; /* said nowhere: no loadgen run has that many */
  if (c->nseen == c->seen_cap && seen_grow(c, c->seen_cap ? 2 * c->seen_cap : 64) < 0)
    return 0;
  c->seen[c->nseen++] = (pl_slog_seen){id, stage};
  *seen_slot(c, id, stage) = (uint32_t)c->nseen;
  return 1;
}

/* Counts the cycle `id` of `stage` once; returns whether it was new. A
 * folder whose ids were let go counts what comes as new. */
int pl_slogs_cycle_count(pl_slog_cyc *c, int stage, uint64_t id) {
  if (!cycle_remember(c, stage, id) || c->n[stage] >= PL_SLOGS_CYCLES_MAX)
    return 0;
  c->n[stage]++;
  return 1;
}

pl_slog_cyc *pl_slogs_cycles_of(pl_slog_cyc **head, const char *folder, int make) {
  for (pl_slog_cyc *c = *head; c; c = c->next)
    if (strcmp(c->folder, folder) == 0)
      return c;
  if (!make)
    return NULL;
  pl_slog_cyc *c = calloc(1, sizeof *c);
  if (!c || !(c->folder = strdup(folder))) {
    free(c);
    return NULL;
  }
  pl_slog_cyc **end = head; /* as the done list: in the order saved */
  size_t n = 0;
  for (; *end; n++)
    end = &(*end)->next;
  *end = c;
  if (n >= PL_SLOGS_CYCLE_FOLDERS_MAX) { /* the oldest goes */
    pl_slog_cyc *old = *head;
    *head = old->next;
    free(old->folder);
    pl_slogs_cycle_ids_forget(old);
    free(old);
  }
  return c;
}


/* "cycles": [{"folder": F, "counts": [[stage, n], ...], "seen": [[stage,
 * "id"], ...]}, ...]: what does not read as such is left out. */
size_t pl_slogs_cycles_from_json(pl_slog_cyc **head, const cJSON *cycles) {
  const cJSON *folders = cJSON_IsArray(cycles) ? cycles : NULL;
  size_t dropped = cycles && !folders;
  const cJSON *e;
  cJSON_ArrayForEach(e, folders) {
    const char *folder = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "folder"));
    const cJSON *seen = cJSON_GetObjectItemCaseSensitive(e, "seen"), *x;
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(e, "counts");
    pl_slog_cyc *cy = folder && folder[0] && cJSON_IsArray(counts)
                          ? pl_slogs_cycles_of(head, folder, 1)
                          : NULL;
    const cJSON *ids = cy && cJSON_IsArray(seen) ? seen : NULL, *list = cy ? counts : NULL;
    dropped += !cy;
    cJSON_ArrayForEach(x, list) {
      const cJSON *st = cJSON_GetArrayItem(x, 0), *k = cJSON_GetArrayItem(x, 1);
      if (cJSON_IsNumber(st) && st->valuedouble >= 0 && st->valuedouble < PS_SLOG_MAX_STAGES &&
          cJSON_IsNumber(k) && k->valuedouble > 0 && k->valuedouble <= PL_SLOGS_CYCLES_MAX)
        cy->n[(int)st->valuedouble] = (int64_t)k->valuedouble;
    }
    cJSON_ArrayForEach(x, ids) {
      const cJSON *st = cJSON_GetArrayItem(x, 0);
      const char *id = cJSON_GetStringValue(cJSON_GetArrayItem(x, 1));
      char *end = NULL;
      uint64_t v = id ? strtoull(id, &end, 16) : 0;
      if (cJSON_IsNumber(st) && st->valuedouble >= 0 && st->valuedouble < PS_SLOG_MAX_STAGES &&
          end && end != id && !*end)
        cycle_remember(cy, (int)st->valuedouble, v);
    }
  }
  return dropped;
}

/* One seen id as [stage,"%016x"], written by hand: a backfill's saves
 * print tens of thousands of them, and sprintf was most of a save. */
static char *put_seen(char *p, int stage, uint64_t id) {
  static const char hex[] = "0123456789abcdef";
  char digits[12];
  int nd = 0;
  unsigned s = stage < 0 ? 0 : (unsigned)stage; /* stages are 0..PS_SLOG_MAX_STAGES */
  do
    digits[nd++] = (char)('0' + s % 10);
  while ((s /= 10) && nd < (int)sizeof digits);
  *p++ = '[';
  while (nd)
    *p++ = digits[--nd];
  *p++ = ',';
  *p++ = '"';
  for (int k = 60; k >= 0; k -= 4)
    *p++ = hex[(id >> k) & 0xf];
  *p++ = '"';
  *p++ = ']';
  return p;
}

/* The ids as [[stage, "hex"], ...], printed here: a tree of three nodes
 * per id, 84,000 ids while a backfill's six runs wait for their slogs,
 * was most of each save's CPU (docs/benchmarks.md). Hex, for a double
 * would round the id. */
static char *seen_text(const pl_slog_cyc *c) {
  char *text = malloc(2 + c->nseen * 40); /* an entry is at most 1 + 13 + 20 + 2 */
  if (!text)
    return NULL;
  char *p = text;
  *p++ = '[';
  for (size_t i = 0; i < c->nseen; i++) {
    if (i)
      *p++ = ',';
    p = put_seen(p, c->seen[i].stage, c->seen[i].id);
  }
  *p++ = ']';
  *p = 0;
  return text;
}

cJSON *pl_slogs_cycles_to_json(const pl_slog_cyc *head) {
  cJSON *cycles = cJSON_CreateArray();
  for (const pl_slog_cyc *c = head; c && cycles; c = c->next) {
    cJSON *e = cJSON_CreateObject(), *counts = cJSON_AddArrayToObject(e, "counts");
    cJSON_AddStringToObject(e, "folder", c->folder);
    for (int k = 0; counts && k < PS_SLOG_MAX_STAGES; k++)
      if (c->n[k]) {
        cJSON *x = cJSON_CreateArray();
        cJSON_AddItemToArray(x, cJSON_CreateNumber(k));
        cJSON_AddItemToArray(x, cJSON_CreateNumber((double)c->n[k]));
        cJSON_AddItemToArray(counts, x);
      }
    char *seen = c->nseen ? seen_text(c) : NULL;
    if (seen)
      cJSON_AddRawToObject(e, "seen", seen);
    free(seen);
    cJSON_AddItemToArray(cycles, e);
  }
  return cycles;
}

void pl_slogs_cycles_free(pl_slog_cyc **head) {
  while (*head) {
    pl_slog_cyc *c = *head;
    *head = c->next;
    free(c->folder);
    pl_slogs_cycle_ids_forget(c);
    free(c);
  }
}
