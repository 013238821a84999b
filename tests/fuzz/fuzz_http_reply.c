/*
 * fuzz_http_reply.c: a server's answer as the agent's own connection reads
 * it (agent/net/http_reply.c).
 *
 * Input: the bytes a server sends; the first byte picks the size of the
 * pieces they arrive in (tests/fuzz/corpus/http_reply/ holds InfluxDB
 * 1.6.7's answers and chunked, HTTP/1.0 and interim ones).
 * Property: the answer read whole and the answer read in pieces agree
 * (done, status, error or not, the body kept, Retry-After within the
 * second the clock may tick, close); the
 * body kept never passes its limit; the bytes used never pass those given;
 * an answer that is done uses nothing more.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/http_reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIMIT 64

static void read_all(const char *p, size_t n, size_t step, ps_http_reply *r, ps_buf *body,
                     long *outcome) {
  ps_http_reply_begin(r, body, LIMIT);
  size_t at = 0;
  *outcome = 0;
  while (at < n) {
    size_t take = step && step < n - at ? step : n - at;
    long used = ps_http_reply_feed(r, p + at, take);
    if (used < 0) {
      *outcome = used;
      return;
    }
    if ((size_t)used > take || (!r->done && (size_t)used != take))
      abort();
    at += (size_t)used;
    if (r->done) {
      if (ps_http_reply_feed(r, p + at, n - at) != 0)
        abort();
      break;
    }
  }
  if (!r->done)
    *outcome = ps_http_reply_eof(r);
  if (body->len > LIMIT)
    abort();
}

/* A date in Retry-After is counted from now: the clock may tick between
 * the two reads. */
static uint64_t gap(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t step = 1 + data[0] % 17;
  const char *p = (const char *)data + 1;
  size_t n = size - 1;
  static ps_http_reply whole, pieces; /* 8 KiB each: not on the stack */
  ps_buf b1, b2;
  ps_buf_init(&b1, 0);
  ps_buf_init(&b2, 0);
  long o1, o2;
  read_all(p, n, 0, &whole, &b1, &o1);
  read_all(p, n, step, &pieces, &b2, &o2);
  if (o1 != o2 || whole.done != pieces.done)
    abort();
  if (whole.done &&
      (whole.status != pieces.status || gap(whole.retry_after_s, pieces.retry_after_s) > 1 ||
       whole.close != pieces.close || whole.answer.truncated != pieces.answer.truncated ||
       b1.len != b2.len || (b1.len && memcmp(b1.data, b2.data, b1.len) != 0)))
    abort();
  ps_buf_free(&b1);
  ps_buf_free(&b2);
  return 0;
}
