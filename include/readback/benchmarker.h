/*
 * readback/benchmarker: the benchmarker's steps and fits read back for the
 * report page (docs/report.md "Benchmarker"; the points: docs/schema.md
 * "Benchmarker").
 *
 * Contract
 * - ps_rb_benchmarker_text() builds the two statements (steps, fits; every
 *   operation type together, `operation` = 'all'), bounded in time
 *   [since_ns, until_ns) (until_ns 0: no upper bound).
 * - ps_rb_benchmarker_parse() reads the server's answer to them into `out`
 *   (appended; strings copied; numbers a point lacks are NaN). A row
 *   without configuration, scenario or arm is left out. 0, -ENOMEM, or
 *   -EPROTO when the answer is not one.
 * - ps_rb_benchmarker_read() is both around one ps_rb_query() (blocking:
 *   a command or the threadpool); its codes are ps_rb_query()'s.
 * - No globals; `out` is freed with ps_rb_benchmarker_free().
 */
#ifndef PS_READBACK_BENCHMARKER_H
#define PS_READBACK_BENCHMARKER_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"

typedef struct ps_rb_bm_key {
  char *configuration, *load, *scenario, *arm, *host; /* load, host may be NULL */
} ps_rb_bm_key;

typedef struct ps_rb_bm_step {
  ps_rb_bm_key k;
  int64_t time_ns; /* the step's end */
  double load_factor, throughput, latency_mean_s;
  char *reason; /* termination_reason; NULL when absent */
} ps_rb_bm_step;

typedef struct ps_rb_bm_fit {
  ps_rb_bm_key k;
  int64_t time_ns; /* the scenario's last step's end */
  double gamma, alpha, beta, x_n_star;
  char *discarded_loads; /* comma-separated load factors; NULL when none */
} ps_rb_bm_fit;

typedef struct ps_rb_bm_data {
  ps_rb_bm_step *steps;
  size_t nsteps, cap_steps;
  ps_rb_bm_fit *fits;
  size_t nfits, cap_fits;
} ps_rb_bm_data;

int ps_rb_benchmarker_text(ps_buf *q, int64_t since_ns, int64_t until_ns);
int ps_rb_benchmarker_parse(ps_rb_bm_data *out, const char *json, size_t len);
int ps_rb_benchmarker_read(const ps_config *cfg, int64_t since_ns, int64_t until_ns,
                           ps_rb_bm_data *out, ps_buf *err);
void ps_rb_benchmarker_free(ps_rb_bm_data *d);

#endif
