/*
 * jsontext.c: see include/core/jsontext.h.
 *
 * A backslash is only valid JSON inside a string, where it always starts a
 * two-character escape (or \uXXXX), so skipping the character after every
 * backslash is enough to tell "\u0000" from an escaped backslash followed
 * by the text "u0000"; no full tokenizer is needed.
 */
#include "core/jsontext.h"

#include <errno.h>
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

int ps_json_hex4(const char *q, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = q[i];
    v <<= 4;
    if (c >= '0' && c <= '9')
      v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v |= (unsigned)(c - 'A' + 10);
    else
      return -1;
  }
  *out = v;
  return 0;
}

char *ps_utf8_put(char *w, unsigned cp) {
  if (cp < 0x80) {
    *w++ = (char)cp;
  } else if (cp < 0x800) {
    *w++ = (char)(0xC0 | (cp >> 6));
    *w++ = (char)(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *w++ = (char)(0xE0 | (cp >> 12));
    *w++ = (char)(0x80 | ((cp >> 6) & 0x3F));
    *w++ = (char)(0x80 | (cp & 0x3F));
  } else {
    *w++ = (char)(0xF0 | (cp >> 18));
    *w++ = (char)(0x80 | ((cp >> 12) & 0x3F));
    *w++ = (char)(0x80 | ((cp >> 6) & 0x3F));
    *w++ = (char)(0x80 | (cp & 0x3F));
  }
  return w;
}

static const char *escape_fail(const char **why, const char *reason) {
  if (why)
    *why = reason;
  return NULL;
}

static const char *digits(const char *p, const char *end) {
  while (p < end && *p >= '0' && *p <= '9')
    p++;
  return p;
}

const char *ps_json_number_end(const char *p, const char *end) {
  if (p < end && *p == '-')
    p++;
  if (p >= end || *p < '0' || *p > '9')
    return NULL;
  p = *p == '0' ? p + 1 : digits(p, end);
  if (p < end && *p == '.') {
    const char *d = ++p;
    if ((p = digits(p, end)) == d)
      return NULL;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-'))
      p++;
    const char *d = p;
    if ((p = digits(p, end)) == d)
      return NULL;
  }
  return p;
}

const char *ps_json_escape(const char *p, const char *end, unsigned *cp, const char **why) {
  if (end - p < 2)
    return escape_fail(why, "unterminated string");
  char e = p[1];
  p += 2;
  switch (e) {
  case '"': *cp = '"'; return p;
  case '\\': *cp = '\\'; return p;
  case '/': *cp = '/'; return p;
  case 'b': *cp = '\b'; return p;
  case 'f': *cp = '\f'; return p;
  case 'n': *cp = '\n'; return p;
  case 'r': *cp = '\r'; return p;
  case 't': *cp = '\t'; return p;
  case 'u': break;
  default: return escape_fail(why, "bad escape in string");
  }
  unsigned hi, lo;
  if (end - p < 4 || ps_json_hex4(p, &hi))
    return escape_fail(why, "bad \\u escape");
  p += 4;
  if (hi >= 0xDC00 && hi <= 0xDFFF)
    return escape_fail(why, "lone low surrogate in \\u escape");
  if (hi >= 0xD800 && hi <= 0xDBFF) {
    if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || ps_json_hex4(p + 2, &lo) ||
        lo < 0xDC00 || lo > 0xDFFF)
      return escape_fail(why, "high surrogate without its low half");
    p += 6;
    hi = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
  }
  *cp = hi;
  return p;
}

/* The length of the well-formed UTF-8 character at s (RFC 3629: no
 * overlong form, no surrogate, nothing past U+10FFFF), or 0. */
static size_t utf8_char_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  if (c < 0x80)
    return 1;
  size_t len = c >= 0xc2 && c <= 0xdf   ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
  if (!len || len > n)
    return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90) ||
      (c == 0xf4 && s[1] > 0x8f))
    return 0;
  return len;
}

int ps_utf8_repair(ps_buf *out, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    size_t run = i;
    size_t len;
    while (run < n && (len = utf8_char_len(p + run, n - run)) > 0)
      run += len;
    if (run > i && ps_buf_append(out, s + i, run - i) < 0)
      return -ENOMEM;
    i = run;
    if (i < n) {
      if (ps_buf_append(out, "\xef\xbf\xbd", 3) < 0)
        return -ENOMEM;
      i++;
    }
  }
  return ps_buf_putc(out, '\0') < 0 ? -ENOMEM : (out->len--, 0);
}
