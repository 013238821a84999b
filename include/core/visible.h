/*
 * visible: text from the data made safe to show on a terminal, in a log
 * line or a chat message: characters that would change how the text
 * around them reads are shown as their escape instead of being obeyed.
 *
 * Contract
 * - Shown as the six characters "\uXXXX" (lowercase hex): the direction
 *   controls U+202A-U+202E, U+2066-U+2069, U+200E, U+200F and U+061C (a
 *   run named "daily-perf-\u202edeliaf-ton" would otherwise read
 *   "daily-perf-not-failed": the "Trojan Source" trick, docs/report.md),
 *   the C1 controls U+0080-U+009F, the ASCII controls other than tab,
 *   newline and CR, and DEL (ESC would drive the terminal).
 * - Newline and CR: kept with PS_VISIBLE_KEEP_LINES, shown as their
 *   escape with PS_VISIBLE_ESCAPE_LINES (a cell quoted in a reject, where a
 *   blank would hide a stray CR), else a space (a log line stays one
 *   line). Tab is kept. Every other byte, invalid UTF-8
 *   included, is copied as it is.
 * - ps_visible_into() writes into a fixed buffer of `cap` bytes (cap >= 1),
 *   NUL-terminated, never splitting an escape or a character at the cut;
 *   it returns the length written. ps_visible() appends to a ps_buf and
 *   returns 0 or the buffer's -ENOMEM / -E2BIG. ps_visible_needed() says whether `s` holds
 *   anything to show.
 * - The terminal writers: every string from the data that a command
 *   prints goes through one of these two (tests/integration/
 *   test_structure.py holds the commands to it), so no command has a
 *   writer of its own to forget. ps_visible_put() writes `s` shown as
 *   above (newlines as spaces), cut to `width` bytes and padded to it with
 *   spaces (width 0: whole, padded to nothing). ps_visible_say() formats a
 *   message (printf) and writes all of it shown, for a message that quotes
 *   data (a run, a series, the server's words); a newline ending the
 *   format is kept. Both return 0 or EOF.
 */
#ifndef PS_CORE_VISIBLE_H
#define PS_CORE_VISIBLE_H

#include <stddef.h>
#include <stdio.h>

#include "core/buf.h"

#define PS_VISIBLE_KEEP_LINES 1
#define PS_VISIBLE_ESCAPE_LINES 2

size_t ps_visible_into(char *dst, size_t cap, const char *s, size_t n, int flags);
int ps_visible(ps_buf *out, const char *s, int flags);
int ps_visible_needed(const char *s);
int ps_visible_put(FILE *out, const char *s, int width);
int ps_visible_say(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
