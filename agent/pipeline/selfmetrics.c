/*
 * selfmetrics.c: self-metrics, progress and the summary.
 * See include/pipeline/selfmetrics.h.
 */
#include "pipeline/selfmetrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/util.h"
#include "pipeline/reader.h"
#include "pipeline/selfmetrics_point.h"

#define MOD "pipeline"
#define PROGRESS_TTY_MS 250
#define PROGRESS_LOG_MS 10000

void pl_selfmetrics_init(pl_selfmetrics *rp, pl_shared *sh, pl_registry *reg, pl_delivery *dl,
                    pl_runs *runs) {
  memset(rp, 0, sizeof *rp);
  rp->sh = sh;
  rp->reg = reg;
  rp->dl = dl;
  rp->runs = runs;
  uv_timer_init(sh->loop, &rp->stats_timer);
  uv_timer_init(sh->loop, &rp->progress_timer);
  rp->stats_timer.data = rp->progress_timer.data = rp;
}

static void selfstats_done(void *arg, int acked) {
  pl_selfmetrics *rp = arg;
  (void)acked; /* a lost heartbeat is replaced by the next one */
  rp->selfstats_in_flight = 0;
}

int pl_selfmetrics_send(pl_selfmetrics *rp) {
  if (rp->selfstats_in_flight || rp->sh->stopping)
    return -EBUSY;
  const ps_sink_stats *ss = pl_delivery_sink_stats(rp->dl);
  const pl_counters *n = &rp->sh->n;
  ps_selfmetrics_counts s = {
      .lines_read = n->lines_read,
      .records_parsed = n->records_parsed,
      .records_rejected = n->records_rejected,
      .points_written = ss->points_written,
      .points_rejected = ss->points_rejected + n->points_refused,
      .batches_sent = ss->batches_sent,
      .http_retries = ss->http_retries,
      .bytes_sent = ss->bytes_sent,
      .pending_points = pl_delivery_pending_points(rp->dl),
      .files_watched = pl_registry_live(rp->reg),
      .oldest_unacked_s = pl_delivery_oldest_ms(rp->dl) / 1000,
      .uptime_s = (uv_now(rp->sh->loop) - rp->sh->start_ms) / 1000,
      .alerts_raised = n->alerts_raised,
      .alerts_suppressed = n->alerts_suppressed,
      .alerts_failed = n->alerts_failed,
      .alerts_pending = n->alerts_pending,
  };
  ps_pbatch *b = ps_pbatch_new();
  if (!b)
    return -ENOMEM;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const char *reason = NULL;
  static const ps_origin self = {"perfship self-metrics", 0};
  if (ps_selfmetrics_encode(&b->b.body, &s, (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec,
                          rp->dl->tags, rp->dl->ntags, &reason) < 0 ||
      ps_batch_add_line_origin(&b->b, 0, &self) < 0) {
    ps_log_limited(PS_LOG_ERROR, MOD, "selfstats", 300, "self-metrics not encoded: %s",
                   reason ? reason : "out of memory");
    ps_pbatch_free(b);
    return -EINVAL;
  }
  int rc = pl_delivery_send_aux(rp->dl, b, selfstats_done, rp);
  if (rc < 0) {
    ps_pbatch_free(b);
    return rc;
  }
  rp->selfstats_in_flight = 1;
  return 0;
}

static void stats_cb(uv_timer_t *t) { pl_selfmetrics_send(t->data); }

static void progress_text(pl_selfmetrics *rp, char *out, size_t n, int summary) {
  size_t files = 0, files_done = 0, runs = 0, runs_done = 0;
  for (const pl_file *f = rp->reg->files; f; f = f->next)
    if (!f->retired) {
      files++;
      files_done += pl_reader_file_done(f);
    }
  pl_runs_progress(rp->runs, &runs, &runs_done);
  const ps_sink_stats *ss = pl_delivery_sink_stats(rp->dl);
  double secs = (double)(uv_now(rp->sh->loop) - rp->sh->start_ms) / 1000.0;
  double rate = secs > 0 ? (double)ss->points_written / secs : 0;
  char runs_part[64] = "";
  if (summary) {
    const pl_counters *c = &rp->sh->n;
    uint64_t rejected = c->records_rejected + c->points_refused + c->server_rejected;
    if (runs)
      snprintf(runs_part, sizeof runs_part, " %zu run folders,", runs);
    snprintf(out, n,
             "%zu files,%s %" PRIu64 " points written, %" PRIu64
             " rejected, in %.1f s (%.0f points/s)",
             files, runs_part, ss->points_written, rejected, secs, rate);
    return;
  }
  if (runs)
    snprintf(runs_part, sizeof runs_part, "runs %zu/%zu, ", runs_done, runs);
  snprintf(out, n, "%sfiles %zu/%zu: %" PRIu64 " points written (%.0f/s), %zu pending, %.0f s",
           runs_part, files_done, files, ss->points_written, rate,
           pl_delivery_pending_points(rp->dl), secs);
}

static void progress_cb(uv_timer_t *t) {
  pl_selfmetrics *rp = t->data;
  char text[200];
  progress_text(rp, text, sizeof text, 0);
  if (rp->progress_tty)
    ps_log_status(text);
  else
    PS_INFO(MOD, "progress: %s", text);
}

void pl_selfmetrics_start(pl_selfmetrics *rp) {
  const ps_config *cfg = rp->sh->cfg;
  if (rp->sh->once) {
    rp->progress_tty = isatty(STDERR_FILENO);
    uint64_t every = rp->progress_tty ? PROGRESS_TTY_MS : PROGRESS_LOG_MS;
    uv_timer_start(&rp->progress_timer, progress_cb, every, every);
  } else if (cfg->selfstats.interval_ms > 0) {
    uv_timer_start(&rp->stats_timer, stats_cb, (uint64_t)cfg->selfstats.interval_ms,
                   (uint64_t)cfg->selfstats.interval_ms);
  } else {
    uv_timer_stop(&rp->stats_timer);
  }
}

void pl_selfmetrics_stop(pl_selfmetrics *rp) { uv_timer_stop(&rp->stats_timer); }

void pl_selfmetrics_summary(pl_selfmetrics *rp, const char *verb, int warn) {
  char text[256];
  if (rp->progress_tty) { /* the last state stays on screen */
    progress_text(rp, text, sizeof text, 0);
    ps_log_status(text);
    ps_log_status_done();
  }
  progress_text(rp, text, sizeof text, 1);
  if (warn)
    PS_WARN(MOD, "%s: %s; some input was rejected (see above)", verb, text);
  else
    PS_INFO(MOD, "%s: %s", verb, text);
}

void pl_selfmetrics_close(pl_selfmetrics *rp) {
  uv_handle_t *hs[] = {(uv_handle_t *)&rp->stats_timer, (uv_handle_t *)&rp->progress_timer};
  for (size_t i = 0; i < 2; i++)
    if (!uv_is_closing(hs[i]))
      uv_close(hs[i], NULL);
}
