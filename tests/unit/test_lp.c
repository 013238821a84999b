/*
 * test_lp.c: the line-protocol encoder, number formatting and parser.
 *
 * Every escaping rule of the reference, and every client bug it lists as a
 * trap, is a named case here, so a regression says which history repeats.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "influx/lp_encode.h"
#include "influx/lp_parse.h"
#include "influx/numfmt.h"

#include "aux_rand.h"
#include "capture.h"
#include "formats/format.h"

#define T0 1700000000000000000LL

static ps_field fnum(const char *k, double v) {
  ps_field f = {.key = k, .type = PS_F_FLOAT};
  f.v.f = v;
  return f;
}
static ps_field fint(const char *k, int64_t v) {
  ps_field f = {.key = k, .type = PS_F_INT};
  f.v.i = v;
  return f;
}
static ps_field fstr(const char *k, const char *s) {
  ps_field f = {.key = k, .type = PS_F_STRING};
  f.v.s.p = s;
  f.v.s.n = strlen(s);
  return f;
}

/* Encodes and returns the line (static buffer) or NULL with *why set. */
static const char *enc(const char *m, const ps_tag *tags, size_t nt,
                       const ps_field *fs, size_t nf, const char **why) {
  static char line[1 << 17];
  ps_point p = {.measurement = m, .tags = tags, .ntags = nt, .fields = fs,
                .nfields = nf, .time_ns = T0};
  ps_buf b;
  ps_buf_init(&b, 0);
  const char *reason = NULL;
  int rc = ps_lp_encode(&b, &p, NULL, 0, &reason);
  if (why)
    *why = reason;
  if (rc) {
    assert_int_equal(b.len, 0); /* nothing half-written */
    ps_buf_free(&b);
    return NULL;
  }
  assert_true(b.len < sizeof line);
  memcpy(line, b.data, b.len + 1);
  ps_buf_free(&b);
  return line;
}

static const char *enc1(const char *m, const char *tk, const char *tv,
                        ps_field f, const char **why) {
  ps_tag t = {tk, tv};
  return enc(m, tk ? &t : NULL, tk ? 1 : 0, &f, 1, why);
}

/* --- escaping per element (reference 1.1) ------------------------------ */

static void test_measurement_escapes_comma_space_not_equals(void **st) {
  (void)st;
  assert_string_equal(enc1("a b,c=d", NULL, NULL, fnum("f", 1), NULL),
                      "a\\ b\\,c=d f=1.0 1700000000000000000\n");
}

static void test_tag_key_and_value_escape_comma_equals_space(void **st) {
  (void)st;
  assert_string_equal(enc1("m", "k ,=", "v ,=", fnum("f", 1), NULL),
                      "m,k\\ \\,\\==v\\ \\,\\= f=1.0 1700000000000000000\n");
}

static void test_field_key_escapes_comma_equals_space(void **st) {
  (void)st;
  assert_string_equal(enc1("m", NULL, NULL, fnum("a b,c=d", 2), NULL),
                      "m a\\ b\\,c\\=d=2.0 1700000000000000000\n");
}

static void test_string_field_escapes_quote_and_backslash_only(void **st) {
  (void)st;
  assert_string_equal(enc1("m", NULL, NULL, fstr("s", "a \"b\" \\c, d=e"), NULL),
                      "m s=\"a \\\"b\\\" \\\\c, d=e\" 1700000000000000000\n");
}

static void test_equals_in_tag_value_escaped_danesparza_5(void **st) {
  (void)st;
  assert_string_equal(enc1("m", "q", "a=b", fnum("f", 1), NULL),
                      "m,q=a\\=b f=1.0 1700000000000000000\n");
}

static void test_tag_value_never_quoted_fluentbit_592(void **st) {
  (void)st;
  const char *l = enc1("m", "host", "web 1", fnum("f", 1), NULL);
  assert_non_null(l);
  assert_null(strchr(l, '"'));
  assert_string_equal(l, "m,host=web\\ 1 f=1.0 1700000000000000000\n");
}

static void test_spaces_in_keys_and_values_escaped_fluentbit_785(void **st) {
  (void)st;
  assert_string_equal(enc1("m", "my tag", "my value", fnum("my field", 1), NULL),
                      "m,my\\ tag=my\\ value my\\ field=1.0 1700000000000000000\n");
}

static void test_backslash_in_string_escaped_once_fluentbit_1123(void **st) {
  (void)st;
  /* one backslash in, two out; never four (the over-escaping of #1455) */
  assert_string_equal(enc1("m", NULL, NULL, fstr("p", "C:\\dir"), NULL),
                      "m p=\"C:\\\\dir\" 1700000000000000000\n");
}

static void test_backslash_in_tag_value_not_doubled_fluentbit_803(void **st) {
  (void)st;
  /* InfluxDB 1.x never unescapes \\ in a tag: doubling would store two */
  assert_string_equal(enc1("m", "p", "C:\\dir", fnum("f", 1), NULL),
                      "m,p=C:\\dir f=1.0 1700000000000000000\n");
}

static void test_trailing_backslash_tag_refused_influxdb_5407(void **st) {
  (void)st;
  const char *why;
  assert_null(enc1("m", "path", "C:\\", fnum("f", 1), &why));
  assert_non_null(strstr(why, "tag value ends in a backslash"));
  assert_null(enc1("m", "path\\", "x", fnum("f", 1), &why));
  assert_non_null(strstr(why, "tag key ends in a backslash"));
}

static void test_trailing_backslash_tag_refused_influxdb_python_537(void **st) {
  (void)st;
  const char *why;
  assert_null(enc1("m", "dir", "\\\\server\\share\\", fnum("f", 1), &why));
  assert_non_null(strstr(why, "backslash"));
}

static void test_newline_in_tag_value_refused_influxdb_java_578(void **st) {
  (void)st;
  const char *why;
  assert_null(enc1("m", "t", "a\nb", fnum("f", 1), &why));
  assert_string_equal(why, "CR or LF in tag value");
}

static void test_cr_in_tag_value_refused_influxdb_python_716(void **st) {
  (void)st;
  const char *why;
  assert_null(enc1("m", "t", "a\rb", fnum("f", 1), &why));
  assert_string_equal(why, "CR or LF in tag value");
  assert_null(enc1("m\n", NULL, NULL, fnum("f", 1), &why));
  assert_string_equal(why, "CR or LF in measurement");
  assert_null(enc1("m", NULL, NULL, fnum("f\r", 1), &why));
  assert_string_equal(why, "CR or LF in field key");
}

static void test_already_escaped_backslash_not_reescaped_influxdb_client_python_302(
    void **st) {
  (void)st;
  /* the value is taken literally: "a\\,b" (backslash, comma) is the raw
   * backslash and an escaped comma, which 1.x reads back as "a\\,b" */
  assert_string_equal(enc1("m", "t", "a\\,b", fnum("f", 1), NULL),
                      "m,t=a\\\\,b f=1.0 1700000000000000000\n");
  /* a string field has real escapes, so the same text round-trips there */
  assert_string_equal(enc1("m", NULL, NULL, fstr("s", "a\\,b"), NULL),
                      "m s=\"a\\\\,b\" 1700000000000000000\n");
}

static void test_string_field_ending_in_backslash(void **st) {
  (void)st;
  /* MikaelGRA/InfluxDB.Client#28: the closing quote must stay unescaped */
  assert_string_equal(enc1("m", NULL, NULL, fstr("s", "C:\\"), NULL),
                      "m s=\"C:\\\\\" 1700000000000000000\n");
}

static void test_backslash_comma_ambiguity_refused_influxdb_6008(void **st) {
  (void)st;
  const char *why;
  assert_null(enc1("m\\,x", NULL, NULL, fnum("f", 1), &why));
  assert_non_null(strstr(why, "measurement has a backslash"));
  assert_null(enc1("m", NULL, NULL, fnum("a\\ b", 1), &why));
  assert_non_null(strstr(why, "field key has a backslash"));
  assert_null(enc1("m", NULL, NULL, fnum("a\\\"b", 1), &why));
}

static void test_float_roundtrip_not_percent_f_influxdb_python_431(void **st) {
  (void)st;
  char b[32];
  ps_fmt_double(0.1, b);
  assert_string_equal(b, "0.1");
  ps_fmt_double(1e-10, b);
  assert_true(strtod(b, NULL) == 1e-10);
  ps_fmt_double(1647216131.81362, b);
  assert_string_equal(b, "1647216131.81362");
  ps_fmt_double(0.30000000000000004, b);
  assert_string_equal(b, "0.30000000000000004");
  ps_fmt_double(123456.789e300, b);
  assert_true(strtod(b, NULL) == 123456.789e300);
  ps_fmt_double(5e-324, b);
  assert_true(strtod(b, NULL) == 5e-324);
  ps_fmt_double(1.7976931348623157e308, b);
  assert_true(strtod(b, NULL) == 1.7976931348623157e308);
}

static void test_int_float_type_stable_influxdb_3460(void **st) {
  (void)st;
  /* a whole float stays a float (no i), an integer always has its i */
  assert_string_equal(enc1("m", NULL, NULL, fnum("f", 100.0), NULL),
                      "m f=100.0 1700000000000000000\n");
  assert_string_equal(enc1("m", NULL, NULL, fint("f", 100), NULL),
                      "m f=100i 1700000000000000000\n");
}

/* --- refusals ------------------------------------------------------------ */

static void test_nan_and_inf_refused(void **st) {
  (void)st;
  const char *why;
  assert_null(enc1("m", NULL, NULL, fnum("f", NAN), &why));
  assert_non_null(strstr(why, "NaN"));
  assert_null(enc1("m", NULL, NULL, fnum("f", INFINITY), &why));
  assert_null(enc1("m", NULL, NULL, fnum("f", -INFINITY), &why));
}

static void test_empty_names_refused(void **st) {
  (void)st;
  const char *why;
  assert_null(enc1("", NULL, NULL, fnum("f", 1), &why));
  assert_string_equal(why, "empty measurement");
  assert_null(enc1("m", "", "v", fnum("f", 1), &why));
  assert_string_equal(why, "empty tag key");
  assert_null(enc1("m", NULL, NULL, fnum("", 1), &why));
  assert_string_equal(why, "empty field key");
}

static void test_measurement_starting_with_hash_refused(void **st) {
  (void)st;
  /* the server would take the whole line for a comment and drop it */
  const char *why;
  assert_null(enc1("#m", NULL, NULL, fnum("f", 1), &why));
  assert_non_null(strstr(why, "comment"));
  assert_non_null(enc1("m#", NULL, NULL, fnum("f", 1), NULL));
}

static void test_empty_tag_value_left_out(void **st) {
  (void)st;
  assert_string_equal(enc1("m", "t", "", fnum("f", 1), NULL),
                      "m f=1.0 1700000000000000000\n");
}

static void test_key_named_time_refused(void **st) {
  (void)st;
  const char *why;
  assert_null(enc1("m", NULL, NULL, fnum("time", 1), &why));
  assert_non_null(strstr(why, "'time'"));
  assert_null(enc1("m", "time", "x", fnum("f", 1), &why));
}

static void test_duplicate_tag_keys_refused(void **st) {
  (void)st;
  ps_tag t[] = {{"a", "1"}, {"b", "2"}, {"a", "3"}};
  ps_field f = fnum("f", 1);
  const char *why;
  assert_null(enc("m", t, 3, &f, 1, &why));
  assert_string_equal(why, "duplicate tag key");
}

static void test_no_field_refused(void **st) {
  (void)st;
  const char *why;
  assert_null(enc("m", NULL, 0, NULL, 0, &why));
  assert_string_equal(why, "point has no field");
}

static void test_timestamp_range(void **st) {
  (void)st;
  ps_field f = fnum("f", 1);
  ps_buf b;
  ps_buf_init(&b, 0);
  const char *why;
  ps_point p = {.measurement = "m", .fields = &f, .nfields = 1};
  p.time_ns = INT64_MAX;
  assert_true(ps_lp_encode(&b, &p, NULL, 0, &why) < 0);
  p.time_ns = INT64_MIN;
  assert_true(ps_lp_encode(&b, &p, NULL, 0, &why) < 0);
  p.time_ns = PS_LP_MAX_TIME_NS;
  assert_int_equal(ps_lp_encode(&b, &p, NULL, 0, &why), 0);
  p.time_ns = PS_LP_MIN_TIME_NS;
  assert_int_equal(ps_lp_encode(&b, &p, NULL, 0, &why), 0);
  assert_string_equal(b.data, "m f=1.0 9223372036854775806\n"
                              "m f=1.0 -9223372036854775806\n");
  ps_buf_free(&b);
}

static void test_invalid_utf8_refused(void **st) {
  (void)st;
  const char *why;
  assert_null(enc1("m", "t", "a\xff", fnum("f", 1), &why));
  assert_string_equal(why, "invalid UTF-8 in tag value");
  assert_null(enc1("m", NULL, NULL, fstr("s", "\xc0\xaf"), &why)); /* overlong */
  assert_null(enc1("m", NULL, NULL, fstr("s", "\xed\xa0\x80"), &why)); /* surrogate */
  assert_non_null(enc1("m\xc3\xa9", "t", "\xe2\x82\xac", fstr("s", "\xf0\x9f\x98\x80"),
                       NULL));
}

static void test_newline_in_string_field_becomes_backslash_n(void **st) {
  (void)st;
  assert_string_equal(enc1("m", NULL, NULL, fstr("s", "a\nb\r\nc"), NULL),
                      "m s=\"a\\\\nb\\\\r\\\\nc\" 1700000000000000000\n");
}

static void test_string_of_only_newlines_fits(void **st) {
  (void)st;
  /* each LF grows to three bytes; the fuzzer once found the reserve short */
  static char nl[4001], want[12100];
  memset(nl, '\n', 4000);
  char *w = want + sprintf(want, "m s=\"");
  for (int i = 0; i < 4000; i++)
    w += sprintf(w, "\\\\n");
  sprintf(w, "\" 1700000000000000000\n");
  assert_string_equal(enc1("m", NULL, NULL, fstr("s", nl), NULL), want);
}

static void test_refusal_leaves_buffer_unchanged(void **st) {
  (void)st;
  ps_buf b;
  ps_buf_init(&b, 0);
  ps_buf_puts(&b, "keep\n");
  ps_field fs[] = {fnum("a", 1), fnum("b", NAN)};
  ps_point p = {.measurement = "m", .fields = fs, .nfields = 2, .time_ns = 1};
  const char *why;
  assert_true(ps_lp_encode(&b, &p, NULL, 0, &why) < 0);
  assert_string_equal(b.data, "keep\n");
  ps_buf_free(&b);
}

/* --- types ---------------------------------------------------------------- */

static void test_all_types(void **st) {
  (void)st;
  ps_field fs[6] = {fnum("f", -1.5), fint("i", INT64_MIN), fint("j", INT64_MAX),
                    {.key = "u", .type = PS_F_UINT}, {.key = "b", .type = PS_F_BOOL},
                    {.key = "c", .type = PS_F_BOOL}};
  fs[3].v.u = UINT64_MAX;
  fs[4].v.b = 1;
  fs[5].v.b = 0;
  assert_string_equal(enc("m", NULL, 0, fs, 6, NULL),
                      "m f=-1.5,i=-9223372036854775808i,j=9223372036854775807i,"
                      "u=18446744073709551615u,b=true,c=false 1700000000000000000\n");
}

static void test_fmt_int64_extremes(void **st) {
  (void)st;
  char b[24];
  assert_int_equal(ps_fmt_int64(INT64_MIN, b), 20);
  assert_string_equal(b, "-9223372036854775808");
  ps_fmt_int64(INT64_MAX, b);
  assert_string_equal(b, "9223372036854775807");
  ps_fmt_int64(0, b);
  assert_string_equal(b, "0");
  ps_fmt_int64(-1, b);
  assert_string_equal(b, "-1");
  for (int64_t v = -100000; v < 100000; v += 7) {
    char r[24];
    snprintf(r, sizeof r, "%lld", (long long)v);
    ps_fmt_int64(v, b);
    assert_string_equal(b, r);
  }
}


/* Significant digits of a printed number: without sign, point, exponent,
 * leading and trailing zeros ("100.0" has one, "0.00123" three). */
static int sig_digits(const char *s) {
  char d[40];
  size_t n = 0;
  for (const char *p = s; *p && *p != 'e' && *p != 'E'; p++)
    if (*p >= '0' && *p <= '9' && n < sizeof d)
      d[n++] = *p;
  size_t lo = 0;
  while (lo < n && d[lo] == '0')
    lo++;
  while (n > lo && d[n - 1] == '0')
    n--;
  return n > lo ? (int)(n - lo) : 1;
}

static void check_double(double v) {
  char b[40];
  size_t n = ps_fmt_double(v, b);
  assert_int_equal(n, strlen(b));
  assert_true(n < 32);
  double back = strtod(b, NULL);
  if (memcmp(&back, &v, sizeof v) != 0)
    fail_msg("%.17g printed as %s reads back as %.17g", v, b, back);
}

static void test_fmt_double_roundtrip_random_bits(void **st) {
  (void)st;
  for (int i = 0; i < 300000; i++) {
    uint64_t x = next_rand();
    double v;
    memcpy(&v, &x, sizeof v);
    if (isfinite(v))
      check_double(v);
  }
}

static void test_fmt_double_roundtrip_and_shortest_typical(void **st) {
  (void)st;
  for (int i = 0; i < 200000; i++) {
    double v = (double)(next_rand() >> 11) / 9007199254740992.0 *
               pow(10, (int)(next_rand() % 24) - 9);
    if (i % 2)
      v = round(v * 1000) / 1000;
    check_double(v);
    if (i % 10 == 0) {
      char b[40], r[40];
      ps_fmt_double(v, b);
      int p;
      for (p = 1; p < 17; p++) {
        snprintf(r, sizeof r, "%.*g", p, v);
        if (strtod(r, NULL) == v)
          break;
      }
      if (sig_digits(b) > p)
        fail_msg("%s is not shortest: %.*g has %d digits", b, p, v, p);
    }
  }
  char b[40];
  ps_fmt_double(-0.0, b);
  assert_string_equal(b, "-0.0");
  ps_fmt_double(9007199254740991.0, b);
  assert_string_equal(b, "9007199254740991.0");
  ps_fmt_double(1e16, b);
  assert_string_equal(b, "1e+16");
  ps_fmt_double(0.0001, b);
  assert_string_equal(b, "0.0001");
  ps_fmt_double(0.00001234, b);
  assert_string_equal(b, "1.234e-05");
  ps_fmt_double(5e-324, b);
  assert_string_equal(b, "5e-324");
  ps_fmt_double(1.7976931348623157e308, b);
  assert_string_equal(b, "1.7976931348623157e+308");
  ps_fmt_double(0.5, b);
  assert_string_equal(b, "0.5");
  ps_fmt_double(-2.25, b);
  assert_string_equal(b, "-2.25");
}

/* Between 1e-4 and 2^31 the shortest form is plain decimals: the fewest
 * fraction digits that read back (at least ".0"), which printf's %.*f
 * rounds exactly. Values of a few decimals take ps_fmt_double's short cut,
 * the others its general path; both must print exactly this. */
static void expect_fixed_repr(double v) {
  char want[64], got[40];
  int k;
  for (k = 1; k < 30; k++) {
    snprintf(want, sizeof want, "%.*f", k, v);
    if (strtod(want, NULL) == v)
      break;
  }
  size_t n = strlen(want);
  while (n > 2 && want[n - 1] == '0' && want[n - 2] != '.')
    want[--n] = '\0';
  ps_fmt_double(v, got);
  if (strcmp(got, want) != 0)
    fail_msg("%.17g printed as %s, expected %s", v, got, want);
}

static void test_fmt_double_few_decimals_is_repr(void **st) {
  (void)st;
  static const double p10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  for (int i = 0; i < 300000; i++) {
    uint64_t r = next_rand();
    int k = (int)(r % 9);
    double m = (double)((r >> 8) % (i % 3 ? 100000ULL : 21474836480000000ULL));
    double v = m / p10[k];
    if (v >= 1e-4 && v < 2147483648.0)
      expect_fixed_repr(i % 5 ? v : -v);
  }
  for (int i = 0; i < 100000; i++) { /* any double of the range */
    double v = 1e-4 + (double)(next_rand() >> 11) / 9007199254740992.0 * 2147483648.0;
    if (i % 2)
      v = ldexp(v, -(int)(next_rand() % 40));
    if (v >= 1e-4 && v < 2147483648.0)
      expect_fixed_repr(v);
  }
  double edges[] = {1e-4, 0.00010000000000000002, 0.1, 0.7, 1.1, 2147483647.5,
                    2147483647.999999, 2147483647.9999998, 1073741823.000001,
                    999999.999999, 0.000123, 135.3, 527.5};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
    expect_fixed_repr(edges[i]);
}

/* --- tag order and global tags ------------------------------------------- */

static void test_tags_sorted_bytewise(void **st) {
  (void)st;
  ps_tag t[] = {{"zeta", "1"}, {"Alpha", "2"}, {"alpha", "3"}, {"b", "4"}};
  ps_field f = fnum("f", 1);
  assert_string_equal(enc("m", t, 4, &f, 1, NULL),
                      "m,Alpha=2,alpha=3,b=4,zeta=1 f=1.0 1700000000000000000\n");
}

static void test_global_tags_merged_point_wins(void **st) {
  (void)st;
  ps_tag own[] = {{"run", "r1"}, {"host", "mine"}};
  ps_tag extra[] = {{"host", "bench-1"}, {"dc", "x"}};
  ps_field f = fnum("f", 1);
  ps_point p = {.measurement = "m", .tags = own, .ntags = 2, .fields = &f,
                .nfields = 1, .time_ns = 5};
  ps_buf b;
  ps_buf_init(&b, 0);
  assert_int_equal(ps_lp_encode(&b, &p, extra, 2, NULL), 0);
  assert_string_equal(b.data, "m,dc=x,host=mine,run=r1 f=1.0 5\n");
  p.ntags = 0;
  ps_buf_reset(&b);
  assert_int_equal(ps_lp_encode(&b, &p, extra, 2, NULL), 0);
  assert_string_equal(b.data, "m,dc=x,host=bench-1 f=1.0 5\n");
  ps_buf_free(&b);
}

static void test_too_many_tags_refused(void **st) {
  (void)st;
  static ps_tag t[PS_LP_MAX_TAGS + 1];
  static char keys[PS_LP_MAX_TAGS + 1][8];
  for (int i = 0; i <= PS_LP_MAX_TAGS; i++) {
    snprintf(keys[i], sizeof keys[i], "k%03d", PS_LP_MAX_TAGS - i);
    t[i].key = keys[i];
    t[i].value = "v";
  }
  ps_field f = fnum("f", 1);
  const char *why;
  assert_null(enc("m", t, PS_LP_MAX_TAGS + 1, &f, 1, &why));
  const char *l = enc("m", t + 1, PS_LP_MAX_TAGS, &f, 1, NULL);
  assert_non_null(l);
  assert_memory_equal(l, "m,k000=v,k001=v", 15);
}

static void test_series_key_limit(void **st) {
  (void)st;
  static char big[70000];
  memset(big, 'x', sizeof big - 1);
  const char *why;
  assert_null(enc1("m", "t", big, fnum("f", 1), &why));
  assert_non_null(strstr(why, "65535"));
}

/* --- parser ---------------------------------------------------------------- */

static const char *norm(const char *in, const char **why) {
  static ps_buf b;
  ps_buf_free(&b);
  ps_buf_init(&b, 0);
  int rc = ps_lp_parse_line(&b, in, strlen(in), NULL, 0, why);
  if (rc == 1)
    return "";
  return rc ? NULL : b.data;
}

static void test_parse_normalises(void **st) {
  (void)st;
  assert_string_equal(norm("m,b=2,a=1 x=1.50,i=-3i,u=7u,s=\"q\\\"\\\\\",t=T,f=FALSE 123", NULL),
                      "m,a=1,b=2 f=false,i=-3i,s=\"q\\\"\\\\\",t=true,u=7u,x=1.5 123\n");
  assert_string_equal(norm("  m  x=1e3,y=.5,z=-0.0 -5  ", NULL),
                      "m x=1000.0,y=0.5,z=-0.0 -5\n");
  assert_string_equal(norm("a\\ b\\,c=d,k\\=1=v\\ 2 f\\=x=1 9", NULL),
                      "a\\ b\\,c=d,k\\=1=v\\ 2 f\\=x=1.0 9\n");
  assert_string_equal(norm("", NULL), "");
  assert_string_equal(norm("# comment", NULL), "");
}

/* influxdata's line-protocol corpus and InfluxDB 1.6.7 agree: in a name a
 * backslash escapes only its element's separators, and `\\` is no escape
 * there, so `a\\ b` is a backslash and an escaped space. */
static void test_parse_backslash_before_escaped_separator(void **st) {
  (void)st;
  ps_lp_scratch s;
  ps_lp_scratch_init(&s);
  ps_point p;
  const char *why;
  const char *line = "cpu,regions=\\\\ east,s=\\\\,\\,\\t,h=two\\\\\\ words v=1 1";
  assert_int_equal(ps_lp_parse_point(&s, line, strlen(line), &p, &why), 0);
  assert_int_equal(p.ntags, 3);
  assert_string_equal(p.tags[0].value, "\\ east");
  assert_string_equal(p.tags[1].value, "\\,,\\t");
  assert_string_equal(p.tags[2].value, "two\\\\ words");
  ps_lp_scratch_free(&s);
  /* and the encoder writes them back so that they read the same */
  assert_string_equal(norm("m,t=a\\\\ b,u=x\\\\=y v=1 1", NULL), "m,t=a\\\\ b,u=x\\\\=y v=1.0 1\n");
  /* a measurement or field key cannot carry it: 1.6.7 drops the backslash
   * of `m\\ x` and refuses the field key `f\\ g` */
  const char *why2 = NULL;
  assert_null(norm("m\\\\ x v=1 1", &why2));
  assert_non_null(strstr(why2, "measurement has a backslash"));
}

/* The `lp` format fed `n` lines of x.lp one by one, as the tailer does,
 * their points and rejects into `cap`. */
static void feed_lp_lines(capture *cap, const char *const *lines, size_t n) {
  ps_emitter em = cap_emitter(cap, "x.lp");
  ps_input_head head = {.path = "x.lp"};
  ps_parser *p = NULL;
  ps_buf err;
  ps_buf_init(&err, 0);
  assert_int_equal(ps_format_lp.open(&p, NULL, &head, &err), 0);
  for (size_t i = 0; i < n; i++) {
    em.origin.line = i + 1;
    assert_int_equal(ps_format_lp.line(p, lines[i], strlen(lines[i]), &em), 0);
  }
  ps_format_lp.free(p);
  ps_buf_free(&err);
}

/* The `lp` format fed line by line as the tailer does: a raw newline in a
 * string is one reject at the record's first line, the lines up to the
 * closing quote go with it, and a good line after a stray quote lands. */
static void test_format_raw_newline_in_string_one_reject(void **st) {
  (void)st;
  static const char *lines[] = {"m v=\"a", "b\" 1",        "m v=2 2", "m v=\"x", "m v=3 3",
                                "m v=\"p", "q \\\" still", "r\" 4",   "m v=5 5"};
  capture cap = {0};
  feed_lp_lines(&cap, lines, sizeof lines / sizeof *lines);
  assert_int_equal(cap.npoints, 3);
  assert_int_equal(cap.points[0].line, 3);
  assert_int_equal(cap.points[1].line, 5);
  assert_int_equal(cap.points[2].line, 9);
  assert_int_equal(cap.nrejects, 3);
  assert_int_equal(cap.rejects[0].line, 1);
  assert_int_equal(cap.rejects[1].line, 4);
  assert_int_equal(cap.rejects[2].line, 6);
  assert_non_null(strstr(cap.rejects[0].reason, "raw newline in a string"));
  cap_free(&cap);
}

/* The `lp` format writes an unsigned value as an integer (InfluxDB 1.x has
 * no unsigned type) and refuses the line of one above 2^63 - 1 with its
 * reason; the lines around it land. */
static void test_format_unsigned_as_integer(void **st) {
  (void)st;
  static const char *lines[] = {"m u=5u,i=2i 1", "m u=18446744073709551615u 2",
                                "m u=9223372036854775807u 3", "m u=9223372036854775808u 4"};
  capture cap = {0};
  feed_lp_lines(&cap, lines, sizeof lines / sizeof *lines);
  assert_int_equal(cap.npoints, 2);
  assert_string_equal(cap.points[0].text, "m||i:i=2,u:i=5|1");
  assert_string_equal(cap.points[1].text, "m||u:i=9223372036854775807|3");
  assert_int_equal(cap.nrejects, 2);
  assert_int_equal(cap.rejects[0].line, 2);
  assert_int_equal(cap.rejects[1].line, 4);
  assert_string_equal(cap.rejects[0].reason,
                      "field 'u': unsigned 18446744073709551615u does not fit an integer (at "
                      "most 9223372036854775807), and InfluxDB 1.x has no unsigned type");
  cap_free(&cap);
}

static void test_parse_roundtrip_of_encoded(void **st) {
  (void)st;
  ps_tag t[] = {{"k y", "v,=1"}, {"p", "C:\\x"}};
  ps_field fs[] = {fnum("a b", 0.1), fint("n", -42),
                   fstr("s", "he said \"hi\" \\o/")};
  const char *l = enc("m e,a", t, 2, fs, 3, NULL);
  assert_non_null(l);
  char copy[512];
  snprintf(copy, sizeof copy, "%s", l);
  copy[strlen(copy) - 1] = '\0';
  assert_string_equal(norm(copy, NULL), l);
}

static void test_parse_rejects(void **st) {
  (void)st;
  const char *why;
  static const struct {
    const char *line, *reason;
  } cases[] = {
      {"m f=1", "missing timestamp"},
      {"m", "no fields"},
      {"m,t f=1 1", "tag without"},
      {"m,t= f=1 1", "missing tag value"},
      {"m f= 1", "missing field value"},
      {"m f=yes 1", "invalid field value"},
      {"m f=+1 1", "invalid field value"},
      {"m f=\"open 1", "unterminated"},
      {"m f=9223372036854775808i 1", "integer out of range"},
      {"m f=1 1.5", "bad timestamp"},
      {"m f=1 9223372036854775807", "range"},
      {"m f=1 1 2", "after the timestamp"},
      {"m f=NaN 1", "invalid field value"},
      {"m time=1 1", "'time'"},
      {"m,a=1,a=2 f=1 1", "duplicate tag key"},
      {"m,t=a\\ f=1 1", "field without"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    why = NULL;
    if (norm(cases[i].line, &why) != NULL)
      fail_msg("accepted: %s", cases[i].line);
    if (!why || !strstr(why, cases[i].reason))
      fail_msg("%s: reason '%s' lacks '%s'", cases[i].line, why ? why : "(null)",
               cases[i].reason);
  }
}

static void test_parse_float_equals_strtod(void **st) {
  (void)st;
  /* the parser's fast decimal path must give strtod's double, bit for bit */
  ps_lp_scratch s;
  ps_lp_scratch_init(&s);
  char line[96], num[64];
  for (int i = 0; i < 200000; i++) {
    uint64_t r = next_rand();
    int frac = (int)(r % 12), ex = (int)((r >> 8) % 60) - 30;
    unsigned long long whole = (r >> 16) % 1000000000ULL;
    unsigned long long fd = (next_rand() % 1000000000000ULL);
    switch (i % 4) {
    case 0:
      snprintf(num, sizeof num, "%llu.%0*llu", whole, frac, fd % 1000000000000ULL);
      break;
    case 1:
      snprintf(num, sizeof num, "-%llu.%llue%d", whole % 1000, fd, ex);
      break;
    case 2:
      snprintf(num, sizeof num, "0.%0*llu", frac + 1, fd % 100000);
      break;
    default:
      snprintf(num, sizeof num, "%llu%lluE+%d", whole, fd, ex < 0 ? -ex : ex);
    }
    if (strlen(num) > 2 && num[strlen(num) - 1] == '.')
      continue;
    int n = snprintf(line, sizeof line, "m f=%s 1", num);
    ps_point p;
    const char *why;
    if (ps_lp_parse_point(&s, line, (size_t)n, &p, &why) != 0)
      fail_msg("%s: %s", line, why);
    double want = strtod(num, NULL);
    if (memcmp(&want, &p.fields[0].v.f, sizeof want) != 0)
      fail_msg("%s parsed as %.17g, strtod says %.17g", num, p.fields[0].v.f, want);
  }
  ps_lp_scratch_free(&s);
}

static void test_parse_point_column(void **st) {
  (void)st;
  ps_lp_scratch s;
  ps_lp_scratch_init(&s);
  ps_point p;
  const char *why;
  assert_true(ps_lp_parse_point(&s, "m f=oops 1", 10, &p, &why) < 0);
  assert_int_equal(s.err_col, 5);
  assert_int_equal(ps_lp_parse_point(&s, "m,t=1 f=1,g=\"x\" 7", 17, &p, &why), 0);
  assert_string_equal(p.measurement, "m");
  assert_int_equal(p.ntags, 1);
  assert_int_equal(p.nfields, 2);
  assert_int_equal(p.fields[1].v.s.n, 1);
  assert_int_equal(p.time_ns, 7);
  ps_lp_scratch_free(&s);
  ps_lp_scratch_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format_unsigned_as_integer),
      cmocka_unit_test(test_measurement_escapes_comma_space_not_equals),
      cmocka_unit_test(test_tag_key_and_value_escape_comma_equals_space),
      cmocka_unit_test(test_field_key_escapes_comma_equals_space),
      cmocka_unit_test(test_string_field_escapes_quote_and_backslash_only),
      cmocka_unit_test(test_equals_in_tag_value_escaped_danesparza_5),
      cmocka_unit_test(test_tag_value_never_quoted_fluentbit_592),
      cmocka_unit_test(test_spaces_in_keys_and_values_escaped_fluentbit_785),
      cmocka_unit_test(test_backslash_in_string_escaped_once_fluentbit_1123),
      cmocka_unit_test(test_backslash_in_tag_value_not_doubled_fluentbit_803),
      cmocka_unit_test(test_trailing_backslash_tag_refused_influxdb_5407),
      cmocka_unit_test(test_trailing_backslash_tag_refused_influxdb_python_537),
      cmocka_unit_test(test_newline_in_tag_value_refused_influxdb_java_578),
      cmocka_unit_test(test_cr_in_tag_value_refused_influxdb_python_716),
      cmocka_unit_test(test_already_escaped_backslash_not_reescaped_influxdb_client_python_302),
      cmocka_unit_test(test_string_field_ending_in_backslash),
      cmocka_unit_test(test_backslash_comma_ambiguity_refused_influxdb_6008),
      cmocka_unit_test(test_float_roundtrip_not_percent_f_influxdb_python_431),
      cmocka_unit_test(test_int_float_type_stable_influxdb_3460),
      cmocka_unit_test(test_nan_and_inf_refused),
      cmocka_unit_test(test_empty_names_refused),
      cmocka_unit_test(test_measurement_starting_with_hash_refused),
      cmocka_unit_test(test_empty_tag_value_left_out),
      cmocka_unit_test(test_key_named_time_refused),
      cmocka_unit_test(test_duplicate_tag_keys_refused),
      cmocka_unit_test(test_no_field_refused),
      cmocka_unit_test(test_timestamp_range),
      cmocka_unit_test(test_invalid_utf8_refused),
      cmocka_unit_test(test_newline_in_string_field_becomes_backslash_n),
      cmocka_unit_test(test_string_of_only_newlines_fits),
      cmocka_unit_test(test_refusal_leaves_buffer_unchanged),
      cmocka_unit_test(test_all_types),
      cmocka_unit_test(test_fmt_int64_extremes),
      cmocka_unit_test(test_fmt_double_roundtrip_random_bits),
      cmocka_unit_test(test_fmt_double_roundtrip_and_shortest_typical),
      cmocka_unit_test(test_fmt_double_few_decimals_is_repr),
      cmocka_unit_test(test_tags_sorted_bytewise),
      cmocka_unit_test(test_global_tags_merged_point_wins),
      cmocka_unit_test(test_too_many_tags_refused),
      cmocka_unit_test(test_series_key_limit),
      cmocka_unit_test(test_parse_normalises),
      cmocka_unit_test(test_parse_roundtrip_of_encoded),
      cmocka_unit_test(test_parse_rejects),
      cmocka_unit_test(test_parse_float_equals_strtod),
      cmocka_unit_test(test_parse_point_column),
      cmocka_unit_test(test_parse_backslash_before_escaped_separator),
      cmocka_unit_test(test_format_raw_newline_in_string_one_reject),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
