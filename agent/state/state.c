/*
 * state.c: the state file. See include/state/state.h.
 *
 * DESIGN: JSON through cJSON, because `status` and a human reading the file
 * after an incident both benefit from a self-describing format, and a
 * truncated or garbled file is then detected by the parser rather than read
 * as wrong numbers. 64-bit values (device, inode, hashes, offsets) are
 * written as decimal strings: a JSON number is a double and would round them.
 * A corrupt file is kept aside for inspection and the agent starts empty:
 * re-reading from the beginning re-sends points, which overwrite themselves
 * (docs/schema.md), so that is safe, where refusing to start would not be.
 * Run as root on a state directory that belongs to another user (the
 * packaged service's /var/lib/perfship, owned by `perfship`), the files
 * made there are handed to the directory's owner: left to root, the
 * service could no longer open its own lock or state. Only regular files
 * with one link that root owns are handed over, through a descriptor
 * opened without following symlinks, so the directory's owner cannot
 * steer the change to another file.
 */
#include "state/state.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/jsonspan.h"
#include "core/log.h"
#include "core/util.h"

void ps_state_init(ps_state *s) { memset(s, 0, sizeof *s); }

void ps_state_free(ps_state *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->nfiles; i++)
    free(s->files[i].path);
  free(s->files);
  for (size_t i = 0; i < s->nerrors; i++)
    free(s->errors[i]);
  for (size_t i = 0; i < s->nsections; i++) {
    free(s->sections[i].name);
    free(s->sections[i].json);
  }
  memset(s, 0, sizeof *s);
}

int ps_state_path(const char *dir, ps_buf *out) {
  return ps_buf_printf(out, "%s/state.json", dir && dir[0] ? dir : ".");
}

int ps_state_add(ps_state *s, const ps_state_file *f) {
  if (s->nfiles == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    ps_state_file *n = realloc(s->files, cap * sizeof *n);
    if (!n)
      return -ENOMEM;
    s->files = n;
    s->cap = cap;
  }
  ps_state_file *d = &s->files[s->nfiles];
  *d = *f;
  d->path = strdup(f->path ? f->path : "");
  if (!d->path)
    return -ENOMEM;
  s->nfiles++;
  return 0;
}

ps_state_file *ps_state_find(ps_state *s, uint64_t dev, uint64_t ino) {
  for (size_t i = 0; i < s->nfiles; i++)
    if (s->files[i].id.dev == dev && s->files[i].id.ino == ino)
      return &s->files[i];
  return NULL;
}

void ps_state_add_error(ps_state *s, const char *msg) {
  char *copy = strdup(msg);
  if (!copy)
    return;
  if (s->nerrors == PS_STATE_MAX_ERRORS) {
    free(s->errors[0]);
    memmove(s->errors, s->errors + 1, (PS_STATE_MAX_ERRORS - 1) * sizeof s->errors[0]);
    s->nerrors--;
  }
  s->errors[s->nerrors++] = copy;
}

static const char *const RESERVED[] = {"version", "saved_at", "pid", "pending_points",
                                         "files", "errors", NULL};

static int is_reserved(const char *name) {
  for (size_t i = 0; RESERVED[i]; i++)
    if (strcmp(RESERVED[i], name) == 0)
      return 1;
  return 0;
}

const char *ps_state_section(const ps_state *s, const char *name) {
  for (size_t i = 0; i < s->nsections; i++)
    if (strcmp(s->sections[i].name, name) == 0)
      return s->sections[i].json;
  return NULL;
}

int ps_state_set_section(ps_state *s, const char *name, char *json) {
  for (size_t i = 0; i < s->nsections; i++)
    if (strcmp(s->sections[i].name, name) == 0) {
      free(s->sections[i].json);
      if (json) {
        s->sections[i].json = json;
        return 0;
      }
      free(s->sections[i].name);
      s->sections[i] = s->sections[--s->nsections];
      return 0;
    }
  if (!json)
    return 0;
  if (is_reserved(name))
    return -EINVAL;
  if (s->nsections == PS_STATE_MAX_SECTIONS)
    return -ENOSPC;
  char *n = strdup(name);
  if (!n)
    return -ENOMEM;
  s->sections[s->nsections].name = n;
  s->sections[s->nsections].json = json;
  s->nsections++;
  return 0;
}

int ps_path_under(const char *path, const char *prefix) {
  size_t n = strlen(prefix);
  while (n > 1 && prefix[n - 1] == '/')
    n--;
  if (strncmp(path, prefix, n) != 0)
    return 0;
  return path[n] == '\0' || path[n] == '/' || (n == 1 && prefix[0] == '/');
}

size_t ps_state_forget(ps_state *s, const char *path) {
  size_t kept = 0, dropped = 0;
  for (size_t i = 0; i < s->nfiles; i++) {
    if (ps_path_under(s->files[i].path, path)) {
      free(s->files[i].path);
      dropped++;
    } else {
      s->files[kept++] = s->files[i];
    }
  }
  s->nfiles = kept;
  return dropped;
}

/* --- load ------------------------------------------------------------ */

static int get_u64(const cJSON *o, const char *key, uint64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (cJSON_IsString(v)) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v->valuestring, &end, 10);
    if (errno || end == v->valuestring || *end)
      return -EINVAL;
    *out = x;
    return 0;
  }
  if (cJSON_IsNumber(v) && v->valuedouble >= 0) {
    *out = (uint64_t)v->valuedouble;
    return 0;
  }
  return -EINVAL;
}

static const char *json_type_word(const cJSON *v) {
  if (cJSON_IsString(v))
    return "a string";
  if (cJSON_IsNumber(v))
    return "a number";
  if (cJSON_IsBool(v))
    return "a boolean";
  return "null";
}

/* The agent's own members (version, files, errors, counters) of a parsed
 * root, or of an object holding only those. */
static int read_reserved(ps_state *s, const cJSON *root, ps_buf *why, ps_buf *skipped) {
  int rc = 0;
  const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
  if (!cJSON_IsNumber(ver) || ver->valueint != 1) {
    ps_buf_puts(why, "unknown version");
    rc = -EINVAL;
    goto out;
  }
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(root, "files");
  const cJSON *f;
  cJSON_ArrayForEach(f, files) {
    ps_state_file e;
    memset(&e, 0, sizeof e);
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(f, "path");
    uint64_t fp_len = 0;
    if (!cJSON_IsString(path) || get_u64(f, "dev", &e.id.dev) ||
        get_u64(f, "ino", &e.id.ino) || get_u64(f, "fp_len", &fp_len) ||
        get_u64(f, "fp_hash", &e.id.fp_hash) || get_u64(f, "offset", &e.offset) ||
        get_u64(f, "line", &e.line) || fp_len > PS_FP_MAX) {
      ps_buf_puts(why, "a file entry is incomplete");
      rc = -EINVAL;
      goto out;
    }
    e.id.fp_len = (uint32_t)fp_len;
    uint64_t btime = 0; /* optional: states before it, file systems without */
    if (get_u64(f, "btime_ns", &btime) == 0)
      e.id.btime_ns = (int64_t)btime;
    if (get_u64(f, "doc_hash", &e.doc_hash) == 0)
      e.has_doc = 1;
    e.path = path->valuestring;
    if ((rc = ps_state_add(s, &e)) < 0)
      goto out;
  }
  const cJSON *errs = cJSON_GetObjectItemCaseSensitive(root, "errors");
  const cJSON *e;
  size_t not_text = 0;
  if (errs && !cJSON_IsArray(errs)) {
    /* the last errors are what `status` shows: their loss is said */
    ps_buf_printf(skipped, "%s'errors' (%s, not a list)", skipped->len ? ", " : "",
                  cJSON_IsObject(errs) ? "an object" : json_type_word(errs));
    errs = NULL;
  }
  cJSON_ArrayForEach(e, errs) {
    if (cJSON_IsString(e))
      ps_state_add_error(s, e->valuestring);
    else
      not_text++;
  }
  if (not_text)
    ps_buf_printf(skipped, "%s%zu entr%s of 'errors' that %s not text", skipped->len ? ", " : "",
                  not_text, not_text == 1 ? "y" : "ies", not_text == 1 ? "is" : "are");
  uint64_t x;
  if (get_u64(root, "pending_points", &x) == 0)
    s->pending_points = x;
  if (get_u64(root, "saved_at", &x) == 0)
    s->saved_at = (int64_t)x;
  if (get_u64(root, "pid", &x) == 0)
    s->pid = (int)x;
out:
  return rc;
}

static void say_not_a_section(ps_buf *skipped, const char *name, const char *what) {
  ps_buf_printf(skipped, "%s'%.64s' (%s)", skipped->len ? ", " : "", name, what);
}

/* The whole file as one tree: only for text outside the strict grammar
 * jsonspan reads, which cJSON still accepts. */
static int parse_state_tree(ps_state *s, const char *text, ps_buf *why, ps_buf *skipped) {
  cJSON *root = cJSON_Parse(text);
  if (!root || !cJSON_IsObject(root)) {
    ps_buf_puts(why, "not a JSON object");
    cJSON_Delete(root);
    return -EINVAL;
  }
  int rc = read_reserved(s, root, why, skipped);
  const cJSON *sec;
  cJSON_ArrayForEach(sec, root) {
    if (rc || !sec->string || is_reserved(sec->string))
      continue;
    if (!(cJSON_IsObject(sec) || cJSON_IsArray(sec))) {
      say_not_a_section(skipped, sec->string, json_type_word(sec));
      continue;
    }
    char *json = cJSON_PrintUnformatted(sec);
    if (!json || ps_state_set_section(s, sec->string, json) < 0)
      free(json);
  }
  cJSON_Delete(root);
  return rc;
}

static const char *span_type_word(ps_jv v) {
  switch (ps_jv_kind(v)) {
  case PS_JV_STRING: return "a string";
  case PS_JV_NUMBER: return "a number";
  case PS_JV_TRUE:
  case PS_JV_FALSE: return "a boolean";
  default: return "null";
  }
}

static int is_reserved_key(ps_jv key) {
  for (size_t i = 0; RESERVED[i]; i++)
    if (ps_jkey_is(key, RESERVED[i]))
      return 1;
  return 0;
}

static int is_container(ps_jv v) {
  return ps_jv_kind(v) == PS_JV_OBJECT || ps_jv_kind(v) == PS_JV_ARRAY;
}

/* The agent's members as a small tree of their own, the first of each
 * name (what a lookup in the whole tree found). */
static int read_reserved_spans(ps_state *s, ps_jv root, ps_buf *why, ps_buf *skipped) {
  cJSON *head = cJSON_CreateObject();
  ps_buf key;
  ps_buf_init(&key, 0);
  ps_jiter it = ps_jv_iter(root);
  ps_jmember m;
  int rc = head ? 0 : -ENOMEM;
  while (rc == 0 && ps_jiter_next(&it, &m)) {
    size_t off, n;
    key.len = 0;
    if (ps_jkey_string(m.key, &key, &off, &n) < 0) {
      rc = -ENOMEM;
      break;
    }
    if (!is_reserved(key.data) || cJSON_GetObjectItemCaseSensitive(head, key.data))
      continue;
    cJSON *v = cJSON_ParseWithLength(m.val.p, (size_t)(m.val.end - m.val.p));
    if (!v || !cJSON_AddItemToObject(head, key.data, v)) {
      cJSON_Delete(v);
      rc = -ENOMEM;
    }
  }
  if (rc == 0)
    rc = read_reserved(s, head, why, skipped);
  ps_buf_free(&key);
  cJSON_Delete(head);
  return rc;
}

/* The stages' sections are kept as their text, never built into a tree
 * here: a section blown far past its stage's caps (80,000 alert entries a
 * list) was held three times over, the file's tree, its printed copy and
 * the stage's own tree (docs/benchmarks.md, "State loading"). The largest
 * section takes over the file's buffer in place, so the load holds the
 * file about once. Later members of one name replace earlier ones, as
 * they did. */
static void read_sections(ps_state *s, ps_jv root, ps_buf *text, ps_buf *skipped) {
  ps_jv largest = {NULL, NULL};
  ps_jiter it = ps_jv_iter(root);
  ps_jmember m;
  while (ps_jiter_next(&it, &m))
    if (is_container(m.val) && !is_reserved_key(m.key) &&
        (!largest.p || m.val.end - m.val.p > largest.end - largest.p))
      largest = m.val;
  ps_buf key;
  ps_buf_init(&key, 0);
  char *largest_name = NULL;
  it = ps_jv_iter(root);
  while (ps_jiter_next(&it, &m)) {
    size_t off, n;
    key.len = 0;
    /* out of memory: that section is lost, as a failed print lost it;
     * the file is not called corrupt for it */
    if (ps_jkey_string(m.key, &key, &off, &n) < 0 || is_reserved(key.data))
      continue;
    if (largest_name && m.val.p != largest.p && strcmp(key.data, largest_name) == 0) {
      free(largest_name); /* replaced: its buffer stays the file's */
      largest_name = NULL;
    }
    if (!is_container(m.val)) {
      say_not_a_section(skipped, key.data, span_type_word(m.val));
      continue;
    }
    char *json = m.val.p == largest.p ? calloc(1, 1)
                                      : strndup(m.val.p, (size_t)(m.val.end - m.val.p));
    if (!json || ps_state_set_section(s, key.data, json) < 0) {
      free(json);
      continue;
    }
    if (m.val.p == largest.p)
      largest_name = strdup(key.data);
  }
  ps_buf_free(&key);
  if (largest_name) {
    size_t n = (size_t)(largest.end - largest.p);
    memmove(text->data, largest.p, n);
    text->data[n] = '\0';
    char *json = realloc(text->data, n + 1);
    json = json ? json : text->data;
    text->data = NULL;
    text->len = text->cap = 0;
    ps_state_set_section(s, largest_name, json); /* frees the placeholder */
  }
  free(largest_name);
}

/* `skipped` gets "; NAME (a string)" per section that is neither an object
 * nor a list: a stage reads nothing from it, and the file says so once.
 * The text is read in place (core/jsonspan.h); cJSON reads what is outside
 * jsonspan's strict grammar, as before. `text` may be taken over. */
static int parse_state(ps_state *s, ps_buf *text, ps_buf *why, ps_buf *skipped) {
  ps_jv root;
  if (ps_json_check(text->data, text->len, 1000, &root) < 0 || ps_jv_kind(root) != PS_JV_OBJECT)
    return parse_state_tree(s, text->data, why, skipped);
  int rc = read_reserved_spans(s, root, why, skipped);
  if (rc == 0)
    read_sections(s, root, text, skipped);
  return rc;
}

/* --- ownership ---------------------------------------------------------- */

/* The owner to hand new files of `dir` to: 0 and *uid set when perfship
 * runs as root and the directory belongs to someone else, else -1. */
static int foreign_owner(const char *dir, uid_t *uid, gid_t *gid) {
  struct stat st;
  if (geteuid() != 0 || stat(dir, &st) < 0 || st.st_uid == 0)
    return -1;
  *uid = st.st_uid;
  *gid = st.st_gid;
  return 0;
}

static void give_fd(int fd, uid_t uid, gid_t gid) {
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
      st.st_uid == 0 && fchown(fd, uid, gid) < 0)
    PS_WARN("state", "cannot hand a state file to uid %u: %s", (unsigned)uid,
            strerror(errno));
}

int ps_state_adopt(const char *dir, const char *name) {
  const char *d = dir && dir[0] ? dir : ".";
  uid_t uid;
  gid_t gid;
  if (foreign_owner(d, &uid, &gid) < 0)
    return 0;
  ps_buf p;
  ps_buf_init(&p, 0);
  if (ps_buf_printf(&p, "%s/%s", d, name) < 0)
    return -ENOMEM;
  int fd = open(p.data, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  ps_buf_free(&p);
  if (fd < 0)
    return errno == ENOENT ? 0 : -errno;
  give_fd(fd, uid, gid);
  close(fd);
  return 0;
}

/* A corrupt state file moved aside, and said so in `warn`. An earlier
 * corrupt copy is evidence too: never renamed over, the new one gets the
 * first free name of state.json.corrupt, .corrupt.1, ... */
static void put_corrupt_aside(const char *path, const char *why, ps_buf *warn) {
  ps_buf aside;
  ps_buf_init(&aside, 0);
  int moved = 0, err = 0;
  for (int k = 0; k < 100 && !moved; k++) {
    aside.len = 0;
    if ((k ? ps_buf_printf(&aside, "%s.corrupt.%d", path, k)
           : ps_buf_printf(&aside, "%s.corrupt", path)) < 0)
      break;
    struct stat ast;
    if (lstat(aside.data, &ast) == 0)
      continue;
    if (link(path, aside.data) == 0) { /* never replaces what is there */
      moved = unlink(path) == 0;
      if (!moved)
        err = errno;
    } else if (errno != EEXIST) { /* a file system without hard links */
      moved = rename(path, aside.data) == 0;
      err = moved ? 0 : errno;
      break;
    }
  }
  const char *base = aside.data ? strrchr(aside.data, '/') : NULL;
  ps_buf_printf(warn,
                "%s: the state file is corrupt (%s); %s%s%s; files will be read "
                "again from their beginning (points overwrite themselves)",
                path, why ? why : "?", moved ? "kept aside as " : "it could not be moved aside (",
                moved ? (base ? base + 1 : aside.data) : strerror(err ? err : EEXIST),
                moved ? "" : "); it is ignored and replaced by the next save");
  ps_buf_free(&aside);
}

int ps_state_load(ps_state *s, const char *dir, ps_buf *warn) {
  /* the lock is made before the first load; an earlier run as root may
   * have left either file to root */
  ps_state_adopt(dir, "lock");
  ps_state_adopt(dir, "state.json");
  ps_state_init(s);
  ps_buf path, text, why, skipped;
  ps_buf_init(&path, 0);
  ps_buf_init(&text, 0);
  ps_buf_init(&why, 512);
  ps_buf_init(&skipped, 0);
  int rc = ps_state_path(dir, &path);
  if (rc)
    goto out;
  int fd = open(path.data, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) {
      ps_buf_printf(warn, "%s: cannot read the state (%s); starting without it",
                    path.data, strerror(errno));
    }
    goto out;
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    /* Not a state someone broke: a path nothing can be saved to (a rename
     * over a directory fails). Left where it is, and said so. */
    close(fd);
    s->existed = 1;
    ps_buf_printf(warn, "%s is a directory, not a state file: starting without a state; "
                        "nothing can be saved until it is moved away",
                  path.data);
    goto out;
  }
  s->existed = 1;
  rc = ps_read_whole(fd, (size_t)1 << 30, &text);
  close(fd);
  if (rc == 0)
    rc = parse_state(s, &text, &why, &skipped);
  else
    ps_buf_puts(&why, strerror(-rc));
  if (rc) {
    ps_state_free(s);
    s->existed = 1;
    put_corrupt_aside(path.data, why.data, warn);
    rc = 0;
  } else if (skipped.len) {
    ps_buf_printf(warn,
                  "%s: damaged sections ignored (neither an object nor a list, or "
                  "entries of the wrong type): %s",
                  path.data, skipped.data);
  }
out:
  ps_buf_free(&skipped);
  ps_buf_free(&path);
  ps_buf_free(&text);
  ps_buf_free(&why);
  return rc;
}

/* --- save ------------------------------------------------------------ */

/* The file is written directly, not through a cJSON tree and its
 * printer: a save rewrites every file's entry, and with 1,000 files that
 * was ~45,000 instructions an entry (a node and an snprintf per value),
 * tens of milliseconds per save (scripts/bench scale, callgrind). The
 * output is what cJSON reads back: the same keys in the same order,
 * 64-bit values as decimal strings, strings escaped as cJSON escapes
 * them; one file entry per line. A failed append marks the writer bad and
 * the text is dropped (the save fails), never written short. */
typedef struct writer {
  ps_buf b;
  int bad;
} writer;

static void put(writer *w, const void *p, size_t n) {
  if (ps_buf_append(&w->b, p, n) < 0)
    w->bad = 1;
}

static void puts_(writer *w, const char *s) { put(w, s, strlen(s)); }

static void put_u64(writer *w, uint64_t v) {
  char tmp[24];
  char *p = tmp + sizeof tmp;
  *--p = '"';
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  *--p = '"';
  put(w, p, (size_t)(tmp + sizeof tmp - p));
}

static void put_str(writer *w, const char *s) {
  static const char hex[] = "0123456789abcdef";
  put(w, "\"", 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    const unsigned char *run = p;
    while (*p >= 0x20 && *p != '"' && *p != '\\')
      p++;
    put(w, run, (size_t)(p - run));
    if (!*p)
      break;
    char esc[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
    switch (*p) {
    case '"': put(w, "\\\"", 2); break;
    case '\\': put(w, "\\\\", 2); break;
    case '\b': put(w, "\\b", 2); break;
    case '\f': put(w, "\\f", 2); break;
    case '\n': put(w, "\\n", 2); break;
    case '\r': put(w, "\\r", 2); break;
    case '\t': put(w, "\\t", 2); break;
    default: put(w, esc, 6); break;
    }
  }
  put(w, "\"", 1);
}

static void put_key_u64(writer *w, const char *key, uint64_t v) {
  puts_(w, key);
  put_u64(w, v);
}

static char *render(const ps_state *s) {
  writer w = {.bad = 0};
  ps_buf_init(&w.b, 0);
  if (ps_buf_reserve(&w.b, 256 + 200 * s->nfiles) < 0)
    return NULL;
  puts_(&w, "{\"version\":1,");
  put_key_u64(&w, "\"saved_at\":", (uint64_t)time(NULL));
  put_key_u64(&w, ",\"pid\":", (uint64_t)getpid());
  put_key_u64(&w, ",\"pending_points\":", s->pending_points);
  puts_(&w, ",\"files\":[");
  for (size_t i = 0; i < s->nfiles; i++) {
    const ps_state_file *f = &s->files[i];
    puts_(&w, i ? ",\n{\"path\":" : "\n{\"path\":");
    put_str(&w, f->path ? f->path : "");
    put_key_u64(&w, ",\"dev\":", f->id.dev);
    put_key_u64(&w, ",\"ino\":", f->id.ino);
    put_key_u64(&w, ",\"fp_len\":", f->id.fp_len);
    put_key_u64(&w, ",\"fp_hash\":", f->id.fp_hash);
    if (f->id.btime_ns)
      put_key_u64(&w, ",\"btime_ns\":", (uint64_t)f->id.btime_ns);
    put_key_u64(&w, ",\"offset\":", f->offset);
    put_key_u64(&w, ",\"line\":", f->line);
    if (f->has_doc)
      put_key_u64(&w, ",\"doc_hash\":", f->doc_hash);
    puts_(&w, "}");
  }
  puts_(&w, "],\n\"errors\":[");
  for (size_t i = 0; i < s->nerrors; i++) {
    if (i)
      puts_(&w, ",");
    put_str(&w, s->errors[i]);
  }
  puts_(&w, "]");
  /* Only valid JSON is written: a section in jsonspan's strict grammar
   * (what cJSON prints) as it is, the rest read and printed again by cJSON
   * (what does not parse is left out). Reading and printing every section
   * again was a fifth of a backfill's CPU (docs/benchmarks.md). */
  for (size_t i = 0; i < s->nsections; i++) {
    const char *json = s->sections[i].json;
    ps_jv strict;
    if (json && ps_json_check(json, strlen(json), 1000, &strict) == 0) {
      puts_(&w, ",\n");
      put_str(&w, s->sections[i].name);
      puts_(&w, ":");
      put(&w, strict.p, (size_t)(strict.end - strict.p));
      continue;
    }
    cJSON *v = cJSON_Parse(json);
    char *text = v ? cJSON_PrintUnformatted(v) : NULL;
    cJSON_Delete(v);
    if (!text) {
      w.bad |= v != NULL; /* out of memory, not a bad section */
      continue;
    }
    puts_(&w, ",\n");
    put_str(&w, s->sections[i].name);
    puts_(&w, ":");
    puts_(&w, text);
    free(text);
  }
  puts_(&w, "}\n");
  if (w.bad) {
    ps_buf_free(&w.b);
    return NULL;
  }
  return w.b.data;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int ps_state_save(const ps_state *s, const char *dir) {
  const char *d = dir && dir[0] ? dir : ".";
  char *text = render(s);
  if (!text)
    return -ENOMEM;
  ps_buf path, tmp;
  ps_buf_init(&path, 0);
  ps_buf_init(&tmp, 0);
  int rc = ps_state_path(dir, &path);
  if (!rc)
    rc = ps_buf_printf(&tmp, "%s/.state.json.tmp", d);
  int fd = -1;
  if (!rc) {
    /* a fresh file, never one someone left under that name (a symlink
     * would make root write through it) */
    if (unlink(tmp.data) < 0 && errno != ENOENT)
      rc = -errno;
    else
      fd = open(tmp.data, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0600);
    if (!rc && fd < 0)
      rc = -errno;
  }
  uid_t uid;
  gid_t gid;
  if (!rc && foreign_owner(d, &uid, &gid) == 0)
    give_fd(fd, uid, gid);
  if (!rc)
    rc = write_all(fd, text, strlen(text));
  if (!rc && fsync(fd) < 0)
    rc = -errno;
  if (fd >= 0 && close(fd) < 0 && !rc)
    rc = -errno;
  if (!rc && rename(tmp.data, path.data) < 0)
    rc = -errno;
  if (!rc) { /* the rename itself must survive a power cut */
    int dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      if (fsync(dfd) < 0)
        rc = -errno;
      close(dfd);
    }
  } else if (tmp.data) {
    unlink(tmp.data);
  }
  free(text);
  ps_buf_free(&path);
  ps_buf_free(&tmp);
  return rc;
}

int ps_state_lock(const char *state_dir, int create) {
  const char *d = state_dir && state_dir[0] ? state_dir : ".";
  if (create && mkdir(d, 0700) < 0 && errno != EEXIST)
    return -errno;
  ps_buf p;
  ps_buf_init(&p, 0);
  if (ps_buf_printf(&p, "%s/lock", d) < 0)
    return -ENOMEM;
  int fd = open(p.data, (create ? O_CREAT : 0) | O_RDWR | O_CLOEXEC, 0600);
  ps_buf_free(&p);
  if (fd < 0)
    return -errno;
  if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
    int e = errno;
    close(fd);
    return e == EWOULDBLOCK ? -EWOULDBLOCK : -e;
  }
  return fd;
}
