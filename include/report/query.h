/*
 * report/query: reads what the report shows back from InfluxDB with
 * InfluxQL (influx/client.h ps_influx_query), into report/model.h rows.
 *
 * Contract
 * - ps_report_query() asks in two requests: first the runs markers, the
 *   loadgen_run points, the verdicts, which runs have stage data, the DSS
 *   bench points and the agent's health (one multi-statement query); then
 *   the stages of the newest run that has them. Every statement is bounded
 *   by d->since_ns; the one name taken from data (the stage run) is quoted
 *   with influx/influxql.h. It blocks (threadpool or one-shot command).
 * - Returns 0 with `d` finished (ps_report_finish); a database that does
 *   not exist yet is an empty page, not an error. Otherwise the code of
 *   ps_influx_query() (-EIO unreachable, -EACCES, -EOPNOTSUPP no InfluxQL,
 *   -E2BIG, -EPROTO) with one sentence in `err`; -ENOMEM.
 * - ps_report_parse_answer() adds the rows of one answer of `phase` (1 or
 *   2) to `d`. It is the parser of server text: any JSON, or none, only
 *   adds what it recognises and never fails on shape (fuzzed by
 *   tests/fuzz/fuzz_report.c); -ENOMEM is its only error.
 * - ps_report_statements() writes the InfluxQL text of a phase (for tests
 *   and the fuzz corpus).
 */
#ifndef PS_REPORT_QUERY_H
#define PS_REPORT_QUERY_H

#include <stddef.h>

#include "core/buf.h"
#include "core/config.h"
#include "report/model.h"

int ps_report_query(const ps_config *cfg, ps_report_data *d, ps_buf *err);
int ps_report_statements(const ps_report_data *d, int phase, ps_buf *out);
int ps_report_parse_answer(ps_report_data *d, int phase, const char *json, size_t len);

#endif
