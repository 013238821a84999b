/*
 * registry.c: the tracked files, their two indexes and where each resumes.
 * See include/pipeline/registry.h.
 *
 * Design
 * - Two chained hash tables over the same nodes: by current path (every
 *   event names a path) and by device/inode (a renamed file is the same
 *   file). Paths in one source share a long prefix, so comparing hashes
 *   first matters: strcmp over them was a tenth of the agent's CPU with
 *   1,000 files (scripts/bench scale, perf).
 * - A file's identity never changes once tracked, so it enters the identity
 *   index once; a rename moves it in the path index only.
 */
#include "pipeline/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"

static uint64_t path_hash(const char *path) {
  return ps_hash64(PS_HASH_SEED, path, strlen(path));
}

static size_t id_bucket(const pl_registry *r, uint64_t dev, uint64_t ino) {
  uint64_t h = (ino ^ (dev * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
  return (size_t)(h >> 32) & (r->nbuckets - 1);
}

static size_t path_bucket(const pl_registry *r, uint64_t hash) {
  return (size_t)(hash ^ (hash >> 29)) & (r->nbuckets - 1);
}

static void unlink_chain(pl_file **head, pl_file *f, int by_id) {
  for (pl_file **pp = head; *pp; pp = by_id ? &(*pp)->id_next : &(*pp)->path_next)
    if (*pp == f) {
      *pp = by_id ? f->id_next : f->path_next;
      return;
    }
}

static void index_path_add(pl_registry *r, pl_file *f) {
  size_t b = path_bucket(r, f->cur_hash);
  f->path_next = r->by_path[b];
  r->by_path[b] = f;
}

static void index_id_add(pl_registry *r, pl_file *f) {
  size_t b = id_bucket(r, f->id.dev, f->id.ino);
  f->id_next = r->by_id[b];
  r->by_id[b] = f;
  f->in_id_index = 1;
}

/* Keeps about one file per bucket; returns -ENOMEM only when there is no
 * table at all (a table that cannot grow still works, with longer chains). */
static int index_grow(pl_registry *r) {
  if (r->nbuckets && r->nindexed < r->nbuckets)
    return 0;
  size_t n = r->nbuckets ? r->nbuckets * 2 : 64;
  pl_file **bp = calloc(n, sizeof *bp), **bi = calloc(n, sizeof *bi);
  if (!bp || !bi) {
    free(bp);
    free(bi);
    return r->nbuckets ? 0 : -ENOMEM;
  }
  free(r->by_path);
  free(r->by_id);
  r->by_path = bp;
  r->by_id = bi;
  r->nbuckets = n;
  for (pl_file *f = r->files; f; f = f->next) {
    index_path_add(r, f);
    if (f->in_id_index)
      index_id_add(r, f);
  }
  return 0;
}

static void index_remove(pl_registry *r, pl_file *f) {
  unlink_chain(&r->by_path[path_bucket(r, f->cur_hash)], f, 0);
  if (f->in_id_index)
    unlink_chain(&r->by_id[id_bucket(r, f->id.dev, f->id.ino)], f, 1);
  f->in_id_index = 0;
  r->nindexed--;
}

void pl_registry_init(pl_registry *r, pl_shared *sh, pl_gens *gens, ps_state *saved) {
  memset(r, 0, sizeof *r);
  r->sh = sh;
  r->gens = gens;
  r->saved = saved;
}

void pl_registry_set_emitter(pl_registry *r,
                             int (*point)(void *file, const ps_point *p, const ps_origin *o),
                             void (*reject)(void *file, const ps_origin *o, const char *reason),
                             void *emit_ctx) {
  r->point = point;
  r->reject = reject;
  r->emit_ctx = emit_ctx;
}

static void file_free(pl_registry *r, pl_file *f) {
  if (f->parser && f->ops && f->ops->free)
    f->ops->free(f->parser);
  if (f->fd >= 0)
    close(f->fd);
  ps_tail_free(&f->tail);
  ps_buf_free(&f->doc);
  ps_cursor_release(&f->cur);
  free(f->path);
  free(f->cur_path);
  pl_gen *g = f->gen;
  free(f);
  pl_gens_release(r->gens, g);
}

void pl_registry_free(pl_registry *r) {
  for (pl_file *f = r->files, *next; f; f = next) {
    next = f->next;
    file_free(r, f);
  }
  r->files = NULL;
  free(r->by_path);
  free(r->by_id);
  r->by_path = r->by_id = NULL;
  r->nbuckets = r->nindexed = 0;
}

void pl_registry_maybe_free(pl_registry *r, pl_file *f) {
  if (!f->retired || f->cur.live || f->queued)
    return;
  for (pl_file **pp = &r->files; *pp; pp = &(*pp)->next)
    if (*pp == f) {
      *pp = f->next;
      break;
    }
  index_remove(r, f);
  file_free(r, f);
}

void pl_registry_retire(pl_registry *r, pl_file *f) {
  if (f->retired)
    return;
  f->retired = 1;
  if (f->parser && f->ops->free)
    f->ops->free(f->parser);
  f->parser = NULL;
  if (f->fd >= 0)
    close(f->fd);
  f->fd = -1;
  ps_tail_free(&f->tail);
  ps_buf_free(&f->doc);
  ps_cursor_release(&f->cur);
  r->sh->state_dirty = 1;
  pl_registry_maybe_free(r, f);
}

static pl_file *file_alloc(pl_registry *r, const ps_source_cfg *src,
                           const ps_format_ops *ops, ps_input_kind kind, const char *path) {
  if (index_grow(r) < 0)
    return NULL;
  pl_file *f = calloc(1, sizeof *f);
  if (!f)
    return NULL;
  f->path = strdup(path);
  f->cur_path = strdup(path);
  if (!f->path || !f->cur_path) {
    free(f->path);
    free(f->cur_path);
    free(f);
    return NULL;
  }
  f->cur_hash = path_hash(path);
  f->src = src;
  f->gen = pl_gens_of(r->gens, src);
  pl_gens_hold(f->gen);
  f->ops = ops;
  f->kind = kind;
  f->fd = -1;
  ps_buf_init(&f->doc, 0);
  f->em.point = r->point;
  f->em.reject = r->reject;
  f->em.ctx = f;
  f->emit_ctx = r->emit_ctx;
  f->em.origin.file = f->path;
  f->next = r->files;
  r->files = f;
  index_path_add(r, f);
  r->nindexed++;
  return f;
}

/* Opens a line file for tailing. O_NOATIME where allowed (the agent's own
 * files, or root): with relatime the first read after every write
 * otherwise updates the inode's atime, a metadata write per file event. */
int pl_open_tailed(const char *path) {
#ifdef O_NOATIME
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOATIME);
  if (fd >= 0 || errno != EPERM)
    return fd;
#endif
  return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

/* Offset just past the last '\n' (where start_at=end begins reading). */
static uint64_t last_newline_end(int fd, uint64_t size) {
  char b[65536];
  uint64_t end = size;
  while (end > 0) {
    size_t n = end < sizeof b ? (size_t)end : sizeof b;
    ssize_t got = pread(fd, b, n, (off_t)(end - n));
    if (got <= 0)
      return 0;
    for (size_t i = (size_t)got; i > 0; i--)
      if (b[i - 1] == '\n')
        return end - n + i;
    end -= n;
  }
  return 0;
}

static ps_state_file *saved_by_path(pl_registry *r, const char *path) {
  for (size_t i = 0; i < r->saved->nfiles; i++)
    if (!r->saved->files[i].matched && strcmp(r->saved->files[i].path, path) == 0)
      return &r->saved->files[i];
  return NULL;
}

pl_file *pl_registry_track_lines(pl_registry *r, const ps_source_cfg *src,
                                 const ps_format_ops *ops, const char *path,
                                 int force_offset0) {
  int fd = pl_open_tailed(path);
  if (fd < 0) {
    if (errno != ENOENT)
      ps_log_limited(PS_LOG_WARNING, "tail", pl_log_key("open", path), 300,
                     "%s: cannot open (%s)", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  ps_file_id id;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || ps_file_identify(fd, &st, &id) < 0) {
    close(fd);
    return NULL;
  }
  pl_file *f = file_alloc(r, src, ops, PS_INPUT_LINES, path);
  if (!f) {
    close(fd);
    return NULL;
  }
  f->fd = fd;
  f->id = id;
  index_id_add(r, f);
  f->last_read_ms = uv_now(r->sh->loop);
  uint64_t offset = 0, line = 1;
  ps_state_file *sf = force_offset0 ? NULL : ps_state_find(r->saved, id.dev, id.ino);
  if (sf && !sf->matched) {
    sf->matched = 1;
    ps_file_id now;
    ps_id_match m = ps_file_id_check(fd, &st, &sf->id, &now);
    if (m == PS_ID_SAME && sf->id.btime_ns && id.btime_ns && sf->id.btime_ns != id.btime_ns)
      m = PS_ID_OTHER; /* a reused inode, same first bytes: born later */
    if (m == PS_ID_SAME && sf->offset <= (uint64_t)st.st_size) {
      offset = sf->offset;
      line = sf->line;
      f->id = now;
      f->id.btime_ns = id.btime_ns; /* a state written before it had none */
    } else {
      PS_WARN("tail",
              "%s: rewritten or truncated since it was last read; "
              "reading it again from the beginning",
              path);
    }
  } else if (!force_offset0 && r->sh->first_start_end && r->sh->initial_scan) {
    offset = last_newline_end(fd, (uint64_t)st.st_size);
    line = 0; /* unknown: messages then count from here */
  }
  ps_tail_init(&f->tail, fd, offset, line ? line : 1,
               (size_t)r->sh->cfg->watch.max_line_bytes);
  ps_cursor_init(&f->cur, offset, line ? line : 1, f);
  PS_DEBUG("tail", "%s: tracking from offset %" PRIu64, path, offset);
  r->sh->state_dirty = 1;
  return f;
}

pl_file *pl_registry_track_doc(pl_registry *r, const ps_source_cfg *src,
                               const ps_format_ops *ops, const char *path) {
  pl_file *f = file_alloc(r, src, ops, PS_INPUT_DOCUMENT, path);
  if (!f)
    return NULL;
  ps_cursor_init(&f->cur, 0, 0, f);
  ps_state_file *sf = saved_by_path(r, path);
  /* Already there when the agent first looked, never seen before: the run
   * it records ended before perfship saw it (docs/schema.md `backfill`). */
  f->doc_backfill = r->sh->initial_scan && !sf;
  if (sf) {
    sf->matched = 1;
    if (sf->has_doc)
      f->cur.committed_doc_hash = f->cur.last_doc_hash = sf->doc_hash;
    f->id = sf->id;
  } else if (r->sh->first_start_end && r->sh->initial_scan) {
    /* Existing contents count as seen: remember their hash, send nothing. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
      ps_buf b;
      ps_buf_init(&b, 0);
      if (ps_read_whole(fd, (size_t)r->sh->cfg->watch.max_line_bytes, &b) == 0) {
        uint64_t h = ps_hash64(PS_HASH_SEED, b.data ? b.data : "", b.len);
        f->cur.committed_doc_hash = f->cur.last_doc_hash = h;
      }
      ps_buf_free(&b);
      close(fd);
    }
  }
  r->sh->state_dirty = 1;
  return f;
}

pl_file *pl_registry_find_by_id(pl_registry *r, uint64_t dev, uint64_t ino) {
  if (!r->nbuckets)
    return NULL;
  for (pl_file *f = r->by_id[id_bucket(r, dev, ino)]; f; f = f->id_next)
    if (!f->retired && f->kind == PS_INPUT_LINES && f->id.dev == dev && f->id.ino == ino)
      return f;
  return NULL;
}

static pl_file *find_by_path(pl_registry *r, const char *path, ps_input_kind kind,
                             int draining_too) {
  if (!r->nbuckets)
    return NULL;
  uint64_t h = path_hash(path);
  for (pl_file *f = r->by_path[path_bucket(r, h)]; f; f = f->path_next)
    if (f->cur_hash == h && !f->retired && (draining_too || !f->draining) &&
        f->kind == kind && strcmp(f->cur_path, path) == 0)
      return f;
  return NULL;
}

pl_file *pl_registry_find_by_path(pl_registry *r, const char *path, ps_input_kind kind) {
  return find_by_path(r, path, kind, 0);
}

pl_file *pl_registry_find_any_by_path(pl_registry *r, const char *path, ps_input_kind kind) {
  return find_by_path(r, path, kind, 1);
}

void pl_registry_moved(pl_registry *r, pl_file *f, const char *path) {
  char *p = strdup(path);
  if (!p)
    return; /* still found by identity; the path index catches up later */
  unlink_chain(&r->by_path[path_bucket(r, f->cur_hash)], f, 0);
  free(f->cur_path);
  f->cur_path = p;
  f->cur_hash = path_hash(p);
  index_path_add(r, f);
  r->sh->state_dirty = 1;
}

size_t pl_registry_live(const pl_registry *r) {
  size_t n = 0;
  for (const pl_file *f = r->files; f; f = f->next)
    n += !f->retired;
  return n;
}

int pl_registry_take_doc_backfill(pl_file *f) {
  int backfill = f->doc_backfill;
  f->doc_backfill = 0;
  return backfill;
}
