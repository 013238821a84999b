/*
 * main.c: global options, configuration, and dispatch to a subcommand.
 *
 * `-c FILE` may stand before or after the command (perfship(1)), so the global
 * options are lifted out of argv first and everything else is handed to the
 * command untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/buf.h"
#include "cmd/cmd.h"
#include "core/config.h"
#include "core/log.h"
#include "core/sysexits_ps.h"
#include "formats/format.h"
#include "influx/client.h"

#define DEFAULT_CONFIG "/etc/perfship/perfship.cfg"

static const char usage_text[] =
    "usage: perfship [-c FILE] COMMAND [ARGS]\n"
    "\n"
    "Ship benchmark results into InfluxDB as line protocol.\n"
    "\n"
    "commands:\n"
    "  run [--once]            watch the configured sources and ship every point;\n"
    "                          --once: ingest what exists now, wait for every ack, exit\n"
    "  convert [-f FORMAT] [mapping options] PATH...\n"
    "                          print line protocol to stdout (no server, no state)\n"
    "      -f, --format FORMAT   jsonl (default), lp, loadgen, dss-bench, locust,\n"
    "                            benchmarker\n"
    "      --measurement NAME    jsonl: measurement name (default jsonl)\n"
    "      --tag KEY             jsonl: make KEY a tag (repeatable)\n"
    "      --field KEY           jsonl: keep only these fields (repeatable)\n"
    "      --type KEY=TYPE       jsonl: integer, unsigned, float, string, boolean\n"
    "      --time-key KEY        jsonl: the key holding the timestamp\n"
    "      --time-unit UNIT      jsonl: s (default), ms, us or ns\n"
    "  check                   validate the configuration and reach the server\n"
    "  mark start|end --run NAME [--source S] [--status S] [--text T] [--timeout SEC]\n"
    "                          post a run marker by hand (source manual by default)\n"
    "  status                  files, offsets, pending points and last errors\n"
    "  forget PATH...          drop saved state so those files are read again\n"
    "  verdicts [--source S] [--series NAME] [--since DURATION] [--json]\n"
    "                          what got worse or better: the verdicts, regressions first\n"
    "      --format junit|markdown  for a CI job's test report or a pull-request comment\n"
    "      --fail-on regression|unacknowledged  exit 3 when such a verdict is in range\n"
    "  verdicts --candidate RUN --against SERIES [--host H] [--json]\n"
    "                          judge RUN now against the current level of SERIES\n"
    "  triage ack|exclude|baseline --run R [--metric M] [--host H] --reason TEXT [--ticket URL]\n"
    "  triage list [--json] | triage undo ID\n"
    "                          acknowledge a change, keep a spoiled run out, start a\n"
    "                          series anew at a run, list or undo such decisions\n"
    "  alert test [--event E]  send a sample event through the configured alert\n"
    "                          channels (alerts.exec, alerts.webhook); default run_failed\n"
    "  report -o FILE.html [--since DURATION] [--source S]\n"
    "                          write one self-contained HTML page of the runs, trends,\n"
    "                          stages and DSS results in InfluxDB (-o -: stdout)\n"
    "\n"
    "options:\n"
    "  -c, --config FILE       configuration file (default " DEFAULT_CONFIG " if it exists)\n"
    "  -v, --verbose           log at debug level\n"
    "  -h, --help              show this help and exit\n"
    "  -V, --version           print the version and exit\n"
    "\n"
    "exit codes: 0 ok, 3 a verdict --fail-on names is in range (verdicts), 64 usage,\n"
    "65 some input rejected, 66 a PATH could not be\n"
    "read (convert), 69 server unreachable or an alert not delivered, 70 internal\n"
    "error, 73 the report could not be written, 74 the state could not be saved\n"
    "(run --once), 75 another agent holds the state directory, 78 configuration\n"
    "error.\n";

static const struct {
  const char *name;
  int (*fn)(int, char **, ps_config *, int);
} commands[] = {
    {"run", ps_cmd_run},       {"convert", ps_cmd_convert},
    {"check", ps_cmd_check},   {"mark", ps_cmd_mark},
    {"status", ps_cmd_status}, {"forget", ps_cmd_forget},
    {"verdicts", ps_cmd_verdicts},
    {"alert", ps_cmd_alert},
    {"report", ps_cmd_report},
    {"triage", ps_cmd_triage},
};

int main(int argc, char **argv) {
  const char *config_path = NULL;
  int verbose = 0;
  char **rest = calloc((size_t)argc + 1, sizeof *rest);
  int nrest = 0;
  if (!rest)
    return PS_EXIT_SOFTWARE;
  int passthrough = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!passthrough && strcmp(a, "--") == 0) {
      passthrough = 1;
      rest[nrest++] = argv[i];
    } else if (!passthrough && (!strcmp(a, "-c") || !strcmp(a, "--config"))) {
      if (i + 1 >= argc) {
        fprintf(stderr, "perfship: %s needs a file name\n", a);
        free(rest);
        return PS_EXIT_USAGE;
      }
      config_path = argv[++i];
    } else if (!passthrough && !strncmp(a, "--config=", 9)) {
      config_path = a + 9;
    } else if (!passthrough && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
      fputs(usage_text, stdout);
      free(rest);
      return PS_EXIT_OK;
    } else if (!passthrough && (!strcmp(a, "-V") || !strcmp(a, "--version"))) {
      printf("perfship %s\n", PERFSHIP_VERSION);
      free(rest);
      return PS_EXIT_OK;
    } else if (!passthrough && (!strcmp(a, "-v") || !strcmp(a, "--verbose"))) {
      verbose = 1;
    } else {
      rest[nrest++] = argv[i];
    }
  }
  if (nrest == 0) {
    fputs(usage_text, stderr);
    free(rest);
    return PS_EXIT_USAGE;
  }

  int cfg_given = config_path != NULL;
  if (!config_path && access(DEFAULT_CONFIG, F_OK) == 0)
    config_path = DEFAULT_CONFIG;

  ps_config cfg;
  ps_config_defaults(&cfg);
  if (config_path) {
    ps_buf err;
    ps_buf_init(&err, 4096);
    if (ps_config_load(&cfg, config_path, ps_format_source_rules, &err) < 0) {
      fprintf(stderr, "perfship: %s\n", err.data ? err.data : "configuration error");
      ps_buf_free(&err);
      ps_config_free(&cfg);
      free(rest);
      return PS_EXIT_CONFIG;
    }
    ps_buf_free(&err);
  }
  ps_log_set_level(verbose ? PS_LOG_DEBUG : cfg.log_level);

  int rc = -1;
  for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
    if (strcmp(rest[0], commands[k].name) == 0) {
      curl_global_init(CURL_GLOBAL_DEFAULT);
      rc = commands[k].fn(nrest, rest, &cfg, cfg_given);
      ps_influx_client_release(); /* the blocking reads' kept handles */
      curl_global_cleanup();
      break;
    }
  if (rc < 0) {
    fprintf(stderr, "perfship: unknown command '%s' (see perfship --help)\n",
            rest[0]);
    rc = PS_EXIT_USAGE;
  }
  ps_config_free(&cfg);
  free(rest);
  return rc;
}
