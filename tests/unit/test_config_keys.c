/*
 * test_config_keys: the key tables are the configuration. Every key the
 * annotated sample (config/perfship.cfg) sets and every key perfship.cfg(5)
 * documents is a row of a table, with the default the documents show; every
 * row is documented in the man page; defaults and freeing walk the tables,
 * so a configuration that sets every kind of key loads and frees clean
 * (the sanitizer build reports any leak or double free).
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

#include <libconfig.h>

#include "../../agent/core/config_private.h"
#include "core/config.h"
#include "formats/format.h"

#define AUX_TMPDIR_TAG "config-keys"
#include "aux_tmpdir.h"

#ifndef PS_SOURCE_DIR
#define PS_SOURCE_DIR PS_TEST_DATA "/../.."
#endif

static const ps_cfg_key *find_in(const ps_cfg_key *table, const char *name, size_t len) {
  for (const ps_cfg_key *k = table; k && k->name; k++)
    if (strlen(k->name) == len && memcmp(k->name, name, len) == 0)
      return k;
  return NULL;
}

/* "alerts.webhook.timeout_ms" from the top table; NULL when a part is not a row. */
static const ps_cfg_key *find_path(const ps_cfg_key *table, const char *path) {
  const ps_cfg_key *k = NULL;
  for (const char *p = path;;) {
    size_t len = strcspn(p, ".");
    k = find_in(table, p, len);
    if (!k || !p[len])
      return k;
    table = k->sub;
    p += len + 1;
  }
}

/* The row's default as perfship.cfg(5) writes it: "\"perf\"", "5000", "true". */
static int render_default(const ps_cfg_key *k, char *out, size_t n) {
  switch (k->kind) {
  case PS_K_STR:
  case PS_K_URL:
  case PS_K_HOOK_URL:
    if (!k->def_str)
      return -1;
    snprintf(out, n, "\"%s\"", k->def_str);
    return 0;
  case PS_K_INT:
    snprintf(out, n, "%lld", (long long)k->def_int);
    return 0;
  case PS_K_BOOL:
    snprintf(out, n, "%s", k->def_int ? "true" : "false");
    return 0;
  case PS_K_ENUM:
    snprintf(out, n, "\"%s\"", ps_cfg_enum_name_of(k->names, (int)k->def_int));
    return 0;
  default:
    return -1;
  }
}

/* A setting of the sample equals the row's default. */
static void expect_sample_default(const ps_cfg_key *k, const config_setting_t *s,
                                  const char *path) {
  switch (k->kind) {
  case PS_K_STR:
  case PS_K_URL:
  case PS_K_HOOK_URL:
    assert_non_null(k->def_str);
    if (strcmp(config_setting_get_string(s), k->def_str) != 0)
      fail_msg("%s: the sample says \"%s\", the table \"%s\"", path,
               config_setting_get_string(s), k->def_str);
    break;
  case PS_K_INT:
    if (config_setting_get_int64(s) != k->def_int)
      fail_msg("%s: the sample says %lld, the table %lld", path,
               (long long)config_setting_get_int64(s), (long long)k->def_int);
    break;
  case PS_K_FLOAT: {
    double v = config_setting_type(s) == CONFIG_TYPE_FLOAT
                   ? config_setting_get_float(s)
                   : (double)config_setting_get_int64(s);
    if (v != k->def_num)
      fail_msg("%s: the sample says %g, the table %g", path, v, k->def_num);
    break;
  }
  case PS_K_BOOL:
    if (config_setting_get_bool(s) != (int)k->def_int)
      fail_msg("%s: the sample and the table disagree", path);
    break;
  case PS_K_ENUM: {
    int v = -1;
    assert_int_equal(ps_cfg_enum_lookup(k->names, config_setting_get_string(s), &v), 0);
    if (v != (int)k->def_int)
      fail_msg("%s: the sample says \"%s\", the table \"%s\"", path,
               config_setting_get_string(s), ps_cfg_enum_name_of(k->names, (int)k->def_int));
    break;
  }
  case PS_K_ENUMLIST: {
    unsigned bits = 0;
    for (int i = 0; i < config_setting_length(s); i++) {
      int v = 0;
      assert_int_equal(ps_cfg_enum_lookup(k->names,
                                          config_setting_get_string_elem(s, i), &v), 0);
      bits |= 1u << (unsigned)v;
    }
    if (bits != (unsigned)k->def_int)
      fail_msg("%s: the sample's list is not the table's default", path);
    break;
  }
  default:
    break;
  }
}

/* Every setting of group `g` is a row of `table`; the sample's plain values
 * are the defaults (the sample says so in its first lines). */
static int walk_sample(const config_setting_t *g, const ps_cfg_key *table, const char *where,
                       int defaults) {
  int seen = 0;
  for (int i = 0; i < config_setting_length(g); i++) {
    const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
    const char *name = config_setting_name(s);
    char path[256];
    snprintf(path, sizeof path, "%s%s%s", where, where[0] ? "." : "", name);
    const ps_cfg_key *k = find_in(table, name, strlen(name));
    if (!k)
      fail_msg("the sample sets %s, which no table has", path);
    seen++;
    if (k->kind == PS_K_GROUP) {
      seen += walk_sample(s, k->sub, path, defaults);
    } else if (k->kind == PS_K_SOURCES) {
      for (int j = 0; j < config_setting_length(s); j++)
        seen += walk_sample(config_setting_get_elem(s, (unsigned)j), k->sub, "sources[]", 0);
    } else if (k->kind == PS_K_VMETRICS) {
      for (int j = 0; j < config_setting_length(s); j++)
        seen += walk_sample(config_setting_get_elem(s, (unsigned)j), k->sub, path, 0);
    } else if (defaults) {
      expect_sample_default(k, s, path);
    }
  }
  return seen;
}

static void test_sample_keys_are_rows_with_their_defaults(void **state) {
  (void)state;
  config_t cf;
  config_init(&cf);
  if (!config_read_file(&cf, PS_SOURCE_DIR "/config/perfship.cfg"))
    fail_msg("sample: %s:%d", config_error_text(&cf), config_error_line(&cf));
  int seen = walk_sample(config_root_setting(&cf), ps_cfg_top_keys, "", 1);
  assert_true(seen > 60); /* the walk saw the sample, not an empty file */
  config_destroy(&cf);
}

/* The man page, a line at a time: ".B key \fR(type, default \fBVALUE\fR)". */
static char *unroff(char *s) {
  char *w = s;
  for (char *r = s; *r; r++) {
    if (r[0] == '\\' && r[1] == '-') {
      *w++ = '-';
      r++;
    } else {
      *w++ = *r;
    }
  }
  *w = '\0';
  return s;
}

static void mark(const ps_cfg_key *k);

static const ps_cfg_key *section_table(const char *title) {
  static const struct {
    const char *title, *group;
  } map[] = {{"INFLUXDB", "influxdb"}, {"BATCH", "batch"},     {"WATCH", "watch"},
             {"SELFSTATS", "selfstats"}, {"ALERTS", "alerts"}, {"VERDICTS", "verdicts"},
             {"REPORT", "report"}};
  if (strcmp(title, "SOURCES") == 0)
    return ps_cfg_source_keys;
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(title, map[i].title) == 0) {
      const ps_cfg_key *g = find_path(ps_cfg_top_keys, map[i].group);
      mark(g); /* a section documents its group */
      return g->sub;
    }
  return ps_cfg_top_keys;
}

/* Marks `k` documented; the rows are few, so a flat list does. */
static const ps_cfg_key *documented[256];
static size_t ndocumented;

static void mark(const ps_cfg_key *k) {
  if (ndocumented < sizeof documented / sizeof documented[0])
    documented[ndocumented++] = k;
}

static int is_documented(const ps_cfg_key *k) {
  for (size_t i = 0; i < ndocumented; i++)
    if (documented[i] == k)
      return 1;
  return 0;
}

static void expect_all_documented(const ps_cfg_key *table, const char *where) {
  for (const ps_cfg_key *k = table; k->name; k++) {
    if (!is_documented(k))
      fail_msg("%s%s%s is in a table but not in perfship.cfg(5)", where, where[0] ? "." : "",
               k->name);
    if (k->kind == PS_K_GROUP)
      expect_all_documented(k->sub, k->name);
  }
}

static void test_man_page_keys_are_rows_with_their_defaults(void **state) {
  (void)state;
  FILE *f = fopen(PS_SOURCE_DIR "/man/perfship.cfg.5", "r");
  assert_non_null(f);
  char line[1024];
  const ps_cfg_key *section = ps_cfg_top_keys, *ctx = ps_cfg_top_keys;
  int keys = 0, defaults = 0;
  ndocumented = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    if (strncmp(line, ".SH ", 4) == 0) {
      section = ctx = section_table(line + 4);
      continue;
    }
    /* A key's entry: ".B name \fR(" (other .B lines are prose) */
    char *paren = strstr(line, " \\fR(");
    if (strncmp(line, ".B ", 3) != 0 || !paren)
      continue;
    *paren = '\0';
    const char *name = line + 3;
    const ps_cfg_key *k;
    if (strchr(name, '.')) {
      k = find_path(ps_cfg_top_keys, name);
      for (const char *dot = strchr(name, '.'); k && dot; dot = strchr(dot + 1, '.')) {
        char group[128];
        snprintf(group, sizeof group, "%.*s", (int)(dot - name), name);
        mark(find_path(ps_cfg_top_keys, group)); /* "verdicts.dss.x" documents dss */
      }
      ctx = k && k->kind == PS_K_GROUP ? k->sub : section;
    } else {
      k = find_in(ctx, name, strlen(name));
      if (!k)
        k = find_in(ps_cfg_top_keys, name, strlen(name));
    }
    if (!k)
      fail_msg("perfship.cfg(5) documents '%s', which no table has", name);
    keys++;
    mark(k);
    if (k->kind == PS_K_VMETRICS)
      for (const ps_cfg_key *m = k->sub; m->name; m++)
        mark(m); /* the per-metric keys are described in its paragraph */
    char *def = strstr(paren + 1, "default \\fB");
    if (!def)
      continue;
    def += strlen("default \\fB");
    char *end = strstr(def, "\\fR");
    assert_non_null(end);
    *end = '\0';
    unroff(def);
    char want[512];
    if (k->kind == PS_K_FLOAT) {
      if (strtod(def, NULL) != k->def_num)
        fail_msg("%s: the man page says %s, the table %g", name, def, k->def_num);
    } else if (render_default(k, want, sizeof want) == 0) {
      if (strcmp(def, want) != 0)
        fail_msg("%s: the man page says %s, the table %s", name, def, want);
    } else {
      continue; /* lists: "()" and "[]" say "none", which the walk gives */
    }
    defaults++;
  }
  fclose(f);
  assert_true(keys > 60);
  assert_true(defaults > 40);
  /* and the other way: a new row needs its entry */
  expect_all_documented(ps_cfg_top_keys, "");
  expect_all_documented(ps_cfg_source_keys, "sources[]");
}

/* What the defaults walk writes is what the rows say, member by member. */
static void expect_defaults(const ps_cfg_key *table, const void *base) {
  for (const ps_cfg_key *k = table; k->name; k++) {
    const char *p = (const char *)base + k->offset;
    switch (k->kind) {
    case PS_K_STR:
    case PS_K_URL:
    case PS_K_HOOK_URL:
      if (k->def_str)
        assert_string_equal(*(char *const *)p, k->def_str);
      else
        assert_null(*(char *const *)p);
      break;
    case PS_K_INT:
      assert_int_equal(*(const int64_t *)p, k->def_int);
      break;
    case PS_K_FLOAT:
      assert_true(*(const double *)p == k->def_num);
      break;
    case PS_K_BOOL:
    case PS_K_ENUM:
      assert_int_equal(*(const int *)p, (int)k->def_int);
      break;
    case PS_K_ENUMLIST:
      assert_int_equal(*(const unsigned *)p, (unsigned)k->def_int);
      break;
    case PS_K_GROUP:
      expect_defaults(k->sub, base);
      break;
    default:
      break;
    }
  }
}

static void test_defaults_walk_the_rows(void **state) {
  (void)state;
  ps_config c;
  ps_config_defaults(&c);
  expect_defaults(ps_cfg_top_keys, &c);
  /* what users of a default configuration rely on */
  assert_non_null(c.influxdb.url);
  assert_non_null(c.state_dir);
  assert_int_equal(c.verdicts.nmetrics, 13); /* the headline, growth and benchmarker figures */
  assert_int_equal(c.alerts.on, PS_ALERT_ON_DEFAULT);
  ps_config_free(&c);
  ps_config_free(&c); /* a freed config is empty: freeing it again is harmless */

  ps_source_cfg s;
  ps_source_defaults(&s);
  expect_defaults(ps_cfg_source_keys, &s);
  assert_string_equal(s.measurement, "jsonl");
  assert_int_equal(s.no_new_run_after_s, -1);
  ps_source_free(&s);
}

/* The walker calls a list kind's part only through the row's hooks, so a
 * row of such a kind without them would crash the first file that sets it
 * (and only a row of such a kind may carry them). */
static void expect_hooks(const ps_cfg_key *table, const char *where) {
  for (const ps_cfg_key *k = table; k->name; k++) {
    int list = k->kind == PS_K_TAGS || k->kind == PS_K_SOURCES || k->kind == PS_K_VMETRICS;
    if (list != (k->apply != NULL))
      fail_msg("%s.%s: %s", where, k->name,
               list ? "a list kind needs its part's apply hook" : "only a list kind has hooks");
    if ((k->kind == PS_K_VMETRICS) != (k->set_default && k->release))
      fail_msg("%s.%s: verdicts.metrics, and only it, fills and frees its value by hooks", where,
               k->name);
    if (k->kind != PS_K_VMETRICS && (k->set_default || k->release))
      fail_msg("%s.%s: the walker fills and frees this kind itself", where, k->name);
    if (k->kind == PS_K_GROUP)
      expect_hooks(k->sub, k->name);
  }
}

static void test_list_kinds_have_their_hooks(void **state) {
  (void)state;
  expect_hooks(ps_cfg_top_keys, "top");
  expect_hooks(ps_cfg_source_keys, "sources[]");
  /* the sources' hook finds the format names through its own rows */
  const ps_cfg_key *format = find_in(ps_cfg_source_keys, "format", 6);
  assert_non_null(format);
  assert_ptr_equal(format->names, ps_cfg_format_names);
}

/* Every kind of key set, some twice (a later list replaces an earlier one),
 * loaded and freed: the sanitizer build fails on a leak or a double free. */
static void test_load_and_free_every_kind(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/perfship.cfg", dir);
  ps_config c;
  ps_buf err;
  ps_buf_init(&err, 4096);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("influxdb = { url = \"http://10.0.0.1:8086\"; api = \"v2\"; bucket = \"b\";\n"
        "  org = \"o\"; gzip = false; tls_verify = false; timeout_ms = 5000L; };\n"
        "batch = { max_pending_bytes = 20000000000; };\n"
        "watch = { max_line_bytes = 10000000000; start_at = \"end\"; };\n"
        "tags = { host = \"h\"; rack = \"r\"; };\n"
        "sources = ( { path = \"/a/*.jsonl\"; format = \"jsonl\"; measurement = \"m\";\n"
        "    tag_keys = [\"k\", \"l\"]; field_keys = [\"v\"]; time_key = \"ts\";\n"
        "    time_unit = \"ms\"; types = { n = \"integer\"; s = \"string\"; }; },\n"
        "  { path = \"/b\"; format = \"loadgen\"; no_new_run_after_s = 60; } );\n"
        "alerts = { exec = [\"/bin/true\", \"x\"]; on = [\"run_failed\"];\n"
        "  webhook = { url_file = \"/nonexistent\"; format = \"slack\"; }; };\n"
        "verdicts = { metrics = { live_avgLag = { worse = \"lower\"; min_change = 1.5; };\n"
        "  cycleAvgDuration = { enabled = false; }; };\n"
        "  dss = { reference_arm = \"a\"; }; };\n"
        "report = { path = \"/tmp/r.html\"; chart_js = \"/x.js\"; };\n"
        "state_dir = \"/tmp/s\";\n"
        "log_level = \"debug\";\n", f);
  fclose(f);
  ps_config_defaults(&c);
  if (ps_config_load(&c, path, ps_format_source_rules, &err) < 0)
    fail_msg("%s", err.data);
  assert_int_equal(c.watch.max_line_bytes, 10000000000LL); /* beyond 32 bits */
  assert_int_equal(c.batch.max_pending_bytes, 20000000000LL);
  assert_int_equal(c.influxdb.gzip, PS_GZIP_OFF);
  assert_int_equal(c.ntags, 2);
  assert_int_equal(c.nsources, 2);
  assert_int_equal(c.sources[0].ntypes, 2);
  assert_int_equal(c.sources[0].time_unit_exp, -3);
  assert_int_equal(c.sources[1].no_new_run_after_s, 60);
  assert_int_equal(c.alerts.nexec, 2);
  assert_int_equal(c.verdicts.nmetrics, 14);
  const ps_verdict_metric_cfg *m = ps_verdict_metric_find(&c.verdicts, "live_avgLag");
  assert_non_null(m);
  assert_int_equal(m->worse, PS_WORSE_LOWER);
  assert_int_equal(m->unit, PS_CHANGE_PERCENT); /* from its row */
  assert_true(m->enabled);
  assert_false(ps_verdict_metric_find(&c.verdicts, "cycleAvgDuration")->enabled);
  assert_string_equal(c.verdicts.dss.reference_arm, "a");
  /* a second load over the first replaces every list and string */
  if (ps_config_load(&c, path, ps_format_source_rules, &err) < 0)
    fail_msg("%s", err.data);
  assert_int_equal(c.nsources, 2);
  assert_int_equal(c.ntags, 2);
  ps_buf_free(&err);
  ps_config_free(&c);
}

/* The loader names no format: what a source may set is what the rules say. */
static void lp_takes_the_mapping(ps_format_id f, ps_source_rules *out) {
  out->mapping = f == PS_FMT_LP;
  out->has_runs = f == PS_FMT_LOCUST;
}

static int load_with(const char *text, ps_source_rules_fn rules, ps_buf *err) {
  char path[128];
  snprintf(path, sizeof path, "%s/rules.cfg", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  ps_config c;
  ps_config_defaults(&c);
  ps_buf_reset(err);
  int rc = ps_config_load(&c, path, rules, err);
  ps_config_free(&c);
  return rc;
}

static void test_source_checks_ask_the_rules(void **state) {
  (void)state;
  ps_buf err;
  ps_buf_init(&err, 4096);
  const char *lp_mapped = "sources = ( { path = \"/a\"; format = \"lp\"; measurement = \"m\";"
                          " time_key = \"t\"; } );\n";
  const char *locust_runs = "sources = ( { path = \"/a\"; format = \"locust\";"
                            " no_new_run_after_s = 60; } );\n";
  /* the formats' own rules: lp takes no mapping, locust files are no runs */
  assert_true(load_with(lp_mapped, ps_format_source_rules, &err) < 0);
  assert_non_null(strstr(err.data, "only jsonl sources use it"));
  assert_true(load_with(locust_runs, ps_format_source_rules, &err) < 0);
  assert_non_null(strstr(err.data, "only loadgen, dss-bench and benchmarker sources have runs"));
  /* only a benchmarker source names an arm its reports leave unnamed */
  assert_true(load_with("sources = ( { path = \"/a\"; format = \"locust\"; arm = \"x\"; } );\n",
                        ps_format_source_rules, &err) < 0);
  assert_non_null(strstr(err.data, "key 'arm' in source 1: only benchmarker sources have arms"));
  assert_int_equal(
      load_with("sources = ( { path = \"/a\"; format = \"benchmarker\"; arm = \"x\"; } );\n",
                ps_format_source_rules, &err),
      0);
  /* other rules, other answers, and the messages name what the rules name */
  assert_int_equal(load_with(lp_mapped, lp_takes_the_mapping, &err), 0);
  assert_int_equal(load_with(locust_runs, lp_takes_the_mapping, &err), 0);
  assert_true(load_with("sources = ( { path = \"/a\"; format = \"jsonl\"; time_key = \"t\";"
                        " } );\n", lp_takes_the_mapping, &err) < 0);
  assert_non_null(strstr(err.data, "only lp sources use it"));
  assert_non_null(strstr(err.data, "set format = \"lp\""));
  assert_true(load_with("sources = ( { path = \"/a\"; format = \"lp\"; } );\n",
                        lp_takes_the_mapping, &err) < 0);
  assert_non_null(strstr(err.data, "is lp but has no 'time_key'"));
  ps_buf_free(&err);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sample_keys_are_rows_with_their_defaults),
      cmocka_unit_test(test_man_page_keys_are_rows_with_their_defaults),
      cmocka_unit_test(test_defaults_walk_the_rows),
      cmocka_unit_test(test_list_kinds_have_their_hooks),
      cmocka_unit_test(test_load_and_free_every_kind),
      cmocka_unit_test(test_source_checks_ask_the_rules),
  };
  return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
