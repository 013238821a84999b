/*
 * verdicts_fetch.c: a loadgen series' earlier runs read back from the
 * server into the ledger, a window's worth, bounded in time
 * (docs/verdicts.md, "Where the history comes from"). See
 * include/judging/verdicts.h; the query and the answer's reading are
 * judging/verdicts_history.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "judging/verdicts_history.h"
#include "readback/query.h"
#include "verdicts_private.h"

#define MOD JD_VERDICTS_MOD
#define HISTORY_RETRY_MAX_MS 60000
#define HISTORY_SPAN_MAX_NS (7680 * JD_VERDICTS_DAY_NS)

/* --- each series' read state -------------------------------------------------- */

static jd_vseries *find(jd_vseries *list, const char *source, const char *series,
                        const char *host) {
  for (jd_vseries *x = list; x; x = x->next)
    if (!strcmp(x->source, source) && !strcmp(x->series, series) && !strcmp(x->host, host))
      return x;
  return NULL;
}

const jd_vseries *jd_verdicts_fetch_find(const jd_vhistory_state *h, const char *source,
                                         const char *series, const char *host) {
  return find(h->series, source, series, host);
}

jd_vseries *jd_verdicts_fetch_series(jd_vhistory_state *h, const char *source, const char *series,
                                     const char *host) {
  jd_vseries *s = find(h->series, source, series, host);
  if (s)
    return s;
  s = calloc(1, sizeof *s);
  if (!s || !(s->source = strdup(source)) || !(s->series = strdup(series)) ||
      !(s->host = strdup(host))) {
    if (s) {
      free(s->source);
      free(s->series);
    }
    free(s);
    return NULL;
  }
  s->span_ns = HISTORY_SPAN_FIRST_NS;
  /* The history read back is loadgen_run's: a benchmarker series is
   * judged on the reports the agent saw (docs/verdicts.md "Benchmarker:
   * across releases"). */
  s->synced = strcmp(source, JD_VERDICTS_LOADGEN) != 0;
  s->next = h->series;
  h->series = s;
  return s;
}

void jd_verdicts_fetch_free(jd_vhistory_state *h) {
  for (jd_vseries *s = h->series, *n; s; s = n) {
    n = s->next;
    free(s->source);
    free(s->series);
    free(s->host);
    free(s);
  }
  h->series = NULL;
}

/* --- the server's history --------------------------------------------------- */

/* Whether the ledger holds a whole window (window_runs successful runs)
 * before the series' first run to judge, and the time a history read has
 * to go back to: that window's first run when it does, else the first run
 * to judge less the series' span. */
static int window_covered(jd_verdicts *vd, const jd_vseries *vs, int64_t *since) {
  ps_ledger_series *s = ps_ledger_series_get(&vd->ledger, vs->source, vs->series, vs->host, 0);
  size_t from = 0, have = 0;
  while (s && from < s->nruns && s->runs[from].judged)
    from++;
  int64_t first = s && from < s->nruns ? s->runs[from].start_ns : INT64_MAX;
  if (first == INT64_MAX) {
    /* Nothing of its own to judge (the series candidates are judged
     * against): its current level is what goes back from now. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    first = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
  }
  int64_t oldest = first;
  for (size_t i = from; s && i > 0 && have < (size_t)vd->cfg->verdicts.window_runs; i--)
    if (s->runs[i - 1].status == PS_RUN_STATUS_SUCCESS) {
      have++;
      oldest = s->runs[i - 1].start_ns;
    }
  int covered = have >= (size_t)vd->cfg->verdicts.window_runs;
  if (since) {
    int64_t back = first - vs->span_ns;
    *since = covered ? oldest : back;
    if (*since <= 0)
      *since = 1;
  }
  return covered;
}

typedef struct fetch_ctx {
  jd_verdicts *vd;
  char *source, *series, *host;
  int64_t since_ns; /* how far back it read */
  size_t merged;    /* runs it added to the ledger */
} fetch_ctx;

static void merge_row(void *ctx, const char *host, const char *run, const char *revision,
                      int64_t start_ns, ps_run_status status, const double *values) {
  fetch_ctx *f = ctx;
  ps_ledger *l = &f->vd->ledger;
  if (!host)
    host = "";
  if (f->host[0] && strcmp(host, f->host) != 0)
    return; /* a series per host holds that host's runs alone */
  ps_ledger_series *s = ps_ledger_series_get(l, f->source, f->series, f->host, 1);
  if (!s || ps_ledger_find(s, host, run) >= 0)
    return; /* what this agent saw itself stays as it saw it */
  if (status == PS_RUN_STATUS_NONE)
    return; /* half a run: its status point is not in yet (this agent's own
             * backfill, being written); its end brings the whole run */
  /* Runs the agent never saw end: `backfill` as their markers would say. */
  long at = ps_ledger_put(l, s, host, run, revision, start_ns, status, 1, values);
  if (at >= 0) {
    s->runs[at].judged = 1;
    f->merged++;
  }
}

/* The second statement's row: the run's largest stage growth as the
 * server knows it, for a run the ledger holds (read just now, or seen). */
static void merge_growth(void *ctx, const char *host, const char *run, const double *values) {
  fetch_ctx *f = ctx;
  ps_ledger_series *s = ps_ledger_series_get(&f->vd->ledger, f->source, f->series, f->host, 0);
  long at = s ? ps_ledger_find(s, host ? host : "", run) : -1;
  if (at < 0)
    return;
  double g[PS_GROWTH_NFIGURES];
  for (int i = 0; i < PS_GROWTH_NFIGURES; i++) {
    g[i] = NAN;
    for (size_t m = 0; m < f->vd->nmetrics; m++)
      if (strcmp(f->vd->metrics[m], ps_growth_figure((ps_growth_figure_id)i)->name) == 0)
        g[i] = values[m];
  }
  jd_verdicts_growth_fold(f->vd, &s->runs[at], g);
}

/* Only a database this agent creates itself (InfluxDB 1.x API with
 * create_database) may be missing and mean "no history yet": it is about to
 * be created, empty. Any other missing database (or a v2 bucket with no
 * database mapping) is a read that cannot be made (docs/operations.md). */
static int creates_database(const ps_config *cfg) {
  return cfg->influxdb.api == PS_API_V1 && cfg->influxdb.create_database;
}

static void history_done(void *arg, int rc, const char *json, size_t len, const char *err) {
  fetch_ctx *f = arg;
  jd_verdicts *vd = f->vd;
  (void)len;
  vd->history.fetching = 0;
  jd_vseries *vs = jd_verdicts_fetch_series(&vd->history, f->source, f->series, f->host);
  ps_buf why;
  ps_buf_init(&why, 512);
  if (vs && rc == 0 &&
      jd_verdicts_history_parse(json, vd->metrics, vd->nmetrics, merge_row, merge_growth, f, &why) <
          0) {
    /* An answer that is not one is a failed read, not an empty history:
     * said, and asked again with the same back-off. */
    rc = -EPROTO;
    ps_log_limited(PS_LOG_ERROR, MOD, "history answer", 300,
                   "%s: the server's answer to the history query is not one (%s); read "
                   "again %s",
                   f->series, why.data ? why.data : "?",
                   vd->sh->once ? "at the next start" : "with back-off");
  }
  ps_buf_free(&why);
  int further = vs && rc == 0 && !window_covered(vd, vs, NULL) &&
                vs->span_ns < HISTORY_SPAN_MAX_NS;
  if (vs && rc == 0)
    PS_DEBUG(MOD, "%s%s%s: %zu runs read back from the server since %" PRId64 " ns%s",
             f->series, f->host[0] ? " on " : "", f->host, f->merged, f->since_ns,
             further ? "; not a window yet, reading further back" : "");
  if (further) {
    vs->span_ns *= 2; /* not a window's worth yet: look further back */
    vs->until_ns = f->since_ns;
  } else if (vs && (rc == 0 || (rc == -ENOENT && creates_database(vd->cfg)) ||
                     rc == -EOPNOTSUPP)) {
    if (rc == -EOPNOTSUPP)
      ps_log_limited(PS_LOG_INFO, MOD, "no-influxql", 3600,
                     "the server has no InfluxQL query endpoint: %s is judged against the "
                     "runs this agent saw itself",
                     f->series);
    vs->synced = 1;
    vs->fails = 0;
    vs->waiting_server = 0;
    vd->sh->state_dirty = 1;
  } else if (vs && rc != -ECANCELED) {
    uint64_t delay = HISTORY_RETRY_FIRST_MS << (vs->fails < 5 ? vs->fails : 5);
    vs->fails++;
    vs->retry_at = uv_now(vd->sh->loop) + (delay < HISTORY_RETRY_MAX_MS ? delay : HISTORY_RETRY_MAX_MS);
    vs->waiting_server = vd->sh->once;
    if (rc == -ENOENT) /* a database that is not there is no empty history */
      ps_log_limited(PS_LOG_ERROR, MOD, "history-no-database", 86400,
                     "%s: cannot read the series' history: %s; its verdicts wait%s",
                     f->series, err ? err : "the database does not exist",
                     vd->sh->once ? " for the next start" : " until it can be read");
    else if (rc != -EPROTO) /* said above, with what was wrong */
      ps_log_limited(PS_LOG_WARNING, MOD, "history", 300,
                     "%s: cannot read the series' history from the server (%s); its "
                     "verdicts wait%s",
                     f->series, err ? err : strerror(-rc),
                     vd->sh->once ? " for the next start" : " until it answers");
  }
  free(f->source);
  free(f->series);
  free(f->host);
  free(f);
  vd->driver->look(vd, 0);
}

int jd_verdicts_fetch_history(jd_verdicts *vd, jd_vseries *vs) {
  ps_buf q;
  ps_buf_init(&q, 0);
  fetch_ctx *f = calloc(1, sizeof *f);
  int64_t since = 0;
  window_covered(vd, vs, &since);
  int rc = f ? jd_verdicts_history_query_text(vs->series, vs->host[0] ? vs->host : NULL, since,
                                              vs->until_ns, vd->metrics, vd->nmetrics, &q)
             : -ENOMEM;
  if (rc == 0 && (!(f->source = strdup(vs->source)) || !(f->series = strdup(vs->series)) ||
                  !(f->host = strdup(vs->host))))
    rc = -ENOMEM;
  if (rc == 0) {
    f->vd = vd;
    f->since_ns = since;
    rc = ps_rb_run(vd->sh->loop, vd->cfg, q.data, history_done, f);
  }
  if (rc < 0 && f) {
    free(f->source);
    free(f->series);
    free(f->host);
    free(f);
  }
  ps_buf_free(&q);
  if (rc == 0)
    vd->history.fetching = 1;
  return rc;
}
