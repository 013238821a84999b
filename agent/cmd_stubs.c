/* Commands whose modules have not landed yet; each is replaced by its own
 * cmd_<name>.c. Kept honest: they say so and exit 70. */
#include <stdio.h>

#include "cmd.h"
#include "sysexits_ps.h"

#define NOT_YET(fn, name)                                                      \
  int fn(int argc, char **argv, ps_config *cfg, int cfg_given) {               \
    (void)argc; (void)argv; (void)cfg; (void)cfg_given;                        \
    fprintf(stderr, "perfship: '%s' is not implemented yet\n", name);          \
    return PS_EXIT_SOFTWARE;                                                   \
  }
NOT_YET(ps_cmd_run, "run")
NOT_YET(ps_cmd_check, "check")
NOT_YET(ps_cmd_mark, "mark")
NOT_YET(ps_cmd_status, "status")
NOT_YET(ps_cmd_forget, "forget")
