/*
 * service/reload: rereading the configuration on SIGHUP.
 *
 * Contract
 * - pl_reload_read() loads `file` afresh. On success *out is a new
 *   configuration (the caller owns it) in which the settings a running agent
 *   cannot change keep their running values: the `influxdb` group (the sink
 *   was built with it) and `state_dir` (the lock is held there). One warning
 *   names every such setting the file changed. On failure the error is
 *   logged, *out stays NULL and the running configuration stays.
 * - Everything else (sources, tags, batch, watch, selfstats, alerts, log
 *   level) is applied by the service to each stage.
 */
#ifndef PS_SERVICE_RELOAD_H
#define PS_SERVICE_RELOAD_H

#include "core/config.h"

int pl_reload_read(const char *file, const ps_config *running, ps_config **out);

#endif
