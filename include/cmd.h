/*
 * cmd: the subcommands of the perfship binary (DESIGN.md "Command line").
 *
 * Contract
 * - main.c parses the global options (-c FILE anywhere, --help, --version,
 *   -v/--verbose), loads the configuration and calls one of these with the
 *   remaining arguments: argv[0] is the command name, options and operands
 *   follow in their original order.
 * - `cfg` is loaded and valid; `cfg_given` tells whether -c was used (for
 *   convert, where the configuration's sources and tags only apply then).
 * - Each returns a process exit code (sysexits_ps.h) and prints its own
 *   errors.
 */
#ifndef PS_CMD_H
#define PS_CMD_H

#include "config.h"

int ps_cmd_convert(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_run(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_check(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_mark(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_status(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_forget(int argc, char **argv, ps_config *cfg, int cfg_given);

#endif
