/*
 * config_sources.c: the two top-level keys whose values are lists of the
 * file's own, tags and sources, read by their rows' apply hooks
 * (agent/core/config_private.h). A hook knows the tables only through the
 * row it is called with (the sources' rows are its `sub`), so the tables
 * can name the hook without a circle between the parts.
 *
 * DESIGN
 * - What depends on a source's format (the jsonl mapping, runs) is asked of
 *   the caller's rules (ps_source_rules), which the formats' ops tables
 *   answer: core names no format (docs/architecture.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libconfig.h>

#include "config_private.h"

/* The format names: the enum of the sources' own "format" row. */
static const ps_cfg_enum *format_names(const ps_cfg_key *table) {
  while (table->name && strcmp(table->name, "format") != 0)
    table++;
  return table->names;
}

int ps_cfg_apply_tags(ps_cfg_loader *L, const config_setting_t *s, const ps_cfg_key *k,
                      const char *key, void *base) {
  if (config_setting_type(s) != CONFIG_TYPE_GROUP)
    return ps_cfg_fail(L, s,
                       "key '%s': expected a group of strings, e.g. tags = { host = "
                       "\"bench-1\"; };, got %s",
                       key, ps_cfg_type_word(config_setting_type(s)));
  ps_cfg_free_key(k, base);
  ps_kv **tags = (ps_kv **)((char *)base + k->offset);
  size_t *ntags = (size_t *)((char *)base + k->offset2);
  int n = config_setting_length(s);
  if (n == 0)
    return 0;
  *tags = calloc((size_t)n, sizeof **tags);
  if (!*tags)
    return ps_cfg_fail(L, s, "out of memory");
  for (int i = 0; i < n; i++) {
    const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
    const char *name = config_setting_name(e);
    if (config_setting_type(e) != CONFIG_TYPE_STRING)
      return ps_cfg_fail(L, e,
                         "key 'tags.%s': expected a string, got %s; tag values are "
                         "strings: %s = \"...\";",
                         name, ps_cfg_type_word(config_setting_type(e)), name);
    const char *v = config_setting_get_string(e);
    if (strcmp(name, "time") == 0)
      return ps_cfg_fail(L, e,
                         "key 'tags.time': InfluxDB does not accept a tag named "
                         "'time'; rename it");
    if (!v[0])
      return ps_cfg_fail(L, e,
                         "key 'tags.%s': the value is empty and InfluxDB drops empty "
                         "tags; give it a value or remove it",
                         name);
    if (v[strlen(v) - 1] == '\\' || strpbrk(v, "\r\n"))
      return ps_cfg_fail(L, e,
                         "key 'tags.%s': a tag value cannot end in a backslash or "
                         "hold a line break; change the value",
                         name);
    (*tags)[i].key = strdup(name);
    (*tags)[i].value = strdup(v);
    *ntags = (size_t)i + 1;
    if (!(*tags)[i].key || !(*tags)[i].value)
      return ps_cfg_fail(L, e, "out of memory");
  }
  return 0;
}

enum { RULE_MAPPING, RULE_RUNS, RULE_ARM };

static int rule_says(const ps_source_rules *r, int which) {
  return which == RULE_RUNS ? r->has_runs : which == RULE_ARM ? r->arm : r->mapping;
}

/* The names of the formats whose rules say `which` ("loadgen and
 * dss-bench"), so that messages name the formats the rules name; returns
 * the first of them ("" for none). */
static const char *formats_where(const ps_cfg_loader *L, const ps_cfg_enum *formats, int which,
                                 ps_buf *b) {
  size_t n = 0, shown = 0;
  const char *first = "";
  for (const ps_cfg_enum *f = formats; f->name; f++) {
    ps_source_rules r = {0};
    L->rules((ps_format_id)f->value, &r);
    n += rule_says(&r, which) != 0;
  }
  for (const ps_cfg_enum *f = formats; f->name; f++) {
    ps_source_rules r = {0};
    L->rules((ps_format_id)f->value, &r);
    if (!rule_says(&r, which))
      continue;
    if (++shown == 1)
      first = f->name;
    ps_buf_printf(b, "%s%s", shown == 1 ? "" : (shown == n ? " and " : ", "), f->name);
  }
  return first;
}

/* What a source's format asks of it (ps_source_rules). */
static int check_source_format(ps_cfg_loader *L, const config_setting_t *g, const ps_cfg_key *table,
                               const ps_source_cfg *src, const char *where) {
  const ps_cfg_enum *formats = format_names(table);
  const char *format = ps_cfg_enum_name_of(formats, (int)src->format);
  if (!L->rules)
    return 0;
  ps_source_rules r = {0};
  L->rules(src->format, &r);
  ps_buf names;
  ps_buf_init(&names, 0);
  int rc = 0;
  if (!r.mapping) {
    const char *first = formats_where(L, formats, RULE_MAPPING, &names);
    for (int i = 0; !rc && i < config_setting_length(g); i++) {
      const config_setting_t *e = config_setting_get_elem(g, (unsigned)i);
      for (const ps_cfg_key *k = table; !rc && k->name; k++)
        if (k->mapping && strcmp(k->name, config_setting_name(e)) == 0)
          rc = ps_cfg_fail(L, e,
                           "key '%s' in %s: only %s sources use it, this one is "
                           "\"%s\"; remove the key or set format = \"%s\"",
                           k->name, where, names.data ? names.data : "", format, first);
    }
  } else if (!src->time_key) {
    rc = ps_cfg_fail(L, g,
                     "%s (%s) is %s but has no 'time_key'; every point needs its "
                     "time from the data: add time_key = \"ts\"; (and time_unit if it is "
                     "not seconds)",
                     where, src->path, format);
  }
  if (!rc && src->no_new_run_after_s >= 0 && !r.has_runs) {
    ps_buf_reset(&names);
    formats_where(L, formats, RULE_RUNS, &names);
    rc = ps_cfg_fail(L, config_setting_get_member(g, "no_new_run_after_s"),
                     "key 'no_new_run_after_s' in %s: only %s sources have runs, this "
                     "one is \"%s\"; remove the key",
                     where, names.data ? names.data : "", format);
  }
  if (!rc && src->arm && src->arm[0] && !r.arm) {
    ps_buf_reset(&names);
    formats_where(L, formats, RULE_ARM, &names);
    rc = ps_cfg_fail(L, config_setting_get_member(g, "arm"),
                     "key 'arm' in %s: only %s sources have arms, this one is \"%s\"; "
                     "remove the key",
                     where, names.data ? names.data : "", format);
  }
  ps_buf_free(&names);
  return rc;
}

static int check_source(ps_cfg_loader *L, const config_setting_t *g, const ps_cfg_key *table,
                        ps_source_cfg *src, const char *where) {
  int has_format = 0;
  for (int i = 0; i < config_setting_length(g); i++) {
    const config_setting_t *e = config_setting_get_elem(g, (unsigned)i);
    if (strcmp(config_setting_name(e), "format") == 0)
      has_format = 1;
  }
  if (!src->path || !src->path[0])
    return ps_cfg_fail(L, g,
                       "%s has no 'path'; add path = \"/dir/of/results\"; (a "
                       "directory, a file or a glob)",
                       where);
  if (!has_format) {
    ps_buf names;
    ps_buf_init(&names, 0);
    ps_cfg_enum_list(&names, format_names(table));
    int rc = ps_cfg_fail(L, g,
                         "%s (%s) has no 'format'; add format = \"...\"; with one "
                         "of %s",
                         where, src->path, names.data ? names.data : "");
    ps_buf_free(&names);
    return rc;
  }
  return check_source_format(L, g, table, src, where);
}

int ps_cfg_apply_sources(ps_cfg_loader *L, const config_setting_t *s, const ps_cfg_key *k,
                         const char *key, void *base) {
  int t = config_setting_type(s);
  if (t != CONFIG_TYPE_LIST) {
    if (t == CONFIG_TYPE_GROUP)
      return ps_cfg_fail(L, s,
                         "key '%s': expected a list of groups, got a single group; "
                         "wrap it in parentheses: sources = ( { ... } );",
                         key);
    return ps_cfg_fail(L, s,
                       "key '%s': expected a list of groups, e.g. sources = ( { path "
                       "= \"/srv/loadgen/results\"; format = \"loadgen\"; } );, got %s",
                       key, ps_cfg_type_word(t));
  }
  ps_cfg_free_key(k, base);
  ps_source_cfg **sources = (ps_source_cfg **)((char *)base + k->offset);
  size_t *nsources = (size_t *)((char *)base + k->offset2);
  int n = config_setting_length(s);
  if (n == 0)
    return 0;
  *sources = calloc((size_t)n, sizeof **sources);
  if (!*sources)
    return ps_cfg_fail(L, s, "out of memory");
  for (int i = 0; i < n; i++) {
    const config_setting_t *g = config_setting_get_elem(s, (unsigned)i);
    char where[48];
    snprintf(where, sizeof where, "source %d", i + 1);
    if (config_setting_type(g) != CONFIG_TYPE_GROUP)
      return ps_cfg_fail(L, g, "%s: expected a group { path = ...; format = ...; }, got %s", where,
                         ps_cfg_type_word(config_setting_type(g)));
    ps_source_cfg *src = &(*sources)[i];
    memset(src, 0, sizeof *src);
    ps_cfg_defaults(k->sub, src);
    *nsources = (size_t)i + 1;
    src->line = (int)config_setting_source_line(g);
    int rc = ps_cfg_walk_group(L, g, k->sub, src, where);
    if (!rc)
      rc = check_source(L, g, k->sub, src, where);
    if (rc)
      return rc;
  }
  return 0;
}
