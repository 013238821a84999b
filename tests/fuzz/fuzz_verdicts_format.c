/*
 * fuzz_verdicts_format.c: the escapes and faces of `perfship verdicts
 * --format junit|markdown` (agent/cmd/verdicts_format.c) on hostile text.
 *
 * Input: up to six NUL-separated strings (verdict, host, series, metric,
 * run, ticket), made into a regression, its acknowledged twin and a none.
 * Properties: no crash or leak; the XML escape leaves no < > & " ' that is
 * not an entity, no byte that is not UTF-8 and no control but tab, newline
 * and CR; the markdown escape leaves no newline and no | without its
 * backslash; both faces end as they must.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/verdicts_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int utf8_ok(const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n;) {
    unsigned c = p[i];
    size_t k = c < 0x80             ? 0
               : (c & 0xE0) == 0xC0 ? 1
               : (c & 0xF0) == 0xE0 ? 2
               : (c & 0xF8) == 0xF0 ? 3
                                    : 9;
    if (k == 9 || i + k >= n)
      return 0;
    for (size_t j = 1; j <= k; j++)
      if ((p[i + j] & 0xC0) != 0x80)
        return 0;
    i += k + 1;
  }
  return 1;
}

static void check_xml(const char *s, size_t n) {
  if (!utf8_ok((const unsigned char *)s, n))
    abort();
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '<' || c == '>' || c == '"' || c == '\'' ||
        (c < 0x20 && c != '\t' && c != '\n' && c != '\r'))
      abort();
    if (c == '&' && strncmp(s + i, "&amp;", 5) && strncmp(s + i, "&lt;", 4) &&
        strncmp(s + i, "&gt;", 4) && strncmp(s + i, "&quot;", 6) && strncmp(s + i, "&apos;", 6) &&
        strncmp(s + i, "&#", 2))
      abort();
  }
}

static void check_md(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '\n' || s[i] == '\r')
      abort();
    if (s[i] == '|') {
      size_t bs = 0; /* an odd run of backslashes before it escapes it */
      while (bs < i && s[i - 1 - bs] == '\\')
        bs++;
      if (bs % 2 == 0)
        abort();
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *copy = malloc(size + 1);
  if (!copy)
    return 0;
  memcpy(copy, data, size);
  copy[size] = '\0';
  const char *part[6] = {"", "", "", "", "", ""};
  size_t k = 0;
  for (char *p = copy; k < 6 && p <= copy + size; p += strlen(p) + 1)
    part[k++] = p;
  for (size_t i = 0; i < 6; i++) {
    ps_buf b;
    ps_buf_init(&b, 0);
    if (ps_xml_escape(&b, part[i], (int)(i & 1)) == 0)
      check_xml(b.data ? b.data : "", b.len);
    ps_buf_reset(&b);
    if (ps_md_escape(&b, part[i]) == 0)
      check_md(b.data ? b.data : "", b.len);
    ps_buf_free(&b);
  }
  ps_verdict_row rows[3] = {
      {.verdict = "regression",
       .host = part[1],
       .series = part[2],
       .metric = part[3],
       .run = part[4],
       .change_run = part[4],
       .value = 2,
       .baseline = 1,
       .change_pct = 100,
       .time_s = NAN},
      {.verdict = part[0],
       .host = part[1],
       .series = part[2],
       .metric = part[3],
       .run = part[5],
       .change_run = part[4],
       .value = NAN,
       .baseline = NAN,
       .change_pct = NAN,
       .time_s = NAN,
       .acknowledged = 1,
       .ack_who = part[5],
       .ack_reason = part[0],
       .ack_ticket = part[5]},
      {.verdict = "none",
       .host = NULL,
       .series = part[2],
       .metric = NULL,
       .run = NULL,
       .value = 1,
       .baseline = 1,
       .change_pct = 0,
       .time_s = NAN},
  };
  ps_buf b;
  ps_buf_init(&b, 0);
  if (ps_verdicts_junit(&b, rows, 3, part[2]) == 0 &&
      (b.len < 14 || strcmp(b.data + b.len - 14, "</testsuites>\n") != 0))
    abort();
  ps_buf_reset(&b);
  if (ps_verdicts_markdown(&b, rows, 3, part[3]) == 0 && (!b.len || b.data[b.len - 1] != '\n'))
    abort();
  ps_buf_free(&b);
  free(copy);
  return 0;
}
