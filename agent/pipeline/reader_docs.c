/*
 * reader_docs.c: documents read whole once settled. See
 * agent/pipeline/reader_docs.h.
 */
#include "reader_docs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "input/feed.h"
#include "reader_parser.h"

/* A parser of a settled document opened on `fd`, the file's old one freed. */
static int open_doc_parser(pl_reader *rd, pl_file *f, int fd) {
  /* A document is parsed by a fresh parser each time: it is a new unit. */
  if (f->parser && f->ops->free)
    f->ops->free(f->parser);
  f->parser = NULL;
  int rc = pl_reader_open_parser(rd, f, fd);
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
                   "%s: document larger than watch.max_line_bytes (%" PRId64 "); skipped",
                   f->path, rd->sh->cfg->watch.max_line_bytes);
    pl_commit_error(rd->commit, "%s: document larger than watch.max_line_bytes; skipped",
                    f->path);
    ps_buf_free(&f->doc);
    return 0;
  }
  if (rc < 0) {
    ps_log_limited(PS_LOG_WARNING, "tail", pl_log_key("read", f->path), 60,
                   "%s: cannot read (%s)", f->path, strerror(-rc));
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

int pl_reader_doc_turn(pl_reader *rd, pl_file *f) {
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
    ps_log_limited(PS_LOG_ERROR, "parse", pl_log_key("parse-error", f->path), 10, "%s: %s",
                   f->path, strerror(-rc));
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
