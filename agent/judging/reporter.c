/*
 * reporter.c: the report page kept current by the agent, on the threadpool
 * (include/judging/reporter.h).
 *
 * DESIGN
 * - The pattern of createdb.c: one request struct per page, owned by the
 *   work callbacks; everything the worker needs is copied into it on the
 *   loop (the path, the range, the last error: a reload may free the
 *   configuration they came from while the worker runs), and the worker
 *   writes only into the request. The loop side logs and decides what next.
 * - Pacing is one timer: it is armed for the later of "settled" (a short
 *   delay that merges a run's end with its verdicts) and "the interval
 *   since the last page has passed". A request while the timer runs or a
 *   page is being made only sets `pending`; the page's completion arms the
 *   timer again when something was asked meanwhile.
 */
#include "judging/reporter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "readback/query.h"
#include "report/report.h"

#define MOD "report"

typedef struct page_req {
  jd_reporter *r;
  ps_config quick; /* shallow copy of the sink's configuration */
  char *path, *chart_js, *last_error, *compare_url;
  ps_report_opts opts;
  uint64_t started_ms;
  int result;    /* PS_REPORT_* of making it; -1: written */
  int write_rc;  /* ps_report_write_file() */
  size_t bytes;
  ps_buf err;
} page_req;

static int enabled(const jd_reporter *r) {
  const char *p = r->sh->cfg->report.path;
  return p && p[0];
}

void jd_reporter_init(jd_reporter *r, pl_shared *sh, const ps_config *influx_cfg,
                      const jd_reporter_hooks *hooks) {
  memset(r, 0, sizeof *r);
  r->sh = sh;
  r->influx_cfg = influx_cfg;
  if (hooks)
    r->hooks = *hooks;
  uv_timer_init(sh->loop, &r->timer);
  r->timer.data = r;
}

/* On the threadpool (readback/query.h ps_rb_run_reads): the page's reads
 * and its file. */
static int work_cb(void *arg) {
  page_req *q = arg;
  ps_buf html;
  ps_buf_init(&html, 0);
  int errno_out = 0;
  q->result = ps_report_make(&q->quick, &q->opts, &html, &errno_out, &q->err);
  if (q->result == PS_REPORT_OK) {
    q->bytes = html.len;
    q->write_rc = ps_report_write_file(q->path, html.data, html.len, &q->err);
  }
  ps_buf_free(&html);
  return 0;
}

static void schedule(jd_reporter *r);

/* On the loop; `status` -ECANCELED when the loop cancelled the work. */
static void done_cb(void *arg, int status) {
  page_req *q = arg;
  jd_reporter *r = q->r;
  r->busy = 0;
  uint64_t took = uv_now(r->sh->loop) - q->started_ms;
  const char *why = NULL;
  if (status < 0)
    why = "cancelled at stop";
  else if (q->result != PS_REPORT_OK || q->write_rc < 0)
    why = q->err.len ? q->err.data : "out of memory";
  if (!why) {
    r->written++;
    PS_INFO(MOD, "wrote %s (%zu kB in %.1f s)", q->path, (q->bytes + 512) / 1000,
            (double)took / 1000);
  } else if (status >= 0) {
    ps_log_limited(PS_LOG_WARNING, MOD, "report-failed", 3600,
                   "the page %s was not rewritten: %s%s", q->path, why,
                   q->result == PS_REPORT_SERVER ? " (tried again at the next run event)" : "");
    if (r->hooks.failed)
      r->hooks.failed(r->hooks.ctx, why);
  }
  free(q->path);
  free(q->chart_js);
  free(q->compare_url);
  free(q->last_error);
  ps_buf_free(&q->err);
  free(q);
  if (r->pending && !r->closing)
    schedule(r);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* Sends a page to the threadpool now. */
static void make_page(jd_reporter *r) {
  const ps_config *cfg = r->sh->cfg;
  page_req *q = calloc(1, sizeof *q);
  if (!q)
    return;
  q->r = r;
  q->quick = *r->influx_cfg;
  q->path = dup_or_null(cfg->report.path);
  q->chart_js = dup_or_null(cfg->report.chart_js);
  q->compare_url = dup_or_null(cfg->verdicts.compare_url);
  q->last_error = dup_or_null(r->hooks.last_error ? r->hooks.last_error(r->hooks.ctx) : NULL);
  ps_buf_init(&q->err, 4096);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  q->opts = (ps_report_opts){
      .now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
      .since_s = cfg->report.since_days * 86400,
      .chart_js = q->chart_js,
      .compare_url = q->compare_url,
      .last_error = q->last_error,
  };
  q->started_ms = uv_now(r->sh->loop);
  if (!q->path || !q->chart_js || ps_rb_run_reads(r->sh->loop, work_cb, done_cb, q) < 0) {
    free(q->path);
    free(q->chart_js);
  free(q->compare_url);
    free(q->last_error);
    ps_buf_free(&q->err);
    free(q);
    return;
  }
  r->busy = 1;
  r->pending = 0;
  r->last_start_ms = q->started_ms;
}

static void timer_cb(uv_timer_t *t) {
  jd_reporter *r = t->data;
  if (r->pending && !r->busy && !r->closing && enabled(r))
    make_page(r);
}

static void schedule(jd_reporter *r) {
  if (r->busy || r->closing || r->sh->once || uv_is_active((uv_handle_t *)&r->timer))
    return; /* the page being made, the timer or the close will see `pending` */
  uint64_t now = uv_now(r->sh->loop);
  uint64_t due = now + JD_REPORTER_SETTLE_MS;
  if (r->last_start_ms) {
    uint64_t interval_end =
        r->last_start_ms + (uint64_t)r->sh->cfg->report.min_interval_s * 1000;
    if (interval_end > due)
      due = interval_end;
  }
  uv_timer_start(&r->timer, timer_cb, due - now, 0);
}

void jd_reporter_request(jd_reporter *r, const char *why) {
  if (!enabled(r) || r->closing)
    return;
  PS_DEBUG(MOD, "a new page is due: %s", why ? why : "asked");
  r->pending = 1;
  schedule(r);
}

void jd_reporter_start(jd_reporter *r) {
  if (!r->sh->once)
    jd_reporter_request(r, "the agent started");
}

void jd_reporter_run_event(jd_reporter *r, const pl_run_event *ev) {
  static const char *const what[] = {
      [PL_RUN_STARTED] = "a run started", [PL_RUN_ENDED] = "a run ended",
      [PL_RUN_STALLED] = "a run stalled", [PL_RUN_RESUMED] = "a run resumed"};
  unsigned k = (unsigned)ev->kind;
  jd_reporter_request(r, k < sizeof what / sizeof what[0] && what[k] ? what[k] : "run event");
}

void jd_reporter_close(jd_reporter *r) {
  if (r->closing)
    return;
  /* --once: the backfill is acknowledged; its page is the run's last work
   * (the loop waits for it before it ends) */
  if (r->sh->once && enabled(r) && !r->busy)
    make_page(r);
  r->closing = 1;
  if (!uv_is_closing((uv_handle_t *)&r->timer))
    uv_close((uv_handle_t *)&r->timer, NULL);
  if (r->pending && !r->sh->once)
    PS_INFO(MOD, "stopping with a page asked for; it is written at the next start");
}
