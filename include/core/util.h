/*
 * util: small helpers several modules need, each with one home here.
 *
 * Contract
 * - ps_now_ms(): a monotonic clock in milliseconds, for ages and deadlines
 *   (never for timestamps of points).
 * - ps_hash64(): FNV-1a 64 over bytes, seeded with PS_HASH_SEED or a
 *   previous result to hash pieces in a row. Used for file fingerprints,
 *   document contents and hash-table buckets; not for anything an
 *   adversary must not collide.
 * - ps_stat_mtime_ns(): a file's modification time in ns since the epoch,
 *   the unit every "changed since" comparison uses; ps_whole_seconds()
 *   turns it into st_mtime's whole seconds.
 * - ps_pread_full(): reads until `n` bytes or the end of the file,
 *   retrying EINTR and short reads; the file position is not used.
 * - ps_read_whole(): the one whole-file reader. It never holds more than
 *   `limit` + 1 bytes of data (so a hostile file cannot grow it), reads
 *   pipes too (stdin), and never moves the position of a regular file.
 *   ps_read_file() opens a path for it and refuses what is not a regular
 *   file. Both return 0 or a negative errno; on failure `out` holds no
 *   data a caller may use.
 * - ps_open_regular(): opens a path for reading only if it is a regular
 *   file, without ever blocking on the way (a FIFO's open waits for a
 *   writer: one named like a stage's slog hung `convert` for good).
 * - ps_compare_url(): a verdict's revision range as a link
 *   (verdicts.compare_url, docs/verdicts.md "The revision range"): the
 *   template with {good} and {bad} replaced by the revisions,
 *   percent-encoded (every byte but A-Z a-z 0-9 - . _ ~), so a revision
 *   string from the data cannot add a path, a query or a scheme. Only a
 *   template starting with http:// or https:// is used. The link is at
 *   most PS_COMPARE_URL_MAX bytes: a longer one (revisions of megabytes
 *   made a 40 MB webhook body) is no link, -E2BIG, and `out` is left as
 *   it was on any failure. The configuration holds the template to
 *   PS_COMPARE_URL_TEMPLATE_MAX bytes and PS_COMPARE_URL_PLACEHOLDERS
 *   placeholders (core/config_verdicts.c).
 */
#ifndef PS_CORE_UTIL_H
#define PS_CORE_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "core/buf.h"

uint64_t ps_now_ms(void);

#define PS_HASH_SEED 1469598103934665603ULL
#define PS_COMPARE_URL_MAX 4096
#define PS_COMPARE_URL_TEMPLATE_MAX 1024
#define PS_COMPARE_URL_PLACEHOLDERS 4
uint64_t ps_hash64(uint64_t h, const void *p, size_t n);

/* Whether two NUL-terminated names are the same, compared in place: the
 * readers and the judges ask it per member or per point against a few
 * short names that mostly differ in their first bytes, where a strcmp
 * call per candidate was 1-2 % of a backfill's CPU (docs/benchmarks.md,
 * "Seventh pass"). */
static inline int ps_same_str(const char *a, const char *b) {
  while (*a && *a == *b)
    a++, b++;
  return *a == *b;
}

/* A `stage` tag's text as its number, 0-100000 (a run has tens), or -1
 * when it is no such number (NULL, empty, signs, trailing text). */
int ps_stage_number(const char *text);

/* Room for one more item in the array *items of n items of `size` bytes
 * and capacity *cap: doubled when full, `first` items the first time.
 * 0, or -ENOMEM with the array as it was. Inline: it is asked per item
 * on hot paths (a slog's deliveries), and grows rarely. */
int ps_array_grow(void **items, size_t *cap, size_t size, size_t first);
static inline int ps_array_room(void **items, size_t n, size_t *cap, size_t size, size_t first) {
  return n < *cap ? 0 : ps_array_grow(items, cap, size, first);
}

static inline int64_t ps_stat_mtime_ns(const struct stat *st) {
  return (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

/* Nanoseconds since the epoch in whole seconds, rounded down as st_mtime
 * is (also before 1970): the time of points timed by a file's mtime. */
static inline int64_t ps_whole_seconds(int64_t ns) {
  int64_t s = ns / 1000000000LL;
  return ns % 1000000000LL < 0 ? s - 1 : s;
}

/* Returns the count read (less than n only at the end of the file) or a
 * negative errno. */
ssize_t ps_pread_full(int fd, void *buf, size_t n, uint64_t off);

/* The whole contents of `fd` (from offset 0; a pipe from where it is) into
 * `out`, replacing what it held; `out->data` is NUL-terminated even for an
 * empty file. -EFBIG when there are more than `limit` bytes (0: no limit). */
int ps_read_whole(int fd, size_t limit, ps_buf *out);

/* ps_read_whole() of the file at `path`: -EISDIR for a directory, -EINVAL
 * for anything else that is not a regular file, -EFBIG past `limit`.
 * `st` (may be NULL) gets the file's status as opened. */
int ps_read_file(const char *path, size_t limit, ps_buf *out, struct stat *st);

/* A descriptor (O_CLOEXEC, blocking) of the regular file at `path`, or
 * -EISDIR for a directory, -EINVAL for any other file that is not regular
 * (FIFO, socket, device), or another negative errno. `st` (may be NULL)
 * gets its status. */
int ps_open_regular(const char *path, struct stat *st);

/* A duration as people write it: a positive whole number with s, m, h, d
 * or w ("90m", "36h", "7d"; no unit: seconds); 0 with *seconds set,
 * -EINVAL for anything else, -ERANGE beyond a hundred years. */
int ps_parse_duration_s(const char *text, int64_t *seconds);

/* Appends the link to `out`: 0, -ENOENT when there is none (no template,
 * not http(s), a revision absent or empty), -ENOMEM. */
int ps_compare_url(ps_buf *out, const char *tmpl, const char *good, const char *bad);

#endif
