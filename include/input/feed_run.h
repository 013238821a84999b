/*
 * input/feed_run: a loadgen run read outside the agent's loop. `convert`
 * turns run folders into points and markers; the agent re-derives the
 * facts of a perf.jsonl it resumes mid-file after a restart. It lives with
 * the feed (input/feed.h) because it is a driver: it reads files and hands
 * them to a parser, then asks runs/runs.h to judge the run, so runs/ stays
 * below the formats that use its vocabulary.
 *
 * Contract
 * - `ops` is a format with run folders (ops->run_facts set: loadgen). Its
 *   parser reads perf.jsonl through input/feed.h, the agent's line reader.
 * - ps_run_convert_path() takes a run folder, its perf.jsonl, or a results
 *   folder holding run folders (each run in name order) and converts each
 *   run as the agent would if it met the folder now (docs/loadgen.md):
 *   every complete line; the unterminated last line only if the run ended,
 *   or, without an exit_code file, if it is a complete perf-finish; then
 *   the run is judged (runs.h ps_run_evaluate with `now` and
 *   `stall_after_s`) and its markers emitted, backfill = the run had ended.
 *   Points and rejects go to `em` with origin.file the perf.jsonl read.
 *   Returns 0, or a negative errno with a message in `err` when a folder or
 *   file cannot be read (the caller names the operand).
 * - ps_run_scan_facts() re-derives the facts of the perf.jsonl open as `fd`
 *   (named `path`: the run identity) from its complete lines up to
 *   `end_offset`, emitting nothing. Cost: one read of that much of the
 *   file and one parse of its perf-finish line, if any.
 * - `max_line` bounds a line as watch.max_line_bytes does (0: the default).
 */
#ifndef PS_INPUT_FEED_RUN_H
#define PS_INPUT_FEED_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/emit.h"
#include "formats/format.h"
#include "runs/runs.h"

int ps_run_convert_path(const ps_format_ops *ops, const ps_source_cfg *src,
                        const char *path, int64_t now_s, int64_t stall_after_s,
                        size_t max_line, ps_emitter *em, ps_buf *err);

int ps_run_scan_facts(const ps_format_ops *ops, const ps_source_cfg *src, int fd,
                      const char *path, uint64_t end_offset, size_t max_line,
                      ps_run_facts *facts, ps_buf *err);

#endif
