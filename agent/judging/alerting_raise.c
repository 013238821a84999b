/*
 * alerting_raise.c: raising and delivering the agent's own alerts. See
 * include/judging/alerting_raise.h and docs/alerts.md.
 *
 * Design
 * - alert/ decides nothing about the pipeline: the event and its id, the
 *   outbox, the throttle, the ledger, the channels and the dispatcher are
 *   its modules. This file owns them and wires them to the pipeline.
 * - Channels are numbered as the outbox names them: exec, webhook, and
 *   influxdb (the perfship_alert point, sent through `out`). The point is a
 *   channel like the others, so it too is saved until InfluxDB
 *   acknowledged it, and sent again after a restart on the same timestamp.
 * - Every event is saved (pl_commit_save, the same atomic write as the
 *   offsets) before its first attempt: a crash after that resends it, with
 *   the same id; a crash before it raises it again from the replayed input,
 *   with the same id. When the save fails the event is held in the outbox
 *   (alert/outbox.h `unsaved`): no channel is offered it until a save
 *   succeeds (the commit retries with back-off and tells us, on_saved), so
 *   a state that cannot be written never sends what a restart would send
 *   again (docs/alerts.md, docs/reliability.md).
 */
#include "judging/alerting_raise.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "alert/policy.h"
#include "core/log.h"

#define MOD "alerts"
#define CH_EXEC 0u
#define CH_WEBHOOK 1u
#define CH_INFLUX 2u
#define NCHANNELS 3u
#define PEOPLE ((1u << CH_EXEC) | (1u << CH_WEBHOOK))
#define LEDGER_KEEP_S (30 * 86400)

static const char *const channel_names[NCHANNELS] = {"exec", "webhook", "influxdb"};

static int64_t now_ns(void) { return ps_alert_now_ms() * 1000000LL; }

static const char *host_of(const jd_alerting_raiser *r, char *buf, size_t n) {
  const ps_config *cfg = r->sh->cfg;
  for (size_t i = 0; i < cfg->ntags; i++)
    if (strcmp(cfg->tags[i].key, "host") == 0)
      return cfg->tags[i].value;
  if (gethostname(buf, n - 1) < 0)
    snprintf(buf, n, "unknown");
  buf[n - 1] = '\0';
  return buf;
}

static unsigned channels_live(const jd_alerting_raiser *r) { return r->dispatch.live; }

/* --- raising ------------------------------------------------------------------ */

void jd_alerting_raise(jd_alerting_raiser *r, ps_alert_event *ev, const char *key, int judge_age,
                       int64_t happened_ns) {
  const ps_config *cfg = r->sh->cfg;
  const char *name = ps_alert_kind_name(ev->kind);
  int64_t now = now_ns();
  if (ps_alert_decided_has(&r->ledger, ev->id)) {
    PS_DEBUG(MOD, "%s %s (%s): raised before", name, ev->run, ev->id);
    ps_alert_event_free(ev);
    return;
  }
  ps_alert_decision dec = ps_alert_decide(cfg->alerts.on, cfg->alerts.catch_up_s, ev->kind,
                                          judge_age, happened_ns, now);
  if (dec != PS_ALERT_RAISE) {
    PS_DEBUG(MOD, "%s %s: not raised (%s)", name, ev->run,
             dec == PS_ALERT_TOO_OLD ? "older than alerts.catch_up_s" : "not in alerts.on");
    ps_alert_event_free(ev);
    return;
  }
  uint64_t earlier = 0;
  int pass = ps_alert_throttle_pass(&r->throttle, ev->kind, key, now,
                                    cfg->alerts.min_interval_s, &earlier);
  ps_alert_decided_add(&r->ledger, ev->id, now / 1000000000LL);
  if (pass == 0) {
    r->sh->n.alerts_suppressed++;
    PS_INFO(MOD, "%s %s: a repeat within alerts.min_interval_s, not sent: %s", name, key,
            ev->text);
    r->sh->state_dirty = 1;
    pl_commit_moved(r->commit);
    ps_alert_event_free(ev);
    return;
  }
  if (earlier) {
    ev->suppressed = earlier;
    ps_buf t;
    ps_buf_init(&t, 0);
    ps_buf_printf(&t, "%s (and %" PRIu64 " more like it not sent since the last)", ev->text,
                  earlier);
    if (t.data) {
      free(ev->text);
      ev->text = t.data;
    }
  }
  int64_t us = now / 1000;
  ev->time_ns = (us > r->last_us ? us : r->last_us + 1) * 1000;
  r->last_us = ev->time_ns / 1000;
  char host[256];
  if (!ev->host) /* a run's event carries the run's host (its id hashes it) */
    ps_alert_set(&ev->host, host_of(r, host, sizeof host));
  PS_INFO(MOD, "%s: %s (id %s)", name, ev->text, ev->id);
  size_t dropped_before = r->box.dropped;
  ps_outbox_entry *e = ps_outbox_add(&r->box, ev, channels_live(r), ps_alert_now_ms());
  if (!e) {
    PS_ERROR(MOD, "%s %s: out of memory; not sent", name, ev->run);
    ps_alert_event_free(ev);
    return;
  }
  if (r->box.dropped != dropped_before)
    PS_ERROR(MOD, "more than %zu events wait to be delivered; the oldest was dropped "
                  "(is the receiver down?)",
             r->box.max);
  r->sh->n.alerts_raised++;
  r->sh->n.alerts_pending = r->box.n;
  /* Saved before it is sent: a crash from here on sends it again. A save
   * that succeeds releases it (state_saved); one that fails holds it. */
  if (pl_commit_save(r->commit) < 0)
    PS_INFO(MOD, "%s %s: held, not sent, until the state can be saved", name, e->ev.id);
}

/* Every entry is in the state file now: they may go. */
static void state_saved(void *ctx) {
  jd_alerting_raiser *r = ctx;
  if (!ps_outbox_unsaved(&r->box))
    return;
  ps_outbox_saved(&r->box);
  ps_alert_dispatch_kick(&r->dispatch);
}

size_t jd_alerting_raise_held(const jd_alerting_raiser *r) { return ps_outbox_unsaved(&r->box); }

int jd_alerting_raised_before(const jd_alerting_raiser *r, const char *id) {
  return ps_alert_decided_has(&r->ledger, id);
}

void jd_alerting_raise_prune(jd_alerting_raiser *r) {
  int64_t now = now_ns();
  ps_alert_throttle_prune(&r->throttle, now, r->sh->cfg->alerts.min_interval_s);
  ps_alert_decided_prune(&r->ledger, now / 1000000000LL, LEDGER_KEEP_S);
}

/* --- channels -------------------------------------------------------------------- */

typedef struct point_job {
  ps_alert_done_cb done;
  void *arg;
} point_job;

static void point_done(void *arg, int acked) {
  point_job *j = arg;
  ps_alert_answer a = {.delivered = acked};
  snprintf(a.text, sizeof a.text, "%s", acked ? "stored" : "not acknowledged");
  j->done(j->arg, &a);
  free(j);
}

/* The perfship_alert point (docs/schema.md "Alerts"). */
static int point_send(void *ctx, const ps_alert_event *ev, ps_alert_done_cb done, void *arg) {
  jd_alerting_raiser *r = ctx;
  if (r->sh->stopping == 2)
    return -ECANCELED;
  ps_tag tags[2] = {{"event", ps_alert_kind_name(ev->kind)}, {"source", ev->source}};
  ps_field fields[3] = {ps_field_string("run", ev->run, strlen(ev->run)),
                        ps_field_string("text", ev->text, strlen(ev->text)),
                        ps_field_string("id", ev->id, strlen(ev->id))};
  ps_point p = {"perfship_alert", tags, 2, fields, 3, ev->time_ns};
  static const ps_origin origin = {"perfship alerts", 0};
  ps_pbatch *b = ps_pbatch_new();
  point_job *j = malloc(sizeof *j);
  const char *reason = NULL;
  int rc = b && j ? r->out.encode(r->out.ctx, b, &p, &origin, &reason) : -ENOMEM;
  if (rc == 0) {
    j->done = done;
    j->arg = arg;
    rc = r->out.send(r->out.ctx, b, point_done, j);
  } else if (reason) {
    PS_ERROR(MOD, "%s: the perfship_alert point was refused: %s", ev->id, reason);
  }
  if (rc < 0) {
    ps_pbatch_free(b);
    free(j);
  }
  return rc;
}

static void on_answered(void *ctx, const ps_alert_channel *ch, const ps_alert_event *ev,
                        const ps_alert_answer *a) {
  jd_alerting_raiser *r = ctx;
  const char *name = ps_alert_kind_name(ev->kind);
  if (a->delivered) {
    PS_INFO(MOD, "%s %s delivered by %s: %s", name, ev->id, ch->name, a->text);
    return;
  }
  r->sh->n.alerts_failed++;
  char key[64];
  snprintf(key, sizeof key, "alerts %s", ch->name);
  ps_log_limited(strcmp(ch->name, "influxdb") ? PS_LOG_WARNING : PS_LOG_DEBUG, MOD, key, 60,
                 "%s %s not delivered by %s: %s%s", name, ev->id, ch->name, a->text,
                 r->sh->once ? "; kept for the next start" : "; it will be tried again");
}

static void on_changed(void *ctx) {
  jd_alerting_raiser *r = ctx;
  r->sh->n.alerts_pending = r->box.n;
  pl_commit_moved(r->commit);
}

static void on_settled(void *ctx) {
  jd_alerting_raiser *r = ctx;
  if (r->settled)
    r->settled(r->settled_ctx);
}

int jd_alerting_raise_init(jd_alerting_raiser *r, pl_shared *sh, pl_commit *commit,
                           const pl_aux_out *out, void (*settled)(void *ctx), void *settled_ctx) {
  memset(r, 0, sizeof *r);
  r->sh = sh;
  r->commit = commit;
  r->out = *out;
  r->settled = settled;
  r->settled_ctx = settled_ctx;
  const ps_config *cfg = sh->cfg;
  int rc = 0;
  if (cfg->alerts.nexec)
    rc = ps_alert_exec_new(&r->exec, sh->loop, cfg->alerts.exec, cfg->alerts.nexec,
                           cfg->alerts.exec_timeout_ms);
  const char *url = ps_config_webhook_url(cfg);
  if (rc == 0 && url)
    rc = ps_alert_webhook_new(&r->webhook, sh->loop, url, cfg->alerts.webhook.tls_ca_file,
                              cfg->alerts.webhook.format, cfg->alerts.webhook.timeout_ms);
  if (rc < 0) {
    ps_alert_exec_close(r->exec);
    ps_alert_webhook_close(r->webhook);
    r->exec = NULL;
    r->webhook = NULL;
    return rc;
  }
  ps_alert_channel chans[NCHANNELS] = {
      {channel_names[CH_EXEC], r->exec ? ps_alert_exec_send : NULL, r->exec},
      {channel_names[CH_WEBHOOK], r->webhook ? ps_alert_webhook_send : NULL, r->webhook},
      {channel_names[CH_INFLUX], point_send, r},
  };
  ps_outbox_init(&r->box, channel_names, NCHANNELS, PS_OUTBOX_MAX);
  ps_alert_dispatch_hooks dh = {on_answered, on_changed, on_settled, r};
  ps_alert_dispatch_init(&r->dispatch, sh->loop, &r->box, chans, NCHANNELS, sh->once, &dh);
  ps_alert_throttle_init(&r->throttle);
  ps_alert_decided_init(&r->ledger);
  if (commit)
    pl_commit_on_saved(commit, state_saved, r);
  return 0;
}

/* --- memory ------------------------------------------------------------------------- */

void jd_alerting_raise_from_cjson(jd_alerting_raiser *r, const cJSON *section, const size_t cut[3],
                                  ps_buf *said) {
  ps_alert_recall box = {0}, thr = {0}, seen = {0};
  if (cut) {
    box.over = cut[0];
    thr.over = cut[1];
    seen.over = cut[2];
  }
  ps_outbox_from_cjson(&r->box, cJSON_GetObjectItemCaseSensitive(section, "outbox"),
                       ps_alert_now_ms(), &box);
  size_t gone = ps_outbox_keep_channels(&r->box, channels_live(r));
  ps_alert_throttle_from_cjson(&r->throttle,
                               cJSON_GetObjectItemCaseSensitive(section, "throttle"), &thr);
  ps_alert_decided_from_cjson(&r->ledger, cJSON_GetObjectItemCaseSensitive(section, "seen"),
                             &seen);
  if (said) {
    if (!ps_alert_recall_say(said, "outbox", r->box.max, &box) && gone)
      ps_buf_puts(said, "; outbox:");
    if (gone)
      ps_buf_printf(said, "%s %zu for channels no longer configured", box.over || box.bad ? "," : "",
                    gone);
    ps_alert_recall_say(said, "throttle", PS_ALERT_THROTTLE_MAX, &thr);
    ps_alert_recall_say(said, "seen", PS_ALERT_DECIDED_MAX, &seen);
  }
  r->sh->n.alerts_pending = r->box.n;
}

void jd_alerting_raise_to_cjson(jd_alerting_raiser *r, cJSON *section) {
  cJSON_AddItemToObject(section, "outbox", ps_outbox_to_cjson(&r->box));
  cJSON_AddItemToObject(section, "throttle", ps_alert_throttle_to_cjson(&r->throttle));
  cJSON_AddItemToObject(section, "seen", ps_alert_decided_to_cjson(&r->ledger));
}

/* --- delivery's course ----------------------------------------------------------- */

void jd_alerting_raise_kick(jd_alerting_raiser *r, int log_waiting) {
  if (log_waiting && r->box.n)
    PS_INFO(MOD, "%zu events from an earlier start wait to be delivered; sending them",
            r->box.n);
  ps_alert_dispatch_kick(&r->dispatch);
}

int jd_alerting_raise_idle(const jd_alerting_raiser *r) {
  return ps_alert_dispatch_pending(&r->dispatch, ~0u) == 0;
}

int jd_alerting_raise_failed(const jd_alerting_raiser *r) {
  return ps_alert_dispatch_failed(&r->dispatch, PEOPLE) > 0;
}

size_t jd_alerting_raise_busy(const jd_alerting_raiser *r) {
  return ps_alert_dispatch_busy(&r->dispatch);
}

void jd_alerting_raise_hold(jd_alerting_raiser *r) { ps_alert_dispatch_hold(&r->dispatch); }

void jd_alerting_raise_close(jd_alerting_raiser *r) {
  ps_alert_dispatch_close(&r->dispatch);
  ps_alert_exec_close(r->exec);
  ps_alert_webhook_close(r->webhook);
  r->exec = NULL;
  r->webhook = NULL;
}

void jd_alerting_raise_free(jd_alerting_raiser *r) {
  ps_outbox_free(&r->box);
  ps_alert_throttle_free(&r->throttle);
  ps_alert_decided_free(&r->ledger);
}
