/*
 * jsontext: checks on raw JSON text that cJSON does not make.
 *
 * Contract
 * - cJSON hands strings out as C strings, so a NUL inside one (a raw NUL
 *   byte, which JSON forbids but cJSON accepts, or the escape \u0000) cuts
 *   the value short without an error. A parser calls ps_json_nul_check() on
 *   the text before parsing and refuses the record when it fails, so a
 *   value is stored whole or not at all.
 * - Returns NULL when the text holds no NUL, else a reason (static text)
 *   and the 1-based column of the first one in *col.
 * - The two in-place JSON readers (core/jsonspan.h and the jsonl format)
 *   share the pieces of a string's escapes: ps_json_hex4() reads the four
 *   hex digits of a \u escape (0, or -1 when one is not a hex digit), and
 *   ps_utf8_put() writes a code point (below 0x110000) as UTF-8 at `w`
 *   and returns the byte after it (at most four are written).
 * - ps_json_escape() reads the one escape whose backslash is at `p` (a
 *   \uXXXX high surrogate with its low half): *cp gets the character it
 *   stands for, and it returns the byte after the escape. A bad escape
 *   (unknown letter, bad hex, a surrogate alone, cut by `end`) returns
 *   NULL with a reason (static text) in *why when `why` is given. \u0000
 *   is not refused here (cp 0): callers that cannot store it say so.
 * - ps_json_number_end() returns the byte after the longest prefix of
 *   [p, end) that is a number as JSON writes it
 *   (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?), or NULL when none
 *   begins at p: the one grammar of both JSON readers.
 * - ps_utf8_repair() appends `s` (n bytes) to `out` with each byte that
 *   does not begin a well-formed UTF-8 character replaced by U+FFFD, so
 *   text printed from data (cJSON copies a string's bytes as they are) is
 *   valid UTF-8 for any JSON reader. out stays NUL-terminated. 0 or
 *   -ENOMEM.
 */
#ifndef PS_CORE_JSONTEXT_H
#define PS_CORE_JSONTEXT_H

#include <stddef.h>

#include "core/buf.h"

const char *ps_json_nul_check(const char *data, size_t len, size_t *col);
int ps_json_hex4(const char *q, unsigned *out);
char *ps_utf8_put(char *w, unsigned cp);
const char *ps_json_escape(const char *p, const char *end, unsigned *cp, const char **why);
const char *ps_json_number_end(const char *p, const char *end);
int ps_utf8_repair(ps_buf *out, const char *s, size_t n);

#endif
