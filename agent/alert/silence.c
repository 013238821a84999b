/*
 * silence.c: the no_new_run rule (include/alert/silence.h).
 */
#include "alert/silence.h"

int ps_alert_silence_run_started(ps_alert_silence *s, int64_t start_s) {
  if (start_s <= s->last_start_s)
    return 0;
  s->last_start_s = start_s;
  return 1;
}

int ps_alert_silence_check(ps_alert_silence *s, int64_t after_s, int64_t now_s,
                           int64_t *began_s, int64_t *due_s) {
  *began_s = 0;
  *due_s = 0;
  if (after_s <= 0)
    return 0;
  int64_t began =
      s->last_start_s > s->watching_since_s ? s->last_start_s : s->watching_since_s;
  if (s->said_for_s == began)
    return 0;
  if (now_s < began + after_s) {
    *due_s = began + after_s;
    return 0;
  }
  s->said_for_s = began;
  *began_s = began;
  return 1;
}
