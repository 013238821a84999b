/*
 * watch.c: sources to files, with inotify through uv_fs_event. See
 * include/input/watch.h.
 *
 * DESIGN: Linux inotify watches one directory, not a tree, so there is one
 * handle per directory that can hold a matching file: every folder below a
 * directory source, and for a glob every directory matched by each of its
 * leading components (for "/srv/x*" + "/runs/..." each "/srv/x<y>/runs").
 * Events only name a path; the pipeline stats it and decides (new, grown,
 * truncated, replaced, deleted), so missed or merged events are harmless:
 * the periodic scan calls on_path for everything anyway.
 */
#include "input/watch.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buf.h"
#include "core/log.h"

typedef struct wdir {
  uv_fs_event_t h;
  struct ps_watch *w;
  char *path;
  const ps_source_cfg *src;
  int depth; /* levels below a directory source's root */
  int seen;  /* found by the current scan */
  int closing;
  struct wdir *next;
} wdir;

struct ps_watch {
  uv_loop_t *loop;
  const ps_source_cfg *srcs;
  size_t nsrcs;
  ps_watch_path_cb on_path;
  void *ctx;
  wdir *dirs;
  size_t ndirs;
  size_t open_handles;
  int closing;
  void (*closed)(void *);
  void *closed_arg;
};

static int has_glob(const char *p) { return strpbrk(p, "*?[") != NULL; }

static void join(ps_buf *b, const char *dir, const char *name) {
  ps_buf_reset(b);
  size_t n = strlen(dir);
  ps_buf_append(b, dir, n);
  if (n == 0 || dir[n - 1] != '/')
    ps_buf_putc(b, '/');
  ps_buf_puts(b, name);
}

int ps_watch_source_matches(const ps_source_cfg *src, const char *path) {
  const char *sp = src->path;
  if (has_glob(sp))
    return fnmatch(sp, path, FNM_PATHNAME) == 0;
  size_t n = strlen(sp);
  while (n > 1 && sp[n - 1] == '/')
    n--;
  return strncmp(path, sp, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static void scan_dir(ps_watch *w, const ps_source_cfg *src, const char *dir, int depth);
static void scan_glob(ps_watch *w, const ps_source_cfg *src);

static void handle_closed(uv_handle_t *h) {
  wdir *d = h->data;
  ps_watch *w = d->w;
  free(d->path);
  free(d);
  w->open_handles--;
  if (w->closing && w->open_handles == 0 && w->closed)
    w->closed(w->closed_arg);
}

static void on_event(uv_fs_event_t *h, const char *filename, int events, int status) {
  wdir *d = h->data;
  ps_watch *w = d->w;
  if (status < 0) {
    ps_log_limited(PS_LOG_WARNING, "watch", d->path, 60,
                   "%s: watch error (%s); relying on the periodic rescan", d->path,
                   uv_strerror(status));
    return;
  }
  if (w->closing || d->closing)
    return;
  if (!filename) {
    scan_dir(w, d->src, d->path, d->depth);
    return;
  }
  ps_buf p;
  ps_buf_init(&p, 0);
  join(&p, d->path, filename);
  if (!p.data)
    return;
  /* A new folder arrives as a rename/create event; a change event is a
   * write or an attribute change, where the stat would only cost time (one
   * path walk per write, with 1,000 files growing at once): the pipeline
   * stats the path itself and ignores what is not a regular file. */
  struct stat st;
  int isdir = events != UV_CHANGE && stat(p.data, &st) == 0 && S_ISDIR(st.st_mode);
  if (isdir) {
    /* A new run folder: watch it and take what it already holds. */
    if (has_glob(d->src->path))
      scan_glob(w, d->src);
    else if (d->depth < PS_WATCH_MAX_DEPTH)
      scan_dir(w, d->src, p.data, d->depth + 1);
  } else if (ps_watch_source_matches(d->src, p.data)) {
    w->on_path(w->ctx, d->src, p.data, events == UV_CHANGE);
  }
  ps_buf_free(&p);
}

static wdir *find_dir(ps_watch *w, const ps_source_cfg *src, const char *path) {
  for (wdir *d = w->dirs; d; d = d->next)
    if (d->src == src && !d->closing && strcmp(d->path, path) == 0)
      return d;
  return NULL;
}

/* Returns 1 when the directory was newly watched. */
static int watch_dir(ps_watch *w, const ps_source_cfg *src, const char *path, int depth) {
  wdir *d = find_dir(w, src, path);
  if (d) {
    d->seen = 1;
    return 0;
  }
  d = calloc(1, sizeof *d);
  if (!d)
    return 0;
  d->w = w;
  d->src = src;
  d->depth = depth;
  d->seen = 1;
  d->path = strdup(path);
  if (!d->path || uv_fs_event_init(w->loop, &d->h) < 0) {
    free(d->path);
    free(d);
    return 0;
  }
  d->h.data = d;
  w->open_handles++;
  int rc = uv_fs_event_start(&d->h, on_event, path, 0);
  if (rc < 0) {
    /* Only running out of watches is cured by the sysctl; a directory the
     * agent's user may not read needs its permissions fixed instead, and
     * the rescan cannot read it either. */
    const char *consequence =
        rc == UV_EACCES || rc == UV_EPERM
            ? "give perfship's user read and search permission on it"
        : rc == UV_ENOSPC ? "changes are seen at the periodic rescan only "
                            "(raise fs.inotify.max_user_watches?)"
                          : "changes are seen at the periodic rescan only";
    ps_buf key;
    ps_buf_init(&key, 0);
    ps_buf_printf(&key, "watch %s", path);
    ps_log_limited(PS_LOG_WARNING, "watch", key.data ? key.data : path, 300,
                   "%s: cannot watch (%s); %s", path, uv_strerror(rc),
                   consequence);
    ps_buf_free(&key);
    d->closing = 1;
    uv_close((uv_handle_t *)&d->h, handle_closed);
    return 0;
  }
  d->next = w->dirs;
  w->dirs = d;
  w->ndirs++;
  return 1;
}

static void scan_dir(ps_watch *w, const ps_source_cfg *src, const char *dir, int depth) {
  watch_dir(w, src, dir, depth);
  DIR *dp = opendir(dir);
  if (!dp) {
    int e = errno;
    if (e != ENOENT) {
      /* its own key: the "cannot watch" warning of the same directory must
       * not hide this one */
      ps_buf key;
      ps_buf_init(&key, 0);
      ps_buf_printf(&key, "list %s", dir);
      ps_log_limited(PS_LOG_WARNING, "watch", key.data ? key.data : dir, 300,
                     "%s: cannot list (%s)%s", dir, strerror(e),
                     e == EACCES || e == EPERM
                         ? "; give perfship's user read and search permission on it"
                         : "");
      ps_buf_free(&key);
    }
    return;
  }
  ps_buf p;
  ps_buf_init(&p, 0);
  struct dirent *e;
  while ((e = readdir(dp))) {
    if (e->d_name[0] == '.' &&
        (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
      continue;
    join(&p, dir, e->d_name);
    struct stat st;
    if (!p.data || stat(p.data, &st) < 0)
      continue;
    if (S_ISDIR(st.st_mode)) {
      if (depth < PS_WATCH_MAX_DEPTH)
        scan_dir(w, src, p.data, depth + 1);
    } else if (S_ISREG(st.st_mode)) {
      w->on_path(w->ctx, src, p.data, 0);
    }
  }
  closedir(dp);
  ps_buf_free(&p);
}

static void scan_glob(ps_watch *w, const ps_source_cfg *src) {
  const char *pat = src->path;
  /* Watch every directory that a leading part of the pattern matches. */
  ps_buf prefix;
  ps_buf_init(&prefix, 0);
  const char *slash = pat;
  while ((slash = strchr(slash + 1, '/'))) {
    ps_buf_reset(&prefix);
    ps_buf_append(&prefix, pat, (size_t)(slash - pat));
    if (!prefix.data)
      break;
    glob_t g;
    memset(&g, 0, sizeof g);
    if (glob(prefix.data, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g) == 0)
      for (size_t i = 0; i < g.gl_pathc; i++) {
        struct stat st;
        if (stat(g.gl_pathv[i], &st) == 0 && S_ISDIR(st.st_mode))
          watch_dir(w, src, g.gl_pathv[i], 0);
      }
    globfree(&g);
  }
  if (pat[0] != '/') /* a relative pattern's files live in "." */
    watch_dir(w, src, ".", 0);
  ps_buf_free(&prefix);
  glob_t g;
  memset(&g, 0, sizeof g);
  if (glob(pat, GLOB_NOSORT, NULL, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; i++) {
      struct stat st;
      if (stat(g.gl_pathv[i], &st) == 0) {
        if (S_ISREG(st.st_mode))
          w->on_path(w->ctx, src, g.gl_pathv[i], 0);
        else if (S_ISDIR(st.st_mode)) /* a glob naming folders: take them whole */
          scan_dir(w, src, g.gl_pathv[i], 1);
      }
    }
  globfree(&g);
}

static void scan_source(ps_watch *w, const ps_source_cfg *src) {
  struct stat st;
  if (has_glob(src->path)) {
    scan_glob(w, src);
  } else if (stat(src->path, &st) == 0 && S_ISDIR(st.st_mode)) {
    scan_dir(w, src, src->path, 0);
  } else {
    /* A single file (present or not yet): watch its folder. */
    char *dir = strdup(src->path);
    if (!dir)
      return;
    char *s = strrchr(dir, '/');
    if (s == dir)
      s[1] = '\0';
    else if (s)
      *s = '\0';
    else
      strcpy(dir, ".");
    if (stat(dir, &st) == 0)
      watch_dir(w, src, dir, PS_WATCH_MAX_DEPTH);
    free(dir);
    if (stat(src->path, &st) == 0 && S_ISREG(st.st_mode))
      w->on_path(w->ctx, src, src->path, 0);
  }
}

int ps_watch_new(ps_watch **out, uv_loop_t *loop, const ps_source_cfg *srcs, size_t nsrcs,
                 ps_watch_path_cb on_path, void *ctx) {
  ps_watch *w = calloc(1, sizeof *w);
  if (!w)
    return -ENOMEM;
  w->loop = loop;
  w->srcs = srcs;
  w->nsrcs = nsrcs;
  w->on_path = on_path;
  w->ctx = ctx;
  *out = w;
  return 0;
}

void ps_watch_set_sources(ps_watch *w, const ps_source_cfg *srcs, size_t nsrcs) {
  w->srcs = srcs;
  w->nsrcs = nsrcs;
}

int ps_watch_scan(ps_watch *w) {
  if (w->closing)
    return -ECANCELED;
  for (wdir *d = w->dirs; d; d = d->next)
    d->seen = 0;
  for (size_t i = 0; i < w->nsrcs; i++)
    scan_source(w, &w->srcs[i]);
  /* Folders gone (or sources dropped by a reload) give back their handle. */
  wdir **pp = &w->dirs;
  while (*pp) {
    wdir *d = *pp;
    if (!d->seen) {
      *pp = d->next;
      w->ndirs--;
      d->closing = 1;
      uv_close((uv_handle_t *)&d->h, handle_closed);
    } else {
      pp = &d->next;
    }
  }
  return 0;
}

void ps_watch_close(ps_watch *w, void (*closed)(void *arg), void *arg) {
  if (!w) {
    if (closed)
      closed(arg);
    return;
  }
  if (w->closing)
    return; /* the first close's callback frees it */
  w->closing = 1;
  w->closed = closed;
  w->closed_arg = arg;
  wdir *d = w->dirs;
  w->dirs = NULL;
  while (d) {
    wdir *next = d->next;
    d->closing = 1;
    uv_close((uv_handle_t *)&d->h, handle_closed);
    d = next;
  }
  if (w->open_handles == 0 && closed)
    closed(arg);
}

void ps_watch_free(ps_watch *w) { free(w); }
