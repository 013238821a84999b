/*
 * pipeline/registry: the files the agent reads, found by path and by
 * identity, and where each resumes.
 *
 * Contract
 * - A tracked file is an open descriptor plus its identity (input/tail.h);
 *   the path is only where it was found. Line files are found by identity
 *   (device, inode) and by their current path; documents (results.json,
 *   Locust stats) by path, since their tools rewrite them.
 * - Where a file resumes comes from the saved state: a line file by
 *   identity (offset and line, when the identity still matches: a rewritten
 *   or truncated file, or a reused inode born later, starts at 0); a
 *   document by path (the hash of the contents last acknowledged). With
 *   start_at=end and no state yet, what exists at the first scan is skipped.
 * - The registry is the one owner that frees a file: pl_registry_retire()
 *   stops it for good, and the memory goes once no batch holds its
 *   checkpoints (cursor.live, influx/batch.h: their origins point at its
 *   path) and no queue holds it (`queued`). Retired files stay in the
 *   indexes until freed; lookups skip them.
 * - Every new file's emitter gets the point/reject functions set with
 *   pl_registry_set_emitter(), with the file as context.
 * - Lookups cost one hash bucket: with 1,000 files growing at once, walking
 *   the list for each event was the largest per-event cost.
 */
#ifndef PS_PIPELINE_REGISTRY_H
#define PS_PIPELINE_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "formats/format.h"
#include "influx/batch.h"
#include "input/tail.h"
#include "pipeline/gens.h"
#include "pipeline/shared.h"
#include "state/state.h"

/* A tracked file. Each flag has one writer, the module that owns its
 * meaning (named beside it); the others read it or ask the owner through
 * a function (test_structure checks the writers). */
typedef struct pl_file {
  struct pl_file *next;  /* every file, live or retired */
  struct pl_file *qnext; /* the reader's work queue */
  const ps_source_cfg *src;
  pl_gen *gen; /* holds src alive */
  const ps_format_ops *ops;
  ps_input_kind kind;
  char *path;        /* origin of its points: never changes */
  char *cur_path;    /* where it is now (rename within the sources) */
  uint64_t cur_hash; /* of cur_path: its bucket in the path index */
  struct pl_file *path_next, *id_next; /* index chains */
  int in_id_index;                     /* registry */
  ps_file_id id;
  int fd;
  ps_tail tail;
  ps_parser *parser;
  ps_cursor cur;
  ps_emitter em;
  void *emit_ctx; /* the emitter functions' own context (the delivery) */
  int retired;    /* registry: no longer read; freed once no batch holds it */
  int draining;   /* router: gone from its path: read to the end, then retire */
  int queued;     /* reader (its queue): in the reader's queue */
  int paused;     /* reader: refused by back-pressure; resumed on ack */
  int yielded;    /* delivery: refused for the per-turn point budget: continued
                   next turn (pl_delivery_file_turn) */
  int record_rejected;   /* delivery: a point of the record was rejected
                          (pl_delivery_take_rejected) */
  int at_end;            /* reader: read to the end of what existed at least once */
  unsigned scan_gen;     /* router: the rescan that last saw it */
  uint64_t last_read_ms; /* loop time of the last bytes read */
  int64_t seen_mtime_ns; /* modification time when last read */
  /* documents */
  ps_buf doc;
  int doc_loaded; /* reader */
  uint64_t doc_hash;
  uint64_t doc_size;
  int64_t doc_mtime_ns;
  uint64_t settle_due; /* reader: 0: nothing waiting to settle
                          (pl_reader_settle_cancel) */
  int doc_backfill;    /* registry: found at start with no state: its run ended
                          unseen (pl_registry_take_doc_backfill) */
} pl_file;

typedef struct pl_registry {
  pl_shared *sh;
  pl_gens *gens;
  ps_state *saved; /* the state loaded at start: resume offsets */
  int (*point)(void *file, const ps_point *p, const ps_origin *o);
  void (*reject)(void *file, const ps_origin *o, const char *reason);
  void *emit_ctx;
  pl_file *files;
  pl_file **by_path, **by_id;
  size_t nbuckets; /* power of two, or 0 before the first file */
  size_t nindexed;
} pl_registry;

void pl_registry_init(pl_registry *r, pl_shared *sh, pl_gens *gens, ps_state *saved);
/* The emitter of every file tracked from now on: the functions get the file
 * as context, and find `emit_ctx` in it. */
void pl_registry_set_emitter(pl_registry *r,
                             int (*point)(void *file, const ps_point *p, const ps_origin *o),
                             void (*reject)(void *file, const ps_origin *o, const char *reason),
                             void *emit_ctx);
/* Frees every file (at shutdown, after the loop ended). */
void pl_registry_free(pl_registry *r);

/* Starts tracking a line file: opens, identifies, and finds where to resume
 * (force_offset0: read it from the beginning whatever the state says).
 * Returns NULL when it cannot be opened (reported, rate-limited). */
pl_file *pl_registry_track_lines(pl_registry *r, const ps_source_cfg *src,
                                 const ps_format_ops *ops, const char *path,
                                 int force_offset0);
/* Starts tracking a document at `path`. */
pl_file *pl_registry_track_doc(pl_registry *r, const ps_source_cfg *src,
                               const ps_format_ops *ops, const char *path);

pl_file *pl_registry_find_by_id(pl_registry *r, uint64_t dev, uint64_t ino);
/* A live, not draining file of that kind at `path`. */
pl_file *pl_registry_find_by_path(pl_registry *r, const char *path, ps_input_kind kind);
/* A live file of that kind at `path`, draining or not. */
pl_file *pl_registry_find_any_by_path(pl_registry *r, const char *path, ps_input_kind kind);
/* The file moved to `path` (a rename the sources still match). */
void pl_registry_moved(pl_registry *r, pl_file *f, const char *path);

/* Stops reading `f` for good (parser, descriptor and buffers go now). */
void pl_registry_retire(pl_registry *r, pl_file *f);
/* Frees `f` if it is retired, out of every queue and held by no batch. */
void pl_registry_maybe_free(pl_registry *r, pl_file *f);
/* Whether the document was found at the first scan with no state (its run
 * ended unseen, docs/schema.md `backfill`); asked once, when its first
 * version is read: any later version is a change seen live. */
int pl_registry_take_doc_backfill(pl_file *f);

/* Opens a line file for reading (O_NOATIME where allowed): also how a file
 * closed while idle is reopened. Returns the fd or -1 with errno. */
int pl_open_tailed(const char *path);

/* Files not retired. */
size_t pl_registry_live(const pl_registry *r);

#endif
