/*
 * test_jsonl.c: the generic JSONL format, driven through its ops table the
 * way `convert` and `run` drive it, with the encoder in the loop so each
 * case checks the line protocol a user would see.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/format.h"
#include "influx/lp_encode.h"

#include "aux_rand.h"

typedef struct sink {
  ps_buf out;
  char rejects[4096];
  int nrejects;
  int eagain_left; /* refuse this many points with -EAGAIN */
} sink;

static int sink_point(void *ctx, const ps_point *p, const ps_origin *o) {
  (void)o;
  sink *s = ctx;
  if (s->eagain_left > 0) {
    s->eagain_left--;
    return -EAGAIN;
  }
  const char *why = NULL;
  if (ps_lp_encode(&s->out, p, NULL, 0, &why) < 0) {
    s->nrejects++;
    snprintf(s->rejects + strlen(s->rejects),
             sizeof s->rejects - strlen(s->rejects), "encode: %s\n", why);
  }
  return 0;
}

static void sink_reject(void *ctx, const ps_origin *o, const char *reason) {
  sink *s = ctx;
  s->nrejects++;
  snprintf(s->rejects + strlen(s->rejects), sizeof s->rejects - strlen(s->rejects),
           "%s:%llu: %s\n", o->file, (unsigned long long)o->line, reason);
}

static ps_source_cfg base_src(void) {
  ps_source_cfg s;
  memset(&s, 0, sizeof s);
  s.format = PS_FMT_JSONL;
  s.measurement = "m";
  s.time_key = "ts";
  return s;
}

/* Runs the lines (separated by \n) through the parser; returns the sink. */
static sink *run(const ps_source_cfg *src, const char *text) {
  static sink s;
  ps_buf_free(&s.out);
  memset(&s, 0, sizeof s);
  ps_buf_init(&s.out, 0);
  ps_parser *p = NULL;
  ps_buf err;
  ps_buf_init(&err, 0);
  ps_input_head head = {.path = "x.jsonl"};
  assert_int_equal(ps_format_jsonl.open(&p, src, &head, &err), 0);
  ps_emitter em = {.point = sink_point, .reject = sink_reject, .ctx = &s,
                   .origin = {.file = "x.jsonl"}};
  const char *q = text;
  uint64_t n = 0;
  while (*q) {
    const char *nl = strchr(q, '\n');
    size_t len = nl ? (size_t)(nl - q) : strlen(q);
    em.origin.line = ++n;
    assert_int_equal(ps_format_jsonl.line(p, q, len, &em), 0);
    q += len + (nl ? 1 : 0);
  }
  ps_format_jsonl.free(p);
  ps_buf_free(&err);
  return &s;
}

static void test_numbers_are_floats_unless_declared(void **st) {
  (void)st;
  ps_source_cfg src = base_src();
  ps_type_decl types[] = {{"n", PS_F_INT}, {"u", PS_F_UINT}, {"s", PS_F_STRING},
                          {"b", PS_F_BOOL}, {"f", PS_F_FLOAT}};
  src.types = types;
  src.ntypes = 5;
  sink *s = run(&src, "{\"ts\":1,\"x\":100,\"n\":100,\"u\":7,\"s\":\"a\",\"b\":false,\"f\":2}");
  assert_string_equal(s->out.data,
                      "m b=false,f=2.0,n=100i,s=\"a\",u=7u,x=100.0 1000000000\n");
  assert_int_equal(s->nrejects, 0);
}

static void test_declared_type_mismatch_rejects_with_reason(void **st) {
  (void)st;
  ps_source_cfg src = base_src();
  ps_type_decl types[] = {{"n", PS_F_INT}, {"s", PS_F_STRING}, {"b", PS_F_BOOL},
                          {"u", PS_F_UINT}};
  src.types = types;
  src.ntypes = 4;
  sink *s = run(&src, "{\"ts\":1,\"n\":1.5}\n"
                      "{\"ts\":1,\"n\":\"7\"}\n"
                      "{\"ts\":1,\"s\":7}\n"
                      "{\"ts\":1,\"b\":1}\n"
                      "{\"ts\":1,\"u\":-1}\n"
                      "{\"ts\":1,\"n\":9223372036854775808}\n"
                      "{\"ts\":1,\"n\":1e19}\n"
                      "{\"ts\":1,\"n\":3}");
  assert_int_equal(s->nrejects, 7);
  assert_non_null(strstr(s->rejects, "x.jsonl:1: field 'n' is declared integer but its value has a fraction"));
  assert_non_null(strstr(s->rejects, "x.jsonl:2: field 'n' is declared integer but holds a string"));
  assert_non_null(strstr(s->rejects, "x.jsonl:3: field 's' is declared string but holds a number"));
  assert_non_null(strstr(s->rejects, "x.jsonl:4: field 'b' is declared boolean but holds a number"));
  assert_non_null(strstr(s->rejects, "x.jsonl:5: field 'u' is declared unsigned"));
  assert_non_null(strstr(s->rejects, "x.jsonl:6: field 'n' is declared integer but its value does not fit a 64-bit integer"));
  assert_non_null(strstr(s->rejects, "x.jsonl:7: field 'n' is declared integer but its value is beyond 2^53"));
  assert_string_equal(s->out.data, "m n=3i 1000000000\n");
}

static void test_integers_beyond_2_53_exact(void **st) {
  (void)st;
  ps_source_cfg src = base_src();
  ps_type_decl types[] = {{"n", PS_F_INT}, {"u", PS_F_UINT}, {"o.deep", PS_F_INT}};
  src.types = types;
  src.ntypes = 3;
  sink *s = run(&src, "{\"s\":\"1 2 -3\",\"a\":[5,6.5,{\"q\":-7}],\"ts\":1,"
                      "\"n\":9007199254740993,\"u\":18446744073709551615,"
                      "\"o\":{\"deep\":-9223372036854775808}}");
  assert_int_equal(s->nrejects, 0);
  assert_string_equal(s->out.data,
                      "m n=9007199254740993i,o.deep=-9223372036854775808i,"
                      "s=\"1 2 -3\",u=18446744073709551615u 1000000000\n");
}

static void test_booleans_strings_null_flatten_arrays(void **st) {
  (void)st;
  ps_source_cfg src = base_src();
  sink *s = run(&src, "{\"ts\":2,\"b\":true,\"s\":\"x \\\"y\\\" \\\\ \\u00e9\",\"z\":null,"
                      "\"o\":{\"p\":{\"q\":1},\"r\":\"t\"},\"arr\":[1,2],\"e\":{}}");
  assert_int_equal(s->nrejects, 0);
  assert_string_equal(s->out.data,
                      "m b=true,o.p.q=1.0,o.r=\"t\",s=\"x \\\"y\\\" \\\\ \xc3\xa9\" 2000000000\n");
}

static void test_nan_and_infinity_are_absent(void **st) {
  (void)st;
  /* Python's json.dumps writes these; docs/schema.md: they mean "absent" */
  ps_source_cfg src = base_src();
  sink *s = run(&src, "{\"ts\":1,\"a\":NaN,\"b\":Infinity,\"c\":-Infinity,\"d\":-2}");
  assert_int_equal(s->nrejects, 0);
  assert_string_equal(s->out.data, "m d=-2.0 1000000000\n");
  s = run(&src, "{\"ts\":1,\"a\":nan,\"d\":1}\n{\"ts\":1,\"a\":-Inf,\"d\":1}");
  assert_int_equal(s->nrejects, 2);
}

static void test_tags_and_field_selection(void **st) {
  (void)st;
  ps_source_cfg src = base_src();
  char *tags[] = {"stage", "num", "flag", "o.t"};
  char *fields[] = {"keep"};
  src.tag_keys = tags;
  src.ntag_keys = 4;
  src.field_keys = fields;
  src.nfield_keys = 1;
  sink *s = run(&src, "{\"ts\":3,\"stage\":\"warm up\",\"num\":4,\"flag\":true,"
                      "\"o\":{\"t\":\"a=b\"},\"keep\":1.25,\"drop\":2}");
  assert_int_equal(s->nrejects, 0);
  assert_string_equal(s->out.data,
                      "m,flag=true,num=4,o.t=a\\=b,stage=warm\\ up keep=1.25 3000000000\n");
}

static void test_time_units(void **st) {
  (void)st;
  ps_source_cfg src = base_src();
  sink *s = run(&src, "{\"ts\":1647216131.81362,\"v\":1}\n{\"ts\":\"1700000000\",\"v\":1}\n"
                      "{\"ts\":-1.5,\"v\":1}");
  assert_string_equal(s->out.data, "m v=1.0 1647216131813620000\n"
                                   "m v=1.0 1700000000000000000\n"
                                   "m v=1.0 -1500000000\n");
  src.time_unit_exp = -3;
  s = run(&src, "{\"ts\":1700000000123.456,\"v\":1}");
  assert_string_equal(s->out.data, "m v=1.0 1700000000123456000\n");
  src.time_unit_exp = -6;
  s = run(&src, "{\"ts\":1700000000123456,\"v\":1}");
  assert_string_equal(s->out.data, "m v=1.0 1700000000123456000\n");
  src.time_unit_exp = -9;
  s = run(&src, "{\"ts\":1700000000123456789,\"v\":1}\n{\"ts\":\"1700000000123456789\",\"v\":2}");
  assert_string_equal(s->out.data, "m v=1.0 1700000000123456789\n"
                                   "m v=2.0 1700000000123456789\n");
  src.time_unit_exp = 0;
  s = run(&src, "{\"ts\":1e300,\"v\":1}\n{\"ts\":true,\"v\":1}\n{\"v\":1}\n{\"ts\":null,\"v\":1}");
  assert_int_equal(s->nrejects, 4);
  assert_non_null(strstr(s->rejects, ":1: time key 'ts' is outside InfluxDB's time range"));
  assert_non_null(strstr(s->rejects, ":2: time key 'ts' is not a number"));
  assert_non_null(strstr(s->rejects, ":3: no time key 'ts'"));
  assert_non_null(strstr(s->rejects, ":4: no time key 'ts'"));
}

static void test_malformed_json_rejected_with_column(void **st) {
  (void)st;
  ps_source_cfg src = base_src();
  sink *s = run(&src, "{\"ts\":1,\"v\":1} x\n"
                      "{\"ts\":1,\"v\":}\n"
                      "[1,2]\n"
                      "{\"ts\":1,\"v\":NaN}\n"
                      "\n"
                      "   \n"
                      "{\"ts\":1,\"v\":1}   ");
  assert_int_equal(s->nrejects, 4);
  assert_non_null(strstr(s->rejects, "x.jsonl:1: column 16: trailing text"));
  assert_non_null(strstr(s->rejects, "x.jsonl:2: column 13: malformed JSON"));
  assert_non_null(strstr(s->rejects, "x.jsonl:3: column 1: not a JSON object"));
  /* NaN is absent (docs/schema.md), which leaves this point without a field */
  assert_non_null(strstr(s->rejects, "encode: point has no field"));
  assert_string_equal(s->out.data, "m v=1.0 1000000000\n");
}

static void test_encoder_refusal_reaches_driver(void **st) {
  (void)st;
  ps_source_cfg src = base_src();
  char *tags[] = {"t"};
  src.tag_keys = tags;
  src.ntag_keys = 1;
  sink *s = run(&src, "{\"ts\":1,\"t\":\"C:\\\\\",\"v\":1}\n{\"ts\":1,\"time\":1}\n{\"ts\":1}");
  assert_int_equal(s->nrejects, 3);
  assert_non_null(strstr(s->rejects, "tag value ends in a backslash"));
  assert_non_null(strstr(s->rejects, "'time'"));
  assert_non_null(strstr(s->rejects, "no field"));
}

static void test_eagain_passed_back_and_resumed(void **st) {
  (void)st;
  ps_source_cfg src = base_src();
  static sink s;
  memset(&s, 0, sizeof s);
  ps_buf_init(&s.out, 0);
  s.eagain_left = 1;
  ps_parser *p = NULL;
  ps_buf err;
  ps_buf_init(&err, 0);
  ps_input_head head = {.path = "x"};
  assert_int_equal(ps_format_jsonl.open(&p, &src, &head, &err), 0);
  ps_emitter em = {.point = sink_point, .reject = sink_reject, .ctx = &s,
                   .origin = {.file = "x", .line = 1}};
  const char *line = "{\"ts\":1,\"v\":1}";
  assert_int_equal(ps_format_jsonl.line(p, line, strlen(line), &em), -EAGAIN);
  assert_int_equal(s.out.len, 0);
  assert_int_equal(ps_format_jsonl.line(p, line, strlen(line), &em), 0);
  assert_string_equal(s.out.data, "m v=1.0 1000000000\n");
  ps_format_jsonl.free(p);
  ps_format_jsonl.free(NULL);
  ps_buf_free(&err);
  ps_buf_free(&s.out);
}

static void test_json_reader_strings_and_strictness(void **st) {
  (void)st;
  ps_source_cfg src = base_src();
  sink *s = run(&src,
                "{\"ts\":1,\"s\":\"\\u00e9\\ud83d\\ude00\\/\\t\",\"a\":[{\"x\":[1,{\"y\":2}]},[],{}],\"o\":{}}");
  assert_int_equal(s->nrejects, 0);
  assert_string_equal(s->out.data, "m s=\"\xc3\xa9\xf0\x9f\x98\x80/\t\" 1000000000\n");
  static const char *bad[] = {
      "{\"ts\":1,\"v\":01}",   "{\"ts\":1,\"v\":1.}",
      "{\"ts\":1,\"v\":-}",    "{\"ts\":1,\"v\":+1}",
      "{\"ts\":1,\"v\":.5}",   "{\"ts\":1,\"v\":\"\\ud800\"}",
      "{\"ts\":1,\"v\":\"\\udc00\"}", "{\"ts\":1,\"v\":\"\\u0000\"}",
      "{\"ts\":1,\"v\":\"\\x\"}",  "{\"ts\":1,\"v\":tru}",
      "{\"ts\":1,\"v\":1,}",   "{\"ts\":1 \"v\":1}",
      "{\"ts\":1,\"v\":\"open}", "{\"ts\":1,\"v\":[1,2}",
      "{\"ts\":1,\"v\":1e999}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    s = run(&src, bad[i]);
    if (s->nrejects != 1 || !strstr(s->rejects, "malformed JSON"))
      fail_msg("%s: %s", bad[i], s->rejects);
  }
  /* nesting is bounded: no stack overflow on hostile input */
  static char deep[4000];
  size_t n = (size_t)sprintf(deep, "{\"ts\":1,\"v\":");
  for (int i = 0; i < 1500; i++)
    deep[n++] = '[';
  deep[n] = '\0';
  s = run(&src, deep);
  assert_non_null(strstr(s->rejects, "nesting too deep"));
}


/* A JSON number of every shape the parser may copy or must format: up to
 * 18 integer digits, fractions with leading and trailing zeros, exponents,
 * signs, and the zeros. */
static size_t random_json_number(char *buf) {
  size_t n = 0;
  if (next_rand() % 4 == 0)
    buf[n++] = '-';
  unsigned idig = (unsigned)(next_rand() % 19);
  if (idig == 0 || next_rand() % 5 == 0) {
    buf[n++] = '0';
  } else {
    buf[n++] = (char)('1' + next_rand() % 9);
    for (unsigned i = 1; i < idig; i++)
      buf[n++] = (char)('0' + next_rand() % 10);
  }
  if (next_rand() % 3) {
    buf[n++] = '.';
    unsigned zeros = (unsigned)(next_rand() % 6), fdig = 1 + (unsigned)(next_rand() % 17);
    if (zeros >= fdig)
      zeros = fdig - 1; /* a digit after them */
    for (unsigned i = 0; i < zeros; i++)
      buf[n++] = '0';
    for (unsigned i = zeros; i < fdig; i++)
      buf[n++] = (char)('0' + next_rand() % 10);
    if (next_rand() % 6 == 0)
      buf[n++] = '0'; /* a trailing zero */
  }
  if (next_rand() % 10 == 0)
    n += (size_t)sprintf(buf + n, "e%d", (int)(next_rand() % 40) - 20);
  buf[n] = '\0';
  return n;
}

/* The line each number must become: the value's own encoding (glibc's
 * strtod and strtoll as the reference readers), so a copied text can only
 * pass by being exactly what the encoder writes. */
static void expect_line(ps_buf *want, const char *num, int as_int) {
  ps_field f[2];
  size_t nf = 0;
  if (!as_int) {
    f[nf++] = ps_field_float("f", strtod(num, NULL));
  } else {
    long long iv = strtoll(num, NULL, 10);
    f[nf++] = ps_field_int("i", iv);
    if (num[0] != '-') {
      f[nf] = ps_field_int("u", iv);
      f[nf].type = PS_F_UINT;
      f[nf++].v.u = (uint64_t)iv;
    }
  }
  ps_point pt = {.measurement = "m", .fields = f, .nfields = nf, .time_ns = 1000000000};
  assert_int_equal(ps_lp_encode(want, &pt, NULL, 0, NULL), 0);
}

/* The parser copies a number's own text into the line protocol when that
 * text is what the encoder would write anyway (ps_field.text); whatever the
 * text, the line must be the one the value encodes to. */
static void test_number_text_copied_only_when_it_is_the_formatted_value(void **st) {
  (void)st;
  enum { N = 200000 };
  ps_buf floats, ints, want_f, want_i;
  ps_buf_init(&floats, 0);
  ps_buf_init(&ints, 0);
  ps_buf_init(&want_f, 0);
  ps_buf_init(&want_i, 0);
  size_t nints = 0;
  for (size_t i = 0; i < N; i++) {
    char num[64], line[160];
    random_json_number(num);
    int k = snprintf(line, sizeof line, "{\"ts\":1,\"f\":%s}\n", num);
    assert_int_equal(ps_buf_append(&floats, line, (size_t)k), 0);
    expect_line(&want_f, num, 0);
    if (!strpbrk(num, ".e")) { /* 18 digits at most: fits */
      k = num[0] == '-' ? snprintf(line, sizeof line, "{\"ts\":1,\"i\":%s}\n", num)
                        : snprintf(line, sizeof line, "{\"ts\":1,\"i\":%s,\"u\":%s}\n", num, num);
      assert_int_equal(ps_buf_append(&ints, line, (size_t)k), 0);
      expect_line(&want_i, num, 1);
      nints++;
    }
  }
  ps_source_cfg src = base_src();
  sink *s = run(&src, floats.data);
  if (s->nrejects)
    fail_msg("%.300s", s->rejects);
  assert_string_equal(s->out.data, want_f.data);
  ps_type_decl types[] = {{"i", PS_F_INT}, {"u", PS_F_UINT}};
  src.types = types;
  src.ntypes = 2;
  s = run(&src, ints.data);
  assert_int_equal(s->nrejects, 0);
  assert_string_equal(s->out.data, want_i.data);
  assert_true(nints > N / 5);
  ps_buf_free(&floats);
  ps_buf_free(&ints);
  ps_buf_free(&want_f);
  ps_buf_free(&want_i);
}

static void test_line_not_nul_terminated(void **st) {
  (void)st;
  ps_source_cfg src = base_src();
  /* the driver hands a slice of a larger buffer */
  sink *s = run(&src, "{\"ts\":1,\"v\":2}\n{\"ts\":2,\"v\":3}");
  assert_string_equal(s->out.data, "m v=2.0 1000000000\nm v=3.0 2000000000\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_numbers_are_floats_unless_declared),
      cmocka_unit_test(test_declared_type_mismatch_rejects_with_reason),
      cmocka_unit_test(test_integers_beyond_2_53_exact),
      cmocka_unit_test(test_booleans_strings_null_flatten_arrays),
      cmocka_unit_test(test_nan_and_infinity_are_absent),
      cmocka_unit_test(test_tags_and_field_selection),
      cmocka_unit_test(test_time_units),
      cmocka_unit_test(test_malformed_json_rejected_with_column),
      cmocka_unit_test(test_encoder_refusal_reaches_driver),
      cmocka_unit_test(test_eagain_passed_back_and_resumed),
      cmocka_unit_test(test_json_reader_strings_and_strictness),
      cmocka_unit_test(test_line_not_nul_terminated),
      cmocka_unit_test(test_number_text_copied_only_when_it_is_the_formatted_value),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
