/*
 * pipeline/slogs_cycles.c: the finished cycles of each run folder's
 * stages, which a stage's growth per cycle divides by, counted from the
 * tapped loadgen_cycle points and saved with the stages
 * (docs/loadgen.md "Slogs"). See slogs_private.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slogs_private.h"

/* Remembers the cycle `id` of `stage`; returns whether it was new. */
static int cycle_remember(pl_slog_cyc *c, int stage, uint64_t id) {
  for (size_t i = 0; i < c->nseen; i++)
    if (c->seen[i].id == id && c->seen[i].stage == stage)
      return 0;
  if (c->nseen == PL_SLOGS_CYCLES_MAX)
    return 0; /* said nowhere: no loadgen run has that many */
  if (c->nseen == c->seen_cap) {
    size_t cap = c->seen_cap ? 2 * c->seen_cap : 64;
    pl_slog_seen *grown = realloc(c->seen, cap * sizeof *grown);
    if (!grown)
      return 0;
    c->seen = grown;
    c->seen_cap = cap;
  }
  c->seen[c->nseen++] = (pl_slog_seen){id, stage};
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

pl_slog_cyc *pl_slogs_cycles_of(pl_slogs *t, const char *folder, int make) {
  for (pl_slog_cyc *c = t->cycles; c; c = c->next)
    if (strcmp(c->folder, folder) == 0)
      return c;
  if (!make)
    return NULL;
  pl_slog_cyc *c = calloc(1, sizeof *c);
  if (!c || !(c->folder = strdup(folder))) {
    free(c);
    return NULL;
  }
  pl_slog_cyc **end = &t->cycles; /* as the done list: in the order saved */
  size_t n = 0;
  for (; *end; n++)
    end = &(*end)->next;
  *end = c;
  if (n >= PL_SLOGS_CYCLE_FOLDERS_MAX) { /* the oldest goes */
    pl_slog_cyc *old = t->cycles;
    t->cycles = old->next;
    free(old->folder);
    free(old->seen);
    free(old);
  }
  return c;
}


/* "cycles": [{"folder": F, "counts": [[stage, n], ...], "seen": [[stage,
 * "id"], ...]}, ...]: what does not read as such is left out. */
size_t pl_slogs_cycles_from_json(pl_slogs *t, const cJSON *cycles) {
  const cJSON *folders = cJSON_IsArray(cycles) ? cycles : NULL;
  size_t dropped = cycles && !folders;
  const cJSON *e;
  cJSON_ArrayForEach(e, folders) {
    const char *folder = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "folder"));
    const cJSON *seen = cJSON_GetObjectItemCaseSensitive(e, "seen"), *x;
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(e, "counts");
    pl_slog_cyc *cy = folder && folder[0] && cJSON_IsArray(counts) ? pl_slogs_cycles_of(t, folder, 1) : NULL;
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

cJSON *pl_slogs_cycles_to_json(pl_slogs *t) {
  cJSON *cycles = cJSON_CreateArray();
  for (pl_slog_cyc *c = t->cycles; c && cycles; c = c->next) {
    if (c->seen && !pl_slogs_folder_reading(t, c->folder)) { /* its stages were read */
      free(c->seen);
      c->seen = NULL;
      c->nseen = c->seen_cap = 0;
    }
    cJSON *e = cJSON_CreateObject(), *counts = cJSON_AddArrayToObject(e, "counts");
    cJSON_AddStringToObject(e, "folder", c->folder);
    for (int k = 0; counts && k < PS_SLOG_MAX_STAGES; k++)
      if (c->n[k]) {
        cJSON *x = cJSON_CreateArray();
        cJSON_AddItemToArray(x, cJSON_CreateNumber(k));
        cJSON_AddItemToArray(x, cJSON_CreateNumber((double)c->n[k]));
        cJSON_AddItemToArray(counts, x);
      }
    cJSON *seen = c->nseen ? cJSON_AddArrayToObject(e, "seen") : NULL;
    for (size_t i = 0; seen && i < c->nseen; i++) {
      char id[24];
      snprintf(id, sizeof id, "%016" PRIx64, c->seen[i].id); /* a double would round it */
      cJSON *x = cJSON_CreateArray();
      cJSON_AddItemToArray(x, cJSON_CreateNumber(c->seen[i].stage));
      cJSON_AddItemToArray(x, cJSON_CreateString(id));
      cJSON_AddItemToArray(seen, x);
    }
    cJSON_AddItemToArray(cycles, e);
  }
  return cycles;
}

void pl_slogs_cycles_free(pl_slogs *t) {
  while (t->cycles) {
    pl_slog_cyc *c = t->cycles;
    t->cycles = c->next;
    free(c->folder);
    free(c->seen);
    free(c);
  }
}
