/*
 * input/gzlines: the lines of a gzip file that may still be being written
 * (a loadgen stage's chain-stage-N.slog.gz, docs/loadgen.md "Slogs").
 *
 * Contract
 * - Reads `fd` from its current position to EOF, inflating incrementally
 *   (zlib, gzip framing, several members one after the other), and hands
 *   out one complete line ('\n'-terminated; the '\n' not included) per
 *   ps_gzlines_next() call, numbered from 1.
 * - Memory is bounded whatever the line length: a line up to `window`
 *   bytes comes whole (`tail` NULL); a longer one comes as its first
 *   `window` bytes (`head`) and its last PS_GZLINES_TAIL bytes (`tail`),
 *   with its full length in `len`. The pointers are valid until the next
 *   call.
 * - The end of the input is not an error: ps_gzlines_next() returns 0 and
 *   ps_gzlines_end() tells how the stream ended. `complete`: every member
 *   ended with its trailer (CRC and length checked) and nothing followed;
 *   a last line without '\n' is then a line like any other. Otherwise
 *   `no_trailer` (the producer is still writing, or was killed: the last
 *   member has no end) and `cut_bytes` (a last line without '\n', never
 *   handed out: it may be a prefix of a line still to come). An empty
 *   file is not complete (the producer has not written yet).
 * - A corrupt member (zlib data or CRC error, garbage between members) is
 *   not fatal to the caller: it is reported in the end (`corrupt`, zlib's
 *   message, the line number it broke in: `corrupt_line`, i.e. the number
 *   the next line would have had). Every line completed before the break
 *   is handed out (a CRC or length error, at the member's end, loses no
 *   line), the line it broke is dropped, and reading resumes at the next
 *   gzip member header if one follows. `corrupt` counts such breaks.
 * - Returns 1 (a line), 0 (end), or a negative errno (read(2) failed, or
 *   out of memory); after an error the reader can only be freed.
 * - No allocation after open except the line window growing to `window`.
 */
#ifndef PS_INPUT_GZLINES_H
#define PS_INPUT_GZLINES_H

#include <stddef.h>
#include <stdint.h>

/* How much of a long line's end is kept: enough for the slog envelope's
 * trailing "time", "monotime" and "seconds" (docs/schema.md "Slog"). */
#define PS_GZLINES_TAIL 512

typedef struct ps_gzline {
  const char *head; /* the line, or its first `window` bytes */
  size_t head_len;
  const char *tail; /* NULL when the line is whole in head */
  size_t tail_len;
  uint64_t len;     /* the full length, without '\n' */
  uint64_t line_no; /* 1-based */
} ps_gzline;

typedef struct ps_gzlines_status {
  int complete;          /* every member ended with a good trailer */
  int no_trailer;        /* the last member had no end */
  uint64_t cut_bytes;    /* bytes of an unterminated last line (dropped) */
  unsigned corrupt;      /* corrupt stretches skipped */
  uint64_t corrupt_line; /* the line number of the first break */
  char message[128];     /* zlib's word on the first break */
  uint64_t members;      /* gzip members begun */
  uint64_t in_bytes;     /* compressed bytes read */
  uint64_t out_bytes;    /* uncompressed bytes (all lines, '\n' included) */
} ps_gzlines_status;

typedef struct ps_gzlines ps_gzlines;

/* `window` 0: 64 KiB. Returns 0 or -ENOMEM. The reader does not own fd. */
int ps_gzlines_open(ps_gzlines **out, int fd, size_t window);
int ps_gzlines_next(ps_gzlines *r, ps_gzline *line);
/* After an end that was not complete: the file may have grown, read on
 * from where the stream stopped (the cut line included). A tailing
 * reader's only way on, since a gzip stream cannot be entered mid-way. */
void ps_gzlines_again(ps_gzlines *r);
const ps_gzlines_status *ps_gzlines_end(const ps_gzlines *r);
void ps_gzlines_free(ps_gzlines *r);

#endif
