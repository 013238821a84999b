/*
 * alert/policy: whether an event is wanted at all, before it is raised
 * (docs/alerts.md "Catching up").
 *
 * Contract
 * - An event whose kind is not in alerts.on is not wanted.
 * - The catch-up rule: an event about something that happened before
 *   perfship saw it (a run found already ended, a backfilled DSS result or
 *   verdict, a stall found when the folder was first judged) is raised only
 *   if it happened less than alerts.catch_up_s before now, judged by the
 *   time the data itself gives (the run's end marker time, not a file's
 *   time). So a restart or a cron-driven `run --once` still reports this
 *   morning's failure, and a first backfill of a year of history reports
 *   nothing old. The caller says whether the rule applies (`judge_age`).
 */
#ifndef PS_ALERT_POLICY_H
#define PS_ALERT_POLICY_H

#include <stdint.h>

#include "core/config.h"

typedef enum ps_alert_decision {
  PS_ALERT_RAISE = 0,
  PS_ALERT_NOT_WANTED, /* not in alerts.on */
  PS_ALERT_TOO_OLD,    /* happened more than catch_up_s ago */
} ps_alert_decision;

ps_alert_decision ps_alert_decide(unsigned on, int64_t catch_up_s, ps_alert_kind kind,
                                  int judge_age, int64_t happened_ns, int64_t now_ns);

#endif
