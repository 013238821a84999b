/*
 * format: the parser interface every input format implements.
 *
 * Contract
 * - A format decides, per file path, whether it reads the file line by line
 *   (append-only streams: perf.jsonl, *_stats_history.csv, JSONL, LP), whole
 *   once settled (documents the producing tool rewrites: results.json,
 *   *_stats.csv, *_failures.csv), or not at all (slogs, tarballs, ...).
 * - Formats only parse: no file under agent/formats/ opens, stats or reads
 *   a file or folder. What a parser needs of its file besides its lines
 *   comes from the driver in a ps_input_head (input/feed.h reads it), so a
 *   parser opened after a restart at a mid-file offset still knows the
 *   context at the file's start (loadgen's timeOrigin, Locust's header).
 * - open() makes a per-file parser. A failed open() returns a negative
 *   errno, writes a message to `err` and leaves *out NULL.
 * - line() gets one complete line without its '\n' (a trailing '\r' already
 *   stripped); the driver has set em->origin.line. document() gets the whole
 *   file; stream(), when a format has it, gets a document in pieces instead
 *   (for documents too large to hold). They emit points and rejects through
 *   `em` and return 0, or a negative errno only when the emitter failed (bad
 *   input is a reject, not an error).
 * - finish() is called once at the end of a file's input in `convert` and
 *   when the pipeline knows a file is complete; formats that buffer (none
 *   today) flush there. It may be NULL.
 * - Optional entries exist so that no caller branches on a format id: a
 *   caller asks whether an entry is there.
 * - Parsers never block and never do network I/O.
 */
#ifndef PS_FORMATS_FORMAT_H
#define PS_FORMATS_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/emit.h"

typedef enum ps_input_kind {
  PS_INPUT_IGNORE = 0,
  PS_INPUT_LINES,
  PS_INPUT_DOCUMENT,
} ps_input_kind;

typedef struct ps_parser ps_parser;
typedef struct ps_run_facts ps_run_facts; /* runs/runs.h */

/* What the driver read for a parser besides its lines, so formats never touch files. */
typedef struct ps_input_head {
  const char *path;        /* origin of the points; run identity (loadgen) */
  const char *real_path;   /* `path` resolved (realpath(3)) when the format
                              asked (PS_FMT_NEEDS_REAL_PATH) and it resolved;
                              else NULL. Names the folder of a file given as
                              "perf.jsonl" or reached through a symlink. */
  const char *first_line;  /* the file's first complete line, without '\n'; NULL when the file
                              has none yet or the format did not ask (see `needs`).
                              A trailing '\r' is stripped, as line() gets lines. */
  size_t first_len;
  int64_t mtime_ns;        /* the file's modification time when opened; 0 when unknown */
} ps_input_head;

/* What a format asks the driver to read for its ps_input_head (`needs`).
 * The first line is read for line-read files only (a document's parser gets
 * all of it), and only up to PS_INPUT_HEAD_MAX bytes (input/feed.h). */
enum { PS_FMT_NEEDS_FIRST_LINE = 1, PS_FMT_NEEDS_REAL_PATH = 2 };

typedef struct ps_format_ops {
  ps_format_id id;
  const char *name;
  unsigned needs; /* PS_FMT_NEEDS_* */
  ps_input_kind (*input_kind)(const ps_source_cfg *src, const char *path);
  int (*open)(ps_parser **out, const ps_source_cfg *src, const ps_input_head *head, ps_buf *err);
  int (*line)(ps_parser *p, const char *data, size_t len, ps_emitter *em);
  int (*document)(ps_parser *p, const char *data, size_t len, ps_emitter *em);
  int (*finish)(ps_parser *p, ps_emitter *em);
  /* Documents too large to hold (benchmarker reports, gigabytes): when
   * set, the driver gives the document through stream() instead of
   * document(): its bytes in pieces of any size in order with `last` 0
   * (rejects only), then (NULL, 0, last 1) again while it returns -EAGAIN:
   * the points come from those calls. A parser's memory must not grow with
   * the document's bytes. NULL for every other format. */
  int (*stream)(ps_parser *p, const char *data, size_t len, int last, ps_emitter *em);
  void (*free)(ps_parser *p);
  /* Run folders (loadgen): the folder a path would belong to (string work only, no I/O:
   * runs.h decides whether it is one); the facts the parser learned so far; restoring persisted
   * facts into a parser opened mid-file (after a restart). NULL for other formats. */
  int (*run_folder)(const char *path, char *folder, size_t n);  /* 1: `folder` filled; 0: none */
  const ps_run_facts *(*run_facts)(const ps_parser *p);
  void (*set_run_facts)(ps_parser *p, const ps_run_facts *f);
  /* Documents that are a run each (dss-bench): the `backfill` of the file's marker
   * (docs/schema.md); NULL for other formats. A parser starts with true (what
   * `convert` wants); the agent sets false for a file it saw appear or change. */
  void (*set_backfill)(ps_parser *p, int backfill);
  /* Files of the format's tool that carry no points (Locust's
   * PREFIX_exceptions.csv): the note `convert` prints instead of an error,
   * e.g. "Locust exceptions file"; NULL for every other path. May be NULL. */
  const char *(*not_converted)(const char *path);
  /* Formats whose files are runs: the `source` tag of their `runs` markers
   * ("loadgen", "dss_bench"; docs/schema.md), which names the runs in the
   * agent's alerts too, and how a person names those runs in a sentence
   * ("loadgen", "DSS bench"). Both NULL: its files are not runs, so no run
   * is expected of it (alerts.no_new_run_after_s does not apply). */
  const char *run_source;
  const char *run_title;
  /* The format reads a source's jsonl mapping (measurement, tag_keys,
   * field_keys, time_key, time_unit, types; core/config.h): its sources may
   * set those keys and need a time_key. 0 for every other format. */
  int source_mapping;
  /* The format's scenarios have arms that a report may leave unnamed: its
   * sources may set `arm` (core/config.h). 0 for every other format. */
  int source_arm;
} ps_format_ops;

/* The ops of a format, or NULL for an unknown id. */
const ps_format_ops *ps_format_ops_get(ps_format_id id);
/* What the configuration loader asks of a source's format, answered from
 * its ops (source_mapping; runs: run_source): the ps_source_rules_fn that
 * every ps_config_load() of a file with sources is given. */
void ps_format_source_rules(ps_format_id id, ps_source_rules *out);

/* Each format module exports its ops table. */
extern const ps_format_ops ps_format_jsonl;
extern const ps_format_ops ps_format_lp;
extern const ps_format_ops ps_format_loadgen;
extern const ps_format_ops ps_format_dss_bench;
extern const ps_format_ops ps_format_locust;
extern const ps_format_ops ps_format_benchmarker;

#endif
