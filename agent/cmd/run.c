/*
 * cmd/run.c: `perfship run [--once]`. Parses the options, loads the
 * secrets (the sink needs them; nothing else does), then hands over to the
 * service (service/service.h), which owns the loop until it stops.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "service/service.h"
#include "core/sysexits_ps.h"

int ps_cmd_run(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)cfg_given;
  ps_service_opts opts = {0};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--once") == 0) {
      opts.once = 1;
    } else {
      fprintf(stderr,
              "perfship run: unknown option '%s' (usage: perfship run [--once])\n",
              argv[i]);
      return PS_EXIT_USAGE;
    }
  }
  if (cfg->nsources == 0)
    fprintf(stderr, "perfship run: warning: no sources configured; only self-metrics "
                    "will be sent\n");
  int rc = ps_cmd_load_secrets(cfg);
  if (rc != PS_EXIT_OK)
    return rc;
  return ps_service_run(cfg, &opts);
}
