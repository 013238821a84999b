/*
 * net/http_reply: reads an HTTP/1.x answer as its bytes arrive, for the
 * agent's own connections (net/http_conn.h). No I/O, no allocation beyond
 * the body buffer it is given.
 *
 * Contract
 * - ps_http_reply_begin() readies `r` for the answer to one request; what it
 *   keeps of the body goes to `body` (reset here), at most `limit` bytes (the
 *   rest is read and dropped, and `answer.truncated` is set, as
 *   net/http_easy.h's collector does). `body` may be NULL: the body is read and dropped.
 * - ps_http_reply_feed() reads up to `len` bytes and returns how many it
 *   used (>= 0), or -EPROTO when they cannot be an HTTP/1.x answer; then
 *   `r->error` says why in a few words. It uses fewer than `len` only once
 *   the answer is over (`r->done`): what is left belongs to no answer.
 * - ps_http_reply_eof(): the connection closed. 0 when that ends the
 *   answer (done already, or a body delimited by the close); -EPROTO for an
 *   answer cut short, -ECONNRESET when no byte of it had come.
 * - The body's length is read as RFC 9112 says: none for 1xx, 204 and 304;
 *   chunked when Transfer-Encoding names it last; else Content-Length; else
 *   until the close. Interim 1xx answers are skipped whole. Lines may end
 *   in CRLF or a bare LF. A header line longer than PS_HTTP_REPLY_LINE_MAX
 *   is an error.
 * - Read from the headers: the status, Retry-After (seconds, or an HTTP
 *   date counted from now; 0 when absent or past), and whether the
 *   connection closes after this answer (`close`: "Connection: close", or
 *   HTTP/1.0 without "keep-alive", or a body delimited by the close).
 */
#ifndef PS_NET_HTTP_REPLY_H
#define PS_NET_HTTP_REPLY_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "net/http_easy.h"

#define PS_HTTP_REPLY_LINE_MAX 8192

typedef struct ps_http_reply {
  /* results */
  int status;
  uint64_t retry_after_s;
  int close;
  int done;
  ps_http_answer answer; /* the body kept; answer.truncated: more came */
  const char *error;     /* static text, with -EPROTO */
  size_t received;       /* bytes fed so far */
  /* private */
  int state;
  int flags;   /* HTTP/1.0, keep-alive asked for */
  int chunked; /* 1 chunked, -1 another coding, 0 none named */
  int have_length;
  uint64_t remaining; /* of the body or of the current chunk */
  size_t line_len;
  char line[PS_HTTP_REPLY_LINE_MAX];
} ps_http_reply;

void ps_http_reply_begin(ps_http_reply *r, ps_buf *body, size_t limit);
long ps_http_reply_feed(ps_http_reply *r, const char *data, size_t len);
int ps_http_reply_eof(ps_http_reply *r);

#endif
