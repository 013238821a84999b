/*
 * slogs_private.h: what the parts of the slog reader share (slogs.c: the
 * stages and their reading; slogs_cycles.c: the run folders' finished
 * cycles). Not a contract for anyone else: the stage's own is
 * include/pipeline/slogs.h.
 */
#ifndef PS_PIPELINE_SLOGS_PRIVATE_H
#define PS_PIPELINE_SLOGS_PRIVATE_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "input/feed_slog.h"
#include "pipeline/slogs.h"

/* Finished cycles per run folder and stage, from the tapped points, each
 * cycle once by its task, seq and time: perf.jsonl is read once, so the
 * counts are saved with the stages (a stage read after a restart still
 * knows its cycles), and a perf-finish read again from its last commit
 * after a crash counts no cycle twice. */
#define PL_SLOGS_CYCLES_MAX 65536 /* per folder: far more than a night's stages have */
/* The counts of the newest run folders are kept (a backfill of as many
 * runs reads their perf.jsonl before their slogs); the cycles' ids only
 * while one of the folder's stages is being read: a full-size run's 3,500
 * cycles are 55 kB of ids, let go when the state is saved after its last
 * stage was read. */
#define PL_SLOGS_CYCLE_FOLDERS_MAX 256
typedef struct pl_slog_seen {
  uint64_t id;
  int stage;
} pl_slog_seen;
typedef struct pl_slog_cyc {
  struct pl_slog_cyc *next;
  char *folder;
  int64_t n[PS_SLOG_MAX_STAGES];
  pl_slog_seen *seen;
  size_t nseen, seen_cap;
  /* seen's index: open addressing, each slot 1 + an index into seen (0:
   * empty), sized at twice seen_cap; a scan of seen per tapped cycle made
   * a backfill's cycle counting quadratic (docs/benchmarks.md) */
  uint32_t *slot;
  size_t nslots;
} pl_slog_cyc;


/* The cycles part keeps its list (pl_slogs.cycles) and knows nothing else
 * of the stage: slogs.c hands it the list and decides what to let go (a
 * folder none of whose stages is being read). */

/* The folder's cycles (NULL: none, or out of memory when `make`). */
pl_slog_cyc *pl_slogs_cycles_of(pl_slog_cyc **head, const char *folder, int make);
/* Counts the cycle `id` of `stage` once; returns whether it was new. */
int pl_slogs_cycle_count(pl_slog_cyc *c, int stage, uint64_t id);
/* Lets the folder's cycle ids go, keeping its counts: its stages were all
 * read, and a cycle tapped later counts as new. */
void pl_slogs_cycle_ids_forget(pl_slog_cyc *c);
/* The section's "cycles" (state section `slogs`), and back. */
cJSON *pl_slogs_cycles_to_json(const pl_slog_cyc *head);
/* Returns how many damaged entries were left out. */
size_t pl_slogs_cycles_from_json(pl_slog_cyc **head, const cJSON *cycles);
void pl_slogs_cycles_free(pl_slog_cyc **head);

#endif
