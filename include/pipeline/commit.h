/*
 * pipeline/commit: acknowledged offsets into the state file.
 *
 * Contract
 * - pl_commit_moved() is called whenever an acknowledgement moved a file's
 *   committed offset (or anything else the state records changed); the
 *   state is saved shortly after, coalesced by a timer whose delay grows
 *   with the number of files (a save rewrites every entry), and at most
 *   about twice a second while acknowledgements keep coming. A crash before
 *   the save only means re-sending points, which overwrite themselves.
 * - pl_commit_save() writes the state now (atomically, state/state.h): every
 *   live file's committed offset or document hash, the entries of files not
 *   seen this time (kept until `forget`), the last errors, the pending point
 *   count, and each stage's section (pl_commit_add_section): what a stage
 *   remembers is saved in the same atomic write as the offsets it goes with.
 * - A save that fails (a full disk, a state path that is a directory) is
 *   said once with its reason and the state file's path, not at every
 *   try, and tried again with back-off (1 s doubling to 60 s) while the
 *   agent runs; the data keeps flowing, only the commits wait. The next
 *   save that succeeds says so. pl_commit_failing() is the errno of the
 *   last failed save (0: the last save succeeded); `on_saved` hooks
 *   (pl_commit_on_saved) run after every save that succeeded, so a stage
 *   that must not act on what is not saved (alerting_raise.h) can go on.
 * - pl_commit_error() records a message (stamped with the UTC time) among
 *   the state's last errors, which `perfship status` shows.
 */
#ifndef PS_PIPELINE_COMMIT_H
#define PS_PIPELINE_COMMIT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "pipeline/registry.h"
#include "pipeline/shared.h"
#include "state/state.h"

#define PL_COMMIT_MAX_SECTIONS 8
#define PL_COMMIT_MAX_SAVED_HOOKS 2

typedef struct pl_commit_hooks {
  /* Points read but not yet acknowledged, for `status`. */
  size_t (*pending_points)(void *ctx);
  void *ctx;
} pl_commit_hooks;

/* A stage's own memory in the state file (state/state.h sections). */
typedef struct pl_commit_section {
  const char *name;
  char *(*to_json)(void *ctx); /* malloc'd JSON text, or NULL for none */
  void *ctx;
} pl_commit_section;

typedef struct pl_commit {
  pl_shared *sh;
  pl_registry *reg;
  ps_state *saved;
  pl_commit_hooks hooks;
  pl_commit_section sections[PL_COMMIT_MAX_SECTIONS];
  size_t nsections;
  uv_timer_t timer;
  size_t saved_entries; /* files in the last saved state: paces the saves */
  uint64_t last_save_ms; /* loop time of the last timed save */
  struct {
    void (*fn)(void *ctx);
    void *ctx;
  } on_saved[PL_COMMIT_MAX_SAVED_HOOKS];
  size_t non_saved;
  int fail_errno;         /* of the last failed save; 0 when the last one succeeded */
  unsigned failures;      /* failed saves in a row */
  uint64_t retry_ms;      /* the back-off of the next retry */
} pl_commit;

void pl_commit_init(pl_commit *c, pl_shared *sh, pl_registry *reg, ps_state *saved,
                    const pl_commit_hooks *hooks);
/* Saves `to_json` under `name` with every state save. A loaded section no
 * stage provides is kept as it was. Returns 0 or -ENOSPC. */
int pl_commit_add_section(pl_commit *c, const char *name, char *(*to_json)(void *ctx),
                          void *ctx);
void pl_commit_moved(pl_commit *c);
/* Returns 0 or the negative errno of the failed save. */
int pl_commit_save(pl_commit *c);
/* The errno of the last failed save; 0 when the last save succeeded. */
int pl_commit_failing(const pl_commit *c);
/* Runs fn(ctx) after every save that succeeded. Returns 0 or -ENOSPC. */
int pl_commit_on_saved(pl_commit *c, void (*fn)(void *ctx), void *ctx);
void pl_commit_error(pl_commit *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pl_commit_close(pl_commit *c);

#endif
