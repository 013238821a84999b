/*
 * alert/policy.c: alerts.on and the catch-up rule (include/alert/policy.h).
 * A time in the future (a clock ahead of the agent's) counts as recent:
 * better one alert too many than a failure nobody hears of.
 */
#include "alert/policy.h"

ps_alert_decision ps_alert_decide(unsigned on, int64_t catch_up_s, ps_alert_kind kind,
                                  int judge_age, int64_t happened_ns, int64_t now_ns) {
  if (kind < 0 || kind >= PS_ALERT_NKINDS || !(on & PS_ALERT_BIT(kind)))
    return PS_ALERT_NOT_WANTED;
  if (judge_age && now_ns - happened_ns >= catch_up_s * 1000000000LL)
    return PS_ALERT_TOO_OLD;
  return PS_ALERT_RAISE;
}
