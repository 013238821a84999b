/*
 * config_verdicts.c: verdicts.metrics (docs/verdicts.md), whose members are
 * not keys of a table but the loadgen_run fields a verdict judges, each a
 * group of the per-metric keys (config_keys.c); and the check between
 * verdicts' own keys.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "config_private.h"
#include "core/figures.h"
#include "core/util.h"

/* The run figures a verdict can judge across revisions: the run rows of
 * the figures table and the growth rows (core/figures.h), as a key table, so that a misspelt metric gets
 * the same suggestion as a misspelt key. Filled once; the same every time. */
static const ps_cfg_key *verdict_metric_fields(void) {
  static ps_cfg_key fields[64];
  if (!fields[0].name) {
    size_t n = 0;
    for (size_t i = 0; i < ps_nfigures && n + 1 < sizeof fields / sizeof fields[0]; i++)
      if (ps_figures[i].scope == PS_FIG_RUN || ps_figures[i].scope == PS_FIG_GROWTH ||
          ps_figures[i].scope == PS_FIG_BENCHMARKER)
        fields[n++].name = ps_figures[i].name;
  }
  return fields;
}

void ps_cfg_verdict_metrics_defaults(const ps_cfg_key *k, void *base) {
  ps_verdicts_cfg *v = (ps_verdicts_cfg *)((char *)base + k->offset);
  v->metrics = NULL;
  v->nmetrics = 0;
  /* The headline figures, the kernel growth per cycle and the
   * benchmarker's fit, with their defaults (core/figures.h). */
  size_t n = PS_FIGURES_NHEADLINE + PS_GROWTH_NFIGURES + PS_BENCHMARKER_NFIGURES;
  v->metrics = calloc(n, sizeof *v->metrics);
  for (size_t i = 0; v->metrics && i < ps_nfigures; i++) {
    if (i >= PS_FIGURES_NHEADLINE && ps_figures[i].scope != PS_FIG_GROWTH &&
        ps_figures[i].scope != PS_FIG_BENCHMARKER)
      continue;
    ps_verdict_metric_cfg *m = &v->metrics[v->nmetrics];
    m->name = strdup(ps_figures[i].name);
    if (!m->name)
      break;
    m->worse = ps_figures[i].worse;
    m->min_change = ps_figures[i].min_change;
    m->unit = ps_figures[i].change_unit;
    m->enabled = 1;
    v->nmetrics++;
  }
}

void ps_cfg_verdict_metrics_free(const ps_cfg_key *k, void *base) {
  ps_verdicts_cfg *v = (ps_verdicts_cfg *)((char *)base + k->offset);
  for (size_t i = 0; v->metrics && i < v->nmetrics; i++)
    free(v->metrics[i].name);
  free(v->metrics);
  v->metrics = NULL;
  v->nmetrics = 0;
}

const ps_verdict_metric_cfg *ps_verdict_metric_find(const ps_verdicts_cfg *v,
                                                    const char *name) {
  for (size_t i = 0; v && name && i < v->nmetrics; i++)
    if (strcmp(v->metrics[i].name, name) == 0)
      return &v->metrics[i];
  return NULL;
}

/* verdicts.metrics = { NAME = { ... }; ... }: a name among the defaults
 * changes only the keys given; another loadgen_run field is added, and must
 * then say which direction is worse. */
int ps_cfg_apply_verdict_metrics(ps_cfg_loader *L, const config_setting_t *s,
                                 const ps_cfg_key *k, const char *key, void *base) {
  if (config_setting_type(s) != CONFIG_TYPE_GROUP)
    return ps_cfg_fail(L, s, "key '%s': expected %s, e.g. metrics = { cycleAvgDuration = { "
                       "min_change = 8.0; }; };, got %s", key, k->doc,
                       ps_cfg_type_word(config_setting_type(s)));
  ps_verdicts_cfg *v = (ps_verdicts_cfg *)((char *)base + k->offset);
  for (int i = 0; i < config_setting_length(s); i++) {
    const config_setting_t *g = config_setting_get_elem(s, (unsigned)i);
    const char *name = config_setting_name(g);
    ps_buf where;
    ps_buf_init(&where, 0);
    ps_buf_printf(&where, "%s.%s", key, name);
    const char *w = where.data ? where.data : name;
    int rc = 0;
    ps_verdict_metric_cfg *m = (ps_verdict_metric_cfg *)ps_verdict_metric_find(v, name);
    const ps_cfg_key *field = verdict_metric_fields();
    while (field->name && strcmp(field->name, name) != 0)
      field++;
    if (!field->name) {
      const char *near = ps_cfg_nearest_key(verdict_metric_fields(), name);
      if (near)
        rc = ps_cfg_fail(L, g, "key '%s': '%s' is not a run figure a verdict can "
                         "judge; did you mean '%s'?", w, name, near);
      else
        rc = ps_cfg_fail(L, g, "key '%s': '%s' is not a run figure a verdict can "
                         "judge; use one of the numeric loadgen_run fields of docs/schema.md "
                         "(e.g. live_avgLag) or a growth per cycle (e.g. kernelObjectsPerCycle)", w, name);
    } else if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
      rc = ps_cfg_fail(L, g, "key '%s': expected a group, e.g. %s = { worse = \"higher\"; "
                       "min_change = 5.0; };, got %s", w, name,
                       ps_cfg_type_word(config_setting_type(g)));
    } else if (!m && !config_setting_get_member(g, "worse")) {
      rc = ps_cfg_fail(L, g, "key '%s': %s is not judged by default, so say which "
                       "direction is a regression: add worse = \"higher\"; or worse = "
                       "\"lower\";", w, name);
    } else if (!m) {
      ps_verdict_metric_cfg *grown =
          realloc(v->metrics, (v->nmetrics + 1) * sizeof *v->metrics);
      if (!grown) {
        rc = ps_cfg_fail(L, g, "out of memory");
      } else {
        v->metrics = grown;
        m = &v->metrics[v->nmetrics];
        memset(m, 0, sizeof *m);
        m->name = strdup(name);
        ps_cfg_defaults(k->sub, m);
        if (m->name)
          v->nmetrics++;
        else
          rc = ps_cfg_fail(L, g, "out of memory");
      }
    }
    if (!rc)
      rc = ps_cfg_walk_group(L, g, k->sub, m, w);
    ps_buf_free(&where);
    if (rc)
      return rc;
  }
  return 0;
}

static size_t count_of(const char *s, const char *word) {
  size_t n = 0;
  for (const char *p = s; (p = strstr(p, word)); p += strlen(word))
    n++;
  return n;
}

/* The link goes into web pages, chat messages and the terminal: a
 * javascript: or data: URL there would run in the reader's browser, a
 * control would drive the terminal, and a template of 10,000 {good}s made
 * pages of 100 MB (docs/verdicts.md, "The revision range"). */
static int check_compare_url(ps_cfg_loader *L, const config_setting_t *root, const char *u) {
  if (!u || !u[0])
    return 0;
  const config_setting_t *verdicts = config_setting_get_member(root, "verdicts");
  const config_setting_t *at = verdicts ? config_setting_get_member(verdicts, "compare_url") : NULL;
  if (!at)
    at = verdicts;
  size_t len = strlen(u);
  if (len > PS_COMPARE_URL_TEMPLATE_MAX)
    return ps_cfg_fail(L, at,
                       "key 'verdicts.compare_url': %zu bytes, more than the %d a "
                       "link template may have",
                       len, PS_COMPARE_URL_TEMPLATE_MAX);
  for (const unsigned char *p = (const unsigned char *)u; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      return ps_cfg_fail(L, at,
                         "key 'verdicts.compare_url': holds the control character "
                         "\\u%04x at byte %zu; a URL has none",
                         *p, (size_t)(p - (const unsigned char *)u) + 1);
  size_t places = count_of(u, "{good}") + count_of(u, "{bad}");
  if (places > PS_COMPARE_URL_PLACEHOLDERS)
    return ps_cfg_fail(L, at,
                       "key 'verdicts.compare_url': %zu placeholders, more than %d; "
                       "say {good} and {bad} once each",
                       places, PS_COMPARE_URL_PLACEHOLDERS);
  if ((strncmp(u, "http://", 7) && strncmp(u, "https://", 8)) || !strstr(u, "{good}") ||
      !strstr(u, "{bad}") || strpbrk(u, " \"'<>\\"))
    return ps_cfg_fail(L, at,
                       "key 'verdicts.compare_url': \"%s\" is not an http:// or https:// URL "
                       "with {good} and {bad} and no spaces, quotes or angle brackets, e.g. "
                       "\"https://github.com/Agoric/agoric-sdk/compare/{good}...{bad}\"",
                       u);
  return 0;
}

int ps_cfg_check_verdicts(ps_cfg_loader *L, const config_setting_t *root) {
  const ps_verdicts_cfg *v = &L->c->verdicts;
  if (v->window_runs < v->min_runs)
    return ps_cfg_fail(L, config_setting_get_member(root, "verdicts"),
                       "key 'verdicts.window_runs': %lld is less than verdicts.min_runs "
                       "(%lld), so no run would ever get a verdict; raise window_runs or "
                       "lower min_runs", (long long)v->window_runs, (long long)v->min_runs);
  int rc = check_compare_url(L, root, v->compare_url);
  if (rc)
    return rc;
  const char *against = v->candidates.against ? v->candidates.against : "";
  if (v->candidates.nseries && !against[0])
    return ps_cfg_fail(L, config_setting_get_member(root, "verdicts"),
                       "key 'verdicts.candidates.against': is empty but candidates.series is "
                       "set; name the series they are judged against, e.g. against = "
                       "\"daily-perf\";");
  for (size_t i = 0; i < v->candidates.nseries; i++)
    if (!strcmp(v->candidates.series[i], against))
      return ps_cfg_fail(L, config_setting_get_member(root, "verdicts"),
                         "key 'verdicts.candidates.series': \"%s\" is also the series "
                         "they are judged against; a series is not its own candidate",
                         against);
  return 0;
}
