/*
 * test_config: defaults, the annotated sample, and that every kind of mistake
 * is reported at the right FILE:LINE with the key named.
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
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "formats/format.h"
#include "aux_tmpdir.h"

#ifndef PS_SOURCE_DIR
#define PS_SOURCE_DIR PS_TEST_DATA "/../.."
#endif

static char tmpdir[256];

static int setup_dir(void **state) {
  (void)state;
  return aux_tmpdir_make(tmpdir, sizeof tmpdir, "config");
}

static int teardown_dir(void **state) {
  (void)state;
  return aux_tmpdir_remove(tmpdir);
}

/* Writes `text` to tmpdir/perfship.cfg and returns the path. */
static const char *write_cfg(const char *text) {
  static char path[300];
  snprintf(path, sizeof path, "%s/perfship.cfg", tmpdir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

/* Loads `text`; expects failure and that the message contains every one of
 * the NULL-terminated needles. */
static void expect_error(const char *text, ...) {
  const char *path = write_cfg(text);
  ps_config c;
  ps_config_defaults(&c);
  ps_buf err;
  ps_buf_init(&err, 4096);
  int rc = ps_config_load(&c, path, ps_format_source_rules, &err);
  if (rc >= 0)
    fail_msg("expected an error for:\n%s", text);
  assert_non_null(err.data);
  va_list ap;
  va_start(ap, text);
  for (const char *n; (n = va_arg(ap, const char *));)
    if (!strstr(err.data, n))
      fail_msg("message \"%s\" lacks \"%s\"", err.data, n);
  va_end(ap);
  ps_buf_free(&err);
  ps_config_free(&c);
}

static void load_ok(const char *text, ps_config *c) {
  const char *path = write_cfg(text);
  ps_config_defaults(c);
  ps_buf err;
  ps_buf_init(&err, 4096);
  int rc = ps_config_load(c, path, ps_format_source_rules, &err);
  if (rc < 0)
    fail_msg("unexpected error: %s", err.data);
  ps_buf_free(&err);
}

static void test_defaults(void **state) {
  (void)state;
  ps_config c;
  ps_config_defaults(&c);
  assert_null(c.file);
  assert_string_equal(c.influxdb.url, "http://127.0.0.1:8086");
  assert_int_equal(c.influxdb.api, PS_API_V1);
  assert_string_equal(c.influxdb.database, "perf");
  assert_int_equal(c.influxdb.gzip, PS_GZIP_AUTO);
  assert_int_equal(c.influxdb.timeout_ms, 10000);
  assert_true(c.influxdb.tls_verify);
  assert_true(c.influxdb.create_database);
  assert_int_equal(c.influxdb.unreachable_deadline_s, 300);
  assert_int_equal(c.batch.max_points, 5000);
  assert_int_equal(c.batch.max_bytes, 1048576);
  assert_int_equal(c.batch.flush_interval_ms, 1000);
  assert_int_equal(c.batch.max_pending_bytes, 4194304);
  assert_int_equal(c.watch.rescan_interval_ms, 30000);
  assert_int_equal(c.watch.settle_ms, 2000);
  assert_int_equal(c.watch.max_line_bytes, 67108864);
  assert_int_equal(c.watch.start_at, PS_START_BEGINNING);
  assert_int_equal(c.selfstats.interval_ms, 10000);
  assert_string_equal(c.state_dir, "/var/lib/perfship");
  assert_int_equal(c.alerts.stall_after_s, 1800);
  assert_int_equal(c.alerts.no_new_run_after_s, 93600);
  assert_int_equal(c.alerts.unhealthy_after_s, 600);
  assert_int_equal(c.alerts.catch_up_s, 21600);
  assert_int_equal(c.alerts.min_interval_s, 300);
  assert_int_equal(c.alerts.exec_timeout_ms, 10000);
  assert_int_equal(c.alerts.nexec, 0);
  assert_false(c.alerts.webhook.given);
  assert_null(ps_config_webhook_url(&c));
  /* every event but improvement */
  assert_int_equal(c.alerts.on, PS_ALERT_ON_DEFAULT);
  assert_true(c.alerts.on & PS_ALERT_BIT(PS_ALERT_AGENT_RECOVERED));
  assert_false(c.alerts.on & PS_ALERT_BIT(PS_ALERT_IMPROVEMENT));
  assert_int_equal(c.log_level, PS_LOG_INFO);
  assert_int_equal(c.nsources, 0);
  assert_int_equal(c.ntags, 0);
  assert_null(c.influxdb.password);
  ps_config_free(&c);
  ps_config_free(NULL);

  ps_source_cfg s;
  ps_source_defaults(&s);
  assert_int_equal(s.format, PS_FMT_JSONL);
  assert_string_equal(s.measurement, "jsonl");
  assert_int_equal(s.time_unit_exp, 0);
  assert_int_equal(s.no_new_run_after_s, -1); /* alerts' own */
  ps_source_free(&s);
  ps_source_free(NULL);
}

static void test_empty_file_keeps_defaults(void **state) {
  (void)state;
  ps_config c;
  load_ok("# nothing\n", &c);
  assert_string_equal(c.influxdb.database, "perf");
  assert_int_equal(c.batch.max_points, 5000);
  assert_non_null(c.file);
  ps_config_free(&c);
}

static void test_sample_loads(void **state) {
  (void)state;
  ps_config c;
  ps_config_defaults(&c);
  ps_buf err;
  ps_buf_init(&err, 4096);
  int rc = ps_config_load(&c, PS_SOURCE_DIR "/config/perfship.cfg", ps_format_source_rules, &err);
  if (rc < 0)
    fail_msg("sample: %s", err.data);
  assert_int_equal(c.nsources, 3);
  assert_string_equal(c.sources[0].path, "/srv/loadgen/results");
  assert_int_equal(c.sources[0].format, PS_FMT_LOADGEN);
  assert_int_equal(c.sources[1].format, PS_FMT_DSS_BENCH);
  const ps_source_cfg *j = &c.sources[2];
  assert_int_equal(j->format, PS_FMT_JSONL);
  assert_string_equal(j->measurement, "app");
  assert_string_equal(j->time_key, "ts");
  assert_int_equal(j->ntag_keys, 1);
  assert_string_equal(j->tag_keys[0], "stage");
  assert_int_equal(j->ntypes, 1);
  assert_string_equal(j->types[0].key, "count");
  assert_int_equal(j->types[0].type, PS_F_INT);
  assert_true(j->line > 0);
  /* the sample leaves `host` to the machine's name: two machines that keep
   * it must not write one series */
  assert_int_equal(c.ntags, 0);
  /* the sample states the defaults */
  assert_int_equal(c.batch.max_bytes, 1048576);
  assert_int_equal(c.alerts.stall_after_s, 1800);
  assert_int_equal(c.alerts.no_new_run_after_s, 93600);
  assert_int_equal(c.alerts.catch_up_s, 21600);
  assert_int_equal(c.alerts.on, PS_ALERT_ON_DEFAULT);
  assert_int_equal(c.sources[0].no_new_run_after_s, -1);
  assert_int_equal(c.sources[1].no_new_run_after_s, 0); /* DSS runs are irregular */
  assert_int_equal(c.alerts.nexec, 0); /* channels are commented out */
  assert_false(c.alerts.webhook.given);
  ps_buf_free(&err);
  ps_config_free(&c);
}

static void test_full_values(void **state) {
  (void)state;
  ps_config c;
  load_ok("influxdb = { url = \"https://db.example:8086/\"; api = \"v2\"; org = \"o\";\n"
          "  bucket = \"b\"; gzip = false; tls_verify = false; timeout_ms = 5000L; };\n"
          "batch = { max_bytes = 2097152L; max_pending_bytes = 10000000000; };\n"
          "watch = { start_at = \"end\"; settle_ms = 0; };\n"
          "log_level = \"debug\";\n"
          "sources = ( { path = \"/x/*.jsonl\"; format = \"jsonl\"; time_key = \"t\";\n"
          "  time_unit = \"ms\"; field_keys = [\"a\", \"b\"];\n"
          "  types = { a = \"unsigned\"; b = \"boolean\"; }; } );\n",
          &c);
  assert_int_equal(c.influxdb.api, PS_API_V2);
  assert_int_equal(c.influxdb.gzip, PS_GZIP_OFF);
  assert_false(c.influxdb.tls_verify);
  assert_int_equal(c.influxdb.timeout_ms, 5000);
  assert_int_equal(c.batch.max_bytes, 2097152);
  /* a plain literal above 32 bits keeps its value */
  assert_true(c.batch.max_pending_bytes == 10000000000LL);
  assert_int_equal(c.watch.start_at, PS_START_END);
  assert_int_equal(c.watch.settle_ms, 0);
  assert_int_equal(c.log_level, PS_LOG_DEBUG);
  assert_int_equal(c.sources[0].time_unit_exp, -3);
  assert_string_equal(c.sources[0].measurement, "jsonl");
  assert_int_equal(c.sources[0].nfield_keys, 2);
  assert_int_equal(c.sources[0].types[0].type, PS_F_UINT);
  assert_int_equal(c.sources[0].types[1].type, PS_F_BOOL);
  ps_config_free(&c);

  load_ok("influxdb = { gzip = \"on\"; };\n", &c);
  assert_int_equal(c.influxdb.gzip, PS_GZIP_ON);
  ps_config_free(&c);

  /* plain literals mean what they say, whatever libconfig keeps of them */
  load_ok("batch = { max_points = 010; max_pending_bytes = 0x100000000; };\n"
          "watch = {\n  max_line_bytes = 4294967296;\n};\n", &c);
  assert_int_equal(c.batch.max_points, 10);
  assert_true(c.batch.max_pending_bytes == 0x100000000LL);
  assert_true(c.watch.max_line_bytes == 4294967296LL);
  ps_config_free(&c);
}

static void test_unknown_keys(void **state) {
  (void)state;
  expect_error("batch = {\n  max_points = 10;\n  flush_intervall_ms = 5;\n};\n",
               "perfship.cfg:3: ", "unknown key 'flush_intervall_ms' in batch",
               "did you mean 'flush_interval_ms'?", NULL);
  expect_error("state_dir = \"/x\";\nstatedir = \"/y\";\n", "perfship.cfg:2: ",
               "'statedir'", "did you mean 'state_dir'", NULL);
  expect_error("influxdb = {\n  pasword_file = \"/x\";\n};\n", "perfship.cfg:2: ",
               "in influxdb", "'password_file'", NULL);
  expect_error("sources = (\n  { path = \"/a\"; format = \"loadgen\"; },\n"
               "  { path = \"/b\";\n    fromat = \"lp\"; }\n);\n",
               "perfship.cfg:4: ", "unknown key 'fromat' in source 2",
               "did you mean 'format'", NULL);
  expect_error("sources = ( { path = \"/a\"; format = \"jsonl\"; time_key = \"t\";\n"
               "  types = { n = \"integer\"; }; tagkeys = [\"x\"]; } );\n",
               "perfship.cfg:2: ", "'tagkeys'", "'tag_keys'", NULL);
  /* nothing close: list what is known instead */
  expect_error("watch = { zzzzzzzzzz = 1; };\n", "perfship.cfg:1: ", "known keys:",
               "rescan_interval_ms", NULL);
  expect_error("selfstats = { interval = 5; };\nalerts = { stall = 1; };\n",
               "perfship.cfg:1: ", "in selfstats", NULL);
  expect_error("alerts = {\n stall_after = 1; };\n", "perfship.cfg:2: ",
               "did you mean 'stall_after_s'", NULL);
}

static void test_wrong_types(void **state) {
  (void)state;
  expect_error("\ninfluxdb = {\n  timeout_ms = \"5000\";\n};\n", "perfship.cfg:3: ",
               "key 'influxdb.timeout_ms'", "expected an integer", "got a string", NULL);
  expect_error("batch = { max_points = 1.5; };\n", "perfship.cfg:1: ",
               "key 'batch.max_points'", "got a float", NULL);
  expect_error("influxdb = { url = 8086; };\n", "key 'influxdb.url'",
               "expected a string", NULL);
  expect_error("influxdb = { tls_verify = \"yes\"; };\n", "key 'influxdb.tls_verify'",
               "true or false", NULL);
  expect_error("batch = 5;\n", "perfship.cfg:1: ", "key 'batch'", "expected a group",
               NULL);
  expect_error("tags = { host = 1; };\n", "key 'tags.host'", "expected a string", NULL);
  expect_error("tags = [\"a\"];\n", "key 'tags'", NULL);
  expect_error("sources = { path = \"/a\"; format = \"lp\"; };\n", "key 'sources'",
               "wrap it in parentheses", NULL);
  expect_error("sources = ( \"/a\" );\n", "source 1", "expected a group", NULL);
  expect_error("sources = ( { path = \"/a\"; format = \"jsonl\"; time_key = \"t\";\n"
               "  tag_keys = \"x\"; } );\n", "perfship.cfg:2: ", "tag_keys", NULL);
  expect_error("sources = ( { path = \"/a\"; format = \"jsonl\"; time_key = \"t\";\n"
               "  tag_keys = (\"x\", 1); } );\n", "perfship.cfg:2: ", "element 2", NULL);
  /* libconfig itself refuses mixed arrays; still a FILE:LINE message */
  expect_error("sources = ( { path = \"/a\"; format = \"jsonl\"; time_key = \"t\";\n"
               "  tag_keys = [\"x\", 1]; } );\n", "perfship.cfg:2: ", NULL);
  expect_error("log_level = 3;\n", "key 'log_level'", "expected a string", NULL);
}

static void test_bad_enums(void **state) {
  (void)state;
  expect_error("influxdb = {\n api = \"v3\"; };\n", "perfship.cfg:2: ",
               "key 'influxdb.api'", "\"v3\"", "\"v1\" or \"v2\"", NULL);
  expect_error("influxdb = { gzip = \"yes\"; };\n", "key 'influxdb.gzip'", "\"auto\"",
               NULL);
  expect_error("watch = { start_at = \"now\"; };\n", "key 'watch.start_at'",
               "\"beginning\" or \"end\"", NULL);
  expect_error("log_level = \"warn\";\n", "key 'log_level'", "\"warning\"", NULL);
  expect_error("sources = (\n { path = \"/a\";\n   format = \"dss\"; } );\n",
               "perfship.cfg:3: ", "key 'sources[1].format'", "\"dss-bench\"", NULL);
  expect_error("sources = ( { path = \"/a\"; format = \"jsonl\"; time_key = \"t\";\n"
               " time_unit = \"sec\"; } );\n", "perfship.cfg:2: ", "time_unit",
               "\"ms\"", NULL);
  expect_error("sources = ( { path = \"/a\"; format = \"jsonl\"; time_key = \"t\";\n"
               " types = {\n  n = \"int\"; }; } );\n", "perfship.cfg:3: ",
               "types.n", "\"integer\"", NULL);
}

static void test_ranges(void **state) {
  (void)state;
  expect_error("batch = { max_points = 0; };\n", "key 'batch.max_points'", "1 to 1000000",
               NULL);
  expect_error("batch = { max_points = 1000001; };\n", "key 'batch.max_points'", NULL);
  expect_error("batch = { max_bytes = 1023; };\n", "key 'batch.max_bytes'", "1024", NULL);
  /* 10^10 would be 1410065408 after libconfig's 32-bit cut: still refused */
  expect_error("batch = { max_bytes = 10000000000; };\n", "key 'batch.max_bytes'",
               "10000000000", NULL);
  expect_error("batch = { flush_interval_ms = -1; };\n", "batch.flush_interval_ms", NULL);
  expect_error("watch = { rescan_interval_ms = 0; };\n", "watch.rescan_interval_ms", NULL);
  expect_error("watch = { settle_ms = -5; };\n", "watch.settle_ms", NULL);
  expect_error("selfstats = { interval_ms = 0; };\n", "selfstats.interval_ms", NULL);
  expect_error("alerts = { stall_after_s = 0; };\n", "alerts.stall_after_s", NULL);
  /* Durations are turned into nanoseconds or added to the loop's clock:
   * a huge one must be refused, not overflow. */
  expect_error("alerts = { stall_after_s = 9223372036854775807L; };\n",
               "alerts.stall_after_s", "out of range", NULL);
  expect_error("influxdb = { unreachable_deadline_s = 9223372036854775807L; };\n",
               "influxdb.unreachable_deadline_s", "out of range", NULL);
  expect_error("watch = { settle_ms = 100000000000L; };\n", "watch.settle_ms",
               "out of range", NULL);
  expect_error("influxdb = { timeout_ms = 0; };\n", "influxdb.timeout_ms", NULL);
  expect_error("influxdb = { unreachable_deadline_s = 0L; };\n",
               "influxdb.unreachable_deadline_s", NULL);
  expect_error("influxdb = { url = \"127.0.0.1:8086\"; };\n", "key 'influxdb.url'",
               "http://HOST:PORT", NULL);
  expect_error("influxdb = { url = \"http://\"; };\n", "key 'influxdb.url'", NULL);
  expect_error("influxdb = { url = \"ftp://h\"; };\n", "key 'influxdb.url'", NULL);
  /* A password in the URL would be printed by check, mark and the
   * unreachable-server messages; the refusal itself must not echo it. */
  {
    const char *path =
        write_cfg("influxdb = { url = \"http://admin:s3cret@db:8086\"; };\n");
    ps_config c;
    ps_config_defaults(&c);
    ps_buf err;
    ps_buf_init(&err, 4096);
    assert_true(ps_config_load(&c, path, ps_format_source_rules, &err) < 0);
    assert_non_null(strstr(err.data, "credentials"));
    assert_null(strstr(err.data, "s3cret"));
    ps_buf_free(&err);
    ps_config_free(&c);
  }
  expect_error("state_dir = \"\";\n", "key 'state_dir'", "must not be empty", NULL);
  expect_error("batch = { max_bytes = 4096; max_pending_bytes = 2048; };\n",
               "perfship.cfg:1: ", "max_pending_bytes", NULL);
  expect_error("influxdb = {\n database = \"\"; };\n", "perfship.cfg:1: ",
               "influxdb.database", NULL);
  expect_error("influxdb = { api = \"v2\"; };\n", "influxdb.bucket", NULL);
  expect_error("tags = { time = \"x\"; };\n", "tags.time", NULL);
  expect_error("tags = { a = \"\"; };\n", "tags.a", "empty", NULL);
}

static void test_source_rules(void **state) {
  (void)state;
  expect_error("sources = (\n { format = \"loadgen\"; } );\n", "perfship.cfg:2: ",
               "source 1 has no 'path'", NULL);
  expect_error("sources = (\n { path = \"/r\"; } );\n", "perfship.cfg:2: ",
               "no 'format'", NULL);
  expect_error("sources = (\n { path = \"/r\"; format = \"loadgen\";\n"
               "   measurement = \"m\"; } );\n",
               "perfship.cfg:3: ", "'measurement'", "only jsonl sources", NULL);
  expect_error("sources = (\n { path = \"/r\"; format = \"jsonl\"; } );\n",
               "perfship.cfg:2: ", "time_key", NULL);
}

static void test_parse_errors_and_missing_file(void **state) {
  (void)state;
  expect_error("influxdb = {\n  url = \"http://x\";\n  api = ;\n};\n",
               "perfship.cfg:3: ", "syntax error", NULL);
  expect_error("a = 1;\na = 2;\n", "perfship.cfg:2: ", NULL);

  ps_config c;
  ps_config_defaults(&c);
  ps_buf err;
  ps_buf_init(&err, 4096);
  char path[300];
  snprintf(path, sizeof path, "%s/does-not-exist.cfg", tmpdir);
  assert_int_equal(ps_config_load(&c, path, ps_format_source_rules, &err), -ENOENT);
  assert_non_null(strstr(err.data, path));
  ps_buf_reset(&err);
  assert_true(ps_config_load(&c, tmpdir, ps_format_source_rules, &err) < 0);
  assert_non_null(strstr(err.data, "directory"));
  ps_buf_free(&err);
  ps_config_free(&c);
}

static void test_helpers(void **state) {
  (void)state;
  ps_format_id f;
  assert_int_equal(ps_format_from_name("dss-bench", &f), 0);
  assert_int_equal(f, PS_FMT_DSS_BENCH);
  assert_string_equal(ps_format_name(PS_FMT_LOCUST), "locust");
  assert_string_equal(ps_format_name(PS_FMT_LP), "lp");
  assert_int_equal(ps_format_from_name("csv", &f), -EINVAL);
  assert_int_equal(ps_format_from_name(NULL, &f), -EINVAL);
  ps_ftype t;
  assert_int_equal(ps_ftype_from_name("boolean", &t), 0);
  assert_int_equal(t, PS_F_BOOL);
  assert_int_equal(ps_ftype_from_name("bool", &t), -EINVAL);
  int e;
  assert_int_equal(ps_time_unit_from_name("us", &e), 0);
  assert_int_equal(e, -6);
  assert_int_equal(ps_time_unit_from_name("ns", &e), 0);
  assert_int_equal(e, -9);
  assert_int_equal(ps_time_unit_from_name("m", &e), -EINVAL);
}

static void write_secret(const char *name, const char *content, mode_t mode,
                         char *path, size_t pathsz) {
  snprintf(path, pathsz, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(content, f);
  fclose(f);
  assert_int_equal(chmod(path, mode), 0);
}

static void test_secrets(void **state) {
  (void)state;
  char pw[300], tok[300], cfgtext[1024];
  write_secret("pw", "hunter2\n", 0600, pw, sizeof pw);
  write_secret("tok", "tok-123\r\n", 0400, tok, sizeof tok);
  snprintf(cfgtext, sizeof cfgtext,
           "influxdb = { username = \"u\"; password_file = \"%s\"; token_file = \"%s\"; };\n",
           pw, tok);
  ps_config c;
  load_ok(cfgtext, &c);
  ps_buf err;
  ps_buf_init(&err, 4096);
  unsetenv("PERFSHIP_TOKEN");
  assert_int_equal(ps_config_load_secrets(&c, &err), 0);
  assert_string_equal(c.influxdb.password, "hunter2");
  assert_string_equal(c.influxdb.token, "tok-123");
  /* the environment wins over token_file */
  setenv("PERFSHIP_TOKEN", "from-env", 1);
  assert_int_equal(ps_config_load_secrets(&c, &err), 0);
  assert_string_equal(c.influxdb.token, "from-env");
  /* it becomes a header line: a line break in it is refused, unquoted */
  setenv("PERFSHIP_TOKEN", "tok\r\nX-Forged: 1", 1);
  ps_buf_reset(&err);
  assert_true(ps_config_load_secrets(&c, &err) < 0);
  assert_non_null(strstr(err.data, "PERFSHIP_TOKEN"));
  assert_null(strstr(err.data, "Forged"));
  assert_string_equal(c.influxdb.token, "from-env");
  unsetenv("PERFSHIP_TOKEN");
  ps_config_free(&c);

  /* group- or world-accessible: refused, naming the file and the fix, and
   * never quoting the secret */
  write_secret("pw-open", "hunter3\n", 0644, pw, sizeof pw);
  snprintf(cfgtext, sizeof cfgtext,
           "influxdb = { username = \"u\"; password_file = \"%s\"; };\n", pw);
  load_ok(cfgtext, &c);
  ps_buf_reset(&err);
  assert_int_equal(ps_config_load_secrets(&c, &err), -EPERM);
  assert_non_null(strstr(err.data, pw));
  assert_non_null(strstr(err.data, "chmod 600"));
  assert_null(strstr(err.data, "hunter3"));
  assert_null(c.influxdb.password);
  ps_config_free(&c);

  write_secret("pw-group", "x\n", 0640, pw, sizeof pw);
  snprintf(cfgtext, sizeof cfgtext, "influxdb = { password_file = \"%s\"; };\n", pw);
  load_ok(cfgtext, &c);
  ps_buf_reset(&err);
  assert_int_equal(ps_config_load_secrets(&c, &err), -EPERM);
  ps_config_free(&c);

  write_secret("empty", "\n", 0600, pw, sizeof pw);
  snprintf(cfgtext, sizeof cfgtext, "influxdb = { password_file = \"%s\"; };\n", pw);
  load_ok(cfgtext, &c);
  ps_buf_reset(&err);
  assert_int_equal(ps_config_load_secrets(&c, &err), -EINVAL);
  assert_non_null(strstr(err.data, "empty"));
  ps_config_free(&c);

  snprintf(cfgtext, sizeof cfgtext,
           "influxdb = { token_file = \"%s/none\"; };\n", tmpdir);
  load_ok(cfgtext, &c);
  ps_buf_reset(&err);
  assert_int_equal(ps_config_load_secrets(&c, &err), -ENOENT);
  assert_non_null(strstr(err.data, "none"));
  ps_config_free(&c);
  ps_buf_free(&err);
}

/* ---- verdicts = { ... } ---------------------------------------------- */

/* The seven defaults the documentation lists (docs/verdicts.md). */
static void expect_verdict_defaults(const ps_verdicts_cfg *v) {
  assert_true(v->significance == 0.05);
  assert_int_equal(v->min_runs, 5);
  assert_int_equal(v->window_runs, 60);
  assert_true(v->stage_drift_pct == 10.0);
  assert_true(v->dss.min_change_pct == 5.0);
  assert_string_equal(v->dss.reference_arm, "");
  static const char *names[] = {"cycleAvgDuration",
                                "cycleSuccessRate",
                                "live_avgSwingsetTime",
                                "live_avgBlockDuration",
                                "chainBootstrapDuration",
                                "walletDeployDuration",
                                "loadgenDeployDuration",
                                "kernelObjectsPerCycle",
                                "kpUnresolvedPerCycle",
                                "clistEntriesPerCycle",
                                "x_n_star",
                                "gamma",
                                "latency_low_load_s"};
  assert_int_equal(v->nmetrics, 13);
  for (size_t i = 0; i < 13; i++) {
    const ps_verdict_metric_cfg *m = &v->metrics[i];
    assert_string_equal(m->name, names[i]);
    assert_true(m->enabled);
    if (i == 1) {
      assert_int_equal(m->worse, PS_WORSE_LOWER);
      assert_int_equal(m->unit, PS_CHANGE_POINTS);
      assert_true(m->min_change == 2.0);
    } else if (i == 12) { /* the benchmarker's latency: higher is worse, 5 % */
      assert_int_equal(m->worse, PS_WORSE_HIGHER);
      assert_int_equal(m->unit, PS_CHANGE_PERCENT);
      assert_true(m->min_change == 5.0);
    } else if (i >= 10) { /* the benchmarker's fit: lower is worse, 5 % */
      assert_int_equal(m->worse, PS_WORSE_LOWER);
      assert_int_equal(m->unit, PS_CHANGE_PERCENT);
      assert_true(m->min_change == 5.0);
    } else if (i >= 7) { /* growth per cycle: a whole count per cycle */
      assert_int_equal(m->worse, PS_WORSE_HIGHER);
      assert_int_equal(m->unit, PS_CHANGE_POINTS);
      assert_true(m->min_change == 1.0);
    } else {
      assert_int_equal(m->worse, PS_WORSE_HIGHER);
      assert_int_equal(m->unit, PS_CHANGE_PERCENT);
      assert_true(m->min_change == 5.0);
    }
  }
}

static void test_verdicts_defaults(void **state) {
  (void)state;
  ps_config c;
  ps_config_defaults(&c);
  expect_verdict_defaults(&c.verdicts);
  assert_null(ps_verdict_metric_find(&c.verdicts, "live_avgLag"));
  assert_ptr_equal(ps_verdict_metric_find(&c.verdicts, "cycleSuccessRate"),
                   &c.verdicts.metrics[1]);
  ps_config_free(&c);

  /* the annotated sample writes every default out */
  ps_config_defaults(&c);
  ps_buf err;
  ps_buf_init(&err, 4096);
  if (ps_config_load(&c, PS_SOURCE_DIR "/config/perfship.cfg", ps_format_source_rules, &err) < 0)
    fail_msg("sample: %s", err.data);
  expect_verdict_defaults(&c.verdicts);
  ps_buf_free(&err);
  ps_config_free(&c);
}

static void test_verdicts_values(void **state) {
  (void)state;
  ps_config c;
  load_ok("verdicts = {\n"
          "  significance = 0.01;\n"
          "  min_runs = 8;\n"
          "  window_runs = 120;\n"
          "  stage_drift_pct = 15;\n" /* an integer is a number too */
          "  metrics = {\n"
          "    cycleAvgDuration = { min_change = 8.5; };\n"
          "    cycleSuccessRate = { min_change = 5.0; unit = \"points\"; };\n"
          "    walletDeployDuration = { enabled = false; };\n"
          "    live_avgLag = { worse = \"higher\"; min_change = 20.0; };\n"
          "    live_avgComputrons = { worse = \"lower\"; unit = \"points\"; min_change = 1e5; };\n"
          "  };\n"
          "  dss = { min_change_pct = 2.5; reference_arm = \"interuss/dss:v0.22.0\"; };\n"
          "};\n",
          &c);
  const ps_verdicts_cfg *v = &c.verdicts;
  assert_true(v->significance == 0.01);
  assert_int_equal(v->min_runs, 8);
  assert_int_equal(v->window_runs, 120);
  assert_true(v->stage_drift_pct == 15.0);
  assert_true(v->dss.min_change_pct == 2.5);
  assert_string_equal(v->dss.reference_arm, "interuss/dss:v0.22.0");
  assert_int_equal(v->nmetrics, 15);
  /* a default metric keeps what the file does not change */
  const ps_verdict_metric_cfg *m = ps_verdict_metric_find(v, "cycleAvgDuration");
  assert_true(m->min_change == 8.5);
  assert_int_equal(m->worse, PS_WORSE_HIGHER);
  assert_int_equal(m->unit, PS_CHANGE_PERCENT);
  assert_true(m->enabled);
  m = ps_verdict_metric_find(v, "cycleSuccessRate");
  assert_int_equal(m->worse, PS_WORSE_LOWER);
  assert_true(m->min_change == 5.0);
  assert_false(ps_verdict_metric_find(v, "walletDeployDuration")->enabled);
  /* added metrics, after the defaults */
  assert_string_equal(v->metrics[13].name, "live_avgLag");
  assert_int_equal(v->metrics[13].worse, PS_WORSE_HIGHER);
  assert_int_equal(v->metrics[13].unit, PS_CHANGE_PERCENT);
  assert_true(v->metrics[13].min_change == 20.0);
  assert_true(v->metrics[13].enabled);
  assert_string_equal(v->metrics[14].name, "live_avgComputrons");
  assert_int_equal(v->metrics[14].worse, PS_WORSE_LOWER);
  assert_int_equal(v->metrics[14].unit, PS_CHANGE_POINTS);
  assert_true(v->metrics[14].min_change == 1e5);
  ps_config_free(&c);

  /* an empty group changes nothing */
  load_ok("verdicts = { metrics = { }; dss = { }; };\n", &c);
  expect_verdict_defaults(&c.verdicts);
  ps_config_free(&c);
}

static void test_verdicts_mistakes(void **state) {
  (void)state;
  /* typos get the nearest key, at every level */
  expect_error("verdicts = {\n  signficance = 0.05;\n};\n", "perfship.cfg:2: ",
               "unknown key 'signficance' in verdicts", "did you mean 'significance'?",
               NULL);
  expect_error("verdicts = {\n dss = {\n  reference = \"a\"; };\n};\n", "perfship.cfg:3: ",
               "unknown key 'reference' in verdicts.dss", "'reference_arm'", NULL);
  expect_error("verdicts = { metrics = {\n  cycleAvgDuration = {\n   min_chnage = 3.0; };\n"
               "}; };\n",
               "perfship.cfg:3: ", "in verdicts.metrics.cycleAvgDuration",
               "did you mean 'min_change'?", NULL);
  /* a metric is a loadgen_run field */
  expect_error("verdicts = { metrics = {\n  cycleAvgDuraton = { min_change = 3.0; };\n"
               "}; };\n",
               "perfship.cfg:2: ", "'cycleAvgDuraton' is not a run figure a verdict can judge",
               "did you mean 'cycleAvgDuration'?", NULL);
  expect_error("verdicts = { metrics = {\n  rps_total = { worse = \"lower\"; };\n}; };\n",
               "perfship.cfg:2: ", "'rps_total' is not a run figure a verdict can judge", NULL);
  /* a metric that is not judged by default must say which way is worse */
  expect_error("verdicts = { metrics = {\n  live_avgLag = { min_change = 3.0; };\n}; };\n",
               "perfship.cfg:2: ", "verdicts.metrics.live_avgLag",
               "worse = \"higher\"", NULL);
  expect_error("verdicts = { metrics = {\n  live_avgLag = 3.0;\n}; };\n", "perfship.cfg:2: ",
               "expected a group", NULL);
  expect_error("verdicts = { metrics = (1, 2); };\n", "perfship.cfg:1: ",
               "key 'verdicts.metrics'", NULL);
  /* bad values */
  expect_error("verdicts = { metrics = {\n  cycleAvgDuration = { worse = \"up\"; };\n}; };\n",
               "perfship.cfg:2: ", "verdicts.metrics.cycleAvgDuration.worse",
               "\"higher\" or \"lower\"", NULL);
  expect_error("verdicts = { metrics = {\n  cycleSuccessRate = { unit = \"%\"; };\n}; };\n",
               "perfship.cfg:2: ", "\"percent\" or \"points\"", NULL);
  expect_error("verdicts = { metrics = {\n  cycleSuccessRate = { min_change = -1.0; };\n"
               "}; };\n",
               "perfship.cfg:2: ", "-1 is out of range", NULL);
  expect_error("verdicts = { metrics = {\n  cycleSuccessRate = { enabled = \"no\"; };\n"
               "}; };\n",
               "perfship.cfg:2: ", "expected true or false", NULL);
  expect_error("verdicts = {\n significance = 0.5; };\n", "perfship.cfg:2: ",
               "'verdicts.significance'", "from 0.001 to 0.2", NULL);
  expect_error("verdicts = {\n significance = \"0.05\"; };\n", "perfship.cfg:2: ",
               "expected a number", NULL);
  expect_error("verdicts = {\n min_runs = 5.5; };\n", "perfship.cfg:2: ",
               "'verdicts.min_runs'", "expected an integer", NULL);
  expect_error("verdicts = {\n min_runs = 2; };\n", "perfship.cfg:2: ", "from 4 to 1000",
               NULL);
  expect_error("verdicts = {\n window_runs = 100000; };\n", "perfship.cfg:2: ",
               "from 4 to 1000", NULL);
  expect_error("verdicts = {\n stage_drift_pct = -5.0; };\n", "perfship.cfg:2: ",
               "stage_drift_pct", NULL);
  expect_error("verdicts = {\n dss = { min_change_pct = 5000.0; }; };\n", "perfship.cfg:2: ",
               "verdicts.dss.min_change_pct", NULL);
  /* two keys that only make sense together */
  expect_error("verdicts = {\n min_runs = 30;\n window_runs = 20; };\n", "perfship.cfg:1: ",
               "window_runs", "less than verdicts.min_runs", NULL);
  /* the compare link goes into pages and chat: http(s) with both revisions */
  expect_error("verdicts = {\n compare_url = \"javascript:alert({good}{bad})\"; };\n",
               "perfship.cfg:2: ", "verdicts.compare_url", "http:// or https://", NULL);
  expect_error("verdicts = {\n compare_url = \"https://git/{good}\"; };\n",
               "perfship.cfg:2: ", "verdicts.compare_url", NULL);
  expect_error("verdicts = {\n compare_url = \"https://git/{good}...{bad}\\\"x\"; };\n",
               "perfship.cfg:2: ", "verdicts.compare_url", NULL);
  /* a sane length and character set: pages of 100 MB came of a template
   * with {good} 10,000 times; a tab or newline would break a chat line */
  expect_error("verdicts = {\n compare_url = \"https://git/{good}\t{bad}\"; };\n",
               "perfship.cfg:2: ", "verdicts.compare_url", "control character \\u0009", NULL);
  expect_error("verdicts = {\n\n compare_url = \"https://git/{good}\n{bad}\"; };\n",
               "perfship.cfg:3: ", "control character \\u000a at byte 19", NULL);
  expect_error("verdicts = {\n compare_url = \"https://git/{good}{good}{bad}{bad}{good}\"; };\n",
               "perfship.cfg:2: ", "5 placeholders, more than 4", NULL);
  {
    ps_buf big;
    ps_buf_init(&big, 0);
    ps_buf_puts(&big, "verdicts = {\n compare_url = \"https://git/");
    for (int i = 0; i < 10000; i++)
      ps_buf_puts(&big, "{good}");
    ps_buf_puts(&big, "{bad}\"; };\n");
    expect_error(big.data, "perfship.cfg:2: ", "60017 bytes, more than the 1024", NULL);
    ps_buf_free(&big);
  }
  expect_error("verdicts = {\n candidates = { series = [\"manual\"]; }; };\n",
               "perfship.cfg:1: ", "verdicts.candidates.against", NULL);
  expect_error("verdicts = {\n candidates = { series = [\"manual\", \"daily-perf\"]; "
               "against = \"daily-perf\"; }; };\n",
               "perfship.cfg:1: ", "not its own candidate", NULL);
  ps_config c;
  load_ok("verdicts = {\n candidates = { series = [\"manual\"]; against = \"daily-perf\"; };\n"
          " compare_url = \"https://github.com/Agoric/agoric-sdk/compare/{good}...{bad}\"; };\n",
          &c);
  assert_int_equal(c.verdicts.candidates.nseries, 1);
  assert_string_equal(c.verdicts.candidates.series[0], "manual");
  assert_string_equal(c.verdicts.candidates.against, "daily-perf");
  assert_string_equal(c.verdicts.compare_url,
                      "https://github.com/Agoric/agoric-sdk/compare/{good}...{bad}");
  ps_config_free(&c);
}

/* alerts (docs/alerts.md): every key read, each mistake named. */
static void test_alerts(void **state) {
  (void)state;
  ps_config c;
  load_ok("alerts = {\n"
          "  stall_after_s = 60; no_new_run_after_s = 0; unhealthy_after_s = 30;\n"
          "  catch_up_s = 7200; min_interval_s = 0; exec_timeout_ms = 2500;\n"
          "  exec = [\"/usr/local/bin/notify\", \"--channel\", \"perf team\"];\n"
          "  webhook = { url = \"https://hooks.example/T0/B0/secret?x=1\"; format = \"slack\";\n"
          "              timeout_ms = 1500; tls_ca_file = \"/etc/ca.pem\"; };\n"
          "  on = [\"run_failed\", \"improvement\"];\n"
          "};\n"
          "sources = ( { path = \"/r\"; format = \"loadgen\"; no_new_run_after_s = 3600; },\n"
          "            { path = \"/d\"; format = \"dss-bench\"; no_new_run_after_s = 0; },\n"
          "            { path = \"/l\"; format = \"lp\"; } );\n",
          &c);
  assert_int_equal(c.alerts.stall_after_s, 60);
  assert_int_equal(c.alerts.no_new_run_after_s, 0);
  assert_int_equal(c.alerts.unhealthy_after_s, 30);
  assert_int_equal(c.alerts.catch_up_s, 7200);
  assert_int_equal(c.alerts.min_interval_s, 0);
  assert_int_equal(c.alerts.exec_timeout_ms, 2500);
  assert_int_equal(c.alerts.nexec, 3);
  assert_string_equal(c.alerts.exec[2], "perf team");
  assert_true(c.alerts.webhook.given);
  assert_string_equal(ps_config_webhook_url(&c), "https://hooks.example/T0/B0/secret?x=1");
  assert_int_equal(c.alerts.webhook.format, PS_WEBHOOK_SLACK);
  assert_int_equal(c.alerts.webhook.timeout_ms, 1500);
  assert_string_equal(c.alerts.webhook.tls_ca_file, "/etc/ca.pem");
  assert_int_equal(c.alerts.on,
                   PS_ALERT_BIT(PS_ALERT_RUN_FAILED) | PS_ALERT_BIT(PS_ALERT_IMPROVEMENT));
  assert_int_equal(c.sources[0].no_new_run_after_s, 3600);
  assert_int_equal(c.sources[1].no_new_run_after_s, 0);
  assert_int_equal(c.sources[2].no_new_run_after_s, -1);
  ps_config_free(&c);
  load_ok("alerts = { on = []; };\n", &c);
  assert_int_equal(c.alerts.on, 0);
  ps_config_free(&c);

  /* a typo is named with the nearest key, at its line */
  expect_error("alerts = {\n  min_intervall_s = 5; };\n", "perfship.cfg:2: ",
               "'min_intervall_s'", "did you mean 'min_interval_s'", NULL);
  expect_error("alerts = { webhook = {\n  urlfile = \"/x\"; }; };\n", "perfship.cfg:2: ",
               "did you mean 'url_file'", NULL);
  expect_error("alerts = { on = [\"run_failed\",\n \"run_faild\"]; };\n",
               "perfship.cfg:2: ", "alerts.on", "\"run_faild\" is not a known name",
               "\"run_failed\"", NULL);
  expect_error("alerts = { on = [ 3 ]; };\n", "alerts.on", "an integer", NULL);
  expect_error("alerts = { exec = \"/bin/notify --x\"; };\n", "alerts.exec",
               "expected the notifier's argv", NULL);
  expect_error("alerts = { exec = (\"/bin/notify\", 5); };\n", "alerts.exec", "element 2",
               NULL);
  expect_error("alerts = { exec_timeout_ms = 0; };\n", "alerts.exec_timeout_ms", NULL);
  expect_error("alerts = { unhealthy_after_s = 0; };\n", "alerts.unhealthy_after_s", NULL);
  expect_error("alerts = { catch_up_s = -1; };\n", "alerts.catch_up_s", NULL);
  expect_error("alerts = { webhook = { format = \"teams\"; url = \"https://h/x\"; }; };\n",
               "alerts.webhook.format", "\"json\" or \"slack\"", NULL);
  /* a webhook needs exactly one of url and url_file */
  expect_error("alerts = {\n webhook = { format = \"json\"; }; };\n", "perfship.cfg:2: ",
               "alerts.webhook", "url_file", NULL);
  expect_error("alerts = { webhook = { url = \"https://h/x\"; url_file = \"/f\"; }; };\n",
               "alerts.webhook", "both url and url_file", NULL);
  /* a bad URL is refused without being repeated (it is a secret) */
  expect_error("alerts = { webhook = { url = \"ftp://h/secret-part\"; }; };\n",
               "alerts.webhook.url", "not an http(s) URL", NULL);
  {
    const char *path = write_cfg("alerts = { webhook = { url = \"h/secret-part\"; }; };\n");
    ps_config_defaults(&c);
    ps_buf err;
    ps_buf_init(&err, 4096);
    assert_true(ps_config_load(&c, path, ps_format_source_rules, &err) < 0);
    assert_null(strstr(err.data, "secret-part"));
    ps_buf_free(&err);
    ps_config_free(&c);
  }
  /* only sources with runs can be silent */
  expect_error("sources = ( { path = \"/x\"; format = \"jsonl\"; time_key = \"t\";\n"
               "  no_new_run_after_s = 60; } );\n",
               "perfship.cfg:2: ", "no_new_run_after_s", "only loadgen, dss-bench and benchmarker",
               NULL);
  expect_error("sources = ( { path = \"/x\"; format = \"loadgen\"; no_new_run_after_s = -2; } );\n",
               "no_new_run_after_s", NULL);
}

static void test_alert_names(void **state) {
  (void)state;
  for (int k = 0; k < PS_ALERT_NKINDS; k++) {
    ps_alert_kind back;
    assert_int_equal(ps_alert_kind_from_name(ps_alert_kind_name((ps_alert_kind)k), &back), 0);
    assert_int_equal(back, k);
  }
  assert_string_equal(ps_alert_kind_name(PS_ALERT_NO_NEW_RUN), "no_new_run");
  ps_alert_kind k;
  assert_int_equal(ps_alert_kind_from_name("Run_Failed", &k), -EINVAL);
  assert_int_equal(ps_alert_kind_from_name(NULL, &k), -EINVAL);
}

/* The webhook's URL is a secret like the password: read from url_file with
 * the same checks, never quoted. */
static void test_webhook_url_file(void **state) {
  (void)state;
  char f[300], cfgtext[1024];
  write_secret("hook", "https://hooks.example/T0/B0/xyz\n", 0600, f, sizeof f);
  snprintf(cfgtext, sizeof cfgtext, "alerts = { webhook = { url_file = \"%s\"; }; };\n", f);
  ps_config c;
  load_ok(cfgtext, &c);
  assert_null(ps_config_webhook_url(&c)); /* not read yet */
  ps_buf err;
  ps_buf_init(&err, 4096);
  assert_int_equal(ps_config_load_alert_secrets(&c, &err), 0);
  assert_string_equal(ps_config_webhook_url(&c), "https://hooks.example/T0/B0/xyz");
  ps_config_free(&c);

  write_secret("hook-open", "https://hooks.example/T0/B0/abc\n", 0644, f, sizeof f);
  snprintf(cfgtext, sizeof cfgtext, "alerts = { webhook = { url_file = \"%s\"; }; };\n", f);
  load_ok(cfgtext, &c);
  ps_buf_reset(&err);
  assert_int_equal(ps_config_load_secrets(&c, &err), -EPERM);
  assert_non_null(strstr(err.data, "alerts.webhook.url_file"));
  assert_non_null(strstr(err.data, "chmod 600"));
  assert_null(strstr(err.data, "abc"));
  ps_config_free(&c);

  write_secret("hook-bad", "hooks.example/T0/B0/def\n", 0600, f, sizeof f);
  snprintf(cfgtext, sizeof cfgtext, "alerts = { webhook = { url_file = \"%s\"; }; };\n", f);
  load_ok(cfgtext, &c);
  ps_buf_reset(&err);
  assert_int_equal(ps_config_load_alert_secrets(&c, &err), -EINVAL);
  assert_non_null(strstr(err.data, "http(s) URL"));
  assert_null(strstr(err.data, "def"));
  assert_null(ps_config_webhook_url(&c));
  ps_config_free(&c);
  ps_buf_free(&err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_empty_file_keeps_defaults),
      cmocka_unit_test(test_sample_loads),
      cmocka_unit_test(test_full_values),
      cmocka_unit_test(test_unknown_keys),
      cmocka_unit_test(test_wrong_types),
      cmocka_unit_test(test_bad_enums),
      cmocka_unit_test(test_ranges),
      cmocka_unit_test(test_source_rules),
      cmocka_unit_test(test_parse_errors_and_missing_file),
      cmocka_unit_test(test_helpers),
      cmocka_unit_test(test_secrets),
      cmocka_unit_test(test_verdicts_defaults),
      cmocka_unit_test(test_verdicts_values),
      cmocka_unit_test(test_verdicts_mistakes),
      cmocka_unit_test(test_alerts),
      cmocka_unit_test(test_alert_names),
      cmocka_unit_test(test_webhook_url_file),
  };
  return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
