/*
 * util.c: see include/core/util.h.
 *
 * The readers here are the only loops over pread()/read() outside the line
 * reader (input/tail.c): every module that wants "the whole file" (the
 * configuration, secrets, documents, the state, a run's exit_code) gets the
 * same EINTR handling, the same bound and the same terminator.
 */
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK ((size_t)64 << 10)

uint64_t ps_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int ps_stage_number(const char *text) {
  /* digits only: strtol alone takes a sign and leading blanks */
  if (!text || *text < '0' || *text > '9')
    return -1;
  char *end;
  long n = strtol(text, &end, 10);
  return !*end && n <= 100000 ? (int)n : -1;
}

int ps_array_grow(void **items, size_t *cap, size_t size, size_t first) {
  size_t c = *cap ? *cap * 2 : first;
  if (c < *cap || c > SIZE_MAX / size)
    return -ENOMEM;
  void *p = realloc(*items, c * size);
  if (!p)
    return -ENOMEM;
  *items = p;
  *cap = c;
  return 0;
}

uint64_t ps_hash64(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 1099511628211ULL;
  }
  return h;
}

ssize_t ps_pread_full(int fd, void *buf, size_t n, uint64_t off) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (r == 0)
      break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

int ps_read_whole(int fd, size_t limit, ps_buf *out) {
  ps_buf_reset(out);
  int rc = ps_buf_reserve(out, 0); /* an empty file still gets its "" */
  if (rc)
    return rc;
  int stream = 0; /* a pipe: read() in order, pread() cannot */
  for (;;) {
    /* Never ask for more than one byte past the limit: that byte is enough
     * to know the file is too large, and a small limit (a secret) then
     * costs one allocation that is never copied by a realloc. */
    size_t want = READ_CHUNK;
    if (limit && want > limit + 1 - out->len)
      want = limit + 1 - out->len;
    if ((rc = ps_buf_reserve(out, want)) != 0)
      return rc;
    ssize_t r = stream ? read(fd, out->data + out->len, want)
                       : pread(fd, out->data + out->len, want, (off_t)out->len);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      if (errno == ESPIPE && !stream && out->len == 0) {
        stream = 1;
        continue;
      }
      return -errno;
    }
    if (r == 0)
      return 0;
    out->len += (size_t)r;
    out->data[out->len] = '\0';
    if (limit && out->len > limit)
      return -EFBIG;
  }
}

int ps_open_regular(const char *path, struct stat *st) {
  /* non-blocking until the type is known: a FIFO's open waits for a writer */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return -errno;
  struct stat s;
  int rc = fstat(fd, &s) < 0     ? -errno
           : S_ISDIR(s.st_mode)  ? -EISDIR
           : !S_ISREG(s.st_mode) ? -EINVAL
                                 : 0;
  int fl = rc == 0 ? fcntl(fd, F_GETFL) : 0;
  if (rc == 0 && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))
    rc = -errno;
  if (rc < 0) {
    close(fd);
    return rc;
  }
  if (st)
    *st = s;
  return fd;
}

int ps_read_file(const char *path, size_t limit, ps_buf *out, struct stat *st) {
  struct stat s;
  int fd = ps_open_regular(path, &s);
  if (fd < 0)
    return fd;
  int rc = 0;
  if (limit && (uint64_t)s.st_size > limit)
    rc = -EFBIG; /* known before reading a byte */
  else
    rc = ps_read_whole(fd, limit, out);
  close(fd);
  if (rc == 0 && st)
    *st = s;
  return rc;
}

int ps_parse_duration_s(const char *text, int64_t *seconds) {
  static const struct {
    char unit;
    int64_t s;
  } units[] = {{'\0', 1}, {'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 604800}};
  if (!text || text[0] < '0' || text[0] > '9')
    return -EINVAL;
  char *end;
  errno = 0;
  long long n = strtoll(text, &end, 10);
  if (errno || n <= 0 || (end[0] && end[1]))
    return -EINVAL;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (end[0] == units[i].unit) {
      /* a hundred years is more history than any server holds */
      if (n > (long long)(100LL * 366 * 86400) / units[i].s)
        return -ERANGE;
      *seconds = (int64_t)n * units[i].s;
      return 0;
    }
  return -EINVAL;
}

static int put_encoded(ps_buf *out, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  int rc = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p && !rc; p++) {
    if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
        *p == '-' || *p == '.' || *p == '_' || *p == '~')
      rc = ps_buf_append(out, p, 1);
    else {
      char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
      rc = ps_buf_append(out, e, 3);
    }
  }
  return rc ? -ENOMEM : 0;
}

int ps_compare_url(ps_buf *out, const char *tmpl, const char *good, const char *bad) {
  if (!tmpl || (strncmp(tmpl, "http://", 7) && strncmp(tmpl, "https://", 8)) || !good ||
      !good[0] || !bad || !bad[0])
    return -ENOENT;
  size_t start = out->len;
  int rc = 0;
  for (const char *p = tmpl; *p && !rc;) {
    if (!strncmp(p, "{good}", 6)) {
      rc = put_encoded(out, good);
      p += 6;
    } else if (!strncmp(p, "{bad}", 5)) {
      rc = put_encoded(out, bad);
      p += 5;
    } else {
      rc = ps_buf_append(out, p, 1) ? -ENOMEM : 0;
      p++;
    }
    if (!rc && out->len - start > PS_COMPARE_URL_MAX)
      rc = -E2BIG;
  }
  if (rc && out->data) {
    out->len = start;
    out->data[start] = '\0';
  }
  return rc;
}
