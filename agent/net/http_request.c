/*
 * net/http_request.c: one request on the transport (include/net/http_request.h).
 *
 * DESIGN: each request owns its easy handle, header list and answer, in one
 * allocation freed right after its callback; the transport's multi handle
 * keeps connections alive between requests to the same server. Headers are
 * checked for CR and LF because their values may come from configuration
 * or data: a line break would smuggle another header (or a request) in.
 */
#include "net/http_request.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net/http_easy.h"

#define DEFAULT_TIMEOUT_MS 10000L
#define DEFAULT_ANSWER_LIMIT (64 * 1024)

typedef struct request {
  ps_http_xfer x;
  CURL *easy;
  struct curl_slist *headers;
  ps_buf body;
  ps_http_answer answer;
  ps_http_request_cb cb;
  void *arg;
  char errbuf[CURL_ERROR_SIZE];
} request;

static void request_free(request *r) {
  curl_easy_cleanup(r->easy);
  curl_slist_free_all(r->headers);
  ps_buf_free(&r->body);
  free(r);
}

static void on_done(ps_http_xfer *x, int status, CURLcode result) {
  request *r = x->data;
  ps_http_result res = {0};
  res.status = status ? status : ps_http_errno(result);
  if (!res.status)
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &res.http_status);
  res.body = r->body.data ? r->body.data : "";
  res.body_len = r->body.len;
  res.truncated = r->answer.truncated;
  if (status == -ECANCELED)
    res.error = "cancelled: the transport was closed";
  else if (res.status)
    res.error = r->errbuf[0] ? r->errbuf : curl_easy_strerror(result);
  else
    res.error = "";
  r->cb(&res, r->arg);
  request_free(r);
}

static int header_ok(const char *h) {
  const char *colon = strchr(h, ':');
  return colon && colon != h && !strpbrk(h, "\r\n");
}

static int set_method(CURL *e, const char *method, const char *body, size_t len) {
  if (!method)
    method = body ? "POST" : "GET";
  if (!strcmp(method, "GET")) {
    if (body)
      return -EINVAL;
    return curl_easy_setopt(e, CURLOPT_HTTPGET, 1L) == CURLE_OK ? 0 : -EINVAL;
  }
  if (strcmp(method, "POST") && strcmp(method, "PUT") && strcmp(method, "PATCH") &&
      strcmp(method, "DELETE"))
    return -EINVAL;
  /* POSTFIELDS is not copied: the caller keeps the body until the callback. */
  if (curl_easy_setopt(e, CURLOPT_POSTFIELDS, body ? body : "") != CURLE_OK ||
      curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0)) !=
          CURLE_OK)
    return -EINVAL;
  if (strcmp(method, "POST") &&
      curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK)
    return -EINVAL;
  return 0;
}

int ps_http_request(ps_http_loop *hl, const ps_http_request_opts *o,
                    ps_http_request_cb cb, void *arg) {
  if (!hl || !o || !o->url || !cb)
    return -EINVAL;
  request *r = calloc(1, sizeof *r);
  if (!r)
    return -ENOMEM;
  r->cb = cb;
  r->arg = arg;
  r->x.data = r;
  ps_buf_init(&r->body, 0);
  r->answer.body = &r->body;
  r->answer.limit = o->answer_limit ? o->answer_limit : DEFAULT_ANSWER_LIMIT;
  int rc = 0;
  if (!(r->easy = curl_easy_init()))
    rc = -ENOMEM;
  /* "Expect:" stops curl from waiting for a 100-continue on large bodies. */
  if (!rc && !(r->headers = curl_slist_append(NULL, "Expect:")))
    rc = -ENOMEM;
  for (const char *const *h = o->headers; !rc && h && *h; h++) {
    struct curl_slist *n;
    if (!header_ok(*h))
      rc = -EINVAL;
    else if (!(n = curl_slist_append(r->headers, *h)))
      rc = -ENOMEM;
    else
      r->headers = n;
  }
  long timeout = o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
  long connect = o->connect_timeout_ms > 0 ? o->connect_timeout_ms
                 : timeout < DEFAULT_TIMEOUT_MS ? timeout
                                                : DEFAULT_TIMEOUT_MS;
  ps_http_easy_opts eo = {o->url, timeout, connect, o->insecure, o->ca_file,
                          &r->answer, r->errbuf};
  if (!rc)
    rc = ps_http_easy_setup(r->easy, &eo);
  if (!rc && curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->headers) != CURLE_OK)
    rc = -EINVAL;
  if (!rc)
    rc = set_method(r->easy, o->method, o->body, o->body_len);
  if (!rc)
    rc = ps_http_xfer_start(hl, &r->x, r->easy, on_done);
  if (rc)
    request_free(r);
  return rc;
}
