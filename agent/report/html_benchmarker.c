/*
 * html_benchmarker.c: the benchmarker's section of the page (docs/report.md
 * "Benchmarker"): per configuration and load, each arm's newest curve
 * (measured steps, the fitted USL, latency) and its peak across reports.
 *
 * Design
 * - Drawn as inline SVG here, not by the page's script: the section reads
 *   the same without it, and each mark carries its arm, load and kind as
 *   attributes a person (or a test) can find.
 * - An arm's newest report is its newest fit; the steps that belong to it
 *   ended after the fit before it (a report's scenario runs its steps
 *   and is fitted at its last step's end). Marks: a filled dot a kept
 *   step, a hollow dot a step the fit discarded, a cross a step that went
 *   Unstable or never got stable (drawn at the floor when it has no
 *   throughput).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html_private.h"

#define W 460.0
#define H 240.0
#define PAD 40.0
#define MAX_ARMS 16

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                      "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

typedef struct arm {
  const ps_rb_bm_fit *fit; /* newest; NULL when none */
  const char *scenario, *name;
  int64_t after_ns; /* its steps ended after this */
} arm;

static int same_group(const ps_rb_bm_key *a, const ps_rb_bm_key *b) {
  if (strcmp(a->configuration, b->configuration) != 0 || !ps_report_same(a->host, b->host))
    return 0;
  if (a->load || b->load)
    return a->load && b->load && strcmp(a->load, b->load) == 0;
  return strcmp(a->scenario, b->scenario) == 0;
}

static int is_discarded(const ps_rb_bm_fit *f, double load) {
  const char *s = f ? f->discarded_loads : NULL;
  while (s && *s) {
    char *end;
    double v = strtod(s, &end);
    if (end == s)
      return 0;
    if (fabs(v - load) < 1e-9)
      return 1;
    s = *end == ',' ? end + 1 : end;
  }
  return 0;
}

static double usl(const ps_rb_bm_fit *f, double n) {
  return f->gamma * n / (1 + f->alpha * (n - 1) + f->beta * n * (n - 1));
}

/* The arms of the group of `key`: each scenario's newest fit. */
static size_t arms_of(const ps_rb_bm_data *b, const ps_rb_bm_key *key, arm *out) {
  size_t n = 0;
  for (size_t i = 0; i < b->nsteps + b->nfits; i++) {
    const ps_rb_bm_key *k = i < b->nsteps ? &b->steps[i].k : &b->fits[i - b->nsteps].k;
    if (!same_group(k, key))
      continue;
    size_t a = 0;
    while (a < n && strcmp(out[a].scenario, k->scenario) != 0)
      a++;
    if (a == n) {
      if (n == MAX_ARMS)
        continue;
      out[n++] = (arm){NULL, k->scenario, k->arm, INT64_MIN};
    }
    if (i >= b->nsteps) {
      const ps_rb_bm_fit *f = &b->fits[i - b->nsteps];
      if (!out[a].fit || f->time_ns > out[a].fit->time_ns)
        out[a].fit = f;
    }
  }
  for (size_t a = 0; a < n; a++)
    for (size_t i = 0; out[a].fit && i < b->nfits; i++)
      if (same_group(&b->fits[i].k, key) && strcmp(b->fits[i].k.scenario, out[a].scenario) == 0 &&
          b->fits[i].time_ns < out[a].fit->time_ns && b->fits[i].time_ns > out[a].after_ns)
        out[a].after_ns = b->fits[i].time_ns;
  return n;
}

static int step_of(const ps_rb_bm_step *s, const ps_rb_bm_key *key, const arm *a) {
  return same_group(&s->k, key) && strcmp(s->k.scenario, a->scenario) == 0 &&
         s->time_ns > a->after_ns && (!a->fit || s->time_ns <= a->fit->time_ns);
}

/* The largest load, throughput and latency the chart must hold. */
static void extent(const ps_rb_bm_data *b, const ps_rb_bm_key *key, const arm *arms, size_t n,
                   double *xmax, double *ymax, double *lmax) {
  *xmax = *ymax = *lmax = 0;
  for (size_t a = 0; a < n; a++)
    for (size_t i = 0; i < b->nsteps; i++) {
      const ps_rb_bm_step *s = &b->steps[i];
      if (!step_of(s, key, &arms[a]))
        continue;
      *xmax = fmax(*xmax, isnan(s->load_factor) ? 0 : s->load_factor);
      *ymax = fmax(*ymax, isnan(s->throughput) ? 0 : s->throughput);
      *lmax = fmax(*lmax, isnan(s->latency_mean_s) ? 0 : s->latency_mean_s);
    }
  for (size_t a = 0; a < n; a++)
    if (arms[a].fit && !isnan(arms[a].fit->x_n_star))
      *ymax = fmax(*ymax, fmin(arms[a].fit->x_n_star, 2 * *ymax));
  *xmax = *xmax > 0 ? *xmax * 1.05 : 1;
  *ymax = *ymax > 0 ? *ymax * 1.1 : 1;
  *lmax = *lmax > 0 ? *lmax * 1.1 : 1;
}

static double sx(double v, double xmax) { return PAD + v / xmax * (W - 2 * PAD); }
static double sy(double v, double ymax) { return H - PAD - v / ymax * (H - 2 * PAD); }

static void axes(page *p, const char *cls, const char *xlabel, const char *ylabel, double xmax,
                 double ymax) {
  putf(p, "<svg class=\"%s\" viewBox=\"0 0 %g %g\" width=\"%g\" height=\"%g\" role=\"img\">", cls,
       W, H, W, H);
  putf(p, "<path d=\"M%g %gV%gH%g\" stroke=\"#888\" fill=\"none\"/>", PAD, PAD, H - PAD, W - PAD);
  putf(p, "<text x=\"%g\" y=\"%g\" font-size=\"11\" text-anchor=\"end\">%s %g</text>", W - PAD,
       H - 8, xlabel, xmax);
  putf(p, "<text x=\"4\" y=\"%g\" font-size=\"11\">%s %.3g</text>", PAD - 8, ylabel, ymax);
}

static void mark(page *p, const ps_rb_bm_step *s, const arm *a, const char *colour, double x,
                 double y) {
  int completed = s->reason && strcmp(s->reason, "Completed") == 0;
  const char *kind = !completed                             ? "unstable"
                     : is_discarded(a->fit, s->load_factor) ? "discarded"
                                                            : "kept";
  put(p, "<g class=\"step ");
  put(p, kind);
  put(p, "\" data-scenario=\"");
  esc(p, a->scenario);
  put(p, "\" data-arm=\"");
  esc(p, a->name);
  putf(p, "\" data-load=\"%g\" data-reason=\"", s->load_factor);
  esc(p, s->reason ? s->reason : "");
  put(p, "\"><title>");
  esc(p, a->name);
  putf(p, ": load %g, %s</title>", s->load_factor, kind);
  if (!completed)
    putf(p, "<path d=\"M%g %gl8 8m0 -8l-8 8\" stroke=\"%s\" stroke-width=\"2\"/>", x - 4, y - 4,
         colour);
  else
    putf(p, "<circle cx=\"%g\" cy=\"%g\" r=\"4\" stroke=\"%s\" fill=\"%s\"/>", x, y, colour,
         strcmp(kind, "kept") == 0 ? colour : "white");
  put(p, "</g>");
}

static void throughput_chart(page *p, const ps_rb_bm_key *key, const arm *arms, size_t n) {
  const ps_rb_bm_data *b = &p->d->bm;
  double xmax, ymax, lmax;
  extent(b, key, arms, n, &xmax, &ymax, &lmax);
  axes(p, "bm-throughput", "load factor", "operations/s", xmax, ymax);
  for (size_t a = 0; a < n; a++) {
    const char *colour = colours[a % (sizeof colours / sizeof colours[0])];
    const ps_rb_bm_fit *f = arms[a].fit;
    if (f && !isnan(f->gamma) && !isnan(f->alpha) && !isnan(f->beta)) {
      put(p, "<path class=\"fit\" data-scenario=\"");
      esc(p, arms[a].scenario);
      put(p, "\" data-arm=\"");
      esc(p, arms[a].name);
      putf(p, "\" fill=\"none\" stroke=\"%s\" d=\"", colour);
      for (int i = 0; i <= 60; i++) {
        double nn = xmax * i / 60.0;
        putf(p, "%c%.1f %.1f", i ? 'L' : 'M', sx(nn, xmax), sy(fmin(usl(f, nn), ymax), ymax));
      }
      put(p, "\"/>");
    }
    for (size_t i = 0; i < b->nsteps; i++) {
      const ps_rb_bm_step *s = &b->steps[i];
      if (step_of(s, key, &arms[a]) && !isnan(s->load_factor))
        mark(p, s, &arms[a], colour, sx(s->load_factor, xmax),
             sy(isnan(s->throughput) ? 0 : s->throughput, ymax));
    }
  }
  put(p, "</svg>");
}

static void latency_chart(page *p, const ps_rb_bm_key *key, const arm *arms, size_t n) {
  const ps_rb_bm_data *b = &p->d->bm;
  double xmax, ymax, lmax;
  extent(b, key, arms, n, &xmax, &ymax, &lmax);
  axes(p, "bm-latency", "load factor", "mean latency s", xmax, lmax);
  for (size_t a = 0; a < n; a++) {
    const char *colour = colours[a % (sizeof colours / sizeof colours[0])];
    put(p, "<path class=\"latency\" data-scenario=\"");
    esc(p, arms[a].scenario);
    put(p, "\" data-arm=\"");
    esc(p, arms[a].name);
    putf(p, "\" fill=\"none\" stroke=\"%s\" d=\"", colour);
    int first = 1;
    for (size_t i = 0; i < b->nsteps; i++) {
      const ps_rb_bm_step *s = &b->steps[i];
      if (!step_of(s, key, &arms[a]) || isnan(s->latency_mean_s) || isnan(s->load_factor))
        continue;
      putf(p, "%c%.1f %.1f", first ? 'M' : 'L', sx(s->load_factor, xmax),
           sy(s->latency_mean_s, lmax));
      first = 0;
    }
    put(p, "\"/>");
  }
  put(p, "</svg>");
}

static int newest_first(const void *x, const void *y) {
  const ps_rb_bm_fit *a = *(const ps_rb_bm_fit *const *)x, *b = *(const ps_rb_bm_fit *const *)y;
  if (a->time_ns != b->time_ns)
    return a->time_ns > b->time_ns ? -1 : 1;
  return strcmp(a->k.scenario, b->k.scenario);
}

/* Every report's peak per arm, newest first: the capacity across releases. */
static void peaks(page *p, const ps_rb_bm_key *key) {
  const ps_rb_bm_data *b = &p->d->bm;
  const ps_rb_bm_fit **fits = malloc((b->nfits ? b->nfits : 1) * sizeof *fits);
  size_t n = 0;
  if (!fits) {
    p->rc = -ENOMEM;
    return;
  }
  for (size_t i = 0; i < b->nfits; i++)
    if (same_group(&b->fits[i].k, key))
      fits[n++] = &b->fits[i];
  qsort(fits, n, sizeof *fits, newest_first);
  put(p, "<table class=\"bm-peaks\"><thead><tr><th>Report (UTC)</th><th>Scenario</th><th>Arm</th>"
         "<th>Peak X(N*) ops/s</th><th>gamma</th></tr></thead><tbody>");
  for (size_t i = 0; i < n && !p->rc; i++) {
    put(p, "<tr><td class=\"when\">");
    ps_html_fmt_time(p, fits[i]->time_ns);
    put(p, "</td><td class=\"name\">");
    txt(p, fits[i]->k.scenario);
    put(p, "</td><td class=\"name\">");
    txt(p, fits[i]->k.arm);
    put(p, "</td><td class=\"num\">");
    ps_html_fmt_num(p, fits[i]->x_n_star);
    put(p, "</td><td class=\"num\">");
    ps_html_fmt_num(p, fits[i]->gamma);
    put(p, "</td></tr>");
  }
  put(p, "</tbody></table>\n");
  free(fits);
}

/* Whether the verdict is about an arm of the group across releases: its
 * series is "<configuration> / <scenario> / <arm>" (docs/schema.md). */
static int about_arm(const ps_rverdict *v, const ps_rb_bm_key *key, const arm *a) {
  size_t nc = strlen(key->configuration), ns = strlen(a->scenario);
  const char *s = v->series;
  return s && ps_report_same(v->host, key->host) && strncmp(s, key->configuration, nc) == 0 &&
         strncmp(s + nc, " / ", 3) == 0 && strncmp(s + nc + 3, a->scenario, ns) == 0 &&
         strncmp(s + nc + 3 + ns, " / ", 3) == 0 && strcmp(s + nc + 6 + ns, a->name) == 0;
}

/* What the verdicts across releases say of the reports' steps (a step
 * that went Unstable where the report before was stable), once per
 * report and scenario, oldest first as the verdicts come. */
static void step_notes(page *p, const ps_rb_bm_key *key, const arm *arms, size_t n) {
  const ps_report_data *d = p->d;
  const char *last = NULL;
  int any = 0;
  for (size_t i = 0; i < d->nverdicts; i++) {
    const ps_rverdict *v = &d->verdicts[i];
    int mine = 0;
    for (size_t a = 0; a < n && !mine && v->note && v->note[0]; a++)
      mine = about_arm(v, key, &arms[a]);
    if (!mine || (last && strcmp(last, v->run) == 0))
      continue;
    put(p, any++ ? "<li>" : "<ul class=\"bm-notes\"><li>");
    txt(p, v->run);
    put(p, ": ");
    txt(p, v->note);
    put(p, "</li>");
    last = v->run;
  }
  if (any)
    put(p, "</ul>");
}

static void group(page *p, const ps_rb_bm_key *key) {
  arm arms[MAX_ARMS];
  size_t n = arms_of(&p->d->bm, key, arms);
  put(p, "<div class=\"bm-group\" data-configuration=\"");
  esc(p, key->configuration);
  put(p, "\" data-load=\"");
  esc(p, key->load ? key->load : key->scenario);
  put(p, "\"><h3>");
  txt(p, key->configuration);
  put(p, " · ");
  txt(p, key->load ? key->load : key->scenario);
  if (key->host) {
    put(p, " <span class=\"meta\">on ");
    txt(p, key->host);
    put(p, "</span>");
  }
  put(p, "</h3><ul class=\"bm-arms\">");
  for (size_t a = 0; a < n; a++) {
    putf(p, "<li style=\"color:%s\" data-scenario=\"",
         colours[a % (sizeof colours / sizeof colours[0])]);
    esc(p, arms[a].scenario);
    put(p, "\" data-arm=\"");
    esc(p, arms[a].name);
    put(p, "\">\u25cf ");
    txt(p, arms[a].scenario);
    put(p, " (");
    txt(p, arms[a].name);
    put(p, ")</li>");
  }
  put(p, "</ul><p class=\"note\">Newest report of each arm: \u25cf a step the fit kept, \u25cb one "
         "it discarded, \u00d7 a step that went Unstable or never got stable; the line is the "
         "fitted USL.</p>");
  throughput_chart(p, key, arms, n);
  latency_chart(p, key, arms, n);
  peaks(p, key);
  step_notes(p, key, arms, n);
  put(p, "</div>\n");
}

void ps_html_section_benchmarker(page *p) {
  const ps_rb_bm_data *b = &p->d->bm;
  putf(p, "<section id=\"benchmarker\"><h2>Benchmarker</h2>\n");
  if (!ps_report_shows(p->d, "benchmarker")) {
    put(p, "<p class=\"empty\">Benchmarker reports are not part of this page (--source).</p>"
           "</section>\n");
    return;
  }
  if (!b->nsteps && !b->nfits) {
    put(p, "<p class=\"empty\">No benchmarker report in this range.</p></section>\n");
    return;
  }
  for (size_t i = 0; i < b->nsteps + b->nfits && !p->rc; i++) {
    const ps_rb_bm_key *k = i < b->nsteps ? &b->steps[i].k : &b->fits[i - b->nsteps].k;
    int seen = 0; /* each group once, where it first appears */
    for (size_t j = 0; j < i && !seen; j++)
      seen = same_group(j < b->nsteps ? &b->steps[j].k : &b->fits[j - b->nsteps].k, k);
    if (!seen)
      group(p, k);
  }
  put(p, "</section>\n");
}
