/*
 * health.c: the rules of agent_unhealthy and agent_recovered
 * (include/alert/health.h).
 */
#include "alert/health.h"

uint64_t ps_alert_server_down_ms(const ps_alert_server_view *v) {
  uint64_t now = v->now_ms;
  if (v->unreachable_since_ms)
    return now > v->unreachable_since_ms ? now - v->unreachable_since_ms : 0;
  if (!v->waiting)
    return 0;
  /* Answering but not accepting. The last acknowledgement may be long
   * before anything waited (an idle agent): the outage is no older than
   * the oldest batch in flight. */
  uint64_t since_ack = now > v->last_answer_ms ? now - v->last_answer_ms : 0;
  if (v->inflight && v->oldest_ms < since_ack)
    return v->oldest_ms;
  return since_ack;
}

ps_alert_health_change ps_alert_health_server(ps_alert_health *h, uint64_t down_ms,
                                              uint64_t batches_sent, int64_t unhealthy_after_s,
                                              int64_t now_s, int64_t *since_s) {
  *since_s = 0;
  if (!h->server_since_s && down_ms > (uint64_t)unhealthy_after_s * 1000) {
    h->server_since_s = now_s - (int64_t)(down_ms / 1000);
    h->batches_at_raise = batches_sent;
    *since_s = h->server_since_s;
    return PS_HEALTH_SERVER_DOWN;
  }
  /* Recovered only by a write it took: a server that merely answers again
   * may still refuse them. */
  if (h->server_since_s && down_ms == 0 && batches_sent > h->batches_at_raise) {
    *since_s = h->server_since_s;
    h->server_since_s = 0;
    return PS_HEALTH_SERVER_BACK;
  }
  return PS_HEALTH_SAME;
}

ps_alert_health_change ps_alert_health_input(ps_alert_health *h, uint64_t rejected_total,
                                             int64_t unhealthy_after_s, int64_t now_s,
                                             uint64_t *fresh) {
  *fresh = 0;
  if (rejected_total > h->rejected_seen) {
    *fresh = rejected_total - h->rejected_seen;
    h->rejected_seen = rejected_total;
    h->input_last_s = now_s;
    if (h->input_since_s)
      return PS_HEALTH_INPUT_MORE;
    h->input_since_s = now_s;
    return PS_HEALTH_INPUT_BAD;
  }
  if (h->input_since_s && now_s - h->input_last_s > unhealthy_after_s) {
    h->input_since_s = 0;
    return PS_HEALTH_INPUT_CALM;
  }
  return PS_HEALTH_SAME;
}
