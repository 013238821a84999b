/*
 * formats/slog_reduce.c: a stage's slog lines into block, block-and-vat,
 * vat and stage figures. See include/formats/slog_reduce.h; every figure is defined in
 * docs/schema.md "Slog figures", and this file follows that text.
 *
 * Design
 * - One pass, nothing re-read: a gzip stream has no random access, so
 *   everything a figure needs is kept as it passes (sums, the last and
 *   largest counters, per vat the delivery seconds for its p95 and the
 *   running moments of its per-block trend).
 * - The vat of a syscall is nearly always the vat of the line before, so
 *   the last vat looked up is tried first.
 */
#include "formats/slog_reduce.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/point.h"
#include "core/util.h"
#include "formats/slog_scan.h"

typedef struct vat {
  char id[PS_SLOG_VAT_MAX];
  char name[PS_SLOG_NAME_MAX];
  int64_t deliveries, boyd_deliveries, syscalls, imports, exports, drops, snapshots;
  double seconds, boyd_seconds, computrons;
  int have_snapshot_size;
  double snapshot_size;
  double *vals; /* delivery seconds, for the p95 */
  size_t nvals, capvals;
  /* this block: its loadgen_slog_block_vat figures */
  uint64_t blk_seq;
  int64_t blk_deliveries;
  double blk_seconds, blk_computrons;
  /* the trend: running means and co-moments of (height, block seconds) */
  int64_t tn;
  double tmx, tmy, tcxy, tm2x;
} vat;

typedef struct block {
  int open;
  int64_t height;
  double time;
  int64_t lines, cranks, deliveries, boyd_deliveries, syscalls;
  double computrons, seconds, boyd_seconds;
  int have_commit, have_rss, have_heap;
  double commit_seconds, rss, heap_used;
  unsigned counters_has;
  double counters[PS_SLOG_NCOUNTERS];
} block;

struct ps_slog_reducer {
  char run[256], test_type[256], revision[64], stage[32];
  int64_t cycles;
  ps_slog_era era;
  int have_time;
  double time; /* the stage's: its first line's */
  int64_t lines, skipped, bad, blocks, cranks, deliveries, boyd_deliveries, syscalls;
  int64_t imports, exports, drops, snapshots, kernel_stats;
  double computrons, seconds, boyd_seconds;
  /* blocks: first and last begin-block time; delivery seconds of the
   * blocks that a later begin-block closed */
  int have_first_begin;
  double first_begin, last_begin, closed_block_seconds;
  unsigned kc_has;
  double kc_first[PS_SLOG_NCOUNTERS], kc_last[PS_SLOG_NCOUNTERS], kc_max[PS_SLOG_NCOUNTERS];
  /* the deliver line before a deliver-result */
  int have_deliver;
  double deliver_time;
  int deliver_boyd;
  int have_commit_start;
  double commit_start;
  block b;
  uint64_t blk_seq;
  vat *vats;
  size_t nvats, capvats, last_vat;
  size_t *touched; /* vats with deliveries in the open block */
  size_t ntouched, captouched;
};

static void copy_str(char *dst, size_t n, const char *src) {
  snprintf(dst, n, "%s", src ? src : "");
}

int ps_slog_reduce_new(ps_slog_reducer **out, const char *run, const char *test_type,
                       const char *revision, const char *stage) {
  ps_slog_reducer *r = calloc(1, sizeof *r);
  if (!r)
    return -ENOMEM;
  copy_str(r->run, sizeof r->run, run);
  copy_str(r->test_type, sizeof r->test_type, test_type);
  copy_str(r->revision, sizeof r->revision, revision);
  copy_str(r->stage, sizeof r->stage, stage);
  *out = r;
  return 0;
}

void ps_slog_reduce_set_cycles(ps_slog_reducer *r, int64_t finished) { r->cycles = finished; }

void ps_slog_reduce_free(ps_slog_reducer *r) {
  if (!r)
    return;
  for (size_t i = 0; i < r->nvats; i++)
    free(r->vats[i].vals);
  free(r->vats);
  free(r->touched);
  free(r);
}

/* ---- points ----------------------------------------------------------- */

#define MAX_FIELDS 64

typedef struct pt {
  ps_tag tags[5];
  size_t ntags;
  ps_field f[MAX_FIELDS];
  size_t nf;
} pt;

static void pt_tags(ps_slog_reducer *r, pt *p, const char *vat_id) {
  p->ntags = 0;
  p->nf = 0;
  const char *keys[] = {"run", "test_type", "revision", "stage"};
  const char *vals[] = {r->run, r->test_type, r->revision, r->stage};
  for (int i = 0; i < 4; i++)
    if (vals[i][0])
      p->tags[p->ntags++] = (ps_tag){keys[i], vals[i]};
  if (vat_id)
    p->tags[p->ntags++] = (ps_tag){"vat", vat_id};
}

static void f_int(pt *p, const char *k, int64_t v) {
  if (p->nf < MAX_FIELDS)
    p->f[p->nf++] = ps_field_int(k, v);
}

static void f_float(pt *p, const char *k, double v) {
  if (p->nf < MAX_FIELDS && isfinite(v))
    p->f[p->nf++] = ps_field_float(k, v);
}

/* A number that is a count in the data (computrons, bytes, counters):
 * an integer field when it is one, as docs/schema.md types them. */
static void f_count(pt *p, const char *k, double v) {
  if (isfinite(v) && v == floor(v) && fabs(v) < 9.0e15)
    f_int(p, k, (int64_t)v);
}

static int pt_emit(pt *p, const char *m, double t, ps_emitter *em) {
  ps_point pp = {.measurement = m, .tags = p->tags, .ntags = p->ntags, .fields = p->f,
                 .nfields = p->nf, .time_ns = ps_seconds_to_ns(t)};
  return ps_emit_point(em, &pp);
}

/* ---- vats -------------------------------------------------------------- */

static vat *vat_get(ps_slog_reducer *r, const char *id, ps_emitter *em) {
  if (r->nvats && strcmp(r->vats[r->last_vat].id, id) == 0)
    return &r->vats[r->last_vat];
  for (size_t i = 0; i < r->nvats; i++)
    if (strcmp(r->vats[i].id, id) == 0) {
      r->last_vat = i;
      return &r->vats[i];
    }
  if (r->nvats >= PS_SLOG_MAX_VATS) {
    ps_emit_reject(em, "more than %d vats in one stage; this line's vat is not counted",
                   PS_SLOG_MAX_VATS);
    return NULL;
  }
  if (r->nvats == r->capvats) {
    size_t cap = r->capvats ? r->capvats * 2 : 32;
    vat *nv = realloc(r->vats, cap * sizeof *nv);
    if (!nv)
      return NULL;
    r->vats = nv;
    r->capvats = cap;
  }
  vat *v = &r->vats[r->nvats];
  memset(v, 0, sizeof *v);
  copy_str(v->id, sizeof v->id, id);
  r->last_vat = r->nvats++;
  return v;
}

static int vat_touch(ps_slog_reducer *r, vat *v) {
  if (v->blk_seq == r->blk_seq + 1)
    return 0;
  v->blk_seq = r->blk_seq + 1; /* +1: 0 means never */
  v->blk_deliveries = 0;
  v->blk_seconds = 0;
  v->blk_computrons = 0;
  if (ps_array_room((void **)&r->touched, r->ntouched, &r->captouched, sizeof *r->touched, 16))
    return -ENOMEM;
  r->touched[r->ntouched++] = (size_t)(v - r->vats);
  return 0;
}

/* ---- blocks ------------------------------------------------------------ */

/* A vat's share of the closed block (docs/schema.md loadgen_slog_block_vat):
 * only the open block's sums are kept, so memory is per vat, not per block. */
static int emit_block_vat(ps_slog_reducer *r, const vat *v, ps_emitter *em) {
  pt p;
  pt_tags(r, &p, v->id);
  f_int(&p, "blockHeight", r->b.height);
  f_int(&p, "deliveries", v->blk_deliveries);
  f_float(&p, "deliverySeconds", v->blk_seconds);
  f_count(&p, "computrons", v->blk_computrons);
  return pt_emit(&p, "loadgen_slog_block_vat", r->b.time, em);
}

static int block_close(ps_slog_reducer *r, ps_emitter *em) {
  block *b = &r->b;
  if (!b->open)
    return 0;
  int rc;
  for (size_t i = 0; i < r->ntouched; i++) {
    vat *v = &r->vats[r->touched[i]];
    if ((rc = emit_block_vat(r, v, em)) != 0)
      return rc;
    double x = (double)b->height, y = v->blk_seconds;
    v->tn++;
    double dx = x - v->tmx;
    v->tmx += dx / (double)v->tn;
    v->tmy += (y - v->tmy) / (double)v->tn;
    v->tcxy += dx * (y - v->tmy);
    v->tm2x += dx * (x - v->tmx);
  }
  r->ntouched = 0;
  r->blk_seq++;
  r->blocks++;
  pt p;
  pt_tags(r, &p, NULL);
  f_int(&p, "blockHeight", b->height);
  f_int(&p, "cranks", b->cranks);
  f_int(&p, "deliveries", b->deliveries);
  f_count(&p, "computrons", b->computrons);
  f_float(&p, "deliverySeconds", b->seconds);
  f_int(&p, "boydDeliveries", b->boyd_deliveries);
  f_float(&p, "boydSeconds", b->boyd_seconds);
  f_int(&p, "syscalls", b->syscalls);
  f_int(&p, "lines", b->lines);
  if (b->have_commit)
    f_float(&p, "commitSeconds", b->commit_seconds);
  if (b->have_rss)
    f_count(&p, "rssBytes", b->rss);
  if (b->have_heap)
    f_count(&p, "heapUsedBytes", b->heap_used);
  for (int i = 0; i < PS_SLOG_NCOUNTERS; i++)
    if (b->counters_has & (1u << i))
      f_count(&p, ps_slog_counter_names[i], b->counters[i]);
  b->open = 0;
  return pt_emit(&p, "loadgen_slog_block", b->time, em);
}

/* ---- lines ------------------------------------------------------------- */

static int on_begin_block(ps_slog_reducer *r, const ps_slog_rec *x, ps_emitter *em) {
  block *b = &r->b;
  if (!(x->has & PS_SR_HEIGHT) || !(x->has & PS_SR_TIME)) {
    ps_emit_reject(em, "cosmic-swingset-begin-block without blockHeight or time");
    r->bad++;
    b->lines += b->open; /* a bad line of the open block */
    return 0;
  }
  if (b->open)
    r->closed_block_seconds += b->seconds;
  int rc = block_close(r, em);
  if (rc != 0)
    return rc;
  memset(b, 0, sizeof *b);
  b->open = 1;
  b->height = x->height;
  b->time = x->time;
  b->lines = 1;
  if (!r->have_first_begin) {
    r->have_first_begin = 1;
    r->first_begin = x->time;
  }
  r->last_begin = x->time;
  return 0;
}

/* A delivery's seconds: its own when the line has them (newer eras), else
 * the time since the deliver line before it. */
static double delivery_seconds(const ps_slog_reducer *r, const ps_slog_rec *x) {
  if (x->has & PS_SR_SECONDS)
    return x->seconds;
  if (r->have_deliver && (x->has & PS_SR_TIME))
    return x->time - r->deliver_time;
  return 0;
}

/* The stage's and the open block's sums. */
static void count_delivery(ps_slog_reducer *r, double s, double comp, int boyd) {
  block *b = &r->b;
  r->deliveries++;
  r->seconds += s;
  r->computrons += comp;
  if (boyd) {
    r->boyd_deliveries++;
    r->boyd_seconds += s;
  }
  if (b->open) {
    b->deliveries++;
    b->seconds += s;
    b->computrons += comp;
    if (boyd) {
      b->boyd_deliveries++;
      b->boyd_seconds += s;
    }
  }
}

/* The vat's sums, its delivery seconds for the p95, and its share of the
 * open block. */
static int count_vat_delivery(ps_slog_reducer *r, vat *v, double s, double comp, int boyd) {
  v->deliveries++;
  v->seconds += s;
  v->computrons += comp;
  if (boyd) {
    v->boyd_deliveries++;
    v->boyd_seconds += s;
  }
  if (ps_array_room((void **)&v->vals, v->nvals, &v->capvals, sizeof *v->vals, 64))
    return -ENOMEM;
  v->vals[v->nvals++] = s;
  if (r->b.open) {
    int rc = vat_touch(r, v);
    if (rc != 0)
      return rc;
    v->blk_deliveries++;
    v->blk_seconds += s;
    v->blk_computrons += comp;
  }
  return 0;
}

static int on_deliver_result(ps_slog_reducer *r, const ps_slog_rec *x, ps_emitter *em) {
  if (x->has & PS_SR_REPLAY && x->replay)
    return 0;
  double s = delivery_seconds(r, x);
  int boyd = r->deliver_boyd;
  double comp = (x->has & PS_SR_COMPUTE) ? x->compute : 0;
  r->have_deliver = 0;
  r->deliver_boyd = 0;
  count_delivery(r, s, comp, boyd);
  vat *v;
  if (!(x->has & PS_SR_VAT) || !(v = vat_get(r, x->vat, em)))
    return 0;
  return count_vat_delivery(r, v, s, comp, boyd);
}

static void on_clist(ps_slog_reducer *r, const ps_slog_rec *x, ps_emitter *em) {
  if (x->clist_mode == PS_SLOG_CLIST_IMPORT)
    r->imports++;
  else if (x->clist_mode == PS_SLOG_CLIST_EXPORT)
    r->exports++;
  else if (x->clist_mode == PS_SLOG_CLIST_DROP)
    r->drops++;
  vat *v;
  if ((x->has & PS_SR_VAT) && (v = vat_get(r, x->vat, em))) {
    v->imports += x->clist_mode == PS_SLOG_CLIST_IMPORT;
    v->exports += x->clist_mode == PS_SLOG_CLIST_EXPORT;
    v->drops += x->clist_mode == PS_SLOG_CLIST_DROP;
  }
}

/* The stage keeps each counter's first, last and largest; the open block
 * its last. */
static void on_kernel_stats(ps_slog_reducer *r, const ps_slog_rec *x) {
  block *b = &r->b;
  r->kernel_stats++;
  for (int i = 0; i < PS_SLOG_NCOUNTERS; i++) {
    if (!(x->counters_has & (1u << i)))
      continue;
    double c = x->counters[i];
    if (!(r->kc_has & (1u << i))) {
      r->kc_first[i] = c;
      r->kc_max[i] = c;
    }
    if (c > r->kc_max[i])
      r->kc_max[i] = c;
    r->kc_last[i] = c;
    r->kc_has |= 1u << i;
    if (b->open) {
      b->counters[i] = c;
      b->counters_has |= 1u << i;
    }
  }
}

static void on_commit_finish(ps_slog_reducer *r, const ps_slog_rec *x) {
  block *b = &r->b;
  if (b->open) {
    if (x->has & PS_SR_SECONDS) {
      b->commit_seconds = x->seconds;
      b->have_commit = 1;
    } else if (r->have_commit_start && (x->has & PS_SR_TIME)) {
      b->commit_seconds = x->time - r->commit_start;
      b->have_commit = 1;
    }
  }
  r->have_commit_start = 0;
}

static void on_after_commit(ps_slog_reducer *r, const ps_slog_rec *x) {
  block *b = &r->b;
  if (!b->open)
    return;
  if (x->has & PS_SR_RSS) {
    b->rss = x->rss;
    b->have_rss = 1;
  }
  if (x->has & PS_SR_HEAP_USED) {
    b->heap_used = x->heap_used;
    b->have_heap = 1;
  }
}

static void on_snapshot(ps_slog_reducer *r, const ps_slog_rec *x, ps_emitter *em) {
  r->snapshots++;
  vat *v;
  if ((x->has & PS_SR_VAT) && (v = vat_get(r, x->vat, em))) {
    v->snapshots++;
    if (x->has & PS_SR_SNAPSHOT_SIZE) {
      v->snapshot_size = x->snapshot_size;
      v->have_snapshot_size = 1;
    }
  }
}

static int on_record(ps_slog_reducer *r, const ps_slog_rec *x, ps_emitter *em) {
  block *b = &r->b;
  vat *v = NULL;
  switch (x->type) {
  case PS_SLOG_BEGIN_BLOCK: return on_begin_block(r, x, em);
  case PS_SLOG_CRANK_FINISH:
    if (!x->routing) {
      r->cranks++;
      b->cranks += b->open;
    }
    return 0;
  case PS_SLOG_DELIVER:
    if (x->has & PS_SR_REPLAY && x->replay)
      return 0;
    r->have_deliver = (x->has & PS_SR_TIME) != 0;
    r->deliver_time = x->time;
    r->deliver_boyd = x->boyd;
    return 0;
  case PS_SLOG_DELIVER_RESULT: return on_deliver_result(r, x, em);
  case PS_SLOG_SYSCALL:
    if (x->has & PS_SR_REPLAY && x->replay)
      return 0;
    r->syscalls++;
    b->syscalls += b->open;
    if ((x->has & PS_SR_VAT) && (v = vat_get(r, x->vat, em)))
      v->syscalls++;
    return 0;
  case PS_SLOG_CLIST: on_clist(r, x, em); return 0;
  case PS_SLOG_KERNEL_STATS: on_kernel_stats(r, x); return 0;
  case PS_SLOG_COMMIT_START:
    r->have_commit_start = (x->has & PS_SR_TIME) != 0;
    r->commit_start = x->time;
    return 0;
  case PS_SLOG_COMMIT_FINISH: on_commit_finish(r, x); return 0;
  case PS_SLOG_AFTER_COMMIT: on_after_commit(r, x); return 0;
  case PS_SLOG_SNAPSHOT: on_snapshot(r, x, em); return 0;
  case PS_SLOG_CREATE_VAT:
    if ((x->has & PS_SR_VAT) && (v = vat_get(r, x->vat, em)) && (x->has & PS_SR_NAME))
      copy_str(v->name, sizeof v->name, x->name);
    return 0;
  default:
    return 0;
  }
}

int ps_slog_reduce_line(ps_slog_reducer *r, const char *head, size_t head_len,
                        const char *tail, size_t tail_len, uint64_t len, ps_emitter *em) {
  ps_slog_rec x;
  const char *why = NULL;
  r->lines++;
  int rc = ps_slog_scan(head, head_len, tail, tail_len, len > head_len, !r->have_time, &x, &why);
  if (rc < 0) {
    r->bad++;
    r->b.lines += r->b.open;
    ps_emit_reject(em, "not a slog event: %s", why ? why : "unreadable");
    return 0;
  }
  if (x.era != PS_SLOG_ERA_UNKNOWN && r->era == PS_SLOG_ERA_UNKNOWN)
    r->era = x.era;
  if (!r->have_time && (x.has & PS_SR_TIME) && isfinite(x.time)) {
    r->have_time = 1;
    r->time = x.time;
  }
  if (rc == 0) {
    r->skipped++;
    r->b.lines += r->b.open;
    return 0;
  }
  rc = on_record(r, &x, em);
  if (x.type != PS_SLOG_BEGIN_BLOCK)
    r->b.lines += r->b.open;
  return rc;
}

/* ---- the end ----------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int emit_vat(ps_slog_reducer *r, vat *v, int partial, ps_emitter *em) {
  pt p;
  pt_tags(r, &p, v->id);
  if (v->name[0])
    p.f[p.nf++] = ps_field_string("name", v->name, strlen(v->name));
  f_int(&p, "deliveries", v->deliveries);
  f_float(&p, "deliverySeconds", v->seconds);
  if (v->deliveries > 0) {
    f_float(&p, "deliverySecondsMean", v->seconds / (double)v->deliveries);
    qsort(v->vals, v->nvals, sizeof *v->vals, cmp_double);
    size_t rank = (size_t)ceil(0.95 * (double)v->nvals); /* nearest rank */
    f_float(&p, "deliverySecondsP95", v->vals[rank ? rank - 1 : 0]);
  }
  f_count(&p, "computrons", v->computrons);
  f_int(&p, "boydDeliveries", v->boyd_deliveries);
  f_float(&p, "boydSeconds", v->boyd_seconds);
  f_int(&p, "syscalls", v->syscalls);
  f_int(&p, "clistImports", v->imports);
  f_int(&p, "clistExports", v->exports);
  f_int(&p, "clistDrops", v->drops);
  f_int(&p, "heapSnapshots", v->snapshots);
  if (v->have_snapshot_size)
    f_count(&p, "lastSnapshotBytes", v->snapshot_size);
  f_int(&p, "trendBlocks", v->tn);
  if (v->tn >= PS_SLOG_TREND_MIN_BLOCKS && v->tm2x > 0)
    f_float(&p, "deliverySecondsSlope", v->tcxy / v->tm2x);
  p.f[p.nf++] = ps_field_bool("partial", partial);
  return pt_emit(&p, "loadgen_slog_vat", r->time, em);
}

int ps_slog_reduce_finish(ps_slog_reducer *r, int complete, uint64_t bytes, ps_emitter *em) {
  int rc;
  /* A stage not complete is a snapshot: its open block may still grow, so
   * it is left out and left open for the lines still to come. */
  if (complete && (rc = block_close(r, em)) != 0)
    return rc;
  if (!r->have_time)
    return 0; /* nothing with a time: no stage to put a point at */
  for (size_t i = 0; i < r->nvats; i++)
    if ((rc = emit_vat(r, &r->vats[i], !complete, em)) != 0)
      return rc;
  pt p;
  pt_tags(r, &p, NULL);
  const char *era = r->era == PS_SLOG_ERA_TIME_FIRST   ? "time-first"
                    : r->era == PS_SLOG_ERA_TYPE_FIRST ? "type-first"
                                                       : "";
  if (era[0])
    p.f[p.nf++] = ps_field_string("era", era, strlen(era));
  p.f[p.nf++] = ps_field_bool("partial", !complete);
  f_int(&p, "lines", r->lines);
  f_int(&p, "skippedLines", r->skipped);
  f_int(&p, "badLines", r->bad);
  f_int(&p, "bytes", (int64_t)bytes);
  f_int(&p, "blocks", r->blocks);
  f_int(&p, "vats", (int64_t)r->nvats);
  f_int(&p, "cranks", r->cranks);
  f_int(&p, "deliveries", r->deliveries);
  f_count(&p, "computrons", r->computrons);
  f_float(&p, "deliverySeconds", r->seconds);
  f_int(&p, "boydDeliveries", r->boyd_deliveries);
  f_float(&p, "boydSeconds", r->boyd_seconds);
  if (r->seconds > 0)
    f_float(&p, "boydShare", r->boyd_seconds / r->seconds);
  f_int(&p, "syscalls", r->syscalls);
  f_int(&p, "clistImports", r->imports);
  f_int(&p, "clistExports", r->exports);
  f_int(&p, "clistDrops", r->drops);
  f_int(&p, "heapSnapshots", r->snapshots);
  f_int(&p, "kernelStats", r->kernel_stats);
  if (r->have_first_begin && r->last_begin > r->first_begin) {
    double wall = r->last_begin - r->first_begin;
    f_float(&p, "wallSeconds", wall);
    f_float(&p, "swingsetUtilisation", r->closed_block_seconds / wall);
  }
  static const char *const start_k[PS_SLOG_NCOUNTERS] = {
      "kernelObjectsStart", "kernelPromisesStart", "kpUnresolvedStart", "clistEntriesStart",
      "promiseQueuesLengthStart", "runQueueLengthStart", "vatsStart"};
  static const char *const end_k[PS_SLOG_NCOUNTERS] = {
      "kernelObjectsEnd", "kernelPromisesEnd", "kpUnresolvedEnd", "clistEntriesEnd",
      "promiseQueuesLengthEnd", "runQueueLengthEnd", "vatsEnd"};
  static const char *const max_k[PS_SLOG_NCOUNTERS] = {
      "kernelObjectsMax", "kernelPromisesMax", "kpUnresolvedMax", "clistEntriesMax",
      "promiseQueuesLengthMax", "runQueueLengthMax", "vatsMax"};
  for (int i = 0; i < PS_SLOG_NCOUNTERS; i++)
    if (r->kc_has & (1u << i)) {
      f_count(&p, start_k[i], r->kc_first[i]);
      f_count(&p, end_k[i], r->kc_last[i]);
      f_count(&p, max_k[i], r->kc_max[i]);
    }
  if (r->cycles > 0) {
    double n = (double)r->cycles;
    f_int(&p, "finishedCycles", r->cycles);
    if (r->kc_has & (1u << PS_SLOG_KERNEL_OBJECTS))
      f_float(&p, "kernelObjectsPerCycle",
              (r->kc_last[PS_SLOG_KERNEL_OBJECTS] - r->kc_first[PS_SLOG_KERNEL_OBJECTS]) / n);
    if (r->kc_has & (1u << PS_SLOG_KP_UNRESOLVED))
      f_float(&p, "kpUnresolvedPerCycle",
              (r->kc_last[PS_SLOG_KP_UNRESOLVED] - r->kc_first[PS_SLOG_KP_UNRESOLVED]) / n);
    if (r->kc_has & (1u << PS_SLOG_CLIST_ENTRIES))
      f_float(&p, "clistEntriesPerCycle",
              (r->kc_last[PS_SLOG_CLIST_ENTRIES] - r->kc_first[PS_SLOG_CLIST_ENTRIES]) / n);
    else
      f_float(&p, "clistEntriesPerCycle",
              (double)(r->imports + r->exports - r->drops) / n);
  }
  return pt_emit(&p, "loadgen_slog_stage", r->time, em);
}
