/*
 * alert/decided: the ids of events already decided, so that the same event
 * reported again (a run tracker event repeated after a crash, a DSS
 * results file or hand-written verdicts read again from an offset that was
 * not yet saved) is not raised twice (docs/alerts.md "Once").
 *
 * Contract
 * - ps_alert_decided_has() says whether `id` was recorded;
 *   ps_alert_decided_add() records it with the time it was decided.
 * - Bounded: entries older than `keep_s` are dropped by
 *   ps_alert_decided_prune(), and at most PS_ALERT_DECIDED_MAX are kept (the
 *   oldest go first). Replays come within minutes of the first report; the
 *   bound only limits the state file.
 * - Saved in the state file (to/from JSON). Reading keeps the newest
 *   PS_ALERT_DECIDED_MAX of a list of any length, in one walk, and counts
 *   what it left out (ps_alert_recall, alert/event.h).
 */
#ifndef PS_ALERT_DECIDED_H
#define PS_ALERT_DECIDED_H

#include <stddef.h>
#include <stdint.h>

#include "alert/event.h"

struct cJSON;

#define PS_ALERT_DECIDED_MAX 2048

typedef struct ps_alert_decided_entry {
  char id[PS_ALERT_ID_LEN + 1];
  int64_t at_s;
} ps_alert_decided_entry;

typedef struct ps_alert_decided {
  ps_alert_decided_entry *v; /* oldest first */
  size_t n, cap;
} ps_alert_decided;

void ps_alert_decided_init(ps_alert_decided *l);
int ps_alert_decided_has(const ps_alert_decided *l, const char *id);
/* Returns 0 or -ENOMEM. */
int ps_alert_decided_add(ps_alert_decided *l, const char *id, int64_t now_s);
void ps_alert_decided_prune(ps_alert_decided *l, int64_t now_s, int64_t keep_s);
struct cJSON *ps_alert_decided_to_cjson(const ps_alert_decided *l);
/* `r` (may be NULL) counts the entries left out. */
void ps_alert_decided_from_cjson(ps_alert_decided *l, const struct cJSON *arr,
                                 ps_alert_recall *r);
void ps_alert_decided_free(ps_alert_decided *l);

#endif
