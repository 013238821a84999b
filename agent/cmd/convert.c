/*
 * cmd/convert.c: `perfship convert`, files in, line protocol out on stdout
 * (man/perfship.1 "convert", docs/design-notes.md "`convert` reads lines
 * with the agent's reader"). No server, no state.
 *
 * Design
 * - The same format parsers and encoder as `run`, driven synchronously: a
 *   point goes through ps_lp_encode() straight into a large output buffer
 *   that is written in chunks of at least 256 KiB (this path is
 *   benchmarked; a write per line would dominate).
 * - Lines are read by the agent's own line reader (input/feed.h over
 *   input/tail.h), so both agree on CRLF, over-long lines and line
 *   numbers; a file's unterminated last line is converted too (the file is
 *   taken as finished). Documents are read whole (core/util.h).
 * - Formats with run folders (loadgen) are converted run by run by the run
 *   module (input/feed_run.h), which also emits the runs' markers.
 * - Bad input never stops the run: every reject is printed as
 *   FILE:LINE: reason and counted; the exit code says whether any happened.
 *   What the command says on stderr is gathered and written in chunks of
 *   64 KiB, as stdout is, and at every way out: stderr is unbuffered, and
 *   a reject written a character at a time cost a write(2) per byte
 *   (80,000 bad lines took 12 s, 100M empty slog lines hours).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/sysexits_ps.h"
#include "core/util.h"
#include "core/emit.h"
#include "formats/format.h"
#include "influx/lp_encode.h"
#include "input/feed.h"
#include "input/feed_run.h"

#define OUT_FLUSH_BYTES (256 * 1024)
#define MSG_FLUSH_BYTES (64 * 1024)

typedef struct convert_ctx {
  ps_buf out;
  ps_buf msgs; /* for stderr, in order */
  const ps_tag *extra;
  size_t nextra;
  char host[256]; /* the `host` tag when the configuration sets none */
  unsigned long rejects;
  int write_failed;
} convert_ctx;

static void flush_msgs(convert_ctx *cx) {
  if (cx->msgs.len)
    fwrite(cx->msgs.data, 1, cx->msgs.len, stderr);
  ps_buf_reset(&cx->msgs);
}

static void flush_out(convert_ctx *cx) {
  flush_msgs(cx); /* what was said so far keeps pace with the points */
  if (cx->out.len && !cx->write_failed) {
    if (fwrite(cx->out.data, 1, cx->out.len, stdout) != cx->out.len)
      cx->write_failed = 1;
  }
  ps_buf_reset(&cx->out);
}

static void say(convert_ctx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A message for stderr, after those before it. */
static void say(convert_ctx *cx, const char *fmt, ...) {
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  if (ps_buf_vprintf(&cx->msgs, fmt, ap) < 0) { /* no memory for it: say it now */
    flush_msgs(cx);
    vfprintf(stderr, fmt, again);
  }
  va_end(again);
  va_end(ap);
  if (cx->msgs.len >= MSG_FLUSH_BYTES)
    flush_msgs(cx);
}

/* A data-derived text without control characters, so a hostile value
 * cannot forge extra lines on stderr. */
static void put_clean(convert_ctx *cx, const char *s) {
  for (const char *run = s;; s++) {
    if (*s && (unsigned char)*s >= 0x20)
      continue;
    ps_buf_append(&cx->msgs, run, (size_t)(s - run));
    if (!*s)
      return;
    ps_buf_putc(&cx->msgs, ' ');
    run = s + 1;
  }
}

/* One reject per bad line, so no printf: 100M empty slog lines are 100M
 * rejects (docs/benchmarks.md "convert with many rejects"). */
static void on_reject(void *ctx, const ps_origin *o, const char *reason) {
  convert_ctx *cx = ctx;
  cx->rejects++;
  put_clean(cx, o->file ? o->file : "-");
  if (o->line) {
    char num[24], *p = num + sizeof num;
    uint64_t n = o->line;
    do
      *--p = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    *--p = ':';
    ps_buf_append(&cx->msgs, p, (size_t)(num + sizeof num - p));
  }
  ps_buf_append(&cx->msgs, ": ", 2);
  put_clean(cx, reason);
  ps_buf_putc(&cx->msgs, '\n');
  if (cx->msgs.len >= MSG_FLUSH_BYTES)
    flush_msgs(cx);
}

static int on_point(void *ctx, const ps_point *p, const ps_origin *o) {
  convert_ctx *cx = ctx;
  const char *reason = NULL;
  int rc = ps_lp_encode(&cx->out, p, cx->extra, cx->nextra, &reason);
  if (rc == -ENOMEM)
    return rc;
  if (rc < 0) {
    on_reject(ctx, o, reason ? reason : "point refused");
    return 0;
  }
  if (cx->out.len >= OUT_FLUSH_BYTES)
    flush_out(cx);
  return 0;
}

static int usage(const char *msg, const char *arg) {
  fprintf(stderr, "perfship convert: %s%s%s\n", msg, arg ? " " : "",
          arg ? arg : "");
  fputs("usage: perfship [-c FILE] convert [-f FORMAT] [--measurement NAME] "
        "[--tag KEY]... [--field KEY]... [--type KEY=TYPE]... [--time-key KEY] "
        "[--time-unit s|ms|us|ns] PATH...\n",
        stderr);
  return PS_EXIT_USAGE;
}

/* One file (or stdin) through a parser of `ops`. Returns 0, or a negative
 * errno after printing why the file could not be converted. */
static int convert_file(const ps_format_ops *ops, const ps_source_cfg *src,
                        const char *path, size_t max_line, ps_emitter *em,
                        ps_buf *err) {
  convert_ctx *cx = em->ctx;
  int is_stdin = strcmp(path, "-") == 0;
  int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    say(cx, "perfship convert: cannot read %s: %s\n", path, strerror(e));
    return -e;
  }
  const char *note = ops->not_converted ? ops->not_converted(path) : NULL;
  if (note) {
    say(cx, "perfship convert: %s: %s; not converted\n", path, note);
    if (!is_stdin)
      close(fd);
    return 0;
  }
  ps_input_kind kind = ops->input_kind ? ops->input_kind(src, path) : PS_INPUT_LINES;
  ps_parser *parser = NULL;
  ps_head_buf hb;
  int rc = ps_input_read_head(fd, is_stdin ? "/dev/stdin" : path, ops, kind, &hb);
  if (rc == 0) {
    rc = ops->open(&parser, src, &hb.head, err);
    ps_head_buf_free(&hb);
  }
  if (rc < 0) {
    say(cx, "perfship convert: %s: %s\n", path, err->len ? err->data : strerror(-rc));
    if (!is_stdin)
      close(fd);
    return rc;
  }
  int unreadable = 0;
  if (kind == PS_INPUT_DOCUMENT && ops->stream) {
    rc = ps_feed_stream(fd, ops, parser, em);
  } else if (kind == PS_INPUT_DOCUMENT && ops->document) {
    ps_buf doc;
    ps_buf_init(&doc, 0);
    rc = ps_read_whole(fd, 0, &doc);
    if (rc == 0)
      rc = ops->document(parser, doc.data, doc.len, em);
    ps_buf_free(&doc);
  } else if (kind == PS_INPUT_LINES && ops->line) {
    ps_feed_last last;
    ps_buf_init(&last.text, 0);
    rc = ps_feed_fd(fd, ops, parser, em, UINT64_MAX, max_line, &last);
    if (rc == 0 && last.text.len)
      rc = ps_feed_line(ops, parser, em, last.text.data, last.text.len, last.line_no);
    ps_buf_free(&last.text);
  } else {
    say(cx, "perfship convert: %s: format %s does not read this kind of file\n", path, ops->name);
    unreadable = 1;
  }
  if (rc == 0 && ops->finish)
    rc = ops->finish(parser, em);
  if (rc < 0)
    say(cx, "perfship convert: %s: %s\n", path, strerror(-rc));
  ops->free(parser);
  if (!is_stdin)
    close(fd);
  return rc < 0 ? rc : unreadable ? -EINVAL : 0;
}

/* What the command line asked for. The arrays have room for every
 * argument; types[].key are the command's own copies. */
typedef struct convert_args {
  const char *format, *measurement, *time_key, *time_unit;
  char **tags, **fields, **paths;
  ps_type_decl *types;
  size_t ntags, nfields, ntypes, npaths;
} convert_args;

static int args_alloc(convert_args *a, int argc) {
  memset(a, 0, sizeof *a);
  a->format = "jsonl";
  a->tags = calloc((size_t)argc + 1, sizeof *a->tags);
  a->fields = calloc((size_t)argc + 1, sizeof *a->fields);
  a->types = calloc((size_t)argc + 1, sizeof *a->types);
  a->paths = calloc((size_t)argc + 1, sizeof *a->paths);
  return a->tags && a->fields && a->types && a->paths ? 0 : -ENOMEM;
}

static void args_free(convert_args *a) {
  for (size_t t = 0; t < a->ntypes; t++)
    free(a->types[t].key);
  free(a->types);
  free(a->tags);
  free(a->fields);
  free(a->paths);
}

/* PS_EXIT_OK, or the exit code after the usage message. */
static int parse_args(int argc, char **argv, convert_args *c) {
  int only_paths = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = NULL;
#define OPT(name)                                                              \
  ((strcmp(a, name) == 0 && i + 1 < argc && (val = argv[++i])) ||              \
   (strncmp(a, name "=", sizeof name) == 0 && (val = a + sizeof name)))
    if (only_paths || a[0] != '-' || strcmp(a, "-") == 0) {
      c->paths[c->npaths++] = argv[i];
    } else if (strcmp(a, "--") == 0) {
      only_paths = 1;
    } else if ((strcmp(a, "-f") == 0 && i + 1 < argc && (val = argv[++i])) ||
               OPT("--format")) {
      c->format = val;
    } else if (OPT("--measurement")) {
      c->measurement = val;
    } else if (OPT("--tag")) {
      c->tags[c->ntags++] = (char *)val;
    } else if (OPT("--field")) {
      c->fields[c->nfields++] = (char *)val;
    } else if (OPT("--type")) {
      const char *eq = strrchr(val, '=');
      ps_ftype type;
      if (!eq || eq == val || ps_ftype_from_name(eq + 1, &type) != 0)
        return usage("--type wants KEY=TYPE with TYPE one of integer, "
                     "unsigned, float, string, boolean; got",
                     val);
      c->types[c->ntypes].key = strndup(val, (size_t)(eq - val));
      c->types[c->ntypes++].type = type;
    } else if (OPT("--time-key")) {
      c->time_key = val;
    } else if (OPT("--time-unit")) {
      c->time_unit = val;
    } else {
      return usage("unknown option or missing value:", a);
    }
#undef OPT
  }
  if (!c->npaths)
    return usage("no PATH given", NULL);
  return PS_EXIT_OK;
}

/* The source mapping: the configuration's first source of this format
 * (with -c), then the command line on top. PS_EXIT_OK or an exit code. */
static int source_mapping(convert_args *c, const ps_config *cfg, ps_format_id fid,
                          ps_source_cfg *src) {
  memset(src, 0, sizeof *src);
  src->format = fid;
  src->measurement = "jsonl";
  if (cfg) {
    for (size_t s = 0; s < cfg->nsources; s++)
      if (cfg->sources[s].format == fid) {
        *src = cfg->sources[s];
        break;
      }
  }
  if (c->measurement)
    src->measurement = (char *)c->measurement;
  if (c->ntags) {
    src->tag_keys = c->tags;
    src->ntag_keys = c->ntags;
  }
  if (c->nfields) {
    src->field_keys = c->fields;
    src->nfield_keys = c->nfields;
  }
  if (c->ntypes) {
    /* command-line declarations first: the first match wins */
    ps_type_decl *all = realloc(c->types, (c->ntypes + src->ntypes + 1) * sizeof *all);
    if (!all)
      return PS_EXIT_SOFTWARE;
    c->types = all;
    for (size_t t = 0; t < src->ntypes; t++)
      c->types[c->ntypes + t] = src->types[t];
    src->types = c->types;
    src->ntypes += c->ntypes;
  }
  if (c->time_key)
    src->time_key = (char *)c->time_key;
  if (c->time_unit && ps_time_unit_from_name(c->time_unit, &src->time_unit_exp) != 0)
    return usage("--time-unit wants s, ms, us or ns; got", c->time_unit);
  return PS_EXIT_OK;
}

/* With a configuration, the tags `run` adds to every point it ships, the
 * machine's name as `host` included (docs/run.md): convert -c prints what
 * would be shipped. Without one, none. 0 or -ENOMEM. */
static int global_tags(convert_ctx *cx, const ps_config *cfg, ps_tag **extra) {
  *extra = NULL;
  if (!cfg)
    return 0;
  if (ps_config_global_tags(cfg, cx->host, sizeof cx->host, extra, &cx->nextra) < 0)
    return -ENOMEM;
  cx->extra = *extra;
  return 0;
}

/* Every path, a run folder at a time for formats that have them. 1 when
 * one of them could not be read. */
static int convert_paths(convert_ctx *cx, const convert_args *c, const ps_format_ops *ops,
                         const ps_source_cfg *src, const ps_config *cfg) {
  /* A run judged by convert is stalled by the same rule as by the agent
   * that reads this configuration, and a line is too long by its limit. */
  int64_t stall_after_s = PS_RUN_STALL_AFTER_DEFAULT_S;
  size_t max_line = 0; /* the reader's default: watch.max_line_bytes' */
  if (cfg) {
    if (cfg->alerts.stall_after_s > 0)
      stall_after_s = cfg->alerts.stall_after_s;
    max_line = (size_t)cfg->watch.max_line_bytes;
  }
  int unreadable = 0;
  ps_buf err;
  ps_buf_init(&err, 4096);
  for (size_t pi = 0; pi < c->npaths; pi++) {
    const char *path = c->paths[pi];
    ps_emitter em = {.point = on_point, .reject = on_reject, .ctx = cx,
                     .origin = {.file = path, .line = 0}};
    ps_buf_reset(&err);
    if (ops->run_folder) {
      int rc = ps_run_convert_path(ops, src, path, (int64_t)time(NULL), stall_after_s,
                                   max_line, &em, &err);
      if (rc < 0) {
        say(cx, "perfship convert: %s: %s\n", path, err.len ? err.data : strerror(-rc));
        unreadable = 1;
      }
      continue;
    }
    if (convert_file(ops, src, path, max_line, &em, &err) < 0)
      unreadable = 1;
  }
  ps_buf_free(&err);
  return unreadable;
}

int ps_cmd_convert(int argc, char **argv, ps_config *cfg, int cfg_given) {
  const ps_config *conf = cfg_given ? cfg : NULL;
  convert_args args;
  ps_tag *extra = NULL;
  int exit_code = PS_EXIT_OK;
  convert_ctx cx = {0};
  ps_buf_init(&cx.out, 0);
  ps_buf_init(&cx.msgs, 0);
  if (args_alloc(&args, argc) < 0) {
    exit_code = PS_EXIT_SOFTWARE;
    goto done;
  }
  if ((exit_code = parse_args(argc, argv, &args)) != PS_EXIT_OK)
    goto done;

  ps_format_id fid = PS_FMT_JSONL;
  if (ps_format_from_name(args.format, &fid) != 0) {
    exit_code = usage("unknown format (jsonl, lp, loadgen, dss-bench, locust, benchmarker):",
                      args.format);
    goto done;
  }
  const ps_format_ops *ops = ps_format_ops_get(fid);
  if (!ops) {
    say(&cx, "perfship convert: format %s is not part of this build\n", args.format);
    exit_code = PS_EXIT_SOFTWARE;
    goto done;
  }
  ps_source_cfg src;
  if ((exit_code = source_mapping(&args, conf, fid, &src)) != PS_EXIT_OK)
    goto done;
  if (global_tags(&cx, conf, &extra) < 0) {
    exit_code = PS_EXIT_SOFTWARE;
    goto done;
  }

  int unreadable = convert_paths(&cx, &args, ops, &src, conf);
  flush_out(&cx);
  if (fflush(stdout) != 0 || cx.write_failed) {
    say(&cx, "perfship convert: writing to stdout failed: %s\n", strerror(errno));
    exit_code = PS_EXIT_SOFTWARE;
  } else if (unreadable) {
    exit_code = PS_EXIT_NOINPUT;
  } else if (cx.rejects) {
    say(&cx, "perfship convert: %lu record(s) rejected\n", cx.rejects);
    exit_code = PS_EXIT_DATAERR;
  }

done:
  flush_msgs(&cx);
  fflush(stderr);
  args_free(&args);
  free(extra);
  ps_buf_free(&cx.out);
  ps_buf_free(&cx.msgs);
  return exit_code;
}
