/*
 * net/http_reply.c: an HTTP/1.x answer read incrementally
 * (include/net/http_reply.h).
 *
 * DESIGN
 * - Lines are gathered in a fixed buffer in the struct, so a hostile
 *   server cannot make the agent allocate by sending long headers; the body
 *   goes to the caller's buffer, bounded by `limit`.
 * - Only what the sink acts on is read from the headers (the body's
 *   length, the status, Retry-After, whether the connection ends): any
 *   other header is skipped, however it is spelt.
 * - Tolerant where servers are sloppy (a bare LF, a missing reason phrase,
 *   chunk extensions), strict where being wrong would mix one answer with
 *   the next (two different Content-Lengths, a malformed chunk size).
 */
#include "net/http_reply.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

enum {
  ST_STATUS,
  ST_HEADERS,
  ST_BODY_LEN,
  ST_CHUNK_SIZE,
  ST_CHUNK_DATA,
  ST_CHUNK_END,
  ST_TRAILERS,
  ST_UNTIL_CLOSE,
  ST_DONE,
};

/* Private flags of one answer's headers, in `chunked`'s neighbours. */
#define HTTP10 0x1
#define KEEP_ALIVE 0x2

static void reset_headers(ps_http_reply *r) {
  r->chunked = 0;
  r->have_length = 0;
  r->remaining = 0;
  r->retry_after_s = 0;
  r->close = 0;
}

void ps_http_reply_begin(ps_http_reply *r, ps_buf *body, size_t limit) {
  r->status = 0;
  r->done = 0;
  r->answer = (ps_http_answer){body, limit, 0};
  r->error = NULL;
  r->received = 0;
  r->state = ST_STATUS;
  r->line_len = 0;
  r->flags = 0;
  reset_headers(r);
  if (body)
    ps_buf_reset(body);
}

static long fail(ps_http_reply *r, const char *why) {
  r->error = why;
  return -EPROTO;
}

static void trim(const char **s, size_t *n) {
  while (*n && (**s == ' ' || **s == '\t')) {
    (*s)++;
    (*n)--;
  }
  while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
    (*n)--;
}

/* Decimal digits only, no sign, no overflow past 2^62. */
static int parse_decimal(const char *s, size_t n, uint64_t *out) {
  if (!n)
    return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9' || v > (UINT64_C(1) << 62) / 10)
      return -1;
    v = v * 10 + (uint64_t)(s[i] - '0');
  }
  *out = v;
  return 0;
}

/* Does the comma-separated list s[0..n) hold `token`? `last`: only as its
 * last element. */
static int has_token(const char *s, size_t n, const char *token, int last) {
  size_t tl = strlen(token);
  int found = 0;
  while (n) {
    const char *comma = memchr(s, ',', n);
    size_t el = comma ? (size_t)(comma - s) : n;
    const char *e = s;
    size_t en = el;
    trim(&e, &en);
    found = en == tl && strncasecmp(e, token, tl) == 0;
    if (found && !last)
      return 1;
    if (!comma)
      break;
    s = comma + 1;
    n -= el + 1;
  }
  return last && found;
}

static uint64_t retry_after(const char *v, size_t n) {
  uint64_t s;
  if (parse_decimal(v, n, &s) == 0)
    return s;
  char date[128];
  if (n >= sizeof date)
    return 0;
  memcpy(date, v, n);
  date[n] = '\0';
  time_t at = curl_getdate(date, NULL);
  time_t now = time(NULL);
  return at > now ? (uint64_t)(at - now) : 0;
}

static long status_line(ps_http_reply *r, const char *s, size_t n) {
  /* "HTTP/1.1 204 No Content"; the reason phrase may be missing. */
  if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)s[7]) || s[8] != ' ' ||
      !isdigit((unsigned char)s[9]) || !isdigit((unsigned char)s[10]) ||
      !isdigit((unsigned char)s[11]) || (n > 12 && s[12] != ' '))
    return fail(r, "not an HTTP/1.x status line");
  r->flags = s[7] == '0' ? HTTP10 : 0;
  r->status = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
  if (r->status < 100)
    return fail(r, "a status below 100");
  reset_headers(r);
  r->state = ST_HEADERS;
  return 0;
}

static long header_line(ps_http_reply *r, const char *s, size_t n) {
  const char *colon = memchr(s, ':', n);
  if (!colon || colon == s)
    return fail(r, "a header line without a name");
  size_t nl = (size_t)(colon - s);
  const char *v = colon + 1;
  size_t vn = n - nl - 1;
  trim(&v, &vn);
#define IS(name) (nl == sizeof(name) - 1 && strncasecmp(s, name, nl) == 0)
  if (IS("Content-Length")) {
    uint64_t len;
    if (parse_decimal(v, vn, &len))
      return fail(r, "a Content-Length that is not a number");
    if (r->have_length && len != r->remaining)
      return fail(r, "two different Content-Lengths");
    r->have_length = 1;
    r->remaining = len;
  } else if (IS("Transfer-Encoding")) {
    /* Anything but chunked last: the body ends with the connection. */
    r->chunked = has_token(v, vn, "chunked", 1) ? 1 : -1;
  } else if (IS("Connection")) {
    if (has_token(v, vn, "close", 0))
      r->close = 1;
    if (has_token(v, vn, "keep-alive", 0))
      r->flags |= KEEP_ALIVE;
  } else if (IS("Retry-After")) {
    r->retry_after_s = retry_after(v, vn);
  }
#undef IS
  return 0;
}

static long headers_end(ps_http_reply *r) {
  if (r->status < 200) {
    if (r->status == 101)
      return fail(r, "the server switched protocols");
    r->state = ST_STATUS; /* an interim answer: the real one follows */
    return 0;
  }
  if ((r->flags & HTTP10) && !(r->flags & KEEP_ALIVE))
    r->close = 1;
  if (r->status == 204 || r->status == 304) {
    r->state = ST_DONE;
  } else if (r->chunked > 0) {
    r->state = ST_CHUNK_SIZE;
  } else if (r->chunked < 0 || !r->have_length) {
    r->close = 1;
    r->state = ST_UNTIL_CLOSE;
  } else {
    r->state = r->remaining ? ST_BODY_LEN : ST_DONE;
  }
  return 0;
}

static long chunk_size(ps_http_reply *r, const char *s, size_t n) {
  uint64_t v = 0;
  size_t i = 0;
  for (; i < n && isxdigit((unsigned char)s[i]); i++) {
    if (v >> 56)
      return fail(r, "a chunk size too large");
    int c = (unsigned char)s[i];
    v = v * 16 + (uint64_t)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
  }
  if (!i || (i < n && s[i] != ';' && s[i] != ' ' && s[i] != '\t'))
    return fail(r, "a malformed chunk size");
  r->remaining = v;
  r->state = v ? ST_CHUNK_DATA : ST_TRAILERS;
  return 0;
}

/* One whole line (without its end) in the current state. */
static long on_line(ps_http_reply *r, const char *s, size_t n) {
  switch (r->state) {
  case ST_STATUS: return status_line(r, s, n);
  case ST_HEADERS: return n ? header_line(r, s, n) : headers_end(r);
  case ST_CHUNK_SIZE: return chunk_size(r, s, n);
  case ST_CHUNK_END:
    if (n)
      return fail(r, "a chunk longer than its size");
    r->state = ST_CHUNK_SIZE;
    return 0;
  case ST_TRAILERS:
    if (!n)
      r->state = ST_DONE;
    return 0;
  }
  return fail(r, "a line where none belongs");
}

static int in_line_state(int st) {
  return st == ST_STATUS || st == ST_HEADERS || st == ST_CHUNK_SIZE || st == ST_CHUNK_END ||
         st == ST_TRAILERS;
}

long ps_http_reply_feed(ps_http_reply *r, const char *data, size_t len) {
  size_t i = 0;
  if (r->error)
    return -EPROTO;
  while (i < len && r->state != ST_DONE) {
    if (in_line_state(r->state)) {
      const char *nl = memchr(data + i, '\n', len - i);
      size_t take = nl ? (size_t)(nl - (data + i)) : len - i;
      if (r->line_len + take > sizeof r->line)
        return fail(r, "a header line over 8 KiB");
      memcpy(r->line + r->line_len, data + i, take);
      r->line_len += take;
      i += take;
      if (!nl)
        break;
      i++; /* the LF */
      size_t n = r->line_len;
      if (n && r->line[n - 1] == '\r')
        n--;
      r->line_len = 0;
      long rc = on_line(r, r->line, n);
      if (rc < 0)
        return rc;
      continue;
    }
    size_t avail = len - i;
    if (r->state == ST_UNTIL_CLOSE) {
      ps_http_answer_keep(&r->answer, data + i, avail);
      i = len;
      break;
    }
    size_t take = r->remaining < avail ? (size_t)r->remaining : avail;
    ps_http_answer_keep(&r->answer, data + i, take);
    i += take;
    r->remaining -= take;
    if (!r->remaining)
      r->state = r->state == ST_CHUNK_DATA ? ST_CHUNK_END : ST_DONE;
  }
  r->received += i;
  if (r->state == ST_DONE)
    r->done = 1;
  return (long)i;
}

int ps_http_reply_eof(ps_http_reply *r) {
  if (r->done)
    return 0;
  if (r->state == ST_UNTIL_CLOSE && !r->error) {
    r->state = ST_DONE;
    r->done = 1;
    return 0;
  }
  if (!r->received)
    return -ECONNRESET;
  if (!r->error)
    r->error = "the answer was cut short";
  return -EPROTO;
}
