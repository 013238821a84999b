/*
 * alert/webhook.c: the webhook channel (include/alert/webhook.h).
 *
 * Design
 * - The body must stay valid until the request's callback (the transport
 *   borrows it), so each request owns its body in one allocation with its
 *   callback, freed after the callback.
 * - curl's error texts name the host, never the path; the answer still
 *   leaves curl's text out when it would repeat the URL, so no message can
 *   carry the secret part.
 */
#include "alert/webhook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/http_request.h"

#define ANSWER_KEEP 1024

struct ps_alert_webhook {
  ps_http_loop *hl;
  char *url;
  char *ca_file;
  ps_webhook_format format;
  long timeout_ms;
  char label[200]; /* the redacted URL, for answers */
};

typedef struct request {
  ps_alert_webhook *w;
  char *body;
  ps_alert_done_cb done;
  void *arg;
  char id_header[80];
} request;

void ps_alert_url_redact(const char *url, char *out, size_t n) {
  if (!n)
    return;
  const char *scheme_end = url ? strstr(url, "://") : NULL;
  if (!scheme_end) {
    snprintf(out, n, "(a URL)");
    return;
  }
  const char *host = scheme_end + 3;
  size_t auth_len = strcspn(host, "/?#");
  const char *at = memchr(host, '@', auth_len);
  if (at) {
    auth_len -= (size_t)(at + 1 - host);
    host = at + 1;
  }
  snprintf(out, n, "%.*s://%.*s", (int)(scheme_end - url), url, (int)auth_len, host);
}

int ps_alert_webhook_new(ps_alert_webhook **out, uv_loop_t *loop, const char *url,
                         const char *tls_ca_file, ps_webhook_format format,
                         int64_t timeout_ms) {
  *out = NULL;
  if (!url || !url[0])
    return -EINVAL;
  ps_alert_webhook *w = calloc(1, sizeof *w);
  if (!w)
    return -ENOMEM;
  w->url = strdup(url);
  w->ca_file = tls_ca_file && tls_ca_file[0] ? strdup(tls_ca_file) : NULL;
  if (!w->url || (tls_ca_file && tls_ca_file[0] && !w->ca_file)) {
    free(w->url);
    free(w->ca_file);
    free(w);
    return -ENOMEM;
  }
  w->format = format;
  w->timeout_ms = timeout_ms > 0 ? (long)timeout_ms : 5000;
  ps_alert_url_redact(url, w->label, sizeof w->label);
  int rc = ps_http_loop_init(&w->hl, loop, 2);
  if (rc < 0) {
    free(w->url);
    free(w->ca_file);
    free(w);
    return rc;
  }
  *out = w;
  return 0;
}

static void on_answer(const ps_http_result *r, void *arg) {
  request *q = arg;
  ps_alert_webhook *w = q->w;
  ps_alert_answer a = {0};
  char said[200] = "";
  if (r->status == 0) {
    ps_alert_answer_excerpt(said, sizeof said, r->body, r->body_len);
    a.delivered = r->http_status >= 200 && r->http_status < 300;
    snprintf(a.text, sizeof a.text, "%.120s answered HTTP %ld%s%.160s", w->label, r->http_status,
             said[0] ? ": " : "", said);
  } else if (r->status == -ECANCELED) {
    snprintf(a.text, sizeof a.text, "%.120s: stopped: the agent is shutting down", w->label);
  } else {
    const char *why = r->error && !strstr(r->error, w->url) ? r->error : "";
    ps_alert_answer_excerpt(said, sizeof said, why, strlen(why));
    snprintf(a.text, sizeof a.text, "%.120s: %s%s%.160s", w->label,
             r->status == -ETIMEDOUT      ? "no answer in time"
             : r->status == -ECONNREFUSED ? "connection refused"
                                          : "request failed",
             said[0] ? ": " : "", said);
  }
  q->done(q->arg, &a);
  free(q->body);
  free(q);
}

int ps_alert_webhook_send(void *wv, const ps_alert_event *ev, ps_alert_done_cb done,
                          void *arg) {
  ps_alert_webhook *w = wv;
  if (!w->hl)
    return -ECANCELED;
  request *q = calloc(1, sizeof *q);
  if (!q)
    return -ENOMEM;
  q->w = w;
  q->done = done;
  q->arg = arg;
  q->body = w->format == PS_WEBHOOK_SLACK ? ps_alert_event_slack(ev) : ps_alert_event_json(ev);
  if (!q->body) {
    free(q);
    return -ENOMEM;
  }
  snprintf(q->id_header, sizeof q->id_header, "X-Perfship-Alert-Id: %s", ev->id);
  const char *headers[] = {"Content-Type: application/json",
                           "User-Agent: perfship/" PERFSHIP_VERSION, q->id_header, NULL};
  ps_http_request_opts o = {
      .method = "POST",
      .url = w->url,
      .headers = headers,
      .body = q->body,
      .body_len = strlen(q->body),
      .timeout_ms = w->timeout_ms,
      .ca_file = w->ca_file,
      .answer_limit = ANSWER_KEEP,
  };
  int rc = ps_http_request(w->hl, &o, on_answer, q);
  if (rc < 0) {
    free(q->body);
    free(q);
  }
  return rc;
}

static void transport_closed(void *arg) {
  ps_alert_webhook *w = arg;
  free(w->url);
  free(w->ca_file);
  free(w);
}

void ps_alert_webhook_close(ps_alert_webhook *w) {
  if (!w || !w->hl)
    return;
  ps_http_loop *hl = w->hl;
  w->hl = NULL;
  ps_http_loop_close(hl, transport_closed, w);
}
