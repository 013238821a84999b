/*
 * fuzz_report.c: the report's reading of InfluxDB answers and its page
 * writer (agent/report/query.c, agent/report/html.c).
 *
 * Input: a byte choosing the statement (report/query.h PS_RQ_*, modulo
 * their count and one more: the benchmarker's steps and fits,
 * readback/benchmarker.h, drawn in the page's SVG), then the answer's
 * text (tests/fuzz/corpus/report/ holds answers of a real 1.6.7 to each
 * of the report's statements; 9-benchmarker is written in their shape).
 * Properties: any answer is read without a crash or a leak; the page
 * written from whatever it yielded has exactly three script elements (no
 * data opened another), its JSON block holds no '<' (so nothing in it can
 * end the element), and no raw '<' of the data reaches the HTML outside
 * the markup the writer itself produces, which the first two imply for the
 * scripts and the check of every "<" below for the rest.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/html.h"
#include "report/model.h"
#include "report/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every '<' in the page opens one of the writer's own tags. */
static int known_tag(const char *p) {
  static const char *const tags[] = {
      "<!DOCTYPE", "<html",    "</html",    "<head",    "</head",      "<meta",        "<title",
      "</title",   "<style",   "</style",   "<body",    "</body",      "<header",      "</header",
      "<h1",       "</h1",     "<h2",       "</h2",     "<h3",         "</h3",         "<h4",
      "</h4",      "<p",       "</p",       "<div",     "</div",       "<span",        "</span",
      "<nav",      "</nav",    "<a ",       "</a",      "<main",       "</main",       "<section",
      "</section", "<table",   "</table",   "<thead",   "</thead",     "<tbody",       "</tbody",
      "<tr",       "</tr",     "<th",       "</th",     "<td",         "</td",         "<br>",
      "<b>",       "</b>",     "<figure",   "</figure", "<figcaption", "</figcaption", "<canvas",
      "</canvas",  "<details", "</details", "<summary", "</summary",   "<footer",      "</footer",
      "<script",   "</script", "<bdi>",     "</bdi>",   "<svg",        "</svg",        "<path",
      "<circle",   "<g ",      "</g>",      "<text",    "</text",      "<ul",          "</ul",
      "<li",       "</li"};
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
    if (strncmp(p, tags[i], strlen(tags[i])) == 0)
      return 1;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  ps_report_data d;
  ps_report_data_init(&d, 1800000000000000000LL, 1600000000000000000LL, NULL);
  int statement = data[0] % (PS_REPORT_NSTATEMENTS + 1);
  if (statement == PS_REPORT_NSTATEMENTS) {
    /* not an answer is said (-EPROTO), never a crash */
    int rc = ps_rb_benchmarker_parse(&d.bm, (const char *)data + 1, size - 1);
    if (rc < 0 && rc != -EPROTO && rc != -EINVAL)
      abort();
  } else if (ps_report_parse_answer(&d, statement, (const char *)data + 1, size - 1) < 0) {
    abort();
  }
  if (ps_report_pick_stage_run(&d) < 0)
    abort();
  if (ps_report_finish(&d) < 0)
    abort();
  static const char lib[] = "window.Chart = function () {};";
  ps_report_assets a = {lib, sizeof lib - 1, "fuzz", "perf"};
  ps_buf page;
  ps_buf_init(&page, 0);
  if (ps_report_render(&d, &a, &page) < 0)
    abort();
  const char *json = strstr(page.data, "id=\"perfship-data\">");
  if (!json)
    abort();
  const char *json_end = strstr(json, "</script>");
  for (const char *p = json + strlen("id=\"perfship-data\">"); p < json_end; p++)
    if (*p == '<')
      abort();
  size_t scripts = 0;
  for (const char *p = page.data; (p = strstr(p, "<script")); p++)
    scripts++;
  /* the page's own script mentions "<canvas" in a comment; stop at the
   * data block, everything before it is the writer's HTML */
  for (const char *p = page.data; p < json; p++)
    if (*p == '<' && !known_tag(p))
      abort();
  if (scripts != 3)
    abort();
  ps_buf_free(&page);
  ps_report_data_free(&d);
  return 0;
}
