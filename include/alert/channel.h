/*
 * alert/channel: what every way of telling people (exec, webhook, the
 * perfship_alert point) offers the dispatcher (alert/dispatch.h).
 *
 * Contract
 * - send() starts delivering one event and returns 0, then calls `done`
 *   exactly once, from the loop, never from inside send(); or it returns a
 *   negative errno and never calls back (libuv's rule).
 * - The answer says whether the event was delivered (the program exited 0,
 *   the server answered 2xx, InfluxDB acknowledged the point) and, in
 *   `text`, what the other side answered, for the log and for
 *   `perfship alert test`. It never holds a secret (a webhook's URL).
 * - The event is borrowed for the call only; a channel copies what it
 *   needs.
 */
#ifndef PS_ALERT_CHANNEL_H
#define PS_ALERT_CHANNEL_H

#include "alert/event.h"

typedef struct ps_alert_answer {
  int delivered;
  char text[320];
} ps_alert_answer;

typedef void (*ps_alert_done_cb)(void *arg, const ps_alert_answer *a);

typedef struct ps_alert_channel {
  const char *name; /* "exec", "webhook", "influxdb": also the outbox's name */
  int (*send)(void *ctx, const ps_alert_event *ev, ps_alert_done_cb done, void *arg);
  void *ctx;
} ps_alert_channel;

/* Copies `s` into `out` (size n) for a message: control characters become
 * spaces, and it is cut at the first line end and at n - 1 bytes. */
void ps_alert_answer_excerpt(char *out, size_t n, const char *s, size_t len);

#endif
