/*
 * visible.c: controls shown, not obeyed (include/core/visible.h).
 *
 * DESIGN: one decision per position (how many bytes a character takes and
 * whether it is shown as an escape), shared by the fixed-buffer and the
 * ps_buf forms, so a log line and a chat message show a name alike.
 */
#include "core/visible.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The code point to show at s (of n bytes left), with its length in *len;
 * -1 when the byte is copied as it is. */
static long shown_at(const unsigned char *s, size_t n, int flags, size_t *len) {
  unsigned char c = s[0];
  *len = 1;
  if (c < 0x20 || c == 0x7f) {
    if (c == '\t')
      return -1;
    if (c == '\n' || c == '\r')
      return flags & PS_VISIBLE_KEEP_LINES     ? -1
             : flags & PS_VISIBLE_ESCAPE_LINES ? c
                                               : -2; /* -2: a space */
    return c;
  }
  if (c < 0x80)
    return -1;
  if (c == 0xc2 && n >= 2 && s[1] >= 0x80 && s[1] <= 0x9f) {
    *len = 2;
    return s[1];
  }
  if (c == 0xd8 && n >= 2 && s[1] == 0x9c) {
    *len = 2;
    return 0x061c;
  }
  if (c == 0xe2 && n >= 3) {
    unsigned cp = ((unsigned)(c & 0x0f) << 12) | ((unsigned)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
    if ((s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80 &&
        ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
         cp == 0x200f)) {
      *len = 3;
      return (long)cp;
    }
  }
  return -1;
}

size_t ps_visible_into(char *dst, size_t cap, const char *s, size_t n, int flags) {
  const unsigned char *p = (const unsigned char *)s;
  size_t o = 0, i = 0;
  while (i < n && o + 1 < cap) {
    size_t len;
    long cp = shown_at(p + i, n - i, flags, &len);
    if (cp == -1) {
      /* a multibyte character is copied whole or not at all */
      size_t k = 1;
      if (p[i] >= 0xc0)
        while (i + k < n && k < 4 && (p[i + k] & 0xc0) == 0x80)
          k++;
      if (o + k + 1 > cap)
        break;
      memcpy(dst + o, p + i, k);
      o += k;
      i += k;
      continue;
    }
    if (cp == -2) {
      dst[o++] = ' ';
    } else {
      if (o + 6 + 1 > cap)
        break;
      static const char hex[] = "0123456789abcdef";
      unsigned v = (unsigned)cp & 0xffff;
      char esc[6] = {'\\', 'u', hex[v >> 12], hex[(v >> 8) & 15], hex[(v >> 4) & 15], hex[v & 15]};
      memcpy(dst + o, esc, 6);
      o += 6;
    }
    i += len;
  }
  dst[o] = '\0';
  return o;
}

int ps_visible(ps_buf *out, const char *s, int flags) {
  size_t n = s ? strlen(s) : 0;
  size_t need = n * 6 + 1; /* an escape is at most six bytes for one */
  int rc = ps_buf_reserve(out, need);
  if (rc < 0)
    return rc;
  out->len += ps_visible_into(out->data + out->len, need, s ? s : "", n, flags);
  return 0;
}

int ps_visible_needed(const char *s) {
  size_t n = s ? strlen(s) : 0;
  for (size_t i = 0; i < n;) {
    size_t len;
    long cp = shown_at((const unsigned char *)s + i, n - i, 0, &len);
    if (cp >= 0)
      return 1;
    i += len;
  }
  return 0;
}

int ps_visible_put(FILE *out, const char *s, int width) {
  size_t n = s ? strlen(s) : 0;
  char fixed[1024];
  ps_buf whole;
  ps_buf_init(&whole, 0);
  const char *shown = fixed;
  size_t len;
  if (width > 0) {
    size_t cap = (size_t)width + 1 < sizeof fixed ? (size_t)width + 1 : sizeof fixed;
    len = ps_visible_into(fixed, cap, s ? s : "", n, 0);
  } else if (ps_visible(&whole, s, 0) == 0) {
    shown = whole.data ? whole.data : "";
    len = whole.len;
  } else {
    /* out of memory: what fits, never the raw text */
    len = ps_visible_into(fixed, sizeof fixed, s ? s : "", n, 0);
  }
  int rc = fwrite(shown, 1, len, out) == len ? 0 : EOF;
  for (int pad = (int)len; rc == 0 && pad < width; pad++)
    rc = fputc(' ', out) == EOF ? EOF : 0;
  ps_buf_free(&whole);
  return rc;
}

int ps_visible_say(FILE *out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = NULL;
  int n = vasprintf(&text, fmt, ap);
  va_end(ap);
  if (n < 0)
    return EOF;
  /* the message is one line: its own newline is put back after it */
  int nl = n > 0 && text[n - 1] == '\n';
  if (nl)
    text[n - 1] = '\0';
  int rc = ps_visible_put(out, text, 0);
  if (rc == 0 && nl)
    rc = fputc('\n', out) == EOF ? EOF : 0;
  free(text);
  return rc;
}
