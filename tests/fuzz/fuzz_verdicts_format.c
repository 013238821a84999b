/*
 * fuzz_verdicts_format.c: the escapes and faces of `perfship verdicts
 * --format junit|markdown` (agent/cmd/verdicts_format.c) on hostile text.
 *
 * Input: up to six NUL-separated strings (verdict, host, series, metric,
 * run, ticket), made into a regression, its acknowledged twin and a none.
 * Properties: no crash or leak; the XML escape leaves no < > & " ' that is
 * not an entity, no byte that is not UTF-8 and no control but tab, newline
 * and CR; the markdown escape leaves no newline and no | without its
 * backslash; both faces end as they must. Among them, seven failing cases
 * of runs named here, their rows interleaved: each JUnit failure names its
 * own case's runs and no other (the text of a case listed the runs of
 * every case before it).
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

enum { OWN_CASES = 7 };

/* Each <failure> of x names "fz-run-K" in its text only for its own K,
 * once per row. A case runs to the next "<testcase ": escaped data holds
 * no '<'. */
static void check_own_runs(const char *x, const unsigned rows_of[OWN_CASES]) {
  for (const char *f = strstr(x, "<testcase "); f;) {
    const char *next = strstr(f + 1, "<testcase ");
    const char *end = next ? next : f + strlen(f);
    const char *m = strstr(f, "name=\"fz-metric-");
    int k = m && m < end ? m[16] - '0' : -1;
    const char *fail = strstr(f, "<failure ");
    const char *text = fail && fail < end ? strchr(fail, '>') : NULL;
    unsigned named[OWN_CASES] = {0};
    for (const char *q = text; q && (q = strstr(q, "run fz-run-")) != NULL && q < end; q++)
      named[q[11] - '0']++;
    for (int j = 0; j < OWN_CASES; j++)
      if (named[j] != (j == k && text ? rows_of[j] : 0))
        abort();
    if (k >= 0 && !text)
      abort(); /* a case of open regressions fails */
    f = next;
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
  /* the fuzzed rows, then the seven cases' rows round-robin, one to three
   * rows each as the first bytes say; only when no string of the input
   * could itself read as one of their names */
  static const char *const metrics[OWN_CASES] = {"fz-metric-0", "fz-metric-1", "fz-metric-2",
                                                 "fz-metric-3", "fz-metric-4", "fz-metric-5",
                                                 "fz-metric-6"};
  static const char *const runs[OWN_CASES] = {"fz-run-0", "fz-run-1", "fz-run-2", "fz-run-3",
                                              "fz-run-4", "fz-run-5", "fz-run-6"};
  ps_verdict_row all[3 + 3 * OWN_CASES];
  unsigned rows_of[OWN_CASES] = {0};
  size_t n = 3;
  memcpy(all, rows, sizeof rows);
  int own = 1;
  for (size_t i = 0; i < 6; i++)
    own &= strstr(part[i], "fz-") == NULL;
  for (int pass = 0; own && pass < 3; pass++)
    for (int j = 0; j < OWN_CASES; j++) {
      if (pass >= 1 + (size > (size_t)j ? data[j] % 3 : 0))
        continue;
      all[n++] = (ps_verdict_row){.verdict = "regression",
                                  .host = part[1],
                                  .series = part[2],
                                  .metric = metrics[j],
                                  .run = runs[j],
                                  .change_run = runs[j],
                                  .value = 3,
                                  .baseline = 1,
                                  .change_pct = 200.0 - pass - j,
                                  .time_s = NAN};
      rows_of[j]++;
    }
  ps_buf b;
  ps_buf_init(&b, 0);
  if (ps_verdicts_junit(&b, all, n, part[2]) == 0) {
    if (b.len < 14 || strcmp(b.data + b.len - 14, "</testsuites>\n") != 0)
      abort();
    if (own)
      check_own_runs(b.data, rows_of);
  }
  ps_buf_reset(&b);
  if (ps_verdicts_markdown(&b, rows, 3, part[3]) == 0 && (!b.len || b.data[b.len - 1] != '\n'))
    abort();
  ps_buf_free(&b);
  free(copy);
  return 0;
}
