/*
 * verdicts_sdheld.c: the per-block slog figures held as the slog reader
 * encodes them. See include/judging/verdicts_sdheld.h.
 *
 * Design
 * - Why: reading a run's block rows back (two answers of some 10 MB for a
 *   full-size run) was the largest thing a backfill asked of InfluxDB
 *   beyond its writes, and the agent's largest cost after the parsing
 *   (docs/benchmarks.md, "Backfill, fifth pass"). The
 *   rows pass through the agent anyway; held until the run's stage drift
 *   is judged, they cost the rows' size, not a round trip.
 * - The server stays the authority: the rows are used only when every
 *   stage the server holds slog figures of was read whole here, which the
 *   caller learns from the small reads it makes anyway. A restart, a
 *   stage read by an earlier start, a stage still being written: read
 *   back, as before.
 * - Completeness is proven, not assumed: a stage is whole when its final
 *   point's block count matches the blocks held, so a run held from the
 *   middle of a stage (pushed out by a bound and seen again, or taken by
 *   a read while a stage was being read) is read back instead.
 * - A block's vat rows come before its block row (formats/slog_reduce.c
 *   closes a block so), so a stage read again is seen at its first block
 *   row, after that block's vat rows: they are kept (open_vats), the
 *   older ones dropped.
 */
#include "judging/verdicts_sdheld.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define BLOCK "loadgen_slog_block"
#define BLOCK_VAT "loadgen_slog_block_vat"
#define STAGE "loadgen_slog_stage"

static int stage_number(const ps_point *p) { return ps_stage_number(ps_point_tag(p, "stage")); }

void jd_sdheld_run_free(jd_sdheld_run *r) {
  if (!r)
    return;
  jd_verdicts_sdblocks_free(&r->rows);
  free(r->run);
  free(r);
}

static size_t rows_of(const jd_sdheld_run *r) { return r->rows.nblocks + r->rows.nvats; }

static void unlink_run(jd_sdheld *h, jd_sdheld_run *r) {
  for (jd_sdheld_run **pp = &h->runs; *pp; pp = &(*pp)->next)
    if (*pp == r) {
      *pp = r->next;
      h->nruns--;
      h->nrows -= rows_of(r);
      return;
    }
}

/* Keeps nothing more of the run: its stage drift is read back. */
static void overflow(jd_sdheld *h, jd_sdheld_run *r) {
  h->nrows -= rows_of(r);
  jd_verdicts_sdblocks_free(&r->rows);
  r->overflow = 1;
}

/* Before a new run is held: the runs whose points stopped coming an hour
 * ago go (a run killed in the middle of a stage is never taken), and the
 * least lately touched one when the table is full. The list is kept
 * most lately touched first. */
static void make_room(jd_sdheld *h, uint64_t now_ms) {
  jd_sdheld_run **pp = &h->runs, *last = NULL;
  while (*pp) {
    jd_sdheld_run *r = *pp;
    if (now_ms - r->touched_ms >= JD_SDHELD_IDLE_MS) {
      unlink_run(h, r);
      jd_sdheld_run_free(r);
      continue; /* *pp is the next one now */
    }
    last = r;
    pp = &r->next;
  }
  if (h->nruns >= JD_SDHELD_RUNS && last) {
    unlink_run(h, last);
    jd_sdheld_run_free(last);
  }
}

static jd_sdheld_run *run_get(jd_sdheld *h, const char *name, uint64_t now_ms) {
  for (jd_sdheld_run **pp = &h->runs; *pp; pp = &(*pp)->next)
    if (strcmp((*pp)->run, name) == 0) {
      jd_sdheld_run *r = *pp;
      r->touched_ms = now_ms;
      *pp = r->next; /* to the front: a stage's points come together */
      r->next = h->runs;
      h->runs = r;
      return r;
    }
  make_room(h, now_ms);
  jd_sdheld_run *r = calloc(1, sizeof *r);
  if (!r || !(r->run = strdup(name))) {
    free(r);
    return NULL;
  }
  r->touched_ms = now_ms;
  r->next = h->runs;
  h->runs = r;
  h->nruns++;
  return r;
}

/* NULL past JD_SDHELD_MAX_STAGES: the run is then read back. */
static jd_sdheld_stage *stage_get(jd_sdheld_run *r, int n) {
  for (size_t i = 0; i < r->nstages; i++)
    if (r->stages[i].stage == n)
      return &r->stages[i];
  if (r->nstages == JD_SDHELD_MAX_STAGES)
    return NULL;
  jd_sdheld_stage *s = &r->stages[r->nstages++];
  *s = (jd_sdheld_stage){n, 0, -1, 0, 0};
  return s;
}

/* The stage is read again from its start: its rows go but the vat rows
 * of the block now closing (its last `keep_vats`). */
static void stage_restart(jd_sdheld *h, jd_sdheld_run *r, jd_sdheld_stage *st, size_t keep_vats) {
  jd_verdicts_sdblocks *b = &r->rows;
  size_t before = rows_of(r), kept = 0, mine = 0;
  for (size_t i = 0; i < b->nblocks; i++)
    if (b->blocks[i].stage != st->stage)
      b->blocks[kept++] = b->blocks[i];
  b->nblocks = kept;
  for (size_t i = 0; i < b->nvats; i++)
    mine += b->vats[i].stage == st->stage;
  kept = 0;
  for (size_t i = 0, seen = 0; i < b->nvats; i++) {
    if (b->vats[i].stage == st->stage && seen++ < mine - keep_vats)
      continue;
    b->vats[kept++] = b->vats[i];
  }
  b->nvats = kept;
  h->nrows -= before - rows_of(r);
  st->complete = 0;
  st->nblocks = 0;
}

static int add_block(jd_sdheld_run *r, jd_sdheld_stage *st, const ps_point *p) {
  ps_slog_drift_block row = {st->stage, p->time_ns, ps_point_number(p, "deliverySeconds"),
                             ps_point_number(p, "boydSeconds")};
  if (jd_verdicts_sdblocks_add_block(&r->rows, &row) < 0)
    return -ENOMEM;
  st->last_block_ns = p->time_ns;
  st->open_vats = 0;
  st->nblocks++;
  return 0;
}

static int add_block_vat(jd_sdheld_run *r, jd_sdheld_stage *st, const ps_point *p) {
  const char *vat = ps_point_tag(p, "vat");
  if (!vat || !*vat)
    return 0;
  if (jd_verdicts_sdblocks_add_vat(&r->rows, st->stage, p->time_ns, vat,
                                   ps_point_number(p, "deliverySeconds")) < 0)
    return -ENOMEM;
  st->open_vats++;
  return 0;
}

void jd_sdheld_point(jd_sdheld *h, const char *host, const ps_point *p, uint64_t now_ms) {
  int block = strcmp(p->measurement, BLOCK) == 0;
  int block_vat = !block && strcmp(p->measurement, BLOCK_VAT) == 0;
  if (!block && !block_vat && strcmp(p->measurement, STAGE) != 0)
    return;
  const char *run = ps_point_tag(p, "run"), *point_host = ps_point_tag(p, "host");
  int n = stage_number(p);
  if (!run || n < 0 || p->time_ns < 0 || (point_host && host && strcmp(point_host, host) != 0))
    return;
  jd_sdheld_run *r = run_get(h, run, now_ms);
  jd_sdheld_stage *st = r && !r->overflow ? stage_get(r, n) : NULL;
  if (!st) {
    if (r)
      overflow(h, r); /* out of memory or stages: a half set would judge wrong */
    return;
  }
  if (!block && !block_vat) {
    /* whole only with every block of the stage: the point counts them */
    const ps_field *partial = ps_point_field(p, "partial");
    double blocks = ps_point_number(p, "blocks");
    st->complete = partial && partial->type == PS_F_BOOL && !partial->v.b &&
                   blocks == (double)st->nblocks;
    return;
  }
  if (block && st->last_block_ns >= 0 && p->time_ns <= st->last_block_ns)
    stage_restart(h, r, st, st->open_vats);
  if (h->nrows >= JD_SDHELD_MAX_ROWS) {
    overflow(h, r);
    return;
  }
  size_t before = rows_of(r);
  if ((block ? add_block(r, st, p) : add_block_vat(r, st, p)) < 0) {
    overflow(h, r);
    return;
  }
  h->nrows += rows_of(r) - before;
}

jd_sdheld_run *jd_sdheld_take(jd_sdheld *h, const char *run) {
  for (jd_sdheld_run *r = h->runs; r; r = r->next)
    if (strcmp(r->run, run) == 0) {
      unlink_run(h, r);
      r->next = NULL;
      return r;
    }
  return NULL;
}

static int whole(const jd_sdheld_run *r, const ps_slog_drift_stage *stages, size_t nstages) {
  if (r->overflow)
    return 0;
  for (size_t i = 0; i < nstages; i++) {
    if (stages[i].time_ns < 0)
      continue; /* no slog figures on the server: nothing of it to hold */
    size_t k = 0;
    while (k < r->nstages && r->stages[k].stage != stages[i].stage)
      k++;
    if (k == r->nstages || !r->stages[k].complete)
      return 0;
  }
  return 1;
}

int jd_sdheld_fill(const jd_sdheld_run *r, const ps_slog_drift_stage *stages, size_t nstages,
                   int64_t from_ns, int64_t to_ns, jd_verdicts_sdblocks *b) {
  if (!r || !whole(r, stages, nstages))
    return 0;
  const jd_verdicts_sdblocks *src = &r->rows;
  jd_verdicts_sdblocks out = {0};
  out.blocks = malloc((src->nblocks ? src->nblocks : 1) * sizeof *out.blocks);
  out.vats = malloc((src->nvats ? src->nvats : 1) * sizeof *out.vats);
  if (!out.blocks || !out.vats) {
    free(out.blocks);
    free(out.vats);
    return -ENOMEM;
  }
  out.blocks_cap = src->nblocks;
  out.vats_cap = src->nvats;
  for (size_t i = 0; i < src->nblocks; i++) {
    int64_t t = src->blocks[i].time_ns;
    if (t < from_ns || t >= to_ns)
      continue;
    if (out.nblocks < JD_VERDICTS_SDBLOCKS_MAX_ROWS)
      out.blocks[out.nblocks++] = src->blocks[i];
    else
      out.dropped++;
  }
  for (size_t i = 0; i < src->nvats; i++) {
    int64_t t = src->vats[i].time_ns;
    if (t < from_ns || t >= to_ns)
      continue;
    if (out.nvats < JD_VERDICTS_SDBLOCKS_MAX_ROWS)
      out.vats[out.nvats++] = src->vats[i];
    else
      out.dropped++;
  }
  jd_verdicts_sdblocks_free(b);
  *b = out;
  return 1;
}

void jd_sdheld_free(jd_sdheld *h) {
  while (h->runs) {
    jd_sdheld_run *r = h->runs;
    h->runs = r->next;
    jd_sdheld_run_free(r);
  }
  memset(h, 0, sizeof *h);
}
