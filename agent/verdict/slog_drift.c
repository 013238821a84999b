/*
 * slog_drift.c: a run's slog figures, stage against its first loadgen
 * stage (include/verdict/slog_drift.h; docs/verdicts.md "Within a run").
 *
 * Design
 * - The BOYD share is compared in percentage points: a share of 0.5 %
 *   going to 1 % is +100 % and means nothing, 5 % going to 30 % is
 *   what Agoric's engineers' "BOYD at 79 % of swingset time" looks like.
 * - A vat's time per cycle is held against the rest of the stage too: a
 *   long run's chain slows as a whole (the generator's steady run gains
 *   14-38 % delivery seconds per cycle from stage 1 to stage 2, every vat
 *   alike), which stage_avgSwingsetTime already reports; the vat verdict is
 *   there to name the vat that moved on its own.
 * - The vats taking part are chosen from the judged stage alone, so the
 *   set of points a stage gets does not depend on what else was read.
 * - How sure: a vat's delivery seconds per cycle from a stage of 12-19
 *   cycles swing by 30 % on steady runs, so a threshold alone names vats
 *   that did nothing. The per-block figures say how much a stage's
 *   figure varies (stage_test.h). A vat is tested on its share of the
 *   chain's time (its seconds over the others', block by block), the same
 *   quantity as the "beyond the others" rule, so a chain that slows as a
 *   whole is no significant change of any vat.
 */
#include "verdict/slog_drift.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/figures.h"
#include "core/util.h"
#include "verdict/stage_test.h"

static int complete(const ps_slog_drift_stage *s) {
  /* finished cycles are a count: less than one is none */
  return !s->partial && isfinite(s->cycles) && s->cycles >= 1 && s->time_ns >= 0;
}

static const ps_slog_drift_vat *vat_of(const ps_slog_drift_vat *vats, size_t n, int stage,
                                       const char *vat) {
  for (size_t i = 0; i < n; i++)
    if (vats[i].stage == stage && vats[i].vat && strcmp(vats[i].vat, vat) == 0)
      return &vats[i];
  return NULL;
}

static ps_verdict base_verdict(const ps_slog_drift_run *run, const ps_slog_drift_stage *s,
                               ps_slog_stage_figure_id id) {
  ps_verdict v = ps_verdict_blank();
  v.source = run->source;
  v.series = run->series;
  v.metric = ps_slog_stage_figure(id)->name;
  v.run = run->run;
  v.stage = s->stage;
  v.method = PS_METHOD_STAGE_DRIFT;
  v.change_run = run->run;
  v.revision = run->revision;
  v.backfill = run->backfill;
  v.time_ns = s->time_ns;
  return v;
}

/* --- how sure: the per-block figures (stage_test.h) ---------------------- */

static int by_block_time(const void *a, const void *b) {
  int64_t x = (*(const ps_slog_drift_block *const *)a)->time_ns;
  int64_t y = (*(const ps_slog_drift_block *const *)b)->time_ns;
  return (x > y) - (x < y);
}

/* The block of `sorted` at `time_ns`, or -1. */
static long block_at(const ps_slog_drift_block *const *sorted, size_t n, int64_t time_ns) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (sorted[mid]->time_ns < time_ns)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && sorted[lo]->time_ns == time_ns ? (long)lo : -1;
}

/* One stage's per-block rows: its blocks in time order and its vat rows.
 * Made once per stage and run: every test of the stage (the BOYD share,
 * each top vat, the first stage against each later one) reads the same
 * rows, and finding them in the run's 14,000 blocks and 12,000 vat rows
 * for each test, with a sort, was most of the judging (docs/benchmarks.md,
 * "Sixth pass"). */
typedef struct stage_rows {
  int stage;
  const ps_slog_drift_block **blocks;
  size_t nblocks;
  const ps_slog_drift_block_vat **vats;
  size_t nvats;
} stage_rows;

/* The rows of a run's stages (made when first asked, one entry per
 * stage) and the first stage's estimates (each made once: every later
 * stage is tested against them; a 12-stage run asked for the same one 66
 * times). */
#define MEMO_MAX 64
typedef struct drift_memo {
  const ps_slog_drift_blocks *bl;
  stage_rows *rows;
  size_t nrows, rows_cap;
  struct {
    const char *vat; /* NULL: the BOYD share */
    ps_batch_estimate e;
  } first[MEMO_MAX];
  size_t nfirst;
} drift_memo;

static void memo_free(drift_memo *m) {
  for (size_t i = 0; i < m->nrows; i++) {
    free(m->rows[i].blocks);
    free(m->rows[i].vats);
  }
  free(m->rows);
  m->rows = NULL;
  m->nrows = m->rows_cap = 0;
}

/* The rows of `stage`, or NULL when out of memory. */
static const stage_rows *rows_of(drift_memo *m, int stage) {
  for (size_t i = 0; i < m->nrows; i++)
    if (m->rows[i].stage == stage)
      return &m->rows[i];
  if (ps_array_room((void **)&m->rows, m->nrows, &m->rows_cap, sizeof *m->rows, 16) < 0)
    return NULL;
  const ps_slog_drift_blocks *bl = m->bl;
  stage_rows r = {.stage = stage};
  for (size_t i = 0; i < bl->nblocks; i++)
    r.nblocks += bl->blocks[i].stage == stage;
  for (size_t i = 0; i < bl->nvats; i++)
    r.nvats += bl->vats[i].stage == stage && bl->vats[i].vat;
  r.blocks = malloc((r.nblocks ? r.nblocks : 1) * sizeof *r.blocks);
  r.vats = malloc((r.nvats ? r.nvats : 1) * sizeof *r.vats);
  if (!r.blocks || !r.vats) {
    free(r.blocks);
    free(r.vats);
    return NULL;
  }
  size_t nb = 0, nv = 0;
  for (size_t i = 0; i < bl->nblocks; i++)
    if (bl->blocks[i].stage == stage)
      r.blocks[nb++] = &bl->blocks[i];
  for (size_t i = 0; i < bl->nvats; i++)
    if (bl->vats[i].stage == stage && bl->vats[i].vat)
      r.vats[nv++] = &bl->vats[i];
  qsort(r.blocks, nb, sizeof *r.blocks, by_block_time);
  m->rows[m->nrows] = r;
  return &m->rows[m->nrows++];
}

/* A stage's blocks in time order as num / den per block: BOYD seconds
 * over delivery seconds (vat NULL), or the vat's delivery seconds over
 * the other vats'. *n 0 when the stage has no blocks. */
static int block_series(const stage_rows *r, const char *vat, double **num, double **den,
                        size_t *n) {
  size_t nb = r->nblocks;
  *num = calloc(nb ? nb : 1, sizeof **num);
  *den = calloc(nb ? nb : 1, sizeof **den);
  *n = nb;
  if (!*num || !*den)
    return -ENOMEM;
  for (size_t i = 0; vat && i < r->nvats; i++) {
    const ps_slog_drift_block_vat *v = r->vats[i];
    long at = strcmp(v->vat, vat) == 0 ? block_at(r->blocks, nb, v->time_ns) : -1;
    if (at >= 0 && isfinite(v->delivery_s))
      (*num)[at] += v->delivery_s;
  }
  for (size_t i = 0; i < nb; i++) {
    if (!vat) {
      (*num)[i] = r->blocks[i]->boyd_s;
      (*den)[i] = r->blocks[i]->delivery_s;
    } else /* the block's seconds less the vat's (rounding can go below 0) */
      (*den)[i] = fmax(0.0, r->blocks[i]->delivery_s - (*num)[i]);
  }
  return 0;
}

static int estimate(drift_memo *m, int stage, const char *vat, ps_batch_estimate *e) {
  const stage_rows *r = rows_of(m, stage);
  if (!r)
    return -ENOMEM;
  double *num, *den;
  size_t n;
  int rc = block_series(r, vat, &num, &den, &n);
  if (rc == 0 && ps_batch_means(num, den, n, e) < 0)
    e->batches = 0; /* too few blocks: no test */
  free(num);
  free(den);
  return rc;
}

static int first_estimate(drift_memo *m, int first, const char *vat, ps_batch_estimate *e) {
  for (size_t i = 0; i < m->nfirst; i++)
    if (vat ? m->first[i].vat && strcmp(m->first[i].vat, vat) == 0 : !m->first[i].vat) {
      *e = m->first[i].e;
      return 0;
    }
  int rc = estimate(m, first, vat, e);
  if (rc == 0 && m->nfirst < MEMO_MAX) {
    m->first[m->nfirst].vat = vat;
    m->first[m->nfirst++].e = *e;
  }
  return rc;
}

/* The p-value of the change from the first stage to stage `s` (NaN when
 * it cannot be tested), or -ENOMEM. */
static int change_p(drift_memo *m, int first, int s, const char *vat, double *p) {
  ps_batch_estimate e1, ek;
  ps_stage_change c;
  *p = NAN;
  int rc = first_estimate(m, first, vat, &e1);
  if (rc == 0)
    rc = estimate(m, s, vat, &ek);
  if (rc == 0 &&
      ps_stage_change_test(&e1, &ek, vat ? PS_STAGE_TEST_LOG : PS_STAGE_TEST_POINTS, &c) == 0)
    *p = c.p_value;
  return rc;
}

/* Whether a change beyond the threshold stands: significant in the
 * run's stage family, or no per-block figures to ask (the threshold
 * alone). Records what the decision took into account. */
static int sure(const ps_slog_drift_blocks *bl, long family, ps_verdict *v) {
  v->family_size = family;
  v->p_adjusted = ps_stage_p_adjusted(v->p_value, family);
  return !bl || ps_stage_significant(v->p_adjusted);
}

static int judge_boyd(const ps_verdicts_cfg *cfg, const ps_slog_drift_run *run,
                      const ps_slog_drift_stage *first, const ps_slog_drift_stage *s, drift_memo *m,
                      long family, ps_verdict_list *out) {
  const ps_slog_drift_blocks *bl = m->bl;
  /* a share is 0-1; anything else is no figure */
  if (!(first->boyd_share >= 0 && first->boyd_share <= 1 && s->boyd_share >= 0 &&
        s->boyd_share <= 1))
    return 0;
  ps_verdict v = base_verdict(run, s, PS_SLOG_FIG_BOYD_SHARE);
  v.value = s->boyd_share * 100.0;
  v.baseline = first->boyd_share * 100.0;
  if (bl && change_p(m, first->stage, s->stage, NULL, &v.p_value) < 0)
    return -ENOMEM;
  int stands = sure(bl, family, &v);
  if (ps_verdict_beyond(v.value, v.baseline, cfg->stage_drift_boyd_points, PS_CHANGE_POINTS) &&
      stands)
    v.verdict = ps_verdict_direction(v.value, v.baseline, PS_WORSE_HIGHER);
  return ps_verdict_list_push(out, &v);
}

/* Largest delivery seconds first, ties by vat ID. */
static int by_time(const void *a, const void *b) {
  const ps_slog_drift_vat *x = *(const ps_slog_drift_vat *const *)a;
  const ps_slog_drift_vat *y = *(const ps_slog_drift_vat *const *)b;
  if (x->delivery_s != y->delivery_s)
    return x->delivery_s < y->delivery_s ? 1 : -1;
  return strcmp(x->vat, y->vat);
}

/* The stage's delivery seconds: its own figure, else its vats' sum. */
static double stage_seconds(const ps_slog_drift_stage *s, const ps_slog_drift_vat *vats, size_t n) {
  if (isfinite(s->delivery_s))
    return s->delivery_s;
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    if (vats[i].stage == s->stage && isfinite(vats[i].delivery_s))
      sum += vats[i].delivery_s;
  return sum;
}

static int judge_vats(const ps_verdicts_cfg *cfg, const ps_slog_drift_run *run,
                      const ps_slog_drift_stage *first, const ps_slog_drift_stage *s,
                      const ps_slog_drift_vat *vats, size_t nvats, drift_memo *m, long family,
                      ps_verdict_list *out) {
  const ps_slog_drift_blocks *bl = m->bl;
  const ps_slog_drift_vat **mine = malloc((nvats ? nvats : 1) * sizeof *mine);
  if (!mine)
    return -ENOMEM;
  size_t n = 0;
  for (size_t i = 0; i < nvats; i++)
    if (vats[i].stage == s->stage && vats[i].vat && isfinite(vats[i].delivery_s) &&
        vats[i].delivery_s > 0)
      mine[n++] = &vats[i];
  qsort(mine, n, sizeof *mine, by_time);
  double total_k = stage_seconds(s, vats, nvats), total_1 = stage_seconds(first, vats, nvats);
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < n && i < PS_SLOG_DRIFT_TOP_VATS; i++) {
    const ps_slog_drift_vat *vk = mine[i];
    if (vk->delivery_s < PS_SLOG_DRIFT_MIN_SHARE * total_k)
      break; /* sorted: the rest carry less */
    const ps_slog_drift_vat *v1 = vat_of(vats, nvats, first->stage, vk->vat);
    if (!v1 || !isfinite(v1->delivery_s) || v1->delivery_s <= 0)
      continue; /* no baseline: a new vat has no relative change */
    ps_verdict v = base_verdict(run, s, PS_SLOG_FIG_VAT_PER_CYCLE);
    v.vat = vk->vat;
    v.vat_name = vk->name ? vk->name : v1->name;
    v.value = vk->delivery_s / s->cycles;
    v.baseline = v1->delivery_s / first->cycles;
    /* the other vats' time per cycle, the same way; none left: the vat alone */
    double rest_k = (total_k - vk->delivery_s) / s->cycles;
    double rest_1 = (total_1 - v1->delivery_s) / first->cycles;
    double rel = rest_k > 0 && rest_1 > 0 ? (v.value / v.baseline) / (rest_k / rest_1)
                                          : v.value / v.baseline;
    ps_verdict_kind raw = PS_VERDICT_NONE, own = PS_VERDICT_NONE;
    if (ps_verdict_beyond(v.value, v.baseline, cfg->stage_drift_pct, PS_CHANGE_PERCENT))
      raw = ps_verdict_direction(v.value, v.baseline, PS_WORSE_HIGHER);
    if (isfinite(rel) && ps_verdict_beyond(rel, 1.0, cfg->stage_drift_pct, PS_CHANGE_PERCENT))
      own = ps_verdict_direction(rel, 1.0, PS_WORSE_HIGHER);
    if (bl && (rc = change_p(m, first->stage, s->stage, vk->vat, &v.p_value)) < 0)
      break;
    if (sure(bl, family, &v) && raw == own)
      v.verdict = raw;
    rc = ps_verdict_list_push(out, &v);
  }
  free(mine);
  return rc;
}

/* The stages after the first loadgen stage that take part in the run's
 * stage family: those that ran the load generator (the stage figures'
 * stages) and any other this judge judges (complete, with cycles). */
static size_t judged_stages(const ps_slog_drift_stage *stages, size_t n, int first) {
  size_t judged = 0;
  for (size_t i = 0; i < n; i++)
    judged += stages[i].stage > first && (stages[i].loadgen == 1 || complete(&stages[i]));
  return judged;
}

_Static_assert(PS_STAGE_TESTS_PER_STAGE == PS_STAGE_NFIGURES + 1 + PS_SLOG_DRIFT_TOP_VATS,
               "a judged stage's tests: the stage figures, the BOYD share and the top vats");

int ps_slog_drift(const ps_verdicts_cfg *cfg, const ps_slog_drift_run *run,
                  const ps_slog_drift_stage *stages, size_t nstages, const ps_slog_drift_vat *vats,
                  size_t nvats, const ps_slog_drift_blocks *blocks, ps_verdict_list *out) {
  if (run->status != PS_RUN_STATUS_SUCCESS)
    return 0;
  const ps_slog_drift_stage *first = NULL;
  for (size_t i = 0; i < nstages; i++)
    if (stages[i].loadgen == 1 && (!first || stages[i].stage < first->stage))
      first = &stages[i];
  if (!first || !complete(first))
    return 0;
  long family = ps_stage_family_size(judged_stages(stages, nstages, first->stage));
  drift_memo *memo = calloc(1, sizeof *memo);
  if (!memo)
    return -ENOMEM;
  memo->bl = blocks;
  /* later stages in stage order, whatever order they came in */
  int after = first->stage, rc = 0;
  while (rc == 0) {
    const ps_slog_drift_stage *next = NULL;
    for (size_t i = 0; i < nstages; i++)
      if (stages[i].stage > after && (!next || stages[i].stage < next->stage))
        next = &stages[i];
    if (!next)
      break;
    after = next->stage;
    if (!complete(next))
      continue;
    rc = judge_boyd(cfg, run, first, next, memo, family, out);
    if (rc == 0)
      rc = judge_vats(cfg, run, first, next, vats, nvats, memo, family, out);
  }
  memo_free(memo);
  free(memo);
  return rc < 0 ? rc : rc ? -ENOMEM : 0;
}
