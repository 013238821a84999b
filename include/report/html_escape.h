/*
 * report/html_escape: the report page's security boundary (docs/report.md,
 * "Safe to open, whatever the data holds"): the only two ways a string
 * from the data reaches the page, and the check that lets a script or
 * style be inlined at all.
 *
 * Contract
 * - ps_html_escape() appends `s` for HTML text or a quoted attribute value
 *   (either quote): & < > " ' as character references; direction controls
 *   (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C), the C1
 *   controls and the ASCII controls other than tab, newline and CR shown
 *   visibly as the six characters of their escape ("\u202e"), never
 *   rendered; every other byte unchanged (invalid UTF-8 too: it can only
 *   decode to U+FFFD, never to one of those). NULL is the empty string.
 * - ps_json_string() appends `s` as a JSON string literal (NULL: "") that is
 *   also inert inside a <script> element: besides JSON's own escapes (" \
 *   and the controls below U+0020) it writes < > & and U+2028/U+2029 as \u
 *   escapes, so the literal holds no '<' (it can neither end its script
 *   element nor open a comment in it) and reads the same in any JavaScript
 *   parser. The characters ps_html_escape() shows visibly are written so
 *   that the script reads the same visible text ("\\u202e"). Other bytes,
 *   invalid UTF-8 included, are copied unchanged.
 * - Characters beyond ASCII that an escape writes as a reference are one
 *   table in html_escape.c, with the contexts (HTML, JSON) that escape
 *   them; a character to be shown visibly rather than rendered (such as a
 *   direction control) is a row there, for both escapes at once.
 * - Both return 0, or -ENOMEM / -E2BIG from the buffer; on failure the
 *   buffer is as it was before the call (no half-escaped text).
 * - ps_report_script_ok() says whether a text can be inlined as a script
 *   (or style) element verbatim: it must not contain "</script", "</style"
 *   or "<!--" in any case.
 */
#ifndef PS_REPORT_HTML_ESCAPE_H
#define PS_REPORT_HTML_ESCAPE_H

#include <stddef.h>

#include "core/buf.h"

int ps_html_escape(ps_buf *out, const char *s);
int ps_json_string(ps_buf *out, const char *s);
int ps_report_script_ok(const char *text, size_t len);

#endif
