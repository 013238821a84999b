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

const char *ps_json_nul_check(const char *data, size_t len, size_t *col) {
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
