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
/* A failed save is tried again after 1 s, doubling up to a minute: a full
 * disk is freed by a person, and each try costs a write of the state. */
#define RETRY_FIRST_MS 1000
#define RETRY_MAX_MS 60000

static void save_cb(uv_timer_t *t);

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

/* Said once per reason, with the file it is about, and what it means; then
 * tried again with back-off while the agent runs (the timer is the one
 * pl_commit_moved() arms, so a retry and a commit are one save). */
static void saving_failed(pl_commit *c, int rc) {
  const char *dir = c->sh->cfg->state_dir;
  c->failures++;
  if (c->fail_errno != -rc) {
    ps_buf path;
    ps_buf_init(&path, 0);
    ps_state_path(dir, &path);
    const char *p = path.data ? path.data : "state.json";
    PS_ERROR("state",
             "%s: cannot save the state (%s%s); alert events raised from now on are held, "
             "not sent, until it is saved; points keep going to the server, their offsets "
             "are saved with it (re-read after a restart)%s",
             p, strerror(-rc), rc == -EISDIR ? ": it is a directory; move it away" : "",
             c->sh->once ? "" : "; trying again with back-off");
    ps_buf_free(&path);
  }
  c->fail_errno = -rc;
  c->retry_ms = c->retry_ms ? c->retry_ms * 2 : RETRY_FIRST_MS;
  if (c->retry_ms > RETRY_MAX_MS)
    c->retry_ms = RETRY_MAX_MS;
  if (c->sh->stopping < 2 && !uv_is_closing((uv_handle_t *)&c->timer))
    uv_timer_start(&c->timer, save_cb, c->retry_ms, 0);
}

int pl_commit_save(pl_commit *c) {
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
  ps_state_free(&s);
  if (rc < 0) {
    saving_failed(c, rc);
    return rc;
  }
  c->sh->state_dirty = 0;
  if (c->fail_errno) {
    ps_buf path;
    ps_buf_init(&path, 0);
    ps_state_path(dir, &path);
    PS_INFO("state", "%s: the state is saved again, after %u failed attempts; alert events "
                     "held meanwhile are sent now",
            path.data ? path.data : "state.json", c->failures);
    ps_buf_free(&path);
  }
  c->fail_errno = 0;
  c->failures = 0;
  c->retry_ms = 0;
  for (size_t i = 0; i < c->non_saved; i++)
    c->on_saved[i].fn(c->on_saved[i].ctx);
  return 0;
}

int pl_commit_failing(const pl_commit *c) { return c->fail_errno; }

int pl_commit_on_saved(pl_commit *c, void (*fn)(void *ctx), void *ctx) {
  for (size_t i = 0; i < c->non_saved; i++)
    if (c->on_saved[i].fn == fn && c->on_saved[i].ctx == ctx)
      return 0; /* a stage started again on the same commit */
  if (c->non_saved == PL_COMMIT_MAX_SAVED_HOOKS)
    return -ENOSPC;
  c->on_saved[c->non_saved].fn = fn;
  c->on_saved[c->non_saved].ctx = ctx;
  c->non_saved++;
  return 0;
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
