/*
 * alert/health: when the agent itself is unwell, and when it is well again
 * (agent_unhealthy, agent_recovered; docs/alerts.md "Where they come from").
 *
 * Contract
 * - The server: ps_alert_server_down_ms() says how long InfluxDB has not
 *   taken a write. "Unreachable" counts from the sink's first failed attempt
 *   since the server last answered; "answering but not taking writes" (401,
 *   403, 404, 5xx) from the last acknowledgement while batches wait, but
 *   not longer than the oldest batch in flight has waited. Nothing waiting
 *   is not an outage.
 * - ps_alert_health_server(): an outage is to be said once it lasted longer
 *   than `unhealthy_after_s`, once; its recovery once nothing is down and
 *   the server acknowledged a batch since the outage was said.
 * - ps_alert_health_input(): rejected input (records, points, lines the
 *   server refused) begins an episode, to be said once with the count seen
 *   since the last look; more rejections extend it unsaid; it ends, unsaid,
 *   after `unhealthy_after_s` without one.
 * - Pure: counts and times are given. The caller keeps a ps_alert_health
 *   per agent and saves the times marked "saved" (the outage and the
 *   episode survive a restart); every change but PS_HEALTH_SAME is one to
 *   save.
 */
#ifndef PS_ALERT_HEALTH_H
#define PS_ALERT_HEALTH_H

#include <stddef.h>
#include <stdint.h>

typedef struct ps_alert_health {
  int64_t server_since_s;    /* saved: the outage said (wall clock), 0: none */
  uint64_t batches_at_raise; /* batches acknowledged when it was said */
  int64_t input_since_s;     /* saved: the episode of rejected input said, 0: none */
  int64_t input_last_s;      /* saved: its latest rejection */
  uint64_t rejected_seen;    /* rejections counted at the last look */
} ps_alert_health;

typedef enum ps_alert_health_change {
  PS_HEALTH_SAME = 0,
  PS_HEALTH_SERVER_DOWN,  /* say the outage that began at *since_s */
  PS_HEALTH_SERVER_BACK,  /* say the end of the outage that began at *since_s */
  PS_HEALTH_INPUT_BAD,    /* say the episode: *fresh rejections */
  PS_HEALTH_INPUT_MORE,   /* more rejections in the episode already said */
  PS_HEALTH_INPUT_CALM,   /* the episode ended */
} ps_alert_health_change;

/* What the sink and its delivery know, on the loop's clock (ms). */
typedef struct ps_alert_server_view {
  uint64_t now_ms;
  uint64_t unreachable_since_ms; /* first failed attempt since it answered; 0: it answers */
  uint64_t last_answer_ms;       /* its last acknowledgement */
  size_t waiting;                /* batches waiting to be written */
  size_t inflight;               /* of them, in flight */
  uint64_t oldest_ms;            /* how long the oldest in flight has waited */
} ps_alert_server_view;

/* How long the server has not taken a write that waits (ms), 0 when it
 * takes them or nothing waits. */
uint64_t ps_alert_server_down_ms(const ps_alert_server_view *v);

/* The server has been down for `down_ms` (above), `batches_sent`
 * acknowledged in all: PS_HEALTH_SERVER_DOWN, PS_HEALTH_SERVER_BACK (with
 * *since_s) or PS_HEALTH_SAME. */
ps_alert_health_change ps_alert_health_server(ps_alert_health *h, uint64_t down_ms,
                                              uint64_t batches_sent, int64_t unhealthy_after_s,
                                              int64_t now_s, int64_t *since_s);

/* `rejected_total` input rejected in all so far: PS_HEALTH_INPUT_BAD (with
 * *fresh), PS_HEALTH_INPUT_MORE, PS_HEALTH_INPUT_CALM or PS_HEALTH_SAME. */
ps_alert_health_change ps_alert_health_input(ps_alert_health *h, uint64_t rejected_total,
                                             int64_t unhealthy_after_s, int64_t now_s,
                                             uint64_t *fresh);

#endif
