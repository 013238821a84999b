/*
 * verdicts_slogdrift.c: the slog's stage drift (BOYD share, vats' delivery
 * seconds per cycle) judged from the server when a complete stage's points
 * were acknowledged. See include/judging/verdicts_slogdrift.h.
 *
 * Design (docs/verdicts.md, "Within a run (stage drift)")
 * - Judged from the server, not from memory: the first loadgen stage may
 *   have been read before a restart, and the stages come in any order.
 *   Each acknowledged complete stage of run R makes R judged whole again
 *   (every complete stage against the first loadgen stage); the verdict
 *   points are keyed by the stage's time, so judging again rewrites them.
 *   The one exception is the per-block rows, the bulk of what a read
 *   brings: when every stage the server has slog figures of was read whole
 *   by this start, they are the rows it sent (verdicts_sdheld.h), which
 *   the small reads before them prove.
 * - One read at a time on the threadpool, the runs waiting in a list with
 *   one entry per run (a stage of a run already waiting adds nothing), so
 *   memory is bounded by the runs being read, and a backfill does not hold
 *   threadpool threads the history read needs.
 * - A run is judged whole again at each of its stages, so most of its
 *   verdicts come out as they were: a verdict identical to one sent lately
 *   (a ring of JD_VERDICTS_SD_SENT hashes) is not sent again, and a --once
 *   writes each point once.
 * - A run's read waits, while the slog reader has stages to read, until
 *   no stage of it was done for SETTLE_MS: a backfill reads a run's
 *   stages tens of milliseconds apart, and a read
 *   after each was most of its judging CPU and a third of its wall
 *   (docs/benchmarks.md, "Backfill"); a live run's stages are hours apart.
 *   Once the reader is idle nothing more can come: the wait ends then
 *   (jd_verdicts_slogdrift_kick), not at its timer.
 * - A read that fails (the server down right after it acknowledged) is
 *   tried once more after READ_RETRY_MS; then it is said and dropped: the
 *   run is judged again when a stage of it is read again (forget).
 * - The run's own points (loadgen_run, loadgen_stage) travel in the
 *   sources' batches, the slog's in their own: a stage can be acknowledged
 *   before the run's perf-finish points are. A read that finds the run's
 *   status or its stages' `loadgen` missing is made again every
 *   PERF_WAIT_MS, up to PERF_WAIT_TRIES times (they were read already:
 *   the slog's finished cycles come from them); which stage is the first
 *   loadgen stage is never guessed from the slog alone. Only a run known
 *   to have ended waits so: its success is in the ledger (now, or by the
 *   time the read returns), or a stage read back has finished cycles
 *   (perf-finish was read). A run not known to have ended (a stage
 *   complete while the next runs) is read once, and a run the ledger
 *   knows did not succeed not at all.
 */
#include "judging/verdicts_slogdrift.h"
#include "judging/verdicts_sdblocks.h"
#include "judging/verdicts_sdheld.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/log.h"
#include "core/util.h"
#include "influx/client.h"
#include "readback/query.h"
#include "readback/statement.h"
#include "readback/answer.h"
#include "readback/status.h"
#include "verdicts_private.h"

#define MOD JD_VERDICTS_MOD
#define READ_RETRY_MS 2000
#define PERF_WAIT_MS 1000
#define PERF_WAIT_TRIES 60
#define SETTLE_MS 250
/* Answers' times are doubles: a bound at a time read back gets slack. */
#define SLACK_NS 1000

/* --- the statements ------------------------------------------------------ */

int jd_verdicts_slogdrift_statement(int s, const char *run, const char *host, int64_t anchor_ns,
                                    ps_buf *q) {
  static const char *const head[JD_VERDICTS_SLOGDRIFT_NSTATEMENTS] = {
      [JD_VERDICTS_SLOGDRIFT_STATUS] = "SELECT \"status\" FROM \"loadgen_run\"",
      [JD_VERDICTS_SLOGDRIFT_STAGES] = "SELECT \"loadgen\", \"stage\" FROM \"loadgen_stage\"",
      [JD_VERDICTS_SLOGDRIFT_SLOG_STAGES] =
          "SELECT \"boydShare\", \"deliverySeconds\", \"finishedCycles\", "
          "\"partial\", \"revision\", \"stage\" FROM \"loadgen_slog_stage\"",
      [JD_VERDICTS_SLOGDRIFT_CYCLES] =
          "SELECT \"cycleCount\", \"stage\" FROM \"loadgen_stage_cycles\"",
      [JD_VERDICTS_SLOGDRIFT_VATS] = "SELECT \"deliverySeconds\", \"name\", \"stage\", \"vat\" "
                                     "FROM \"loadgen_slog_vat\"",
      [JD_VERDICTS_SLOGDRIFT_BACKFILL] = "SELECT \"backfill\" FROM \"runs\"",
  };
  if (s < 0 || s >= JD_VERDICTS_SLOGDRIFT_NSTATEMENTS || !run || !host)
    return -EINVAL;
  int64_t from = anchor_ns > JD_VERDICTS_SLOGDRIFT_SPAN_NS
                     ? anchor_ns - JD_VERDICTS_SLOGDRIFT_SPAN_NS
                     : 0;
  /* the run's own point and its end marker are at or after its start,
   * which is before any of its stages; the stage points within the span */
  int64_t to = s == JD_VERDICTS_SLOGDRIFT_STATUS ? anchor_ns + SLACK_NS
                                                 : anchor_ns + JD_VERDICTS_SLOGDRIFT_SPAN_NS;
  int rc = ps_buf_puts(q, head[s]) | ps_buf_puts(q, " WHERE \"run\" = ") | ps_rb_string(q, run) |
           ps_buf_puts(q, " AND \"host\" = ") | ps_rb_string(q, host);
  if (s == JD_VERDICTS_SLOGDRIFT_BACKFILL)
    rc |= ps_buf_puts(q, " AND \"event\" = 'end'");
  if (s == JD_VERDICTS_SLOGDRIFT_CYCLES)
    rc |= ps_buf_puts(q, " AND \"task\" = 'all'");
  rc |= ps_buf_printf(q, " AND time >= %" PRId64 " AND time <= %" PRId64, from, to);
  return rc ? -EINVAL : 0;
}

/* --- the answers --------------------------------------------------------- */

typedef ps_rb_row row;

static int stage_no(const row *r) { return ps_stage_number(ps_rb_str(r, "stage")); }

static ps_slog_drift_stage *stage_get(jd_verdicts_slogdrift_data *d, int n) {
  for (size_t i = 0; i < d->nstages; i++)
    if (d->stages[i].stage == n)
      return &d->stages[i];
  if (d->nstages == JD_VERDICTS_SLOGDRIFT_MAX_STAGES)
    return NULL;
  ps_slog_drift_stage *s = &d->stages[d->nstages++];
  *s = (ps_slog_drift_stage){n, -1, 1, NAN, NAN, NAN, -1};
  return s;
}

static int add_vat(jd_verdicts_slogdrift_data *d, int n, const char *vat, const char *name,
                   double secs) {
  for (size_t i = 0; i < d->nvats; i++)
    if (d->vats[i].stage == n && strcmp(d->vats[i].vat, vat) == 0) {
      d->vats[i].delivery_s = secs; /* the last row wins */
      return 0;
    }
  if (d->nvats == JD_VERDICTS_SLOGDRIFT_MAX_VATS)
    return 0;
  if (ps_array_room((void **)&d->vats, d->nvats, &d->vats_cap, sizeof *d->vats, 64))
    return -ENOMEM;
  char *v = strdup(vat), *m = name ? strdup(name) : NULL;
  if (!v || (name && !m)) {
    free(v);
    free(m);
    return -ENOMEM;
  }
  d->vats[d->nvats++] = (ps_slog_drift_vat){n, v, m, secs};
  return 0;
}

static int on_row(jd_verdicts_slogdrift_data *d, int s, const row *r) {
  const cJSON *t = ps_rb_cell(r, "time");
  int64_t time_ns = cJSON_IsNumber(t) && t->valuedouble >= 0 && t->valuedouble < 9.2e18
                        ? (int64_t)t->valuedouble
                        : -1;
  switch (s) {
  case JD_VERDICTS_SLOGDRIFT_STATUS: {
    ps_rb_status st = ps_rb_status_named(ps_rb_str(r, "status"));
    if (st > PS_RB_RUNNING)
      d->status = ps_rb_run_status(st);
    return 0;
  }
  case JD_VERDICTS_SLOGDRIFT_BACKFILL:
    if (cJSON_IsBool(ps_rb_cell(r, "backfill")))
      d->backfill = cJSON_IsTrue(ps_rb_cell(r, "backfill"));
    return 0;
  case JD_VERDICTS_SLOGDRIFT_STAGES: {
    int n = stage_no(r);
    const cJSON *l = ps_rb_cell(r, "loadgen");
    ps_slog_drift_stage *x = n >= 0 && cJSON_IsBool(l) ? stage_get(d, n) : NULL;
    if (x)
      x->loadgen = cJSON_IsTrue(l);
    return 0;
  }
  case JD_VERDICTS_SLOGDRIFT_SLOG_STAGES: {
    int n = stage_no(r);
    ps_slog_drift_stage *x = n >= 0 && time_ns >= 0 ? stage_get(d, n) : NULL;
    if (!x)
      return 0;
    x->partial = !cJSON_IsFalse(ps_rb_cell(r, "partial"));
    x->cycles = ps_rb_num(r, "finishedCycles");
    x->delivery_s = ps_rb_num(r, "deliverySeconds");
    x->boyd_share = ps_rb_num(r, "boydShare");
    x->time_ns = time_ns;
    const char *rev = ps_rb_str(r, "revision");
    if (rev && !d->revision && !(d->revision = strdup(rev)))
      return -ENOMEM;
    return 0;
  }
  case JD_VERDICTS_SLOGDRIFT_CYCLES: {
    /* the slog's own count when it has one (the figure as written) */
    int n = stage_no(r);
    double cycles = ps_rb_num(r, "cycleCount");
    ps_slog_drift_stage *x = n >= 0 && isfinite(cycles) ? stage_get(d, n) : NULL;
    if (x && !(isfinite(x->cycles) && x->cycles > 0))
      x->cycles = cycles;
    return 0;
  }
  case JD_VERDICTS_SLOGDRIFT_VATS: {
    int n = stage_no(r);
    const char *vat = ps_rb_str(r, "vat");
    double secs = ps_rb_num(r, "deliverySeconds");
    if (n < 0 || !vat || !isfinite(secs))
      return 0;
    return add_vat(d, n, vat, ps_rb_str(r, "name"), secs);
  }
  default: return -EINVAL;
  }
}

int jd_verdicts_slogdrift_parse(jd_verdicts_slogdrift_data *d, int s, const char *json,
                                size_t len) {
  if (s < 0 || s >= JD_VERDICTS_SLOGDRIFT_NSTATEMENTS)
    return -EINVAL;
  ps_rb_answer a;
  int rc = ps_rb_answer_parse(&a, json, len);
  if (rc == 0 && !ps_rb_answer_whole(&a))
    rc = -EPROTO;
  for (const row *r; rc >= 0 && (r = ps_rb_answer_next(&a));)
    rc = on_row(d, s, r);
  ps_rb_answer_free(&a);
  return rc < 0 ? rc : 0;
}

void jd_verdicts_slogdrift_data_free(jd_verdicts_slogdrift_data *d) {
  for (size_t i = 0; i < d->nvats; i++) {
    free((char *)d->vats[i].vat);
    free((char *)d->vats[i].name);
  }
  free(d->vats);
  free(d->revision);
  memset(d, 0, sizeof *d);
}

/* --- the reads ----------------------------------------------------------- */

struct jd_vsdjob {
  struct jd_vsdjob *next;
  jd_verdicts *vd;
  ps_config cfg; /* shallow copy: its strings outlive the read */
  char *run, *series, *host;
  int64_t anchor_ns;
  uint64_t touched_ms; /* the loop's time of its latest stage */
  int in_flight;
  int waits; /* the ledger says the run succeeded: its points will come */
  int tries; /* reads that found the run's own points missing; at most that many */
  int rc;
  ps_buf err;
  jd_verdicts_slogdrift_data d;
  jd_verdicts_sdblocks blocks; /* the per-block figures: how sure a change is */
  jd_sdheld_run *held;         /* those figures as the slog reader encoded them */
  int from_held;               /* `blocks` came from `held`, not the server */
};

static void job_free(jd_vsdjob *j) {
  free(j->run);
  free(j->series);
  free(j->host);
  ps_buf_free(&j->err);
  jd_verdicts_slogdrift_data_free(&j->d);
  jd_verdicts_sdblocks_free(&j->blocks);
  jd_sdheld_run_free(j->held);
  free(j);
}

static int read_all(jd_vsdjob *j) {
  int rc = 0;
  for (int s = 0; rc == 0 && s < JD_VERDICTS_SLOGDRIFT_NSTATEMENTS; s++) {
    ps_buf q, answer;
    ps_buf_init(&q, 0);
    ps_buf_init(&answer, PS_INFLUX_QUERY_MAX_BYTES);
    rc = jd_verdicts_slogdrift_statement(s, j->run, j->host, j->anchor_ns, &q);
    if (rc == 0)
      rc = ps_rb_query(&j->cfg, q.data, &answer, &j->err);
    if (rc == 0)
      rc = jd_verdicts_slogdrift_parse(&j->d, s, answer.data, answer.len);
    ps_buf_free(&q);
    ps_buf_free(&answer);
  }
  if (rc)
    return rc;
  /* the rows held when every stage the server has was read here */
  int64_t from = j->anchor_ns > JD_VERDICTS_SLOGDRIFT_SPAN_NS
                     ? j->anchor_ns - JD_VERDICTS_SLOGDRIFT_SPAN_NS
                     : 0;
  rc = jd_sdheld_fill(j->held, j->d.stages, j->d.nstages, from,
                      j->anchor_ns + JD_VERDICTS_SLOGDRIFT_SPAN_NS + 1, &j->blocks);
  j->from_held = rc == 1;
  if (rc != 0)
    return rc < 0 ? rc : 0;
  return jd_verdicts_sdblocks_read(&j->cfg, j->run, j->host, j->anchor_ns, &j->blocks, &j->err);
}

/* On the threadpool (readback/query.h ps_rb_run_reads). */
static int read_work(void *arg) {
  jd_vsdjob *j = arg;
  j->rc = read_all(j);
  if (j->rc == -EIO || j->rc == -EPROTO) {
    usleep(READ_RETRY_MS * 1000);
    jd_verdicts_slogdrift_data_free(&j->d);
    jd_verdicts_sdblocks_free(&j->blocks);
    ps_buf_free(&j->err);
    ps_buf_init(&j->err, 0);
    j->rc = read_all(j);
  }
  return 0;
}

static void start_next(jd_verdicts *vd);

/* FNV-1a over what makes a verdict point: its key and its fields. */
static uint64_t mix(uint64_t h, const void *p, size_t n) { return ps_hash64(h, p, n); }

static uint64_t mix_str(uint64_t h, const char *s) {
  return s ? mix(h, s, strlen(s) + 1) : mix(h, "", 1);
}

static uint64_t verdict_hash(const ps_verdict *v) {
  uint64_t h = PS_HASH_SEED;
  const char *s[] = {v->series, v->metric, v->run, v->vat, v->vat_name, v->revision};
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
    h = mix_str(h, s[i]);
  /* the family too: more stages known make the same p-value's adjustment
   * another, and the point must say the family it was decided in */
  int64_t ints[] = {v->stage, (int)v->verdict, v->backfill, v->family_size};
  h = mix(h, ints, sizeof ints);
  double d[] = {v->value, v->baseline, v->p_value};
  h = mix(h, d, sizeof d);
  return mix(h, &v->time_ns, sizeof v->time_ns);
}

/* Keeps in `l` the verdicts not sent lately, and remembers them. */
static void drop_sent(jd_vslogdrift_state *sd, ps_verdict_list *l) {
  size_t kept = 0;
  for (size_t i = 0; i < l->n; i++) {
    uint64_t h = verdict_hash(&l->v[i]);
    int seen = 0;
    for (size_t k = 0; k < JD_VERDICTS_SD_SENT && !seen; k++)
      seen = sd->sent[k] == h;
    if (seen)
      continue;
    sd->sent[sd->sent_next++ % JD_VERDICTS_SD_SENT] = h;
    l->v[kept++] = l->v[i];
  }
  l->n = kept;
}

static void judge(jd_verdicts *vd, jd_vsdjob *j) {
  ps_slog_drift_run run = {JD_VERDICTS_LOADGEN, j->series,   j->run,
                           j->d.revision,       j->d.status, j->d.backfill};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  jd_vpass *pass = calloc(1, sizeof *pass);
  if (!pass)
    return;
  pass->kind = PASS_SLOG_DRIFT;
  ps_slog_drift_blocks blocks = jd_verdicts_sdblocks_view(&j->blocks);
  if (ps_slog_drift(&vd->cfg->verdicts, &run, j->d.stages, j->d.nstages, j->d.vats, j->d.nvats,
                    &blocks, &l) < 0)
    pass->failed = 1;
  else
    drop_sent(&vd->slogdrift, &l);
  PS_DEBUG(MOD,
           "%s: slog stage drift judged from the server%s (%zu stages, %zu vat rows, "
           "%zu block rows, %zu block vat rows, %zu verdicts)",
           j->run, j->from_held ? " and the per-block rows as sent" : "", j->d.nstages, j->d.nvats,
           j->blocks.nblocks, j->blocks.nvats, l.n);
  vd->driver->send(vd, pass, &l);
  ps_verdict_list_free(&l);
}

/* The run's own points are on the server: its status and which of its
 * stages ran the load generator. */
static int perf_side_read(const jd_verdicts_slogdrift_data *d) {
  if (d->status == PS_RUN_STATUS_NONE)
    return 0;
  for (size_t i = 0; i < d->nstages; i++)
    if (d->stages[i].loadgen >= 0)
      return 1;
  return 0;
}

/* What the ledger knows of the run's end: 1 success, 0 another status,
 * -1 nothing (not seen ending). */
static int ledger_success(jd_verdicts *vd, const char *series, const char *run) {
  ps_ledger_series *ls = ps_ledger_series_get(&vd->ledger, JD_VERDICTS_LOADGEN, series,
                                              vd->series_host, 0);
  long at = ls ? ps_ledger_find(ls, vd->host, run) : -1;
  return at < 0 ? -1 : ls->runs[at].status == PS_RUN_STATUS_SUCCESS;
}

/* The run ended: the ledger says it succeeded, or a stage has finished
 * cycles (the slog's own count or the stage summary's). */
static int ended(jd_verdicts *vd, const jd_vsdjob *j) {
  if (j->waits || ledger_success(vd, j->series, j->run) == 1)
    return 1;
  for (size_t i = 0; i < j->d.nstages; i++)
    if (j->d.stages[i].cycles >= 1)
      return 1;
  return 0;
}

static void free_waiting(jd_vslogdrift_state *sd) {
  while (sd->jobs && !sd->jobs->in_flight) {
    jd_vsdjob *n = sd->jobs->next;
    job_free(sd->jobs);
    sd->jobs = n;
  }
}

static void wait_cb(uv_timer_t *t) {
  jd_verdicts *vd = t->data;
  if (vd->sh->stopping)
    free_waiting(&vd->slogdrift);
  else
    start_next(vd);
}

static void arm_timer(jd_verdicts *vd, uint64_t ms) {
  if (!vd->slogdrift.timer_on) {
    uv_timer_init(vd->sh->loop, &vd->slogdrift.timer);
    vd->slogdrift.timer.data = vd;
    vd->slogdrift.timer_on = 1;
  }
  uv_timer_start(&vd->slogdrift.timer, wait_cb, ms, 0);
}

/* On the loop; `status` -ECANCELED when the loop cancelled the read. */
static void read_done(void *arg, int status) {
  jd_vsdjob *j = arg;
  jd_verdicts *vd = j->vd;
  j->in_flight = 0;
  if (status == 0 && !vd->sh->stopping && j->rc == 0 && !perf_side_read(&j->d) &&
      ++j->tries < PERF_WAIT_TRIES && ended(vd, j)) {
    j->waits = 1;
    jd_verdicts_slogdrift_data_free(&j->d); /* read again, whole, in a moment */
    jd_verdicts_sdblocks_free(&j->blocks);
    arm_timer(vd, PERF_WAIT_MS);
    return;
  }
  for (jd_vsdjob **pp = &vd->slogdrift.jobs; *pp; pp = &(*pp)->next)
    if (*pp == j) {
      *pp = j->next;
      break;
    }
  if (status == 0 && !vd->sh->stopping) {
    if (j->rc == 0)
      judge(vd, j);
    else if (j->rc != -ENOENT) /* no database: nothing was written to judge */
      ps_log_limited(PS_LOG_WARNING, MOD, "slog drift", 60,
                     "%s: the slog's stage drift cannot be judged now (%s); it is when a "
                     "stage of the run is read again",
                     j->run, j->err.data ? j->err.data : strerror(-j->rc));
  }
  job_free(j);
  if (vd->sh->stopping) {
    free_waiting(&vd->slogdrift); /* none is in flight: this one was the only */
    return;
  }
  start_next(vd);
  /* a read that judged nothing (no InfluxQL, an error) sends no point
   * whose answer would wake a --once run waiting for the judges */
  if (!vd->slogdrift.jobs && vd->hooks.settled)
    vd->hooks.settled(vd->hooks.ctx);
}

void jd_verdicts_slogdrift_close(jd_vslogdrift_state *sd) {
  if (sd->timer_on && !uv_is_closing((uv_handle_t *)&sd->timer))
    uv_close((uv_handle_t *)&sd->timer, NULL);
  free_waiting(sd); /* one in flight frees the rest when it returns */
  jd_sdheld_free(&sd->held);
}

void jd_verdicts_slogdrift_kick(jd_verdicts *vd) {
  const jd_vsdjob *j = vd->slogdrift.jobs;
  if (j && !j->in_flight && !j->tries) /* one waiting for the run's points keeps its pace */
    start_next(vd);
}

void jd_verdicts_slogdrift_point(jd_verdicts *vd, const ps_point *p) {
  if (!vd->sh->stopping)
    jd_sdheld_point(&vd->slogdrift.held, vd->host, p, uv_now(vd->sh->loop));
}

static void start_next(jd_verdicts *vd) {
  jd_vsdjob *j = vd->slogdrift.jobs;
  if (vd->slogdrift.timer_on)
    uv_timer_stop(&vd->slogdrift.timer);
  while (j && !j->in_flight) {
    uint64_t now = uv_now(vd->sh->loop);
    int more = vd->hooks.slogs_busy && vd->hooks.slogs_busy(vd->hooks.ctx);
    if (more && now < j->touched_ms + SETTLE_MS) {
      arm_timer(vd, j->touched_ms + SETTLE_MS - now); /* more of its stages may come */
      return;
    }
    j->in_flight = 1;
    jd_sdheld_run *fresh = jd_sdheld_take(&vd->slogdrift.held, j->run);
    if (fresh) { /* what came since a read that waited for the run's points */
      jd_sdheld_run_free(j->held);
      j->held = fresh;
    }
    if (ps_rb_run_reads(vd->sh->loop, read_work, read_done, j) == 0)
      return;
    vd->slogdrift.jobs = j->next;
    job_free(j);
    j = vd->slogdrift.jobs;
  }
}

void jd_verdicts_slog_stage_done(jd_verdicts *vd, const char *run, const char *series,
                                 int64_t stage_ns) {
  if (vd->sh->stopping || !run || !series || stage_ns < 0)
    return;
  int known = ledger_success(vd, series, run);
  if (known == 0) { /* only a successful run has stage drift */
    jd_sdheld_run_free(jd_sdheld_take(&vd->slogdrift.held, run));
    return;
  }
  jd_vsdjob **tail = &vd->slogdrift.jobs;
  for (jd_vsdjob *j = vd->slogdrift.jobs; j; j = j->next) {
    if (!j->in_flight && strcmp(j->run, run) == 0) {
      if (stage_ns < j->anchor_ns)
        j->anchor_ns = stage_ns; /* the earliest stage bounds the read best */
      j->waits |= known == 1;
      j->touched_ms = uv_now(vd->sh->loop);
      return;
    }
    tail = &j->next;
  }
  jd_vsdjob *j = calloc(1, sizeof *j);
  if (!j || !(j->run = strdup(run)) || !(j->series = strdup(series)) ||
      !(j->host = strdup(vd->host))) {
    if (j)
      job_free(j);
    return;
  }
  j->vd = vd;
  j->cfg = *vd->cfg;
  j->anchor_ns = stage_ns;
  j->touched_ms = uv_now(vd->sh->loop);
  j->waits = known == 1;
  ps_buf_init(&j->err, 0);
  *tail = j;
  if (vd->slogdrift.jobs == j)
    start_next(vd);
}
