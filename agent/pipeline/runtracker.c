/*
 * runtracker.c: run folders, their markers and run events.
 * See include/pipeline/runtracker.h.
 *
 * Design
 * - A run is found through its files: the folder holding perf.jsonl or
 *   exit_code. Slogs, exit_code and docker.log changes count as activity
 *   too (they decide the end and the stall clock).
 * - Markers are sent outside the checkpoints (aux batches), one batch per
 *   evaluation, and remembered once acknowledged. Re-sending a marker is
 *   harmless (same series and time: InfluxDB merges), so "once" may be
 *   approximate after a crash.
 */
#include "pipeline/runtracker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/log.h"
#include "core/util.h"
#include "input/feed_run.h"

#define EVALUATE_DELAY_MS 200

struct pl_run {
  pl_run *next;
  pl_runs *t;
  char *folder;
  int64_t first_seen; /* unix seconds */
  int known;          /* backfill decided (persisted) */
  int backfill;
  int start_acked;
  char end_acked[16]; /* status of the last acknowledged end marker */
  int stall_acked;
  int recovered;      /* new data was seen after the stall marker */
  int ended;
  int dirty;
  int in_flight;
  int pending_which;
  ps_run_view *pending; /* the view the markers in flight were made from */
  int64_t newest_ns;    /* newest modification time noticed in the folder */
  ps_run_facts facts;   /* restored from the state, until a parser has them */
  int have_facts;
};

static void timer_cb(uv_timer_t *h);

void pl_runs_init(pl_runs *t, pl_shared *sh, pl_registry *reg, pl_reader *rd,
                  const pl_aux_out *out, pl_commit *commit, const pl_runs_hooks *hooks) {
  memset(t, 0, sizeof *t);
  t->sh = sh;
  t->reg = reg;
  t->rd = rd;
  t->out = *out;
  t->commit = commit;
  if (hooks)
    t->hooks = *hooks;
  uv_timer_init(sh->loop, &t->timer);
  t->timer.data = t;
}

static pl_run *run_find(pl_runs *t, const char *folder) {
  for (pl_run *r = t->runs; r; r = r->next)
    if (strcmp(r->folder, folder) == 0)
      return r;
  return NULL;
}

static pl_run *run_add(pl_runs *t, const char *folder) {
  pl_run *r = calloc(1, sizeof *r);
  if (!r || !(r->folder = strdup(folder))) {
    free(r);
    return NULL;
  }
  r->t = t;
  r->next = t->runs;
  t->runs = r;
  return r;
}

static void run_due(pl_runs *t, pl_run *r) {
  r->dirty = 1;
  if (!t->sh->stopping && !uv_is_active((uv_handle_t *)&t->timer))
    uv_timer_start(&t->timer, timer_cb, EVALUATE_DELAY_MS, 0);
}

void pl_runs_note_path(pl_runs *t, const ps_source_cfg *src, const char *path, int force) {
  const ps_format_ops *ops = ps_format_ops_get(src->format);
  char folder[4096];
  if (!ops || !ops->run_folder || !ops->run_folder(path, folder, sizeof folder))
    return;
  pl_run *r = run_find(t, folder);
  if (!r) {
    if (!ps_run_is_folder(folder) || !(r = run_add(t, folder)))
      return;
    force = 1;
  }
  struct stat st;
  if (stat(path, &st) == 0) {
    int64_t m = ps_stat_mtime_ns(&st);
    if (m > r->newest_ns)
      r->newest_ns = m;
    else if (!force)
      return;
  }
  run_due(t, r);
}

static pl_file *run_perf_file(pl_runs *t, const pl_run *r) {
  char p[4200];
  snprintf(p, sizeof p, "%s/perf.jsonl", r->folder);
  return pl_registry_find_any_by_path(t->reg, p, PS_INPUT_LINES);
}

static const ps_run_facts *run_facts(pl_runs *t, pl_run *r) {
  pl_file *f = run_perf_file(t, r);
  const ps_run_facts *fa =
      f && f->parser && f->ops->run_facts ? f->ops->run_facts(f->parser) : NULL;
  if (fa)
    return fa;
  return r->have_facts ? &r->facts : NULL;
}

/* --- markers ------------------------------------------------------------- */

typedef struct marker_ctx {
  pl_runs *t;
  ps_pbatch *b;
  pl_run *r;
} marker_ctx;

static int marker_point(void *ctx, const ps_point *p, const ps_origin *o) {
  marker_ctx *m = ctx;
  const char *reason = NULL;
  ps_origin org = {m->r->folder, o ? o->line : 0};
  int rc = m->t->out.encode(m->t->out.ctx, m->b, p, &org, &reason);
  if (rc < 0 && reason) {
    ps_log_limited(PS_LOG_WARNING, "runs", pl_log_key("marker", m->r->folder), 60,
                   "%s: marker refused: %s", m->r->folder, reason);
    return 0;
  }
  return rc;
}

static void marker_reject(void *ctx, const ps_origin *o, const char *reason) {
  marker_ctx *m = ctx;
  (void)o;
  ps_log_limited(PS_LOG_WARNING, "runs", pl_log_key("runs", m->r->folder), 60, "%s: %s",
                 m->r->folder, reason);
}

static void report(pl_runs *t, pl_run *r, pl_run_event_kind kind, const ps_run_view *v,
                   int after_stall) {
  if (!t->hooks.event)
    return;
  pl_run_event ev = {kind, r->folder, v, r->backfill, after_stall};
  t->hooks.event(t->hooks.ctx, &ev);
}

static void markers_done(void *arg, int acked) {
  pl_run *r = arg;
  pl_runs *t = r->t;
  ps_run_view *v = r->pending;
  r->pending = NULL;
  r->in_flight = 0;
  if (!acked) {
    r->dirty = 1; /* tried again at the next change or rescan */
    free(v);
    return;
  }
  const char *status = ps_run_status_name(v->status);
  if (r->pending_which & PS_RUN_MARK_START) {
    r->start_acked = 1;
    report(t, r, PL_RUN_STARTED, v, 0);
  }
  if (r->pending_which & PS_RUN_MARK_END) {
    if (v->state == PS_RUN_STALLED) {
      r->stall_acked = 1;
      report(t, r, PL_RUN_STALLED, v, 0);
    } else {
      snprintf(r->end_acked, sizeof r->end_acked, "%s", status);
      report(t, r, PL_RUN_ENDED, v, r->stall_acked && !r->recovered);
    }
  }
  free(v);
  pl_commit_moved(t->commit);
  run_due(t, r); /* a start may have been sent before the end was known */
}

/* The view of a judged run: 0, or -1 when it cannot be judged now. */
static int judge(pl_runs *t, pl_run *r, ps_run_view *view) {
  pl_file *f = run_perf_file(t, r);
  struct stat st;
  /* perf.jsonl not read to its end yet: judging now would call a good run
   * failed (no perf-finish seen). It is judged again when it is. */
  if (f && (f->queued || f->paused ||
            (f->fd >= 0 && fstat(f->fd, &st) == 0 && f->tail.read_off < (uint64_t)st.st_size)))
    return -1;
  r->dirty = 0;
  ps_buf err;
  ps_buf_init(&err, 1024);
  int64_t now = (int64_t)time(NULL), stall = t->sh->cfg->alerts.stall_after_s;
  int rc = ps_run_evaluate(r->folder, now, stall, run_facts(t, r), view, &err);
  if (rc == 0 && view->state == PS_RUN_ENDED && f && t->rd && ps_tail_buffered(&f->tail)) {
    pl_reader_read_partial(t->rd, f);
    rc = ps_run_evaluate(r->folder, now, stall, run_facts(t, r), view, &err);
  }
  if (rc < 0)
    ps_log_limited(PS_LOG_WARNING, "runs", pl_log_key("runs", r->folder), 300, "%s: %s",
                   r->folder, err.data ? err.data : strerror(-rc));
  ps_buf_free(&err);
  if (rc < 0)
    return -1;
  if (!r->known) {
    r->known = 1;
    r->backfill = view->state == PS_RUN_ENDED;
    r->first_seen = now;
    t->sh->state_dirty = 1;
  }
  r->ended = view->state == PS_RUN_ENDED;
  return 0;
}

static void run_evaluate(pl_runs *t, pl_run *r) {
  if (r->in_flight)
    return; /* looked at again when its markers are answered */
  ps_run_view *view = malloc(sizeof *view);
  if (!view)
    return;
  if (judge(t, r, view) < 0) {
    free(view);
    return;
  }
  if (view->state == PS_RUN_RUNNING && r->stall_acked && !r->recovered) {
    r->recovered = 1;
    t->sh->state_dirty = 1;
    report(t, r, PL_RUN_RESUMED, view, 1);
  }
  int which = 0;
  const char *status = ps_run_status_name(view->status);
  if (view->have_start && !r->start_acked)
    which |= PS_RUN_MARK_START;
  if (view->state == PS_RUN_ENDED && strcmp(r->end_acked, status) != 0)
    which |= PS_RUN_MARK_END;
  if (view->state == PS_RUN_STALLED && !r->stall_acked)
    which |= PS_RUN_MARK_END;
  ps_pbatch *b = which && !t->sh->stopping ? ps_pbatch_new() : NULL;
  if (!b) {
    free(view);
    return;
  }
  marker_ctx m = {t, b, r};
  ps_emitter em = {.point = marker_point, .reject = marker_reject, .ctx = &m,
                   .origin = {r->folder, 0}};
  int rc = ps_run_emit_markers(view, r->backfill, which, &em);
  if (rc < 0 || b->b.npoints == 0 || t->out.send(t->out.ctx, b, markers_done, r) < 0) {
    ps_pbatch_free(b);
    free(view);
    return;
  }
  r->in_flight = 1;
  r->pending_which = which;
  r->pending = view;
  PS_INFO("runs", "%s: %s%s%s (%s)", r->folder, which & PS_RUN_MARK_START ? "start" : "",
          which == (PS_RUN_MARK_START | PS_RUN_MARK_END) ? " and " : "",
          which & PS_RUN_MARK_END ? "end" : "", status);
}

static void evaluate_due(pl_runs *t) {
  for (pl_run *r = t->runs; r; r = r->next)
    if (r->dirty)
      run_evaluate(t, r);
}

static void timer_cb(uv_timer_t *h) { evaluate_due(h->data); }

void pl_runs_mark_unended(pl_runs *t) {
  for (pl_run *r = t->runs; r; r = r->next)
    if (!r->ended)
      run_due(t, r);
}

void pl_runs_evaluate_all(pl_runs *t) {
  t->final = 1;
  for (pl_run *r = t->runs; r; r = r->next)
    r->dirty = 1;
  evaluate_due(t);
}

int pl_runs_in_flight(const pl_runs *t) {
  for (const pl_run *r = t->runs; r; r = r->next)
    if (r->in_flight)
      return 1;
  return 0;
}

void pl_runs_progress(pl_runs *t, size_t *runs, size_t *runs_done) {
  *runs = *runs_done = 0;
  for (pl_run *r = t->runs; r; r = r->next) {
    (*runs)++;
    pl_file *f = run_perf_file(t, r);
    /* Judged, its markers answered, its perf.jsonl read and acknowledged
     * (after the closing evaluation a dirty flag is only a re-check). */
    *runs_done += r->known && !r->in_flight && (!r->dirty || t->final) &&
                  (!f || pl_reader_file_done(f));
  }
}

/* --- persistence ---------------------------------------------------------- */

char *pl_runs_to_json(pl_runs *t) {
  cJSON *root = cJSON_CreateObject();
  if (!root)
    return NULL;
  ps_buf fj;
  ps_buf_init(&fj, 0);
  for (pl_run *r = t->runs; r; r = r->next) {
    if (!r->known)
      continue;
    cJSON *o = cJSON_CreateObject();
    if (!o)
      break;
    cJSON_AddNumberToObject(o, "first_seen", (double)r->first_seen);
    cJSON_AddBoolToObject(o, "backfill", r->backfill);
    cJSON_AddBoolToObject(o, "start_acked", r->start_acked);
    cJSON_AddStringToObject(o, "end_acked", r->end_acked);
    cJSON_AddBoolToObject(o, "stall_acked", r->stall_acked);
    if (r->recovered)
      cJSON_AddBoolToObject(o, "recovered", 1);
    const ps_run_facts *fa = run_facts(t, r);
    ps_buf_reset(&fj);
    if (fa && ps_run_facts_to_json(fa, &fj) == 0 && fj.data) {
      cJSON *facts = cJSON_Parse(fj.data);
      if (facts)
        cJSON_AddItemToObject(o, "facts", facts);
    }
    cJSON_AddItemToObject(root, r->folder, o);
  }
  ps_buf_free(&fj);
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return text;
}

void pl_runs_from_json(pl_runs *t, const char *text) {
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  const cJSON *o;
  cJSON_ArrayForEach(o, root) {
    if (!cJSON_IsObject(o) || !o->string)
      continue;
    pl_run *r = run_add(t, o->string);
    if (!r)
      break;
    r->known = 1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "first_seen");
    r->first_seen = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
    r->backfill = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "backfill"));
    r->start_acked = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "start_acked"));
    r->stall_acked = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "stall_acked"));
    r->recovered = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "recovered"));
    v = cJSON_GetObjectItemCaseSensitive(o, "end_acked");
    if (cJSON_IsString(v))
      snprintf(r->end_acked, sizeof r->end_acked, "%s", v->valuestring);
    v = cJSON_GetObjectItemCaseSensitive(o, "facts");
    if (v) {
      char *ft = cJSON_PrintUnformatted(v);
      if (ft && ps_run_facts_from_json(ft, &r->facts) == 0)
        r->have_facts = 1;
      free(ft);
    }
  }
  cJSON_Delete(root);
}

void pl_runs_restore_facts(pl_runs *t, pl_file *f) {
  char folder[4096];
  if (!f->parser || !f->ops->set_run_facts || !f->ops->run_folder ||
      !f->ops->run_folder(f->path, folder, sizeof folder))
    return;
  pl_run *r = run_find(t, folder);
  if (r && r->have_facts) {
    f->ops->set_run_facts(f->parser, &r->facts);
    return;
  }
  uint64_t off = ps_tail_offset(&f->tail);
  if (off == 0)
    return;
  ps_run_facts fa;
  memset(&fa, 0, sizeof fa);
  ps_buf err;
  ps_buf_init(&err, 1024);
  if (ps_run_scan_facts(f->ops, f->src, f->fd, f->path, off,
                        (size_t)t->sh->cfg->watch.max_line_bytes, &fa, &err) == 0)
    f->ops->set_run_facts(f->parser, &fa);
  ps_buf_free(&err);
}

void pl_runs_close(pl_runs *t) {
  if (!uv_is_closing((uv_handle_t *)&t->timer))
    uv_close((uv_handle_t *)&t->timer, NULL);
}

void pl_runs_free(pl_runs *t) {
  for (pl_run *r = t->runs, *next; r; r = next) {
    next = r->next;
    free(r->pending);
    free(r->folder);
    free(r);
  }
  t->runs = NULL;
}
