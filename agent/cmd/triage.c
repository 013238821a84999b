/*
 * cmd/triage.c: `perfship triage ack|exclude|baseline|list|undo`: the
 * decisions people take about verdicts, written as `perfship_triage`
 * points (docs/schema.md "Triage decisions"; what they do:
 * docs/verdicts.md "Triage").
 *
 * Design
 * - A decision is one point, never rewritten: undo is a point of its own
 *   that names the id it revokes, so the history of who decided what
 *   stays on the server.
 * - The point carries none of the configuration's global tags: its `host`
 *   is the machine whose run is meant, not the one the command runs on.
 * - One write, no retry loop: a person is at the terminal and sees the
 *   answer (mark.c retries because a script posts markers unattended).
 * - Text from the data is printed through core/visible.h, so a hostile
 *   reason cannot forge lines or reorder what the terminal shows.
 * - Exit: 0; 64 usage; 65 undo of an id no decision has, or a bad
 *   triage_file line (`list`, the rest is listed); 69 the server could not
 *   be reached or refused; 78 the triage_file cannot be read.
 */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cmd/cmd.h"
#include "core/sysexits_ps.h"
#include "core/visible.h"
#include "influx/client.h"
#include "readback/query.h"
#include "influx/endpoint.h"
#include "readback/answer.h"
#include "readback/statement.h"
#include "influx/lp_encode.h"
#include "readback/triage.h"
#include "verdict/triage.h"

static int usage(const char *msg) {
  if (msg)
    fprintf(stderr, "perfship triage: %s\n", msg);
  fputs("usage: perfship [-c FILE] triage ack --run R [--metric M] [--host H] --reason TEXT "
        "[--ticket URL]\n"
        "       perfship [-c FILE] triage exclude --run R [--host H] --reason TEXT\n"
        "       perfship [-c FILE] triage baseline --run R [--host H] --reason TEXT\n"
        "       perfship [-c FILE] triage list [--json]\n"
        "       perfship [-c FILE] triage undo ID [--reason TEXT]\n",
        stderr);
  return PS_EXIT_USAGE;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The person deciding: through sudo, the one who ran sudo. */
static const char *who_am_i(void) {
  const char *u = getenv("SUDO_USER");
  if (u && u[0])
    return u;
  u = getenv("USER");
  if (u && u[0])
    return u;
  struct passwd *pw = getpwuid(getuid());
  return pw && pw->pw_name ? pw->pw_name : "unknown";
}

static int post(const ps_config *cfg, const ps_triage_decision *d) {
  ps_tag tags[3];
  size_t ntags = 0;
  tags[ntags++] = (ps_tag){"action", ps_triage_action_name(d->action)};
  if (d->host && d->host[0])
    tags[ntags++] = (ps_tag){"host", d->host};
  tags[ntags++] = (ps_tag){"id", d->id};
  ps_field fields[6];
  size_t nf = 0;
  const char *keys[] = {"run", "metric", "who", "reason", "ticket", "revokes"};
  const char *vals[] = {d->run, d->metric, d->who, d->reason, d->ticket, d->revokes};
  for (int k = 0; k < 6; k++)
    if (vals[k] && vals[k][0])
      fields[nf++] = ps_field_string(keys[k], vals[k], strlen(vals[k]));
  ps_point pt = {PS_TRIAGE_MEASUREMENT, tags, ntags, fields, nf, d->when_ns};
  ps_buf line, answer, said;
  ps_buf_init(&line, 0);
  ps_buf_init(&answer, 0);
  ps_buf_init(&said, 0);
  const char *reason = NULL;
  int code = PS_EXIT_OK;
  if (ps_lp_encode(&line, &pt, NULL, 0, &reason) < 0) {
    ps_visible_say(stderr, "perfship triage: cannot write the decision: %s\n",
                   reason ? reason : "out of memory");
    code = PS_EXIT_USAGE;
    goto out;
  }
  long status = 0;
  int rc = ps_influx_write_sync(cfg, line.data, line.len, &status, &answer);
  if (answer.data)
    ps_influx_answer_text(cfg, answer.data, answer.len, &said);
  if (rc < 0) {
    ps_visible_say(stderr,
                   "perfship triage: the server at %s cannot be reached: %s; nothing "
                   "was decided\n",
                   cfg->influxdb.url, said.data ? said.data : strerror(-rc));
    code = PS_EXIT_UNAVAILABLE;
  } else if (status < 200 || status > 299) {
    ps_visible_say(stderr,
                   "perfship triage: the server refused the decision (HTTP %ld: %s); "
                   "nothing was decided\n",
                   status, said.data ? said.data : "");
    code = status == 400 ? PS_EXIT_DATAERR : PS_EXIT_UNAVAILABLE;
  }
out:
  ps_buf_free(&line);
  ps_buf_free(&answer);
  ps_buf_free(&said);
  return code;
}

/* The decisions of the server and the triage_file; an exit code. */
static int read_all(const ps_config *cfg, ps_triage_set *s, long *bad) {
  ps_buf err;
  ps_buf_init(&err, 2048);
  int code = PS_EXIT_OK;
  int rc = ps_rb_triage_read_server(cfg, s, &err);
  if (rc < 0) {
    ps_visible_say(stderr, "perfship triage: %s\n", err.data ? err.data : strerror(-rc));
    code = rc == -ENOMEM ? PS_EXIT_SOFTWARE : PS_EXIT_UNAVAILABLE;
  } else {
    ps_buf_reset(&err);
    long n = ps_rb_triage_read_file(cfg, s, ps_cmd_triage_bad_line, bad, &err);
    if (n < 0) {
      ps_visible_say(stderr, "perfship triage: %s\n", err.data ? err.data : strerror((int)-n));
      code = n == -ENOMEM ? PS_EXIT_SOFTWARE : PS_EXIT_CONFIG;
    } else {
      ps_cmd_triage_checks("triage", s, bad);
    }
  }
  ps_buf_free(&err);
  return code;
}

/* A decision about a run no verdict names is most likely a typo: said,
 * not refused, since a run may be decided on before it is judged. */
static void warn_unknown_run(const ps_config *cfg, const ps_triage_decision *d) {
  ps_buf q, answer, err;
  ps_buf_init(&q, 0);
  ps_buf_init(&answer, 1 << 20);
  ps_buf_init(&err, 1024);
  int ok = ps_buf_puts(&q, "SELECT \"verdict\" FROM \"perfship_verdict\" WHERE \"run\" = ") == 0 &&
           ps_rb_string(&q, d->run) == 0;
  if (ok)
    ok = ps_rb_tag_is(&q, "host", d->host) == 0;
  ps_rb_answer a;
  if (ok && ps_buf_puts(&q, " LIMIT 1") == 0 && ps_rb_query(cfg, q.data, &answer, &err) == 0 &&
      ps_rb_answer_parse(&a, answer.data, answer.len) == 0) {
    ok = ps_rb_answer_next(&a) == NULL;
    ps_rb_answer_free(&a);
  } else {
    ok = 0;
  }
  if (ok) {
    fputs("perfship triage: warning: no verdict names the run ", stderr);
    ps_visible_put(stderr, d->run, 0);
    fputs(d->host ? " on that host" : "", stderr);
    fputs(" (yet): the decision is written; check the name with `perfship verdicts`\n",
          stderr);
  }
  ps_buf_free(&q);
  ps_buf_free(&answer);
  ps_buf_free(&err);
}

static void when_text(int64_t ns, char out[24]) {
  if (ns <= 0) {
    strcpy(out, "-");
    return;
  }
  time_t t = (time_t)(ns / 1000000000);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 24, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int list(const ps_config *cfg, int json) {
  ps_triage_set s;
  ps_triage_set_init(&s);
  long bad = 0;
  int code = read_all(cfg, &s, &bad);
  if (code != PS_EXIT_OK) {
    ps_triage_set_free(&s);
    return code;
  }
  if (ps_triage_sort_by_time(&s) < 0) {
    ps_triage_set_free(&s);
    fputs("perfship triage: out of memory\n", stderr);
    return PS_EXIT_SOFTWARE;
  }
  if (json) {
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < s.n; i++) {
      const ps_triage_decision *d = &s.d[i];
      cJSON *o = cJSON_CreateObject();
      char when[24];
      when_text(d->when_ns, when);
      cJSON_AddStringToObject(o, "id", d->id);
      cJSON_AddStringToObject(o, "action", ps_triage_action_name(d->action));
      const char *keys[] = {"run", "metric", "host", "who", "reason", "ticket", "revokes",
                            "origin"};
      const char *vals[] = {d->run, d->metric, d->host, d->who, d->reason, d->ticket,
                            d->revokes, d->origin};
      for (int k = 0; k < 8; k++)
        if (vals[k])
          cJSON_AddStringToObject(o, keys[k], vals[k]);
      if (d->when_ns > 0)
        cJSON_AddStringToObject(o, "when", when);
      cJSON_AddBoolToObject(o, "in_force", !ps_triage_revoked(&s, d));
      cJSON_AddItemToArray(arr, o);
    }
    ps_cmd_print_json(arr);
    cJSON_Delete(arr);
  } else {
    printf("%zu decision%s\n", s.n, s.n == 1 ? "" : "s");
    if (s.n)
      printf("%-13s %-8s %-20s %-12s %-12s %-30s %-20s %-8s %s\n", "ID", "ACTION", "WHEN",
             "WHO", "HOST", "RUN", "METRIC", "STATE", "REASON");
    for (size_t i = 0; i < s.n; i++) {
      const ps_triage_decision *d = &s.d[i];
      char when[24];
      when_text(d->when_ns, when);
      ps_visible_put(stdout, d->id, 13);
      printf(" %-8s %-20s ", ps_triage_action_name(d->action), when);
      ps_visible_put(stdout, d->who ? d->who : "-", 12);
      putchar(' ');
      ps_visible_put(stdout, d->host ? d->host : "*", 12);
      putchar(' ');
      ps_visible_put(stdout, d->action == PS_TRIAGE_UNDO ? d->revokes : d->run, 30);
      putchar(' ');
      ps_visible_put(stdout, d->metric ? d->metric : d->action == PS_TRIAGE_ACK ? "*" : "-", 20);
      printf(" %-8s ", d->action == PS_TRIAGE_UNDO ? "undo" : ps_triage_revoked(&s, d)
                                                                  ? "undone"
                                                                  : "in force");
      ps_visible_put(stdout, d->reason, 0);
      if (d->ticket) {
        fputs(" <", stdout);
        ps_visible_put(stdout, d->ticket, 0);
        putchar('>');
      }
      if (d->origin) {
        fputs(" [", stdout);
        ps_visible_put(stdout, d->origin, 0);
        putchar(']');
      }
      putchar('\n');
    }
  }
  ps_triage_set_free(&s);
  if (fflush(stdout) != 0)
    return PS_EXIT_SOFTWARE;
  return bad ? PS_EXIT_DATAERR : PS_EXIT_OK;
}

/* Undo only what exists and is in force, so a typo is said at once. */
static int check_undo(const ps_config *cfg, const char *undo_id) {
  ps_triage_set s;
  ps_triage_set_init(&s);
  long bad = 0;
  int code = read_all(cfg, &s, &bad);
  const ps_triage_decision *target = NULL;
  if (code == PS_EXIT_OK)
    target = ps_triage_find(&s, undo_id);
  if (code == PS_EXIT_OK && (!target || target->action == PS_TRIAGE_UNDO)) {
    fprintf(stderr, "perfship triage: undo: no decision has the id ");
    ps_visible_put(stderr, undo_id, 0);
    fprintf(stderr, " (see `perfship triage list`)\n");
    code = PS_EXIT_DATAERR;
  } else if (code == PS_EXIT_OK && ps_triage_revoked(&s, target)) {
    fputs("perfship triage: undo: ", stderr);
    ps_visible_put(stderr, target->id, 0);
    fputs(" is undone already\n", stderr);
    code = PS_EXIT_DATAERR;
  } else if (code == PS_EXIT_OK && target->origin) {
    fputs("perfship triage: undo: the decision is a line of ", stderr);
    ps_visible_put(stderr, target->origin, 0);
    fputs(": remove the line there too; until then this undo keeps it out of force\n", stderr);
  }
  ps_triage_set_free(&s);
  return code;
}

/* Writes decision `d` under its id and says so. */
static int write_decision(const ps_config *cfg, ps_triage_decision *d) {
  char id[14];
  ps_triage_id(d, 0, NULL, id);
  d->id = id;
  int code = post(cfg, d);
  /* after the write: "the decision is written" is said only when it is */
  if (code == PS_EXIT_OK && d->run)
    warn_unknown_run(cfg, d);
  if (code == PS_EXIT_OK) {
    printf("%s %s", ps_triage_action_name(d->action), id);
    if (d->run) {
      fputs(" run=", stdout);
      ps_visible_put(stdout, d->run, 0);
    }
    if (d->revokes) {
      fputs(" revokes=", stdout);
      ps_visible_put(stdout, d->revokes, 0);
    }
    puts("");
  }
  d->id = NULL; /* `id` was this call's */
  return code;
}

int ps_cmd_triage(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)cfg_given;
  if (argc < 2)
    return usage("say ack, exclude, baseline, list or undo");
  const char *verb = argv[1];
  int action = ps_triage_action_parse(verb);
  int is_list = strcmp(verb, "list") == 0;
  if (action < 0 && !is_list)
    return usage("say ack, exclude, baseline, list or undo");
  const char *run = NULL, *metric = NULL, *host = NULL, *reason = NULL, *ticket = NULL,
             *undo_id = NULL;
  int json = 0;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    int has = i + 1 < argc;
    if (is_list && !strcmp(a, "--json"))
      json = 1;
    else if (!is_list && action != PS_TRIAGE_UNDO && !strcmp(a, "--run") && has)
      run = argv[++i];
    else if (action == PS_TRIAGE_ACK && !strcmp(a, "--metric") && has)
      metric = argv[++i];
    else if (!is_list && action != PS_TRIAGE_UNDO && !strcmp(a, "--host") && has)
      host = argv[++i];
    else if (!is_list && !strcmp(a, "--reason") && has)
      reason = argv[++i];
    else if (action == PS_TRIAGE_ACK && !strcmp(a, "--ticket") && has)
      ticket = argv[++i];
    else if (action == PS_TRIAGE_UNDO && a[0] != '-' && !undo_id)
      undo_id = a;
    else
      return usage(a[0] == '-' ? "unknown option or missing value" : "unexpected operand");
  }
  int code = ps_cmd_load_secrets(cfg);
  if (code != PS_EXIT_OK)
    return code;
  if (is_list)
    return list(cfg, json);
  if (action == PS_TRIAGE_UNDO ? !undo_id || !undo_id[0] : !run || !run[0])
    return usage(action == PS_TRIAGE_UNDO ? "undo needs the ID `triage list` shows"
                                          : "--run R is required");
  if (action != PS_TRIAGE_UNDO && (!reason || !reason[0]))
    return usage("--reason TEXT is required: say why, for whoever looks next");
  if (ticket && strncmp(ticket, "https://", 8) != 0 && strncmp(ticket, "http://", 7) != 0)
    return usage("--ticket: not an http(s) URL");

  ps_triage_decision d = {.action = (ps_triage_action)action,
                          .run = (char *)run,
                          .metric = (char *)metric,
                          .host = (char *)host,
                          .who = (char *)who_am_i(),
                          .reason = (char *)reason,
                          .ticket = (char *)ticket,
                          .when_ns = now_ns()};
  if (action == PS_TRIAGE_UNDO) {
    code = check_undo(cfg, undo_id);
    if (code != PS_EXIT_OK)
      return code;
    d.revokes = (char *)undo_id;
    if (!d.reason)
      d.reason = (char *)"undone";
  }
  return write_decision(cfg, &d);
}
