/*
 * test_html_escape: the report page's two escapes and its inline check
 * (report/html_escape.h), the page's security boundary: every character
 * that could end a text, an attribute or a script element, `</script>`
 * inside the JSON block, invalid UTF-8 (copied, never swallowing the
 * character after it, never read past its end), long strings, and a full
 * buffer leaving no half-escaped text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "report/html_escape.h"

static char *html_of(const char *in) {
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_html_escape(&b, in), 0);
  char *s = strdup(b.data ? b.data : "");
  ps_buf_free(&b);
  return s;
}

static void html_is(const char *in, const char *want) {
  char *got = html_of(in);
  assert_string_equal(got, want);
  free(got);
}

static char *json_of(const char *in) {
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_json_string(&b, in), 0);
  char *s = strdup(b.data);
  ps_buf_free(&b);
  return s;
}

/* `in` as JSON is `want`, and a JSON reader reads `in` back from it. */
static void json_is(const char *in, const char *want) {
  char *got = json_of(in);
  assert_string_equal(got, want);
  cJSON *j = cJSON_Parse(got);
  assert_non_null(j);
  assert_string_equal(j->valuestring, in);
  cJSON_Delete(j);
  free(got);
}

/* What a browser reads back from the five references the escape writes. */
static char *unescape_html(const char *s) {
  static const struct {
    const char *ref;
    char c;
  } refs[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
  char *out = malloc(strlen(s) + 1), *o = out;
  while (*s) {
    size_t k = 0;
    while (k < 5 && strncmp(s, refs[k].ref, strlen(refs[k].ref)) != 0)
      k++;
    if (k < 5) {
      *o++ = refs[k].c;
      s += strlen(refs[k].ref);
    } else
      *o++ = *s++;
  }
  *o = 0;
  return out;
}

static void test_html_every_dangerous_character(void **state) {
  (void)state;
  html_is("&", "&amp;");
  html_is("<", "&lt;");
  html_is(">", "&gt;");
  html_is("\"", "&quot;");
  html_is("'", "&#39;");
  html_is("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;");
  html_is("a&b \"q\" 'p'", "a&amp;b &quot;q&quot; &#39;p&#39;");
  /* an escape is not escaped twice into something else: "&lt;" as data */
  html_is("&lt;", "&amp;lt;");
  html_is("plain ü", "plain ü");
  html_is("", "");
  html_is(NULL, "");
  /* every other printable ASCII byte is itself, and tab, newline, CR */
  for (int c = 1; c < 0x80; c++) {
    if (strchr("&<>\"'", c) || ((c < 0x20 || c == 0x7f) && !strchr("\t\n\r", c)))
      continue;
    char in[2] = {(char)c, 0};
    html_is(in, in);
  }
}

/* Direction controls and other controls are shown, not obeyed: the text
 * "\u202e" where the data had U+202E ("Trojan Source"), in both escapes. */
static void test_controls_shown_visibly(void **state) {
  (void)state;
  html_is("daily-perf-\xe2\x80\xae" "deliaf-ton", "daily-perf-\\u202edeliaf-ton");
  html_is("\xe2\x80\xae" "exe.gnp-evil\xe2\x80\xac", "\\u202eexe.gnp-evil\\u202c");
  const struct {
    const char *utf8, *shown;
  } rows[] = {
      {"\xe2\x80\xaa", "\\u202a"}, {"\xe2\x80\xab", "\\u202b"}, {"\xe2\x80\xac", "\\u202c"},
      {"\xe2\x80\xad", "\\u202d"}, {"\xe2\x80\xae", "\\u202e"}, {"\xe2\x81\xa6", "\\u2066"},
      {"\xe2\x81\xa7", "\\u2067"}, {"\xe2\x81\xa8", "\\u2068"}, {"\xe2\x81\xa9", "\\u2069"},
      {"\xe2\x80\x8e", "\\u200e"}, {"\xe2\x80\x8f", "\\u200f"}, {"\xd8\x9c", "\\u061c"},
      {"\x01", "\\u0001"},             {"\x08", "\\u0008"},             {"\x1b", "\\u001b"},
      {"\x7f", "\\u007f"},             {"\xc2\x85", "\\u0085"},         {"\xc2\x9b", "\\u009b"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    html_is(rows[i].utf8, rows[i].shown);
    /* the JSON block gives the page's script the same visible text */
    char *e = json_of(rows[i].utf8);
    cJSON *j = cJSON_Parse(e);
    assert_non_null(j);
    assert_string_equal(j->valuestring, rows[i].shown);
    cJSON_Delete(j);
    free(e);
  }
  /* right-to-left text itself is not a control: shown as it is */
  html_is("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d", "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d");
  /* C2 A0 (no-break space) is not a C1 control */
  html_is("a\xc2\xa0" "b", "a\xc2\xa0" "b");
}

/* A value from the data inside either kind of quoted attribute can end
 * neither the attribute nor the tag, and reads back as itself. */
static void test_html_attribute_context(void **state) {
  (void)state;
  const char *hostile[] = {"\" onmouseover=\"alert(1)", "' onfocus='alert(1)' autofocus='",
                           "x\"><script>alert(1)</script>", "a=b c=d", "`backtick`"};
  for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
    char *e = html_of(hostile[i]);
    assert_null(strpbrk(e, "\"'<>"));
    char *back = unescape_html(e);
    assert_string_equal(back, hostile[i]);
    free(back);
    free(e);
  }
}

static void test_json_every_dangerous_character(void **state) {
  (void)state;
  char *e0;
  json_is("a\"b\\c", "\"a\\\"b\\\\c\"");
  json_is("tab\tline\n", "\"tab\\u0009line\\u000a\"");
  json_is("x & y", "\"x \\u0026 y\"");
  json_is("<>", "\"\\u003c\\u003e\"");
  /* U+2028 and U+2029 end a line in older JavaScript parsers */
  json_is("a\xe2\x80\xa8"
          "b\xe2\x80\xa9",
          "\"a\\u2028b\\u2029\"");
  /* their neighbours are plain text; a direction control is shown */
  e0 = json_of("\xe2\x80\x94 dash \xe2\x80\xaa");
  assert_string_equal(e0, "\"\xe2\x80\x94 dash \\\\u202a\"");
  free(e0);
  char *e = json_of(NULL);
  assert_string_equal(e, "\"\"");
  free(e);
  /* every printable ASCII byte reads back, and none of < > & or a control
   * is left (the controls themselves: test_controls_shown_visibly) */
  char all[0x80];
  size_t n = 0;
  for (int c = 1; c < 0x7f; c++)
    if (c >= 0x20 || strchr("\t\n\r", c))
      all[n++] = (char)c;
  all[n] = 0;
  e = json_of(all);
  assert_null(strpbrk(e, "<>&"));
  for (const char *c = e; *c; c++)
    assert_true((unsigned char)*c >= 0x20);
  cJSON *j = cJSON_Parse(e);
  assert_non_null(j);
  assert_string_equal(j->valuestring, all);
  cJSON_Delete(j);
  free(e);
}

/* The JSON block is a <script type="application/json"> element: data
 * holding "</script>", "<!--" or "<script" must not end it early, open a
 * comment in it or start another script. */
static void test_json_inside_a_script_element(void **state) {
  (void)state;
  const char *hostile[] = {
      "</script><script>alert(1)</script>", "</SCRIPT >", "<!--", "<script>", "x</script", "-->"};
  for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
    ps_buf b;
    ps_buf_init(&b, 0);
    assert_int_equal(ps_buf_puts(&b, "<script type=\"application/json\">{\"run\":"), 0);
    size_t at = b.len;
    assert_int_equal(ps_json_string(&b, hostile[i]), 0);
    assert_int_equal(ps_buf_puts(&b, "}</script>"), 0);
    /* the data holds no '<' at all, so the element's own end is the only one */
    assert_null(memchr(b.data + at, '<', b.len - at - strlen("</script>")));
    assert_true(ps_report_script_ok(b.data + at, b.len - at - strlen("</script>")));
    const char *first_end = strcasestr(b.data, "</script");
    assert_ptr_equal(first_end, b.data + b.len - strlen("</script>"));
    ps_buf_free(&b);
  }
  json_is("</script><!--", "\"\\u003c/script\\u003e\\u003c!--\"");
}

/* Invalid UTF-8 is copied as it is (a browser shows U+FFFD); a sequence
 * cut short never hides the character after it, and one cut short by the
 * end of the string is not read past its NUL (ASan would say). */
static void test_invalid_utf8(void **state) {
  (void)state;
  html_is("\x80", "\x80");
  html_is("\xff\xfe", "\xff\xfe");
  html_is("\xe2<", "\xe2&lt;");
  html_is("\xe2\x80<", "\xe2\x80&lt;");
  html_is("\xc0\xbc", "\xc0\xbc"); /* an overlong '<': not '<' to a browser */
  char *cut = strdup("a\xe2\x80");
  html_is(cut, cut);
  char *e = json_of(cut);
  assert_string_equal(e, "\"a\xe2\x80\"");
  free(e);
  free(cut);
  cut = strdup("\xe2");
  e = json_of(cut);
  assert_string_equal(e, "\"\xe2\"");
  free(e);
  free(cut);
  e = json_of("\xe2\x80<\xe2\x80\xa8\xc0\xbc&");
  assert_string_equal(e, "\"\xe2\x80\\u003c\\u2028\xc0\xbc\\u0026\"");
  free(e);
}

/* A long string comes out whole; one that does not fit the buffer's limit
 * leaves the buffer exactly as it was. */
static void test_long_strings_and_a_full_buffer(void **state) {
  (void)state;
  const size_t n = 5 << 18; /* over a megabyte, whole rounds of five */
  char *s = malloc(n + 1);
  for (size_t i = 0; i < n; i++)
    s[i] = "<a'&\""[i % 5];
  s[n] = 0;
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_html_escape(&b, s), 0);
  /* per five bytes: &lt; a &#39; &amp; &quot; */
  assert_int_equal(b.len, n / 5 * (4 + 1 + 5 + 5 + 6));
  char *back = unescape_html(b.data);
  assert_string_equal(back, s);
  free(back);
  ps_buf_reset(&b);
  assert_int_equal(ps_json_string(&b, s), 0);
  cJSON *j = cJSON_Parse(b.data);
  assert_non_null(j);
  assert_string_equal(j->valuestring, s);
  cJSON_Delete(j);
  ps_buf_free(&b);

  for (int json = 0; json < 2; json++) {
    ps_buf_init(&b, 4096);
    assert_int_equal(ps_buf_puts(&b, "before"), 0);
    int rc = json ? ps_json_string(&b, s) : ps_html_escape(&b, s);
    assert_int_equal(rc, -E2BIG);
    assert_int_equal(b.len, strlen("before"));
    assert_string_equal(b.data, "before");
    ps_buf_free(&b);
  }
  free(s);
}

static void test_script_ok(void **state) {
  (void)state;
  const char *bad[] = {"a</script>b", "a</SCRIPT b", "</ScRiPt",   "x<!--y",
                       "</style>",    "</STYLE",     "end</script"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(ps_report_script_ok(bad[i], strlen(bad[i])));
  const char *good[] = {
      "if (a < b && c > d) s = '<scr' + 'ipt>';", "x</scrip", "<", "<!-", "</ script>", ""};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    assert_true(ps_report_script_ok(good[i], strlen(good[i])));
  /* the length is what counts: a bad text past it is not looked at */
  assert_true(ps_report_script_ok("ok</script>", 3));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_html_every_dangerous_character),
      cmocka_unit_test(test_controls_shown_visibly),
      cmocka_unit_test(test_html_attribute_context),
      cmocka_unit_test(test_json_every_dangerous_character),
      cmocka_unit_test(test_json_inside_a_script_element),
      cmocka_unit_test(test_invalid_utf8),
      cmocka_unit_test(test_long_strings_and_a_full_buffer),
      cmocka_unit_test(test_script_ok),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
