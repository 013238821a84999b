/*
 * pipeline/commit: acknowledged offsets into the state file.
 *
 * Contract
 * - pl_commit_moved() is called whenever an acknowledgement moved a file's
 *   committed offset (or anything else the state records changed); the
 *   state is saved shortly after, coalesced by a timer whose delay grows
 *   with the number of files (a save rewrites every entry). A crash before
 *   the save only means re-sending points, which overwrite themselves.
 * - pl_commit_save() writes the state now (atomically, state/state.h): every
 *   live file's committed offset or document hash, the entries of files not
 *   seen this time (kept until `forget`), the last errors, the pending point
 *   count and the run tracker's JSON (through the hook).
 * - pl_commit_error() records a message (stamped with the UTC time) among
 *   the state's last errors, which `perfship status` shows.
 */
#ifndef PS_PIPELINE_COMMIT_H
#define PS_PIPELINE_COMMIT_H

#include <stddef.h>
#include <uv.h>

#include "pipeline/registry.h"
#include "pipeline/shared.h"
#include "state/state.h"

typedef struct pl_commit_hooks {
  /* The run tracker's persisted runs as JSON text (malloc'd), or NULL. */
  char *(*runs_json)(void *ctx);
  /* Points read but not yet acknowledged, for `status`. */
  size_t (*pending_points)(void *ctx);
  void *ctx;
} pl_commit_hooks;

typedef struct pl_commit {
  pl_shared *sh;
  pl_registry *reg;
  ps_state *saved;
  pl_commit_hooks hooks;
  uv_timer_t timer;
  size_t saved_entries; /* files in the last saved state: paces the saves */
} pl_commit;

void pl_commit_init(pl_commit *c, pl_shared *sh, pl_registry *reg, ps_state *saved,
                    const pl_commit_hooks *hooks);
void pl_commit_moved(pl_commit *c);
void pl_commit_save(pl_commit *c);
void pl_commit_error(pl_commit *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pl_commit_close(pl_commit *c);

#endif
