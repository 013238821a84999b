/*
 * test_verdicts_format: the CI faces of `perfship verdicts`
 * (cmd/verdicts_format.h): the XML escape (every character that could end
 * an attribute or an element, characters XML 1.0 cannot carry, invalid
 * UTF-8 turned into U+FFFD, never eating the byte after it), the markdown
 * escape (a `|` cannot split a table cell, a newline cannot end the row,
 * `@` cannot mention), and the JUnit shape: one case per series and metric,
 * a failure only for a regression, counts that agree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/verdicts_format.h"
#include "core/buf.h"

static void xml_is(const char *in, int attr, const char *want) {
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_xml_escape(&b, in, attr), 0);
  assert_string_equal(b.data ? b.data : "", want);
  ps_buf_free(&b);
}

static void md_is(const char *in, const char *want) {
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_md_escape(&b, in), 0);
  assert_string_equal(b.data ? b.data : "", want);
  ps_buf_free(&b);
}

static void test_xml_markup_characters(void **st) {
  (void)st;
  xml_is("a&b<c>d\"e'f", 0, "a&amp;b&lt;c&gt;d&quot;e&apos;f");
  xml_is("run\"/><failure message=\"x", 1, "run&quot;/&gt;&lt;failure message=&quot;x");
  xml_is("]]>", 0, "]]&gt;");
  xml_is(NULL, 0, "");
  xml_is("", 1, "");
  /* plain UTF-8 kept as it is */
  xml_is("d\xc3\xa9j\xc3\xa0 \xe2\x82\xac \xf0\x9f\x90\x8c", 0,
         "d\xc3\xa9j\xc3\xa0 \xe2\x82\xac \xf0\x9f\x90\x8c");
}

static void test_xml_characters_it_cannot_carry(void **st) {
  (void)st;
  xml_is("a\x01z\x1b[31m", 0, "a\\u0001z\\u001b[31m");
  xml_is("a\x7f", 0, "a\\u007f");
  xml_is("x\xef\xbf\xbey\xef\xbf\xbf", 0, "x\\ufffey\\uffff");
  /* direction controls: a run name cannot reorder what CI shows */
  xml_is("daily-\xe2\x80\xae"
         "deliaf",
         0, "daily-\\u202edeliaf");
  /* text keeps its line breaks; an attribute keeps them as references */
  xml_is("a\tb\nc\rd", 0, "a\tb\nc\rd");
  xml_is("a\tb\nc\rd", 1, "a&#9;b&#10;c&#13;d");
}

static void test_xml_invalid_utf8(void **st) {
  (void)st;
  /* a lone continuation byte, a cut sequence, an overlong '<', a surrogate,
   * beyond U+10FFFF: each byte that starts nothing valid is U+FFFD, and the
   * character after it survives */
  xml_is("a\x80z", 0, "a\xef\xbf\xbdz");
  xml_is("a\xc3", 0, "a\xef\xbf\xbd");
  xml_is("a\xe2\x82", 0, "a\xef\xbf\xbd\xef\xbf\xbd");
  xml_is("\xc0\xbc", 0, "\xef\xbf\xbd\xef\xbf\xbd");
  xml_is("\xed\xa0\x80!", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd!");
  xml_is("\xf4\x90\x80\x80", 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  xml_is("\xc3<", 0, "\xef\xbf\xbd&lt;");
}

static void test_markdown_escape(void **st) {
  (void)st;
  md_is("a|b", "a\\|b");
  md_is("**bold** _it_ `code` [x](http://e) <b>", "\\*\\*bold\\*\\* \\_it\\_ \\`code\\` "
                                                  "\\[x\\]\\(http\\://e\\) \\<b\\>");
  md_is("# h\n| forged | row |", "\\# h \\| forged \\| row \\|");
  md_is("@team ~~x~~ \\", "\\@team \\~\\~x\\~\\~ \\\\");
  md_is("daily-perf-9eb3", "daily\\-perf\\-9eb3");
  md_is("x\x1b[2J\xe2\x80\xae", "x\\u001b\\[2J\\u202e");
  md_is("caf\xc3\xa9", "caf\xc3\xa9");
  md_is(NULL, "");
}

static ps_verdict_row row(const char *verdict, const char *series, const char *metric,
                          const char *run, double pct) {
  return (ps_verdict_row){.verdict = verdict,
                          .host = "bench-1",
                          .source = "loadgen",
                          .series = series,
                          .metric = metric,
                          .run = run,
                          .change_run = run,
                          .value = 30 + pct * 0.3,
                          .baseline = 30,
                          .change_pct = pct,
                          .time_s = NAN};
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
    n++;
  return n;
}

static void test_junit_cases_and_failures(void **st) {
  (void)st;
  ps_verdict_row rows[] = {
      row("regression", "daily-perf", "cycleAvgDuration", "run-<3>", 12.0),
      row("regression", "daily-perf", "cycleAvgDuration", "run-4", 11.0),
      row("none", "daily-perf", "cycleAvgDuration", "run-2", 0.5),
      row("improvement", "daily-perf", "swingsetTime", "run-4", -8.0),
      row("none", "daily-perf", "swingsetTime", "run-3", 0.1),
      row("none", "other\"series", "cycleAvgDuration", "run-9", 0.0),
  };
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_verdicts_junit(&b, rows, 6, "7d"), 0);
  const char *x = b.data;
  assert_non_null(strstr(x, "<testsuites name=\"perfship verdicts\" tests=\"3\" failures=\"1\""));
  assert_non_null(strstr(x, "tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"0\""));
  assert_int_equal(count(x, "<testcase "), 3);
  assert_int_equal(count(x, "<failure "), 1);
  assert_int_equal(count(x, "</failure>"), 1);
  /* both regressions of the failing case are named, the run escaped */
  assert_non_null(strstr(x, "run run-&lt;3&gt;: +12.0 %"));
  assert_non_null(strstr(x, "run run-4: +11.0 %"));
  assert_non_null(strstr(x, "classname=\"loadgen.other&quot;series on bench-1\""));
  assert_null(strstr(x, "other\"series"));
  ps_buf_free(&b);

  ps_buf_init(&b, 0);
  assert_int_equal(ps_verdicts_junit(&b, NULL, 0, "7d"), 0);
  assert_non_null(strstr(b.data, "tests=\"0\" failures=\"0\""));
  ps_buf_free(&b);
}

/* The text of the k-th <failure> of x (from its '>' to its end), or NULL. */
static char *failure_text(const char *x, size_t k) {
  const char *f = x;
  for (size_t i = 0; f && i <= k; i++)
    if ((f = strstr(f, "<failure ")) != NULL && i < k)
      f++;
  if (!f || !(f = strchr(f, '>')))
    return NULL;
  const char *e = strstr(f, "</failure>");
  return e ? strndup(f + 1, (size_t)(e - f - 1)) : NULL;
}

/* Each failure names the runs of its own case and no other (two
 * regressions named both under the second case; seven, all seven under
 * the last). The cases' rows are interleaved, as the sort by change leaves
 * them. */
static void test_junit_failure_names_only_its_runs(void **st) {
  (void)st;
  ps_verdict_row two[] = {
      row("regression", "daily-perf", "cycleAvgDuration", "r1", 12.0),
      row("regression", "daily-perf", "live_avgSwingsetTime", "r2", 9.0),
      row("none", "daily-perf", "cycleAvgDuration", "r0", 0.5),
  };
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_verdicts_junit(&b, two, 3, "7d"), 0);
  assert_int_equal(count(b.data, "<failure "), 2);
  char *t0 = failure_text(b.data, 0), *t1 = failure_text(b.data, 1);
  assert_non_null(t0);
  assert_non_null(t1);
  assert_string_equal(t0, "run r1: +12.0 %, value 33.6 against baseline 30\n");
  assert_string_equal(t1, "run r2: +9.0 %, value 32.7 against baseline 30\n");
  free(t0);
  free(t1);
  ps_buf_free(&b);

  enum { CASES = 7 };
  static const char *const metrics[CASES] = {"m0", "m1", "m2", "m3", "m4", "m5", "m6"};
  static const char *const runs[CASES][2] = {{"a0", "b0"}, {"a1", "b1"}, {"a2", "b2"}, {"a3", "b3"},
                                             {"a4", "b4"}, {"a5", "b5"}, {"a6", "b6"}};
  ps_verdict_row seven[3 * CASES];
  size_t n = 0;
  for (int pass = 0; pass < 3; pass++)
    for (int c = 0; c < CASES; c++)
      seven[n++] = pass < 2 ? row("regression", "s", metrics[c], runs[c][pass], 20.0 - pass - c)
                            : row("none", "s", metrics[c], "calm", 0.1);
  ps_buf_init(&b, 0);
  assert_int_equal(ps_verdicts_junit(&b, seven, n, "7d"), 0);
  assert_int_equal(count(b.data, "<failure "), CASES);
  for (size_t k = 0; k < CASES; k++) {
    char *t = failure_text(b.data, k);
    assert_non_null(t);
    char want[160];
    snprintf(want, sizeof want, "run %s: ", runs[k][0]);
    assert_int_equal(count(t, want), 1);
    snprintf(want, sizeof want, "run %s: ", runs[k][1]);
    assert_int_equal(count(t, want), 1);
    assert_int_equal(count(t, "run "), 2); /* and no run of another case */
    assert_int_equal(count(t, "\n"), 2);
    free(t);
  }
  ps_buf_free(&b);
}

/* Two vats of one stage's drift are two cases, each naming its vat, so a
 * regressing vat fails alone (docs/verdicts.md "Inside the chain"). */
static void test_junit_vats_are_cases(void **st) {
  (void)st;
  ps_verdict_row rows[] = {
      row("regression", "daily-perf", "stage_vatSecondsPerCycle", "run-1", 102.0),
      row("none", "daily-perf", "stage_vatSecondsPerCycle", "run-1", 3.0),
  };
  rows[0].stage = rows[1].stage = "2";
  rows[0].vat = "v16";
  rows[1].vat = "v<11>";
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_verdicts_junit(&b, rows, 2, "7d"), 0);
  assert_int_equal(count(b.data, "<testcase "), 2);
  assert_int_equal(count(b.data, "<failure "), 1);
  assert_non_null(strstr(b.data, "stage_vatSecondsPerCycle v16, stage 2"));
  assert_non_null(strstr(b.data, "stage_vatSecondsPerCycle v&lt;11&gt;, stage 2"));
  ps_buf_free(&b);
}

static void test_markdown_summary(void **st) {
  (void)st;
  ps_verdict_row rows[] = {
      row("regression", "daily-perf", "cycleAvgDuration", "run|x\n| y", 12.0),
      row("none", "daily-perf", "cycleAvgDuration", "run-2", 0.5),
  };
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_verdicts_markdown(&b, rows, 2, "7d"), 0);
  assert_non_null(strstr(b.data, "### perfship verdicts: 1 regression, 0 improvements\n"));
  assert_non_null(strstr(b.data, "| run\\|x \\| y |"));
  /* a header, its rule and one row: the `none` is counted, not listed */
  assert_int_equal(count(b.data, "\n|"), 3);
  ps_buf_free(&b);
  /* a benchmarker report's note, escaped, in the row */
  ps_verdict_row bm = row("regression", "isas_images / ISAs crdb / crdb", "x_n_star", "r", -16);
  bm.note = "step at 10 users went Unstable; interuss/dss:v0.23.0-rc4 was stable there";
  ps_buf_init(&b, 0);
  assert_int_equal(ps_verdicts_markdown(&b, &bm, 1, "7d"), 0);
  assert_non_null(strstr(b.data, "; step at 10 users went Unstable; "
                                 "interuss/dss\\:v0\\.23\\.0\\-rc4 was stable there |"));
  ps_buf_free(&b);

  ps_verdict_row many[PS_VERDICTS_MD_MAX_ROWS + 7];
  for (size_t i = 0; i < sizeof many / sizeof many[0]; i++)
    many[i] = row("improvement", "s", "m", "r", -5.0);
  ps_buf_init(&b, 0);
  assert_int_equal(ps_verdicts_markdown(&b, many, sizeof many / sizeof many[0], "1d"), 0);
  assert_int_equal(count(b.data, "| 🟢 improvement |"), PS_VERDICTS_MD_MAX_ROWS);
  assert_non_null(strstr(b.data, "7 more not shown"));
  ps_buf_free(&b);

  ps_buf_init(&b, 0);
  assert_int_equal(ps_verdicts_markdown(&b, rows + 1, 1, "7d"), 0);
  assert_non_null(strstr(b.data, "nothing changed"));
  assert_null(strstr(b.data, "|"));
  ps_buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_xml_markup_characters),
      cmocka_unit_test(test_xml_characters_it_cannot_carry),
      cmocka_unit_test(test_xml_invalid_utf8),
      cmocka_unit_test(test_markdown_escape),
      cmocka_unit_test(test_junit_cases_and_failures),
      cmocka_unit_test(test_junit_vats_are_cases),
      cmocka_unit_test(test_junit_failure_names_only_its_runs),
      cmocka_unit_test(test_markdown_summary),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
