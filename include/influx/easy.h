/*
 * influx_easy: one curl easy handle set up the way the sink sets up its own.
 *
 * Contract
 * - ps_influx_easy_setup() sets URL, POST (post != 0) or GET, the headers
 *   (content type, and the v2 token, built into *headers; `auth` keeps the
 *   token line: wipe it with memset and free it after the request), the
 *   total and connect timeouts from influxdb.timeout_ms, no redirects (they
 *   could carry credentials elsewhere), v1 basic auth, TLS settings, and
 *   collects at most a few KB of the answer into `answer`.
 * - Every option is checked: returns 0 or a negative errno; on error
 *   *headers may hold a list the caller frees (curl_slist_free_all).
 * - Blocking one-shot helpers (influx/admin.c, ps_influx_post_sync) use it,
 *   so `check` proves what the sink will do.
 */
#ifndef PS_INFLUX_EASY_H
#define PS_INFLUX_EASY_H

#include <curl/curl.h>

#include "core/buf.h"
#include "core/config.h"

int ps_influx_easy_setup(CURL *e, const ps_config *cfg, const char *url, int post,
                         ps_buf *auth, struct curl_slist **headers, ps_buf *answer);

#endif
