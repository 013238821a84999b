/*
 * pipeline/router: what a path event means for the files the agent reads.
 *
 * Contract
 * - pl_router_path() is the watcher's callback (input/watch.h): something
 *   happened at `path` of source `src`, found by a scan or named by an
 *   event. The format's ops decide what the path is (formats/format.h
 *   input_kind): a document is tracked by path and read once settled; a
 *   line file by identity, so a rotated (renamed) or deleted file is drained
 *   from its descriptor before it is dropped and the new file at the path
 *   is tracked anew. Every path of a run folder is also shown to the run
 *   tracker, whether it is read or not (exit_code, slogs count as activity).
 * - A `content_only` event (a write to a file already open) costs no stat
 *   of the path: the reader's fstat and identity check see what changed.
 * - pl_router_rescan() runs a scan of the watcher and then drains the line
 *   files no scan reached: they left their path without an event we saw.
 * - Nothing happens once a stop began (sh->stopping).
 * - The router owns no memory; the registry owns the files.
 */
#ifndef PS_PIPELINE_ROUTER_H
#define PS_PIPELINE_ROUTER_H

#include "input/watch.h"
#include "pipeline/reader.h"
#include "pipeline/registry.h"
#include "pipeline/runtracker.h"
#include "pipeline/shared.h"

typedef struct pl_router {
  pl_shared *sh;
  pl_registry *reg;
  pl_reader *rd;
  pl_runs *runs;
  unsigned scan_gen; /* a file a scan reached carries the scan's number */
} pl_router;

void pl_router_init(pl_router *r, pl_shared *sh, pl_registry *reg, pl_reader *rd,
                    pl_runs *runs);
/* The watcher's callback; `ctx` is the router. */
void pl_router_path(void *ctx, const ps_source_cfg *src, const char *path, int content_only);
/* A full scan of `w`, then the line files it no longer reached are drained. */
void pl_router_rescan(pl_router *r, ps_watch *w);

#endif
