/*
 * buf.c: growable, optionally bounded byte buffer. See include/core/buf.h.
 *
 * Every encoder and reader in perfship appends into one of these, so the
 * growth policy lives here once: doubling, capped by the limit, and a failed
 * append never leaves a half-written value behind.
 */
#include "core/buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ps_buf_init(ps_buf *b, size_t limit) {
  b->data = NULL;
  b->len = 0;
  b->cap = 0;
  b->limit = limit;
}

int ps_buf_grow(ps_buf *b, size_t extra) {
  if (extra > SIZE_MAX - b->len - 1)
    return -E2BIG;
  size_t need = b->len + extra;
  if (b->limit && need > b->limit)
    return -E2BIG;
  if (need + 1 <= b->cap)
    return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < need + 1)
    cap = cap > SIZE_MAX / 2 ? need + 1 : cap * 2;
  if (b->limit && cap > b->limit + 1)
    cap = b->limit + 1;
  char *p = realloc(b->data, cap);
  if (!p)
    return -ENOMEM;
  /* A first allocation must already hold the promised terminator: a
   * reader that reserves and then reads nothing (an empty file) hands the
   * buffer on as it is. */
  if (!b->data)
    p[0] = '\0';
  b->data = p;
  b->cap = cap;
  return 0;
}

int ps_buf_append(ps_buf *b, const void *p, size_t n) {
  int rc = ps_buf_reserve(b, n);
  if (rc)
    return rc;
  if (n)
    memcpy(b->data + b->len, p, n);
  b->len += n;
  b->data[b->len] = '\0';
  return 0;
}

int ps_buf_puts(ps_buf *b, const char *s) { return ps_buf_append(b, s, strlen(s)); }

int ps_buf_putc(ps_buf *b, char c) {
  if (b->len + 1 < b->cap) {
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
    return 0;
  }
  return ps_buf_append(b, &c, 1);
}

int ps_buf_vprintf(ps_buf *b, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap2);
  va_end(ap2);
  if (n < 0)
    return -EINVAL;
  if ((size_t)n < sizeof small)
    return ps_buf_append(b, small, (size_t)n);
  int rc = ps_buf_reserve(b, (size_t)n);
  if (rc)
    return rc;
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  b->len += (size_t)n;
  return 0;
}

int ps_buf_printf(ps_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = ps_buf_vprintf(b, fmt, ap);
  va_end(ap);
  return rc;
}

void ps_buf_truncate(ps_buf *b, size_t len) {
  if (len < b->len) {
    b->len = len;
    b->data[len] = '\0';
  }
}

void ps_buf_consume(ps_buf *b, size_t n) {
  if (n >= b->len) {
    ps_buf_reset(b);
    return;
  }
  memmove(b->data, b->data + n, b->len - n);
  b->len -= n;
  b->data[b->len] = '\0';
}

void ps_buf_reset(ps_buf *b) {
  b->len = 0;
  if (b->data)
    b->data[0] = '\0';
}

void ps_buf_free(ps_buf *b) {
  if (!b)
    return;
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}
