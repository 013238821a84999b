/*
 * verdicts_triage.c: the triage decisions the verdict stage judges under
 * (docs/verdicts.md, "Triage"): read from the triage_file at start and
 * reload, and from the server's perfship_triage points, bounded, at most
 * once a minute; when the excludes and baselines in force change, the
 * series they touch are judged again. See include/judging/verdicts.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "judging/verdicts_history.h"
#include "readback/query.h"
#include "readback/triage.h"
#include "verdicts_private.h"

#define MOD PL_VD_MOD


/* --- triage decisions ------------------------------------------------------ */

static int triage_copy(ps_triage_set *into, const ps_triage_set *from) {
  for (size_t i = 0; i < from->n; i++)
    if (ps_triage_add(into, &from->d[i]) < 0)
      return -ENOMEM;
  return 0;
}

/* Puts the server's and the file's decisions in force; the series whose
 * runs an exclude or baseline now treats otherwise are judged again from
 * the first such run, which rewrites what it changes (as a late run). */
static int triage_same(const ps_triage_set *a, const ps_triage_set *b) {
  if (a->n != b->n)
    return 0;
  for (size_t i = 0; i < a->n; i++)
    if (strcmp(a->d[i].id ? a->d[i].id : "", b->d[i].id ? b->d[i].id : "") != 0)
      return 0;
  return 1;
}

/* Returns whether the decisions in force changed. */
static int triage_apply(pl_verdicts *vd) {
  ps_triage_set fresh;
  ps_triage_set_init(&fresh);
  if (triage_copy(&fresh, &vd->triage_server) < 0 || triage_copy(&fresh, &vd->triage_file) < 0) {
    ps_triage_set_free(&fresh);
    PS_ERROR(MOD, "out of memory; the triage decisions in force stay as they were");
    return 0;
  }
  size_t rejudged = 0;
  for (size_t k = 0; k < vd->ledger.nseries; k++) {
    ps_ledger_series *s = &vd->ledger.series[k];
    size_t i = 0;
    for (; i < s->nruns; i++) {
      const ps_ledger_run *r = &s->runs[i];
      if (!ps_triage_excluded(&vd->triage, r->host, r->name) !=
              !ps_triage_excluded(&fresh, r->host, r->name) ||
          !ps_triage_baseline_of(&vd->triage, r->host, r->name) !=
              !ps_triage_baseline_of(&fresh, r->host, r->name))
        break;
    }
    /* a new put_seq too: a pass still out judged under the old decisions,
     * and its answer must not mark these runs judged */
    if (i < s->nruns) {
      rejudged += s->nruns - i;
      pl_vd_rejudge_from(vd, s, i);
    }
  }
  int changed = !triage_same(&vd->triage, &fresh);
  ps_triage_set_free(&vd->triage);
  vd->triage = fresh;
  if (rejudged) {
    PS_INFO(MOD, "triage decisions changed: %zu runs are judged again", rejudged);
    vd->sh->state_dirty = 1;
  }
  return changed;
}

static void triage_bad_line(void *ctx, const char *name, size_t line, const char *why) {
  pl_verdicts *vd = ctx;
  /* a rejected record like any other: counted, and --once exits 65 */
  vd->sh->n.records_rejected++;
  PS_ERROR(MOD, "%s:%zu: %s; the line is left out, the other decisions count", name, line,
           why);
}

/* Returns whether the decisions in force changed. */
int pl_vd_read_triage_file(pl_verdicts *vd, const ps_config *cfg) {
  int changed = 0;
  ps_triage_set fresh;
  ps_triage_set_init(&fresh);
  ps_buf err;
  ps_buf_init(&err, 1024);
  long n = ps_rb_triage_read_file(cfg, &fresh, triage_bad_line, vd, &err);
  if (n < 0) {
    /* the decisions it gave before stay in force: a file being replaced
     * does not undo them for a moment */
    PS_ERROR(MOD, "%s; its decisions stay as they were", err.data ? err.data : "triage_file");
    ps_triage_set_free(&fresh);
  } else {
    ps_triage_set_free(&vd->triage_file);
    vd->triage_file = fresh;
    changed = triage_apply(vd);
  }
  ps_buf_free(&err);
  return changed;
}

static void triage_done(void *arg, int rc, const char *json, size_t len, const char *err) {
  pl_verdicts *vd = arg;
  int first = !vd->triage_synced, changed = 0;
  vd->triage_fetching = 0;
  vd->triage_synced = 1;
  if (rc == -ECANCELED)
    return;
  vd->triage_next = uv_now(vd->sh->loop) + TRIAGE_READ_MS;
  if (rc == 0 || rc == -ENOENT || rc == -EOPNOTSUPP) {
    ps_triage_set fresh;
    ps_triage_set_init(&fresh);
    if (rc == 0 && ps_rb_triage_parse_answer(&fresh, json, len) < 0) {
      ps_triage_set_free(&fresh);
      PS_ERROR(MOD, "out of memory reading the triage decisions");
    } else {
      ps_triage_set_free(&vd->triage_server);
      vd->triage_server = fresh;
      changed = triage_apply(vd);
    }
  } else {
    ps_log_limited(PS_LOG_WARNING, MOD, "triage", 300,
                   "cannot read the triage decisions from the server (%s); the last ones "
                   "read stay in force",
                   err ? err : strerror(-rc));
  }
  /* the report shows decisions; a --once run waits for the first read */
  if ((first || changed) && vd->hooks.written)
    vd->hooks.written(vd->hooks.ctx);
  pl_vd_arm(vd, 0);
}

void pl_vd_triage_fetch(pl_verdicts *vd) {
  ps_buf q;
  ps_buf_init(&q, 0);
  if (ps_rb_triage_statement(&q) == 0 &&
      ps_rb_run(vd->sh->loop, vd->cfg, q.data, triage_done, vd) == 0)
    vd->triage_fetching = 1;
  else
    vd->triage_next = uv_now(vd->sh->loop) + HISTORY_RETRY_FIRST_MS;
  ps_buf_free(&q);
}

