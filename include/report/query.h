/*
 * report/query: reads what the report shows back from InfluxDB with
 * InfluxQL through the read-back layer (readback/), into report/model.h rows.
 *
 * Contract
 * - ps_report_query() runs the statements below one request each: the
 *   runs markers, the loadgen_run points, the verdicts, which runs have
 *   stage data, the DSS bench points, the agent's health; then the stages
 *   of each host's newest run that has them. Every statement is bounded by
 *   d->since_ns and, when d->hosts is set, asks for those hosts only;
 *   every statement selects `host`, so a run is (host, run) from its
 *   first row on (report/model.h). The names taken from data (the stage
 *   run and its host, the hosts) are quoted with readback/statement.h. It
 *   blocks (threadpool or one-shot command).
 * - Returns 0 with `d` finished (ps_report_finish); an existing database
 *   with nothing in range is an empty page. Otherwise the code of
 *   readback/query.h ps_rb_query() (-EIO unreachable, -EACCES, -ENOENT the
 *   database does not exist or the bucket is not mapped: never read as an
 *   empty page, -EOPNOTSUPP no InfluxQL, -E2BIG, -EPROTO) with one
 *   sentence in `err` that names the database; -ENOMEM.
 * - ps_report_parse_answer() adds the rows of one answer to `statement` to
 *   `d`. It is the parser of server text: any JSON, or none, only adds
 *   what it recognises and never fails on shape (fuzzed by
 *   tests/fuzz/fuzz_report.c); -ENOMEM is its only error (-EINVAL for a
 *   statement number out of range).
 * - ps_report_statements() writes the InfluxQL text of one statement (for
 *   tests and the fuzz corpus); the stage statements need d->stage_run
 *   (-ENOENT without).
 */
#ifndef PS_REPORT_QUERY_H
#define PS_REPORT_QUERY_H

#include <stddef.h>

#include "core/buf.h"
#include "core/config.h"
#include "report/model.h"

/* The statements, in the order they are asked. */
enum {
  PS_RQ_MARKERS,
  PS_RQ_RUN_POINTS,
  PS_RQ_VERDICTS,
  PS_RQ_STAGE_CANDIDATES,
  PS_RQ_DSS,
  PS_RQ_HEALTH,
  PS_RQ_ALERT_ERROR,
  PS_RQ_STAGE_CYCLES, /* these two: of d->stage_run */
  PS_RQ_STAGE_BLOCKS,
  PS_REPORT_NSTATEMENTS
};

int ps_report_query(const ps_config *cfg, ps_report_data *d, ps_buf *err);
int ps_report_statements(const ps_report_data *d, int statement, ps_buf *out);
int ps_report_parse_answer(ps_report_data *d, int statement, const char *json, size_t len);

#endif
