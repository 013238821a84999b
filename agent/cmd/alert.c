/*
 * cmd/alert.c: `perfship alert test [--event E]`: one sample event through
 * every configured channel (alerts.exec, alerts.webhook), and what each
 * answered, so a user can check the wiring before a night's run
 * (docs/alerts.md "Checking the wiring").
 *
 * Exit codes: 0 every channel delivered it; 69 one did not; 64 usage; 78
 * no channel is configured, or the webhook's url_file cannot be read.
 * Nothing is written to InfluxDB and nothing to the state: a test event is
 * not an alert in the history.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "alert/dispatch.h"
#include "alert/event.h"
#include "alert/exec.h"
#include "alert/webhook.h"
#include "cmd/cmd.h"
#include "core/figures.h"
#include "core/sysexits_ps.h"

typedef struct probe {
  const char *channel;
  const char *label;
  int done, delivered;
  char text[sizeof(((ps_alert_answer *)0)->text)];
} probe;

static void on_answer(void *arg, const ps_alert_answer *a) {
  probe *p = arg;
  p->done = 1;
  p->delivered = a->delivered;
  snprintf(p->text, sizeof p->text, "%s", a->text);
}

static int usage(const char *why) {
  fprintf(stderr, "perfship alert: %s (usage: perfship alert test [--event EVENT])\n", why);
  return PS_EXIT_USAGE;
}

static int build_event(ps_alert_event *ev, ps_alert_kind kind, const ps_config *cfg) {
  ps_alert_event_init(ev, kind);
  char host[256] = "";
  for (size_t i = 0; i < cfg->ntags; i++)
    if (strcmp(cfg->tags[i].key, "host") == 0)
      snprintf(host, sizeof host, "%s", cfg->tags[i].value);
  if (!host[0] && gethostname(host, sizeof host - 1) < 0)
    snprintf(host, sizeof host, "unknown");
  ev->time_ns = ps_alert_now_ms() * 1000000LL;
  char text[512];
  snprintf(text, sizeof text,
           "perfship alert test from %s: a sample %s event; nothing happened", host,
           ps_alert_kind_name(kind));
  /* Each test is a new event: a receiver that drops repeated ids keeps it. */
  ps_alert_id(ev->id, kind, host, "perfship", "perfship-alert-test", ev->time_ns);
  if (ps_alert_set(&ev->host, host) || ps_alert_set(&ev->source, "perfship") ||
      ps_alert_set(&ev->run, "perfship-alert-test") || ps_alert_set(&ev->status, "test") ||
      ps_alert_set(&ev->text, text))
    return -ENOMEM;
  if (kind == PS_ALERT_REGRESSION || kind == PS_ALERT_IMPROVEMENT) {
    /* the first headline figure; the event copies it */
    ps_alert_metric m = {.metric = (char *)ps_figures[0].name, .improvement = kind == PS_ALERT_IMPROVEMENT,
                         .have_value = 1, .have_baseline = 1, .have_change_pct = 1,
                         .value = kind == PS_ALERT_IMPROVEMENT ? 21.2 : 27.8, .baseline = 24.33};
    m.change_pct = (m.value - m.baseline) / m.baseline * 100.0;
    return ps_alert_event_add_metric(ev, &m);
  }
  return 0;
}

/* `alert test [--event NAME]`: which event to send; PS_EXIT_OK or the
 * usage status (said). */
static int parse_args(int argc, char **argv, ps_alert_kind *kind) {
  if (argc < 2 || strcmp(argv[1], "test") != 0)
    return usage(argc < 2 ? "which action? only 'test' exists" : "unknown action");
  for (int i = 2; i < argc; i++) {
    const char *name = NULL;
    if (!strcmp(argv[i], "--event") && i + 1 < argc)
      name = argv[++i];
    else if (!strncmp(argv[i], "--event=", 8))
      name = argv[i] + 8;
    else
      return usage("unknown option");
    if (ps_alert_kind_from_name(name, kind) < 0) {
      fprintf(stderr, "perfship alert test: '%s' is not an event; use run_failed, "
                      "run_interrupted, run_stalled, run_recovered, no_new_run, regression, "
                      "improvement, agent_unhealthy or agent_recovered\n",
              name);
      return PS_EXIT_USAGE;
    }
  }
  return PS_EXIT_OK;
}

/* The event sent on each configured channel (exec, `url`'s webhook), a
 * probe per channel in `probes`; how many. */
static size_t start_channels(uv_loop_t *loop, const ps_config *cfg, const char *url,
                             ps_alert_event *ev, probe probes[2], ps_alert_exec **x,
                             ps_alert_webhook **w) {
  size_t n = 0;
  if (cfg->alerts.nexec) {
    probes[n] = (probe){"exec", cfg->alerts.exec[0], 0, 0, ""};
    int rc = ps_alert_exec_new(x, loop, cfg->alerts.exec, cfg->alerts.nexec,
                               cfg->alerts.exec_timeout_ms);
    if (rc == 0)
      rc = ps_alert_exec_send(*x, ev, on_answer, &probes[n]);
    if (rc < 0) {
      probes[n].done = 1;
      snprintf(probes[n].text, sizeof probes[n].text, "cannot start: %s", strerror(-rc));
    }
    n++;
  }
  if (url) {
    probes[n] = (probe){"webhook", "", 0, 0, ""}; /* its answer names the host */
    int rc = ps_alert_webhook_new(w, loop, url, cfg->alerts.webhook.tls_ca_file,
                                  cfg->alerts.webhook.format, cfg->alerts.webhook.timeout_ms);
    if (rc == 0)
      rc = ps_alert_webhook_send(*w, ev, on_answer, &probes[n]);
    if (rc < 0) {
      probes[n].done = 1;
      snprintf(probes[n].text, sizeof probes[n].text, "cannot send: %s", strerror(-rc));
    }
    n++;
  }
  return n;
}

/* Waits for every channel's answer (each bounds its own time:
 * exec_timeout_ms, webhook.timeout_ms) and says them; whether one was not
 * delivered. */
static int await_answers(uv_loop_t *loop, const probe *probes, size_t n, ps_alert_exec *x,
                         ps_alert_webhook *w) {
  for (;;) {
    int all = 1;
    for (size_t i = 0; i < n; i++)
      all &= probes[i].done;
    if (all || uv_run(loop, UV_RUN_ONCE) == 0)
      break;
  }
  ps_alert_exec_close(x);
  ps_alert_webhook_close(w);
  uv_run(loop, UV_RUN_DEFAULT);
  uv_loop_close(loop);
  int failed = 0;
  for (size_t i = 0; i < n; i++) {
    printf("%s%s%s: %s: %s\n", probes[i].channel, probes[i].label[0] ? " " : "",
           probes[i].label,
           probes[i].delivered ? "delivered" : "NOT delivered",
           probes[i].text[0] ? probes[i].text : "no answer");
    failed |= !probes[i].delivered;
  }
  return failed;
}

int ps_cmd_alert(int argc, char **argv, ps_config *cfg, int cfg_given) {
  (void)cfg_given;
  ps_alert_kind kind = PS_ALERT_RUN_FAILED;
  int rc = parse_args(argc, argv, &kind);
  if (rc != PS_EXIT_OK)
    return rc;
  ps_buf err;
  ps_buf_init(&err, 4096);
  rc = ps_config_load_alert_secrets(cfg, &err);
  if (rc < 0) {
    fprintf(stderr, "perfship: %s\n", err.data ? err.data : "cannot read the webhook's URL");
    ps_buf_free(&err);
    return PS_EXIT_CONFIG;
  }
  ps_buf_free(&err);
  const char *url = ps_config_webhook_url(cfg);
  if (!cfg->alerts.nexec && !url) {
    fprintf(stderr,
            "perfship alert test: no alert channel is configured (alerts.exec, "
            "alerts.webhook in %s); nothing to test\n",
            cfg->file ? cfg->file : "the configuration");
    return PS_EXIT_CONFIG;
  }
  ps_alert_event ev;
  if (build_event(&ev, kind, cfg) < 0) {
    ps_alert_event_free(&ev);
    return PS_EXIT_SOFTWARE;
  }
  uv_loop_t loop;
  uv_loop_init(&loop);
  ps_alert_exec *x = NULL;
  ps_alert_webhook *w = NULL;
  probe probes[2];
  size_t n = start_channels(&loop, cfg, url, &ev, probes, &x, &w);
  printf("sending a sample %s event (id %s)\n", ps_alert_kind_name(kind), ev.id);
  fflush(stdout);
  int failed = await_answers(&loop, probes, n, x, w);
  ps_alert_event_free(&ev);
  return failed ? PS_EXIT_UNAVAILABLE : PS_EXIT_OK;
}
