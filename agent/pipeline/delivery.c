/*
 * delivery.c: the emitter of every tracked file, the batcher and the
 * sink's answers. See include/pipeline/delivery.h.
 *
 * Design
 * - A point is encoded once, straight into the open batch's body
 *   (influx/batch.h ps_batcher_body/commit): no scratch copy per point.
 * - A loop turn encodes at most POINTS_PER_TURN points: a 9 MB perf-finish
 *   record holds ~25,000, and emitting them all in one turn (until
 *   back-pressure) kept the loop from sending for tens of milliseconds.
 *   About one default batch.
 * - A partly filled batch is sent flush_interval_ms after its first point,
 *   so a trickle of points is not held back waiting for a full batch.
 */
#include "pipeline/delivery.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/log.h"
#include "core/util.h"
#include "influx/lp_encode.h"

#define MOD "pipeline"
#define POINTS_PER_TURN 5000

static void flush_cb(uv_timer_t *t) {
  pl_delivery *d = t->data;
  ps_pbatch *b = d->bt.open;
  if (!b || !b->b.npoints)
    return;
  uint64_t age = ps_now_ms() - b->created_ms;
  uint64_t ivl = (uint64_t)d->sh->cfg->batch.flush_interval_ms;
  if (age + 1 < ivl) {
    uv_timer_start(&d->flush_timer, flush_cb, ivl - age, 0);
    return;
  }
  ps_batcher_flush(&d->bt);
}

static void arm_flush(pl_delivery *d) {
  if (!uv_is_active((uv_handle_t *)&d->flush_timer))
    uv_timer_start(&d->flush_timer, flush_cb, (uint64_t)d->sh->cfg->batch.flush_interval_ms,
                   0);
}

static inline uint64_t length_bit(size_t len) { return (uint64_t)1 << (len < 63 ? len : 63); }

/* On the hot path: most points are of a measurement nobody subscribed to,
 * and most of those fail the first-byte or the length test. A comparison
 * with each name that shares the first byte was 4 % of `run`'s CPU on a
 * file of "bench" points beside the taps "benchmarker_*"
 * (docs/benchmarks.md). */
static inline int tapped(const pl_tap_set *t, const char *m) {
  unsigned char c = (unsigned char)m[0];
  if (!(t->first[c >> 3] & (1u << (c & 7))))
    return 0;
  size_t len = strlen(m);
  if (!(t->lengths & length_bit(len)))
    return 0;
  for (size_t i = 0; i < t->n; i++)
    if (t->len[i] == len && memcmp(t->name[i], m, len) == 0)
      return 1;
  return 0;
}

int pl_delivery_subscribe(pl_delivery *d, const char *measurement) {
  pl_tap_set *t = &d->taps;
  for (size_t i = 0; i < t->n; i++)
    if (strcmp(t->name[i], measurement) == 0)
      return 0;
  if (t->n == PL_TAP_MAX)
    return -ENOSPC;
  unsigned char c = (unsigned char)measurement[0];
  t->first[c >> 3] |= (unsigned char)(1u << (c & 7));
  t->len[t->n] = strlen(measurement);
  t->lengths |= length_bit(t->len[t->n]);
  t->name[t->n++] = measurement;
  return 0;
}

int pl_delivery_point(void *file, const ps_point *p, const ps_origin *o) {
  char where[PATH_MAX + 32];
  pl_file *f = file;
  pl_delivery *d = f->emit_ctx;
  if (ps_batcher_full(&d->bt))
    return ps_batcher_refuse(&d->bt);
  if (d->turn_points >= POINTS_PER_TURN) {
    f->yielded = 1;
    return -EAGAIN;
  }
  d->turn_points++;
  const char *reason = NULL;
  ps_buf *body;
  size_t at;
  int rc = ps_batcher_body(&d->bt, &body, &at);
  if (rc < 0)
    return rc;
  int was_empty = !d->bt.open->b.npoints;
  rc = ps_lp_encode(body, p, d->tags, d->ntags, &reason);
  if (rc < 0) {
    d->sh->n.points_refused++;
    ps_origin_str(where, sizeof where, f->path, o->line);
    ps_log_limited(PS_LOG_WARNING, "lp", pl_log_key("lp", f->path), 10,
                   "%s: point refused: %s", where, reason ? reason : strerror(-rc));
    pl_commit_error(d->commit, "%s: point refused: %s", where,
                    reason ? reason : strerror(-rc));
    return 0;
  }
  rc = ps_batcher_commit(&d->bt, &f->cur, at, o);
  if (rc == 0) {
    if (was_empty && d->bt.open && d->bt.open->b.npoints)
      arm_flush(d);
    if (d->hooks.tap && tapped(&d->taps, p->measurement))
      d->hooks.tap(d->hooks.ctx, p, f->src, f->path);
  }
  return rc;
}

void pl_delivery_file_turn(pl_file *f) { f->yielded = 0; }

int pl_delivery_take_rejected(pl_file *f) {
  int rejected = f->record_rejected;
  f->record_rejected = 0;
  return rejected;
}

void pl_delivery_reject(void *file, const ps_origin *o, const char *reason) {
  char where[PATH_MAX + 32];
  pl_file *f = file;
  pl_delivery *d = f->emit_ctx;
  f->record_rejected = 1;
  ps_origin_str(where, sizeof where, f->path, o->line);
  ps_log_limited(PS_LOG_WARNING, "parse", pl_log_key("parse", f->path), 10, "%s: %s",
                 where, reason);
  pl_commit_error(d->commit, "%s: %s", where, reason);
}

void pl_delivery_new_turn(pl_delivery *d) { d->turn_points = 0; }

int pl_delivery_full(const pl_delivery *d) { return ps_batcher_full(&d->bt); }

static int submit_cb(void *ctx, ps_pbatch *b) {
  pl_delivery *d = ctx;
  int rc = ps_sink_submit(d->sink, &b->b);
  if (rc < 0)
    ps_log_limited(PS_LOG_ERROR, MOD, "submit", 10, "cannot submit a batch (%s)",
                   strerror(-rc));
  return rc;
}

static void cursor_committed_cb(void *ctx, ps_cursor *c) {
  pl_delivery *d = ctx;
  pl_file *f = c->owner;
  pl_commit_moved(d->commit);
  if (f->retired)
    pl_registry_maybe_free(d->reg, f);
}

/* Batches in flight, aux or not, or points in the open batch. */
static int sending(const pl_delivery *d) {
  return (d->aux_in_flight || d->bt.inflight_count || (d->bt.open && d->bt.open->b.npoints)) &&
         !uv_is_closing((uv_handle_t *)&d->flush_timer);
}

static void sink_done(ps_sink *sink, ps_batch *batch, int status, size_t rejected) {
  pl_delivery *d = ps_sink_data(sink);
  ps_pbatch *b = batch->data;
  if (status == 0)
    d->last_answer_ms = uv_now(d->sh->loop);
  d->sh->n.server_rejected += rejected;
  if (b->on_done) {
    void (*on_done)(void *, int) = b->on_done;
    void *arg = b->done_arg;
    d->aux_in_flight--;
    /* its body goes to the next aux batch while more are coming (others
     * in flight, or the batcher busy with the files they come beside) */
    if (sending(d))
      ps_body_pool_keep(&d->aux_spares, &b->b.body, 0);
    ps_pbatch_free(b);
    on_done(arg, status == 0);
  } else {
    ps_batcher_done(&d->bt, b, status == 0);
  }
  /* the answer that leaves nothing to send frees them: an idle agent
   * keeps no aux bodies */
  if (d->aux_spares.n && !sending(d))
    ps_body_pool_free(&d->aux_spares);
  if (d->hooks.answered)
    d->hooks.answered(d->hooks.ctx);
}

static void sink_reject(ps_sink *sink, const ps_origin *o, const char *line, size_t len,
                        const char *reason) {
  char where[PATH_MAX + 32];
  pl_delivery *d = ps_sink_data(sink);
  (void)line;
  (void)len;
  const char *file = o && o->file ? o->file : "?";
  ps_origin_str(where, sizeof where, file, o ? o->line : 0);
  ps_log_limited(PS_LOG_WARNING, "sink", pl_log_key("sink", file), 10,
                 "%s: rejected by the server: %s", where, reason);
  pl_commit_error(d->commit, "%s: rejected by the server: %s", where, reason);
}

static void sink_missing_database(ps_sink *sink, void *data) {
  (void)sink;
  pl_delivery *d = data;
  if (d->hooks.missing_database)
    d->hooks.missing_database(d->hooks.ctx);
}

static void when_utc(int64_t t, char *out, size_t n) {
  time_t tt = (time_t)t;
  struct tm tm;
  if (!gmtime_r(&tt, &tm) || !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
    snprintf(out, n, "?");
}

/* The sink's trouble episode, for `perfship status` while the agent runs
 * (docs/operations.md, "Read perfship status"): begun or changed, it is
 * also one of the last errors; over, it says how long it lasted. One entry
 * at a time (pl_commit_episode), the newest episode's. */
static void sink_trouble_cb(ps_sink *sink, void *data) {
  pl_delivery *d = data;
  const ps_sink_trouble *t = ps_sink_get_trouble(sink);
  char since[32];
  if (t->since_s) {
    when_utc(t->since_s, since, sizeof since);
    if (!d->trouble_since_s)
      d->trouble_since_s = t->since_s;
    if (t->status)
      pl_commit_episode(d->commit, "server: ",
                        "server: HTTP %ld (%s) since %s; the data is kept and retried",
                        t->status, t->text, since);
    else
      pl_commit_episode(d->commit, "server: ",
                        "server: unreachable (%s) since %s; the data is kept and retried",
                        t->text, since);
  } else if (d->trouble_since_s) {
    when_utc(d->trouble_since_s, since, sizeof since);
    pl_commit_episode(d->commit, "server: ", "server: answers again (it failed since %s)",
                      since);
    d->trouble_since_s = 0;
  }
  pl_commit_moved(d->commit);
}

/* State section "server": the trouble now, {} when there is none (an
 * empty object rather than none, so an old episode is not kept). */
static char *server_json(void *ctx) {
  pl_delivery *d = ctx;
  const ps_sink_trouble *t = ps_sink_get_trouble(d->sink);
  cJSON *o = cJSON_CreateObject();
  if (o && t && t->since_s) {
    cJSON_AddNumberToObject(o, "status", (double)t->status);
    cJSON_AddStringToObject(o, "message", t->text);
    cJSON_AddNumberToObject(o, "since", (double)t->since_s);
  }
  char *text = o ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return text;
}

/* The global tags, and `host` = the machine's name when the configuration
 * sets none: a machine is part of what is measured, and two agents that
 * share a database must not write one series (docs/schema.md). */
static int build_tags(pl_delivery *d, const ps_config *cfg) {
  ps_tag *tags;
  size_t n;
  if (ps_config_global_tags(cfg, d->hostname, sizeof d->hostname, &tags, &n) < 0)
    return -ENOMEM;
  free(d->tags);
  d->tags = tags;
  d->ntags = n;
  return 0;
}

int pl_delivery_init(pl_delivery *d, pl_shared *sh, pl_registry *reg, pl_commit *commit,
                     const pl_delivery_hooks *hooks) {
  memset(d, 0, sizeof *d);
  d->aux_spares.max = PL_AUX_SPARES;
  d->sh = sh;
  d->reg = reg;
  d->commit = commit;
  d->hooks = *hooks;
  d->last_answer_ms = uv_now(sh->loop);
  const ps_config *cfg = sh->cfg;
  int rc = build_tags(d, cfg);
  if (rc < 0)
    return rc;
  rc = ps_sink_init(&d->sink, sh->loop, cfg, sink_done, sink_reject, d);
  if (rc < 0) {
    free(d->tags);
    d->tags = NULL;
    return rc;
  }
  ps_sink_on_missing_database(d->sink, sink_missing_database);
  ps_sink_on_trouble(d->sink, sink_trouble_cb);
  pl_commit_add_section(commit, "server", server_json, d);
  ps_batcher_init(&d->bt, (size_t)cfg->batch.max_points, (size_t)cfg->batch.max_bytes,
                  (size_t)cfg->batch.max_pending_bytes, submit_cb, cursor_committed_cb, d);
  uv_timer_init(sh->loop, &d->flush_timer);
  d->flush_timer.data = d;
  pl_registry_set_emitter(reg, pl_delivery_point, pl_delivery_reject, d);
  return 0;
}

int pl_delivery_reconfigure(pl_delivery *d, const ps_config *cfg) {
  ps_batcher_limits(&d->bt, (size_t)cfg->batch.max_points, (size_t)cfg->batch.max_bytes,
                    (size_t)cfg->batch.max_pending_bytes);
  return build_tags(d, cfg);
}

int pl_delivery_encode_aux(void *dv, ps_pbatch *b, const ps_point *p, const ps_origin *o,
                           const char **reason) {
  pl_delivery *d = dv;
  if (!b->b.body.data)
    ps_body_pool_take(&d->aux_spares, &b->b.body);
  size_t at = b->b.body.len;
  int rc = ps_lp_encode(&b->b.body, p, d->tags, d->ntags, reason);
  if (rc < 0)
    return rc;
  return ps_batch_add_line_origin(&b->b, at, o);
}

int pl_delivery_send_aux(void *dv, ps_pbatch *b, void (*on_done)(void *arg, int acked),
                         void *arg) {
  pl_delivery *d = dv;
  b->on_done = on_done;
  b->done_arg = arg;
  int rc = ps_sink_submit(d->sink, &b->b);
  if (rc < 0) {
    b->on_done = NULL;
    b->done_arg = NULL;
    return rc;
  }
  d->aux_in_flight++;
  return 0;
}

pl_aux_out pl_delivery_aux_out(pl_delivery *d) {
  pl_aux_out out = {pl_delivery_encode_aux, pl_delivery_send_aux, d};
  return out;
}

void pl_delivery_flush(pl_delivery *d) {
  if (d->bt.open && d->bt.open->b.npoints)
    ps_batcher_flush(&d->bt);
}

int pl_delivery_quiet(const pl_delivery *d) {
  return !(d->bt.open && d->bt.open->b.npoints) && !d->bt.inflight_count &&
         !d->aux_in_flight;
}

size_t pl_delivery_pending_points(const pl_delivery *d) { return d->bt.pending_points; }

uint64_t pl_delivery_oldest_ms(const pl_delivery *d) {
  const ps_pbatch *old = ps_batcher_oldest(&d->bt);
  return old ? ps_now_ms() - old->created_ms : 0;
}

const ps_sink_stats *pl_delivery_sink_stats(const pl_delivery *d) {
  return ps_sink_get_stats(d->sink);
}

size_t pl_delivery_waiting(const pl_delivery *d) { return ps_sink_in_flight(d->sink); }

void pl_delivery_hold(pl_delivery *d, int hold) { ps_sink_hold(d->sink, hold); }

static void sink_closed(void *arg) {
  pl_delivery *d = arg;
  d->sink = NULL;
}

void pl_delivery_close(pl_delivery *d) {
  if (!uv_is_closing((uv_handle_t *)&d->flush_timer))
    uv_close((uv_handle_t *)&d->flush_timer, NULL);
  /* Batches still in flight are cancelled: never acknowledged, so their
   * offsets stay where they are and a restart re-sends them. */
  if (d->sink)
    ps_sink_close(d->sink, sink_closed, d);
  ps_batcher_free(&d->bt);
  ps_body_pool_free(&d->aux_spares);
}

void pl_delivery_free(pl_delivery *d) {
  free(d->tags);
  d->tags = NULL;
}
