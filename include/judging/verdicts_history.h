/*
 * judging/verdicts_history: a series' earlier runs as the server knows
 * them, read back once per series and agent start so that a fresh agent
 * pointed at a server holding months of runs judges against them
 * (docs/verdicts.md, "Where the history comes from").
 *
 * Contract
 * - jd_verdicts_history_query_text() builds the InfluxQL for one loadgen series:
 *   the `status` and the judged metrics of `loadgen_run` where `test_type`
 *   is the series and, unless `host` is NULL (verdicts.series_by =
 *   "test_type"), `host` is the host, since `since_ns` and, unless
 *   `until_ns` is 0, before `until_ns` (the judge's window back from the
 *   runs to judge, a further read only the slice before the last: an
 *   unbounded read is refused by InfluxDB 3 once the measurement spans too
 *   many files), one group per
 *   run, a run being (host, name) (every name from the configuration or
 *   the data is quoted, readback/statement.h). The growth figures among the
 *   metrics (core/figures.h, PS_FIG_GROWTH) are not loadgen_run fields: a
 *   second statement reads each run's largest over its judged stages from
 *   `loadgen_slog_stage` (docs/verdicts.md, "Kernel growth across
 *   revisions").
 * - The agent runs it on libuv's threadpool with readback/query.h's
 *   ps_rb_run() (the request blocks for up to influxdb.timeout_ms).
 * - jd_verdicts_history_parse() reads such an answer and calls `row` once per run:
 *   its host (NULL when its points have none), name, revision (NULL when
 *   absent), start time (the loadgen_run point's time), status, and one
 *   value per metric (NaN when absent). A run with several rows gives its
 *   last. Returns 0, or -EPROTO when the text is not such an answer (the
 *   fuzz target tests/fuzz/fuzz_history.c): not JSON, a result with an
 *   error, rows whose time is not a number of nanoseconds an int64 holds,
 *   whose status is not a string or whose metrics are not numbers (null is
 *   "absent"). The second statement's runs go to `growth` (may be NULL)
 *   instead, with the host, the name and the values. The whole answer is
 *   checked before the first `row`, and
 *   `why` (may be NULL) says what was wrong; the caller retries it like a
 *   failed read.
 */
#ifndef PS_JUDGING_VERDICTS_HISTORY_H
#define PS_JUDGING_VERDICTS_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include "core/buf.h"
#include "core/config.h"
#include "runs/runs.h"

int jd_verdicts_history_query_text(const char *series, const char *host, int64_t since_ns,
                                   int64_t until_ns, const char *const *metrics, size_t nmetrics,
                                   ps_buf *out);

typedef void (*jd_verdicts_history_row_cb)(void *ctx, const char *host, const char *run,
                                           const char *revision, int64_t start_ns,
                                           ps_run_status status, const double *values);

typedef void (*jd_verdicts_history_growth_cb)(void *ctx, const char *host, const char *run,
                                              const double *values);

int jd_verdicts_history_parse(const char *json, const char *const *metrics, size_t nmetrics,
                              jd_verdicts_history_row_cb row, jd_verdicts_history_growth_cb growth,
                              void *ctx, ps_buf *why);

#endif
