/*
 * alerting.c: the alert stage as the service sees it. See
 * include/judging/alerting.h and docs/alerts.md.
 *
 * Design
 * - It owns the stage's three parts and wires them bottom up: the raiser
 *   (alerting_raise.c) first, the clock (alerting_clock.c) raising through
 *   it, the run alerts (alerting_runs.c) raising through it and telling
 *   the clock when runs start. What comes in is handed to the part it
 *   concerns; the state section is the parts' members in one object.
 */
#include "judging/alerting.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "core/log.h"

int pl_alerting_init(pl_alerting *al, pl_shared *sh, pl_delivery *dl, pl_reader *rd,
                     pl_runs *runs, pl_commit *commit, const pl_aux_out *out,
                     const pl_alerting_hooks *hooks) {
  memset(al, 0, sizeof *al);
  al->sh = sh;
  int rc = pl_alert_raiser_init(&al->raiser, sh, commit, out, hooks ? hooks->settled : NULL,
                                hooks ? hooks->ctx : NULL);
  if (rc < 0)
    return rc;
  pl_alert_clock_init(&al->clock, sh, &al->raiser, dl, rd, runs, commit);
  pl_alert_runs_init(&al->runs, sh, &al->raiser, &al->clock);
  return 0;
}

void pl_alerting_from_json(pl_alerting *al, const char *text) {
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  ps_buf said;
  ps_buf_init(&said, 0);
  if (cJSON_IsObject(root)) {
    ps_alert_recall src = {0};
    pl_alert_raiser_from_cjson(&al->raiser, root, &said);
    pl_alert_clock_from_cjson(&al->clock, root, &src);
    ps_alert_recall_say(&said, "sources", PL_ALERT_SOURCES_MAX, &src);
  } else if (text) {
    ps_buf_puts(&said, root ? "; the section is not an object (ignored)"
                            : "; the section is not JSON (ignored)");
  }
  /* one line for the whole section, however much was left out: a state
   * file damaged by hand or by a bug is said, never silently shrunk */
  if (said.len)
    PS_WARN("alerts", "the state file's alerts section was not read whole%s", said.data);
  ps_buf_free(&said);
  cJSON_Delete(root);
}

char *pl_alerting_to_json(pl_alerting *al) {
  cJSON *root = cJSON_CreateObject();
  if (!root)
    return NULL;
  pl_alert_raiser_to_cjson(&al->raiser, root);
  pl_alert_clock_to_cjson(&al->clock, root);
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return text;
}

void pl_alerting_start(pl_alerting *al) {
  pl_alert_raiser_kick(&al->raiser, 1);
  pl_alert_clock_start(&al->clock);
}

void pl_alerting_run_event(pl_alerting *al, const pl_run_event *ev) {
  pl_alert_runs_event(&al->runs, ev);
}

void pl_alerting_tap(pl_alerting *al, const ps_point *p, const ps_source_cfg *src,
                     const char *path) {
  (void)path;
  pl_alert_runs_tap(&al->runs, p, src);
}

void pl_alerting_verdicts(pl_alerting *al, const pl_alert_verdicts *v) {
  pl_alert_runs_verdicts(&al->runs, v);
}

void pl_alerting_judged(pl_alerting *al, const pl_run_verdicts *rv) {
  pl_alert_runs_judged(&al->runs, rv);
}

void pl_alerting_finish(pl_alerting *al) {
  if (al->runs.finished)
    return;
  pl_alert_runs_finish(&al->runs);
  pl_alert_clock_finish(&al->clock);
  pl_alert_raiser_kick(&al->raiser, 0);
}

int pl_alerting_done(const pl_alerting *al) {
  return pl_alert_runs_idle(&al->runs) && pl_alert_raiser_idle(&al->raiser);
}

int pl_alerting_undelivered(const pl_alerting *al) {
  return pl_alert_raiser_failed(&al->raiser);
}

size_t pl_alerting_held(const pl_alerting *al) { return pl_alert_raiser_held(&al->raiser); }

void pl_alerting_hold(pl_alerting *al) {
  pl_alert_raiser_hold(&al->raiser);
  pl_alert_clock_hold(&al->clock);
}

size_t pl_alerting_busy(const pl_alerting *al) { return pl_alert_raiser_busy(&al->raiser); }

void pl_alerting_close(pl_alerting *al) {
  pl_alert_clock_close(&al->clock);
  pl_alert_runs_close(&al->runs);
  pl_alert_raiser_close(&al->raiser);
}

void pl_alerting_free(pl_alerting *al) {
  pl_alert_raiser_free(&al->raiser);
  pl_alert_clock_free(&al->clock);
  pl_alert_runs_free(&al->runs);
}
