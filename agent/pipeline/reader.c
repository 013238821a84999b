/*
 * pipeline/reader.c: tracked files read in budgeted slices on the loop.
 * See include/pipeline/reader.h.
 *
 * Design
 * - One stage, one struct: everything here serves pl_reader and the
 *   reader's own flags of each pl_file (queued, paused, at_end,
 *   doc_loaded, settle_due; include/pipeline/registry.h names their
 *   writer), so it is one file, in the order a file goes through it: the
 *   work queue, its parser, the wait for it to settle, a line file's
 *   slices or a document read whole, and the loop turn that drives them.
 * - The queue links the files (pl_file.qnext) and owns none. Queuing a
 *   file starts the idle handle only if it is not running: an agent with
 *   nothing queued sleeps in epoll. A file that holds a half-read record
 *   (`yielded`) or was paused by back-pressure goes to the front: the
 *   others would each read and hold a record of the same size meanwhile.
 * - A parser is opened when first needed; the head its format needs is
 *   read from the open file by input/feed.h (formats never read files).
 *   One that cannot open is said (rate-limited, with the path) and tried
 *   again at the file's next change.
 * - A document (results.json, Locust stats) is read once it has settled:
 *   watch.settle_ms without a change of size or modification time (at
 *   once in --once); one that is being sent is looked at again afterwards.
 *   A line file gone from its path is kept settle_ms for a producer that
 *   still writes to it, then retired. One timer waits for the earliest.
 * - A line file is checked before new bytes are read (reopened if closed
 *   while idle, retired if it is no longer the same file, read again from
 *   offset 0 when truncated or rewritten in place). A line over
 *   watch.max_line_bytes is skipped, counted and recorded with file and
 *   line; a line the parser rejects is counted and the reading goes on;
 *   lines that need no acknowledgement commit at once.
 * - A document is parsed by a fresh parser, and only when its content
 *   hash differs from the one last sent: a rewritten results.json with the
 *   same contents sends nothing. One over watch.max_line_bytes is
 *   skipped, counted and recorded with its path, unless its format streams
 *   it (formats/format.h `stream`): then its version is told by size,
 *   modification time and inode, and it goes through its parser in pieces.
 */
#include "pipeline/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/log.h"
#include "core/util.h"
#include "input/feed.h"

/* Input parsed per loop turn. Between turns the loop answers the server:
 * at 4 MB a turn took ~25 ms, longer than InfluxDB needs for a 5,000-point
 * batch, so the server sat idle waiting for the next request. */
#define SLICE_BYTES ((size_t)64 << 10)
/* Bytes read from a file at once. */
#define READ_CHUNK ((size_t)1 << 20)
#define IDLE_CLOSE_RESCANS 2

static void work_cb(uv_idle_t *h);

void pl_reader_init(pl_reader *rd, pl_shared *sh, pl_registry *reg, pl_delivery *dl,
                    pl_commit *commit, const pl_reader_hooks *hooks) {
  memset(rd, 0, sizeof *rd);
  rd->sh = sh;
  rd->reg = reg;
  rd->dl = dl;
  rd->commit = commit;
  rd->hooks = *hooks;
  ps_buf_init(&rd->spare, 0);
  uv_idle_init(sh->loop, &rd->work);
  rd->work.data = rd;
  uv_timer_init(sh->loop, &rd->settle_timer);
  rd->settle_timer.data = rd;
}

/* --- the work queue ------------------------------------------------------ */

void pl_reader_enqueue(pl_reader *rd, pl_file *f) {
  if (f->queued || f->retired || rd->sh->stopping)
    return;
  f->queued = 1;
  f->qnext = NULL;
  if (rd->q_tail)
    rd->q_tail->qnext = f;
  else
    rd->q_head = f;
  rd->q_tail = f;
  if (!uv_is_active((uv_handle_t *)&rd->work))
    uv_idle_start(&rd->work, work_cb);
}

/* The head of the queue, taken off it; NULL when empty. */
static pl_file *dequeue(pl_reader *rd) {
  pl_file *f = rd->q_head;
  if (!f)
    return NULL;
  rd->q_head = f->qnext;
  if (!rd->q_head)
    rd->q_tail = NULL;
  f->queued = 0;
  return f;
}

/* A queued file to the head: it holds a half-read record, or was paused by
 * back-pressure, and continues first. */
static void to_front(pl_reader *rd, pl_file *f) {
  if (!f->queued || rd->q_head == f)
    return;
  pl_file *prev = rd->q_head;
  while (prev->qnext != f)
    prev = prev->qnext;
  prev->qnext = f->qnext;
  if (rd->q_tail == f)
    rd->q_tail = prev;
  f->qnext = rd->q_head;
  rd->q_head = f;
}

/* --- a file's parser ----------------------------------------------------- */

/* Opens the file's parser; `fd` is the open file, from which the head the
 * format needs is read first (input/feed.h): formats never read files. */
static int open_parser(pl_reader *rd, pl_file *f, int fd) {
  if (f->parser)
    return 0;
  ps_buf err;
  ps_buf_init(&err, 1024);
  ps_head_buf hb;
  int rc = ps_input_read_head(fd, f->path, f->ops, f->kind, &hb);
  if (rc == 0) {
    rc = f->ops->open(&f->parser, f->src, &hb.head, &err);
    ps_head_buf_free(&hb);
  }
  if (rc < 0) {
    ps_log_limited(PS_LOG_WARNING, "parse", pl_log_key("parser-open", f->path), 60, "%s: %s",
                   f->path, err.data ? err.data : strerror(-rc));
    f->parser = NULL;
  } else if (f->kind == PS_INPUT_LINES && rd->hooks.parser_opened) {
    rd->hooks.parser_opened(rd->hooks.ctx, f);
  }
  ps_buf_free(&err);
  return rc;
}

/* --- settling ------------------------------------------------------------ */

static void arm_settle(pl_reader *rd);

static void settle_cb(uv_timer_t *t) {
  pl_reader *rd = t->data;
  uint64_t now = uv_now(rd->sh->loop);
  for (pl_file *f = rd->reg->files; f; f = f->next) {
    if (f->retired || !f->settle_due || f->doc_loaded || f->settle_due > now)
      continue;
    if (f->kind == PS_INPUT_LINES) {
      pl_reader_enqueue(rd, f); /* a draining file's grace time is over */
      continue;
    }
    struct stat st;
    if (stat(f->path, &st) < 0) {
      f->settle_due = 0;
      continue;
    }
    if ((uint64_t)st.st_size != f->doc_size || ps_stat_mtime_ns(&st) != f->doc_mtime_ns) {
      f->doc_size = (uint64_t)st.st_size;
      f->doc_mtime_ns = ps_stat_mtime_ns(&st);
      f->settle_due = now + (uint64_t)rd->sh->cfg->watch.settle_ms;
      continue;
    }
    pl_reader_enqueue(rd, f);
  }
  arm_settle(rd);
}

/* The one timer, at the earliest settle_due; stopped when nothing waits or
 * a stop began. */
static void arm_settle(pl_reader *rd) {
  uint64_t next = 0;
  for (pl_file *f = rd->reg->files; f; f = f->next)
    if (!f->retired && f->settle_due && !f->queued && !f->doc_loaded &&
        (!next || f->settle_due < next))
      next = f->settle_due;
  if (!next || rd->sh->stopping) {
    uv_timer_stop(&rd->settle_timer);
    return;
  }
  uint64_t now = uv_now(rd->sh->loop);
  uv_timer_start(&rd->settle_timer, settle_cb, next > now ? next - now : 0, 0);
}

void pl_reader_doc_changed(pl_reader *rd, pl_file *f, const struct stat *st) {
  if (f->doc_loaded)
    return; /* being sent; a newer version is looked at afterwards */
  if ((uint64_t)st->st_size == f->doc_size && ps_stat_mtime_ns(st) == f->doc_mtime_ns &&
      f->settle_due == 0 && f->cur.last_doc_hash)
    return; /* unchanged since it was last read */
  if ((uint64_t)st->st_size != f->doc_size || ps_stat_mtime_ns(st) != f->doc_mtime_ns ||
      !f->settle_due) {
    f->doc_size = (uint64_t)st->st_size;
    f->doc_mtime_ns = ps_stat_mtime_ns(st);
    f->settle_due = rd->sh->once ? 1
                                 : uv_now(rd->sh->loop) + (uint64_t)rd->sh->cfg->watch.settle_ms;
  }
  if (rd->sh->once)
    pl_reader_enqueue(rd, f);
  else
    arm_settle(rd);
}

void pl_reader_settle_cancel(pl_file *f) { f->settle_due = 0; }

/* --- line files ---------------------------------------------------------- */

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
    arm_settle(rd);
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
  return open_parser(rd, f, f->fd) < 0 ? -1 : 0; /* reported; tried at the next change */
}

/* Where a file lets its emptied read buffer go: a service that lives for
 * months frees it (docs/benchmarks.md, "A year of nightly runs"); --once
 * keeps one for the next file. */
static ps_buf *spare_of(pl_reader *rd) { return rd->sh->once ? &rd->spare : NULL; }

/* The next slice of the file into its tail: the bytes read, 0 at the end
 * (at_end set), -1 on a read error (said). */
static long read_slice(pl_reader *rd, pl_file *f, const struct stat *st) {
  /* Nothing past the size seen by the caller's fstat: the read would
   * return 0. A write after that fstat brings its own event. */
  if (f->tail.read_off >= (uint64_t)st->st_size && !f->tail.skipping) {
    f->at_end = 1;
    return 0;
  }
  ps_tail_adopt(&f->tail, spare_of(rd), READ_CHUNK);
  long n = ps_tail_fill(&f->tail, READ_CHUNK);
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

/* A lines turn that used its budget. A file read to its last whole line
 * lets its buffer go now, not at its next turn, which in a backfill comes
 * after every other file's (100 runs held 100 read buffers, 80 MB;
 * docs/benchmarks.md, "The 100-run backfill's peak"). 1: more to do. */
static int budget_spent(pl_file *f, size_t parsed, size_t used, size_t *spent, ps_buf *spare) {
  *spent = parsed > used ? parsed : used;
  if (!ps_tail_buffered(&f->tail))
    ps_tail_trim(&f->tail, spare);
  return 1;
}

/* Complete lines of `f` to its parser until about `budget` bytes were
 * parsed or read; *spent says what it used. 1: more is waiting (queue it
 * again). The file is checked (check_file) before anything new is read
 * from it, not for every slice of lines already buffered: a 1 MiB read
 * feeds sixteen 64 KB slices, and each check is an fstat and a 256-byte
 * pread. */
static int lines_turn(pl_reader *rd, pl_file *f, size_t budget, size_t *spent) {
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
    if (parsed >= budget)
      return budget_spent(f, parsed, used, spent, spare_of(rd));
    ps_tail_line ln;
    int r = ps_tail_next(&f->tail, &ln);
    if (r == PS_TAIL_NONE) {
      /* A line already longer than a read is finished in this turn: left
       * for later, every file of a backfill reached its multi-megabyte
       * perf-finish line in the same round, each holding a buffer of its
       * size at once. */
      if (used >= budget && ps_tail_buffered(&f->tail) < READ_CHUNK) {
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
    if (len > READ_CHUNK)
      ps_tail_trim(&f->tail, spare_of(rd)); /* the lines after it need no 16 MB buffer */
  }
  ps_tail_trim(&f->tail, spare_of(rd)); /* idle files keep no read-sized buffer */
  if (rd->hooks.at_end)
    rd->hooks.at_end(rd->hooks.ctx, f);
  if (f->draining)
    drain_done(rd, f, &st);
  return 0;
}

/* --- documents ----------------------------------------------------------- */

/* A parser of a settled document opened on `fd`, the file's old one freed. */
static int open_doc_parser(pl_reader *rd, pl_file *f, int fd) {
  /* A document is parsed by a fresh parser each time: it is a new unit. */
  if (f->parser && f->ops->free)
    f->ops->free(f->parser);
  f->parser = NULL;
  int rc = open_parser(rd, f, fd);
  if (rc < 0)
    return rc;
  /* taken: any later version is a change seen live */
  int backfill = pl_registry_take_doc_backfill(f);
  if (f->ops->set_backfill)
    f->ops->set_backfill(f->parser, backfill);
  return 0;
}

/* A document too large to hold (formats/format.h `stream`): its version is
 * told by size, modification time and inode instead of a hash of its bytes,
 * and it is streamed through the parser now, which keeps only what its
 * points need; the points come in the turns. */
static int load_streamed_doc(pl_reader *rd, pl_file *f, int fd, const struct stat *st) {
  f->id.dev = (uint64_t)st->st_dev;
  f->id.ino = (uint64_t)st->st_ino;
  f->doc_size = (uint64_t)st->st_size;
  f->doc_mtime_ns = ps_stat_mtime_ns(st);
  uint64_t identity[3] = {(uint64_t)st->st_size, (uint64_t)f->doc_mtime_ns, (uint64_t)st->st_ino};
  f->doc_hash = ps_hash64(PS_HASH_SEED, identity, sizeof identity);
  if (f->doc_hash == f->cur.last_doc_hash || open_doc_parser(rd, f, fd) < 0) {
    close(fd);
    return 0;
  }
  int rc = ps_feed_stream_pieces(fd, f->ops, f->parser, &f->em);
  close(fd);
  if (rc < 0) {
    ps_log_limited(PS_LOG_WARNING, "tail", pl_log_key("read", f->path), 60, "%s: cannot read (%s)",
                   f->path, strerror(-rc));
    return 0;
  }
  f->doc_loaded = 1;
  return 1;
}

/* Loads the settled document; 0 when there is nothing (new) to parse. */
static int load_doc(pl_reader *rd, pl_file *f) {
  f->settle_due = 0;
  int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return 0;
  struct stat st;
  if (fstat(fd, &st) < 0) {
    close(fd);
    return 0;
  }
  if (f->ops->stream)
    return load_streamed_doc(rd, f, fd, &st);
  int rc = ps_read_whole(fd, (size_t)rd->sh->cfg->watch.max_line_bytes, &f->doc);
  if (rc < 0)
    close(fd); /* else kept open: the parser's head is read from it */
  if (rc == -EFBIG) {
    rd->sh->n.records_rejected++;
    ps_log_limited(PS_LOG_WARNING, "tail", pl_log_key("longdoc", f->path), 300,
                   "%s: document larger than watch.max_line_bytes (%" PRId64 "); skipped", f->path,
                   rd->sh->cfg->watch.max_line_bytes);
    pl_commit_error(rd->commit, "%s: document larger than watch.max_line_bytes; skipped", f->path);
    ps_buf_free(&f->doc);
    return 0;
  }
  if (rc < 0) {
    ps_log_limited(PS_LOG_WARNING, "tail", pl_log_key("read", f->path), 60, "%s: cannot read (%s)",
                   f->path, strerror(-rc));
    ps_buf_free(&f->doc);
    return 0;
  }
  f->id.dev = (uint64_t)st.st_dev;
  f->id.ino = (uint64_t)st.st_ino;
  f->doc_size = (uint64_t)st.st_size;
  f->doc_mtime_ns = ps_stat_mtime_ns(&st);
  f->doc_hash = ps_hash64(PS_HASH_SEED, f->doc.data ? f->doc.data : "", f->doc.len);
  if (f->doc_hash == f->cur.last_doc_hash) {
    close(fd);
    ps_buf_free(&f->doc);
    return 0; /* the same contents were sent already */
  }
  rc = open_doc_parser(rd, f, fd);
  close(fd);
  if (rc < 0) {
    ps_buf_free(&f->doc);
    return 0;
  }
  f->doc_loaded = 1;
  return 1;
}

/* Parses the settled document (loaded first); 1 when it continues in the
 * next turn (emitted over several turns, `yielded`). Parsed to the end, its
 * hash is the cursor's to commit once its points are acknowledged. */
static int doc_turn(pl_reader *rd, pl_file *f) {
  if (!f->doc_loaded && !load_doc(rd, f))
    return 0;
  f->em.origin.line = 0;
  int rc = f->ops->stream
               ? f->ops->stream(f->parser, NULL, 0, 1, &f->em)
               : f->ops->document(f->parser, f->doc.data ? f->doc.data : "", f->doc.len, &f->em);
  if (rc == -EAGAIN && f->yielded)
    return 1; /* continued first in the next turn (work_cb) */
  if (rc == -EAGAIN) {
    f->paused = 1;
    rd->maybe_paused = 1;
    return 0;
  }
  if (rc < 0)
    ps_log_limited(PS_LOG_ERROR, "parse", pl_log_key("parse-error", f->path), 10, "%s: %s", f->path,
                   strerror(-rc));
  if (pl_delivery_take_rejected(f) || rc < 0)
    rd->sh->n.records_rejected++;
  else
    rd->sh->n.records_parsed++;
  if (f->ops->finish)
    f->ops->finish(f->parser, &f->em);
  f->doc_loaded = 0;
  ps_buf_free(&f->doc);
  if (ps_cursor_line_done(&f->cur, f->doc_size, 0, f->doc_hash) > 0)
    pl_commit_moved(rd->commit);
  return 0;
}

/* --- the loop turn ------------------------------------------------------- */

static void work_cb(uv_idle_t *h) {
  pl_reader *rd = h->data;
  size_t budget = SLICE_BYTES;
  pl_file *f;
  int rounds = 0;
  pl_delivery_new_turn(rd->dl);
  /* With the batcher full, the next point of any file is refused anyway;
   * starting the other queued files would only have each of them parse up
   * to that point and hold its line (and its parse) until acks come: a
   * backfill's runs each paused inside a 9 MB perf-finish line (240 MB for
   * six runs). They wait in the queue instead; pl_reader_resume restarts. */
  if (pl_delivery_full(rd->dl)) {
    uv_idle_stop(&rd->work);
    return;
  }
  while (budget && rounds++ < 64 && !pl_delivery_full(rd->dl) && (f = dequeue(rd))) {
    if (f->retired) {
      pl_registry_maybe_free(rd->reg, f);
      continue;
    }
    int more = 0;
    size_t spent = READ_CHUNK;
    pl_delivery_file_turn(f);
    if (f->kind == PS_INPUT_LINES)
      more = lines_turn(rd, f, budget, &spent);
    else
      more = doc_turn(rd, f);
    if (more && !f->retired && !f->paused) {
      pl_reader_enqueue(rd, f);
      if (f->yielded)
        to_front(rd, f);
    }
    /* f may be freed here (retired while processed): not touched again */
    spent = spent ? spent : 1; /* a file with nothing new still costs a turn */
    budget = budget > spent ? budget - spent : 0;
  }
  if (!rd->q_head) {
    ps_buf_free(&rd->spare); /* --once's spare: nothing is left to read into it */
    uv_idle_stop(&rd->work);
    if (rd->hooks.idle)
      rd->hooks.idle(rd->hooks.ctx);
  }
}

void pl_reader_resume(pl_reader *rd) {
  if (rd->sh->stopping || pl_delivery_full(rd->dl))
    return;
  /* A paused file goes first: it holds a line (perhaps a 9 MB perf-finish
   * record) that the others would otherwise each read and hold too. This
   * runs after every answer of the sink, so the files are walked only when
   * one was paused since the last walk. */
  if (rd->maybe_paused) {
    rd->maybe_paused = 0;
    for (pl_file *f = rd->reg->files; f; f = f->next)
      if (f->paused) {
        f->paused = 0;
        pl_reader_enqueue(rd, f);
        to_front(rd, f);
      }
  }
  /* work_cb also stops while the batcher is full (see there) */
  if (rd->q_head && !uv_is_active((uv_handle_t *)&rd->work))
    uv_idle_start(&rd->work, work_cb);
}


void pl_reader_close_idle(pl_reader *rd) {
  uint64_t now = uv_now(rd->sh->loop);
  uint64_t idle_ms = IDLE_CLOSE_RESCANS * (uint64_t)rd->sh->cfg->watch.rescan_interval_ms;
  for (pl_file *f = rd->reg->files; f; f = f->next)
    if (!f->retired && f->kind == PS_INPUT_LINES && f->fd >= 0 && !f->queued && !f->paused &&
        !f->draining && !f->tail.have_cur && ps_tail_buffered(&f->tail) == 0 &&
        f->cur.committed == ps_tail_offset(&f->tail) && now - f->last_read_ms >= idle_ms) {
      ps_tail_trim(&f->tail, NULL);
      close(f->fd);
      f->fd = f->tail.fd = -1;
    }
}

/* --- state for the service ---------------------------------------------- */

int pl_reader_file_done(const pl_file *f) {
  if (f->queued || f->paused || f->doc_loaded || f->settle_due)
    return 0;
  if (f->kind == PS_INPUT_DOCUMENT)
    return f->cur.committed_doc_hash == f->cur.last_doc_hash;
  return f->at_end && f->cur.committed == ps_tail_offset(&f->tail);
}

int pl_reader_done(const pl_reader *rd) {
  if (rd->q_head)
    return 0;
  for (const pl_file *f = rd->reg->files; f; f = f->next)
    if (!f->retired &&
        (f->paused || f->doc_loaded || (f->kind == PS_INPUT_DOCUMENT && f->settle_due)))
      return 0;
  return 1;
}

void pl_reader_stop(pl_reader *rd) {
  uv_idle_stop(&rd->work);
  uv_timer_stop(&rd->settle_timer);
}

void pl_reader_close(pl_reader *rd) {
  ps_buf_free(&rd->spare);
  if (!uv_is_closing((uv_handle_t *)&rd->work))
    uv_close((uv_handle_t *)&rd->work, NULL);
  if (!uv_is_closing((uv_handle_t *)&rd->settle_timer))
    uv_close((uv_handle_t *)&rd->settle_timer, NULL);
}
