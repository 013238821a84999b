/*
 * state: what perfship remembers across restarts, in one file under
 * state_dir ("state.json").
 *
 * Contract
 * - Per file, keyed by identity (tail.h: device, inode, fingerprint), not by
 *   path: the offset and line number up to which every point is
 *   acknowledged, and for whole documents the hash of the contents last
 *   acknowledged. The path is kept for `status`, `forget` and messages.
 * - ps_state_save() is atomic and durable: write a temporary file, fsync,
 *   rename over state.json, fsync the directory. A crash leaves either the
 *   old or the new file, never a mix.
 * - ps_state_load() of a missing file gives an empty state (existed = 0). A
 *   corrupt or unreadable file is reported in `warn`, moved aside as
 *   state.json.corrupt, and treated as empty: never a crash. A section
 *   that is neither an object nor a list is left out and named in `warn`.
 * - Besides files, the state carries the agent's last errors (for `status`;
 *   they never hold secrets), its pending point count at the last save, and
 *   named sections of opaque JSON that stages keep there (`runs`: the run
 *   tracker), saved in the same atomic write as the offsets they go with.
 * - Run as root on a state directory owned by another user, the files of
 *   the directory are left to that user, not to root (ps_state_adopt).
 */
#ifndef PS_STATE_H
#define PS_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "input/tail.h"

#define PS_STATE_MAX_ERRORS 10
#define PS_STATE_MAX_SECTIONS 8

typedef struct ps_state_file {
  char *path;
  ps_file_id id;
  uint64_t offset; /* acknowledged up to here */
  uint64_t line;   /* number of the line starting at offset */
  uint64_t doc_hash;
  int has_doc; /* doc_hash is meaningful */
  int matched; /* runtime only: claimed by a live file */
} ps_state_file;

typedef struct ps_state {
  int existed; /* a state file was found at load */
  ps_state_file *files;
  size_t nfiles, cap;
  char *errors[PS_STATE_MAX_ERRORS]; /* oldest first */
  size_t nerrors;
  uint64_t pending_points;
  int64_t saved_at; /* unix seconds */
  int pid;          /* the agent that saved it */
  /* What stages remember beyond files: opaque JSON values, each under a
   * top-level key of its own ("runs": the run tracker). Owned. */
  struct {
    char *name;
    char *json;
  } sections[PS_STATE_MAX_SECTIONS];
  size_t nsections;
} ps_state;

void ps_state_init(ps_state *s);
void ps_state_free(ps_state *s);
int ps_state_load(ps_state *s, const char *dir, ps_buf *warn);
int ps_state_save(const ps_state *s, const char *dir);
/* The JSON text of section `name`, or NULL. */
const char *ps_state_section(const ps_state *s, const char *name);
/* Sets section `name` to `json` (taken over; NULL removes it). Names are
 * top-level keys of the file: not "version", "files", "errors", ...
 * Returns 0, -ENOSPC when PS_STATE_MAX_SECTIONS are in use, -ENOMEM. */
int ps_state_set_section(ps_state *s, const char *name, char *json);
/* Appends a copy of `f` (path copied). */
int ps_state_add(ps_state *s, const ps_state_file *f);
/* The entry with this device and inode, or NULL. */
ps_state_file *ps_state_find(ps_state *s, uint64_t dev, uint64_t ino);
/* Remembers an error line; keeps the last PS_STATE_MAX_ERRORS. */
void ps_state_add_error(ps_state *s, const char *msg);
/* Drops entries whose path is `path` or lies under it (a folder). Returns
 * how many were dropped. */
size_t ps_state_forget(ps_state *s, const char *path);
/* 1 when `path` is `prefix` or lies under it (trailing slashes of prefix
 * ignored; "/" holds everything). The one rule for every `forget`. */
int ps_path_under(const char *path, const char *prefix);
/* Hands the file `name` of `dir` to the directory's owner when perfship
 * runs as root and the directory belongs to another user (so the service
 * running as that user can open it), if root owns it, it is a regular
 * file with one link and not a symlink. Load and save apply it to the lock
 * and state.json; files they create are made that way. Returns 0 (also when
 * there is nothing to do) or a negative errno. */
int ps_state_adopt(const char *dir, const char *name);
/* The path of state.json under dir, into out. */
int ps_state_path(const char *dir, ps_buf *out);

/* The state directory lock held by a running agent, and taken by `status`
 * and `forget` to know whether one runs: returns an fd holding the lock,
 * -EWOULDBLOCK when another agent holds it, or another negative errno.
 * `create` makes the directory (mode 0700) if missing. */
int ps_state_lock(const char *state_dir, int create);

#endif
