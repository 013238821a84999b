/*
 * report/html.c: the report page (include/report/html.h) around its
 * sections, and its Content-Security-Policy. The parts of the writer are
 * listed in html_private.h.
 *
 * DESIGN
 * - Everything a person reads (the newest run's verdict, the tables, the
 *   health line) is written as HTML (html_sections.c), so the page reads
 *   without scripts, in print and in a mail client's preview. Only the
 *   charts need the page's script; their numbers go into one JSON block of
 *   type application/json (html_charts.c), which the browser never runs,
 *   and the script reads it with JSON.parse.
 * - Data reaches the page in exactly two ways: ps_html_escape() for HTML
 *   and ps_json_string() for the JSON block (which writes no '<' at all,
 *   so nothing in it can end its element). The Content-Security-Policy
 *   allows the two inline scripts by their SHA-256 and the style by its
 *   own: had an escape been missed, an injected handler or script would
 *   still not run, and no request of any kind leaves the page.
 * - Sizes: a year of nightly runs and a hundred DSS files make a page of a
 *   few megabytes at most (docs/benchmarks.md); lookups are linear scans
 *   over the model, which stays in the thousands of rows.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "core/sha256.h"
#include "html_private.h"
#include "report/assets.h"
#include "report/html.h"

static void csp_hash(page *p, const char *text, size_t len) {
  char b64[PS_SHA256_B64_LEN + 1];
  ps_sha256_base64(text, len, b64);
  putf(p, " 'sha256-%s'", b64);
}

/* The newest run of each machine (and its newest ended one while it
 * runs): one machine's night never hides another's. */
static void headlines_runs(page *p) {
  const ps_report_data *d = p->d;
  const char *hosts[MAX_HOSTS];
  size_t nh = ps_html_run_hosts(d, hosts, MAX_HOSTS);
  for (size_t h = 0; h < nh; h++) {
    char id[40], ended[40];
    snprintf(id, sizeof id, h ? "headline-loadgen-%zu" : "headline-loadgen", h);
    snprintf(ended, sizeof ended, h ? "headline-ended-%zu" : "headline-ended", h);
    size_t i = 0;
    while (i < d->nruns && !same_host(d->runs[i].host, hosts[h]))
      i++;
    if (i == d->nruns)
      continue;
    ps_html_headline_run(p, &d->runs[i], "Newest run", id);
    if (d->runs[i].status != PS_RS_RUNNING)
      continue;
    for (size_t k = i + 1; k < d->nruns; k++)
      if (same_host(d->runs[k].host, hosts[h]) && d->runs[k].status != PS_RS_RUNNING &&
          d->runs[k].status != PS_RS_UNKNOWN) {
        ps_html_headline_run(p, &d->runs[k], "Newest ended run", ended);
        break;
      }
  }
}

int ps_report_render(const ps_report_data *d, const ps_report_assets *a, ps_buf *out) {
  if (!a->chart_js || !ps_report_script_ok(a->chart_js, a->chart_js_len) ||
      !ps_report_script_ok(ps_report_page_js, ps_report_page_js_len) ||
      !ps_report_script_ok(ps_report_page_css, ps_report_page_css_len))
    return -EINVAL;
  page p = {.out = out, .d = d};
  ps_html_prepare(&p);
  put(&p, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
  /* No fetch of any kind; only these two scripts and this style. The JSON
   * block is data (type application/json) and needs no allowance. */
  put(&p, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "script-src");
  csp_hash(&p, a->chart_js, a->chart_js_len);
  csp_hash(&p, ps_report_page_js, ps_report_page_js_len);
  put(&p, "; style-src");
  csp_hash(&p, ps_report_page_css, ps_report_page_css_len);
  put(&p, "; img-src data:; base-uri 'none'; form-action 'none'\">\n");
  put(&p, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"referrer\" content=\"no-referrer\">\n<title>Benchmark report · ");
  ps_html_fmt_time(&p, d->now_ns);
  put(&p, " UTC</title>\n<style>");
  putn(&p, ps_report_page_css, ps_report_page_css_len);
  put(&p, "</style>\n</head>\n<body>\n<header>\n<h1>Benchmark report</h1>\n<p class=\"meta\">");
  put(&p, "Made ");
  ps_html_fmt_time(&p, d->now_ns);
  put(&p, " UTC");
  if (a->database) {
    put(&p, " from InfluxDB database ");
    txt(&p, a->database);
  }
  put(&p, " · runs since ");
  ps_html_fmt_time(&p, d->since_ns);
  put(&p, " UTC");
  if (d->source) {
    put(&p, " · source ");
    txt(&p, d->source);
    put(&p, " only");
  }
  put(&p, "</p>\n");
  if (d->nruns) {
    headlines_runs(&p);
  } else if (ps_report_shows(d, "loadgen")) {
    put(&p, "<div class=\"headline\" id=\"headline-loadgen\">No loadgen run in this range."
            "</div>\n");
  }
  ps_html_headline_dss(&p);
  put(&p, "<nav><a href=\"#runs\">Runs</a><a href=\"#trends\">Across revisions</a>"
          "<a href=\"#stages\">Stage against stage</a><a href=\"#dss\">DSS bench</a>"
          "<a href=\"#benchmarker\">Benchmarker</a>"
          "<a href=\"#health\">Agent health</a></nav>\n</header>\n<main>\n");
  ps_html_section_runs(&p);
  ps_html_section_trends(&p);
  ps_html_section_stages(&p);
  ps_html_section_dss(&p);
  ps_html_section_benchmarker(&p);
  ps_html_section_health(&p);
  put(&p, "</main>\n<footer>Written by ");
  txt(&p, a->generator ? a->generator : "perfship");
  put(&p, " (perfship report). This file is complete by itself: it loads nothing and sends "
          "nothing. Times are UTC.</footer>\n");
  put(&p, "<script type=\"application/json\" id=\"perfship-data\">");
  ps_html_json_all(&p);
  put(&p, "</script>\n<script>");
  putn(&p, a->chart_js, a->chart_js_len);
  put(&p, "</script>\n<script>");
  putn(&p, ps_report_page_js, ps_report_page_js_len);
  put(&p, "</script>\n</body>\n</html>\n");
  ps_html_release(&p);
  return p.rc;
}
