/*
 * net/http_easy.c: common options of an easy handle (include/net/http_easy.h).
 *
 * DESIGN: the answer is bounded because servers decide its size: InfluxDB
 * 1.x names every unparsable line of a write in its answer, and a webhook
 * receiver may answer with a page of HTML. Past the limit the body is still
 * read (returning less than given would make curl abort the transfer, and
 * the status line is what matters), only not kept.
 */
#include "net/http_easy.h"

#include <errno.h>

void ps_http_answer_keep(ps_http_answer *a, const char *p, size_t n) {
  if (!a->body || !n)
    return;
  size_t room = a->body->len < a->limit ? a->limit - a->body->len : 0;
  size_t take = n < room ? n : room;
  if (take < n)
    a->truncated = 1;
  if (take && ps_buf_append(a->body, p, take))
    a->truncated = 1; /* out of memory: lose the text, keep the status */
}

static size_t collect(char *p, size_t size, size_t n, void *userdata) {
  ps_http_answer *a = userdata;
  size_t len = size * n;
  if (a)
    ps_http_answer_keep(a, p, len);
  return len;
}

#define SETOPT(e, opt, val)                                                    \
  do {                                                                         \
    if (curl_easy_setopt((e), (opt), (val)) != CURLE_OK)                       \
      return -EINVAL;                                                          \
  } while (0)

int ps_http_easy_setup(CURL *e, const ps_http_easy_opts *o) {
  SETOPT(e, CURLOPT_URL, o->url);
  SETOPT(e, CURLOPT_TIMEOUT_MS, o->timeout_ms);
  SETOPT(e, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
  SETOPT(e, CURLOPT_NOSIGNAL, 1L);
  SETOPT(e, CURLOPT_WRITEFUNCTION, collect);
  SETOPT(e, CURLOPT_WRITEDATA, o->answer);
  SETOPT(e, CURLOPT_TCP_KEEPALIVE, 1L);
  SETOPT(e, CURLOPT_FOLLOWLOCATION, 0L);
  if (o->ca_file && o->ca_file[0])
    SETOPT(e, CURLOPT_CAINFO, o->ca_file);
  if (o->insecure) {
    SETOPT(e, CURLOPT_SSL_VERIFYPEER, 0L);
    SETOPT(e, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (o->errbuf) {
    o->errbuf[0] = '\0';
    SETOPT(e, CURLOPT_ERRORBUFFER, o->errbuf);
  }
  return 0;
}

int ps_http_errno(CURLcode result) {
  switch (result) {
  case CURLE_OK:
    return 0;
  case CURLE_OPERATION_TIMEDOUT:
    return -ETIMEDOUT;
  case CURLE_COULDNT_CONNECT:
    return -ECONNREFUSED;
  default:
    return -EIO;
  }
}
