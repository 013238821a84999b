/*
 * createdb.c: CREATE DATABASE on the threadpool, retried while the server
 * cannot be reached. See include/pipeline/createdb.h.
 *
 * Design
 * - The request goes through readback/'s threadpool runner
 *   (ps_rb_run_reads), the agent's one runner for blocking requests of the
 *   server; the statement and what its answer means stay the client's
 *   (influx/client.h ps_influx_create_database): a write's 401 and 403
 *   say different things than a read's.
 */
#include "pipeline/createdb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "influx/client.h"
#include "readback/query.h"

#define MOD "pipeline"
#define RETRY_MS 2000
#define RETRY_TIMEOUT_MS 1000

typedef struct createdb_req {
  pl_createdb *c;
  ps_config quick; /* shallow copy of the sink's config: its strings outlive us */
  int first;
  ps_buf err;
} createdb_req;

void pl_createdb_init(pl_createdb *c, uv_loop_t *loop, const ps_config *cfg, pl_delivery *dl,
                      const int *stopping) {
  memset(c, 0, sizeof *c);
  c->loop = loop;
  c->cfg = cfg;
  c->dl = dl;
  c->stopping = stopping;
  uv_timer_init(loop, &c->timer);
  c->timer.data = c;
}

static void retry_cb(uv_timer_t *t) { pl_createdb_start(t->data, 0); }

/* On the threadpool (readback/query.h ps_rb_run_reads). */
static int work_cb(void *arg) {
  createdb_req *r = arg;
  return ps_influx_create_database(&r->quick, &r->err);
}

static void done_cb(void *arg, int rc) {
  createdb_req *r = arg;
  pl_createdb *c = r->c;
  c->busy = 0;
  if (r->first)
    pl_delivery_hold(c->dl, 0); /* answered or not: writes go (or retry) now */
  if (rc < 0 && rc != -ECANCELED && r->first)
    PS_WARN(MOD, "CREATE DATABASE: %s%s", r->err.data ? r->err.data : strerror(-rc),
            rc == -EIO ? " (tried again until the server answers)" : "");
  else if (rc == 0 && !r->first)
    PS_INFO(MOD, "CREATE DATABASE \"%s\" done; the waiting writes follow",
            r->quick.influxdb.database ? r->quick.influxdb.database : "");
  if (rc == -EIO && !*c->stopping)
    uv_timer_start(&c->timer, retry_cb, RETRY_MS, 0);
  ps_buf_free(&r->err);
  free(r);
}

void pl_createdb_start(pl_createdb *c, int first) {
  const ps_config *cfg = c->cfg;
  if (cfg->influxdb.api != PS_API_V1 || !cfg->influxdb.create_database || c->busy ||
      *c->stopping)
    return;
  if (!first && uv_is_active((uv_handle_t *)&c->timer))
    return; /* a retry is already due */
  createdb_req *r = calloc(1, sizeof *r);
  if (!r)
    return;
  r->c = c;
  r->first = first;
  r->quick = *cfg;
  if (!first && (r->quick.influxdb.timeout_ms <= 0 ||
                 r->quick.influxdb.timeout_ms > RETRY_TIMEOUT_MS))
    r->quick.influxdb.timeout_ms = RETRY_TIMEOUT_MS;
  ps_buf_init(&r->err, 2048);
  if (ps_rb_run_reads(c->loop, work_cb, done_cb, r) < 0) {
    ps_buf_free(&r->err);
    free(r);
    return;
  }
  c->busy = 1;
  if (first)
    pl_delivery_hold(c->dl, 1); /* no write before the first answer */
}

void pl_createdb_close(pl_createdb *c) {
  if (!uv_is_closing((uv_handle_t *)&c->timer))
    uv_close((uv_handle_t *)&c->timer, NULL);
}
