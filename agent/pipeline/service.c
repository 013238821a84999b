/*
 * pipeline.c: the service loop of `perfship run`. See include/pipeline/pipeline.h.
 *
 * DESIGN
 * - One thread, one uv loop. Reading is synchronous pread() on regular
 *   files, done from an idle handle in slices (a budget of bytes per turn)
 *   so a 10 MB line or a backlog of gigabytes never starves the sink's
 *   sockets. The idle handle runs only while some file has work queued:
 *   an agent with nothing to read sleeps in epoll.
 * - A tracked file is an open descriptor plus its identity; the path is
 *   only where it was found. The descriptor is what we read, so a rotated
 *   (renamed) or deleted file is drained to its end before it is dropped,
 *   and the new file at the path is a new tracked file. A truncated or
 *   rewritten file retires its tracked file (whose batches may still be in
 *   flight) and starts a fresh one at offset 0.
 * - Whole documents (results.json, Locust stats) are keyed by path instead:
 *   their tools rewrite them, and a rewrite with identical contents must
 *   not be sent again, so the state keeps their content hash.
 * - A retired file stays allocated while batches hold its checkpoints:
 *   their origins point at its path (sink.h).
 * - The state file is saved shortly after acknowledgements move an offset
 *   (coalesced by a short timer), and at shutdown.
 * - --once is how a backlog (a year of run folders) is ingested, so it
 *   reports progress: on a terminal a status line redrawn a few times a
 *   second, otherwise (journal, CI log) an info line every PROGRESS_LOG_MS,
 *   so a log shows progress without filling up. Every stop ends with a
 *   one-line summary, and --once sends a last self-metrics point so even a
 *   one-shot backfill leaves a heartbeat.
 */
#include "pipeline/pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <cjson/cJSON.h>

#include "influx/batch.h"
#include "formats/emit.h"
#include "formats/format.h"
#include "influx/admin.h"
#include "core/log.h"
#include "core/util.h"
#include "influx/lp.h"
#include "runs/convert.h"
#include "runs/runs.h"
#include "pipeline/selfstats.h"
#include "influx/sink.h"
#include "state/state.h"
#include "core/sysexits_ps.h"
#include "input/feed.h"
#include "input/tail.h"
#include "input/watch.h"

#define MOD "pipeline"
#define READ_CHUNK ((size_t)1 << 20)
/* Input parsed per loop turn. Between turns the loop answers the server:
 * at 4 MB a turn took ~25 ms, longer than InfluxDB needs for a 5,000-point
 * batch, so the server sat idle waiting for the next request. */
#define SLICE_BYTES ((size_t)64 << 10)
/* Points encoded per loop turn: a 9 MB perf-finish record holds ~25,000,
 * and emitting them all in one turn (until back-pressure) kept the loop
 * from sending for tens of milliseconds. About one default batch. */
#define POINTS_PER_TURN 5000
#define SAVE_DELAY_MS 50
#define DRAIN_WAIT_MS 10000
/* A line file with everything acknowledged and nothing new for two rescan
 * intervals gives back its descriptor (reopened, identity checked, on the
 * next change): a year of daily run folders must not hold a year of fds. */
#define IDLE_CLOSE_RESCANS 2
#define PROGRESS_TTY_MS 250
#define PROGRESS_LOG_MS 10000

typedef struct ps_pipeline ps_pipeline;

/* A configuration and the files reading with its sources. Files and their
 * parsers point into their config's sources, so a config replaced by a
 * reload lives until its last file is freed; origins point at the files'
 * own paths, never into a config. */
typedef struct cfg_gen {
  struct cfg_gen *next;
  ps_config *cfg;
  size_t files; /* pfiles whose src points into cfg */
  int owned;    /* loaded by a reload; the first belongs to the caller */
} cfg_gen;

/* A loadgen run folder, tracked for its lifecycle markers (runs.h). */
typedef struct prun {
  struct prun *next;
  char *folder;
  int64_t first_seen; /* unix seconds */
  int known;          /* backfill decided (persisted) */
  int backfill;
  int start_acked;
  char end_acked[16]; /* status of the last acknowledged end marker */
  int stall_acked;
  int ended;
  int dirty;
  int in_flight;
  int pending_which;
  char pending_status[16];
  int64_t newest_ns;  /* newest modification time noticed in the folder */
  ps_run_facts facts; /* restored from the state, until a parser has them */
  int have_facts;
} prun;

typedef struct pfile {
  struct pfile *next;  /* every file, live or retired */
  struct pfile *qnext; /* work queue */
  ps_pipeline *pl;
  const ps_source_cfg *src;
  cfg_gen *gen; /* holds src alive */
  const ps_format_ops *ops;
  ps_input_kind kind;
  char *path;     /* origin of its points: never changes */
  char *cur_path; /* where it is now (rename within the sources) */
  uint64_t cur_hash; /* of cur_path: its bucket in the path index */
  struct pfile *path_next; /* chain of its bucket in pl->by_path */
  struct pfile *id_next;   /* chain of its bucket in pl->by_id (line files) */
  int in_id_index;
  ps_file_id id;
  int fd;
  ps_tail tail;
  ps_parser *parser;
  ps_cursor cur;
  ps_emitter em;
  int retired;  /* no longer read; freed once no batch holds it */
  int draining; /* gone from its path: read to the end, then retire */
  int queued;
  int paused; /* refused by back-pressure; resumed on ack */
  int yielded; /* refused for POINTS_PER_TURN: continued next turn */
  int record_rejected;
  int at_end; /* read to the end of what existed at least once */
  unsigned scan_gen;
  uint64_t last_read_ms; /* loop time of the last bytes read */
  int64_t seen_mtime_ns; /* modification time when last read */
  /* documents */
  ps_buf doc;
  int doc_loaded;
  uint64_t doc_hash;
  uint64_t doc_size;
  int64_t doc_mtime_ns;
  uint64_t settle_due; /* 0: nothing waiting to settle */
  int doc_backfill; /* found at start with no state: its run ended unseen */
} pfile;

struct ps_pipeline {
  uv_loop_t *loop;
  ps_config *cfg;
  cfg_gen *gens; /* every configuration still referenced (the current first) */
  cfg_gen boot_gen; /* the caller's configuration; the sink keeps using it */
  int create_db_busy; /* a CREATE DATABASE is on the threadpool */
  int once;
  int first_start_end; /* start_at=end and no state yet: skip what exists */
  int initial_scan;
  ps_sink *sink;
  ps_watch *watch;
  ps_batcher bt;
  uv_timer_t flush_timer, rescan_timer, settle_timer, save_timer, stats_timer,
      check_timer, create_db_timer, runs_timer, progress_timer;
  uv_idle_t work;
  uv_signal_t sig_term, sig_int, sig_hup;
  pfile *files;
  /* Every file event looks its file up by path and by device/inode: with
   * 1,000 files growing at once, walking the list for each was the largest
   * per-event cost. Chained hash tables over the same nodes; retired files
   * stay in them until freed (lookups skip them). */
  pfile **by_path, **by_id;
  size_t nbuckets; /* power of two, or 0 before the first file */
  size_t nindexed;
  pfile *q_head, *q_tail;
  prun *runs;
  int runs_final; /* --once: the closing evaluation was made */
  ps_state saved;
  ps_tag *extra;
  size_t nextra;
  ps_buf scratch;
  unsigned scan_gen;
  int lock_fd;
  /* counters */
  uint64_t lines_read, records_parsed, records_rejected, points_refused;
  size_t turn_points; /* encoded in this loop turn (POINTS_PER_TURN) */
  uint64_t server_rejected;
  uint64_t start_ms;
  size_t saved_entries; /* files in the last saved state: paces the saves */
  uint64_t last_progress_ms;
  int selfstats_in_flight;
  int final_stats_sent; /* --once: the closing self-metrics point */
  int end_done;         /* --once: everything present was acknowledged */
  int progress_tty;     /* stderr is a terminal: a redrawn status line */
  int dirty;
  int stopping; /* 1: draining; 2: closing */
  uint64_t stop_deadline;
  int exit_code;
};

/* --- small helpers ------------------------------------------------------ */

static void report_open_handle(uv_handle_t *h, void *arg) {
  (void)arg;
  PS_ERROR(MOD, "handle still open at shutdown: %s%s",
           uv_handle_type_name(uv_handle_get_type(h)),
           uv_is_closing(h) ? " (closing)" : "");
}

/* A rate-limit key per kind of message and file: the same bad file does not
 * flood the log, and one kind of trouble does not hide another. */
static const char *lkey(const char *kind, const char *path) {
  static char buf[48]; /* one thread; ps_log_limited copies the key */
  snprintf(buf, sizeof buf, "%s:%016" PRIx64, kind,
           ps_hash64(PS_HASH_SEED, path, strlen(path)));
  return buf;
}

static void record_error(ps_pipeline *pl, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void record_error(ps_pipeline *pl, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char stamped[600];
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char when[32];
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  snprintf(stamped, sizeof stamped, "%s %s", when, msg);
  ps_state_add_error(&pl->saved, stamped);
  pl->dirty = 1;
}

static int build_extra_tags(ps_pipeline *pl) {
  free(pl->extra);
  pl->extra = NULL;
  pl->nextra = 0;
  if (!pl->cfg->ntags)
    return 0;
  pl->extra = calloc(pl->cfg->ntags, sizeof *pl->extra);
  if (!pl->extra)
    return -ENOMEM;
  for (size_t i = 0; i < pl->cfg->ntags; i++) {
    pl->extra[i].key = pl->cfg->tags[i].key;
    pl->extra[i].value = pl->cfg->tags[i].value;
  }
  pl->nextra = pl->cfg->ntags;
  return 0;
}

/* --- work queue --------------------------------------------------------- */

static void work_cb(uv_idle_t *h);

static void enqueue(pfile *f) {
  ps_pipeline *pl = f->pl;
  if (f->queued || f->retired || pl->stopping)
    return;
  f->queued = 1;
  f->qnext = NULL;
  if (pl->q_tail)
    pl->q_tail->qnext = f;
  else
    pl->q_head = f;
  pl->q_tail = f;
  if (!uv_is_active((uv_handle_t *)&pl->work))
    uv_idle_start(&pl->work, work_cb);
}

static pfile *dequeue(ps_pipeline *pl) {
  pfile *f = pl->q_head;
  if (!f)
    return NULL;
  pl->q_head = f->qnext;
  if (!pl->q_head)
    pl->q_tail = NULL;
  f->queued = 0;
  return f;
}

static void resume_paused(ps_pipeline *pl) {
  if (ps_batcher_full(&pl->bt))
    return;
  /* A paused file goes first: it holds a line (perhaps a 9 MB perf-finish
   * record) that the others would otherwise each read and hold too. */
  for (pfile *f = pl->files; f; f = f->next)
    if (f->paused) {
      f->paused = 0;
      enqueue(f);
      if (f->queued && pl->q_head != f) {
        pfile **pp = &pl->q_head, *prev = NULL;
        while (*pp != f) {
          prev = *pp;
          pp = &(*pp)->qnext;
        }
        *pp = f->qnext;
        if (pl->q_tail == f)
          pl->q_tail = prev;
        f->qnext = pl->q_head;
        pl->q_head = f;
      }
    }
  /* work_cb also stops while the batcher is full (see there) */
  if (pl->q_head && !pl->stopping && !uv_is_active((uv_handle_t *)&pl->work))
    uv_idle_start(&pl->work, work_cb);
}

/* --- files -------------------------------------------------------------- */

/* Only reloads allocate; the first generation lives inside the pipeline. */
static void cfg_gen_free(cfg_gen *g) {
  if (g && g->owned) {
    ps_config_free(g->cfg);
    free(g->cfg);
    free(g);
  }
}

/* A replaced configuration goes once no file reads with it any more. */
static void cfg_gen_release_unused(ps_pipeline *pl, cfg_gen *g) {
  if (!g || g->files || g->cfg == pl->cfg)
    return;
  for (cfg_gen **pp = &pl->gens; *pp; pp = &(*pp)->next)
    if (*pp == g) {
      *pp = g->next;
      break;
    }
  cfg_gen_free(g);
}

/* The configuration whose sources array holds src. */
static cfg_gen *cfg_gen_of(ps_pipeline *pl, const ps_source_cfg *src) {
  for (cfg_gen *g = pl->gens; g; g = g->next)
    if (src >= g->cfg->sources && src < g->cfg->sources + g->cfg->nsources)
      return g;
  return NULL;
}
static void index_remove(ps_pipeline *pl, pfile *f);

static void file_free(pfile *f) {
  if (!f)
    return;
  if (f->parser && f->ops && f->ops->free)
    f->ops->free(f->parser);
  if (f->fd >= 0)
    close(f->fd);
  ps_tail_free(&f->tail);
  ps_buf_free(&f->doc);
  ps_cursor_release(&f->cur);
  free(f->path);
  free(f->cur_path);
  cfg_gen *g = f->gen;
  ps_pipeline *pl = f->pl;
  free(f);
  if (g) {
    g->files--;
    cfg_gen_release_unused(pl, g);
  }
}

static void maybe_free(pfile *f) {
  ps_pipeline *pl = f->pl;
  if (!f->retired || f->cur.live || f->queued)
    return;
  for (pfile **pp = &pl->files; *pp; pp = &(*pp)->next)
    if (*pp == f) {
      *pp = f->next;
      break;
    }
  index_remove(pl, f);
  file_free(f);
}

static void retire(pfile *f) {
  if (f->retired)
    return;
  f->retired = 1;
  f->paused = 0;
  if (f->parser && f->ops->free)
    f->ops->free(f->parser);
  f->parser = NULL;
  if (f->fd >= 0)
    close(f->fd);
  f->fd = -1;
  ps_tail_free(&f->tail);
  ps_buf_free(&f->doc);
  ps_cursor_release(&f->cur);
  f->pl->dirty = 1;
  maybe_free(f);
}

static int on_point(void *ctx, const ps_point *p, const ps_origin *o);
static void run_note_path(ps_pipeline *pl, const ps_source_cfg *src, const char *path,
                          int force);
static void on_reject(void *ctx, const ps_origin *o, const char *reason);

/* Every inotify event looks its file up by path; with 1,000 files growing
 * at once, strcmp over paths sharing a long directory prefix was a tenth
 * of the agent's CPU (scripts/bench scale, perf). */
static uint64_t path_hash(const char *path) {
  return ps_hash64(PS_HASH_SEED, path, strlen(path));
}

static size_t id_bucket(const ps_pipeline *pl, uint64_t dev, uint64_t ino) {
  uint64_t h = (ino ^ (dev * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
  return (size_t)(h >> 32) & (pl->nbuckets - 1);
}

static size_t path_bucket(const ps_pipeline *pl, uint64_t hash) {
  return (size_t)(hash ^ (hash >> 29)) & (pl->nbuckets - 1);
}

static void unlink_chain(pfile **head, pfile *f, int by_id) {
  for (pfile **pp = head; *pp; pp = by_id ? &(*pp)->id_next : &(*pp)->path_next)
    if (*pp == f) {
      *pp = by_id ? f->id_next : f->path_next;
      return;
    }
}

static void index_path_add(ps_pipeline *pl, pfile *f) {
  size_t b = path_bucket(pl, f->cur_hash);
  f->path_next = pl->by_path[b];
  pl->by_path[b] = f;
}

static void index_id_add(ps_pipeline *pl, pfile *f) {
  size_t b = id_bucket(pl, f->id.dev, f->id.ino);
  f->id_next = pl->by_id[b];
  pl->by_id[b] = f;
  f->in_id_index = 1;
}

/* Keeps about one file per bucket; returns -ENOMEM when it cannot (the
 * tables keep their size and still work, with longer chains). */
static int index_grow(ps_pipeline *pl) {
  if (pl->nbuckets && pl->nindexed < pl->nbuckets)
    return 0;
  size_t n = pl->nbuckets ? pl->nbuckets * 2 : 64;
  pfile **bp = calloc(n, sizeof *bp), **bi = calloc(n, sizeof *bi);
  if (!bp || !bi) {
    free(bp);
    free(bi);
    return pl->nbuckets ? 0 : -ENOMEM;
  }
  free(pl->by_path);
  free(pl->by_id);
  pl->by_path = bp;
  pl->by_id = bi;
  pl->nbuckets = n;
  for (pfile *f = pl->files; f; f = f->next) {
    index_path_add(pl, f);
    if (f->in_id_index)
      index_id_add(pl, f);
  }
  return 0;
}

static void index_remove(ps_pipeline *pl, pfile *f) {
  unlink_chain(&pl->by_path[path_bucket(pl, f->cur_hash)], f, 0);
  if (f->in_id_index)
    unlink_chain(&pl->by_id[id_bucket(pl, f->id.dev, f->id.ino)], f, 1);
  f->in_id_index = 0;
  pl->nindexed--;
}

static pfile *file_alloc(ps_pipeline *pl, const ps_source_cfg *src,
                         const ps_format_ops *ops, ps_input_kind kind, const char *path) {
  if (index_grow(pl) < 0)
    return NULL;
  pfile *f = calloc(1, sizeof *f);
  if (!f)
    return NULL;
  f->path = strdup(path);
  f->cur_path = strdup(path);
  if (!f->path || !f->cur_path) {
    free(f->path);
    free(f->cur_path);
    free(f);
    return NULL;
  }
  f->cur_hash = path_hash(path);
  f->pl = pl;
  f->src = src;
  f->gen = cfg_gen_of(pl, src);
  if (f->gen)
    f->gen->files++;
  f->ops = ops;
  f->kind = kind;
  f->fd = -1;
  ps_buf_init(&f->doc, 0);
  f->em.point = on_point;
  f->em.reject = on_reject;
  f->em.ctx = f;
  f->em.origin.file = f->path;
  f->next = pl->files;
  pl->files = f;
  index_path_add(pl, f);
  pl->nindexed++;
  return f;
}

/* Opens a line file for tailing. O_NOATIME where allowed (the agent's own
 * files, or root): with relatime the first read after every write
 * otherwise updates the inode's atime, a metadata write per file event. */
static int open_tailed(const char *path) {
#ifdef O_NOATIME
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOATIME);
  if (fd >= 0 || errno != EPERM)
    return fd;
#endif
  return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

/* Offset just past the last '\n' (where start_at=end begins reading). */
static uint64_t last_newline_end(int fd, uint64_t size) {
  char b[65536];
  uint64_t end = size;
  while (end > 0) {
    size_t n = end < sizeof b ? (size_t)end : sizeof b;
    ssize_t r = pread(fd, b, n, (off_t)(end - n));
    if (r <= 0)
      return 0;
    for (size_t i = (size_t)r; i > 0; i--)
      if (b[i - 1] == '\n')
        return end - n + i;
    end -= n;
  }
  return 0;
}

static ps_state_file *saved_by_path(ps_pipeline *pl, const char *path) {
  for (size_t i = 0; i < pl->saved.nfiles; i++)
    if (!pl->saved.files[i].matched && strcmp(pl->saved.files[i].path, path) == 0)
      return &pl->saved.files[i];
  return NULL;
}

/* A line-read file: open, identify, and find where to resume. */
static pfile *track_lines(ps_pipeline *pl, const ps_source_cfg *src,
                          const ps_format_ops *ops, const char *path,
                          uint64_t force_offset0) {
  int fd = open_tailed(path);
  if (fd < 0) {
    if (errno != ENOENT)
      ps_log_limited(PS_LOG_WARNING, "tail", lkey("open", path), 300,
                     "%s: cannot open (%s)", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  ps_file_id id;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || ps_file_identify(fd, &st, &id) < 0) {
    close(fd);
    return NULL;
  }
  pfile *f = file_alloc(pl, src, ops, PS_INPUT_LINES, path);
  if (!f) {
    close(fd);
    return NULL;
  }
  f->fd = fd;
  f->id = id;
  index_id_add(pl, f); /* dev/ino never change for a tracked file */
  f->last_read_ms = uv_now(pl->loop);
  uint64_t offset = 0, line = 1;
  ps_state_file *sf = force_offset0 ? NULL : ps_state_find(&pl->saved, id.dev, id.ino);
  if (sf && !sf->matched) {
    sf->matched = 1;
    ps_file_id now;
    ps_id_match m = ps_file_id_check(fd, &st, &sf->id, &now);
    if (m == PS_ID_SAME && sf->id.btime_ns && id.btime_ns && sf->id.btime_ns != id.btime_ns)
      m = PS_ID_OTHER; /* a reused inode, same first bytes: born later */
    if (m == PS_ID_SAME && sf->offset <= (uint64_t)st.st_size) {
      offset = sf->offset;
      line = sf->line;
      f->id = now;
      f->id.btime_ns = id.btime_ns; /* a state written before it had none */
    } else {
      PS_WARN("tail",
              "%s: rewritten or truncated since it was last read; "
              "reading it again from the beginning",
              path);
    }
  } else if (!force_offset0 && pl->first_start_end && pl->initial_scan) {
    offset = last_newline_end(fd, (uint64_t)st.st_size);
    line = 0; /* unknown: messages then count from here */
  }
  ps_tail_init(&f->tail, fd, offset, line ? line : 1,
               (size_t)pl->cfg->watch.max_line_bytes);
  ps_cursor_init(&f->cur, offset, line ? line : 1, f);
  PS_DEBUG("tail", "%s: tracking from offset %" PRIu64, path, offset);
  pl->dirty = 1;
  return f;
}

static pfile *track_doc(ps_pipeline *pl, const ps_source_cfg *src,
                        const ps_format_ops *ops, const char *path) {
  pfile *f = file_alloc(pl, src, ops, PS_INPUT_DOCUMENT, path);
  if (!f)
    return NULL;
  ps_cursor_init(&f->cur, 0, 0, f);
  ps_state_file *sf = saved_by_path(pl, path);
  /* Already there when the agent first looked, never seen before: the run
   * it records ended before perfship saw it (SCHEMA.md `backfill`). */
  f->doc_backfill = pl->initial_scan && !sf;
  if (sf) {
    sf->matched = 1;
    if (sf->has_doc)
      f->cur.committed_doc_hash = f->cur.last_doc_hash = sf->doc_hash;
    f->id = sf->id;
  } else if (pl->first_start_end && pl->initial_scan) {
    /* Existing contents count as seen: remember their hash, send nothing. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
      ps_buf b;
      ps_buf_init(&b, 0);
      if (ps_read_whole(fd, (size_t)pl->cfg->watch.max_line_bytes, &b) == 0) {
        uint64_t h = ps_hash64(PS_HASH_SEED, b.data ? b.data : "", b.len);
        f->cur.committed_doc_hash = f->cur.last_doc_hash = h;
      }
      ps_buf_free(&b);
      close(fd);
    }
  }
  pl->dirty = 1;
  return f;
}

static pfile *find_live_by_id(ps_pipeline *pl, uint64_t dev, uint64_t ino) {
  if (!pl->nbuckets)
    return NULL;
  for (pfile *f = pl->by_id[id_bucket(pl, dev, ino)]; f; f = f->id_next)
    if (!f->retired && f->kind == PS_INPUT_LINES && f->id.dev == dev && f->id.ino == ino)
      return f;
  return NULL;
}

static pfile *find_live_by_path(ps_pipeline *pl, const char *path, ps_input_kind kind) {
  if (!pl->nbuckets)
    return NULL;
  uint64_t h = path_hash(path);
  for (pfile *f = pl->by_path[path_bucket(pl, h)]; f; f = f->path_next)
    if (f->cur_hash == h && !f->retired && !f->draining && f->kind == kind &&
        strcmp(f->cur_path, path) == 0)
      return f;
  return NULL;
}

static void arm_settle(ps_pipeline *pl);

static void doc_changed(pfile *f, const struct stat *st) {
  ps_pipeline *pl = f->pl;
  f->scan_gen = pl->scan_gen;
  if (f->doc_loaded)
    return; /* being sent; a newer version is looked at afterwards */
  if ((uint64_t)st->st_size == f->doc_size && ps_stat_mtime_ns(st) == f->doc_mtime_ns &&
      f->settle_due == 0 && f->cur.last_doc_hash)
    return; /* unchanged since it was last read */
  if ((uint64_t)st->st_size != f->doc_size || ps_stat_mtime_ns(st) != f->doc_mtime_ns ||
      !f->settle_due) {
    f->doc_size = (uint64_t)st->st_size;
    f->doc_mtime_ns = ps_stat_mtime_ns(st);
    f->settle_due = pl->once ? 1 : uv_now(pl->loop) + (uint64_t)pl->cfg->watch.settle_ms;
  }
  if (pl->once)
    enqueue(f);
  else
    arm_settle(pl);
}

/* Something happened at `path` (found by a scan or named by an event). */
static void on_path(void *ctx, const ps_source_cfg *src, const char *path) {
  ps_pipeline *pl = ctx;
  if (pl->stopping)
    return;
  const ps_format_ops *ops = ps_format_ops_get(src->format);
  if (!ops || !ops->input_kind)
    return;
  ps_input_kind kind = ops->input_kind(src, path);
  run_note_path(pl, src, path, 0); /* slogs, exit_code, docker.log count too */
  if (kind == PS_INPUT_IGNORE)
    return;
  struct stat st;
  int exists = stat(path, &st) == 0 && S_ISREG(st.st_mode);
  if (kind == PS_INPUT_DOCUMENT) {
    pfile *f = find_live_by_path(pl, path, PS_INPUT_DOCUMENT);
    if (!exists)
      return; /* a document that went away keeps its hash until forgotten */
    if (!f)
      f = track_doc(pl, src, ops, path);
    if (f)
      doc_changed(f, &st);
    return;
  }
  pfile *at_path = find_live_by_path(pl, path, PS_INPUT_LINES);
  if (!exists) {
    if (at_path) { /* deleted or renamed away: read what is left, then drop */
      at_path->draining = 1;
      enqueue(at_path);
    }
    return;
  }
  pfile *f = find_live_by_id(pl, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
  if (f) {
    /* Still visible under a source, maybe under a new name (a rotated file
     * the glob also matches): the same file, not a new one. */
    f->scan_gen = pl->scan_gen;
    f->draining = 0;
    f->settle_due = 0;
    if (strcmp(f->cur_path, path) != 0) {
      char *p = strdup(path);
      if (p) {
        unlink_chain(&pl->by_path[path_bucket(pl, f->cur_hash)], f, 0);
        free(f->cur_path);
        f->cur_path = p;
        f->cur_hash = path_hash(p);
        index_path_add(pl, f);
        pl->dirty = 1;
      }
    }
    /* Grown, shrunk, or rewritten (a same-length rewrite moves the mtime). */
    if ((uint64_t)st.st_size != f->tail.read_off || ps_stat_mtime_ns(&st) != f->seen_mtime_ns)
      enqueue(f);
    return;
  }
  if (at_path && !at_path->draining) {
    /* Replaced at its path (rotation by rename, or a new file): the old one
     * is drained from its descriptor first. */
    PS_INFO("tail", "%s: replaced by a new file; draining the old one first", path);
    at_path->draining = 1;
    enqueue(at_path);
  }
  f = track_lines(pl, src, ops, path, 0);
  if (f) {
    f->scan_gen = pl->scan_gen;
    enqueue(f);
  }
}

/* --- run tracker (loadgen run folders, runs.h) ---------------------------- */

static void runs_timer_cb(uv_timer_t *t);
static int process_lines(pfile *f, size_t budget, size_t *spent);
static void committed_now(ps_pipeline *pl);

static prun *run_find(ps_pipeline *pl, const char *folder) {
  for (prun *r = pl->runs; r; r = r->next)
    if (strcmp(r->folder, folder) == 0)
      return r;
  return NULL;
}

static prun *run_add(ps_pipeline *pl, const char *folder) {
  prun *r = calloc(1, sizeof *r);
  if (!r || !(r->folder = strdup(folder))) {
    free(r);
    return NULL;
  }
  r->next = pl->runs;
  pl->runs = r;
  return r;
}

static void run_mark(ps_pipeline *pl, prun *r) {
  r->dirty = 1;
  if (!pl->stopping && !uv_is_active((uv_handle_t *)&pl->runs_timer))
    uv_timer_start(&pl->runs_timer, runs_timer_cb, 200, 0);
}

/* Any change inside a loadgen source: a file of a run folder (the folder
 * holding perf.jsonl or exit_code) makes that run due for evaluation. A
 * rescan names every file again: only a newer modification time (or a file
 * gone) counts then, so finished runs are not re-read every rescan. */
static void run_note_path(ps_pipeline *pl, const ps_source_cfg *src, const char *path,
                          int force) {
  const ps_format_ops *ops = ps_format_ops_get(src->format);
  char folder[4096];
  if (!ops || !ops->run_folder || !ops->run_folder(path, folder, sizeof folder))
    return;
  prun *r = run_find(pl, folder);
  if (!r) {
    if (!ps_run_is_folder(folder) || !(r = run_add(pl, folder)))
      return;
    force = 1;
  }
  struct stat st;
  if (stat(path, &st) == 0) {
    int64_t m = ps_stat_mtime_ns(&st);
    if (m > r->newest_ns)
      r->newest_ns = m;
    else if (!force)
      return;
  }
  run_mark(pl, r);
}

static pfile *run_perf_file(ps_pipeline *pl, const prun *r) {
  char p[4200];
  snprintf(p, sizeof p, "%s/perf.jsonl", r->folder);
  for (pfile *f = pl->files; f; f = f->next)
    if (!f->retired && f->kind == PS_INPUT_LINES && strcmp(f->cur_path, p) == 0)
      return f;
  return NULL;
}

static const ps_run_facts *run_facts(ps_pipeline *pl, prun *r) {
  pfile *f = run_perf_file(pl, r);
  const ps_run_facts *fa =
      f && f->parser && f->ops->run_facts ? f->ops->run_facts(f->parser) : NULL;
  if (fa)
    return fa;
  return r->have_facts ? &r->facts : NULL;
}

typedef struct marker_ctx {
  ps_pipeline *pl;
  ps_pbatch *b;
  prun *r;
} marker_ctx;

static int marker_point(void *ctx, const ps_point *p, const ps_origin *o) {
  marker_ctx *m = ctx;
  const char *reason = NULL;
  size_t at = m->b->b.body.len;
  int rc = ps_lp_encode(&m->b->b.body, p, m->pl->extra, m->pl->nextra, &reason);
  if (rc < 0) {
    ps_log_limited(PS_LOG_WARNING, "runs", lkey("marker", m->r->folder), 60,
                   "%s: marker refused: %s", m->r->folder,
                   reason ? reason : strerror(-rc));
    return 0;
  }
  ps_origin org = {m->r->folder, o ? o->line : 0};
  return ps_batch_add_line_origin(&m->b->b, at, &org);
}

static void marker_reject(void *ctx, const ps_origin *o, const char *reason) {
  marker_ctx *m = ctx;
  (void)o;
  ps_log_limited(PS_LOG_WARNING, "runs", lkey("runs", m->r->folder), 60, "%s: %s",
                 m->r->folder, reason);
}

/* Reads the unterminated last line of an ended run (SCHEMA.md: it is read
 * only then, and only if it parses). */
static void run_read_partial(ps_pipeline *pl, pfile *f) {
  ps_tail_line ln;
  if (!f->parser || ps_tail_partial(&f->tail, &ln) != PS_TAIL_LINE)
    return;
  f->em.origin.line = ln.line_no;
  int rc = f->ops->line(f->parser, ln.data, ln.len, &f->em);
  if (rc == -EAGAIN) {
    f->paused = 1; /* offered again, as a line, when room is made */
    return;
  }
  pl->lines_read++;
  if (f->record_rejected || rc < 0)
    pl->records_rejected++;
  else
    pl->records_parsed++;
  f->record_rejected = 0;
  ps_tail_consume(&f->tail);
  if (ps_cursor_line_done(&f->cur, ln.end, ln.line_no + 1, 0) > 0)
    committed_now(pl);
}

static void run_evaluate(ps_pipeline *pl, prun *r) {
  if (r->in_flight)
    return; /* looked at again when its markers are answered */
  pfile *f = run_perf_file(pl, r);
  struct stat st;
  /* perf.jsonl not read to its end yet: judging now would call a good run
   * failed (no perf-finish seen). It is evaluated again when it is. */
  if (f && (f->queued || f->paused ||
            (f->fd >= 0 && fstat(f->fd, &st) == 0 &&
             f->tail.read_off < (uint64_t)st.st_size)))
    return;
  r->dirty = 0;
  ps_buf err;
  ps_buf_init(&err, 1024);
  ps_run_view view;
  int64_t now = (int64_t)time(NULL);
  int rc = ps_run_evaluate(r->folder, now, pl->cfg->alerts.stall_after_s,
                           run_facts(pl, r), &view, &err);
  if (rc == 0 && view.state == PS_RUN_ENDED && f && ps_tail_buffered(&f->tail)) {
    run_read_partial(pl, f);
    rc = ps_run_evaluate(r->folder, now, pl->cfg->alerts.stall_after_s, run_facts(pl, r),
                         &view, &err);
  }
  if (rc < 0) {
    ps_log_limited(PS_LOG_WARNING, "runs", lkey("runs", r->folder), 300, "%s: %s",
                   r->folder, err.data ? err.data : strerror(-rc));
    ps_buf_free(&err);
    return;
  }
  ps_buf_free(&err);
  if (!r->known) {
    r->known = 1;
    r->backfill = view.state == PS_RUN_ENDED;
    r->first_seen = now;
    pl->dirty = 1;
  }
  r->ended = view.state == PS_RUN_ENDED;
  int which = 0;
  const char *status = ps_run_status_name(view.status);
  if (view.have_start && !r->start_acked)
    which |= PS_RUN_MARK_START;
  if (view.state == PS_RUN_ENDED && strcmp(r->end_acked, status) != 0)
    which |= PS_RUN_MARK_END;
  if (view.state == PS_RUN_STALLED && !r->stall_acked)
    which |= PS_RUN_MARK_END;
  if (!which || pl->stopping)
    return;
  ps_pbatch *b = ps_pbatch_new();
  if (!b)
    return;
  b->markers = 1;
  b->aux = r;
  marker_ctx m = {pl, b, r};
  ps_emitter em = {.point = marker_point,
                   .reject = marker_reject,
                   .ctx = &m,
                   .origin = {r->folder, 0}};
  rc = ps_run_emit_markers(&view, r->backfill, which, &em);
  if (rc < 0 || b->b.npoints == 0 || ps_sink_submit(pl->sink, &b->b) < 0) {
    ps_pbatch_free(b);
    return;
  }
  r->in_flight = 1;
  r->pending_which = which;
  snprintf(r->pending_status, sizeof r->pending_status, "%s", status);
  PS_INFO("runs", "%s: %s%s%s (%s)", r->folder, which & PS_RUN_MARK_START ? "start" : "",
          which == (PS_RUN_MARK_START | PS_RUN_MARK_END) ? " and " : "",
          which & PS_RUN_MARK_END ? "end" : "", status);
}

static void run_markers_done(ps_pipeline *pl, prun *r, int ok) {
  r->in_flight = 0;
  if (!ok) {
    r->dirty = 1; /* tried again at the next change or rescan */
    return;
  }
  if (r->pending_which & PS_RUN_MARK_START)
    r->start_acked = 1;
  if (r->pending_which & PS_RUN_MARK_END) {
    if (strcmp(r->pending_status, "stalled") == 0)
      r->stall_acked = 1;
    else
      snprintf(r->end_acked, sizeof r->end_acked, "%s", r->pending_status);
  }
  committed_now(pl);
  run_mark(pl, r); /* a start may have been sent before the end was known */
}

static void runs_evaluate_dirty(ps_pipeline *pl) {
  for (prun *r = pl->runs; r; r = r->next)
    if (r->dirty)
      run_evaluate(pl, r);
}

static void runs_timer_cb(uv_timer_t *t) { runs_evaluate_dirty(t->data); }

static char *runs_to_json(ps_pipeline *pl) {
  cJSON *root = cJSON_CreateObject();
  if (!root)
    return NULL;
  ps_buf fj;
  ps_buf_init(&fj, 0);
  for (prun *r = pl->runs; r; r = r->next) {
    if (!r->known)
      continue;
    cJSON *o = cJSON_CreateObject();
    if (!o)
      break;
    cJSON_AddNumberToObject(o, "first_seen", (double)r->first_seen);
    cJSON_AddBoolToObject(o, "backfill", r->backfill);
    cJSON_AddBoolToObject(o, "start_acked", r->start_acked);
    cJSON_AddStringToObject(o, "end_acked", r->end_acked);
    cJSON_AddBoolToObject(o, "stall_acked", r->stall_acked);
    const ps_run_facts *fa = run_facts(pl, r);
    ps_buf_reset(&fj);
    if (fa && ps_run_facts_to_json(fa, &fj) == 0 && fj.data) {
      cJSON *facts = cJSON_Parse(fj.data);
      if (facts)
        cJSON_AddItemToObject(o, "facts", facts);
    }
    cJSON_AddItemToObject(root, r->folder, o);
  }
  ps_buf_free(&fj);
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  return text;
}

static void runs_from_json(ps_pipeline *pl, const char *text) {
  cJSON *root = text ? cJSON_Parse(text) : NULL;
  const cJSON *o;
  cJSON_ArrayForEach(o, root) {
    if (!cJSON_IsObject(o) || !o->string)
      continue;
    prun *r = run_add(pl, o->string);
    if (!r)
      break;
    r->known = 1;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "first_seen");
    r->first_seen = cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
    r->backfill = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "backfill"));
    r->start_acked = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "start_acked"));
    r->stall_acked = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "stall_acked"));
    v = cJSON_GetObjectItemCaseSensitive(o, "end_acked");
    if (cJSON_IsString(v))
      snprintf(r->end_acked, sizeof r->end_acked, "%s", v->valuestring);
    v = cJSON_GetObjectItemCaseSensitive(o, "facts");
    if (v) {
      char *ft = cJSON_PrintUnformatted(v);
      if (ft && ps_run_facts_from_json(ft, &r->facts) == 0)
        r->have_facts = 1;
      free(ft);
    }
  }
  cJSON_Delete(root);
}

/* A loadgen parser opened mid-file (after a restart) gets the facts of the
 * lines before its offset: persisted ones, else re-derived from the file. */
static void run_restore_facts(ps_pipeline *pl, pfile *f) {
  char folder[4096];
  if (!f->parser || !f->ops->set_run_facts || !f->ops->run_folder ||
      !f->ops->run_folder(f->path, folder, sizeof folder))
    return;
  prun *r = run_find(pl, folder);
  if (r && r->have_facts) {
    f->ops->set_run_facts(f->parser, &r->facts);
    return;
  }
  uint64_t off = ps_tail_offset(&f->tail);
  if (off == 0)
    return;
  ps_run_facts fa;
  memset(&fa, 0, sizeof fa);
  ps_buf err;
  ps_buf_init(&err, 1024);
  if (ps_run_scan_facts(f->ops, f->src, f->fd, f->path, off,
                        (size_t)pl->cfg->watch.max_line_bytes, &fa, &err) == 0)
    f->ops->set_run_facts(f->parser, &fa);
  ps_buf_free(&err);
}

/* --- the emitter: parser -> encoder -> batch ------------------------------ */

static void flush_cb(uv_timer_t *t);

static void arm_flush(ps_pipeline *pl) {
  if (!uv_is_active((uv_handle_t *)&pl->flush_timer))
    uv_timer_start(&pl->flush_timer, flush_cb, (uint64_t)pl->cfg->batch.flush_interval_ms,
                   0);
}

static int on_point(void *ctx, const ps_point *p, const ps_origin *o) {
  char where[PATH_MAX + 32];
  pfile *f = ctx;
  ps_pipeline *pl = f->pl;
  if (ps_batcher_full(&pl->bt)) {
    ps_batcher_flush(&pl->bt);
    return -EAGAIN;
  }
  if (pl->turn_points >= POINTS_PER_TURN) {
    f->yielded = 1;
    return -EAGAIN;
  }
  pl->turn_points++;
  const char *reason = NULL;
  ps_buf_reset(&pl->scratch);
  int rc = ps_lp_encode(&pl->scratch, p, pl->extra, pl->nextra, &reason);
  if (rc < 0) {
    pl->points_refused++;
    ps_log_limited(PS_LOG_WARNING, "lp", lkey("lp", f->path), 10,
                   "%s: point refused: %s", ps_origin_str(where, sizeof where, f->path, o->line),
                   reason ? reason : strerror(-rc));
    record_error(pl, "%s: point refused: %s", ps_origin_str(where, sizeof where, f->path, o->line),
                 reason ? reason : strerror(-rc));
    return 0;
  }
  int was_empty = !pl->bt.open || !pl->bt.open->b.npoints;
  rc = ps_batcher_add(&pl->bt, &f->cur, pl->scratch.data, pl->scratch.len, o);
  if (rc == 0 && was_empty && pl->bt.open && pl->bt.open->b.npoints)
    arm_flush(pl);
  return rc;
}

static void on_reject(void *ctx, const ps_origin *o, const char *reason) {
  char where[PATH_MAX + 32];
  pfile *f = ctx;
  ps_pipeline *pl = f->pl;
  f->record_rejected = 1;
  ps_log_limited(PS_LOG_WARNING, "parse", lkey("parse", f->path), 10,
                 "%s: %s", ps_origin_str(where, sizeof where, f->path, o->line), reason);
  record_error(pl, "%s: %s", ps_origin_str(where, sizeof where, f->path, o->line), reason);
}

/* --- reading ------------------------------------------------------------ */

/* Opens the file's parser; `fd` is the open file, from which the head the
 * format needs is read first (input/feed.h). */
static int ensure_parser(pfile *f, int fd) {
  if (f->parser)
    return 0;
  ps_buf err;
  ps_buf_init(&err, 1024);
  ps_head_buf hb;
  int rc = ps_input_read_head(fd, f->path, f->ops, f->kind, &hb);
  if (rc == 0) {
    rc = f->ops->open(&f->parser, f->src, &hb.head, &err);
    ps_head_buf_free(&hb);
  }
  if (rc < 0) {
    ps_log_limited(PS_LOG_WARNING, "parse", lkey("parser-open", f->path), 60, "%s: %s",
                   f->path, err.data ? err.data : strerror(-rc));
    f->parser = NULL;
  } else if (f->kind == PS_INPUT_LINES) {
    run_restore_facts(f->pl, f);
  }
  ps_buf_free(&err);
  return rc;
}

static void restart_file(pfile *f, const char *why) {
  ps_pipeline *pl = f->pl;
  PS_WARN("tail", "%s: %s; reading it again from the beginning", f->path, why);
  char *path = strdup(f->path);
  const ps_source_cfg *src = f->src;
  const ps_format_ops *ops = f->ops;
  cfg_gen *g = f->gen; /* src must outlive f: it may be a reload's last file */
  if (g)
    g->files++;
  retire(f);
  pfile *n = path ? track_lines(pl, src, ops, path, 1) : NULL;
  if (n)
    enqueue(n);
  free(path);
  if (g) {
    g->files--;
    cfg_gen_release_unused(pl, g);
  }
}

static void committed_now(ps_pipeline *pl);

/* Reads up to `budget` bytes of lines. Returns 1 when more is waiting. */
static int process_lines(pfile *f, size_t budget, size_t *spent) {
  char where[PATH_MAX + 32];
  ps_pipeline *pl = f->pl;
  *spent = 0;
  struct stat st;
  if (f->fd < 0) { /* closed while idle: the same file still at its name? */
    int fd = open_tailed(f->cur_path);
    if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_dev == f->id.dev &&
        (uint64_t)st.st_ino == f->id.ino && ps_file_same_birth(fd, &f->id)) {
      f->fd = f->tail.fd = fd;
    } else {
      if (fd >= 0)
        close(fd);
      retire(f); /* everything it had was acknowledged before it was closed */
      return 0;
    }
  }
  if (fstat(f->fd, &st) < 0)
    return 0;
  f->seen_mtime_ns = ps_stat_mtime_ns(&st);
  if ((uint64_t)st.st_size < f->tail.read_off) {
    restart_file(f, "truncated");
    return 0;
  }
  ps_file_id now;
  if (ps_file_id_check(f->fd, &st, &f->id, &now) != PS_ID_SAME) {
    restart_file(f, "rewritten in place (copytruncate?)");
    return 0;
  }
  f->id = now;
  if (ensure_parser(f, f->fd) < 0)
    return 0; /* reported; tried again at the next change */
  size_t used = 0, parsed = 0;
  for (;;) {
    if (parsed >= budget) {
      *spent = parsed > used ? parsed : used;
      return 1;
    }
    ps_tail_line ln;
    int r = ps_tail_next(&f->tail, &ln);
    if (r == PS_TAIL_NONE) {
      /* A line already longer than a read is finished in this turn: left
       * for later, every file of a backfill reached its multi-megabyte
       * perf-finish line in the same round, each holding a buffer of its
       * size at once. */
      if (used >= budget && ps_tail_buffered(&f->tail) < READ_CHUNK) {
        *spent = used;
        return 1;
      }
      /* Nothing past the size seen by the fstat above: the read would
       * return 0. A write after that fstat brings its own event. */
      if (f->tail.read_off >= (uint64_t)st.st_size && !f->tail.skipping) {
        f->at_end = 1;
        break;
      }
      long n = ps_tail_fill(&f->tail, READ_CHUNK);
      if (n < 0) {
        ps_log_limited(PS_LOG_WARNING, "tail", lkey("read", f->path), 60,
                       "%s: read error (%s)", f->path, strerror((int)-n));
        return 0;
      }
      if (n == 0) {
        f->at_end = 1;
        break;
      }
      used += (size_t)n;
      f->last_read_ms = uv_now(pl->loop);
      continue;
    }
    if (r == PS_TAIL_TOO_LONG) {
      pl->records_rejected++;
      ps_log_limited(PS_LOG_WARNING, "tail", lkey("longline", f->path), 10,
                     "%s:%" PRIu64 ": line longer than watch.max_line_bytes (%" PRId64
                     "); skipped",
                     f->path, ln.line_no, pl->cfg->watch.max_line_bytes);
      record_error(pl, "%s: line longer than watch.max_line_bytes; skipped", ps_origin_str(where, sizeof where, f->path, ln.line_no));
      continue;
    }
    if (r == PS_TAIL_SKIPPED) {
      if (ps_cursor_line_done(&f->cur, ln.end, ln.line_no + 1, 0) > 0)
        committed_now(pl);
      continue;
    }
    f->em.origin.line = ln.line_no;
    int rc = f->ops->line(f->parser, ln.data, ln.len, &f->em);
    if (rc == -EAGAIN && f->yielded) {
      /* the rest of this record first in the next turn (work_cb): the
       * other files must not start their own big records meanwhile */
      *spent = budget;
      return 1;
    }
    if (rc == -EAGAIN) {
      f->paused = 1;
      *spent = parsed > used ? parsed : used;
      return 0;
    }
    parsed += ln.len + 1;
    if (rc < 0)
      ps_log_limited(PS_LOG_ERROR, "parse", lkey("parse-error", f->path), 10,
                     "%s: %s", ps_origin_str(where, sizeof where, f->path, ln.line_no), strerror(-rc));
    pl->lines_read++;
    if (f->record_rejected || rc < 0)
      pl->records_rejected++;
    else
      pl->records_parsed++;
    f->record_rejected = 0;
    ps_tail_consume(&f->tail);
    if (ln.len > READ_CHUNK)
      ps_tail_trim(&f->tail); /* the lines after it need no 16 MB buffer */
    if (ps_cursor_line_done(&f->cur, ln.end, ln.line_no + 1, 0) > 0)
      committed_now(pl);
  }
  ps_tail_trim(&f->tail); /* idle files keep no read-sized buffer */
  /* At the end of what exists now: a run's perf.jsonl read so far is the
   * moment to look at the run again. */
  if (f->ops->run_folder)
    run_note_path(pl, f->src, f->cur_path, 1);
  /* A file renamed away may still be
   * written by its producer for a moment: wait settle_ms before dropping. */
  if (f->draining && !f->settle_due && !pl->once && !pl->stopping) {
    f->settle_due = uv_now(pl->loop) + (uint64_t)pl->cfg->watch.settle_ms;
    arm_settle(pl);
  } else if (f->draining && (pl->once || f->settle_due <= uv_now(pl->loop))) {
    if (st.st_nlink == 0 && f->cur.committed < ps_tail_offset(&f->tail))
      PS_WARN("tail",
              "%s: deleted with %" PRIu64 " bytes not yet acknowledged; "
              "they are still delivered from the open file",
              f->path, ps_tail_offset(&f->tail) - f->cur.committed);
    if (ps_tail_buffered(&f->tail))
      PS_WARN("tail", "%s: gone with an unterminated last line (%zu bytes); not read",
              f->path, ps_tail_buffered(&f->tail));
    retire(f);
  }
  return 0;
}

static int process_doc(pfile *f) {
  ps_pipeline *pl = f->pl;
  if (!f->doc_loaded) {
    f->settle_due = 0;
    int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
      return 0;
    struct stat st;
    if (fstat(fd, &st) < 0) {
      close(fd);
      return 0;
    }
    int rc = ps_read_whole(fd, (size_t)pl->cfg->watch.max_line_bytes, &f->doc);
    if (rc < 0)
      close(fd); /* else kept open: the parser's head is read from it */
    if (rc == -EFBIG) {
      pl->records_rejected++;
      ps_log_limited(PS_LOG_WARNING, "tail", lkey("longdoc", f->path), 300,
                     "%s: document larger than watch.max_line_bytes (%" PRId64
                     "); skipped",
                     f->path, pl->cfg->watch.max_line_bytes);
      record_error(pl, "%s: document larger than watch.max_line_bytes; skipped",
                   f->path);
      ps_buf_free(&f->doc);
      return 0;
    }
    if (rc < 0) {
      ps_log_limited(PS_LOG_WARNING, "tail", lkey("read", f->path), 60,
                     "%s: cannot read (%s)", f->path, strerror(-rc));
      ps_buf_free(&f->doc);
      return 0;
    }
    f->id.dev = (uint64_t)st.st_dev;
    f->id.ino = (uint64_t)st.st_ino;
    f->doc_size = (uint64_t)st.st_size;
    f->doc_mtime_ns = ps_stat_mtime_ns(&st);
    f->doc_hash = ps_hash64(PS_HASH_SEED, f->doc.data ? f->doc.data : "", f->doc.len);
    if (f->doc_hash == f->cur.last_doc_hash) {
      close(fd);
      ps_buf_free(&f->doc);
      return 0; /* the same contents were sent already */
    }
    /* A document is parsed by a fresh parser each time: it is a new unit. */
    if (f->parser && f->ops->free)
      f->ops->free(f->parser);
    f->parser = NULL;
    rc = ensure_parser(f, fd);
    close(fd);
    if (rc < 0) {
      ps_buf_free(&f->doc);
      return 0;
    }
    if (f->ops->set_backfill)
      f->ops->set_backfill(f->parser, f->doc_backfill);
    f->doc_backfill = 0; /* any later version is a change seen live */
    f->doc_loaded = 1;
  }
  f->em.origin.line = 0;
  int rc =
      f->ops->document(f->parser, f->doc.data ? f->doc.data : "", f->doc.len, &f->em);
  if (rc == -EAGAIN && f->yielded)
    return 1; /* continued first in the next turn (work_cb) */
  if (rc == -EAGAIN) {
    f->paused = 1;
    return 0;
  }
  if (rc < 0)
    ps_log_limited(PS_LOG_ERROR, "parse", lkey("parse-error", f->path), 10, "%s: %s",
                   f->path, strerror(-rc));
  if (f->record_rejected || rc < 0)
    pl->records_rejected++;
  else
    pl->records_parsed++;
  f->record_rejected = 0;
  if (f->ops->finish)
    f->ops->finish(f->parser, &f->em);
  f->doc_loaded = 0;
  ps_buf_free(&f->doc);
  if (ps_cursor_line_done(&f->cur, f->doc_size, 0, f->doc_hash) > 0)
    committed_now(pl);
  return 0;
}

static void check_once_done(ps_pipeline *pl);

static void work_cb(uv_idle_t *h) {
  ps_pipeline *pl = h->data;
  size_t budget = SLICE_BYTES;
  pfile *f;
  int rounds = 0;
  pl->turn_points = 0;
  /* With the batcher full, the next point of any file is refused anyway;
   * starting the other queued files would only have each of them parse up
   * to that point and hold its line (and its parse) until acks come: a
   * backfill's runs each paused inside a 9 MB perf-finish line (240 MB for
   * six runs). They wait in the queue instead; resume_paused restarts us. */
  if (ps_batcher_full(&pl->bt)) {
    uv_idle_stop(&pl->work);
    return;
  }
  while (budget && rounds++ < 64 && !ps_batcher_full(&pl->bt) && (f = dequeue(pl))) {
    if (f->retired) {
      maybe_free(f);
      continue;
    }
    int more = 0;
    size_t spent = READ_CHUNK;
    f->yielded = 0;
    if (f->kind == PS_INPUT_LINES)
      more = process_lines(f, budget, &spent);
    else
      more = process_doc(f);
    if (more && !f->retired && !f->paused) {
      enqueue(f);
      if (f->yielded && f->queued && pl->q_head != f) { /* to the front */
        pfile *prev = pl->q_head;
        while (prev->qnext != f)
          prev = prev->qnext;
        prev->qnext = f->qnext;
        if (pl->q_tail == f)
          pl->q_tail = prev;
        f->qnext = pl->q_head;
        pl->q_head = f;
      }
    }
    /* f may be freed here (retired while processed): not touched again */
    spent = spent ? spent : 1; /* a file with nothing new still costs a turn */
    budget = budget > spent ? budget - spent : 0;
  }
  if (!pl->q_head) {
    uv_idle_stop(&pl->work);
    check_once_done(pl);
  }
}

/* --- settle, rescan ------------------------------------------------------ */

static void settle_cb(uv_timer_t *t) {
  ps_pipeline *pl = t->data;
  uint64_t now = uv_now(pl->loop);
  for (pfile *f = pl->files; f; f = f->next) {
    if (f->retired || !f->settle_due || f->doc_loaded || f->settle_due > now)
      continue;
    if (f->kind == PS_INPUT_LINES) {
      enqueue(f); /* a draining file's grace time is over */
      continue;
    }
    struct stat st;
    if (stat(f->path, &st) < 0) {
      f->settle_due = 0;
      continue;
    }
    if ((uint64_t)st.st_size != f->doc_size || ps_stat_mtime_ns(&st) != f->doc_mtime_ns) {
      f->doc_size = (uint64_t)st.st_size;
      f->doc_mtime_ns = ps_stat_mtime_ns(&st);
      f->settle_due = now + (uint64_t)pl->cfg->watch.settle_ms;
      continue;
    }
    enqueue(f);
  }
  arm_settle(pl);
}

static void arm_settle(ps_pipeline *pl) {
  uint64_t next = 0;
  for (pfile *f = pl->files; f; f = f->next)
    if (!f->retired && f->settle_due && !f->queued && !f->doc_loaded &&
        (!next || f->settle_due < next))
      next = f->settle_due;
  if (!next || pl->stopping) {
    uv_timer_stop(&pl->settle_timer);
    return;
  }
  uint64_t now = uv_now(pl->loop);
  uv_timer_start(&pl->settle_timer, settle_cb, next > now ? next - now : 0, 0);
}

static void rescan(ps_pipeline *pl) {
  pl->scan_gen++;
  ps_watch_scan(pl->watch);
  /* Line files no scan reached any more left their path without an event
   * we saw: drain them. */
  for (pfile *f = pl->files; f; f = f->next)
    if (!f->retired && f->kind == PS_INPUT_LINES && f->scan_gen != pl->scan_gen &&
        !f->draining) {
      struct stat st;
      if (stat(f->cur_path, &st) == 0 && (uint64_t)st.st_ino == f->id.ino &&
          (uint64_t)st.st_dev == f->id.dev)
        continue; /* still there (e.g. its source was reloaded) */
      f->draining = 1;
      enqueue(f);
    }
}

static void close_idle(ps_pipeline *pl) {
  uint64_t now = uv_now(pl->loop);
  for (pfile *f = pl->files; f; f = f->next)
    if (!f->retired && f->kind == PS_INPUT_LINES && f->fd >= 0 && !f->queued &&
        !f->paused && !f->draining && !f->tail.have_cur &&
        ps_tail_buffered(&f->tail) == 0 &&
        f->cur.committed == ps_tail_offset(&f->tail) &&
        now - f->last_read_ms >=
            IDLE_CLOSE_RESCANS * (uint64_t)pl->cfg->watch.rescan_interval_ms) {
      ps_tail_trim(&f->tail);
      close(f->fd);
      f->fd = f->tail.fd = -1;
    }
}

static void rescan_cb(uv_timer_t *t) {
  ps_pipeline *pl = t->data;
  rescan(pl);
  close_idle(pl);
  /* Stall detection needs time to pass, not a change on disk. */
  for (prun *r = pl->runs; r; r = r->next)
    if (!r->ended)
      run_mark(pl, r);
}

/* --- state -------------------------------------------------------------- */

static void save_state(ps_pipeline *pl) {
  ps_state s;
  ps_state_init(&s);
  for (pfile *f = pl->files; f; f = f->next) {
    if (f->retired)
      continue;
    ps_state_file e;
    memset(&e, 0, sizeof e);
    e.path = f->cur_path;
    e.id = f->id;
    e.offset = f->cur.committed;
    e.line = f->cur.committed_line;
    if (f->kind == PS_INPUT_DOCUMENT) {
      e.has_doc = f->cur.committed_doc_hash != 0;
      e.doc_hash = f->cur.committed_doc_hash;
    }
    ps_state_add(&s, &e);
  }
  /* Entries of files not seen this time (a folder briefly away) are kept
   * until `forget`; identity mismatch protects against inode reuse. */
  for (size_t i = 0; i < pl->saved.nfiles; i++)
    if (!pl->saved.files[i].matched)
      ps_state_add(&s, &pl->saved.files[i]);
  for (size_t i = 0; i < pl->saved.nerrors; i++)
    ps_state_add_error(&s, pl->saved.errors[i]);
  s.pending_points = pl->bt.pending_points;
  pl->saved_entries = s.nfiles;
  s.runs_json = runs_to_json(pl);
  int rc = ps_state_save(&s, pl->cfg->state_dir);
  if (rc < 0)
    ps_log_limited(PS_LOG_ERROR, "state", "save", 60,
                   "%s: cannot save the state (%s); offsets will be re-read after "
                   "a restart",
                   pl->cfg->state_dir, strerror(-rc));
  else
    pl->dirty = 0;
  ps_state_free(&s);
}

static void save_cb(uv_timer_t *t) { save_state(t->data); }

/* A save rewrites every file's entry, so its cost grows with the files:
 * with 1,000 files growing at once, saving 50 ms after each commit was a
 * tenth of the agent's CPU (scripts/bench scale, perf). The delay grows by
 * 0.5 ms per entry (550 ms for 1,000 files, still 50 ms for one); a crash
 * in between only means re-sending points, which overwrite themselves. */
static void committed_now(ps_pipeline *pl) {
  pl->dirty = 1;
  uint64_t delay = SAVE_DELAY_MS + pl->saved_entries / 2;
  if (!uv_is_active((uv_handle_t *)&pl->save_timer) && pl->stopping < 2)
    uv_timer_start(&pl->save_timer, save_cb, delay < 1000 ? delay : 1000, 0);
}

/* --- sink ---------------------------------------------------------------- */

static int submit_cb(void *ctx, ps_pbatch *b) {
  ps_pipeline *pl = ctx;
  int rc = ps_sink_submit(pl->sink, &b->b);
  if (rc < 0)
    ps_log_limited(PS_LOG_ERROR, MOD, "submit", 10, "cannot submit a batch (%s)",
                   strerror(-rc));
  return rc;
}

static void cursor_committed_cb(void *ctx, ps_cursor *c) {
  ps_pipeline *pl = ctx;
  pfile *f = c->owner;
  committed_now(pl);
  if (f->retired)
    maybe_free(f);
}

static void sink_done(ps_sink *sink, ps_batch *batch, int status, size_t rejected) {
  ps_pipeline *pl = ps_sink_data(sink);
  ps_pbatch *b = batch->data;
  if (status == 0)
    pl->last_progress_ms = uv_now(pl->loop);
  pl->server_rejected += rejected;
  if (b->selfstats) {
    pl->selfstats_in_flight = 0;
    ps_pbatch_free(b);
  } else if (b->markers) {
    prun *r = b->aux;
    ps_pbatch_free(b);
    run_markers_done(pl, r, status == 0);
  } else {
    ps_batcher_done(&pl->bt, b, status == 0);
  }
  if (!pl->stopping)
    resume_paused(pl);
  check_once_done(pl);
}

static void sink_reject(ps_sink *sink, const ps_origin *o, const char *line, size_t len,
                        const char *reason) {
  char where[PATH_MAX + 32];
  ps_pipeline *pl = ps_sink_data(sink);
  (void)line;
  (void)len;
  const char *file = o && o->file ? o->file : "?";
  ps_log_limited(PS_LOG_WARNING, "sink", lkey("sink", file), 10,
                 "%s: rejected by the server: %s", ps_origin_str(where, sizeof where, file, o ? o->line : 0),
                 reason);
  record_error(pl, "%s: rejected by the server: %s", ps_origin_str(where, sizeof where, file, o ? o->line : 0),
               reason);
}

/* --- self-metrics -------------------------------------------------------- */

static size_t files_watched(const ps_pipeline *pl) {
  size_t n = 0;
  for (const pfile *f = pl->files; f; f = f->next)
    n += !f->retired;
  return n;
}

/* Returns 0 when a point was submitted (answered through sink_done). */
static int send_selfstats(ps_pipeline *pl) {
  if (pl->selfstats_in_flight || pl->stopping)
    return -EBUSY;
  const ps_sink_stats *ss = ps_sink_get_stats(pl->sink);
  uint64_t now = uv_now(pl->loop);
  const ps_pbatch *old = ps_batcher_oldest(&pl->bt);
  ps_selfstats s = {
      .lines_read = pl->lines_read,
      .records_parsed = pl->records_parsed,
      .records_rejected = pl->records_rejected,
      .points_written = ss->points_written,
      .points_rejected = ss->points_rejected + pl->points_refused,
      .batches_sent = ss->batches_sent,
      .http_retries = ss->http_retries,
      .bytes_sent = ss->bytes_sent,
      .pending_points = pl->bt.pending_points,
      .files_watched = files_watched(pl),
      .oldest_unacked_s = old ? (ps_now_ms() - old->created_ms) / 1000 : 0,
      .uptime_s = (now - pl->start_ms) / 1000,
  };
  ps_pbatch *b = ps_pbatch_new();
  if (!b)
    return -ENOMEM;
  b->selfstats = 1;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const char *reason = NULL;
  static const ps_origin self = {"perfship self-metrics", 0};
  if (ps_selfstats_encode(&b->b.body, &s, (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec,
                          pl->extra, pl->nextra, &reason) < 0 ||
      ps_batch_add_line_origin(&b->b, 0, &self) < 0) {
    ps_log_limited(PS_LOG_ERROR, MOD, "selfstats", 300, "self-metrics not encoded: %s",
                   reason ? reason : "out of memory");
    ps_pbatch_free(b);
    return -EINVAL;
  }
  int rc = ps_sink_submit(pl->sink, &b->b);
  if (rc < 0) {
    ps_pbatch_free(b);
    return rc;
  }
  pl->selfstats_in_flight = 1;
  return 0;
}

static void stats_cb(uv_timer_t *t) { send_selfstats(t->data); }

/* --- progress (--once) and the summary ------------------------------------ */

/* Read to the end of what existed and everything from it acknowledged. */
static int file_done(const pfile *f) {
  if (f->queued || f->paused || f->doc_loaded || f->settle_due)
    return 0;
  if (f->kind == PS_INPUT_DOCUMENT)
    return f->cur.committed_doc_hash == f->cur.last_doc_hash;
  return f->at_end && f->cur.committed == ps_tail_offset(&f->tail);
}

static void progress_text(ps_pipeline *pl, char *out, size_t n, int summary) {
  size_t files = 0, files_done = 0, runs = 0, runs_done = 0;
  for (const pfile *f = pl->files; f; f = f->next)
    if (!f->retired) {
      files++;
      files_done += file_done(f);
    }
  for (const prun *r = pl->runs; r; r = r->next) {
    runs++;
    pfile *f = run_perf_file(pl, r);
    /* Judged, its markers answered, its perf.jsonl read and acknowledged
     * (after the closing evaluation a dirty flag is only a re-check). */
    runs_done += r->known && !r->in_flight && (!r->dirty || pl->runs_final) &&
                 (!f || file_done(f));
  }
  const ps_sink_stats *ss = ps_sink_get_stats(pl->sink);
  double secs = (double)(uv_now(pl->loop) - pl->start_ms) / 1000.0;
  double rate = secs > 0 ? (double)ss->points_written / secs : 0;
  char runs_part[64] = "";
  if (summary) {
    uint64_t rejected = pl->records_rejected + pl->points_refused + pl->server_rejected;
    if (runs)
      snprintf(runs_part, sizeof runs_part, " %zu run folders,", runs);
    snprintf(out, n,
             "%zu files,%s %" PRIu64 " points written, %" PRIu64
             " rejected, in %.1f s (%.0f points/s)",
             files, runs_part, ss->points_written, rejected, secs, rate);
    return;
  }
  if (runs)
    snprintf(runs_part, sizeof runs_part, "runs %zu/%zu, ", runs_done, runs);
  snprintf(out, n,
           "%sfiles %zu/%zu: %" PRIu64 " points written (%.0f/s), %zu pending, %.0f s",
           runs_part, files_done, files, ss->points_written, rate, pl->bt.pending_points,
           secs);
}

static void progress_cb(uv_timer_t *t) {
  ps_pipeline *pl = t->data;
  char text[200];
  progress_text(pl, text, sizeof text, 0);
  if (pl->progress_tty)
    ps_log_status(text);
  else
    PS_INFO(MOD, "progress: %s", text);
}

static void log_summary(ps_pipeline *pl) {
  char text[256];
  if (pl->progress_tty) { /* the last state stays on screen */
    progress_text(pl, text, sizeof text, 0);
    ps_log_status(text);
    ps_log_status_done();
  }
  progress_text(pl, text, sizeof text, 1);
  const char *verb = pl->exit_code == PS_EXIT_UNAVAILABLE ? "gave up"
                     : pl->end_done                       ? "done"
                                                          : "stopped";
  if (pl->exit_code == PS_EXIT_DATAERR)
    PS_WARN(MOD, "%s: %s; some input was rejected (see above)", verb, text);
  else
    PS_INFO(MOD, "%s: %s", verb, text);
}

/* --- flush --------------------------------------------------------------- */

static void flush_cb(uv_timer_t *t) {
  ps_pipeline *pl = t->data;
  ps_pbatch *b = pl->bt.open;
  if (!b || !b->b.npoints)
    return;
  uint64_t age = ps_now_ms() - b->created_ms;
  uint64_t ivl = (uint64_t)pl->cfg->batch.flush_interval_ms;
  if (age + 1 < ivl) {
    uv_timer_start(&pl->flush_timer, flush_cb, ivl - age, 0);
    return;
  }
  ps_batcher_flush(&pl->bt);
}

/* --- shutdown ------------------------------------------------------------ */

static void closed_one(uv_handle_t *h) { (void)h; }

static void watch_closed(void *arg) {
  ps_pipeline *pl = arg;
  ps_watch_free(pl->watch);
  pl->watch = NULL;
}

static void sink_closed(void *arg) {
  ps_pipeline *pl = arg;
  pl->sink = NULL;
}

static void close_all(ps_pipeline *pl) {
  if (pl->stopping == 2)
    return;
  pl->stopping = 2;
  uv_handle_t *hs[] = {
      (uv_handle_t *)&pl->flush_timer,
      (uv_handle_t *)&pl->rescan_timer,
      (uv_handle_t *)&pl->settle_timer,
      (uv_handle_t *)&pl->save_timer,
      (uv_handle_t *)&pl->stats_timer,
      (uv_handle_t *)&pl->check_timer,
      (uv_handle_t *)&pl->create_db_timer,
      (uv_handle_t *)&pl->runs_timer,
      (uv_handle_t *)&pl->progress_timer,
      (uv_handle_t *)&pl->work,
      (uv_handle_t *)&pl->sig_term,
      (uv_handle_t *)&pl->sig_int,
      (uv_handle_t *)&pl->sig_hup,
  };
  for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
    if (!uv_is_closing(hs[i]))
      uv_close(hs[i], closed_one);
  ps_watch_close(pl->watch, watch_closed, pl);
  /* Batches still in flight are cancelled: never acknowledged, so their
   * offsets stay where they are and a restart re-sends them. */
  if (pl->sink)
    ps_sink_close(pl->sink, sink_closed, pl);
  ps_batcher_free(&pl->bt);
  save_state(pl);
  log_summary(pl);
}

static void check_cb(uv_timer_t *t);

static void begin_stop(ps_pipeline *pl, const char *why) {
  if (pl->stopping)
    return;
  PS_INFO(MOD, "%s: sending what is in flight, then stopping", why);
  pl->stopping = 1;
  pl->stop_deadline = uv_now(pl->loop) + DRAIN_WAIT_MS;
  uv_idle_stop(&pl->work);
  uv_timer_stop(&pl->rescan_timer);
  uv_timer_stop(&pl->settle_timer);
  uv_timer_stop(&pl->stats_timer);
  ps_batcher_flush(&pl->bt);
  uv_timer_start(&pl->check_timer, check_cb, 200, 200);
  check_once_done(pl);
}

static int all_quiet(const ps_pipeline *pl) {
  if ((pl->bt.open && pl->bt.open->b.npoints) || pl->bt.inflight_count ||
      pl->selfstats_in_flight)
    return 0;
  for (const prun *r = pl->runs; r; r = r->next)
    if (r->in_flight)
      return 0;
  return 1;
}

static int reading_done(const ps_pipeline *pl) {
  if (pl->q_head)
    return 0;
  for (const pfile *f = pl->files; f; f = f->next)
    if (!f->retired &&
        (f->paused || f->doc_loaded || (f->kind == PS_INPUT_DOCUMENT && f->settle_due)))
      return 0;
  return 1;
}

/* --once: everything present is acknowledged; the verdict, then stop. */
static void finish_once(ps_pipeline *pl) {
  if (pl->records_rejected + pl->points_refused + pl->server_rejected)
    pl->exit_code = PS_EXIT_DATAERR;
  pl->end_done = 1;
  close_all(pl);
}

static void check_once_done(ps_pipeline *pl) {
  if (pl->stopping == 2)
    return;
  if (pl->stopping == 1) {
    if (all_quiet(pl)) {
      close_all(pl);
    } else if (uv_now(pl->loop) >= pl->stop_deadline) {
      PS_WARN(MOD,
              "%zu batches still unacknowledged after %d s; they will be "
              "sent again at the next start",
              pl->bt.inflight_count, DRAIN_WAIT_MS / 1000);
      close_all(pl);
    }
    return;
  }
  if (!pl->once || pl->initial_scan)
    return;
  if (!reading_done(pl))
    return;
  if (!pl->runs_final) {
    /* Every run folder once more, now that everything present was read:
     * ended runs get their end markers, silent ones are judged stalled. */
    pl->runs_final = 1;
    for (prun *r = pl->runs; r; r = r->next)
      r->dirty = 1;
    runs_evaluate_dirty(pl);
    if (!reading_done(pl))
      return;
  }
  if (pl->bt.open && pl->bt.open->b.npoints)
    ps_batcher_flush(&pl->bt);
  if (!all_quiet(pl))
    return;
  if (!pl->final_stats_sent) {
    /* A backfill leaves a heartbeat with its final counters. */
    pl->final_stats_sent = 1;
    if (send_selfstats(pl) == 0)
      return; /* back here once it is answered */
  }
  finish_once(pl);
}

static void check_cb(uv_timer_t *t) {
  ps_pipeline *pl = t->data;
  if (pl->stopping == 1) {
    check_once_done(pl);
    return;
  }
  if (pl->once) {
    const ps_sink_stats *ss = ps_sink_get_stats(pl->sink);
    uint64_t now = uv_now(pl->loop);
    uint64_t deadline = (uint64_t)pl->cfg->influxdb.unreachable_deadline_s * 1000;
    uint64_t since = ss->unreachable_since_ms;
    size_t waiting = ps_sink_in_flight(pl->sink);
    if (!since && waiting)
      since = pl->last_progress_ms; /* answering, but not accepting (401/404) */
    if (since && waiting && now - since > deadline) {
      if (pl->final_stats_sent && !pl->bt.inflight_count && pl->selfstats_in_flight &&
          waiting == 1) {
        /* Only the heartbeat is left: the data's verdict stands. */
        PS_WARN(MOD, "%s: the closing self-metrics point was not acknowledged "
                     "(everything else was)",
                pl->cfg->influxdb.url);
        finish_once(pl);
        return;
      }
      PS_ERROR(MOD,
               "%s: the server stayed unreachable for %" PRId64
               " s (influxdb.unreachable_deadline_s); giving up; offsets stay "
               "where they are",
               pl->cfg->influxdb.url, pl->cfg->influxdb.unreachable_deadline_s);
      record_error(pl, "run --once: server unreachable past the deadline");
      pl->exit_code = PS_EXIT_UNAVAILABLE;
      close_all(pl);
    }
  }
}

static int str_differs(const char *a, const char *b) {
  return strcmp(a ? a : "", b ? b : "") != 0;
}

static int keep_str(char **dst, const char *running) {
  char *c = running ? strdup(running) : NULL;
  if (running && !c)
    return -ENOMEM;
  free(*dst);
  *dst = c;
  return 0;
}

/* The sink was built with the influxdb group and the state lock is held on
 * state_dir: both stay as they were started. `n` takes the running values
 * (copies: the running config may be freed before `n`), and one warning
 * names every such setting the file changed. */
static int keep_restart_settings(ps_config *n, const ps_config *run) {
#define INFLUX_STRS(X)                                                          \
  X(url) X(database) X(retention_policy) X(username) X(password_file) X(org)    \
  X(bucket) X(token_file) X(tls_ca_file)
#define INFLUX_NUMS(X)                                                          \
  X(api) X(gzip) X(timeout_ms) X(tls_verify) X(create_database)                 \
  X(unreachable_deadline_s)
  char changed[512] = "";
#define NOTE(name)                                                              \
  snprintf(changed + strlen(changed), sizeof changed - strlen(changed), "%s%s", \
           changed[0] ? ", " : "", name)
#define CMP_STR(k)                                                              \
  if (str_differs(n->influxdb.k, run->influxdb.k))                              \
    NOTE("influxdb." #k);
#define CMP_NUM(k)                                                              \
  if (n->influxdb.k != run->influxdb.k)                                         \
    NOTE("influxdb." #k);
  INFLUX_STRS(CMP_STR)
  INFLUX_NUMS(CMP_NUM)
  if (str_differs(n->state_dir, run->state_dir))
    NOTE("state_dir");
#define KEEP_STR(k)                                                             \
  if (keep_str(&n->influxdb.k, run->influxdb.k) < 0)                            \
    return -ENOMEM;
#define KEEP_NUM(k) n->influxdb.k = run->influxdb.k;
  INFLUX_STRS(KEEP_STR)
  INFLUX_NUMS(KEEP_NUM)
  if (keep_str(&n->influxdb.password, run->influxdb.password) < 0 ||
      keep_str(&n->influxdb.token, run->influxdb.token) < 0 ||
      keep_str(&n->state_dir, run->state_dir) < 0)
    return -ENOMEM;
  if (changed[0])
    PS_WARN(MOD, "SIGHUP: %s changed in %s; these apply only at the next start "
                 "(still using the running values)",
            changed, n->file ? n->file : "the configuration");
  return 0;
#undef INFLUX_STRS
#undef INFLUX_NUMS
#undef NOTE
#undef CMP_STR
#undef CMP_NUM
#undef KEEP_STR
#undef KEEP_NUM
}

static void apply_reload(ps_pipeline *pl, ps_config *n) {
  cfg_gen *g = calloc(1, sizeof *g);
  if (!g || keep_restart_settings(n, pl->cfg) < 0) {
    PS_ERROR(MOD, "SIGHUP: out of memory; keeping the running configuration");
    free(g);
    ps_config_free(n);
    free(n);
    return;
  }
  g->cfg = n;
  g->owned = 1;
  g->next = pl->gens;
  pl->gens = g;
  /* The replaced configuration stays while files read with its sources. */
  pl->cfg = n;
  cfg_gen_release_unused(pl, g->next);
  ps_log_set_level(n->log_level);
  pl->bt.max_points = (size_t)n->batch.max_points;
  pl->bt.max_bytes = (size_t)n->batch.max_bytes;
  pl->bt.max_pending = (size_t)n->batch.max_pending_bytes;
  build_extra_tags(pl);
  ps_watch_set_sources(pl->watch, n->sources, n->nsources);
  uv_timer_start(&pl->rescan_timer, rescan_cb, (uint64_t)n->watch.rescan_interval_ms,
                 (uint64_t)n->watch.rescan_interval_ms);
  if (n->selfstats.interval_ms > 0)
    uv_timer_start(&pl->stats_timer, stats_cb, (uint64_t)n->selfstats.interval_ms,
                   (uint64_t)n->selfstats.interval_ms);
  else
    uv_timer_stop(&pl->stats_timer);
  rescan(pl);
  PS_INFO(MOD, "configuration reread from %s", n->file ? n->file : "defaults");
}

static void signal_cb(uv_signal_t *h, int signum) {
  ps_pipeline *pl = h->data;
  if (signum == SIGHUP && pl->once) {
    /* A one-shot run keeps the configuration it started with: its watcher
     * is already closed (nothing new is wanted), so a reload would have
     * nothing to apply its sources to. A log rotation may send HUP while a
     * backfill runs; it must not end it. */
    PS_INFO(MOD, "SIGHUP: ignored by run --once (it keeps the configuration "
                 "it started with)");
    return;
  }
  if (signum == SIGHUP) {
    /* Logs go to stderr (the journal or a redirect): nothing to reopen. */
    const char *file = pl->cfg->file;
    if (!file) {
      PS_INFO(MOD, "SIGHUP: no configuration file to reread");
      return;
    }
    ps_config *n = calloc(1, sizeof *n);
    if (!n)
      return;
    ps_config_defaults(n);
    ps_buf err;
    ps_buf_init(&err, 4096);
    if (ps_config_load(n, file, &err) < 0) {
      PS_ERROR(MOD, "SIGHUP: %s; keeping the running configuration",
               err.data ? err.data : "configuration error");
      ps_config_free(n);
      free(n);
    } else {
      apply_reload(pl, n);
    }
    ps_buf_free(&err);
    return;
  }
  begin_stop(pl, signum == SIGTERM ? "SIGTERM" : "SIGINT");
}

/* --- start --------------------------------------------------------------- */

/* CREATE DATABASE is idempotent. It runs on libuv's threadpool, never on
 * the loop: a server that is down or black-holed would stall reading and
 * acknowledging for up to influxdb.timeout_ms per try. While it fails to
 * reach the server it is tried again every 2 s (with a short timeout) until
 * the server answers; writes meanwhile wait in the sink's retries (404 or
 * unreachable). The sink also asks for it when the database disappears
 * while the agent runs (404 "database not found"). */
typedef struct create_db_req {
  uv_work_t work;
  ps_pipeline *pl;
  ps_config quick; /* shallow copy of the sink's config: strings outlive us */
  int first;
  int rc;
  ps_buf err;
} create_db_req;

static void create_database_cb(uv_timer_t *t);

static void create_database_work(uv_work_t *w) {
  create_db_req *r = w->data;
  r->rc = ps_influx_create_database(&r->quick, &r->err);
}

static void create_database_done(uv_work_t *w, int status) {
  create_db_req *r = w->data;
  ps_pipeline *pl = r->pl;
  pl->create_db_busy = 0;
  if (r->first && pl->sink)
    ps_sink_hold(pl->sink, 0); /* answered or not: writes go (or retry) now */
  int rc = status < 0 ? -ECANCELED : r->rc;
  if (rc < 0 && rc != -ECANCELED && r->first)
    PS_WARN(MOD, "CREATE DATABASE: %s%s", r->err.data ? r->err.data : strerror(-rc),
            rc == -EIO ? " (tried again until the server answers)" : "");
  else if (rc == 0 && !r->first)
    PS_INFO(MOD, "CREATE DATABASE \"%s\" done; the waiting writes follow",
            r->quick.influxdb.database ? r->quick.influxdb.database : "");
  if (rc == -EIO && !pl->stopping)
    uv_timer_start(&pl->create_db_timer, create_database_cb, 2000, 0);
  ps_buf_free(&r->err);
  free(r);
}

static void create_database(ps_pipeline *pl, int first) {
  /* The sink's configuration: the influxdb group a reload keeps. */
  const ps_config *c = pl->boot_gen.cfg;
  if (c->influxdb.api != PS_API_V1 || !c->influxdb.create_database || pl->create_db_busy ||
      pl->stopping)
    return;
  create_db_req *r = calloc(1, sizeof *r);
  if (!r)
    return;
  r->pl = pl;
  r->first = first;
  r->quick = *c;
  if (!first && (r->quick.influxdb.timeout_ms <= 0 || r->quick.influxdb.timeout_ms > 1000))
    r->quick.influxdb.timeout_ms = 1000;
  ps_buf_init(&r->err, 2048);
  r->work.data = r;
  if (uv_queue_work(pl->loop, &r->work, create_database_work, create_database_done) < 0) {
    ps_buf_free(&r->err);
    free(r);
    return;
  }
  pl->create_db_busy = 1;
  if (first)
    ps_sink_hold(pl->sink, 1); /* as before: no write before the first answer */
}

static void create_database_cb(uv_timer_t *t) { create_database(t->data, 0); }

/* The sink got 404 "database not found" (dropped while we run). */
static void sink_missing_database(ps_sink *sink, void *data) {
  (void)sink;
  ps_pipeline *pl = data;
  if (!uv_is_active((uv_handle_t *)&pl->create_db_timer))
    create_database(pl, 0);
}

int ps_pipeline_run(ps_config *cfg, const ps_pipeline_opts *opts) {
  ps_pipeline *pl = calloc(1, sizeof *pl);
  if (!pl)
    return PS_EXIT_SOFTWARE;
  pl->cfg = cfg;
  pl->boot_gen.cfg = cfg;
  pl->gens = &pl->boot_gen;
  pl->once = opts && opts->once;
  pl->exit_code = PS_EXIT_OK;
  ps_buf_init(&pl->scratch, 0);
  const char *sd = cfg->state_dir && cfg->state_dir[0] ? cfg->state_dir : ".";
  pl->lock_fd = ps_state_lock(sd, 1);
  if (pl->lock_fd < 0) {
    if (pl->lock_fd == -EWOULDBLOCK)
      fprintf(stderr,
              "perfship: %s: another perfship agent is running with this "
              "state_dir; stop it first\n",
              sd);
    else
      fprintf(stderr,
              "perfship: %s: cannot use the state directory (%s); set "
              "state_dir to a writable folder\n",
              sd, strerror(-pl->lock_fd));
    int code = pl->lock_fd == -EWOULDBLOCK ? PS_EXIT_TEMPFAIL : PS_EXIT_CONFIG;
    free(pl);
    return code;
  }
  ps_buf warn;
  ps_buf_init(&warn, 4096);
  ps_state_load(&pl->saved, sd, &warn);
  if (warn.len)
    PS_WARN("state", "%s", warn.data);
  ps_buf_free(&warn);
  pl->first_start_end = !pl->saved.existed && cfg->watch.start_at == PS_START_END;
  runs_from_json(pl, pl->saved.runs_json);
  build_extra_tags(pl);

  uv_loop_t loop;
  uv_loop_init(&loop);
  pl->loop = &loop;
  pl->start_ms = pl->last_progress_ms = uv_now(&loop);
  int rc = ps_sink_init(&pl->sink, &loop, cfg, sink_done, sink_reject, pl);
  if (rc < 0) {
    fprintf(stderr, "perfship: cannot start the HTTP sink (%s)\n", strerror(-rc));
    ps_state_free(&pl->saved);
    close(pl->lock_fd);
    uv_loop_close(&loop);
    free(pl->extra);
    free(pl);
    return PS_EXIT_SOFTWARE;
  }
  ps_batcher_init(&pl->bt, (size_t)cfg->batch.max_points, (size_t)cfg->batch.max_bytes,
                  (size_t)cfg->batch.max_pending_bytes, submit_cb, cursor_committed_cb,
                  pl);
  uv_timer_t *timers[] = {&pl->flush_timer,     &pl->rescan_timer, &pl->settle_timer,
                          &pl->save_timer,      &pl->stats_timer,  &pl->check_timer,
                          &pl->create_db_timer, &pl->runs_timer,   &pl->progress_timer};
  for (size_t i = 0; i < sizeof timers / sizeof timers[0]; i++) {
    uv_timer_init(&loop, timers[i]);
    timers[i]->data = pl;
  }
  uv_idle_init(&loop, &pl->work);
  pl->work.data = pl;
  uv_signal_t *sigs[] = {&pl->sig_term, &pl->sig_int, &pl->sig_hup};
  int signums[] = {SIGTERM, SIGINT, SIGHUP};
  for (size_t i = 0; i < 3; i++) {
    uv_signal_init(&loop, sigs[i]);
    sigs[i]->data = pl;
    uv_signal_start(sigs[i], signal_cb, signums[i]);
  }
  ps_watch_new(&pl->watch, &loop, cfg->sources, cfg->nsources, on_path, pl);
  ps_sink_on_missing_database(pl->sink, sink_missing_database);
  create_database(pl, 1);

  PS_INFO(MOD, "starting%s: %zu sources, state in %s", pl->once ? " (--once)" : "",
          cfg->nsources, sd);
  pl->initial_scan = 1;
  rescan(pl);
  pl->initial_scan = 0;
  if (!pl->once) {
    if (cfg->watch.rescan_interval_ms > 0)
      uv_timer_start(&pl->rescan_timer, rescan_cb,
                     (uint64_t)cfg->watch.rescan_interval_ms,
                     (uint64_t)cfg->watch.rescan_interval_ms);
    if (cfg->selfstats.interval_ms > 0)
      uv_timer_start(&pl->stats_timer, stats_cb, (uint64_t)cfg->selfstats.interval_ms,
                     (uint64_t)cfg->selfstats.interval_ms);
  } else {
    uv_timer_start(&pl->check_timer, check_cb, 1000, 1000);
    pl->progress_tty = isatty(STDERR_FILENO);
    uint64_t every = pl->progress_tty ? PROGRESS_TTY_MS : PROGRESS_LOG_MS;
    uv_timer_start(&pl->progress_timer, progress_cb, every, every);
    ps_watch_close(pl->watch, watch_closed, pl); /* nothing new is wanted */
  }
  save_state(pl);
  check_once_done(pl);

  uv_run(&loop, UV_RUN_DEFAULT);

  for (pfile *f = pl->files, *next; f; f = next) {
    next = f->next;
    file_free(f);
  }
  free(pl->by_path);
  free(pl->by_id);
  for (prun *r = pl->runs, *next; r; r = next) {
    next = r->next;
    free(r->folder);
    free(r);
  }
  /* Every handle must be closed by now: one left open is a leak, or a
   * callback that could still run on freed memory, so it fails the run. */
  int loop_rc = uv_loop_close(&loop);
  if (loop_rc != 0) {
    uv_walk(&loop, report_open_handle, NULL);
    PS_ERROR(MOD, "shutdown left handles open in the event loop (%s); this is a bug",
             uv_strerror(loop_rc));
  }
  int code = pl->exit_code;
  if (loop_rc != 0 && code == 0)
    code = PS_EXIT_SOFTWARE;
  ps_state_free(&pl->saved);
  for (cfg_gen *g = pl->gens, *next; g; g = next) {
    next = g->next;
    cfg_gen_free(g);
  }
  ps_buf_free(&pl->scratch);
  free(pl->extra);
  close(pl->lock_fd);
  free(pl);
  return code;
}
