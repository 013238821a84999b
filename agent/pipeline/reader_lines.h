/*
 * reader_lines.h (private to agent/pipeline/reader*.c): reading a line file's new lines, a slice at a time.
 *
 * Contract
 * - pl_reader_lines_turn() gives complete lines of `f` to its parser until
 *   about `budget` bytes were parsed or read, and says in *spent what it
 *   used; it returns 1 when more is waiting (the caller queues the file
 *   again), 0 otherwise. An unterminated last line waits;
 *   pl_reader_read_partial() hands it over when the run tracker knows the
 *   file is complete.
 * - Before anything new is read the file is checked: reopened if it was
 *   closed while idle (and retired if it is no longer the same file),
 *   restarted from offset 0 when truncated or rewritten in place.
 * - A line longer than watch.max_line_bytes is skipped, counted and
 *   recorded with file and line; a line the parser rejects is counted and
 *   the reading goes on. Lines that need no acknowledgement commit at once.
 * - A point refused by back-pressure pauses the file (`paused`): the
 *   reader resumes it first when room was made. A record emitted over
 *   several turns (`yielded`) continues first in the next turn.
 * - Read to the end: the buffer is trimmed, the `at_end` hook runs (a run
 *   may be judged now); a draining file is retired after its settle time.
 */
#ifndef PS_PIPELINE_READER_LINES_H
#define PS_PIPELINE_READER_LINES_H

#include <stddef.h>

#include "pipeline/reader.h"

/* Bytes read from a file at once. */
#define PL_READ_CHUNK ((size_t)1 << 20)

int pl_reader_lines_turn(pl_reader *rd, pl_file *f, size_t budget, size_t *spent);
/* pl_reader_read_partial() is in pipeline/reader.h. */

#endif
