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

#include <uv.h>

#include "core/log.h"
#include "judging/verdicts_history.h"
#include "readback/query.h"
#include "readback/triage.h"
#include "verdicts_private.h"

#define MOD JD_VERDICTS_MOD


/* --- triage decisions ------------------------------------------------------ */

void jd_verdicts_triage_init(jd_vtriage_state *t) {
  memset(t, 0, sizeof *t);
  ps_triage_set_init(&t->server);
  ps_triage_set_init(&t->file);
  ps_triage_set_init(&t->in_force);
}

void jd_verdicts_triage_free(jd_vtriage_state *t) {
  free(t->read_next);
  t->read_next = NULL;
  ps_triage_set_free(&t->server);
  ps_triage_set_free(&t->file);
  ps_triage_set_free(&t->in_force);
}

cJSON *jd_verdicts_triage_to_json(const jd_vtriage_state *t) {
  cJSON *tr = cJSON_CreateArray();
  for (size_t i = 0; tr && i < t->in_force.n; i++) {
    const ps_triage_decision *d = &t->in_force.d[i];
    if ((d->action != PS_TRIAGE_EXCLUDE && d->action != PS_TRIAGE_BASELINE) ||
        ps_triage_revoked(&t->in_force, d))
      continue;
    cJSON *x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "id", d->id);
    cJSON_AddStringToObject(x, "action", ps_triage_action_name(d->action));
    cJSON_AddStringToObject(x, "run", d->run);
    if (d->host)
      cJSON_AddStringToObject(x, "host", d->host);
    cJSON_AddItemToArray(tr, x);
  }
  return tr;
}

size_t jd_verdicts_triage_from_json(jd_vtriage_state *t, const cJSON *tr) {
  size_t dropped = 0;
  const cJSON *x;
  ps_triage_set saved;
  ps_triage_set_init(&saved);
  cJSON_ArrayForEach(x, tr) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(x, "id"),
                *action = cJSON_GetObjectItemCaseSensitive(x, "action"),
                *run = cJSON_GetObjectItemCaseSensitive(x, "run"),
                *host = cJSON_GetObjectItemCaseSensitive(x, "host");
    int a = ps_triage_action_parse(cJSON_GetStringValue(action));
    /* the set keeps an empty string as none, and a decision without an
     * id or a run is not saved: it is not read either */
    if (!cJSON_IsString(id) || !id->valuestring[0] || !cJSON_IsString(run) ||
        !run->valuestring[0] || (a != PS_TRIAGE_EXCLUDE && a != PS_TRIAGE_BASELINE)) {
      dropped++;
      continue;
    }
    ps_triage_decision d = {.id = id->valuestring,
                            .action = (ps_triage_action)a,
                            .run = run->valuestring,
                            .host = cJSON_IsString(host) ? host->valuestring : NULL};
    if (ps_triage_add(&saved, &d) < 0)
      break;
  }
  ps_triage_set_free(&t->in_force);
  t->in_force = saved;
  t->restored = 1;
  return dropped;
}

static int triage_copy(ps_triage_set *into, const ps_triage_set *from) {
  for (size_t i = 0; i < from->n; i++)
    if (ps_triage_add(into, &from->d[i]) < 0)
      return -ENOMEM;
  return 0;
}

static void triage_bad_line(void *ctx, const char *name, size_t line, const char *why) {
  jd_verdicts *vd = ctx;
  /* a rejected record like any other: counted, and --once exits 65 */
  vd->sh->n.records_rejected++;
  PS_ERROR(MOD, "%s:%zu: %s; the line is left out, the other decisions count", name, line, why);
}

/* What only the server's decisions tell about the file's lines: an id a
 * server decision has (the server's stays in force), an undo of an id
 * nobody has. Said when what is in force changed, not every minute. */
static void triage_check(jd_verdicts *vd, const ps_triage_set *in_force) {
  for (size_t i = 0; i < vd->triage.file.n; i++) {
    const ps_triage_decision *d = &vd->triage.file.d[i], *had = ps_triage_find(in_force, d->id);
    if (had && !had->origin) {
      vd->sh->n.records_rejected++;
      PS_ERROR(MOD,
               "%s: id=%s is the id of a decision on the server already (perfship_triage), "
               "which stays in force; the line is left out",
               d->origin, d->id);
    }
  }
  ps_triage_check_file(in_force, triage_bad_line, vd);
  if (vd->triage.server.repeated)
    PS_WARN(MOD,
            "the server holds %zu perfship_triage point%s whose id a newer point has too "
            "(the first: %s); the newest of each is in force",
            vd->triage.server.repeated, vd->triage.server.repeated == 1 ? "" : "s",
            vd->triage.server.repeated_id);
  vd->triage.checked = 1;
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
static int triage_apply(jd_verdicts *vd) {
  ps_triage_set fresh;
  ps_triage_set_init(&fresh);
  if (triage_copy(&fresh, &vd->triage.server) < 0 || triage_copy(&fresh, &vd->triage.file) < 0) {
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
      if (!ps_triage_excluded(&vd->triage.in_force, r->host, r->name) !=
              !ps_triage_excluded(&fresh, r->host, r->name) ||
          !ps_triage_baseline_of(&vd->triage.in_force, r->host, r->name) !=
              !ps_triage_baseline_of(&fresh, r->host, r->name))
        break;
    }
    /* a new put_seq too: a pass still out judged under the old decisions,
     * and its answer must not mark these runs judged */
    if (i < s->nruns) {
      rejudged += s->nruns - i;
      jd_verdicts_rejudge_from(vd, s, i);
    }
  }
  int changed = !triage_same(&vd->triage.in_force, &fresh);
  if (vd->triage.synced && (changed || !vd->triage.checked))
    triage_check(vd, &fresh);
  ps_triage_set_free(&vd->triage.in_force);
  vd->triage.in_force = fresh;
  if (rejudged) {
    PS_INFO(MOD, "triage decisions changed: %zu runs are judged again", rejudged);
    vd->sh->state_dirty = 1;
  }
  return changed;
}

/* One read of the triage_file on the threadpool: the file and its parse
 * are the thread's, the sets and the counters the loop's. */
typedef struct triage_read {
  uv_work_t work;
  jd_verdicts *vd;
  char *path;
  ps_triage_set fresh;
  ps_buf bad; /* a "FILE:LINE: why" line per line left out */
  ps_buf err;
  long n;
} triage_read;

static void collect_bad_line(void *ctx, const char *name, size_t line, const char *why) {
  triage_read *r = ctx;
  ps_buf_printf(&r->bad, "%s:%zu: %s\n", name, line, why);
}

static void read_work(uv_work_t *w) {
  triage_read *r = w->data;
  ps_config cfg; /* the path alone: the loop may load another configuration */
  memset(&cfg, 0, sizeof cfg);
  cfg.triage_file = r->path;
  ps_triage_set_init(&r->fresh);
  r->n = ps_rb_triage_read_file(&cfg, &r->fresh, collect_bad_line, r, &r->err);
}

static void read_free(triage_read *r) {
  ps_triage_set_free(&r->fresh);
  ps_buf_free(&r->bad);
  ps_buf_free(&r->err);
  free(r->path);
  free(r);
}

static void read_start(jd_verdicts *vd, char *path);

static void read_done(uv_work_t *w, int status) {
  triage_read *r = w->data;
  jd_verdicts *vd = r->vd;
  int changed = 0;
  vd->triage.reading = 0;
  if (status == 0 && !vd->sh->stopping) {
    for (char *line = r->bad.data, *nl; line && (nl = strchr(line, '\n')); line = nl + 1) {
      *nl = '\0';
      vd->sh->n.records_rejected++; /* counted, and --once exits 65 */
      PS_ERROR(MOD, "%s; the line is left out, the other decisions count", line);
    }
    if (r->n < 0) {
      /* the decisions it gave before stay in force: a file being
       * replaced does not undo them for a moment */
      PS_ERROR(MOD, "%s; its decisions stay as they were",
               r->err.data ? r->err.data : "triage_file");
    } else {
      ps_triage_set_free(&vd->triage.file);
      vd->triage.file = r->fresh;
      ps_triage_set_init(&r->fresh);
      /* decisions judged under were restored: they stay in force until the
       * server's are known too, or the server's excludes would look undone */
      if (vd->triage.synced || !vd->triage.restored)
        changed = triage_apply(vd);
    }
  }
  read_free(r);
  if (vd->sh->stopping) {
    free(vd->triage.read_next);
    vd->triage.read_next = NULL;
    vd->triage.read_again = 0;
    return;
  }
  if (vd->triage.read_again) {
    vd->triage.read_again = 0;
    char *next = vd->triage.read_next;
    vd->triage.read_next = NULL;
    read_start(vd, next);
  }
  vd->driver->look(vd, 0);
  if (changed && vd->hooks.written)
    vd->hooks.written(vd->hooks.ctx); /* the report shows them */
  else if (vd->hooks.settled)
    vd->hooks.settled(vd->hooks.ctx); /* last: it may end a --once run */
}

/* Takes `path` (may be NULL: no file, no decisions of a file). */
static void read_start(jd_verdicts *vd, char *path) {
  triage_read *r = calloc(1, sizeof *r);
  if (!r) {
    free(path);
    PS_ERROR(MOD, "out of memory; the triage_file's decisions stay as they were");
    return;
  }
  r->vd = vd;
  r->path = path;
  r->work.data = r;
  ps_buf_init(&r->err, 1024);
  ps_buf_init(&r->bad, 0);
  if (uv_queue_work(vd->sh->loop, &r->work, read_work, read_done) == 0) {
    vd->triage.reading = 1;
    return;
  }
  read_work(&r->work); /* no threadpool: read here, as before */
  vd->triage.reading = 1;
  read_done(&r->work, 0);
}

void jd_verdicts_triage_read_file(jd_verdicts *vd, const ps_config *cfg) {
  char *path = cfg->triage_file && cfg->triage_file[0] ? strdup(cfg->triage_file) : NULL;
  if (cfg->triage_file && cfg->triage_file[0] && !path) {
    PS_ERROR(MOD, "out of memory; the triage_file's decisions stay as they were");
    return;
  }
  if (vd->triage.reading) { /* read again after the read under way */
    free(vd->triage.read_next);
    vd->triage.read_next = path;
    vd->triage.read_again = 1;
    return;
  }
  read_start(vd, path);
}

void jd_verdicts_triage_reload(jd_verdicts *vd, const ps_config *cfg) {
  jd_verdicts_triage_read_file(vd, cfg);
  vd->triage.next = 0;
}

static void triage_done(void *arg, int rc, const char *json, size_t len, const char *err) {
  jd_verdicts *vd = arg;
  int first = !vd->triage.synced, changed = 0;
  vd->triage.fetching = 0;
  vd->triage.synced = 1;
  if (rc == -ECANCELED)
    return;
  vd->triage.next = uv_now(vd->sh->loop) + TRIAGE_READ_MS;
  if (rc == 0 || rc == -ENOENT || rc == -EOPNOTSUPP) {
    ps_triage_set fresh;
    ps_triage_set_init(&fresh);
    if (rc == 0 && ps_rb_triage_parse_answer(&fresh, json, len) < 0) {
      ps_triage_set_free(&fresh);
      PS_ERROR(MOD, "out of memory reading the triage decisions");
    } else if (!first && triage_same(&fresh, &vd->triage.server)) {
      /* the usual minute: nothing new, and putting a large triage_file's
       * decisions in force again would hold the loop for nothing */
      ps_triage_set_free(&fresh);
    } else {
      ps_triage_set_free(&vd->triage.server);
      vd->triage.server = fresh;
      /* with the file's read under way, its end puts both in force */
      changed = vd->triage.reading ? 0 : triage_apply(vd);
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
  vd->driver->look(vd, 0);
}

void jd_verdicts_triage_fetch(jd_verdicts *vd) {
  ps_buf q;
  ps_buf_init(&q, 0);
  if (ps_rb_triage_statement(&q) == 0 &&
      ps_rb_run(vd->sh->loop, vd->cfg, q.data, triage_done, vd) == 0)
    vd->triage.fetching = 1;
  else
    vd->triage.next = uv_now(vd->sh->loop) + HISTORY_RETRY_FIRST_MS;
  ps_buf_free(&q);
}
