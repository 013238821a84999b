/*
 * fuzz_history.c: the server's answer to the verdicts' history query, as
 * the judges read it (agent/judging/verdicts_history.c, jd_verdicts_history_parse).
 *
 * Input: the answer body (tests/fuzz/corpus/history/ holds InfluxDB 1.6.7
 * answers to the query, with and without host tags).
 * Property: the parser returns 0 or -EPROTO (never crashes or reads past
 * the text); every row it gives names a run, a host that is NULL or a
 * non-empty string (a run is (host, name), docs/verdicts.md), a revision
 * that is NULL or non-empty, a known status and a start time on the
 * microsecond.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "judging/verdicts_history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const METRICS[] = {"cycleAvgDuration", "cycleSuccessRate", "status",
                                       "kernelObjectsPerCycle"};

static void on_row(void *ctx, const char *host, const char *run, const char *revision,
                   int64_t start_ns, ps_run_status status, const double *values) {
  size_t *rows = ctx;
  (*rows)++;
  if (!run || !run[0] || (host && !host[0]) || (revision && !revision[0]))
    abort();
  if (start_ns % 1000 != 0)
    abort();
  if ((int)status < (int)PS_RUN_STATUS_NONE || (int)status > (int)PS_RUN_STATUS_STALLED)
    abort();
  (void)values; /* any double: a NaN is an absent value */
}

/* The second statement's runs: a growth per run (docs/verdicts.md). */
static void on_growth(void *ctx, const char *host, const char *run, const double *values) {
  size_t *rows = ctx;
  (*rows)++;
  if (!run || !run[0] || (host && !host[0]))
    abort();
  (void)values;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  size_t rows = 0;
  size_t n = sizeof METRICS / sizeof METRICS[0];
  int rc = jd_verdicts_history_parse(text, METRICS, n, on_row, on_growth, &rows, NULL);
  if (rc != 0 && rc != -EPROTO && rc != -ENOMEM)
    abort();
  if (rc == -EPROTO && rows)
    abort(); /* the whole answer is checked before the first row */
  free(text);
  return 0;
}
