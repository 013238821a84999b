/*
 * pipeline/slogs.c: chain slogs of tracked run folders read as they grow.
 * See include/pipeline/slogs.h.
 *
 * Design
 * - A gzip stream has no random access and a running stage's file no
 *   trailer, so a stage is one open reader (input/gzlines.h) from its
 *   first byte, kept while the stage runs and read on when the file
 *   grows. No offset is saved: after a restart the stage is read again
 *   from the start and its points, keyed by their time, overwrite
 *   themselves (docs/loadgen.md "Slogs"). Only stages that are complete
 *   and acknowledged are remembered, so a restart does not read every old
 *   run's gigabytes again.
 * - Reading happens in an idle handle in slices, never inside the event
 *   that named the file: inflating a 1 GB stage takes seconds, and the
 *   loop must keep answering the sink and the watcher meanwhile.
 * - Points leave as aux batches (like the run markers), at most
 *   MAX_IN_FLIGHT at a time over all stages: a slow server slows the
 *   reading, and memory stays bounded.
 */
#include "pipeline/slogs.h"
#include "slogs_private.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/figures.h"
#include "core/log.h"
#include "core/util.h"
#include "formats/format.h"
#include "formats/slog_reduce.h"
#include "input/feed_slog.h"
#include "input/gzlines.h"
#include "runs/runs.h"

#define MOD "slog"
#define SLICE_BYTES ((uint64_t)4 << 20) /* decompressed per loop turn */
#define BATCH_POINTS 2000
#define MAX_IN_FLIGHT 4
#define SNAPSHOT_EVERY_MS 10000 /* a running stage's partial points */

struct pl_slog_stage {
  pl_slog_stage *next;
  pl_slogs *t;
  char *path;
  uint64_t path_hash;
  char *folder;
  ps_run_id id;
  int stage;
  int fd;
  ps_gzlines *gz;
  ps_slog_reducer *red;
  int runnable;     /* lines may be read now */
  int at_end;       /* read to the end of a file still being written */
  int finished;     /* its final points were emitted */
  int restart;      /* read again from the start once its batches settle */
  int failed;       /* a batch was not acknowledged */
  int64_t cycles;   /* finished cycles the reducer was given */
  ps_pbatch *b;
  size_t bpoints;
  size_t in_flight;
  uint64_t size;
  int64_t mtime_ns;
  uint64_t last_snapshot_ms;
  int snapshot_sent; /* the last read's partial points went out */
  uint64_t last_line;
  int64_t stage_ns; /* the time of its loadgen_slog_stage point; -1 before one */
  ps_emitter em;
};

struct pl_slog_done {
  pl_slog_done *next;
  char *path;
  uint64_t path_hash;
  uint64_t size;
  int64_t mtime_ns;
  int64_t cycles;
};

/* ---- the done list ------------------------------------------------------ */

/* The lists are looked up by path for every finished cycle tapped: a
 * hash compared first spares a string comparison with each of a
 * backfill's hundreds of stages, the paths alike for their first 40 bytes
 * or more (docs/benchmarks.md). */
static uint64_t path_hash(const char *path) { return ps_hash64(PS_HASH_SEED, path, strlen(path)); }

/* `h`: the path's path_hash (a tapped cycle asks both lists with one) */
static pl_slog_done *done_find_hashed(pl_slogs *t, const char *path, uint64_t h) {
  for (pl_slog_done *d = t->done; d; d = d->next)
    if (d->path_hash == h && strcmp(d->path, path) == 0)
      return d;
  return NULL;
}

static pl_slog_done *done_find(pl_slogs *t, const char *path) {
  return done_find_hashed(t, path, path_hash(path));
}

static void done_remove(pl_slogs *t, const char *path) {
  uint64_t h = path_hash(path);
  for (pl_slog_done **pp = &t->done; *pp; pp = &(*pp)->next)
    if ((*pp)->path_hash == h && strcmp((*pp)->path, path) == 0) {
      pl_slog_done *d = *pp;
      *pp = d->next;
      free(d->path);
      free(d);
      t->sh->state_dirty = 1;
      return;
    }
}

static void done_add(pl_slogs *t, const char *path, uint64_t size, int64_t mtime_ns,
                     int64_t cycles) {
  done_remove(t, path);
  pl_slog_done *d = calloc(1, sizeof *d);
  if (!d || !(d->path = strdup(path))) {
    free(d);
    return; /* forgetting costs a re-read at the next start, nothing else */
  }
  d->path_hash = path_hash(path);
  d->size = size;
  d->mtime_ns = mtime_ns;
  d->cycles = cycles;
  /* at the end: the state is read back in the order it was saved */
  pl_slog_done **end = &t->done;
  while (*end)
    end = &(*end)->next;
  *end = d;
  t->sh->state_dirty = 1;
}

void pl_slogs_from_json(pl_slogs *t, const char *text) {
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "done");
  const cJSON *e;
  size_t dropped = 0, cycles = 0;
  int whole = cJSON_IsObject(root), done_list = !arr || cJSON_IsArray(arr);
  if (!whole || !done_list)
    arr = NULL;
  cJSON_ArrayForEach(e, arr) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "path");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, "size");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "mtime_ns");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "cycles");
    /* a number no file size or count can be is damage: the stage is read
     * again rather than cast out of range (the fuzz target found 1e300) */
    int sane = cJSON_IsNumber(s) && s->valuedouble >= 0 && s->valuedouble < 9e15 &&
               (!cJSON_IsNumber(c) || (c->valuedouble >= 0 && c->valuedouble < 1e9));
    if (cJSON_IsString(p) && sane && cJSON_IsString(m))
      done_add(t, p->valuestring, (uint64_t)s->valuedouble, strtoll(m->valuestring, NULL, 10),
               cJSON_IsNumber(c) ? (int64_t)c->valuedouble : 0);
    else
      dropped++;
  }
  if (whole)
    cycles = pl_slogs_cycles_from_json(&t->cycles,
                                       cJSON_GetObjectItemCaseSensitive(root, "cycles"));
  /* one line for the section: a stage left out is read again, and
   * whoever wonders why should find it said */
  if (text && !whole)
    PS_WARN(MOD, "the state file's slogs section is %s (ignored): its stages are read again",
            root ? "not an object" : "not JSON");
  else if (!done_list || dropped || cycles)
    PS_WARN(MOD,
            "the state file's slogs section was not read whole%s; %zu damaged entr%s of "
            "'done' and %zu of 'cycles' left out (those stages are read again)",
            done_list ? "" : " ('done' is not a list)", dropped, dropped == 1 ? "y" : "ies",
            cycles);
  cJSON_Delete(root);
  t->sh->state_dirty = 0;
}

/* Whether a stage of `folder` is being read (not yet remembered as done). */
static int folder_reading(const pl_slogs *t, const char *folder) {
  for (const pl_slog_stage *s = t->stages; s; s = s->next)
    if (strcmp(s->folder, folder) == 0)
      return 1;
  return 0;
}

char *pl_slogs_to_json(pl_slogs *t) {
  cJSON *root = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(root, "done");
  for (pl_slog_done *d = t->done; d && arr; d = d->next) {
    cJSON *e = cJSON_CreateObject();
    char m[32];
    snprintf(m, sizeof m, "%" PRId64, d->mtime_ns); /* a double would round it */
    cJSON_AddStringToObject(e, "path", d->path);
    cJSON_AddNumberToObject(e, "size", (double)d->size);
    cJSON_AddStringToObject(e, "mtime_ns", m);
    cJSON_AddNumberToObject(e, "cycles", (double)d->cycles);
    cJSON_AddItemToArray(arr, e);
  }
  /* a folder whose stages were all read lets its cycles' ids go when
   * saved (slogs_private.h): only its counts are still needed */
  for (pl_slog_cyc *c = t->cycles; c; c = c->next)
    if (c->seen && !folder_reading(t, c->folder))
      pl_slogs_cycle_ids_forget(c);
  cJSON_AddItemToObject(root, "cycles", pl_slogs_cycles_to_json(t->cycles));
  char *s = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return s;
}

/* ---- batches ------------------------------------------------------------ */

static void stage_settled(pl_slog_stage *s);
static void wake(pl_slogs *t);

static void batch_done(void *arg, int acked) {
  pl_slog_stage *s = arg;
  pl_slogs *t = s->t;
  s->in_flight--;
  t->in_flight--;
  if (!acked)
    s->failed = 1;
  wake(t); /* reading may have waited for this answer */
  stage_settled(s);
}

static int send_batch(pl_slog_stage *s) {
  pl_slogs *t = s->t;
  if (!s->b)
    return 0;
  ps_pbatch *b = s->b;
  s->b = NULL;
  s->bpoints = 0;
  s->in_flight++;
  t->in_flight++;
  int rc = t->out.send(t->out.ctx, b, batch_done, s);
  if (rc < 0) {
    s->in_flight--;
    t->in_flight--;
    ps_pbatch_free(b);
    s->failed = 1;
  }
  return 0;
}

static int slog_point(void *ctx, const ps_point *p, const ps_origin *o) {
  pl_slog_stage *s = ctx;
  pl_slogs *t = s->t;
  if (!s->b && !(s->b = ps_pbatch_new()))
    return -ENOMEM;
  const char *reason = NULL;
  int rc = t->out.encode(t->out.ctx, s->b, p, o, &reason);
  if (rc < 0 && reason) {
    t->sh->n.points_refused++;
    ps_log_limited(PS_LOG_WARNING, MOD, pl_log_key("refused", s->path), 60,
                   "%s: point refused: %s", s->path, reason);
    return 0;
  }
  if (rc < 0)
    return rc;
  if (t->hooks.point)
    t->hooks.point(t->hooks.ctx, p);
  if (strcmp(p->measurement, ps_growth_figure(PS_GROWTH_KERNEL_OBJECTS)->measurement) == 0)
    s->stage_ns = p->time_ns;
  if (++s->bpoints >= BATCH_POINTS)
    send_batch(s);
  return 0;
}

static void slog_reject(void *ctx, const ps_origin *o, const char *reason) {
  pl_slog_stage *s = ctx;
  char where[4200];
  s->t->sh->n.records_rejected++;
  ps_origin_str(where, sizeof where, s->path, o->line);
  ps_log_limited(PS_LOG_WARNING, "parse", pl_log_key("slog", s->path), 10, "%s: %s", where,
                 reason);
}

/* ---- a stage's reader --------------------------------------------------- */

static void reader_close(pl_slog_stage *s) {
  ps_slog_reduce_free(s->red);
  s->red = NULL;
  ps_gzlines_free(s->gz);
  s->gz = NULL;
  if (s->fd >= 0)
    close(s->fd);
  s->fd = -1;
}

static int reader_open(pl_slog_stage *s) {
  reader_close(s);
  s->fd = open(s->path, O_RDONLY | O_CLOEXEC);
  if (s->fd < 0)
    return -errno;
  char st[16];
  snprintf(st, sizeof st, "%d", s->stage);
  int rc = ps_gzlines_open(&s->gz, s->fd, 0);
  if (rc == 0)
    rc = ps_slog_reduce_new(&s->red, s->id.run, s->id.test_type, s->id.revision, st);
  if (rc) {
    reader_close(s);
    return rc;
  }
  pl_slog_cyc *c = pl_slogs_cycles_of(&s->t->cycles, s->folder, 0);
  s->cycles = c ? c->n[s->stage] : 0;
  ps_slog_reduce_set_cycles(s->red, s->cycles);
  PS_DEBUG(MOD, "%s: read from its start (finished cycles %" PRId64 ")", s->path, s->cycles);
  s->finished = s->at_end = s->failed = s->restart = s->snapshot_sent = 0;
  s->t->any_read = 1;
  s->stage_ns = -1;
  s->last_snapshot_ms = 0;
  s->last_line = 0;
  s->runnable = 1;
  return 0;
}

static void stage_free(pl_slog_stage *s) {
  reader_close(s);
  ps_pbatch_free(s->b);
  free(s->path);
  free(s->folder);
  free(s);
}

static void idle_cb(uv_idle_t *h);

static void wake(pl_slogs *t) {
  if (!t->closed && !t->idle_on) {
    uv_idle_start(&t->idle, idle_cb);
    t->idle_on = 1;
  }
}

static void unlink_stage(pl_slogs *t, pl_slog_stage *s) {
  for (pl_slog_stage **pp = &t->stages; *pp; pp = &(*pp)->next)
    if (*pp == s) {
      *pp = s->next;
      return;
    }
}

/* After a batch answer or the end of a read: a stage whose final points
 * were all acknowledged is done; one that lost a batch is read again. */
static void stage_settled(pl_slog_stage *s) {
  pl_slogs *t = s->t;
  if (s->in_flight)
    return;
  pl_slog_cyc *c = pl_slogs_cycles_of(&t->cycles, s->folder, 0);
  if (s->finished && c && c->n[s->stage] != s->cycles)
    s->restart = 1; /* cycles came in while it was read: its growth is stale */
  if (s->failed && !t->sh->stopping) {
    s->restart = 1;
    wake(t);
  } else if (s->finished && !s->restart && !s->failed) {
    done_add(t, s->path, s->size, s->mtime_ns, s->cycles);
    if (t->hooks.stage_done && s->stage_ns >= 0 && s->id.test_type[0])
      t->hooks.stage_done(t->hooks.ctx, s->id.run, s->id.test_type, s->stage_ns);
    unlink_stage(t, s);
    stage_free(s);
  } else if (s->restart) {
    wake(t);
  } else if (s->at_end && s->snapshot_sent) {
    /* A running stage whose snapshot is acknowledged: a restart that finds
     * the file as it was has nothing to send again. It stays open here to
     * read on when the file grows. */
    done_add(t, s->path, s->size, s->mtime_ns, s->cycles);
  }
  if (!pl_slogs_busy(t) && t->hooks.idle)
    t->hooks.idle(t->hooks.ctx);
}

/* Reads one slice of a stage. */
static void read_slice(pl_slog_stage *s) {
  pl_slogs *t = s->t;
  uint64_t start = ps_gzlines_end(s->gz)->out_bytes;
  ps_gzline l;
  int got;
  while ((got = ps_gzlines_next(s->gz, &l)) == 1) {
    s->em.origin.line = l.line_no;
    s->last_line = l.line_no;
    int rc = ps_slog_reduce_line(s->red, l.head, l.head_len, l.tail, l.tail_len, l.len, &s->em);
    if (rc == -ENOMEM) {
      PS_ERROR(MOD, "%s: out of memory; read again later", s->path);
      s->failed = 1;
      s->runnable = 0;
      return;
    }
    if (ps_gzlines_end(s->gz)->out_bytes - start >= SLICE_BYTES || t->in_flight >= MAX_IN_FLIGHT)
      return; /* the rest in the next turn */
  }
  const ps_gzlines_status *st = ps_gzlines_end(s->gz);
  s->runnable = 0;
  if (got < 0) {
    ps_log_limited(PS_LOG_WARNING, MOD, pl_log_key("read", s->path), 60, "%s: %s", s->path,
                   strerror(-got));
    s->failed = 1; /* read again from the start at the next event */
    send_batch(s);
    return;
  }
  uint64_t now = uv_now(t->sh->loop);
  struct stat sb;
  if (fstat(s->fd, &sb) == 0) { /* what was read: the file as it is now */
    s->size = (uint64_t)sb.st_size;
    s->mtime_ns = ps_stat_mtime_ns(&sb);
  }
  if (st->complete || st->corrupt) {
    /* final: a corrupt file will not mend, reading it again gives the same */
    if (st->corrupt) {
      char why[256];
      ps_slog_corrupt_reason(st, why, sizeof why);
      s->em.origin.line = st->corrupt_line;
      slog_reject(s, &s->em.origin, why);
    }
    s->em.origin.line = 0;
    ps_slog_reduce_finish(s->red, st->complete, st->out_bytes, &s->em);
    s->finished = 1;
    reader_close(s);
  } else {
    s->at_end = 1; /* still being written: a snapshot, then wait for more */
    if (t->sh->once || now - s->last_snapshot_ms >= SNAPSHOT_EVERY_MS) {
      s->em.origin.line = 0;
      ps_slog_reduce_finish(s->red, 0, st->out_bytes, &s->em);
      s->last_snapshot_ms = now;
      s->snapshot_sent = 1;
    }
  }
  send_batch(s);
  stage_settled(s);
}

void pl_slogs_kick(pl_slogs *t) {
  if (t->held) {
    t->held = 0;
    wake(t);
  }
}

static void idle_cb(uv_idle_t *h) {
  pl_slogs *t = h->data;
  int work = 0;
  if (t->hooks.reader_busy && t->hooks.reader_busy(t->hooks.ctx)) {
    uv_idle_stop(&t->idle); /* pl_slogs_kick() when the reader is done */
    t->idle_on = 0;
    t->held = 1;
    return;
  }
  for (pl_slog_stage *s = t->stages, *next; s; s = next) {
    next = s->next;
    if (t->in_flight >= MAX_IN_FLIGHT || t->sh->stopping)
      break;
    if (s->restart && !s->in_flight) {
      if (reader_open(s) != 0) {
        s->restart = 0;
        continue;
      }
    }
    if (s->runnable && s->gz) {
      read_slice(s);
      work = 1;
      break; /* one slice per turn: the loop answers in between */
    }
  }
  if (!work || t->sh->stopping) {
    int more = 0;
    for (pl_slog_stage *s = t->stages; s; s = s->next)
      more |= (s->runnable || (s->restart && !s->in_flight));
    if (!more || t->sh->stopping || t->in_flight >= MAX_IN_FLIGHT) {
      uv_idle_stop(&t->idle);
      t->idle_on = 0;
      if (!pl_slogs_busy(t) && t->hooks.idle)
        t->hooks.idle(t->hooks.ctx);
    }
  }
}

/* ---- what the service tells ------------------------------------------- */

void pl_slogs_init(pl_slogs *t, pl_shared *sh, const pl_aux_out *out,
                   const pl_slogs_hooks *hooks) {
  memset(t, 0, sizeof *t);
  t->sh = sh;
  t->out = *out;
  if (hooks)
    t->hooks = *hooks;
  uv_idle_init(sh->loop, &t->idle);
  t->idle.data = t;
}

static pl_slog_stage *stage_find_hashed(pl_slogs *t, const char *path, uint64_t h) {
  for (pl_slog_stage *s = t->stages; s; s = s->next)
    if (s->path_hash == h && strcmp(s->path, path) == 0)
      return s;
  return NULL;
}

static pl_slog_stage *stage_find(pl_slogs *t, const char *path) {
  return stage_find_hashed(t, path, path_hash(path));
}

static pl_slog_stage *stage_add(pl_slogs *t, const char *path, const char *folder, int stage) {
  pl_slog_stage *s = calloc(1, sizeof *s);
  if (!s || !(s->path = strdup(path)) || !(s->folder = strdup(folder))) {
    if (s)
      free(s->path);
    free(s);
    return NULL;
  }
  s->t = t;
  s->path_hash = path_hash(path);
  s->fd = -1;
  s->stage = stage;
  s->stage_ns = -1;
  char *real = realpath(folder, NULL);
  ps_run_id_from_name(real ? real : folder, &s->id);
  free(real);
  s->em = (ps_emitter){slog_point, slog_reject, s, {s->path, 0}};
  s->restart = 1;
  s->next = t->stages;
  t->stages = s;
  return s;
}

void pl_slogs_note_path(pl_slogs *t, const ps_source_cfg *src, const char *path) {
  if (t->closed || t->sh->stopping)
    return;
  int stage = ps_slog_stage_of(path);
  if (stage < 0)
    return;
  const ps_format_ops *ops = ps_format_ops_get(src->format);
  char folder[4096];
  if (!ops || !ops->run_folder || !ops->run_folder(path, folder, sizeof folder) ||
      !ps_run_is_folder(folder))
    return;
  pl_slog_stage *s = stage_find(t, path);
  if (!s) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
      return;
    pl_slog_done *d = done_find(t, path);
    if (d && d->size == (uint64_t)st.st_size && d->mtime_ns == ps_stat_mtime_ns(&st))
      return; /* read whole and acknowledged before */
    if (d)
      done_remove(t, path); /* replaced or grown since: read it again */
    if (!(s = stage_add(t, path, folder, stage)))
      return;
  } else if (s->at_end && s->gz) {
    struct stat now, open_st;
    if (stat(path, &now) != 0)
      return; /* gone: what was read stands */
    if (fstat(s->fd, &open_st) != 0 || now.st_ino != open_st.st_ino ||
        now.st_dev != open_st.st_dev) {
      s->restart = 1; /* replaced: the new file from its start */
    } else {
      if ((uint64_t)now.st_size == s->size && ps_stat_mtime_ns(&now) == s->mtime_ns &&
          s->snapshot_sent)
        return; /* nothing new, and what was read is out (else: its snapshot is due) */
      ps_gzlines_again(s->gz); /* the running stage grew: read on */
      s->at_end = 0;
      s->snapshot_sent = 0;
      s->runnable = 1;
    }
  } else if (s->finished && !s->in_flight) {
    s->restart = 1; /* a complete file changed again */
  }
  wake(t);
}

void pl_slogs_tap(pl_slogs *t, const ps_point *p, const char *path) {
  if (strcmp(p->measurement, "loadgen_cycle") != 0 || !path)
    return;
  const ps_field *f = ps_point_field(p, "finished");
  const char *st = ps_point_tag(p, "stage");
  char *end = NULL;
  long n = st ? strtol(st, &end, 10) : -1;
  if (!f || f->type != PS_F_BOOL || !f->v.b || !end || *end || n < 0 || n >= PS_SLOG_MAX_STAGES)
    return;
  const char *task = ps_point_tag(p, "task");
  double seq = ps_point_number(p, "seq");
  /* a seq no int64 holds (absent: NaN) is none, not an undefined cast */
  int64_t seq_time[2] = {seq >= 0 && seq < 9e18 ? (int64_t)seq : -1, p->time_ns};
  uint64_t id = ps_hash64(PS_HASH_SEED, task ? task : "", task ? strlen(task) : 0);
  id = ps_hash64(id, seq_time, sizeof seq_time);
  /* its run folder, copied on the stack: this runs for every cycle */
  char folder[PATH_MAX];
  const char *slash = strrchr(path, '/');
  size_t flen = slash ? (size_t)(slash - path) : 0;
  if (flen >= sizeof folder)
    return;
  memcpy(folder, path, flen);
  if (!slash)
    folder[flen++] = '.';
  else if (!flen)
    folder[flen++] = '/';
  folder[flen] = '\0';
  pl_slog_cyc *c = pl_slogs_cycles_of(&t->cycles, folder, 1);
  if (c && pl_slogs_cycle_count(c, (int)n, id)) {
    t->sh->state_dirty = 1;
    /* Nothing read and nothing done yet (a backfill's slogs wait for its
     * perf.jsonl files): no stage can be stale, and the two lookups below
     * for each of a run's cycles were 2 % of a backfill's CPU. */
    if (!t->any_read && !t->done)
      return;
    /* the stage's growth per cycle was written without these cycles: the
     * stage is read again (its points overwrite themselves) */
    char sp[4200];
    int len = snprintf(sp, sizeof sp, "%s/chain-stage-%ld.slog.gz", c->folder, n);
    if (len < 0 || (size_t)len >= sizeof sp)
      return;
    uint64_t h = ps_hash64(PS_HASH_SEED, sp, (size_t)len);
    pl_slog_stage *s = stage_find_hashed(t, sp, h);
    pl_slog_done *d = done_find_hashed(t, sp, h);
    if (d && d->cycles != c->n[n]) {
      done_remove(t, sp);
      if ((s = stage_add(t, sp, c->folder, (int)n)))
        wake(t);
    } else if (s && s->cycles != c->n[n] && (s->finished || s->at_end)) {
      s->restart = 1;
      wake(t);
    }
  }
}

int pl_slogs_busy(const pl_slogs *t) {
  if (t->in_flight)
    return 1;
  for (const pl_slog_stage *s = t->stages; s; s = s->next)
    if (s->runnable || s->restart)
      return 1;
  return 0;
}

int pl_slogs_run_pending(const pl_slogs *t, const char *run) {
  for (const pl_slog_stage *s = t->stages; s; s = s->next)
    if ((s->runnable || s->restart || s->in_flight || s->b) && strcmp(s->id.run, run) == 0)
      return 1;
  return 0;
}

void pl_slogs_close(pl_slogs *t) {
  if (t->closed)
    return;
  t->closed = 1;
  if (!uv_is_closing((uv_handle_t *)&t->idle))
    uv_close((uv_handle_t *)&t->idle, NULL);
}

void pl_slogs_free(pl_slogs *t) {
  while (t->stages) {
    pl_slog_stage *s = t->stages;
    t->stages = s->next;
    stage_free(s);
  }
  while (t->done) {
    pl_slog_done *d = t->done;
    t->done = d->next;
    free(d->path);
    free(d);
  }
  pl_slogs_cycles_free(&t->cycles);
}
