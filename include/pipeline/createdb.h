/*
 * pipeline/createdb: CREATE DATABASE for a v1 server with
 * influxdb.create_database on, never on the loop.
 *
 * Contract
 * - The request is blocking (influx/client.h), so it runs on libuv's
 *   threadpool, through readback/'s runner (readback/query.h): a server
 *   that is down or black-holed would otherwise stall reading and
 *   acknowledging for up to influxdb.timeout_ms per try.
 * - pl_createdb_start(first=1) at start holds the sink's writes until the
 *   first attempt is answered (as before: no write reaches a v1 server
 *   before its database may exist). While the server cannot be reached it
 *   is tried again every 2 s with a short timeout; writes meanwhile wait in
 *   the sink's retries.
 * - pl_createdb_start(first=0) is for a database that disappeared while the
 *   agent runs (the sink's 404 "database not found"); the write's normal
 *   retry delivers once it exists again.
 * - Uses the configuration the sink was built with (a reload keeps the
 *   influxdb group). A request on the threadpool is waited for by the loop;
 *   a stop cancels the retry timer.
 */
#ifndef PS_PIPELINE_CREATEDB_H
#define PS_PIPELINE_CREATEDB_H

#include <uv.h>

#include "core/config.h"
#include "pipeline/delivery.h"

typedef struct pl_createdb {
  uv_loop_t *loop;
  const ps_config *cfg; /* the sink's */
  pl_delivery *dl;
  const int *stopping;
  uv_timer_t timer;
  int busy; /* a request is on the threadpool */
} pl_createdb;

void pl_createdb_init(pl_createdb *c, uv_loop_t *loop, const ps_config *cfg, pl_delivery *dl,
                      const int *stopping);
void pl_createdb_start(pl_createdb *c, int first);
void pl_createdb_close(pl_createdb *c);

#endif
