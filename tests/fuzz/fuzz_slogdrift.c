/*
 * fuzz_slogdrift.c: the slog stage drift's reading of InfluxDB answers
 * (agent/judging/verdicts_slogdrift.c) and the judge fed with what it
 * yielded (agent/verdict/slog_drift.c).
 *
 * Input: a byte choosing the first statement (JD_VERDICTS_SLOGDRIFT_*, modulo their
 * count), then the answer's text, read as that statement and every one
 * after it, so the rows of one meet the next.
 * Properties: any answer is read without a crash or a leak; the rows kept
 * stay within their bounds; the judge gives at most 1 + top vats verdicts
 * per stage, each with a finite value and baseline.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/config.h"
#include "judging/verdicts_slogdrift.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  static ps_config cfg;
  static int init;
  if (!init) {
    ps_config_defaults(&cfg);
    init = 1;
  }
  jd_verdicts_slogdrift_data d = {0};
  for (int s = data[0] % JD_VERDICTS_SLOGDRIFT_NSTATEMENTS; s < JD_VERDICTS_SLOGDRIFT_NSTATEMENTS;
       s++) {
    ps_buf q;
    ps_buf_init(&q, 0);
    (void)jd_verdicts_slogdrift_statement(s, "daily-perf-1", "bench-1", 1647216512000000000LL, &q);
    ps_buf_free(&q);
    if (jd_verdicts_slogdrift_parse(&d, s, (const char *)data + 1, size - 1) == -ENOMEM)
      break;
  }
  if (d.nstages > JD_VERDICTS_SLOGDRIFT_MAX_STAGES || d.nvats > JD_VERDICTS_SLOGDRIFT_MAX_VATS)
    abort();
  d.status = PS_RUN_STATUS_SUCCESS; /* judge whatever came */
  ps_slog_drift_run run = {"loadgen", "daily-perf", "daily-perf-1", d.revision, d.status, 0};
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  if (ps_slog_drift(&cfg.verdicts, &run, d.stages, d.nstages, d.vats, d.nvats, NULL, &l) == 0) {
    if (l.n > d.nstages * (1 + PS_SLOG_DRIFT_TOP_VATS))
      abort();
    for (size_t i = 0; i < l.n; i++)
      if (!isfinite(l.v[i].value) || !isfinite(l.v[i].baseline))
        abort();
  }
  ps_verdict_list_free(&l);
  jd_verdicts_slogdrift_data_free(&d);
  return 0;
}
