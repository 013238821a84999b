/*
 * judging/verdicts_slogdrift: the slog's stage drift of a run judged from
 * what the server holds (docs/verdicts.md, "Within a run (stage drift)"):
 * a run's slog stages arrive after its end, one at a time, in any order,
 * and a restart reads only the stages it had not finished, so the first
 * loadgen stage may have been read by an earlier start. The server has
 * every stage that was acknowledged; the judge (verdict/slog_drift.h) gets
 * them all from there.
 *
 * Contract
 * - jd_verdicts_slogdrift_statement() builds statement `s` (JD_VERDICTS_SLOGDRIFT_*) for run `run` on
 *   `host`: the run's loadgen_run status, its loadgen_stage `loadgen`
 *   flags, its loadgen_slog_stage figures, its stages' finished cycles
 *   (loadgen_stage_cycles task=all cycleCount: a stage whose slog was
 *   first read after a restart has no finishedCycles of its own, the
 *   cycles being counted from perf-finish as it is read), its
 *   loadgen_slog_vat figures, and its end marker's `backfill`. Every statement is host-scoped and bounded in
 *   time: from JD_VERDICTS_SLOGDRIFT_SPAN_NS before `anchor_ns` (the time of a stage's
 *   slog point: the run began before it) to JD_VERDICTS_SLOGDRIFT_SPAN_NS after it (a
 *   run's stages begin within that of each other). Names are quoted
 *   (readback/statement.h). 0 or -EINVAL.
 * - jd_verdicts_slogdrift_parse() reads the answer to statement `s` into `d`: rows that
 *   lack what they need (a stage that is no number 0-100000, a vat that
 *   is no string) are skipped; the rows kept are bounded (JD_VERDICTS_SLOGDRIFT_MAX_STAGES
 *   stages, JD_VERDICTS_SLOGDRIFT_MAX_VATS vat rows; a stage read twice keeps its last
 *   row). Any text is read without a crash (fuzz target
 *   tests/fuzz/fuzz_slogdrift.c). 0, -ENOMEM, or -EPROTO when the text is
 *   not an InfluxQL answer or holds an error.
 * - The data owns its strings; jd_verdicts_slogdrift_data_free() frees them.
 * - The per-block rows that say how sure a change is are read after these,
 *   by judging/verdicts_sdblocks.h, and handed to the judge with them.
 */
#ifndef PS_JUDGING_VERDICTS_SLOGDRIFT_H
#define PS_JUDGING_VERDICTS_SLOGDRIFT_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "verdict/slog_drift.h"

#define JD_VERDICTS_SLOGDRIFT_SPAN_NS ((int64_t)7 * 86400 * 1000000000)
#define JD_VERDICTS_SLOGDRIFT_MAX_STAGES 64
#define JD_VERDICTS_SLOGDRIFT_MAX_VATS 4096

enum {
  JD_VERDICTS_SLOGDRIFT_STATUS = 0,
  JD_VERDICTS_SLOGDRIFT_STAGES,
  JD_VERDICTS_SLOGDRIFT_SLOG_STAGES,
  JD_VERDICTS_SLOGDRIFT_CYCLES,
  JD_VERDICTS_SLOGDRIFT_VATS,
  JD_VERDICTS_SLOGDRIFT_BACKFILL,
  JD_VERDICTS_SLOGDRIFT_NSTATEMENTS
};

typedef struct jd_verdicts_slogdrift_data {
  ps_run_status status; /* NONE: no loadgen_run row */
  int backfill;
  char *revision; /* from the slog points' tag, NULL when none */
  ps_slog_drift_stage stages[JD_VERDICTS_SLOGDRIFT_MAX_STAGES];
  size_t nstages;
  ps_slog_drift_vat *vats;
  size_t nvats, vats_cap;
} jd_verdicts_slogdrift_data;

int jd_verdicts_slogdrift_statement(int s, const char *run, const char *host, int64_t anchor_ns,
                                    ps_buf *q);
int jd_verdicts_slogdrift_parse(jd_verdicts_slogdrift_data *d, int s, const char *json, size_t len);
void jd_verdicts_slogdrift_data_free(jd_verdicts_slogdrift_data *d);

#endif
