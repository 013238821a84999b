/*
 * report: one report page from the configured InfluxDB, start to end, for
 * `perfship report` (cmd/report.c) and the agent's regeneration
 * (judging/reporter.h). docs/report.md is the user's view.
 *
 * Contract
 * - ps_report_make() reads Chart.js (opts->chart_js), queries the server
 *   (report/query.h) and renders the page (report/html.h) into `html`.
 *   It blocks: call it from a command or libuv's threadpool, never the
 *   loop. It logs nothing (the threadpool must not); `err` gets one
 *   sentence naming what failed and what to do.
 * - Its return value says whose fault a failure is: PS_REPORT_SERVER (the
 *   server could not be reached or refused; the negative errno of
 *   ps_rb_query is in *errno_out), PS_REPORT_CHART_JS (the library
 *   could not be read or inlined), PS_REPORT_NOMEM; 0 when `html` holds a
 *   page.
 * - ps_report_write_file() replaces `path` atomically (a temporary file in
 *   the same folder, fsync, rename, fsync of the folder): a reader or a
 *   web server sees the old page or the new one, never half of one. The
 *   file gets mode 0644 and a folder it has to create 0755, whatever the
 *   umask (the service's is 0077), so that a web server can serve that
 *   folder. An existing folder keeps its mode. 0, or a negative errno with
 *   `err` naming the path.
 */
#ifndef PS_REPORT_REPORT_H
#define PS_REPORT_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"

enum { PS_REPORT_OK = 0, PS_REPORT_SERVER, PS_REPORT_CHART_JS, PS_REPORT_NOMEM };

typedef struct ps_report_opts {
  int64_t now_ns;         /* the page's time (CLOCK_REALTIME) */
  int64_t since_s;        /* how far back, in seconds */
  const char *source;     /* "loadgen", "dss_bench" or NULL for both */
  const char *chart_js;   /* path of Chart.js */
  const char *last_error; /* the local agent's last error line, or NULL */
  const char *compare_url; /* verdicts.compare_url, or NULL */
  const char *const *hosts; /* only these hosts' rows (nhosts); NULL: every host */
  size_t nhosts;
} ps_report_opts;

int ps_report_make(const ps_config *cfg, const ps_report_opts *opts, ps_buf *html,
                   int *errno_out, ps_buf *err);
int ps_report_write_file(const char *path, const char *data, size_t len, ps_buf *err);

#endif
