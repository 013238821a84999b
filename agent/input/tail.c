/*
 * tail.c: complete lines from a file, and file identity. See include/input/tail.h.
 *
 * DESIGN: the reader never trusts the file position (pread at our own
 * offset), so the same descriptor can be drained after a rename while a new
 * file takes the name. Framing keeps three indexes into one buffer: `pos`
 * (first unconsumed byte), `scan` (where the '\n' search resumes) and `len`.
 * Data is moved to the front only when a new read needs room and something
 * was consumed, so a long line is copied at most once, whatever its size.
 * An over-long line flips the reader into a discard mode that drops bytes as
 * they arrive: a 1 GB line costs one chunk of memory, not 1 GB.
 */
#include "input/tail.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"

static int hash_prefix(int fd, size_t n, uint64_t *out) {
  unsigned char b[PS_FP_MAX];
  ssize_t got = ps_pread_full(fd, b, n, 0);
  if (got < 0)
    return (int)got;
  if ((size_t)got < n)
    return -ENODATA; /* shrank under us */
  *out = ps_hash64(PS_HASH_SEED, b, n);
  return 0;
}

static int64_t birth_ns(int fd) {
  struct statx sx;
  if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, STATX_BTIME, &sx) == 0 &&
      (sx.stx_mask & STATX_BTIME))
    return (int64_t)sx.stx_btime.tv_sec * 1000000000LL + sx.stx_btime.tv_nsec;
  return 0;
}

int ps_file_same_birth(int fd, const ps_file_id *saved) {
  if (!saved->btime_ns)
    return 1;
  int64_t b = birth_ns(fd);
  return !b || b == saved->btime_ns;
}

int ps_file_identify(int fd, const struct stat *st, ps_file_id *id) {
  size_t n = st->st_size < PS_FP_MAX ? (size_t)st->st_size : PS_FP_MAX;
  id->btime_ns = birth_ns(fd);
  id->dev = (uint64_t)st->st_dev;
  id->ino = (uint64_t)st->st_ino;
  id->fp_len = (uint32_t)n;
  int rc = hash_prefix(fd, n, &id->fp_hash);
  if (rc == -ENODATA) { /* truncated while we looked: fingerprint nothing */
    id->fp_len = 0;
    id->fp_hash = ps_hash64(PS_HASH_SEED, "", 0);
    return 0;
  }
  return rc;
}

ps_id_match ps_file_id_check(int fd, const struct stat *st, const ps_file_id *saved,
                             ps_file_id *now) {
  if ((uint64_t)st->st_dev != saved->dev || (uint64_t)st->st_ino != saved->ino)
    return PS_ID_OTHER;
  if ((uint64_t)st->st_size < saved->fp_len)
    return PS_ID_REWRITTEN;
  uint64_t h;
  if (hash_prefix(fd, saved->fp_len, &h) < 0 || h != saved->fp_hash)
    return PS_ID_REWRITTEN;
  if (now) {
    *now = *saved;
    if (saved->fp_len < PS_FP_MAX && (uint64_t)st->st_size > saved->fp_len)
      ps_file_identify(fd, st, now);
  }
  return PS_ID_SAME;
}

void ps_tail_init(ps_tail *t, int fd, uint64_t offset, uint64_t line_no,
                  size_t max_line) {
  memset(t, 0, sizeof *t);
  t->fd = fd;
  t->read_off = offset;
  t->buf_off = offset;
  t->line_no = line_no ? line_no : 1;
  ps_buf_init(&t->buf, 0);
  t->max_line = max_line ? max_line : (size_t)64 << 20;
}

static void compact(ps_tail *t) {
  if (t->pos == 0)
    return;
  size_t rest = t->buf.len - t->pos;
  if (rest)
    memmove(t->buf.data, t->buf.data + t->pos, rest);
  t->buf.len = rest;
  t->buf_off += t->pos;
  t->scan -= t->pos;
  t->pos = 0;
  if (t->buf.data)
    t->buf.data[rest] = '\0';
}

long ps_tail_fill(ps_tail *t, size_t chunk) {
  if (t->have_cur) /* the line handed out points into the buffer */
    return -EBUSY;
  if (t->skipping) { /* nothing buffered is worth keeping */
    t->buf_off += t->buf.len;
    t->buf.len = t->pos = t->scan = 0;
  } else {
    compact(t);
  }
  int rc = ps_buf_reserve(&t->buf, chunk);
  if (rc)
    return rc;
  for (;;) {
    ssize_t r = t->stream
                    ? read(t->fd, t->buf.data + t->buf.len, chunk)
                    : pread(t->fd, t->buf.data + t->buf.len, chunk, (off_t)t->read_off);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      if (errno == ESPIPE && !t->stream) {
        t->stream = 1;
        continue;
      }
      return -errno;
    }
    t->buf.len += (size_t)r;
    t->buf.data[t->buf.len] = '\0';
    t->read_off += (uint64_t)r;
    return (long)r;
  }
}

int ps_tail_next(ps_tail *t, ps_tail_line *out) {
  if (t->have_cur) {
    *out = t->cur;
    return PS_TAIL_LINE;
  }
  char *base = t->buf.data;
  size_t len = t->buf.len;
  char *nl = t->scan < len ? memchr(base + t->scan, '\n', len - t->scan) : NULL;
  if (t->skipping) {
    if (!nl) {
      t->scan = len;
      return PS_TAIL_NONE;
    }
    size_t after = (size_t)(nl - base) + 1;
    memset(out, 0, sizeof *out);
    out->line_no = t->line_no;
    out->end = t->buf_off + after;
    t->pos = t->scan = after;
    t->line_no++;
    t->skipping = 0;
    return PS_TAIL_SKIPPED;
  }
  if (!nl) {
    t->scan = len;
    if (len - t->pos > t->max_line) {
      memset(out, 0, sizeof *out);
      out->line_no = t->line_no;
      out->start = t->buf_off + t->pos;
      out->len = len - t->pos;
      t->skipping = 1;
      t->pos = t->scan = len;
      return PS_TAIL_TOO_LONG;
    }
    return PS_TAIL_NONE;
  }
  size_t start = t->pos, end = (size_t)(nl - base);
  size_t n = end - start;
  if (n > t->max_line) { /* complete, but over the limit all the same */
    memset(out, 0, sizeof *out);
    out->line_no = t->line_no;
    out->start = t->buf_off + start;
    out->len = n;
    /* Leave the reader skipping with the '\n' still ahead, so the next call
     * reports where the line ended. */
    t->skipping = 1;
    t->pos = t->scan = end;
    return PS_TAIL_TOO_LONG;
  }
  if (n && base[end - 1] == '\r')
    n--;
  t->cur.data = base + start;
  t->cur.len = n;
  t->cur.line_no = t->line_no;
  t->cur.start = t->buf_off + start;
  t->cur.end = t->buf_off + end + 1;
  t->have_cur = 1;
  t->scan = end + 1;
  *out = t->cur;
  return PS_TAIL_LINE;
}

void ps_tail_consume(ps_tail *t) {
  if (!t->have_cur)
    return;
  t->pos = (size_t)(t->cur.end - t->buf_off);
  t->scan = t->pos;
  t->line_no++;
  t->have_cur = 0;
}

int ps_tail_partial(ps_tail *t, ps_tail_line *out) {
  if (t->have_cur) {
    *out = t->cur;
    return PS_TAIL_LINE;
  }
  if (t->skipping || t->pos >= t->buf.len)
    return PS_TAIL_NONE;
  size_t n = t->buf.len - t->pos;
  if (memchr(t->buf.data + t->pos, '\n', n))
    return PS_TAIL_NONE; /* complete lines first */
  char *base = t->buf.data;
  t->cur.data = base + t->pos;
  t->cur.len = n && base[t->buf.len - 1] == '\r' ? n - 1 : n;
  t->cur.line_no = t->line_no;
  t->cur.start = t->buf_off + t->pos;
  t->cur.end = t->buf_off + t->buf.len;
  t->have_cur = 1;
  *out = t->cur;
  return PS_TAIL_LINE;
}

void ps_tail_trim(ps_tail *t, ps_buf *spare) {
  if (t->have_cur)
    return;
  size_t rest = t->buf.len - t->pos;
  if (rest == 0) {
    t->buf_off += t->buf.len;
    t->pos = t->scan = 0;
    if (spare && !spare->data && t->buf.data) {
      size_t limit = t->buf.limit;
      *spare = t->buf;
      spare->len = 0;
      spare->data[0] = '\0';
      ps_buf_init(&t->buf, limit);
    } else {
      ps_buf_free(&t->buf);
    }
    return;
  }
  if (t->buf.cap <= 2 * rest + 4096)
    return;
  size_t scan = t->scan - t->pos;
  /* moved down in place, then shrunk: a copy into a new block held both
   * at once, twice a long line's worth at the peak */
  memmove(t->buf.data, t->buf.data + t->pos, rest);
  t->buf.data[rest] = '\0';
  char *p = realloc(t->buf.data, rest + 1);
  if (p)
    t->buf.data = p;
  t->buf.len = rest;
  t->buf.cap = p ? rest + 1 : t->buf.cap;
  t->buf_off += t->pos;
  t->pos = 0;
  t->scan = scan;
}

void ps_tail_adopt(ps_tail *t, ps_buf *spare, size_t chunk) {
  if (!spare || !spare->data || t->have_cur || t->skipping)
    return;
  size_t rest = t->buf.len - t->pos;
  if (t->buf.data && (t->buf.cap > rest + chunk || spare->cap <= t->buf.cap))
    return; /* its own buffer will do, or the spare is no larger */
  size_t limit = t->buf.limit;
  if (rest)
    memcpy(spare->data, t->buf.data + t->pos, rest);
  spare->data[rest] = '\0';
  spare->len = rest;
  t->buf_off += t->pos;
  t->scan -= t->pos;
  t->pos = 0;
  ps_buf_free(&t->buf);
  t->buf = *spare;
  t->buf.limit = limit;
  ps_buf_init(spare, 0);
}

uint64_t ps_tail_offset(const ps_tail *t) { return t->buf_off + t->pos; }

size_t ps_tail_buffered(const ps_tail *t) { return t->buf.len - t->pos; }

void ps_tail_free(ps_tail *t) {
  if (!t)
    return;
  ps_buf_free(&t->buf);
  t->have_cur = 0;
}
