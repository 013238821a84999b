/*
 * reader_lines.c: line files in budgeted slices. See
 * agent/pipeline/reader_lines.h.
 */
#include "reader_lines.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/log.h"
#include "core/util.h"
#include "reader_parser.h"
#include "reader_queue.h"
#include "reader_settle.h"

/* A retired file is read no more, so it waits on back-pressure no more
 * (`paused` is the reader's). */
static void retire(pl_reader *rd, pl_file *f) {
  f->paused = 0;
  pl_registry_retire(rd->reg, f);
}

static void restart_file(pl_reader *rd, pl_file *f, const char *why) {
  PS_WARN("tail", "%s: %s; reading it again from the beginning", f->path, why);
  char *path = strdup(f->path);
  const ps_source_cfg *src = f->src;
  const ps_format_ops *ops = f->ops;
  pl_gen *g = f->gen; /* src must outlive f: it may be a reload's last file */
  pl_gens_hold(g);
  retire(rd, f);
  pl_file *n = path ? pl_registry_track_lines(rd->reg, src, ops, path, 1) : NULL;
  if (n)
    pl_reader_enqueue(rd, n);
  free(path);
  pl_gens_release(rd->reg->gens, g);
}

/* One record read and given to its parser: count it, consume it, commit
 * what needs no acknowledgement. */
static void record_done(pl_reader *rd, pl_file *f, int rc, uint64_t end, uint64_t next_line) {
  rd->sh->n.lines_read++;
  if (pl_delivery_take_rejected(f) || rc < 0)
    rd->sh->n.records_rejected++;
  else
    rd->sh->n.records_parsed++;
  ps_tail_consume(&f->tail);
  if (ps_cursor_line_done(&f->cur, end, next_line, 0) > 0)
    pl_commit_moved(rd->commit);
}

void pl_reader_read_partial(pl_reader *rd, pl_file *f) {
  ps_tail_line ln;
  if (!f->parser || ps_tail_partial(&f->tail, &ln) != PS_TAIL_LINE)
    return;
  f->em.origin.line = ln.line_no;
  int rc = f->ops->line(f->parser, ln.data, ln.len, &f->em);
  if (rc == -EAGAIN) {
    f->paused = 1; /* offered again, as a line, when room is made */
    rd->maybe_paused = 1;
    return;
  }
  record_done(rd, f, rc, ln.end, ln.line_no + 1);
}

/* A file renamed away may still be written by its producer for a moment:
 * wait settle_ms before dropping it. */
static void drain_done(pl_reader *rd, pl_file *f, const struct stat *st) {
  uint64_t now = uv_now(rd->sh->loop);
  if (!f->settle_due && !rd->sh->once && !rd->sh->stopping) {
    f->settle_due = now + (uint64_t)rd->sh->cfg->watch.settle_ms;
    pl_reader_arm_settle(rd);
    return;
  }
  if (!rd->sh->once && f->settle_due > now)
    return;
  if (st->st_nlink == 0 && f->cur.committed < ps_tail_offset(&f->tail))
    PS_WARN("tail",
            "%s: deleted with %" PRIu64 " bytes not yet acknowledged; "
            "they are still delivered from the open file",
            f->path, ps_tail_offset(&f->tail) - f->cur.committed);
  if (ps_tail_buffered(&f->tail))
    PS_WARN("tail", "%s: gone with an unterminated last line (%zu bytes); not read", f->path,
            ps_tail_buffered(&f->tail));
  retire(rd, f);
}

/* The file is still the one we track (reopened if it was closed while
 * idle), and neither truncated nor rewritten. 0: read it; -1: not now. */
static int check_file(pl_reader *rd, pl_file *f, struct stat *st) {
  if (f->fd < 0) {
    int fd = pl_open_tailed(f->cur_path);
    if (fd >= 0 && fstat(fd, st) == 0 && (uint64_t)st->st_dev == f->id.dev &&
        (uint64_t)st->st_ino == f->id.ino && ps_file_same_birth(fd, &f->id)) {
      f->fd = f->tail.fd = fd;
    } else {
      if (fd >= 0)
        close(fd);
      retire(rd, f); /* all it had was acknowledged before */
      return -1;
    }
  }
  if (fstat(f->fd, st) < 0)
    return -1;
  f->seen_mtime_ns = ps_stat_mtime_ns(st);
  if ((uint64_t)st->st_size < f->tail.read_off) {
    restart_file(rd, f, "truncated");
    return -1;
  }
  ps_file_id now;
  if (ps_file_id_check(f->fd, st, &f->id, &now) != PS_ID_SAME) {
    restart_file(rd, f, "rewritten in place (copytruncate?)");
    return -1;
  }
  f->id = now;
  return pl_reader_open_parser(rd, f, f->fd) < 0 ? -1 : 0; /* reported; tried at the next change */
}

/*  * The file is checked (check_file) before anything new is read from it,
 * not for every slice of lines already buffered: a 1 MiB read feeds
 * sixteen 64 KB slices, and each check is an fstat and a 256-byte pread. */
/* The next slice of the file into its tail: the bytes read, 0 at the end
 * (at_end set), -1 on a read error (said). */
static long read_slice(pl_reader *rd, pl_file *f, const struct stat *st) {
  /* Nothing past the size seen by the caller's fstat: the read would
   * return 0. A write after that fstat brings its own event. */
  if (f->tail.read_off >= (uint64_t)st->st_size && !f->tail.skipping) {
    f->at_end = 1;
    return 0;
  }
  long n = ps_tail_fill(&f->tail, PL_READ_CHUNK);
  if (n < 0) {
    ps_log_limited(PS_LOG_WARNING, "tail", pl_log_key("read", f->path), 60, "%s: read error (%s)",
                   f->path, strerror((int)-n));
    return -1;
  }
  if (n == 0) {
    f->at_end = 1;
    return 0;
  }
  f->last_read_ms = uv_now(rd->sh->loop);
  return n;
}

/* A line over watch.max_line_bytes: counted, said, and skipped. */
static void too_long(pl_reader *rd, pl_file *f, uint64_t line_no) {
  char where[PATH_MAX + 32];
  rd->sh->n.records_rejected++;
  ps_log_limited(PS_LOG_WARNING, "tail", pl_log_key("longline", f->path), 10,
                 "%s:%" PRIu64 ": line longer than watch.max_line_bytes (%" PRId64 "); skipped",
                 f->path, line_no, rd->sh->cfg->watch.max_line_bytes);
  pl_commit_error(rd->commit, "%s: line longer than watch.max_line_bytes; skipped",
                  ps_origin_str(where, sizeof where, f->path, line_no));
}

int pl_reader_lines_turn(pl_reader *rd, pl_file *f, size_t budget, size_t *spent) {
  char where[PATH_MAX + 32];
  *spent = 0;
  struct stat st;
  int checked = 0;
  if (!f->parser || f->fd < 0 || !ps_tail_buffered(&f->tail)) {
    if (check_file(rd, f, &st) < 0)
      return 0;
    checked = 1;
  }
  size_t used = 0, parsed = 0;
  for (;;) {
    if (parsed >= budget) {
      *spent = parsed > used ? parsed : used;
      return 1;
    }
    ps_tail_line ln;
    int r = ps_tail_next(&f->tail, &ln);
    if (r == PS_TAIL_NONE) {
      /* A line already longer than a read is finished in this turn: left
       * for later, every file of a backfill reached its multi-megabyte
       * perf-finish line in the same round, each holding a buffer of its
       * size at once. */
      if (used >= budget && ps_tail_buffered(&f->tail) < PL_READ_CHUNK) {
        *spent = used;
        return 1;
      }
      if (!checked) {
        if (check_file(rd, f, &st) < 0)
          return 0;
        checked = 1;
      }
      long n = read_slice(rd, f, &st);
      if (n < 0)
        return 0;
      if (n == 0)
        break;
      used += (size_t)n;
      continue;
    }
    if (r == PS_TAIL_TOO_LONG) {
      too_long(rd, f, ln.line_no);
      continue;
    }
    if (r == PS_TAIL_SKIPPED) {
      if (ps_cursor_line_done(&f->cur, ln.end, ln.line_no + 1, 0) > 0)
        pl_commit_moved(rd->commit);
      continue;
    }
    f->em.origin.line = ln.line_no;
    int rc = f->ops->line(f->parser, ln.data, ln.len, &f->em);
    if (rc == -EAGAIN && f->yielded) {
      /* the rest of this record first in the next turn (work_cb): the
       * other files must not start their own big records meanwhile */
      *spent = budget;
      return 1;
    }
    if (rc == -EAGAIN) {
      f->paused = 1;
      rd->maybe_paused = 1;
      *spent = parsed > used ? parsed : used;
      return 0;
    }
    parsed += ln.len + 1;
    if (rc < 0)
      ps_log_limited(PS_LOG_ERROR, "parse", pl_log_key("parse-error", f->path), 10, "%s: %s",
                     ps_origin_str(where, sizeof where, f->path, ln.line_no), strerror(-rc));
    size_t len = ln.len;
    record_done(rd, f, rc, ln.end, ln.line_no + 1);
    if (len > PL_READ_CHUNK)
      ps_tail_trim(&f->tail); /* the lines after it need no 16 MB buffer */
  }
  ps_tail_trim(&f->tail); /* idle files keep no read-sized buffer */
  if (rd->hooks.at_end)
    rd->hooks.at_end(rd->hooks.ctx, f);
  if (f->draining)
    drain_done(rd, f, &st);
  return 0;
}
