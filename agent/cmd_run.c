/* Placeholder until the 'run' command lands; says so and exits 70. */
#include <stdio.h>

#include "cmd.h"
#include "sysexits_ps.h"

int ps_cmd_run(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)argc; (void)argv; (void)cfg; (void)cfg_given;
  fprintf(stderr, "perfship: 'run' is not implemented yet\n");
  return PS_EXIT_SOFTWARE;
}
