/* placeholder */
#include "cmd.h"
#include "sysexits_ps.h"
int ps_cmd_convert(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)argc; (void)argv; (void)cfg; (void)cfg_given;
  return PS_EXIT_SOFTWARE;
}
