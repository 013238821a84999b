/*
 * alert/webhook: the `webhook` channel: each event POSTed to a URL as its
 * JSON object, or as Slack's {"text": ...} (docs/alerts.md "webhook").
 *
 * Contract
 * - Requests go through a transport of the channel's own on the agent's
 *   loop (net/http_loop.h, curl multi): never blocking the loop. TLS is
 *   always verified (against tls_ca_file when given); redirects are not
 *   followed; the whole request is bounded by timeout_ms.
 * - A 2xx answer is delivered; anything else (another status, a timeout,
 *   no connection) is not, and the answer says what happened with the
 *   first line of what the server said. The request carries the event's id
 *   in an X-Perfship-Alert-Id header, so a receiver can drop a copy.
 * - The URL is a secret (Slack's are): nothing here prints it; messages
 *   name it by ps_alert_url_redact(): scheme and host only.
 * - ps_alert_webhook_close() cancels the requests in flight (their
 *   callbacks report "not delivered") and frees the channel once its
 *   transport is closed.
 */
#ifndef PS_ALERT_WEBHOOK_H
#define PS_ALERT_WEBHOOK_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "alert/channel.h"
#include "core/config.h"

typedef struct ps_alert_webhook ps_alert_webhook;

/* Copies what it is given. Returns 0, -EINVAL (no URL) or a negative errno
 * of the transport. */
int ps_alert_webhook_new(ps_alert_webhook **out, uv_loop_t *loop, const char *url,
                         const char *tls_ca_file, ps_webhook_format format,
                         int64_t timeout_ms);
int ps_alert_webhook_send(void *w, const ps_alert_event *ev, ps_alert_done_cb done,
                          void *arg);
void ps_alert_webhook_close(ps_alert_webhook *w);

/* "https://hooks.slack.com" for "https://u:p@hooks.slack.com:443/T0/B0/xyz":
 * the scheme and the host (with its port), never the path, the query or
 * credentials. */
void ps_alert_url_redact(const char *url, char *out, size_t n);

#endif
