/* Placeholder until the 'check' command lands; says so and exits 70. */
#include <stdio.h>

#include "cmd.h"
#include "sysexits_ps.h"

int ps_cmd_check(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)argc; (void)argv; (void)cfg; (void)cfg_given;
  fprintf(stderr, "perfship: 'check' is not implemented yet\n");
  return PS_EXIT_SOFTWARE;
}
