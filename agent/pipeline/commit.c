/*
 * commit.c: the state file, saved after acknowledgements.
 * See include/pipeline/commit.h.
 */
#include "pipeline/commit.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/log.h"

#define SAVE_DELAY_MS 50
/* While acknowledgements keep coming, saves are this far apart at least:
 * each one creates, fsyncs and renames a file (about 1 ms of CPU), and a
 * backfill acknowledges a batch every few milliseconds. */
#define SAVE_SPACING_MS 500

void pl_commit_init(pl_commit *c, pl_shared *sh, pl_registry *reg, ps_state *saved,
                    const pl_commit_hooks *hooks) {
  memset(c, 0, sizeof *c);
  c->sh = sh;
  c->reg = reg;
  c->saved = saved;
  c->hooks = *hooks;
  uv_timer_init(sh->loop, &c->timer);
  c->timer.data = c;
}

void pl_commit_error(pl_commit *c, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char when[32];
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  char stamped[600];
  snprintf(stamped, sizeof stamped, "%s %s", when, msg);
  ps_state_add_error(c->saved, stamped);
  c->sh->state_dirty = 1;
}

void pl_commit_save(pl_commit *c) {
  ps_state s;
  ps_state_init(&s);
  for (pl_file *f = c->reg->files; f; f = f->next) {
    if (f->retired)
      continue;
    ps_state_file e;
    memset(&e, 0, sizeof e);
    e.path = f->cur_path;
    e.id = f->id;
    e.offset = f->cur.committed;
    e.line = f->cur.committed_line;
    if (f->kind == PS_INPUT_DOCUMENT) {
      e.has_doc = f->cur.committed_doc_hash != 0;
      e.doc_hash = f->cur.committed_doc_hash;
    }
    ps_state_add(&s, &e);
  }
  /* Entries of files not seen this time (a folder briefly away) are kept
   * until `forget`; identity mismatch protects against inode reuse. */
  for (size_t i = 0; i < c->saved->nfiles; i++)
    if (!c->saved->files[i].matched)
      ps_state_add(&s, &c->saved->files[i]);
  for (size_t i = 0; i < c->saved->nerrors; i++)
    ps_state_add_error(&s, c->saved->errors[i]);
  s.pending_points = c->hooks.pending_points ? c->hooks.pending_points(c->hooks.ctx) : 0;
  c->saved_entries = s.nfiles;
  for (size_t i = 0; i < c->nsections; i++) {
    char *json = c->sections[i].to_json(c->sections[i].ctx);
    if (json && ps_state_set_section(&s, c->sections[i].name, json) < 0)
      free(json);
  }
  for (size_t i = 0; i < c->saved->nsections; i++) {
    const char *name = c->saved->sections[i].name;
    char *copy = ps_state_section(&s, name) ? NULL : strdup(c->saved->sections[i].json);
    if (copy && ps_state_set_section(&s, name, copy) < 0)
      free(copy);
  }
  const char *dir = c->sh->cfg->state_dir;
  int rc = ps_state_save(&s, dir);
  if (rc < 0)
    ps_log_limited(PS_LOG_ERROR, "state", "save", 60,
                   "%s: cannot save the state (%s); offsets will be re-read after "
                   "a restart",
                   dir, strerror(-rc));
  else
    c->sh->state_dirty = 0;
  ps_state_free(&s);
}

int pl_commit_add_section(pl_commit *c, const char *name, char *(*to_json)(void *ctx),
                          void *ctx) {
  if (c->nsections == PL_COMMIT_MAX_SECTIONS)
    return -ENOSPC;
  c->sections[c->nsections++] = (pl_commit_section){name, to_json, ctx};
  return 0;
}

static void save_cb(uv_timer_t *t) {
  pl_commit *c = t->data;
  c->last_save_ms = uv_now(c->sh->loop);
  pl_commit_save(c);
}

/* A save rewrites every file's entry, so its cost grows with the files:
 * with 1,000 files growing at once, saving 50 ms after each commit was a
 * tenth of the agent's CPU (scripts/bench scale, perf). The delay grows by
 * 0.5 ms per entry (550 ms for 1,000 files, still 50 ms for one), and a
 * save follows the previous timed one by SAVE_SPACING_MS at least: the
 * first commit after a quiet spell is saved as soon as before, a steady
 * stream of them about twice a second. */
void pl_commit_moved(pl_commit *c) {
  c->sh->state_dirty = 1;
  if (uv_is_active((uv_handle_t *)&c->timer) || c->sh->stopping >= 2)
    return;
  uint64_t delay = SAVE_DELAY_MS + c->saved_entries / 2;
  if (delay > 1000)
    delay = 1000;
  uint64_t now = uv_now(c->sh->loop);
  if (c->last_save_ms && now < c->last_save_ms + SAVE_SPACING_MS &&
      c->last_save_ms + SAVE_SPACING_MS - now > delay)
    delay = c->last_save_ms + SAVE_SPACING_MS - now;
  uv_timer_start(&c->timer, save_cb, delay, 0);
}

void pl_commit_close(pl_commit *c) {
  if (!uv_is_closing((uv_handle_t *)&c->timer))
    uv_close((uv_handle_t *)&c->timer, NULL);
}
