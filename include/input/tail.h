/*
 * tail: reading one file as complete lines from a committed offset, and the
 * file identity that survives rename but notices truncation and rewrites.
 *
 * Contract
 * - A ps_tail reads with pread() from `read_off` and frames lines in its own
 *   buffer. ps_tail_next() hands out the next complete line (without '\n',
 *   and without a trailing '\r') and does NOT consume it: calling it again
 *   returns the same line until ps_tail_consume(). That is how a record
 *   refused with -EAGAIN (emit.h) is offered to its parser again.
 * - A last line without '\n' is never returned; it waits for its newline.
 * - Cost is linear in the bytes read: the newline search resumes where it
 *   stopped, the buffer grows geometrically and is compacted at most once per
 *   line, so a 10 MB line costs O(10 MB).
 * - A line longer than `max_line` bytes is not buffered: ps_tail_next()
 *   returns PS_TAIL_TOO_LONG once (with its line number and start offset),
 *   the bytes up to the next '\n' are then discarded as they are read, and
 *   PS_TAIL_SKIPPED (with the end offset) marks where reading resumes.
 *   Memory stays below max_line + one read chunk.
 * - Offsets are file offsets: `end` of a line is the offset just past its
 *   '\n', which is what may be committed once its points are acknowledged.
 * - A descriptor that cannot pread (a pipe: `convert -`) is read with
 *   read() in order instead; it must be at `offset` when the tail starts.
 *
 * File identity is (device, inode, fingerprint): a hash of the first
 * min(size, PS_FP_MAX) bytes, with the length it covers. A file that grew
 * keeps its identity (its first fp_len bytes are unchanged); a file truncated
 * or rewritten in place (copytruncate, same length or not) does not.
 */
#ifndef PS_INPUT_TAIL_H
#define PS_INPUT_TAIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "core/buf.h"

#define PS_FP_MAX 256

typedef struct ps_file_id {
  uint64_t dev;
  uint64_t ino;
  uint32_t fp_len;
  uint64_t fp_hash;
  /* Birth time (statx), 0 where the file system does not keep it. A reused
   * inode whose new file starts with the same bytes has another birth. */
  int64_t btime_ns;
} ps_file_id;

typedef enum ps_id_match {
  PS_ID_OTHER = 0,     /* another file (device or inode differ) */
  PS_ID_SAME = 1,      /* same file, possibly grown */
  PS_ID_REWRITTEN = 2, /* same inode, but its first bytes changed or shrank */
} ps_id_match;

/* Identity of an open file now (reads up to PS_FP_MAX bytes). */
int ps_file_identify(int fd, const struct stat *st, ps_file_id *id);
/* 1 unless both birth times are known and differ (then `fd` is another
 * file on a reused inode). One statx: for reopening, not for every read. */
int ps_file_same_birth(int fd, const ps_file_id *saved);
/* Compares an open file with a saved identity. On PS_ID_SAME, *now gets the
 * current identity (fingerprint widened if the file grew). */
ps_id_match ps_file_id_check(int fd, const struct stat *st, const ps_file_id *saved,
                             ps_file_id *now);

enum {
  PS_TAIL_NONE = 0,     /* no complete line buffered: fill, or wait */
  PS_TAIL_LINE = 1,     /* *out is a line */
  PS_TAIL_TOO_LONG = 2, /* the line at out->line_no is over max_line: skipped */
  PS_TAIL_SKIPPED = 3,  /* the skipped line ended at out->end */
};

typedef struct ps_tail_line {
  const char *data;
  size_t len;
  uint64_t line_no; /* 1-based */
  uint64_t start;   /* file offset of the first byte */
  uint64_t end;     /* file offset just past the '\n' */
} ps_tail_line;

typedef struct ps_tail {
  int fd;
  uint64_t read_off; /* next byte to read from the file */
  uint64_t buf_off;  /* file offset of buf.data[0] */
  uint64_t line_no;  /* number of the line starting at buf.data[pos] */
  ps_buf buf;
  size_t pos;  /* start of the unconsumed data */
  size_t scan; /* where the newline search resumes (>= pos) */
  size_t max_line;
  int skipping;     /* discarding an over-long line up to its '\n' */
  int stream;       /* fd is a pipe: read() in order, not pread() */
  ps_tail_line cur; /* the line last returned, until consumed */
  int have_cur;
} ps_tail;

void ps_tail_init(ps_tail *t, int fd, uint64_t offset, uint64_t line_no, size_t max_line);
/* Reads up to `chunk` more bytes. Returns the count read, 0 at end of file,
 * or a negative errno. */
long ps_tail_fill(ps_tail *t, size_t chunk);
int ps_tail_next(ps_tail *t, ps_tail_line *out);
void ps_tail_consume(ps_tail *t);
/* Hands out the buffered unterminated last line as if it were complete
 * (end = the end of the data read), for a producer known to be finished
 * (a loadgen run that ended). PS_TAIL_NONE when there is none. Consume it
 * like any line. */
int ps_tail_partial(ps_tail *t, ps_tail_line *out);
/* Gives back buffer memory beyond what the unconsumed bytes need (call at
 * end of file: an idle file then costs bytes, not a read chunk). A buffer
 * with nothing in it goes into *spare when `spare` is given and holds
 * none; else it is freed. */
void ps_tail_trim(ps_tail *t, ps_buf *spare);
/* Before reading `chunk` more: a tail without a buffer, or whose buffer
 * is too small for what it holds plus a chunk, takes the spare's when
 * that is larger (what it holds is copied over, its own buffer freed; the
 * spare is left empty). A reader going from file to file then reads into
 * one buffer instead of growing and faulting in a fresh one for each
 * file's multi-megabyte line. `spare` may be NULL. */
void ps_tail_adopt(ps_tail *t, ps_buf *spare, size_t chunk);
/* Offset and number of the first line not yet consumed. */
uint64_t ps_tail_offset(const ps_tail *t);
/* Bytes buffered but not consumed (a partial last line, lines not framed). */
size_t ps_tail_buffered(const ps_tail *t);
void ps_tail_free(ps_tail *t);

#endif
