/*
 * gens.c: configurations kept alive while files read with their sources.
 * See include/pipeline/gens.h.
 */
#include "pipeline/gens.h"

#include <errno.h>
#include <stdlib.h>

void pl_gens_init(pl_gens *g, ps_config *boot) {
  g->boot.next = NULL;
  g->boot.cfg = boot;
  g->boot.files = 0;
  g->boot.owned = 0;
  g->head = &g->boot;
}

static void gen_free(pl_gen *gen) {
  if (gen && gen->owned) {
    ps_config_free(gen->cfg);
    free(gen->cfg);
    free(gen);
  }
}

/* A replaced configuration goes once no file reads with it any more. */
static void release_unused(pl_gens *g, pl_gen *gen) {
  if (!gen || gen->files || gen == g->head)
    return;
  for (pl_gen **pp = &g->head; *pp; pp = &(*pp)->next)
    if (*pp == gen) {
      *pp = gen->next;
      break;
    }
  gen_free(gen);
}

int pl_gens_push(pl_gens *g, ps_config *cfg) {
  pl_gen *gen = calloc(1, sizeof *gen);
  if (!gen)
    return -ENOMEM;
  gen->cfg = cfg;
  gen->owned = 1;
  gen->next = g->head;
  g->head = gen;
  release_unused(g, gen->next);
  return 0;
}

ps_config *pl_gens_current(const pl_gens *g) { return g->head->cfg; }

pl_gen *pl_gens_of(pl_gens *g, const ps_source_cfg *src) {
  for (pl_gen *gen = g->head; gen; gen = gen->next)
    if (src >= gen->cfg->sources && src < gen->cfg->sources + gen->cfg->nsources)
      return gen;
  return NULL;
}

void pl_gens_hold(pl_gen *gen) {
  if (gen)
    gen->files++;
}

void pl_gens_release(pl_gens *g, pl_gen *gen) {
  if (!gen)
    return;
  gen->files--;
  release_unused(g, gen);
}

void pl_gens_free(pl_gens *g) {
  for (pl_gen *gen = g->head, *next; gen; gen = next) {
    next = gen->next;
    gen_free(gen);
  }
  g->head = NULL;
}
