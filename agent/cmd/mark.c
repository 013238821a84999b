/*
 * cmd/mark.c: `perfship mark start|end --run NAME ...`: post one `runs`
 * point by hand (docs/schema.md, "Run lifecycle and markers").
 *
 * DESIGN: a marker is typically posted by a benchmark's wrapper script just
 * before or after the run, when the server may be restarting; so transient
 * failures (no connection, 5xx, 429) are retried with backoff (200 ms
 * doubling, capped at 5 s) until --timeout, while answers that will not
 * change by waiting (bad credentials, a rejected line) end at once. The
 * revision tag follows the loadgen folder rule, so manual markers line up
 * with the automatic ones of the same run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "influx/client.h"
#include "influx/endpoint.h"
#include "influx/lp_encode.h"
#include "runs/runs.h"
#include "core/sysexits_ps.h"
#include "core/visible.h"

static const char mark_usage[] =
    "usage: perfship [-c FILE] mark start|end --run NAME [--source S] [--status S] "
    "[--text T] [--timeout SEC]\n";

static const char *const statuses[] = {"running", "success", "failed", "interrupted",
                                       "stalled", NULL};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s) {
  if (s <= 0)
    return;
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* "--name VALUE" or "--name=VALUE"; returns 1 when argv[*i] is that option. */
static int take_opt(int argc, char **argv, int *i, const char *name,
                    const char **value, int *bad) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n) != 0)
    return 0;
  if (a[n] == '=') {
    *value = a + n + 1;
    return 1;
  }
  if (a[n] != '\0')
    return 0;
  if (*i + 1 >= argc) {
    fprintf(stderr, "perfship: mark: %s needs a value\n%s", name, mark_usage);
    *bad = 1;
    return 1;
  }
  *value = argv[++*i];
  return 1;
}

/* What the command line asked for, checked. */
typedef struct mark_args {
  const char *event, *run, *source, *status, *text, *timeout_text;
  double timeout_s;
} mark_args;

/* PS_EXIT_OK, or PS_EXIT_USAGE after saying what is wrong. */
static int parse_args(int argc, char **argv, mark_args *m) {
  *m = (mark_args){.source = "manual", .timeout_text = "60"};
  int bad = 0;
  for (int i = 1; i < argc && !bad; i++) {
    const char *v = NULL;
    if (take_opt(argc, argv, &i, "--run", &v, &bad))
      m->run = v;
    else if (take_opt(argc, argv, &i, "--source", &v, &bad))
      m->source = v;
    else if (take_opt(argc, argv, &i, "--status", &v, &bad))
      m->status = v;
    else if (take_opt(argc, argv, &i, "--text", &v, &bad))
      m->text = v;
    else if (take_opt(argc, argv, &i, "--timeout", &v, &bad))
      m->timeout_text = v;
    else if (!m->event && (strcmp(argv[i], "start") == 0 || strcmp(argv[i], "end") == 0))
      m->event = argv[i];
    else {
      fprintf(stderr, "perfship: mark: unexpected argument '%s'\n%s", argv[i],
              mark_usage);
      bad = 1;
    }
  }
  if (bad)
    return PS_EXIT_USAGE;
  if (!m->event || !m->run || !m->run[0]) {
    fprintf(stderr, "perfship: mark: %s\n%s",
            !m->event ? "say start or end" : "--run NAME is required", mark_usage);
    return PS_EXIT_USAGE;
  }
  if (!m->source[0]) {
    fprintf(stderr, "perfship: mark: --source must not be empty\n");
    return PS_EXIT_USAGE;
  }
  if (!m->status)
    m->status = strcmp(m->event, "start") == 0 ? "running" : "success";
  int known = 0;
  for (int k = 0; statuses[k]; k++)
    known |= strcmp(statuses[k], m->status) == 0;
  if (!known) {
    fprintf(stderr, "perfship: mark: --status '%s' is not one of running, success, "
            "failed, interrupted, stalled\n", m->status);
    return PS_EXIT_USAGE;
  }
  char *endp;
  m->timeout_s = strtod(m->timeout_text, &endp);
  if (*endp || !(m->timeout_s > 0) || !(m->timeout_s <= 31536000)) {
    fprintf(stderr, "perfship: mark: --timeout '%s' is not a number of seconds "
            "above 0 and up to a year\n", m->timeout_text);
    return PS_EXIT_USAGE;
  }
  return PS_EXIT_OK;
}

/* The marker as one line of line protocol, with the configuration's
 * global tags. PS_EXIT_OK, or PS_EXIT_USAGE when it cannot be encoded. */
static int encode_marker(const ps_config *cfg, const mark_args *m, ps_buf *line) {
  ps_tag tags[5];
  size_t ntags = 0;
  tags[ntags++] = (ps_tag){"source", m->source};
  tags[ntags++] = (ps_tag){"run", m->run};
  const char *revision = ps_run_revision(m->run);
  if (revision)
    tags[ntags++] = (ps_tag){"revision", revision};
  tags[ntags++] = (ps_tag){"event", m->event};
  tags[ntags++] = (ps_tag){"status", m->status};
  ps_buf deftext;
  ps_buf_init(&deftext, 0);
  const char *text = m->text;
  if (!text) {
    if (strcmp(m->event, "start") == 0)
      ps_buf_printf(&deftext, "%s started (marked by hand)", m->run);
    else
      ps_buf_printf(&deftext, "%s ended: %s (marked by hand)", m->run, m->status);
    text = deftext.data ? deftext.data : "";
  }
  ps_field fields[2] = {ps_field_string("text", text, strlen(text)),
                        ps_field_bool("backfill", 0)};
  ps_point pt = {"runs", tags, ntags, fields, 2, now_ns()};

  ps_tag *extra = cfg->ntags ? calloc(cfg->ntags, sizeof *extra) : NULL;
  for (size_t i = 0; extra && i < cfg->ntags; i++)
    extra[i] = (ps_tag){cfg->tags[i].key, cfg->tags[i].value};
  const char *reason = NULL;
  int rc = ps_lp_encode(line, &pt, extra, extra ? cfg->ntags : 0, &reason);
  free(extra);
  ps_buf_free(&deftext);
  if (rc < 0) {
    fprintf(stderr, "perfship: mark: cannot encode the marker: %s; change --run, "
            "--source or --text\n", reason ? reason : strerror(-rc));
    return PS_EXIT_USAGE;
  }
  return PS_EXIT_OK;
}

/* What one answer means for the marker. */
typedef enum post_step { POST_DONE, POST_RETRY, POST_AGAIN } post_step;

/* Judges one write's answer (rc, HTTP status, the server's words `s`),
 * says what the user must know, and sets *code when it ends the command.
 * A 404 the agent may repair is repaired once (*created). */
static post_step judge_answer(const ps_config *cfg, const ps_config *attempt,
                              const mark_args *m, int rc, long status_code, const char *s,
                              int *created, int *code) {
  if (rc == 0 && status_code >= 200 && status_code <= 299) {
    /* the name as data, never as direction controls */
    ps_visible_say(stdout, "marker posted: runs %s run=%s status=%s\n", m->event, m->run,
                   m->status);
    *code = PS_EXIT_OK;
  } else if (rc == 0 && status_code == 404 && cfg->influxdb.api == PS_API_V1 &&
             cfg->influxdb.create_database && !*created) {
    ps_buf err;
    ps_buf_init(&err, 4096);
    int crc = ps_influx_create_database(attempt, &err);
    *created = crc == 0;
    post_step step = POST_AGAIN; /* the database exists now: post again at once */
    if (crc == -EIO) {
      step = POST_RETRY;
    } else if (crc < 0) {
      fprintf(stderr, "perfship: mark: %s\n", err.data ? err.data : "");
      *code = PS_EXIT_UNAVAILABLE;
      step = POST_DONE;
    }
    ps_buf_free(&err);
    return step;
  } else if (rc == 0 && (status_code == 401 || status_code == 403)) {
    fprintf(stderr, "perfship: mark: the server refused the credentials (HTTP %ld: "
            "%s); check influxdb.username/password_file (v1) or the token (v2), then "
            "run `perfship check`\n", status_code, s);
  } else if (rc == 0 && status_code == 404) {
    fprintf(stderr, "perfship: mark: the database or bucket does not exist (HTTP "
            "404: %s); create it or set influxdb.create_database = true\n", s);
  } else if (rc == 0 && (status_code == 400 || status_code == 422)) {
    fprintf(stderr, "perfship: mark: the server rejected the marker (HTTP %ld: %s)\n",
            status_code, s);
    *code = PS_EXIT_DATAERR;
  } else if (rc == 0 && status_code >= 300 && status_code < 500 &&
             status_code != 408 && status_code != 429) {
    fprintf(stderr, "perfship: mark: the server answered HTTP %ld (%s); see its log\n",
            status_code, s);
  } else {
    return POST_RETRY;
  }
  return POST_DONE;
}

/* Posts the line until it is stored, refused for good, or --timeout has
 * passed. Returns the exit code. */
static int post_marker(const ps_config *cfg, const mark_args *m, const ps_buf *line) {
  /* Each request may take no longer than what is left of --timeout. */
  ps_config attempt = *cfg;
  double deadline = mono_s() + m->timeout_s, backoff = 0.2;
  int code = PS_EXIT_UNAVAILABLE, created = 0;
  ps_buf answer;
  ps_buf_init(&answer, 0);
  for (;;) {
    double left = deadline - mono_s();
    int64_t left_ms = (int64_t)(left * 1000);
    attempt.influxdb.timeout_ms = left_ms < 1 ? 1 : left_ms < cfg->influxdb.timeout_ms
                                                          ? left_ms
                                                          : cfg->influxdb.timeout_ms;
    long status_code = 0;
    ps_buf_reset(&answer);
    int rc = ps_influx_write_sync(&attempt, line->data, line->len, &status_code, &answer);
    ps_buf said;
    ps_buf_init(&said, 0);
    if (answer.data)
      ps_influx_answer_text(cfg, answer.data, answer.len, &said);
    while (said.len && said.data[said.len - 1] == '\n')
      ps_buf_truncate(&said, said.len - 1);
    const char *s = said.data ? said.data : "";
    post_step step = judge_answer(cfg, &attempt, m, rc, status_code, s, &created, &code);
    if (step == POST_AGAIN) {
      ps_buf_free(&said);
      continue;
    }
    if (step == POST_DONE) {
      ps_buf_free(&said);
      break;
    }
    left = deadline - mono_s();
    if (left <= 0) {
      if (rc)
        fprintf(stderr, "perfship: mark: the server at %s stayed unreachable for %s s "
                "(last: %s); the marker was not posted. Start the server or fix "
                "influxdb.url, or give a longer --timeout\n", cfg->influxdb.url,
                m->timeout_text, s);
      else
        fprintf(stderr, "perfship: mark: the server at %s kept failing for %s s "
                "(last: HTTP %ld %s); the marker was not posted. See the server's log, "
                "or give a longer --timeout\n", cfg->influxdb.url, m->timeout_text,
                status_code, s);
      ps_buf_free(&said);
      break;
    }
    ps_buf_free(&said);
    sleep_s(backoff < left ? backoff : left);
    backoff = backoff * 2 > 5 ? 5 : backoff * 2;
  }
  ps_buf_free(&answer);
  return code;
}

int ps_cmd_mark(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)cfg_given;
  mark_args m;
  int exit_code = parse_args(argc, argv, &m);
  if (exit_code != PS_EXIT_OK)
    return exit_code;
  if ((exit_code = ps_cmd_load_secrets(cfg)) != PS_EXIT_OK)
    return exit_code;
  ps_buf line;
  ps_buf_init(&line, 0);
  exit_code = encode_marker(cfg, &m, &line);
  if (exit_code == PS_EXIT_OK)
    exit_code = post_marker(cfg, &m, &line);
  ps_buf_free(&line);
  return exit_code;
}
