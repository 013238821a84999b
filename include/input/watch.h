/*
 * watch: finding the files of the configured sources, and noticing changes.
 *
 * Contract
 * - A source path is a directory (every file below it, up to
 *   PS_WATCH_MAX_DEPTH levels: run folders inside a results folder), a
 *   single file, or a glob (glob(3), any component may hold wildcards).
 * - ps_watch_scan() walks every source now and calls `on_path` for each
 *   regular file found; it also starts one uv_fs_event per directory that
 *   can hold matching files (inotify is not recursive on Linux), so later
 *   changes are reported without polling. It is the periodic safety net
 *   too: the caller runs it every watch.rescan_interval_ms.
 * - An event reports the changed path through `on_path` (a file that was
 *   modified, created, renamed or deleted; the callee stats it).
 *   `content_only` is 1 when the event only says that the contents or
 *   attributes of the entry changed (a write): the file at the path is the
 *   one an earlier event or scan reported, since a rename, creation or
 *   deletion at the path is reported before, by its own event, with 0
 *   (as every path of a scan is). A new
 *   directory is watched and scanned at once, so a new run folder and the
 *   files already in it are seen within the event's latency, not the
 *   rescan interval.
 * - Directories that disappeared lose their handle at the next scan.
 * - ps_watch_close() closes every handle; `closed` runs when all are closed.
 */
#ifndef PS_INPUT_WATCH_H
#define PS_INPUT_WATCH_H

#include <stddef.h>
#include <uv.h>

#include "core/config.h"

#define PS_WATCH_MAX_DEPTH 6

typedef struct ps_watch ps_watch;
typedef void (*ps_watch_path_cb)(void *ctx, const ps_source_cfg *src, const char *path,
                                 int content_only);

int ps_watch_new(ps_watch **out, uv_loop_t *loop, const ps_source_cfg *srcs, size_t nsrcs,
                 ps_watch_path_cb on_path, void *ctx);
/* Replaces the sources (SIGHUP); the next scan applies them. */
void ps_watch_set_sources(ps_watch *w, const ps_source_cfg *srcs, size_t nsrcs);
int ps_watch_scan(ps_watch *w);
void ps_watch_close(ps_watch *w, void (*closed)(void *arg), void *arg);
/* Frees a closed watch (after `closed` ran). NULL ok. */
void ps_watch_free(ps_watch *w);

/* Does `path` belong to a source (exact file, under its folder, or matching
 * its glob)? */
int ps_watch_source_matches(const ps_source_cfg *src, const char *path);

#endif
