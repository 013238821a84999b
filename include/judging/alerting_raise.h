/*
 * judging/alerting_raise: the alert stage's way out (docs/alerts.md):
 * whether an event is raised, the outbox, the channels, the
 * `perfship_alert` point, and what of them the state file keeps. The other
 * alert files (alerting_clock.h, alerting_runs.h) build events and hand
 * them here; this file knows nothing of where they came from.
 *
 * Contract
 * - jd_alerting_raise() takes an event and decides: the same id twice is
 *   raised once (alert/decided.h); an event not in alerts.on, or whose age
 *   is judged (`judge_age`) and that happened (`happened_ns`) more than
 *   catch_up_s ago, is not raised (alert/policy.h); a repeat of (event,
 *   `key`) within min_interval_s is dropped and counted (alert/throttle.h),
 *   and the next one sent says how many were.
 * - A raised event gets a time of its own (no two alike, so their points
 *   stay apart) and the host (the `host` tag, else the machine's name),
 *   goes into the outbox, which is saved with the offsets (pl_commit_save)
 *   before anything is sent (a save that fails holds it, unsent, until one
 *   succeeds: jd_alerting_raise_held()), then to each configured channel (exec,
 *   webhook) and as a `perfship_alert` point through `out`. It leaves the
 *   outbox once every channel delivered it; until then it is retried with
 *   back-off, across restarts. In --once (sh->once) every channel is tried
 *   once, and never again by this process.
 * - `settled` runs after every delivery attempt; it is all this file calls
 *   of its owner.
 * - Memory: the outbox, the throttle and the ledger are the "outbox",
 *   "throttle" and "seen" members of the stage's state section
 *   (jd_alerting_raise_to_cjson / _from_cjson). Events waiting for a channel
 *   that is no longer configured are dropped with a warning when read.
 */
#ifndef PS_JUDGING_ALERTING_RAISE_H
#define PS_JUDGING_ALERTING_RAISE_H

#include <stddef.h>
#include <stdint.h>

#include "alert/dispatch.h"
#include "alert/event.h"
#include "alert/exec.h"
#include "alert/decided.h"
#include "alert/outbox.h"
#include "alert/throttle.h"
#include "alert/webhook.h"
#include "pipeline/commit.h"
#include "pipeline/shared.h"

struct cJSON;

typedef struct jd_alerting_raiser {
  pl_shared *sh;
  pl_commit *commit;
  pl_aux_out out;
  void (*settled)(void *ctx);
  void *settled_ctx;
  ps_outbox box;
  ps_alert_dispatch dispatch;
  ps_alert_throttle throttle;
  ps_alert_decided ledger;
  ps_alert_exec *exec;
  ps_alert_webhook *webhook;
  int64_t last_us; /* the time the last event got */
} jd_alerting_raiser;

/* Builds the channels of sh->cfg (alerts.exec, alerts.webhook: they apply
 * until a restart). Returns 0 or a negative errno (a channel that cannot
 * be made; nothing is left to close). */
int jd_alerting_raise_init(jd_alerting_raiser *r, pl_shared *sh, pl_commit *commit,
                           const pl_aux_out *out, void (*settled)(void *ctx), void *settled_ctx);
/* Events held because the state could not be saved since they were raised. */
size_t jd_alerting_raise_held(const jd_alerting_raiser *r);
/* Reads its members back from the stage's state section; what was left out
 * (over a cap, unreadable, of the wrong type, for channels no longer
 * configured) is appended to `said` (may be NULL) as "; member: counts". */
/* `cut` (NULL: none): the oldest entries of outbox, throttle and seen that
 * the caller already left out before the tree was built, said as over the
 * cap with what the tree leaves out. */
void jd_alerting_raise_from_cjson(jd_alerting_raiser *r, const struct cJSON *section,
                                  const size_t cut[3], ps_buf *said);
/* Adds its members to `section`. */
void jd_alerting_raise_to_cjson(jd_alerting_raiser *r, struct cJSON *section);

/* Takes `ev` (freed or kept, in every case). `key` is the min_interval_s
 * key; `judge_age`: the catch-up rule applies, `happened_ns` is when. */
void jd_alerting_raise(jd_alerting_raiser *r, ps_alert_event *ev, const char *key, int judge_age,
                       int64_t happened_ns);
/* Whether the event `id` was raised (or decided against) before. */
int jd_alerting_raised_before(const jd_alerting_raiser *r, const char *id);
/* Forgets repeats and ids too old to matter (call now and then). */
void jd_alerting_raise_prune(jd_alerting_raiser *r);

/* Sends what waits (what a previous agent left, with `log_waiting`). */
void jd_alerting_raise_kick(jd_alerting_raiser *r, int log_waiting);
/* No event waits for a channel. */
int jd_alerting_raise_idle(const jd_alerting_raiser *r);
/* An event was not delivered to a person's channel (exec, webhook). */
int jd_alerting_raise_failed(const jd_alerting_raiser *r);
/* Delivery attempts in flight. */
size_t jd_alerting_raise_busy(const jd_alerting_raiser *r);
/* Stopping: no new delivery starts; those in flight finish. */
void jd_alerting_raise_hold(jd_alerting_raiser *r);

void jd_alerting_raise_close(jd_alerting_raiser *r);
void jd_alerting_raise_free(jd_alerting_raiser *r);

#endif
