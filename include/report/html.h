/*
 * report/html: the report as one self-contained HTML page (docs/report.md):
 * the tables and texts as HTML, the charts' data as JSON for the page's
 * own script, Chart.js and that script inline, and a Content-Security-
 * Policy that forbids every network request and runs only those two
 * scripts, by their SHA-256.
 *
 * Contract
 * - ps_report_render() appends the whole page for a finished model
 *   (report/model.h) to `out`. Every string from the data goes through
 *   ps_html_escape() (text and attribute values) or ps_json_string() (the
 *   JSON data block); nothing else from the data reaches the page.
 * - The escapes and the check that an asset can be inlined are
 *   report/html_escape.h (included here); Chart.js, the page's script and
 *   its style are checked every time a page is made.
 * - ps_report_chart_data() appends the charts' data alone (the JSON the
 *   page's script reads), as the page holds it.
 * - Returns 0, -ENOMEM / -E2BIG from the buffer, or -EINVAL when an asset
 *   cannot be inlined safely (the page is not written then).
 */
#ifndef PS_REPORT_HTML_H
#define PS_REPORT_HTML_H

#include <stddef.h>

#include "core/buf.h"
#include "report/html_escape.h"
#include "report/model.h"

typedef struct ps_report_assets {
  const char *chart_js; /* the Chart.js library, inlined as is */
  size_t chart_js_len;
  const char *generator; /* e.g. "perfship 0.1.0", shown in the footer */
  const char *database;  /* shown in the header; NULL: not shown */
} ps_report_assets;

int ps_report_chart_data(const ps_report_data *d, ps_buf *out);

int ps_report_render(const ps_report_data *d, const ps_report_assets *a, ps_buf *out);

#endif
