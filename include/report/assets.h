/*
 * report/assets: the report page's own script and style, compiled into
 * the binary from agent/report/page.js and agent/report/page.css by the
 * build (cmake/embed.cmake), so a page never depends on files beside the
 * binary and the tested script is the shipped one.
 *
 * Contract
 * - Each array holds the file's bytes and a NUL after them; the _len
 *   constant is the byte count without the NUL.
 */
#ifndef PS_REPORT_ASSETS_H
#define PS_REPORT_ASSETS_H

#include <stddef.h>

extern const char ps_report_page_js[];
extern const size_t ps_report_page_js_len;
extern const char ps_report_page_css[];
extern const size_t ps_report_page_css_len;

#endif
