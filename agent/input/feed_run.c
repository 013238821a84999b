/*
 * input/feed_run.c: converting loadgen run folders, and re-deriving a run's
 * facts. See include/input/feed_run.h.
 *
 * Design
 * - The agent and `convert` must write the same points and markers for the
 *   same folder (docs/design-notes.md "backfill"): so the lines are read by
 *   the agent's line reader (input/feed.c over input/tail.c), the run is
 *   judged by the same ps_run_evaluate(), and the unterminated last line
 *   follows the rule of include/runs/runs.h.
 * - The stall threshold is a parameter, never a process-wide setting:
 *   `convert -c FILE` passes the configuration's alerts.stall_after_s.
 * - The parser only parses; this file owns every open, stat and read.
 */
#include "input/feed_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/util.h"
#include "input/feed.h"
#include "input/feed_slog.h"

/* Without the queue's exit_code, a complete perf-finish is the run's end
 * (runs.h), even as an unterminated last line. */
static int is_perf_finish(const char *data, size_t len) {
  cJSON *root = cJSON_ParseWithLength(data, len);
  const cJSON *ty = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "type") : NULL;
  int yes = cJSON_IsString(ty) && strcmp(ty->valuestring, "perf-finish") == 0;
  cJSON_Delete(root);
  return yes;
}

/* A parser of `ops` opened on perf.jsonl as `fd`, with the head it needs. */
static int open_parser(const ps_format_ops *ops, const ps_source_cfg *src, int fd,
                       const char *path, ps_parser **p, ps_buf *err) {
  ps_head_buf hb;
  int rc = ps_input_read_head(fd, path, ops, PS_INPUT_LINES, &hb);
  if (rc) {
    ps_buf_printf(err, "%s: %s", path, strerror(-rc));
    return rc;
  }
  rc = ops->open(p, src, &hb.head, err);
  ps_head_buf_free(&hb);
  return rc;
}

/* The run's folder and its perf.jsonl, from either. */
static int run_paths(const char *path, char **folder, char **perf, ps_buf *err) {
  struct stat st;
  if (stat(path, &st) != 0) { /* the driver names the operand itself */
    int e = errno;
    ps_buf_printf(err, "%s", strerror(e));
    return -e;
  }
  if (S_ISDIR(st.st_mode)) {
    *folder = strdup(path);
    if (*folder && asprintf(perf, "%s/perf.jsonl", path) < 0)
      *perf = NULL;
  } else {
    char *copy = strdup(path);
    *perf = strdup(path);
    *folder = copy ? strdup(dirname(copy)) : NULL;
    free(copy);
  }
  return *folder && *perf ? 0 : -ENOMEM;
}

typedef struct run_eval {
  const char *folder;
  int64_t now_s, stall_after_s;
} run_eval;

/* The run's state as the agent would judge it now. perf.jsonl's
 * unterminated last line counts when the run has ended, or when it is a
 * complete perf-finish and there is no exit_code to say otherwise: then it
 * is fed and the run judged again with it. */
static int evaluate_run(const run_eval *ev, const ps_format_ops *ops, ps_parser *p,
                        const ps_feed_last *last, ps_emitter *em, ps_run_view *view, ps_buf *err) {
  int rc = ps_run_evaluate(ev->folder, ev->now_s, ev->stall_after_s, ops->run_facts(p), view, err);
  if (rc != 0 || !last->text.len)
    return rc;
  if (view->state != PS_RUN_ENDED &&
      (view->have_exit_file || !is_perf_finish(last->text.data, last->text.len)))
    return 0;
  if ((rc = ps_feed_line(ops, p, em, last->text.data, last->text.len, last->line_no)) != 0)
    return rc;
  return ps_run_evaluate(ev->folder, ev->now_s, ev->stall_after_s, ops->run_facts(p), view, err);
}

/* One run folder (or its perf.jsonl), converted as the agent would see it
 * if it met the folder now. */
static int convert_run(const ps_format_ops *ops, const ps_source_cfg *src, const char *path,
                       int64_t now_s, int64_t stall_after_s, size_t max_line, ps_emitter *em,
                       ps_buf *err) {
  char *folder = NULL, *perf = NULL;
  int rc = run_paths(path, &folder, &perf, err), fd = -1;
  ps_parser *p = NULL;
  ps_slog_cycles *cycles = NULL;
  ps_feed_last last;
  ps_buf_init(&last.text, 0);
  const char *saved_file = em->origin.file;
  if (rc != 0)
    goto out;
  fd = ps_open_regular(perf, NULL); /* a FIFO is not waited on */
  if (fd < 0) {
    rc = fd;
    ps_buf_printf(err, "%s: %s", perf, rc == -EINVAL ? "not a regular file" : strerror(-rc));
    goto out;
  }
  if ((rc = open_parser(ops, src, fd, perf, &p, err)) != 0)
    goto out;
  em->origin.file = perf;
  /* the slog figures want each stage's finished cycles (input/feed_slog.h) */
  cycles = calloc(1, sizeof *cycles);
  if (!cycles) {
    rc = -ENOMEM;
    goto out;
  }
  ps_slog_cycles_tap(cycles, em);
  rc = ps_feed_fd(fd, ops, p, &cycles->em, UINT64_MAX, max_line, &last);
  if (rc) {
    ps_buf_printf(err, "%s: %s", perf, strerror(-rc));
    goto out;
  }
  ps_run_view view;
  run_eval ev = {folder, now_s, stall_after_s};
  if ((rc = evaluate_run(&ev, ops, p, &last, &cycles->em, &view, err)) != 0)
    goto out;
  rc = ps_run_emit_markers(&view, view.state == PS_RUN_ENDED,
                           PS_RUN_MARK_START | PS_RUN_MARK_END, em);
  if (rc == 0)
    rc = ps_slog_feed_folder(folder, cycles, em, err);
out:
  free(cycles);
  em->origin.file = saved_file;
  if (fd >= 0)
    close(fd);
  if (p)
    ops->free(p);
  ps_buf_free(&last.text);
  free(folder);
  free(perf);
  return rc;
}

static int has_perf_jsonl(const char *dir) {
  char path[4096];
  struct stat st;
  int n = snprintf(path, sizeof path, "%s/perf.jsonl", dir);
  return n > 0 && (size_t)n < sizeof path && stat(path, &st) == 0 &&
         S_ISREG(st.st_mode);
}

static int not_hidden(const struct dirent *de) { return de->d_name[0] != '.'; }

int ps_run_convert_path(const ps_format_ops *ops, const ps_source_cfg *src,
                        const char *path, int64_t now_s, int64_t stall_after_s,
                        size_t max_line, ps_emitter *em, ps_buf *err) {
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || has_perf_jsonl(path))
    return convert_run(ops, src, path, now_s, stall_after_s, max_line, em, err);
  /* A results folder: the runner's queue makes one run folder per revision. */
  struct dirent **names = NULL;
  int n = scandir(path, &names, not_hidden, alphasort);
  if (n < 0) {
    int e = errno;
    ps_buf_printf(err, "%s", strerror(e));
    return -e;
  }
  int rc = 0, runs = 0;
  for (int i = 0; i < n; i++) {
    char *sub = NULL;
    if (rc == 0 && asprintf(&sub, "%s/%s", path, names[i]->d_name) > 0 &&
        has_perf_jsonl(sub)) {
      runs++;
      rc = convert_run(ops, src, sub, now_s, stall_after_s, max_line, em, err);
    }
    free(sub);
    free(names[i]);
  }
  free(names);
  if (rc == 0 && runs == 0) {
    ps_buf_puts(err, "no perf.jsonl in it or in its subfolders");
    rc = -ENOENT;
  }
  return rc;
}

static int discard_point(void *ctx, const ps_point *p, const ps_origin *o) {
  (void)ctx;
  (void)p;
  (void)o;
  return 0;
}

static void discard_reject(void *ctx, const ps_origin *o, const char *r) {
  (void)ctx;
  (void)o;
  (void)r;
}

int ps_run_scan_facts(const ps_format_ops *ops, const ps_source_cfg *src, int fd,
                      const char *path, uint64_t end_offset, size_t max_line,
                      ps_run_facts *facts, ps_buf *err) {
  ps_parser *p = NULL;
  int rc = open_parser(ops, src, fd, path, &p, err);
  if (rc)
    return rc;
  ps_emitter em = {discard_point, discard_reject, NULL, {path, 0}};
  rc = ps_feed_fd(fd, ops, p, &em, end_offset, max_line, NULL);
  if (rc == 0)
    *facts = *ops->run_facts(p);
  else
    ps_buf_printf(err, "%s: %s", path, strerror(-rc));
  ops->free(p);
  return rc;
}
