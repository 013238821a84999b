/*
 * format: the parser interface every input format implements.
 *
 * Contract
 * - A format decides, per file path, whether it reads the file line by line
 *   (append-only streams: perf.jsonl, *_stats_history.csv, JSONL, LP), whole
 *   once settled (documents the producing tool rewrites: results.json,
 *   *_stats.csv, *_failures.csv), or not at all (slogs, tarballs, ...).
 * - open() makes a per-file parser. It may read the file itself for context
 *   that lives at its start (loadgen reads the perf-start line for
 *   timeOrigin; locust reads the CSV header), so a parser opened after a
 *   restart at a mid-file offset still knows it. A failed open() returns a
 *   negative errno, writes a message to `err` and leaves *out NULL.
 * - line() gets one complete line without its '\n' (a trailing '\r' already
 *   stripped); the driver has set em->origin.line. document() gets the whole
 *   file. Both emit points and rejects through `em` and return 0, or a
 *   negative errno only when the emitter failed (bad input is a reject, not
 *   an error).
 * - finish() is called once at the end of a file's input in `convert` and
 *   when the pipeline knows a file is complete; formats that buffer (none
 *   today) flush there. It may be NULL.
 * - Parsers never block and never do network I/O.
 */
#ifndef PS_FORMAT_H
#define PS_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"
#include "formats/emit.h"

typedef enum ps_input_kind {
  PS_INPUT_IGNORE = 0,
  PS_INPUT_LINES,
  PS_INPUT_DOCUMENT,
} ps_input_kind;

typedef struct ps_parser ps_parser;

typedef struct ps_format_ops {
  ps_format_id id;
  const char *name;
  ps_input_kind (*input_kind)(const ps_source_cfg *src, const char *path);
  int (*open)(ps_parser **out, const ps_source_cfg *src, const char *path,
              ps_buf *err);
  int (*line)(ps_parser *p, const char *data, size_t len, ps_emitter *em);
  int (*document)(ps_parser *p, const char *data, size_t len, ps_emitter *em);
  int (*finish)(ps_parser *p, ps_emitter *em);
  void (*free)(ps_parser *p);
  /* Optional: `convert` hands each PATH operand here instead of reading it
   * itself, for formats whose unit is a folder (loadgen: a run folder,
   * whose markers need exit_code and docker.log beside perf.jsonl). */
  int (*convert_path)(const ps_source_cfg *src, const char *path,
                      ps_emitter *em, ps_buf *err);
} ps_format_ops;

/* The ops of a format, or NULL for an unknown id. */
const ps_format_ops *ps_format_ops_get(ps_format_id id);

/* A file's modification time in whole seconds: the time of the points of
 * documents that carry none of their own (dss-bench results.json, Locust
 * CSVs), read again for every rewritten version. Returns 0 and sets
 * *mtime_s, or returns a negative errno, leaves *mtime_s alone and writes
 * "cannot stat: REASON" to `err` (which may be NULL). */
int ps_format_file_mtime(const char *path, int64_t *mtime_s, ps_buf *err);

/* Each format module exports its ops table. */
extern const ps_format_ops ps_format_jsonl;
extern const ps_format_ops ps_format_lp;
extern const ps_format_ops ps_format_loadgen;
extern const ps_format_ops ps_format_dss_bench;
extern const ps_format_ops ps_format_locust;

/* DSS bench: the `backfill` field of the file's `runs` marker (SCHEMA.md:
 * true when the run had ended before perfship first saw it). A parser from
 * ps_format_dss_bench.open starts with true, as `convert` wants; the agent
 * sets false for a results file that appeared or changed while it watched.
 * Only for parsers of ps_format_dss_bench; accepts NULL. */
void ps_dss_set_backfill(ps_parser *p, int backfill);

#endif
