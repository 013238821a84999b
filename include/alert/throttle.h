/*
 * alert/throttle: alerts.min_interval_s, the same (event, key) at most
 * this often (docs/alerts.md "Repeats").
 *
 * Contract
 * - The key is the run for run events, the source for no_new_run, "agent"
 *   for health events (the caller chooses it).
 * - ps_alert_throttle_pass() returns 1 when the event may be raised, and
 *   then sets *report to the repeats of that (event, key) dropped since the
 *   last one raised (so the caller can say so) and starts counting anew;
 *   0 when it comes sooner than `interval_s` after the last one raised:
 *   drop it, it is counted; -ENOMEM. An interval of 0 passes everything.
 * - Remembered across restarts (to/from JSON in the state file), bounded:
 *   ps_alert_throttle_prune() forgets keys quiet for longer than the
 *   interval with nothing to report, and keeps at most
 *   PS_ALERT_THROTTLE_MAX (the oldest go first).
 */
#ifndef PS_ALERT_THROTTLE_H
#define PS_ALERT_THROTTLE_H

#include <stddef.h>
#include <stdint.h>

#include "alert/event.h"
#include "core/config.h"

struct cJSON;

#define PS_ALERT_THROTTLE_MAX 1024

typedef struct ps_alert_throttle_entry {
  ps_alert_kind kind;
  char *key;
  int64_t last_ns;     /* the last event of this (event, key) raised */
  uint64_t suppressed; /* dropped since */
} ps_alert_throttle_entry;

typedef struct ps_alert_throttle {
  ps_alert_throttle_entry *v;
  size_t n, cap;
} ps_alert_throttle;

void ps_alert_throttle_init(ps_alert_throttle *t);
int ps_alert_throttle_pass(ps_alert_throttle *t, ps_alert_kind kind, const char *key,
                           int64_t now_ns, int64_t interval_s, uint64_t *report);
void ps_alert_throttle_prune(ps_alert_throttle *t, int64_t now_ns, int64_t interval_s);
struct cJSON *ps_alert_throttle_to_cjson(const ps_alert_throttle *t);
/* Adds the newest PS_ALERT_THROTTLE_MAX entries `arr` holds; what it left
 * out (older ones, unreadable ones) is counted in `r` (may be NULL). */
void ps_alert_throttle_from_cjson(ps_alert_throttle *t, const struct cJSON *arr,
                                  ps_alert_recall *r);
void ps_alert_throttle_free(ps_alert_throttle *t);

#endif
