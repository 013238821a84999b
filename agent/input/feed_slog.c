/*
 * input/feed_slog.c: a run folder's chain slogs through the slog reducer.
 * See include/input/feed_slog.h.
 *
 * Design
 * - The reducer (formats/) only parses; every open and read of a slog is
 *   here, as feed_run.c owns those of perf.jsonl.
 * - Growth per cycle needs the stage's finished cycles, which only
 *   perf.jsonl knows (docs/schema.md "Slog figures"). Rather than parse
 *   perf-finish a second time, the points its parser gave anyway are
 *   counted on their way out (the cycles tap).
 */
#include "input/feed_slog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/point.h"
#include "core/util.h"
#include "formats/slog_reduce.h"
#include "input/gzlines.h"

static int tap_point(void *ctx, const ps_point *p, const ps_origin *o) {
  ps_slog_cycles *t = ctx;
  int rc = t->inner->point(t->inner->ctx, p, o);
  if (rc == 0 && strcmp(p->measurement, "loadgen_cycle") == 0) {
    const ps_field *f = ps_point_field(p, "finished");
    const char *st = ps_point_tag(p, "stage");
    char *end = NULL;
    long n = st ? strtol(st, &end, 10) : -1;
    if (f && f->type == PS_F_BOOL && f->v.b && end && !*end && n >= 0 &&
        n < PS_SLOG_MAX_STAGES)
      t->finished[n]++;
  }
  return rc;
}

static void tap_reject(void *ctx, const ps_origin *o, const char *reason) {
  ps_slog_cycles *t = ctx;
  t->inner->reject(t->inner->ctx, o, reason);
}

void ps_slog_cycles_tap(ps_slog_cycles *t, ps_emitter *inner) {
  memset(t, 0, sizeof *t);
  t->inner = inner;
  t->em = (ps_emitter){tap_point, tap_reject, t, inner->origin};
}

int ps_slog_stage_of(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  static const char pre[] = "chain-stage-", suf[] = ".slog.gz";
  if (strncmp(base, pre, sizeof pre - 1) != 0)
    return -1;
  const char *d = base + sizeof pre - 1, *e = d;
  while (*e >= '0' && *e <= '9')
    e++;
  if (e == d || e - d > 3 || strcmp(e, suf) != 0)
    return -1;
  int n = atoi(d);
  return n < PS_SLOG_MAX_STAGES ? n : -1;
}

void ps_slog_corrupt_reason(const ps_gzlines_status *st, char *out, size_t n) {
  snprintf(out, n, "corrupt gzip data (%s); %u stretch%s skipped, the stage is partial",
           st->message, st->corrupt, st->corrupt == 1 ? "" : "es");
}

int ps_slog_feed_stage(const char *path, const ps_run_id *id, int stage, int64_t cycles,
                       ps_emitter *em, int *complete, ps_buf *err) {
  *complete = 0;
  /* one unreadable stage stops no other; a FIFO named like a slog is
   * not waited on (the agent's scan passes it by too) */
  int fd = ps_open_regular(path, NULL);
  if (fd < 0) {
    ps_origin o = {path, 0};
    em->reject(em->ctx, &o, fd == -EINVAL ? "not a regular file; not read" : strerror(-fd));
    return 0;
  }
  char stage_s[16];
  snprintf(stage_s, sizeof stage_s, "%d", stage);
  ps_gzlines *gz = NULL;
  ps_slog_reducer *r = NULL;
  int rc = ps_gzlines_open(&gz, fd, 0);
  if (rc == 0)
    rc = ps_slog_reduce_new(&r, id->run, id->test_type, id->revision, stage_s);
  if (rc) {
    ps_buf_printf(err, "%s: %s", path, strerror(-rc));
    goto out;
  }
  ps_slog_reduce_set_cycles(r, cycles);
  const char *saved_file = em->origin.file;
  uint64_t saved_line = em->origin.line;
  em->origin.file = path;
  ps_gzline l = {0};
  int got;
  while ((got = ps_gzlines_next(gz, &l)) == 1) {
    em->origin.line = l.line_no;
    if ((rc = ps_slog_reduce_line(r, l.head, l.head_len, l.tail, l.tail_len, l.len, em)) != 0)
      break;
  }
  if (rc == 0 && got == -ENOMEM)
    rc = -ENOMEM;
  if (rc) {
    ps_buf_printf(err, "%s: %s", path, strerror(-rc));
  } else {
    const ps_gzlines_status *st = ps_gzlines_end(gz);
    if (got < 0) { /* a read error is bad input of this file; the rest goes on */
      em->origin.line = 0;
      ps_emit_reject(em, "cannot be read: %s; the stage is partial", strerror(-got));
    } else if (st->corrupt) {
      char why[256];
      ps_slog_corrupt_reason(st, why, sizeof why);
      em->origin.line = st->corrupt_line;
      ps_emit_reject(em, "%s", why);
    }
    /* No trailer is no reject, also when the run ended: a killed runner
     * leaves its stage so, and the stage point says partial=true. */
    int done = got == 0 && st->complete;
    *complete = done;
    em->origin.line = 0;
    rc = ps_slog_reduce_finish(r, done, st->out_bytes, em);
  }
  em->origin.file = saved_file;
  em->origin.line = saved_line;
out:
  ps_slog_reduce_free(r);
  ps_gzlines_free(gz);
  close(fd);
  return rc;
}

static int chain_slog(const struct dirent *de) { return ps_slog_stage_of(de->d_name) >= 0; }

static int by_stage(const struct dirent **a, const struct dirent **b) {
  return ps_slog_stage_of((*a)->d_name) - ps_slog_stage_of((*b)->d_name);
}

int ps_slog_feed_folder(const char *folder, const ps_slog_cycles *cycles, ps_emitter *em,
                        ps_buf *err) {
  /* the run is the folder's own name, also when it was given as "." */
  ps_run_id id;
  char *real = realpath(folder, NULL);
  ps_run_id_from_name(real ? real : folder, &id);
  free(real);
  struct dirent **names = NULL;
  int n = scandir(folder, &names, chain_slog, by_stage);
  if (n < 0) {
    int e = errno;
    ps_buf_printf(err, "%s: %s", folder, strerror(e));
    return -e;
  }
  int rc = 0;
  for (int i = 0; i < n; i++) {
    char *path = NULL;
    int stage = ps_slog_stage_of(names[i]->d_name), complete = 0;
    if (rc == 0 && asprintf(&path, "%s/%s", folder, names[i]->d_name) < 0)
      rc = -ENOMEM;
    if (rc == 0)
      rc = ps_slog_feed_stage(path, &id, stage, cycles ? cycles->finished[stage] : 0, em,
                              &complete, err);
    free(path);
    free(names[i]);
  }
  free(names);
  return rc;
}
