/*
 * alert/dispatch.c: the outbox, sent (include/alert/dispatch.h).
 *
 * Design
 * - One attempt per channel at a time: a receiver that is down sees one
 *   request per back-off step, not one per pending event at once, and the
 *   answers come back in order.
 * - The outbox's times are the wall clock (they are saved and compared
 *   after a restart); the timer's delay is the difference to now, capped
 *   at a minute so a clock step cannot park the outbox for long.
 */
#include "alert/dispatch.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_WAIT_MS 60000

int64_t ps_alert_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void timer_cb(uv_timer_t *t) { ps_alert_dispatch_kick(t->data); }

void ps_alert_dispatch_init(ps_alert_dispatch *d, uv_loop_t *loop, ps_outbox *box,
                            const ps_alert_channel *channels, size_t nchannels, int once,
                            const ps_alert_dispatch_hooks *hooks) {
  memset(d, 0, sizeof *d);
  d->loop = loop;
  d->box = box;
  d->once = once;
  if (hooks)
    d->hooks = *hooks;
  for (size_t c = 0; c < nchannels && c < PS_OUTBOX_MAX_CHANNELS; c++) {
    d->ch[c] = channels[c];
    if (channels[c].send)
      d->live |= 1u << c;
    d->attempt[c] = (ps_alert_attempt){d, NULL, (unsigned)c, 0};
  }
  uv_timer_init(loop, &d->timer);
  d->timer.data = d;
}

static void record(ps_alert_dispatch *d, ps_alert_attempt *at, const ps_alert_answer *a) {
  ps_outbox_entry *e = at->e;
  at->e = NULL;
  at->in_flight = 0;
  if (d->hooks.answered)
    d->hooks.answered(d->hooks.ctx, &d->ch[at->channel], &e->ev, a);
  ps_outbox_result(d->box, e, at->channel, a->delivered, ps_alert_now_ms());
  if (d->hooks.changed)
    d->hooks.changed(d->hooks.ctx);
}

static void on_done(void *arg, const ps_alert_answer *a) {
  ps_alert_attempt *at = arg;
  ps_alert_dispatch *d = at->d;
  record(d, at, a);
  ps_alert_dispatch_kick(d);
  if (d->hooks.settled)
    d->hooks.settled(d->hooks.ctx);
}

void ps_alert_dispatch_kick(ps_alert_dispatch *d) {
  if (d->closing || d->held)
    return;
  int64_t now = ps_alert_now_ms();
  for (unsigned c = 0; c < PS_OUTBOX_MAX_CHANNELS; c++) {
    ps_alert_attempt *at = &d->attempt[c];
    /* A channel that failed at once moves on to the next entry; each entry
     * fails at most once per kick, so this ends. */
    while ((d->live & (1u << c)) && !at->in_flight) {
      ps_outbox_entry *e = ps_outbox_due(d->box, c, now, d->once);
      if (!e)
        break;
      ps_outbox_begin(e, c);
      at->e = e;
      at->in_flight = 1;
      int rc = d->ch[c].send(d->ch[c].ctx, &e->ev, on_done, at);
      if (rc == 0)
        break;
      ps_alert_answer a = {0};
      snprintf(a.text, sizeof a.text, "cannot start: %s", strerror(-rc));
      record(d, at, &a);
    }
  }
  uv_timer_stop(&d->timer);
  if (d->once)
    return; /* nothing is retried by a one-shot run */
  unsigned idle = d->live;
  for (unsigned c = 0; c < PS_OUTBOX_MAX_CHANNELS; c++)
    if (d->attempt[c].in_flight)
      idle &= ~(1u << c);
  int64_t next = ps_outbox_next_ms(d->box, idle);
  if (next == INT64_MAX)
    return;
  int64_t wait = next - now;
  if (wait < 0)
    wait = 0;
  if (wait > MAX_WAIT_MS)
    wait = MAX_WAIT_MS;
  uv_timer_start(&d->timer, timer_cb, (uint64_t)wait, 0);
}

size_t ps_alert_dispatch_busy(const ps_alert_dispatch *d) {
  size_t n = 0;
  for (unsigned c = 0; c < PS_OUTBOX_MAX_CHANNELS; c++)
    n += d->attempt[c].in_flight != 0;
  return n;
}

size_t ps_alert_dispatch_pending(const ps_alert_dispatch *d, unsigned mask) {
  return ps_outbox_untried(d->box, mask & d->live) + ps_alert_dispatch_busy(d);
}

size_t ps_alert_dispatch_failed(const ps_alert_dispatch *d, unsigned mask) {
  return ps_outbox_failed(d->box, mask & d->live);
}

void ps_alert_dispatch_hold(ps_alert_dispatch *d) {
  d->held = 1;
  uv_timer_stop(&d->timer);
}

void ps_alert_dispatch_close(ps_alert_dispatch *d) {
  d->closing = 1;
  if (!uv_is_closing((uv_handle_t *)&d->timer))
    uv_close((uv_handle_t *)&d->timer, NULL);
}
