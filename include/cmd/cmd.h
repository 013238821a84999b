/*
 * cmd: the subcommands of the perfship binary (perfship(1), docs/run.md).
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
#ifndef PS_CMD_CMD_H
#define PS_CMD_CMD_H

#include "core/config.h"
#include "verdict/triage.h"

int ps_cmd_convert(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_run(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_check(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_mark(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_status(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_forget(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_verdicts(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_alert(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_report(int argc, char **argv, ps_config *cfg, int cfg_given);
int ps_cmd_triage(int argc, char **argv, ps_config *cfg, int cfg_given);

/* What several commands do the same way (cmd/common.c). */

/* Loads the secrets the configuration names; on failure prints why and
 * returns PS_EXIT_CONFIG, else PS_EXIT_OK. */
int ps_cmd_load_secrets(ps_config *cfg);

/* The configured state directory, "." when none is set. */
const char *ps_cmd_state_dir(const ps_config *cfg);

/* Loads the saved state of `dir` into `s` (never fails: see state.h) and
 * prints any warning as "perfship CMD: warning text". */
struct ps_state;
void ps_cmd_load_state(struct ps_state *s, const char *dir, const char *cmd);

/* A triage_file line left out (a ps_triage_bad_fn), said on stderr with
 * its data shown escaped; ctx, a long, counts them (may be NULL). */
void ps_cmd_triage_bad_line(void *ctx, const char *name, size_t line, const char *why);
/* Once the server's and the file's decisions are in `s`: the file's undo
 * lines of ids nobody has (counted in *bad) and the server's points that
 * repeat an id, said on stderr. */
void ps_cmd_triage_checks(const char *cmd, const ps_triage_set *s, long *bad);

/* Prints `root` as indented JSON and a newline on stdout, valid UTF-8
 * whatever bytes its strings hold (a byte that begins no character is
 * U+FFFD: core/jsontext.h). 0 or -ENOMEM. */
struct cJSON;
int ps_cmd_print_json(const struct cJSON *root);

/* `perfship verdicts --candidate RUN --against SERIES` (cmd/verdicts_candidate.c):
 * the run judged now against the current level of SERIES, both read from
 * the server; host NULL: the run's own (it must be on one host). Prints
 * the verdicts (as JSON with `json`) and returns the exit code. */
/* `perfship verdicts --explain RUN` (verdicts_explain.c): why RUN got
 * slower, read back from the server within `since_s`. An exit code. */
int ps_cmd_verdicts_explain(ps_config *cfg, const char *run, const char *host, int64_t since_s,
                            int json);
int ps_cmd_verdicts_candidate(const ps_config *cfg, const char *run, const char *against,
                              const char *host, int json);
/* The reading of one InfluxQL answer over loadgen_run in it, for the fuzz
 * target: the runs found (*nruns), then freed. 0, -EPROTO (not an answer,
 * or an error result), -ENOMEM. */
int ps_cmd_candidate_parse(const ps_verdicts_cfg *v, const char *json, size_t *nruns);

#endif
