/*
 * loadgen: the pieces of the loadgen format (agent/formats/loadgen.c) that
 * the pipeline and the run tracker use beyond the generic ps_format_ops.
 *
 * Contract
 * - ps_loadgen_run_facts() exposes what the parser learned so far (see
 *   runs.h); ps_loadgen_set_run_facts() restores persisted facts into a
 *   parser opened after a restart (the parser then continues updating them).
 *   Both accept NULL parsers (returning NULL / doing nothing).
 * - ps_loadgen_scan_facts() re-derives the facts of perf.jsonl without
 *   emitting anything, reading complete lines up to `end_offset` bytes
 *   (UINT64_MAX: every complete line). Its cost is one read of the file and
 *   one parse of the perf-finish line, if any.
 * - ps_loadgen_set_stall_after_s() sets the stall threshold that `convert`
 *   uses (default PS_RUN_STALL_AFTER_DEFAULT_S); cmd_convert may pass the
 *   configuration's alerts.stall_after_s.
 */
#ifndef PS_LOADGEN_H
#define PS_LOADGEN_H

#include <stdint.h>

#include "core/buf.h"
#include "formats/format.h"
#include "runs/runs.h"

const ps_run_facts *ps_loadgen_run_facts(const ps_parser *p);
void ps_loadgen_set_run_facts(ps_parser *p, const ps_run_facts *f);
int ps_loadgen_scan_facts(const char *perf_path, uint64_t end_offset,
                          ps_run_facts *facts, ps_buf *err);
void ps_loadgen_set_stall_after_s(int64_t s);

#endif
