/*
 * cmd/common.c: steps several subcommands share, so that each prints the
 * same message and exits with the same code for the same trouble
 * (include/cmd/cmd.h).
 */
#include <stdio.h>

#include "cmd/cmd.h"
#include "state/state.h"
#include "core/sysexits_ps.h"

int ps_cmd_load_secrets(ps_config *cfg) {
  ps_buf err;
  ps_buf_init(&err, 4096);
  int rc = ps_config_load_secrets(cfg, &err);
  if (rc < 0)
    fprintf(stderr, "perfship: %s\n", err.data ? err.data : "cannot read the secrets");
  ps_buf_free(&err);
  return rc < 0 ? PS_EXIT_CONFIG : PS_EXIT_OK;
}

const char *ps_cmd_state_dir(const ps_config *cfg) {
  return cfg->state_dir && cfg->state_dir[0] ? cfg->state_dir : ".";
}

void ps_cmd_load_state(ps_state *s, const char *dir, const char *cmd) {
  ps_buf warn;
  ps_buf_init(&warn, 4096);
  ps_state_load(s, dir, &warn);
  if (warn.len)
    fprintf(stderr, "perfship %s: %s\n", cmd, warn.data);
  ps_buf_free(&warn);
}
