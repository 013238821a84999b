/*
 * router.c: path events to tracked files. See include/pipeline/router.h.
 */
#include "pipeline/router.h"

#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "core/log.h"
#include "core/util.h"

void pl_router_init(pl_router *r, pl_shared *sh, pl_registry *reg, pl_reader *rd,
                    pl_runs *runs) {
  memset(r, 0, sizeof *r);
  r->sh = sh;
  r->reg = reg;
  r->rd = rd;
  r->runs = runs;
}

/* Something happened at `path` (found by a scan or named by an event). */
void pl_router_path(void *ctx, const ps_source_cfg *src, const char *path, int content_only) {
  pl_router *r = ctx;
  if (r->sh->stopping)
    return;
  const ps_format_ops *ops = ps_format_ops_get(src->format);
  if (!ops || !ops->input_kind)
    return;
  ps_input_kind kind = ops->input_kind(src, path);
  pl_runs_note_path(r->runs, src, path, 0); /* slogs, exit_code, docker.log count too */
  if (kind == PS_INPUT_IGNORE)
    return;
  if (content_only && kind == PS_INPUT_LINES) {
    /* A write to a file read from its open descriptor: the reader's fstat
     * and identity check see what changed; a stat of the path here was a
     * path walk per write with 1,000 files growing at once. */
    pl_file *f = pl_registry_find_by_path(r->reg, path, PS_INPUT_LINES);
    if (f && f->fd >= 0) {
      pl_reader_enqueue(r->rd, f);
      return;
    }
  }
  struct stat st;
  int exists = stat(path, &st) == 0 && S_ISREG(st.st_mode);
  if (kind == PS_INPUT_DOCUMENT) {
    pl_file *f = pl_registry_find_by_path(r->reg, path, PS_INPUT_DOCUMENT);
    if (!exists)
      return; /* a document that went away keeps its hash until forgotten */
    if (!f)
      f = pl_registry_track_doc(r->reg, src, ops, path);
    if (f) {
      f->scan_gen = r->scan_gen;
      pl_reader_doc_changed(r->rd, f, &st);
    }
    return;
  }
  pl_file *at_path = pl_registry_find_by_path(r->reg, path, PS_INPUT_LINES);
  if (!exists) {
    if (at_path) { /* deleted or renamed away: read what is left, then drop */
      at_path->draining = 1;
      pl_reader_enqueue(r->rd, at_path);
    }
    return;
  }
  pl_file *f = pl_registry_find_by_id(r->reg, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
  if (f) {
    /* Still visible under a source, maybe under a new name (a rotated file
     * the glob also matches): the same file, not a new one. */
    f->scan_gen = r->scan_gen;
    f->draining = 0;
    pl_reader_settle_cancel(f);
    if (strcmp(f->cur_path, path) != 0)
      pl_registry_moved(r->reg, f, path);
    /* Grown, shrunk, or rewritten (a same-length rewrite moves the mtime). */
    if ((uint64_t)st.st_size != f->tail.read_off || ps_stat_mtime_ns(&st) != f->seen_mtime_ns)
      pl_reader_enqueue(r->rd, f);
    return;
  }
  if (at_path && !at_path->draining) {
    /* Replaced at its path (rotation by rename, or a new file): the old one
     * is drained from its descriptor first. */
    PS_INFO("tail", "%s: replaced by a new file; draining the old one first", path);
    at_path->draining = 1;
    pl_reader_enqueue(r->rd, at_path);
  }
  f = pl_registry_track_lines(r->reg, src, ops, path, 0);
  if (f) {
    f->scan_gen = r->scan_gen;
    pl_reader_enqueue(r->rd, f);
  }
}

void pl_router_rescan(pl_router *r, ps_watch *w) {
  r->scan_gen++;
  ps_watch_scan(w);
  /* Line files no scan reached any more left their path without an event
   * we saw: drain them. */
  for (pl_file *f = r->reg->files; f; f = f->next)
    if (!f->retired && f->kind == PS_INPUT_LINES && f->scan_gen != r->scan_gen &&
        !f->draining) {
      struct stat st;
      if (stat(f->cur_path, &st) == 0 && (uint64_t)st.st_ino == f->id.ino &&
          (uint64_t)st.st_dev == f->id.dev)
        continue; /* still there (e.g. its source was reloaded) */
      f->draining = 1;
      pl_reader_enqueue(r->rd, f);
    }
}
