/*
 * pipeline/gens: the configurations still in use.
 *
 * Contract
 * - Files and their parsers point into their configuration's sources, so a
 *   configuration replaced by a reload lives until its last file is freed.
 *   A generation counts the files reading with its sources.
 * - The first generation is the caller's configuration (never freed here);
 *   a reload's are owned and freed once unused and no longer current.
 * - pl_gens_of() finds the generation whose sources array holds `src`.
 */
#ifndef PS_PIPELINE_GENS_H
#define PS_PIPELINE_GENS_H

#include <stddef.h>

#include "core/config.h"

typedef struct pl_gen {
  struct pl_gen *next;
  ps_config *cfg;
  size_t files; /* files whose source points into cfg */
  int owned;    /* loaded by a reload; the first belongs to the caller */
} pl_gen;

typedef struct pl_gens {
  pl_gen boot;    /* the caller's configuration */
  pl_gen *head;   /* every configuration still referenced, the current first */
} pl_gens;

void pl_gens_init(pl_gens *g, ps_config *boot);
/* Makes `cfg` (owned from now on) the current configuration. -ENOMEM: the
 * caller still owns it. */
int pl_gens_push(pl_gens *g, ps_config *cfg);
ps_config *pl_gens_current(const pl_gens *g);
pl_gen *pl_gens_of(pl_gens *g, const ps_source_cfg *src);
/* A file starts / stops reading with a source of `gen` (NULL is fine). */
void pl_gens_hold(pl_gen *gen);
void pl_gens_release(pl_gens *g, pl_gen *gen);
void pl_gens_free(pl_gens *g);

#endif
