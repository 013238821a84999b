/*
 * jsontext.c: see include/core/jsontext.h.
 *
 * A backslash is only valid JSON inside a string, where it always starts a
 * two-character escape (or \uXXXX), so skipping the character after every
 * backslash is enough to tell "\u0000" from an escaped backslash followed
 * by the text "u0000"; no full tokenizer is needed.
 */
#include "core/jsontext.h"

#include <string.h>

/* The byte-by-byte rule, for text that holds a raw NUL somewhere: a NUL
 * right after a backslash is passed over with the escape, as always. */
static const char *nul_check_slow(const char *data, size_t len, size_t *col) {
  for (size_t i = 0; i < len; i++) {
    if (data[i] == '\0') {
      if (col)
        *col = i + 1;
      return "NUL byte in the line";
    }
    if (data[i] != '\\' || i + 1 >= len)
      continue;
    if (data[i + 1] == 'u' && i + 6 <= len && memcmp(data + i + 2, "0000", 4) == 0) {
      if (col)
        *col = i + 1;
      return "\\u0000 in a string (a NUL cannot be stored)";
    }
    i++; /* the escaped character */
  }
  return NULL;
}

/* Without a raw NUL (memchr finds none: the common case), only the
 * backslashes need a look, and memchr jumps from one to the next: the
 * same answer as the loop above at a fraction of its cost on a 9 MB
 * line. */
const char *ps_json_nul_check(const char *data, size_t len, size_t *col) {
  if (memchr(data, '\0', len))
    return nul_check_slow(data, len, col);
  const char *end = data + len;
  for (const char *p = data; (p = memchr(p, '\\', (size_t)(end - p))) && end - p > 1; p += 2) {
    if (p[1] == 'u' && end - p >= 6 && memcmp(p + 2, "0000", 4) == 0) {
      if (col)
        *col = (size_t)(p - data) + 1;
      return "\\u0000 in a string (a NUL cannot be stored)";
    }
  }
  return NULL;
}
