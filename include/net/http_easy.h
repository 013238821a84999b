/*
 * net/http_easy: the options every HTTP request of perfship sets on a curl
 * easy handle, and a bounded collector for the answer.
 *
 * Contract
 * - ps_http_easy_setup() sets the URL, the total and connect timeouts, no
 *   signals (threads and the loop), no redirects (a redirect could carry
 *   credentials to another host), TCP keep-alive, TLS verification (off
 *   only when `insecure`) and the CA file, curl's error buffer, and a write
 *   function that keeps at most `answer->limit` bytes of the body in
 *   answer->body (the rest is read and dropped, and `truncated` is set).
 *   It sets neither the method nor headers nor credentials: the caller's.
 *   Every option is checked: returns 0, or -EINVAL when curl refused one.
 * - Nothing here allocates. The handle, the answer and the error buffer are
 *   the caller's and must outlive the transfer.
 * - ps_http_errno() names a failed transfer the libuv way: -ETIMEDOUT,
 *   -ECONNREFUSED, else -EIO (DNS, reset, TLS, a half-read answer).
 */
#ifndef PS_NET_HTTP_EASY_H
#define PS_NET_HTTP_EASY_H

#include <stddef.h>

#include <curl/curl.h>

#include "core/buf.h"

typedef struct ps_http_answer {
  ps_buf *body;   /* the first `limit` bytes of the answer */
  size_t limit;
  int truncated;  /* more came and was dropped (or memory ran out) */
} ps_http_answer;

typedef struct ps_http_easy_opts {
  const char *url;
  long timeout_ms;         /* the whole transfer; > 0 */
  long connect_timeout_ms; /* > 0 */
  int insecure;            /* 1: accept any certificate and host name */
  const char *ca_file;     /* NULL or "": the system's CAs */
  ps_http_answer *answer;  /* NULL: the body is read and dropped */
  char *errbuf;            /* NULL or CURL_ERROR_SIZE bytes */
} ps_http_easy_opts;

int ps_http_easy_setup(CURL *e, const ps_http_easy_opts *o);

/* Keeps what fits under a->limit of `n` more bytes of the body; the rest
 * is dropped and `truncated` set (also when memory runs out). A NULL
 * a->body keeps nothing. The collector's rule, for any reader of answers. */
void ps_http_answer_keep(ps_http_answer *a, const char *p, size_t n);

int ps_http_errno(CURLcode result);

#endif
