/*
 * cmd/report.c: `perfship report -o FILE.html [--since DURATION]
 * [--source S]`: one self-contained HTML page of the runs, trends, stages
 * and DSS results the configured InfluxDB holds (docs/report.md).
 *
 * DESIGN: the command is the agent's regeneration run once by hand, with
 * the same code (report/report.h), so a page written here and one written
 * by the service look alike. Exit codes say whom to ask: 69 the server
 * (unreachable, refused, no InfluxQL), 73 the file system, 78 the
 * configuration or the installation (Chart.js). The local agent's last
 * error, when this machine's state directory is readable, fills the
 * health line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/util.h"
#include "core/sysexits_ps.h"
#include "report/report.h"
#include "state/state.h"

static const char report_usage[] =
    "usage: perfship [-c FILE] report -o FILE.html [--since DURATION] [--source S] "
    "[--host H]...\n"
    "  -o, --output FILE   where to write the page (\"-\": standard output)\n"
    "  --since DURATION    how far back: 90d (default: report.since_days), 12h, 2w, ...\n"
    "  --source S          only \"loadgen\" or only \"dss_bench\"\n"
    "  --host H            only machine H (its host tag); repeatable (default: every host)\n";

/* "--name VALUE" or "--name=VALUE"; returns 1 when argv[*i] is that option. */
static int take_opt(int argc, char **argv, int *i, const char *name, const char *alias,
                    const char **value, int *bad) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (strncmp(a, name, n) == 0 && a[n] == '=') {
    *value = a + n + 1;
    return 1;
  }
  if (strcmp(a, name) != 0 && !(alias && strcmp(a, alias) == 0))
    return 0;
  if (*i + 1 >= argc) {
    fprintf(stderr, "perfship: report: %s needs a value\n%s", a, report_usage);
    *bad = 1;
    return 1;
  }
  *value = argv[++*i];
  return 1;
}

/* The newest error line the local agent saved, if its state is readable. */
static const char *local_last_error(const ps_config *cfg, ps_state *st) {
  ps_buf path;
  ps_buf_init(&path, 0);
  const char *dir = ps_cmd_state_dir(cfg);
  int readable = ps_state_path(dir, &path) == 0 && access(path.data, R_OK) == 0;
  ps_buf_free(&path);
  if (!readable)
    return NULL;
  ps_cmd_load_state(st, dir, "report");
  return st->nerrors ? st->errors[st->nerrors - 1] : NULL;
}

static int make_page(ps_config *cfg, const char *out, const char *since, const char *source,
                     const char **hosts, size_t nhosts);

int ps_cmd_report(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)cfg_given;
  const char *out = NULL, *since = NULL, *source = NULL;
  const char **hosts = calloc((size_t)(argc > 0 ? argc : 1), sizeof *hosts);
  size_t nhosts = 0;
  if (!hosts) {
    fprintf(stderr, "perfship: report: out of memory\n");
    return PS_EXIT_SOFTWARE;
  }
  int bad = 0;
  for (int i = 1; i < argc && !bad; i++) {
    const char *v = NULL;
    if (take_opt(argc, argv, &i, "--output", "-o", &v, &bad))
      out = v;
    else if (take_opt(argc, argv, &i, "--since", NULL, &v, &bad))
      since = v;
    else if (take_opt(argc, argv, &i, "--source", NULL, &v, &bad))
      source = v;
    else if (take_opt(argc, argv, &i, "--host", NULL, &v, &bad))
      hosts[nhosts++] = v;
    else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      fputs(report_usage, stdout);
      free(hosts);
      return PS_EXIT_OK;
    } else {
      fprintf(stderr, "perfship: report: unexpected argument '%s'\n%s", argv[i], report_usage);
      bad = 1;
    }
  }
  int code = bad ? PS_EXIT_USAGE : PS_EXIT_OK;
  for (size_t h = 0; !bad && h < nhosts; h++)
    if (!hosts[h][0] || strchr(hosts[h], '\r')) {
      fprintf(stderr, "perfship: report: --host needs a machine's host tag, not '%s'\n%s",
              hosts[h], report_usage);
      code = PS_EXIT_USAGE;
    }
  if (code == PS_EXIT_OK)
    code = make_page(cfg, out, since, source, hosts, nhosts);
  free(hosts);
  return code;
}

static int make_page(ps_config *cfg, const char *out, const char *since, const char *source,
                     const char **hosts, size_t nhosts) {
  if (!out || !out[0]) {
    fprintf(stderr, "perfship: report: say where to write the page with -o FILE.html\n%s",
            report_usage);
    return PS_EXIT_USAGE;
  }
  int64_t since_s = cfg->report.since_days * 86400;
  if (since && ps_parse_duration_s(since, &since_s) < 0) {
    fprintf(stderr, "perfship: report: --since '%s' is not a duration; write a number and a "
            "unit: 90d, 12h, 30m, 2w\n", since);
    return PS_EXIT_USAGE;
  }
  if (source && strcmp(source, "loadgen") != 0 && strcmp(source, "dss_bench") != 0) {
    fprintf(stderr, "perfship: report: --source '%s' is not one the page knows; use "
            "\"loadgen\" or \"dss_bench\"\n", source);
    return PS_EXIT_USAGE;
  }
  int code = ps_cmd_load_secrets(cfg);
  if (code != PS_EXIT_OK)
    return code;

  ps_state st;
  ps_state_init(&st);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  ps_report_opts opts = {
      .now_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
      .since_s = since_s,
      .source = source,
      .chart_js = cfg->report.chart_js,
      .last_error = local_last_error(cfg, &st),
      .compare_url = cfg->verdicts.compare_url,
      .hosts = hosts,
      .nhosts = nhosts,
  };
  ps_buf html, err;
  ps_buf_init(&html, 0);
  ps_buf_init(&err, 4096);
  int errno_out = 0;
  switch (ps_report_make(cfg, &opts, &html, &errno_out, &err)) {
  case PS_REPORT_OK:
    break;
  case PS_REPORT_SERVER:
    fprintf(stderr, "perfship: report: %s\n", err.len ? err.data : strerror(-errno_out));
    code = PS_EXIT_UNAVAILABLE;
    break;
  case PS_REPORT_CHART_JS:
    fprintf(stderr, "perfship: report: %s\n", err.len ? err.data : strerror(-errno_out));
    code = PS_EXIT_CONFIG;
    break;
  default:
    fprintf(stderr, "perfship: report: out of memory\n");
    code = PS_EXIT_SOFTWARE;
  }
  if (code == PS_EXIT_OK && strcmp(out, "-") == 0) {
    if (fwrite(html.data, 1, html.len, stdout) != html.len || fflush(stdout) != 0) {
      fprintf(stderr, "perfship: report: cannot write to standard output\n");
      code = PS_EXIT_CANTCREAT;
    }
  } else if (code == PS_EXIT_OK) {
    ps_buf_reset(&err);
    if (ps_report_write_file(out, html.data, html.len, &err) < 0) {
      fprintf(stderr, "perfship: report: %s; choose a writable place with -o\n", err.data);
      code = PS_EXIT_CANTCREAT;
    } else {
      printf("wrote %s (%.1f kB); open it in any browser\n", out, (double)html.len / 1000);
    }
  }
  ps_buf_free(&html);
  ps_buf_free(&err);
  ps_state_free(&st);
  return code;
}
