/*
 * report/html_escape.c: the two escapes and the inline check
 * (include/report/html_escape.h).
 *
 * DESIGN
 * - ASCII is decided by a switch per context; the few characters beyond
 *   ASCII that need a reference are one table (`special`), matched only at
 *   a byte >= 0x80, so plain text costs one comparison per byte more than a
 *   copy. The table is matched against the NUL-terminated text byte by
 *   byte, so a sequence cut short at the end of a string is never read
 *   past its NUL and is copied as it is.
 * - The JSON escape writes no '<' at all, which is what keeps the JSON
 *   block inside its <script> element (docs/report.md).
 */
#include "report/html_escape.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

enum { IN_HTML = 1, IN_JSON = 2, VISIBLE = 4 };

/* Characters beyond ASCII written as a reference (HTML: &#xHHHH;, JSON:
 * \uhhhh) in the contexts named, or, VISIBLE, shown as the six characters
 * of their escape ("\u202e") in both: a direction control rendered would
 * reorder what the page says ("daily-perf-\u202edeliaf-ton" read as
 * "daily-perf-not-failed"), the "Trojan Source" trick that code review
 * tools flag the same way (docs/report.md). Basic plane only: the JSON
 * form is one \u escape. */
static const struct {
  const char *utf8;
  uint32_t cp;
  unsigned in;
} special[] = {
    /* they end a line in older JavaScript parsers */
    {"\xe2\x80\xa8", 0x2028, IN_JSON},
    {"\xe2\x80\xa9", 0x2029, IN_JSON},
    /* embeddings and overrides, isolates, the marks, Arabic's mark */
    {"\xe2\x80\xaa", 0x202A, VISIBLE}, {"\xe2\x80\xab", 0x202B, VISIBLE},
    {"\xe2\x80\xac", 0x202C, VISIBLE}, {"\xe2\x80\xad", 0x202D, VISIBLE},
    {"\xe2\x80\xae", 0x202E, VISIBLE}, {"\xe2\x81\xa6", 0x2066, VISIBLE},
    {"\xe2\x81\xa7", 0x2067, VISIBLE}, {"\xe2\x81\xa8", 0x2068, VISIBLE},
    {"\xe2\x81\xa9", 0x2069, VISIBLE}, {"\xe2\x80\x8e", 0x200E, VISIBLE},
    {"\xe2\x80\x8f", 0x200F, VISIBLE}, {"\xd8\x9c", 0x061C, VISIBLE},
};

/* The C1 controls, U+0080..U+009F: two bytes, C2 80..C2 9F. */
static int c1_at(const unsigned char *c) { return c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f; }

/* ASCII controls other than tab, newline and carriage return, and DEL:
 * invisible or worse (a backspace) where they are rendered. */
static int c0_visible(unsigned char c) {
  return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
}

/* The row of `special` that `c` starts with in context `in`, or -1;
 * its length in *n. */
static int special_at(const unsigned char *c, unsigned in, size_t *n) {
  for (size_t k = 0; k < sizeof special / sizeof special[0]; k++) {
    if (!(special[k].in & (in | VISIBLE)))
      continue;
    const unsigned char *u = (const unsigned char *)special[k].utf8;
    size_t i = 0;
    while (u[i] && c[i] == u[i])
      i++;
    if (!u[i]) {
      *n = i;
      return (int)k;
    }
  }
  return -1;
}

int ps_html_escape(ps_buf *out, const char *s) {
  size_t start = out->len, n;
  int rc = 0, k;
  for (const char *c = s ? s : ""; !rc && *c; c++) {
    switch (*c) {
    case '&': rc = ps_buf_puts(out, "&amp;"); break;
    case '<': rc = ps_buf_puts(out, "&lt;"); break;
    case '>': rc = ps_buf_puts(out, "&gt;"); break;
    case '"': rc = ps_buf_puts(out, "&quot;"); break;
    case '\'': rc = ps_buf_puts(out, "&#39;"); break;
    default:
      if (c0_visible((unsigned char)*c)) {
        rc = ps_buf_printf(out, "\\u%04x", (unsigned char)*c);
      } else if (c1_at((const unsigned char *)c)) {
        rc = ps_buf_printf(out, "\\u%04x", (unsigned char)c[1]);
        c++;
      } else if ((unsigned char)*c >= 0x80 &&
                 (k = special_at((const unsigned char *)c, IN_HTML, &n)) >= 0) {
        rc = special[k].in & VISIBLE ? ps_buf_printf(out, "\\u%04x", (unsigned)special[k].cp)
                                     : ps_buf_printf(out, "&#x%04X;", (unsigned)special[k].cp);
        c += n - 1;
      } else
        rc = ps_buf_putc(out, *c);
    }
  }
  if (rc)
    ps_buf_truncate(out, start);
  return rc;
}

int ps_json_string(ps_buf *out, const char *s) {
  size_t start = out->len, n;
  int rc = ps_buf_putc(out, '"'), k;
  for (const unsigned char *c = (const unsigned char *)(s ? s : ""); !rc && *c; c++) {
    if (*c == '"' || *c == '\\')
      rc = ps_buf_append(out, (const char[2]){'\\', (char)*c}, 2);
    else if (c0_visible(*c)) /* the text "\u0007", not the control */
      rc = ps_buf_printf(out, "\\\\u%04x", *c);
    else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&')
      rc = ps_buf_printf(out, "\\u%04x", *c);
    else if (c1_at(c)) {
      rc = ps_buf_printf(out, "\\\\u%04x", c[1]);
      c++;
    } else if (*c >= 0x80 && (k = special_at(c, IN_JSON, &n)) >= 0) {
      rc = ps_buf_printf(out, special[k].in & VISIBLE ? "\\\\u%04x" : "\\u%04x",
                         (unsigned)special[k].cp);
      c += n - 1;
    } else
      rc = ps_buf_putc(out, (char)*c);
  }
  if (!rc)
    rc = ps_buf_putc(out, '"');
  if (rc)
    ps_buf_truncate(out, start);
  return rc;
}

int ps_report_script_ok(const char *text, size_t len) {
  static const char *const bad[] = {"</script", "</style", "<!--"};
  for (size_t i = 0; i < len; i++) {
    if (text[i] != '<')
      continue;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
      size_t n = strlen(bad[k]);
      if (len - i >= n && strncasecmp(text + i, bad[k], n) == 0)
        return 0;
    }
  }
  return 1;
}
