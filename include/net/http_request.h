/*
 * net/http_request: one HTTP request on a transport (net/http_loop.h), for
 * what the agent sends besides writes, e.g. alert webhooks.
 *
 * Contract
 * - ps_http_request() starts the request and returns 0, or a negative errno
 *   without ever calling back: -EINVAL for a bad option (no URL, an unknown
 *   method, a body on GET, a header that is not one "Name: value" line),
 *   -ENOMEM, -ECANCELED when the transport is closing.
 * - The options are copied except `body`, which is borrowed: it must stay
 *   valid and unchanged until the callback.
 * - The callback is called exactly once, from the loop, with a result
 *   valid only during the call:
 *     status 0: the server answered; http_status says what (a 500 is an
 *       answer too). body/body_len: its first answer_limit bytes
 *       (`truncated` when there was more).
 *     -ETIMEDOUT (timeout_ms or connect_timeout_ms passed), -ECONNREFUSED,
 *     -EIO (anything else: DNS, reset, TLS, a half-read answer); `error`
 *       holds curl's words for it.
 *     -ECANCELED: the transport was closed first.
 * - TLS is verified unless `insecure`; redirects are never followed.
 */
#ifndef PS_NET_HTTP_REQUEST_H
#define PS_NET_HTTP_REQUEST_H

#include <stddef.h>

#include "net/http_loop.h"

typedef struct ps_http_request_opts {
  const char *method;          /* GET, POST, PUT, PATCH or DELETE; NULL: GET,
                                  or POST when there is a body */
  const char *url;
  const char *const *headers;  /* "Name: value" lines, NULL-terminated; may be NULL */
  const char *body;            /* borrowed until the callback; NULL: none */
  size_t body_len;
  long timeout_ms;             /* the whole request; <= 0: 10 s */
  long connect_timeout_ms;     /* <= 0: the smaller of timeout_ms and 10 s */
  int insecure;                /* 1: do not verify the server's certificate */
  const char *ca_file;         /* NULL: the system's CAs */
  size_t answer_limit;         /* bytes of the answer kept; 0: 64 KiB */
} ps_http_request_opts;

typedef struct ps_http_result {
  int status;
  long http_status; /* 0 when nothing was answered */
  const char *body; /* NUL-terminated; "" when empty */
  size_t body_len;
  int truncated;
  const char *error; /* "" when status is 0 */
} ps_http_result;

typedef void (*ps_http_request_cb)(const ps_http_result *r, void *arg);

int ps_http_request(ps_http_loop *hl, const ps_http_request_opts *o,
                    ps_http_request_cb cb, void *arg);

#endif
