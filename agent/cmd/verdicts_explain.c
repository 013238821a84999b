/*
 * verdicts_explain.c: `perfship verdicts --explain RUN`: why a run got
 * slower, read back from the server (readback/explain.h; docs/verdicts.md,
 * "Why it got slower"). Every name from the data is shown with its
 * controls escaped (core/visible.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cmd/cmd.h"
#include "core/buf.h"
#include "core/figures.h"
#include "core/sysexits_ps.h"
#include "core/visible.h"
#include "readback/explain.h"

static void explain_json(const ps_explain_data *d) {
  const ps_explanation *e = &d->e;
  cJSON *o = cJSON_CreateObject(), *vats = cJSON_CreateArray(), *g = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "run", d->run);
  cJSON_AddStringToObject(o, "host", d->host ? d->host : "");
  cJSON_AddStringToObject(o, "series", d->series ? d->series : "");
  if (d->regressed)
    cJSON_AddStringToObject(o, "regression", d->regressed);
  if (d->change_run)
    cJSON_AddStringToObject(o, "change_run", d->change_run);
  cJSON_AddNumberToObject(o, "old_runs", (double)e->old_runs);
  for (size_t i = 0; i < e->ntop; i++) {
    cJSON *v = cJSON_CreateObject();
    cJSON_AddStringToObject(v, "vat", e->top[i].vat);
    cJSON_AddStringToObject(v, "name", e->top[i].name);
    cJSON_AddNumberToObject(v, "then", e->top[i].then);
    cJSON_AddNumberToObject(v, "now", e->top[i].now);
    cJSON_AddNumberToObject(v, "change", e->top[i].now - e->top[i].then);
    cJSON_AddItemToArray(vats, v);
  }
  cJSON_AddItemToObject(o, "vats", vats);
  if (isfinite(e->boyd_then))
    cJSON_AddNumberToObject(o, "boydShareThen", e->boyd_then);
  if (isfinite(e->boyd_now))
    cJSON_AddNumberToObject(o, "boydShareNow", e->boyd_now);
  for (int i = 0; i < PS_GROWTH_NFIGURES; i++)
    if (isfinite(e->growth[i]))
      cJSON_AddNumberToObject(g, ps_growth_figure((ps_growth_figure_id)i)->name, e->growth[i]);
  cJSON_AddItemToObject(o, "growth", g);
  ps_cmd_print_json(o);
  cJSON_Delete(o);
}

/* `--explain RUN`: its cause, read back (readback/explain.h). */
int ps_cmd_verdicts_explain(ps_config *cfg, const char *run, const char *host, int64_t since_s,
                   int json) {
  ps_explain_data d;
  ps_buf err, text;
  ps_buf_init(&err, 2048);
  ps_buf_init(&text, 0);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  ps_rb_explain_data_init(&d, run, host, since_s * 1000000000LL,
                          (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
  int rc = ps_rb_explain_query(cfg, &d, &err);
  if (rc == -ENOENT && !err.len) { /* with words: the database is missing */
    fprintf(stderr, "perfship verdicts: no loadgen run ");
    ps_visible_put(stderr, run, 0);
    fprintf(stderr, " in the last %" PRId64 " s\n", since_s);
    rc = PS_EXIT_UNAVAILABLE;
  } else if (rc < 0) {
    ps_visible_say(stderr, "perfship verdicts: %s\n", err.data ? err.data : strerror(-rc));
    rc = PS_EXIT_UNAVAILABLE;
  } else if (json) {
    explain_json(&d);
    rc = PS_EXIT_OK;
  } else {
    ps_visible_put(stdout, d.run, 0);
    fputs(" on ", stdout);
    ps_visible_put(stdout, d.host ? d.host : "?", 0);
    fputs(" (series ", stdout);
    ps_visible_put(stdout, d.series ? d.series : "?", 0);
    fputs("): ", stdout);
    if (d.regressed) {
      fputs("regression of ", stdout);
      ps_visible_put(stdout, d.regressed, 0);
      if (d.change_run && strcmp(d.change_run, d.run) != 0) {
        fputs(", the change began in ", stdout);
        ps_visible_put(stdout, d.change_run, 0);
      }
    } else {
      fputs("no regression of its time in the chain; against the runs before it", stdout);
    }
    putchar('\n');
    rc = ps_explain_text(&d.e, &text) < 0 ? PS_EXIT_SOFTWARE : PS_EXIT_OK;
    /* line by line: a vat's name is shown with its controls escaped */
    for (char *line = text.data, *nl; rc == PS_EXIT_OK && line && *line; line = nl ? nl + 1 : NULL) {
      nl = strchr(line, '\n');
      if (nl)
        *nl = '\0';
      ps_visible_put(stdout, line, 0);
      putchar('\n');
    }
    if (rc == PS_EXIT_OK && fflush(stdout) != 0)
      rc = PS_EXIT_SOFTWARE;
  }
  ps_rb_explain_data_free(&d);
  ps_buf_free(&err);
  ps_buf_free(&text);
  return rc;
}
