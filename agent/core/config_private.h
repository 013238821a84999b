/*
 * config_private.h (private to agent/core/config*.c and the configuration's
 * unit test): the key tables and the walker that the parts of the loader
 * share. include/core/config.h is the public contract.
 *
 * - config_keys.c: the enum name tables and one table row per key, each row
 *   carrying the key's default (docs/architecture.md, "Configuration").
 * - config_walk.c: the walker (a group of the file member by member against
 *   its table), the typed getters, the messages, and the two table walks that
 *   fill defaults and free what was loaded.
 * - config_sources.c: tags and sources, the lists of the file's own.
 * - config_verdicts.c: verdicts.metrics, whose members are metric names.
 * - config_secrets.c: the password, token and webhook files.
 * - config.c: reading the file, and the checks that involve more than one
 *   key.
 *
 * The parts call one way, no circle (test_structure checks): config.c uses
 * the tables, the walker and the parts; the tables name the apply hooks of
 * the list kinds (config_sources.c, config_verdicts.c); the hooks use the
 * walker; the walker calls a row's hooks through the row and names no
 * other part.
 *
 * Adding a key: a member of ps_config (or ps_source_cfg) and one row in
 * config_keys.c. Its default, its freeing, its type and range checks and
 * its messages all come from that row.
 */
#ifndef PS_CORE_CONFIG_PRIVATE_H
#define PS_CORE_CONFIG_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"

/* libconfig's setting, without its header: the unit test reads the tables
 * and needs nothing of libconfig. */
struct config_setting_t;

typedef struct ps_cfg_enum {
  const char *name;
  int value;
} ps_cfg_enum;

typedef enum ps_cfg_kind {
  PS_K_STR,      /* char *; `nonempty`: must not be "" */
  PS_K_URL,      /* char *, http:// or https:// without a path */
  PS_K_HOOK_URL, /* char *, an http(s) URL with a path (a secret: not echoed) */
  PS_K_INT,      /* int64_t in [min, max] */
  PS_K_FLOAT,    /* double in [min, max] millionths (the bounds are integers) */
  PS_K_BOOL,     /* int */
  PS_K_ENUM,     /* int-sized enum, from `names` */
  PS_K_ENUMLIST, /* unsigned bit set, one bit per value of `names` */
  PS_K_STRLIST,  /* char ** at offset, size_t count at offset2 */
  PS_K_TYPES,    /* jsonl "types" map: ps_type_decl * at offset, count at offset2,
                    the type names `names` */
  PS_K_GROUP,    /* a nested table, `sub`, whose offsets share the parent's base */
  PS_K_TAGS,     /* top-level "tags": ps_kv * at offset, count at offset2 */
  PS_K_SOURCES,  /* top-level "sources": ps_source_cfg * at offset, count at offset2 */
  PS_K_VMETRICS, /* verdicts.metrics: per-metric groups of `sub` */
} ps_cfg_kind;

/* One configuration key. Rows are written with designated initialisers, so
 * a row names only what it uses; what it leaves out is 0 or NULL. */
typedef struct ps_cfg_key ps_cfg_key;
typedef struct ps_cfg_loader ps_cfg_loader;

/* A list kind's own reading of its value (PS_K_TAGS, PS_K_SOURCES,
 * PS_K_VMETRICS); `key` is the key's dotted name, for messages. */
typedef int ps_cfg_apply_fn(ps_cfg_loader *L, const struct config_setting_t *s, const ps_cfg_key *k,
                            const char *key, void *base);
/* A list kind's default and its freeing, when the walker's own (none, and
 * freeing the list) do not fit (PS_K_VMETRICS). */
typedef void ps_cfg_value_fn(const ps_cfg_key *k, void *base);

struct ps_cfg_key {
  const char *name;
  ps_cfg_kind kind;
  size_t offset;
  size_t offset2;
  int64_t min, max;
  const ps_cfg_enum *names;
  const ps_cfg_key *sub;
  int nonempty;   /* strings: "" is refused */
  int takes_bool; /* enums: true and false are read as the names "true" and "false" */
  int mapping;    /* source keys of the jsonl mapping: only formats that take it */
  const char *doc; /* what the value is: used in "expected ..." */
  /* The default (strings: NULL leaves the member NULL, meaning not set). */
  const char *def_str;
  int64_t def_int; /* PS_K_INT, PS_K_BOOL, PS_K_ENUM, PS_K_ENUMLIST */
  double def_num;  /* PS_K_FLOAT */
  /* The list kinds' hooks: the part that owns the value reads it, and the
   * walker calls the row's hook rather than naming the part. */
  ps_cfg_apply_fn *apply;
  ps_cfg_value_fn *set_default;
  ps_cfg_value_fn *release;
};

/* The tables (config_keys.c). */
extern const ps_cfg_key ps_cfg_top_keys[];
extern const ps_cfg_key ps_cfg_source_keys[];
extern const ps_cfg_enum ps_cfg_format_names[];

/* The enums' lookups (config_walk.c). */
int ps_cfg_enum_lookup(const ps_cfg_enum *t, const char *name, int *out);
/* "a, b or c" into b (for messages) */
void ps_cfg_enum_list(ps_buf *b, const ps_cfg_enum *t);
/* The name of `value` in table `t`; "unknown" when it has none. */
const char *ps_cfg_enum_name_of(const ps_cfg_enum *t, int value);

/* Defaults and freeing: the table walks (config_walk.c). `base` is the
 * struct the table's offsets are relative to. */
void ps_cfg_defaults(const ps_cfg_key *table, void *base);
void ps_cfg_free(const ps_cfg_key *table, void *base);
/* Frees one key's value, leaving it NULL or empty (a list the file gives
 * again replaces the one before). */
void ps_cfg_free_key(const ps_cfg_key *k, void *base);
void ps_cfg_free_strv(char **v, size_t n);
/* Secrets are wiped before their memory goes back to the allocator. */
void ps_cfg_free_secret(char **s);

/* The loader's state for one file. */
struct ps_cfg_loader {
  ps_config *c;
  ps_buf *err;
  const char *path;         /* as given, for messages */
  char *text;               /* the file's bytes, to re-read large integers */
  size_t text_len;
  ps_source_rules_fn rules; /* what each source's format says (config.h) */
};

/* Writes "FILE:LINE: " followed by the formatted text, once; -EINVAL. */
int ps_cfg_fail(ps_cfg_loader *L, const struct config_setting_t *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "a group", "an integer", ... for messages. */
const char *ps_cfg_type_word(int config_type);
/* The key of `table` nearest to `name` (a typo's suggestion), or NULL. */
const char *ps_cfg_nearest_key(const ps_cfg_key *table, const char *name);
/* Reads every member of group `g` against `table` into `base`. */
int ps_cfg_walk_group(ps_cfg_loader *L, const struct config_setting_t *g,
                      const ps_cfg_key *table, void *base, const char *where);
int ps_cfg_get_float(ps_cfg_loader *L, const struct config_setting_t *s, const ps_cfg_key *k,
                     const char *key, double *out);
/* What follows "http://" or "https://" in v; NULL for any other scheme. */
const char *ps_cfg_after_http_scheme(const char *v);

/* The hooks of the kinds whose values are lists of the file's own, named
 * by their rows (config_sources.c, config_verdicts.c). */
ps_cfg_apply_fn ps_cfg_apply_tags;
ps_cfg_apply_fn ps_cfg_apply_sources;
ps_cfg_apply_fn ps_cfg_apply_verdict_metrics;
/* The seven default metrics into verdicts.metrics; freeing them. */
ps_cfg_value_fn ps_cfg_verdict_metrics_defaults;
ps_cfg_value_fn ps_cfg_verdict_metrics_free;
int ps_cfg_check_verdicts(ps_cfg_loader *L, const struct config_setting_t *root);

#endif
