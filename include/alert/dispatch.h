/*
 * alert/dispatch: sends what the outbox holds through the channels, on the
 * loop, with retries (docs/alerts.md "Delivered once, never lost").
 *
 * Contract
 * - The channels (alert/channel.h) are given at init in the order of the
 *   outbox's channel names. Each channel has at most one attempt in flight;
 *   entries go oldest first. ps_alert_dispatch_kick() starts what is due
 *   and arms a timer for what is due later (the back-off of
 *   alert/outbox.h); call it after adding an entry.
 * - After every attempt the outbox is updated, then the hooks run:
 *   `answered` with the channel, the event and the answer (the caller logs
 *   it; the event is only valid during the call), `changed` so the caller
 *   saves the outbox, `settled` so a caller waiting for quiet can look.
 * - `once` (run --once): every entry is tried once per channel, at once,
 *   whatever its back-off; nothing is retried by this process.
 *   ps_alert_dispatch_pending() counts entries a channel has not tried yet
 *   or is trying; ps_alert_dispatch_failed() those a channel tried without
 *   delivering.
 * - ps_alert_dispatch_close() stops the timer and starts nothing more; the
 *   caller closes the channels, whose cancelled attempts are recorded as
 *   not delivered (they stay in the outbox for the next start).
 */
#ifndef PS_ALERT_DISPATCH_H
#define PS_ALERT_DISPATCH_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "alert/channel.h"
#include "alert/outbox.h"

typedef struct ps_alert_dispatch ps_alert_dispatch;

typedef struct ps_alert_dispatch_hooks {
  void (*answered)(void *ctx, const ps_alert_channel *ch, const ps_alert_event *ev,
                   const ps_alert_answer *a);
  void (*changed)(void *ctx);
  void (*settled)(void *ctx);
  void *ctx;
} ps_alert_dispatch_hooks;

typedef struct ps_alert_attempt {
  ps_alert_dispatch *d;
  ps_outbox_entry *e;
  unsigned channel;
  int in_flight;
} ps_alert_attempt;

struct ps_alert_dispatch {
  uv_loop_t *loop;
  uv_timer_t timer;
  ps_outbox *box;
  ps_alert_channel ch[PS_OUTBOX_MAX_CHANNELS];
  unsigned live; /* channels configured (bits) */
  ps_alert_attempt attempt[PS_OUTBOX_MAX_CHANNELS];
  ps_alert_dispatch_hooks hooks;
  int once;
  int held;
  int closing;
};

/* `channels[i]` may have a NULL send: that channel is not configured (its
 * entries wait, e.g. restored from a state file written with it). */
void ps_alert_dispatch_init(ps_alert_dispatch *d, uv_loop_t *loop, ps_outbox *box,
                            const ps_alert_channel *channels, size_t nchannels, int once,
                            const ps_alert_dispatch_hooks *hooks);
void ps_alert_dispatch_kick(ps_alert_dispatch *d);
/* Attempts in flight. */
size_t ps_alert_dispatch_busy(const ps_alert_dispatch *d);
/* --once: entries a live channel in `mask` has still to try or is trying. */
size_t ps_alert_dispatch_pending(const ps_alert_dispatch *d, unsigned mask);
size_t ps_alert_dispatch_failed(const ps_alert_dispatch *d, unsigned mask);
/* Starts nothing more (a stop); attempts in flight finish. */
void ps_alert_dispatch_hold(ps_alert_dispatch *d);
void ps_alert_dispatch_close(ps_alert_dispatch *d);

/* The wall clock in ms (the outbox's times). */
int64_t ps_alert_now_ms(void);

#endif
