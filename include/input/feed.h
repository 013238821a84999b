/*
 * feed: reading a file for a format parser outside the agent's loop
 * (`convert`, converting a run folder, re-deriving a run's facts after a
 * restart), with the line reader the agent tails with (input/tail.h), and
 * the head every parser's open() gets (formats/format.h ps_input_head).
 *
 * Contract
 * - ps_input_read_head() reads from an open descriptor what a format asks
 *   for in ops->needs: always the modification time (fstat); the resolved
 *   path with PS_FMT_NEEDS_REAL_PATH; the first complete line with
 *   PS_FMT_NEEDS_FIRST_LINE, for a line-read regular file only, without
 *   its '\n' and a trailing '\r' (as line() gets lines), and only when it
 *   ends within PS_INPUT_HEAD_MAX bytes. It never moves the file position
 *   (pread), so a pipe is left untouched and gets no first line. Call it
 *   right before ops->open(); `out` owns what head points to until
 *   ps_head_buf_free().
 * - ps_feed_fd() hands every complete line of `fd`, from offset 0 up to
 *   `end_offset` (UINT64_MAX: the whole file), to ops->line with
 *   em->origin.line set, offering a line again at once while the emitter
 *   answers -EAGAIN (synchronous drivers have nothing to wait for). A line
 *   longer than `max_line` bytes is rejected through `em` as
 *   "line longer than N bytes; skipped" with its line number, and reading
 *   goes on after it. Empty lines are handed over like any other.
 * - The unterminated last line is never parsed by ps_feed_fd(); it is
 *   handed back in `last` (when not NULL) for the caller to decide: a
 *   finished file parses it (ps_feed_line), a running one leaves it.
 * - Returns 0, or a negative errno from reading or from ops->line (the
 *   emitter failed); em->origin.file is the caller's.
 * - Memory: one read chunk plus the longest line (at most max_line).
 */
#ifndef PS_INPUT_FEED_H
#define PS_INPUT_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "formats/format.h"

/* The longest first line a head holds: loadgen's perf-start is far shorter,
 * Locust's header is refused above 64 KiB anyway. */
#define PS_INPUT_HEAD_MAX ((size_t)1 << 20)

typedef struct ps_head_buf {
  ps_input_head head;
  ps_buf first;    /* holds head.first_line */
  char *real_path; /* holds head.real_path */
} ps_head_buf;

/* Fills out->head for `ops` opening a file of `kind` at `path` (the name
 * the points' origin and the run identity use) open as `fd`. Returns 0, or
 * a negative errno when the file cannot be looked at (fstat) or read. */
int ps_input_read_head(int fd, const char *path, const ps_format_ops *ops,
                       ps_input_kind kind, ps_head_buf *out);
void ps_head_buf_free(ps_head_buf *h);

typedef struct ps_feed_last {
  ps_buf text;      /* the unterminated last line; len 0 when there is none */
  uint64_t line_no; /* its line number */
} ps_feed_last;

int ps_feed_fd(int fd, const ps_format_ops *ops, ps_parser *p, ps_emitter *em,
               uint64_t end_offset, size_t max_line, ps_feed_last *last);

/* One line (complete, or a finished file's last one) to ops->line as line
 * number `line_no`, offered again while the emitter answers -EAGAIN. */
int ps_feed_line(const ps_format_ops *ops, ps_parser *p, ps_emitter *em,
                 const char *data, size_t len, uint64_t line_no);

/* A document of a format with a `stream` op (formats/format.h), read from
 * `fd`'s current position to its end in pieces of PS_FEED_STREAM_CHUNK
 * bytes and handed over piece by piece, then its points asked for (again
 * while the emitter answers -EAGAIN). Memory: one piece, whatever the
 * document's size. Returns 0, or a negative errno from reading or from
 * the parser. */
#define PS_FEED_STREAM_CHUNK ((size_t)1 << 20)
int ps_feed_stream(int fd, const ps_format_ops *ops, ps_parser *p, ps_emitter *em);
/* The pieces only (no points asked for); for drivers that ask themselves. */
int ps_feed_stream_pieces(int fd, const ps_format_ops *ops, ps_parser *p, ps_emitter *em);

#endif
