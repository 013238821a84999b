/*
 * fuzz_sdblocks.c: the reading of the per-block slog figures' answers
 * (agent/judging/verdicts_sdblocks.c) and the stage drift judged with
 * them (agent/verdict/slog_drift.c, agent/verdict/stage_test.c).
 *
 * Input: a byte choosing the statement (JD_VERDICTS_SDBLOCKS_*, modulo their count),
 * then the answer's text, read as that statement and every one after it.
 * Properties: any answer is read without a crash or a leak; the rows kept
 * stay within their bounds; every p-value the judge gives is in [0, 1].
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/config.h"
#include "judging/verdicts_sdblocks.h"

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
  jd_verdicts_sdblocks b = {0};
  for (int s = data[0] % JD_VERDICTS_SDBLOCKS_NSTATEMENTS; s < JD_VERDICTS_SDBLOCKS_NSTATEMENTS;
       s++) {
    ps_buf q;
    ps_buf_init(&q, 0);
    (void)jd_verdicts_sdblocks_statement(s, "daily-perf-1", "bench-1", 1647216512000000000LL, &q);
    ps_buf_free(&q);
    if (jd_verdicts_sdblocks_parse(&b, s, (const char *)data + 1, size - 1) == -ENOMEM)
      break;
  }
  if (b.nblocks > JD_VERDICTS_SDBLOCKS_MAX_ROWS || b.nvats > JD_VERDICTS_SDBLOCKS_MAX_ROWS)
    abort();
  /* two loadgen stages with a vat each, so whatever blocks came are tested */
  ps_slog_drift_stage st[] = {{1, 1, 0, 10, 10.0, 0.1, 1}, {2, 1, 0, 10, 14.0, 0.3, 2}};
  ps_slog_drift_vat vats[] = {{1, "v1", NULL, 5.0}, {2, "v1", NULL, 9.0}};
  ps_slog_drift_run run = {"loadgen", "daily-perf", "daily-perf-1", NULL, PS_RUN_STATUS_SUCCESS, 0};
  ps_slog_drift_blocks view = jd_verdicts_sdblocks_view(&b);
  ps_verdict_list l;
  ps_verdict_list_init(&l);
  if (ps_slog_drift(&cfg.verdicts, &run, st, 2, vats, 2, &view, &l) == 0)
    for (size_t i = 0; i < l.n; i++)
      if (!isnan(l.v[i].p_value) && !(l.v[i].p_value >= 0 && l.v[i].p_value <= 1))
        abort();
  ps_verdict_list_free(&l);
  jd_verdicts_sdblocks_free(&b);
  return 0;
}
