/*
 * feed.c: a whole file through a format parser, synchronously. See
 * include/input/feed.h.
 *
 * DESIGN: there is one line reader, ps_tail, so `convert` and the agent
 * agree on every framing rule (CRLF, over-long lines, the unterminated last
 * line, line numbers); this file is only the loop the agent runs from its
 * idle handle, without back-pressure or budgets. The first line for a
 * parser's head is read in growing pieces, so a 100-byte perf-start costs
 * one small pread, not a fixed megabyte.
 */
#include "input/feed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/util.h"
#include "input/tail.h"

#define FEED_CHUNK ((size_t)1 << 20)
#define HEAD_FIRST_READ ((size_t)4096)

/* The first line of a regular file, if it ends within PS_INPUT_HEAD_MAX
 * bytes. Returns 0 (with or without a line) or a negative errno. */
static int read_first_line(int fd, ps_buf *out, int *found) {
  *found = 0;
  size_t want = HEAD_FIRST_READ, scanned = 0;
  for (;;) {
    if (want > PS_INPUT_HEAD_MAX + 1)
      want = PS_INPUT_HEAD_MAX + 1; /* the line and its '\n' */
    int rc = ps_buf_reserve(out, want - out->len);
    if (rc)
      return rc;
    ssize_t r = ps_pread_full(fd, out->data + out->len, want - out->len, out->len);
    if (r < 0)
      return (int)r;
    out->len += (size_t)r;
    out->data[out->len] = '\0';
    char *nl = memchr(out->data + scanned, '\n', out->len - scanned);
    if (nl) {
      size_t n = (size_t)(nl - out->data);
      if (n && out->data[n - 1] == '\r')
        n--;
      ps_buf_truncate(out, n);
      *found = 1;
      return 0;
    }
    scanned = out->len;
    if (out->len < want || want > PS_INPUT_HEAD_MAX)
      return 0; /* end of the file, or a first line too long for a head */
    want *= 2;
  }
}

int ps_input_read_head(int fd, const char *path, const ps_format_ops *ops,
                       ps_input_kind kind, ps_head_buf *out) {
  memset(out, 0, sizeof *out);
  ps_buf_init(&out->first, 0);
  out->head.path = path;
  struct stat st;
  if (fstat(fd, &st) < 0)
    return -errno;
  out->head.mtime_ns = ps_stat_mtime_ns(&st);
  if ((ops->needs & PS_FMT_NEEDS_REAL_PATH) && path &&
      (out->real_path = realpath(path, NULL)))
    out->head.real_path = out->real_path;
  if ((ops->needs & PS_FMT_NEEDS_FIRST_LINE) && kind == PS_INPUT_LINES &&
      S_ISREG(st.st_mode)) {
    int found;
    int rc = read_first_line(fd, &out->first, &found);
    if (rc) {
      ps_head_buf_free(out);
      return rc;
    }
    if (found) {
      out->head.first_line = out->first.data;
      out->head.first_len = out->first.len;
    }
  }
  return 0;
}

void ps_head_buf_free(ps_head_buf *h) {
  ps_buf_free(&h->first);
  free(h->real_path);
  h->real_path = NULL;
  h->head.first_line = h->head.real_path = NULL;
  h->head.first_len = 0;
}

int ps_feed_line(const ps_format_ops *ops, ps_parser *p, ps_emitter *em,
                 const char *data, size_t len, uint64_t line_no) {
  em->origin.line = line_no;
  int rc;
  while ((rc = ops->line(p, data, len, em)) == -EAGAIN) {
  }
  return rc;
}

int ps_feed_stream_pieces(int fd, const ps_format_ops *ops, ps_parser *p, ps_emitter *em) {
  char *chunk = malloc(PS_FEED_STREAM_CHUNK);
  if (!chunk)
    return -ENOMEM;
  int rc = 0;
  em->origin.line = 0;
  for (;;) {
    ssize_t n = read(fd, chunk, PS_FEED_STREAM_CHUNK);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      rc = -errno;
      break;
    }
    if (n == 0)
      break;
    rc = ops->stream(p, chunk, (size_t)n, 0, em);
    if (rc)
      break;
  }
  free(chunk);
  return rc;
}

int ps_feed_stream(int fd, const ps_format_ops *ops, ps_parser *p, ps_emitter *em) {
  int rc = ps_feed_stream_pieces(fd, ops, p, em);
  if (rc)
    return rc;
  while ((rc = ops->stream(p, NULL, 0, 1, em)) == -EAGAIN) {
  }
  return rc;
}

int ps_feed_fd(int fd, const ps_format_ops *ops, ps_parser *p, ps_emitter *em,
               uint64_t end_offset, size_t max_line, ps_feed_last *last) {
  ps_tail t;
  ps_tail_init(&t, fd, 0, 1, max_line);
  int rc = 0;
  for (;;) {
    ps_tail_line ln;
    int r = ps_tail_next(&t, &ln);
    if (r == PS_TAIL_LINE) {
      rc = ps_feed_line(ops, p, em, ln.data, ln.len, ln.line_no);
      if (rc)
        break;
      ps_tail_consume(&t);
      continue;
    }
    if (r == PS_TAIL_TOO_LONG) {
      em->origin.line = ln.line_no;
      ps_emit_reject(em, "line longer than %zu bytes; skipped", t.max_line);
      continue;
    }
    if (r == PS_TAIL_SKIPPED)
      continue;
    if (t.read_off >= end_offset)
      break;
    size_t chunk = FEED_CHUNK;
    if (end_offset - t.read_off < chunk)
      chunk = (size_t)(end_offset - t.read_off);
    long n = ps_tail_fill(&t, chunk);
    if (n < 0) {
      rc = (int)n;
      break;
    }
    if (n == 0)
      break;
  }
  if (rc == 0 && last) {
    ps_buf_reset(&last->text);
    last->line_no = t.line_no;
    ps_tail_line ln;
    if (ps_tail_partial(&t, &ln) == PS_TAIL_LINE)
      rc = ps_buf_append(&last->text, ln.data, ln.len);
  }
  ps_tail_free(&t);
  return rc;
}
