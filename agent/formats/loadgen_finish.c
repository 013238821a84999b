/*
 * formats/loadgen_finish.c: perf-finish, the one line of a run that holds
 * its stages, their block and cycle summaries, every block and cycle, and
 * the run's summary (agent/formats/loadgen_private.h; docs/loadgen.md,
 * "The big line"). It can be ~10 MB.
 *
 * - The line is read once and kept with a cursor (phase, stage, item)
 *   naming the next point to emit, so a call refused by back-pressure
 *   (emit.h -EAGAIN) continues at the refused point without reading the
 *   line again; each block or cycle is read when its point is emitted, so
 *   the first points go out before the rest of the line has been read.
 * - The cursor holds positions in the line, moved along when the driver
 *   hands the same record over at another address.
 * - The objects looked up many times (the record, stats, the current
 *   stage, the current item) are read into member tables once.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen_private.h"

static const char *const INT_BLOCK[] = {
    "blockHeight",  "blockTime",     "chainBlockDuration", "computrons",
    "deliveries",   "firstCrankNum", "lastCrankNum",       "slogLines", NULL};
static const char *const INT_SUMMARY[] = {"blockCount", "cycleCount",
                                          "startBlockHeight", "endBlockHeight",
                                          NULL};
static const char *const SKIP_BLOCK[] = {"liveMode", NULL};

/* Time of stage-level points; 0 when the stage has no startedAt. */
static int stage_time(ps_parser *p, int64_t *t) {
  double s;
  if (!lg_json_finite(ps_jtable_get(&p->fin.stage_tab, "startedAt"), &s))
    return 0;
  *t = ps_seconds_to_ns(s);
  return 1;
}

static const char *stage_name(ps_parser *p) {
  return p->fin.stage.key.p ? lg_key_str(p, p->fin.stage) : NULL;
}

static int emit_stage_point(ps_parser *p, ps_emitter *em) {
  int64_t t;
  lg_pt_reset(p);
  if (!stage_time(p, &t)) {
    const char *name = stage_name(p);
    ps_emit_reject(em,
                   "perf-finish: stage %s has no startedAt; its stage and "
                   "summary points are left out",
                   name ? name : "?");
    return 0;
  }
  lg_tags_run(p);
  lg_tag_add(p, "stage", stage_name(p));
  static const char *const ints[] = {"stageIndex",       "blockCount",
                                     "cycleCount",       "previousCycleCount",
                                     "firstBlockHeight", "lastBlockHeight"};
  static const char *const floats[] = {"duration", "readyDuration",
                                       "chainInitDuration",
                                       "clientInitDuration",
                                       "loadgenInitDuration"};
  for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
    lg_add_int(p, ints[i], ps_jtable_get(&p->fin.stage_tab, ints[i]));
  for (size_t i = 0; i < sizeof floats / sizeof *floats; i++)
    lg_add_float(p, floats[i], ps_jtable_get(&p->fin.stage_tab, floats[i]));
  ps_jv cfg = ps_jtable_get(&p->fin.stage_tab, "stageConfig");
  ps_jv chain_only = lg_obj_get(p, cfg, "chainOnly");
  ps_jv dur = lg_obj_get(p, cfg, "durationConfig");
  lg_add_bool(p, "chainOnly", chain_only);
  lg_add_float(p, "durationConfig", dur);
  if (lg_is_object(cfg)) {
    /* the same test as perf_to_stats_csv.jq: chainOnly != true and
     * durationConfig != 0 (a missing value passes both) */
    double d;
    int loadgen = !lg_json_true(chain_only) && !(lg_jv_number(dur, &d) && d == 0);
    lg_add_bool_value(p, "loadgen", loadgen);
  }
  return lg_pt_emit(p, em, "loadgen_stage", t);
}

/* An item's members are looked up several times: read them once. */
static int item_table(ps_parser *p, ps_jmember item) {
  p->fin.item_tab.n = 0;
  return lg_is_object(item.val) ? ps_jtable_fill(&p->fin.item_tab, item.val, p->rec.ixp) : 0;
}

static int emit_summary(ps_parser *p, ps_emitter *em, ps_jmember item, int blocks) {
  int64_t t;
  if (!lg_is_object(item.val) || !item.key.p || !stage_time(p, &t))
    return 0;
  if (item_table(p, item) < 0)
    return -ENOMEM;
  lg_pt_reset(p);
  lg_tags_run(p);
  lg_tag_add(p, "stage", stage_name(p));
  lg_tag_add(p, blocks ? "summary" : "task", lg_key_str(p, item));
  lg_add_table_fields(p, &p->fin.item_tab, INT_SUMMARY, NULL);
  return lg_pt_emit(p, em, blocks ? "loadgen_stage_blocks" : "loadgen_stage_cycles",
                 t);
}

static int emit_block(ps_parser *p, ps_emitter *em, ps_jmember item) {
  if (!lg_is_object(item.val))
    return 0;
  if (item_table(p, item) < 0)
    return -ENOMEM;
  const ps_jtable *b = &p->fin.item_tab;
  lg_pt_reset(p);
  double s;
  if (!lg_json_finite(ps_jtable_get(b, "beginAt"), &s) &&
      !lg_json_finite(ps_jtable_get(b, "blockTime"), &s)) {
    const char *stage = stage_name(p), *key = item.key.p ? lg_key_str(p, item) : NULL;
    ps_emit_reject(em, "perf-finish: stage %s block %s has no beginAt or "
                       "blockTime; left out",
                   stage ? stage : "?", key ? key : "?");
    return 0;
  }
  ps_jv live = ps_jtable_get(b, "liveMode");
  lg_tags_run(p);
  lg_tag_add(p, "stage", stage_name(p));
  if (lg_json_bool(live))
    lg_tag_add(p, "live", lg_json_true(live) ? "true" : "false");
  lg_add_table_fields(p, b, INT_BLOCK, SKIP_BLOCK);
  return lg_pt_emit(p, em, "loadgen_block", ps_seconds_to_ns(s));
}

static int emit_cycle(ps_parser *p, ps_emitter *em, ps_jmember item) {
  if (!lg_is_object(item.val))
    return 0;
  if (item_table(p, item) < 0)
    return -ENOMEM;
  const ps_jtable *c = &p->fin.item_tab;
  lg_pt_reset(p);
  double s;
  const char *task = lg_jv_str(p, ps_jtable_get(c, "task"));
  if (!lg_json_finite(ps_jtable_get(c, "startedAt"), &s) || !task) {
    const char *stage = stage_name(p), *key = item.key.p ? lg_key_str(p, item) : NULL;
    ps_emit_reject(em, "perf-finish: stage %s cycle %s has no startedAt or "
                       "task; left out",
                   stage ? stage : "?", key ? key : "?");
    return 0;
  }
  lg_tags_run(p);
  lg_tag_add(p, "stage", stage_name(p));
  lg_tag_add(p, "task", task);
  lg_add_int(p, "seq", ps_jtable_get(c, "seq"));
  lg_add_bool(p, "success", ps_jtable_get(c, "success"));
  double ended;
  lg_add_bool_value(p, "finished", lg_json_finite(ps_jtable_get(c, "endedAt"), &ended));
  lg_add_float(p, "duration", ps_jtable_get(c, "duration"));
  lg_add_int(p, "blockCount", ps_jtable_get(c, "blockCount"));
  lg_add_int(p, "startBlockHeight", ps_jtable_get(c, "startBlockHeight"));
  lg_add_int(p, "endBlockHeight", ps_jtable_get(c, "endBlockHeight"));
  return lg_pt_emit(p, em, "loadgen_cycle", ps_seconds_to_ns(s));
}

static int emit_run(ps_parser *p, ps_emitter *em) {
  const ps_jtable *st = &p->fin.stats_tab;
  double s;
  int64_t t;
  if (lg_json_finite(ps_jtable_get(st, "startedAt"), &s))
    t = ps_seconds_to_ns(s);
  else if (p->facts.have_first_wall)
    t = ps_seconds_to_ns(p->facts.first_wall_s);
  else
    return 0;
  ps_jv meta = ps_jtable_get(st, "metadata");
  ps_jv test_data = lg_obj_get(p, meta, "testData");
  ps_jv cycles = ps_jtable_get(st, "cyclesSummary");
  lg_pt_reset(p);
  const char *profile = lg_jv_str(p, lg_obj_get(p, meta, "profile"));
  lg_tags_run(p);
  if (profile)
    lg_tag_add(p, "profile", profile);
  double d;
  /* the CSV's `success`: .duration != null */
  lg_add_bool_value(p, "success", lg_json_finite(ps_jtable_get(st, "duration"), &d));
  lg_add_float(p, "duration", ps_jtable_get(st, "duration"));
  ps_jv boot = ps_jtable_get(st, "chainBootstrapDuration");
  if (!lg_json_finite(boot, &d))
    boot = lg_obj_get(p, lg_obj_get(p, ps_jtable_get(st, "stages"), "0"), "chainInitDuration");
  lg_add_float(p, "chainBootstrapDuration", boot);
  lg_add_float(p, "walletDeployDuration", ps_jtable_get(st, "walletDeployDuration"));
  lg_add_float(p, "loadgenDeployDuration", ps_jtable_get(st, "loadgenDeployDuration"));
  lg_add_int(p, "totalBlockCount", ps_jtable_get(st, "totalBlockCount"));
  lg_add_int(p, "stageCount", ps_jtable_get(st, "stageCount"));
  lg_add_float(p, "cycleSuccessRate", lg_obj_get(p, cycles, "cycleSuccessRate"));
  lg_add_float(p, "cycleAvgDuration", lg_obj_get(p, cycles, "avgDuration"));
  ps_jv rev = lg_obj_get(p, test_data, "sdkRevision");
  const char *rev_s = lg_jv_str(p, rev);
  if (rev_s) {
    lg_add_string(p, "sdkRevision", rev_s);
  } else if (lg_json_finite(rev, &d)) {
    /* yargs-parser made an all-digit revision a number; the jq script
     * applies tostring, and so do we */
    if (d == floor(d) && fabs(d) < 1e15)
      snprintf(p->pt.s->strbuf, sizeof p->pt.s->strbuf, "%.0f", d);
    else
      snprintf(p->pt.s->strbuf, sizeof p->pt.s->strbuf, "%.17g", d);
    lg_add_string(p, "sdkRevision", p->pt.s->strbuf);
  }
  lg_add_int(p, "sdkCommitTime", lg_obj_get(p, test_data, "sdkCommitTime"));
  lg_add_object_fields(p, ps_jtable_get(st, "liveBlocksSummary"), INT_SUMMARY, NULL,
                    "live_");
  return lg_pt_emit(p, em, "loadgen_run", t);
}

/* Positions the item walk on the first member of the current stage's
 * `key` object (none when it is not an object). */
static void items_start(ps_parser *p, const char *key) {
  ps_jv o = ps_jtable_get(&p->fin.stage_tab, key);
  p->fin.item_it = ps_jv_iter_ix(lg_is_object(o) ? o : (ps_jv){NULL, NULL}, p->rec.ixp);
  if (!ps_jiter_next(&p->fin.item_it, &p->fin.item))
    p->fin.item.val.p = NULL;
}

/* Moves to the next stage (fin_stage.val.p NULL: none), with its table. */
static int stage_next(ps_parser *p) {
  if (!ps_jiter_next(&p->fin.stage_it, &p->fin.stage)) {
    p->fin.stage.val.p = NULL;
    return 0;
  }
  /* the stages object iterates its members; a member that is not an
   * object has no members to look up (the old tree's lookups found none) */
  p->fin.stage_tab.n = 0;
  return lg_is_object(p->fin.stage.val)
             ? ps_jtable_fill(&p->fin.stage_tab, p->fin.stage.val, p->rec.ixp)
             : 0;
}

/* The cursor's positions point into the text the record was read from;
 * the driver may hand the same record over at another address. */
static void rebase_jv(ps_jv *v, ptrdiff_t d) {
  if (v->p) {
    v->p += d;
    v->end += d;
  }
}

static void rebase_member(ps_jmember *m, ptrdiff_t d) {
  rebase_jv(&m->key, d);
  rebase_jv(&m->val, d);
}

static void rebase_table(ps_jtable *t, ptrdiff_t d) {
  for (size_t i = 0; i < t->n; i++)
    rebase_member(&t->m[i], d);
}

void lg_finish_rebase(ps_parser *p, const char *data) {
  ptrdiff_t d = data - p->fin.base;
  if (p->fin.owned || d == 0)
    return;
  lg_record_rebase(&p->rec, d);
  rebase_jv(&p->fin.root, d);
  rebase_jv(&p->fin.stats, d);
  rebase_table(&p->root_tab, d);
  rebase_table(&p->fin.stats_tab, d);
  rebase_table(&p->fin.stage_tab, d);
  rebase_member(&p->fin.stage, d);
  rebase_member(&p->fin.item, d);
  if (p->fin.stage_it.p) {
    p->fin.stage_it.p += d;
    p->fin.stage_it.end += d;
  }
  if (p->fin.item_it.p) {
    p->fin.item_it.p += d;
    p->fin.item_it.end += d;
  }
  p->fin.base = data;
}

/* What only a long record needed, given back once it is done: a run's
 * perf-finish is its last line, and its parser stays open as long as the
 * file is tracked (the agent's life). Kept, the index (512 KB) and the
 * tables and arena of every run ever read were most of a long-running
 * agent's growth (docs/benchmarks.md, "A year of nightly runs"). The next
 * long record, if one comes, allocates them again. */
static void release_long(ps_parser *p) {
  lg_record_free(&p->rec);
  ps_jtable_free(&p->root_tab);
  lg_finish_free(&p->fin);
  lg_point_free(p);
}

void lg_finish_free(lg_finish *f) {
  ps_jtable *tabs[] = {&f->stats_tab, &f->stage_tab, &f->item_tab};
  for (size_t i = 0; i < sizeof tabs / sizeof tabs[0]; i++)
    ps_jtable_free(tabs[i]);
}

/* Walks perf-finish from the cursor. Returns 0 when every point was
 * emitted, -EAGAIN with the cursor on the refused point, or another
 * negative errno (the cursor is then dropped). */
int lg_finish_continue(ps_parser *p, ps_emitter *em) {
  int rc = 0;
  while (rc == 0) {
    switch (p->fin.phase) {
    case FP_EVENT:
      rc = lg_emit_event(p, em, p->fin.root, &p->root_tab, ps_jtable_get(&p->root_tab, "elapsed"),
                         "perf-finish", p->fin.envelope_stage, ps_seconds_to_ns(p->fin.wall));
      if (rc == 0) {
        ps_jv stages = ps_jtable_get(&p->fin.stats_tab, "stages");
        p->fin.stage_it = ps_jv_iter_ix(lg_is_object(stages) ? stages : (ps_jv){NULL, NULL},
                                        p->rec.ixp);
        if ((rc = stage_next(p)) == 0)
          p->fin.phase = FP_STAGE;
      }
      break;
    case FP_STAGE:
      if (!p->fin.stage.val.p) {
        p->fin.phase = FP_RUN;
        break;
      }
      rc = emit_stage_point(p, em);
      if (rc == 0) {
        p->fin.phase = FP_BLOCKSUM;
        items_start(p, "blocksSummaries");
      }
      break;
    case FP_BLOCKSUM:
    case FP_CYCLESUM:
    case FP_BLOCKS:
    case FP_CYCLES:
      if (!p->fin.item.val.p) {
        static const char *const next_key[] = {
            [FP_BLOCKSUM] = "cyclesSummaries",
            [FP_CYCLESUM] = "blocks",
            [FP_BLOCKS] = "cycles",
        };
        if (p->fin.phase == FP_CYCLES) {
          rc = stage_next(p);
          p->fin.phase = FP_STAGE;
        } else {
          items_start(p, next_key[p->fin.phase]);
          p->fin.phase++;
        }
        break;
      }
      if (p->fin.phase == FP_BLOCKSUM || p->fin.phase == FP_CYCLESUM)
        rc = emit_summary(p, em, p->fin.item, p->fin.phase == FP_BLOCKSUM);
      else if (p->fin.phase == FP_BLOCKS)
        rc = emit_block(p, em, p->fin.item);
      else
        rc = emit_cycle(p, em, p->fin.item);
      if (rc == 0 && !ps_jiter_next(&p->fin.item_it, &p->fin.item))
        p->fin.item.val.p = NULL;
      break;
    case FP_RUN:
      rc = lg_is_object(p->fin.stats) ? emit_run(p, em) : 0;
      if (rc == 0)
        p->fin.phase = FP_DONE;
      break;
    case FP_DONE:
      lg_finish_reset(p);
      release_long(p);
      return 0;
    }
  }
  if (rc != -EAGAIN) {
    lg_finish_reset(p);
    release_long(p);
  }
  return rc;
}

static void finish_facts(ps_parser *p) {
  const ps_jtable *st = &p->fin.stats_tab;
  double d;
  p->facts.finish_seen = 1;
  if ((p->facts.have_started_at = lg_json_finite(ps_jtable_get(st, "startedAt"), &d)))
    p->facts.started_at_s = d;
  if ((p->facts.have_ended_at = lg_json_finite(ps_jtable_get(st, "endedAt"), &d)))
    p->facts.ended_at_s = d;
  if ((p->facts.have_duration = lg_json_finite(ps_jtable_get(st, "duration"), &d)))
    p->facts.duration_s = d;
  lg_pt_reset(p);
  const char *profile = lg_jv_str(p, lg_obj_get(p, ps_jtable_get(st, "metadata"), "profile"));
  if (profile)
    snprintf(p->facts.profile, sizeof p->facts.profile, "%s", profile);
}

int lg_finish_start(ps_parser *p, ps_emitter *em, const lg_finish_line *line) {
  p->fin.stats = ps_jtable_get(&p->root_tab, "stats");
  if (ps_jtable_fill(&p->fin.stats_tab,
                     lg_is_object(p->fin.stats) ? p->fin.stats : (ps_jv){NULL, NULL},
                     p->rec.ixp) < 0)
    return -ENOMEM;
  finish_facts(p);
  p->fin.active = 1;
  p->fin.owned = line->owned;
  p->fin.base = line->owned ? p->rec.norm.data : line->data;
  p->fin.root = line->root;
  p->fin.len = line->len;
  p->fin.key = line->key;
  p->fin.wall = line->wall;
  memcpy(p->fin.envelope_stage, line->stage, sizeof p->fin.envelope_stage);
  p->fin.phase = FP_EVENT;
  return lg_finish_continue(p, em);
}

void lg_finish_reset(ps_parser *p) {
  p->fin.active = 0;
  p->fin.owned = 0;
  p->fin.base = NULL;
  p->fin.len = 0;
  p->fin.key = 0;
  p->fin.phase = FP_DONE;
  p->root_tab.n = p->fin.stats_tab.n = p->fin.stage_tab.n = 0;
  lg_record_trim(&p->rec);
}

