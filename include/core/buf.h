/*
 * buf: a growable byte buffer with an optional hard limit.
 *
 * Contract
 * - The caller owns the ps_buf struct; the buffer owns `data`.
 * - `limit` bounds `len` (0 = unbounded). An append that would pass the limit
 *   fails with -E2BIG and leaves the buffer unchanged, so a hostile input can
 *   never grow a buffer without bound (the curl dynbuf "toobig" idea).
 * - Growth is geometric: appending n bytes one at a time costs O(n).
 * - `data` is always NUL-terminated when non-NULL (the NUL is not in `len`),
 *   so the contents can be handed to string functions and cJSON directly.
 * - Functions return 0 or a negative errno; a failed call changes nothing.
 */
#ifndef PS_CORE_BUF_H
#define PS_CORE_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct ps_buf {
  char *data;
  size_t len;
  size_t cap;
  size_t limit;
} ps_buf;

void ps_buf_init(ps_buf *b, size_t limit);
/* Makes room for `extra` more bytes (and the NUL). The check that room is
 * already there is inline: encoders reserve once per element of every
 * point. */
int ps_buf_grow(ps_buf *b, size_t extra);
static inline int ps_buf_reserve(ps_buf *b, size_t extra) {
  /* cap never passes limit + 1, so room within cap is within the limit */
  if (b->cap > b->len && extra < b->cap - b->len)
    return 0;
  return ps_buf_grow(b, extra);
}
int ps_buf_append(ps_buf *b, const void *p, size_t n);
int ps_buf_puts(ps_buf *b, const char *s);
int ps_buf_putc(ps_buf *b, char c);
int ps_buf_printf(ps_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int ps_buf_vprintf(ps_buf *b, const char *fmt, va_list ap);
/* Drops bytes past `len` (no-op when len >= b->len). */
void ps_buf_truncate(ps_buf *b, size_t len);
/* Removes the first n bytes, moving the rest to the front. */
void ps_buf_consume(ps_buf *b, size_t n);
void ps_buf_reset(ps_buf *b);
/* Frees the storage; the struct may be reused after ps_buf_init. NULL ok. */
void ps_buf_free(ps_buf *b);

#endif
