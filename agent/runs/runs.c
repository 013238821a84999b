/*
 * runs.c: run lifecycle of a loadgen folder and its markers (include/runs/runs.h).
 *
 * Design
 * - Everything here is a function of the folder on disk, the parser's facts
 *   and the `now` passed in; no state is kept. The pipeline owns "first
 *   seen" (backfill) and "already posted" bookkeeping.
 * - docker.log can hold a whole SDK build, so only its tail is read: the
 *   runner's final error and the interruption notice are its last lines.
 * - Error texts from docker.log end up in a string field; they are cut at a
 *   UTF-8 boundary and stripped of terminal escapes so the encoder never
 *   refuses the marker over them.
 */
#include "runs/runs.h"

#include <ctype.h>
#include <limits.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/util.h"

#define DOCKER_LOG_TAIL (64 * 1024)
/* The runner writes `echo $?`; anything longer is not an exit code. */
#define EXIT_CODE_MAX 64

const char *ps_run_status_name(ps_run_status s) {
  switch (s) {
  case PS_RUN_STATUS_NONE:
    return "running";
  case PS_RUN_STATUS_SUCCESS:
    return "success";
  case PS_RUN_STATUS_FAILED:
    return "failed";
  case PS_RUN_STATUS_INTERRUPTED:
    return "interrupted";
  case PS_RUN_STATUS_STALLED:
    return "stalled";
  }
  return "running";
}

static int is_revision(const char *s) {
  size_t n = strlen(s), hex = 0, dig = 0;
  if (n == 0)
    return 0;
  for (size_t i = 0; i < n; i++) {
    if (isdigit((unsigned char)s[i]))
      dig++;
    if (isxdigit((unsigned char)s[i]))
      hex++;
  }
  return dig == n || (hex == n && n >= 7 && n <= 40);
}

const char *ps_run_revision(const char *run) {
  const char *dash = run ? strrchr(run, '-') : NULL;
  if (!dash || dash == run || !is_revision(dash + 1) ||
      strlen(dash + 1) >= sizeof ((ps_run_id *)0)->revision)
    return NULL;
  return dash + 1;
}

void ps_run_id_from_name(const char *folder, ps_run_id *id) {
  memset(id, 0, sizeof *id);
  if (!folder)
    return;
  /* the last path component, ignoring trailing slashes */
  size_t end = strlen(folder);
  while (end > 1 && folder[end - 1] == '/')
    end--;
  size_t start = end;
  while (start > 0 && folder[start - 1] != '/')
    start--;
  size_t n = end - start;
  if (n >= sizeof id->run)
    n = sizeof id->run - 1;
  memcpy(id->run, folder + start, n);
  id->run[n] = '\0';
  const char *rev = ps_run_revision(id->run);
  if (!rev)
    return;
  snprintf(id->revision, sizeof id->revision, "%s", rev);
  size_t tl = (size_t)(rev - 1 - id->run);
  memcpy(id->test_type, id->run, tl);
  id->test_type[tl] = '\0';
}

/* a - b in seconds. Times from the data may lie far apart (a start of year
 * 1700 read from a broken line): the exact integer difference when it fits,
 * never an overflow. */
static double ns_diff_s(int64_t a, int64_t b) {
  int64_t d;
  if (__builtin_sub_overflow(a, b, &d))
    return ((double)a - (double)b) / 1e9;
  return (double)d / 1e9;
}

/* Reads the last `cap` bytes of `name` in dirfd (all of it when smaller);
 * *partial says whether it was cut. Returns bytes read or a negative errno. */
static ssize_t read_tail_at(int dirfd, const char *name, char *buf, size_t cap,
                            int *partial) {
  int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  uint64_t off = 0;
  if (st.st_size > (off_t)cap)
    off = (uint64_t)st.st_size - cap;
  *partial = off > 0;
  ssize_t got = ps_pread_full(fd, buf, cap, off);
  close(fd);
  return got < 0 ? 0 : got; /* unreadable (a folder): no lines */
}

/* The run's exit_code file: *exists when there is one, even unreadable or
 * not a number (a queue-driven run whose code is not known). */
static int read_exit_code(int dirfd, int *exists, struct stat *st, int *code) {
  *exists = 0;
  /* O_NONBLOCK: a FIFO's open would wait for a writer; it reads as empty */
  int fd = openat(dirfd, "exit_code", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return 0;
  if (fstat(fd, st) != 0) {
    close(fd);
    return 0;
  }
  *exists = 1;
  ps_buf text;
  ps_buf_init(&text, 0);
  int rc = ps_read_whole(fd, EXIT_CODE_MAX, &text);
  close(fd);
  int ok = 0;
  if (rc == 0) {
    char *s = text.data;
    while (isspace((unsigned char)*s))
      s++;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    while (end && isspace((unsigned char)*end))
      end++;
    if (end != s && *end == '\0' && errno == 0 && v >= -1000000 && v <= 1000000) {
      *code = (int)v;
      ok = 1;
    }
  }
  ps_buf_free(&text);
  return ok;
}

static int is_error_line(const char *s, size_t n) {
  size_t i = 0;
  while (i < n && (s[i] == ' ' || s[i] == '\t'))
    i++;
  if (n - i >= 3 && memcmp(s + i, "at ", 3) == 0)
    return 0; /* a stack frame */
  if (i < n && s[i] == '+')
    return 0; /* shell trace of the start script */
  /* "Error: msg", "TypeError: msg", "Error [ERR_X]: msg" */
  for (size_t j = i; j + 6 <= n; j++) {
    if (memcmp(s + j, "Error", 5) != 0)
      continue;
    if (s[j + 5] == ':' || (s[j + 5] == ' ' && j + 6 < n && s[j + 6] == '['))
      return 1;
  }
  return 0;
}

/* Copies a log line into dst without terminal escapes or control bytes,
 * cut at a UTF-8 boundary. */
static void copy_clean(char *dst, size_t cap, const char *s, size_t n) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 1 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == 0x1b) {
      if (i + 1 < n && s[i + 1] == '[') {
        i += 2;
        while (i < n && !isalpha((unsigned char)s[i]))
          i++;
      }
      continue;
    }
    if (c < 0x20 || c == 0x7f)
      continue;
    dst[o++] = (char)c;
  }
  /* step back over a cut multi-byte sequence */
  size_t k = o;
  while (k > 0 && ((unsigned char)dst[k - 1] & 0xC0) == 0x80)
    k--;
  if (k > 0 && ((unsigned char)dst[k - 1] & 0x80)) {
    unsigned char lead = (unsigned char)dst[k - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (o - (k - 1) < need)
      o = k - 1;
  }
  dst[o] = '\0';
}

static void scan_docker_log(int dirfd, ps_run_view *v, int *interrupted) {
  *interrupted = 0;
  char *buf = malloc(DOCKER_LOG_TAIL);
  if (!buf)
    return;
  int partial = 0;
  ssize_t n = read_tail_at(dirfd, "docker.log", buf, DOCKER_LOG_TAIL, &partial);
  if (n > 0) {
    size_t pos = 0, len = (size_t)n;
    if (partial) { /* the tail starts mid-line */
      char *nl = memchr(buf, '\n', len);
      pos = nl ? (size_t)(nl - buf) + 1 : len;
    }
    while (pos < len) {
      char *nl = memchr(buf + pos, '\n', len - pos);
      size_t end = nl ? (size_t)(nl - buf) : len;
      const char *line = buf + pos;
      size_t ll = end - pos;
      if (memmem(line, ll, "ERR_SCRIPT_EXECUTION_INTERRUPTED", 32) ||
          memmem(line, ll, "Error: Interrupted", 18))
        *interrupted = 1;
      if (is_error_line(line, ll))
        copy_clean(v->error_line, sizeof v->error_line, line, ll);
      pos = end + 1;
    }
  }
  free(buf);
}

/* The newest modification time of the folder's regular files (0: none). */
static int64_t newest_mtime_ns(int dirfd) {
  int64_t newest = 0;
  DIR *d = fdopendir(dup(dirfd));
  if (!d)
    return 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    struct stat st;
    if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
      continue;
    if (fstatat(dirfd, de->d_name, &st, 0) == 0 && S_ISREG(st.st_mode) &&
        ps_stat_mtime_ns(&st) > newest)
      newest = ps_stat_mtime_ns(&st);
  }
  closedir(d);
  return newest;
}

/* An ended run's end, status and duration, from its facts, its exit_code
 * file (`ec_st`) and, when it did not succeed, its docker log. */
static void view_ended(int dirfd, const struct stat *ec_st, ps_run_view *v) {
  const ps_run_facts *f = &v->facts;
  v->state = PS_RUN_ENDED;
  v->have_end = 1;
  if (f->have_ended_at)
    v->end_ns = ps_seconds_to_ns(f->ended_at_s);
  else if (f->have_last_wall)
    v->end_ns = ps_seconds_to_ns(f->last_wall_s);
  else if (v->have_exit_file)
    v->end_ns = ps_stat_mtime_ns(ec_st);
  else
    v->end_ns = v->newest_mtime_ns;
  int interrupted = 0;
  if (f->have_ended_at && (!v->have_exit_code || v->exit_code == 0)) {
    v->status = PS_RUN_STATUS_SUCCESS;
  } else {
    scan_docker_log(dirfd, v, &interrupted);
    v->status = interrupted ? PS_RUN_STATUS_INTERRUPTED : PS_RUN_STATUS_FAILED;
  }
  if (f->have_duration) {
    v->have_duration = 1;
    v->duration_s = f->duration_s;
  } else if (v->have_start && v->end_ns >= v->start_ns) {
    v->have_duration = 1;
    v->duration_s = ns_diff_s(v->end_ns, v->start_ns);
  }
}

int ps_run_evaluate(const char *folder, int64_t now_s, int64_t stall_after_s,
                    const ps_run_facts *facts, ps_run_view *v, ps_buf *err) {
  memset(v, 0, sizeof *v);
  ps_run_id_from_name(folder, &v->id);
  if (facts)
    v->facts = *facts;
  const ps_run_facts *f = &v->facts;

  int dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    int e = errno;
    if (err)
      ps_buf_printf(err, "%s: %s", folder, strerror(e));
    return -e;
  }
  v->newest_mtime_ns = newest_mtime_ns(dirfd);

  struct stat ec_st;
  v->have_exit_code = read_exit_code(dirfd, &v->have_exit_file, &ec_st, &v->exit_code);

  if (f->have_first_wall) {
    v->have_start = 1;
    v->start_ns = ps_seconds_to_ns(f->first_wall_s);
  }

  int ended = v->have_exit_code || (!v->have_exit_file && f->finish_seen);
  if (ended) {
    view_ended(dirfd, &ec_st, v);
  } else if (v->newest_mtime_ns > 0 && stall_after_s > 0 &&
             now_s * 1000000000LL - v->newest_mtime_ns >
                 stall_after_s * 1000000000LL) {
    v->state = PS_RUN_STALLED;
    v->status = PS_RUN_STATUS_STALLED;
    v->have_end = 1;
    v->end_ns = v->newest_mtime_ns + stall_after_s * 1000000000LL;
    if (v->have_start && v->newest_mtime_ns >= v->start_ns) {
      v->have_duration = 1;
      v->duration_s = ns_diff_s(v->newest_mtime_ns, v->start_ns);
    }
  } else {
    v->state = PS_RUN_RUNNING;
  }
  close(dirfd);
  return 0;
}

void ps_run_format_duration(char *buf, size_t n, double s) {
  long long t = (long long)llround(s < 0 ? 0 : s);
  long long h = t / 3600, m = (t % 3600) / 60, sec = t % 60;
  if (h)
    snprintf(buf, n, "%lldh%lldm%llds", h, m, sec);
  else if (m)
    snprintf(buf, n, "%lldm%llds", m, sec);
  else
    snprintf(buf, n, "%llds", sec);
}

static int emit_marker(const ps_run_view *v, int backfill, int end,
                       ps_emitter *em) {
  char text[1024], dur[64] = "";
  const char *status = end ? ps_run_status_name(v->status) : "running";
  ps_tag tags[5];
  size_t nt = 0;
  tags[nt++] = (ps_tag){"source", PS_RUN_MARKER_SOURCE};
  tags[nt++] = (ps_tag){"run", v->id.run};
  if (v->id.revision[0])
    tags[nt++] = (ps_tag){"revision", v->id.revision};
  tags[nt++] = (ps_tag){"event", end ? "end" : "start"};
  tags[nt++] = (ps_tag){"status", status};

  if (v->have_duration)
    ps_run_format_duration(dur, sizeof dur, v->duration_s);
  if (!end) {
    snprintf(text, sizeof text, "%s started", v->id.run);
  } else if (v->status == PS_RUN_STATUS_STALLED) {
    char quiet[64];
    ps_run_format_duration(quiet, sizeof quiet,
                 (double)(v->end_ns - v->newest_mtime_ns) / 1e9);
    snprintf(text, sizeof text, "%s stalled: no file changed for %s",
             v->id.run, quiet);
  } else {
    char code[32] = "";
    if (v->have_exit_code && v->exit_code != 0)
      snprintf(code, sizeof code, " (exit code %d)", v->exit_code);
    snprintf(text, sizeof text, "%s ended: %s%s%s%s%s%s", v->id.run, status,
             dur[0] ? " after " : "", dur, code,
             v->error_line[0] ? ": " : "", v->error_line);
  }
  ps_field fields[4];
  size_t nf = 0;
  fields[nf++] = ps_field_string("text", text, strlen(text));
  fields[nf++] = ps_field_bool("backfill", backfill);
  if (end && v->have_exit_code)
    fields[nf++] = ps_field_int("exitCode", v->exit_code);
  if (end && v->have_duration)
    fields[nf++] = ps_field_float("duration", v->duration_s);
  ps_point p = {PS_RUN_MARKER_MEASUREMENT, tags, nt, fields, nf, end ? v->end_ns : v->start_ns};
  return ps_emit_point(em, &p);
}

/* status/exitCode of an ended run onto its loadgen_run row (same series and
 * time as the parser's point, so InfluxDB merges the fields). */
static int emit_run_status(const ps_run_view *v, ps_emitter *em) {
  int64_t t;
  if (v->facts.have_started_at)
    t = ps_seconds_to_ns(v->facts.started_at_s);
  else if (v->have_start)
    t = v->start_ns;
  else
    return 0;
  ps_tag tags[4];
  size_t nt = 0;
  tags[nt++] = (ps_tag){"run", v->id.run};
  if (v->id.test_type[0])
    tags[nt++] = (ps_tag){"test_type", v->id.test_type};
  if (v->id.revision[0])
    tags[nt++] = (ps_tag){"revision", v->id.revision};
  if (v->facts.profile[0])
    tags[nt++] = (ps_tag){"profile", v->facts.profile};
  const char *status = ps_run_status_name(v->status);
  ps_field fields[3];
  size_t nf = 0;
  fields[nf++] = ps_field_string("status", status, strlen(status));
  if (v->have_exit_code)
    fields[nf++] = ps_field_int("exitCode", v->exit_code);
  if (!v->facts.finish_seen) /* no perf-finish: certainly no success */
    fields[nf++] = ps_field_bool("success", 0);
  ps_point p = {"loadgen_run", tags, nt, fields, nf, t};
  return ps_emit_point(em, &p);
}

int ps_run_emit_markers(const ps_run_view *v, int backfill, int which,
                        ps_emitter *em) {
  int rc = 0;
  if ((which & PS_RUN_MARK_START) && v->have_start)
    rc = emit_marker(v, backfill, 0, em);
  if (rc == 0 && (which & PS_RUN_MARK_END) && v->have_end &&
      (v->state == PS_RUN_ENDED || v->state == PS_RUN_STALLED))
    rc = emit_marker(v, backfill, 1, em);
  if (rc == 0 && (which & PS_RUN_MARK_END) && v->state == PS_RUN_ENDED)
    rc = emit_run_status(v, em);
  return rc;
}

/* ---- facts <-> JSON ----------------------------------------------------------- */

#define FACT_NUMS(X)                                                           \
  X(origin, have_origin, origin_s)                                             \
  X(firstWall, have_first_wall, first_wall_s)                                  \
  X(lastWall, have_last_wall, last_wall_s)                                     \
  X(startedAt, have_started_at, started_at_s)                                  \
  X(endedAt, have_ended_at, ended_at_s)                                        \
  X(duration, have_duration, duration_s)

int ps_run_facts_to_json(const ps_run_facts *f, ps_buf *out) {
  cJSON *o = cJSON_CreateObject();
  if (!o)
    return -ENOMEM;
#define PUT(name, have, val)                                                   \
  if (f->have)                                                                 \
    cJSON_AddNumberToObject(o, #name, f->val);
  FACT_NUMS(PUT)
#undef PUT
  cJSON_AddBoolToObject(o, "originFromMtime", f->origin_from_mtime);
  cJSON_AddBoolToObject(o, "finishSeen", f->finish_seen);
  cJSON_AddStringToObject(o, "profile", f->profile);
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  if (!s)
    return -ENOMEM;
  int rc = ps_buf_puts(out, s);
  cJSON_free(s);
  return rc;
}

int ps_run_facts_from_json(const char *text, ps_run_facts *f) {
  cJSON *o = text ? cJSON_Parse(text) : NULL;
  if (!cJSON_IsObject(o)) {
    cJSON_Delete(o);
    return -EINVAL;
  }
  memset(f, 0, sizeof *f);
  const cJSON *it;
#define GET(name, have, val)                                                   \
  it = cJSON_GetObjectItemCaseSensitive(o, #name);                             \
  if (cJSON_IsNumber(it) && isfinite(it->valuedouble)) {                       \
    f->have = 1;                                                               \
    f->val = it->valuedouble;                                                  \
  }
  FACT_NUMS(GET)
#undef GET
  f->origin_from_mtime =
      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "originFromMtime"));
  f->finish_seen =
      cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "finishSeen"));
  it = cJSON_GetObjectItemCaseSensitive(o, "profile");
  if (cJSON_IsString(it))
    snprintf(f->profile, sizeof f->profile, "%s", it->valuestring);
  cJSON_Delete(o);
  return 0;
}

int ps_run_is_folder(const char *folder) {
  char probe[PATH_MAX];
  struct stat st;
  static const char *const marks[] = {"perf.jsonl", "exit_code"};
  for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) {
    int n = snprintf(probe, sizeof probe, "%s/%s", folder, marks[i]);
    if (n > 0 && (size_t)n < sizeof probe && stat(probe, &st) == 0)
      return 1;
  }
  return 0;
}
