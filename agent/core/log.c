/*
 * log.c: leveled, rate-limitable logging to stderr. See include/core/log.h.
 *
 * DESIGN: one line per event, written with a single write() so lines from a
 * dying process are never interleaved half-way. Under systemd the level is
 * given as the "<N>" prefix journald understands; on a terminal or in a file
 * it is spelled out. Rate limiting keeps a small fixed table of keys: an
 * agent whose server is down must not fill the disk with the same line.
 */
#include "core/log.h"

#include "core/visible.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static ps_log_level current_level = PS_LOG_INFO;
/* The transient status line now on the terminal ("" when none). */
static char status_text[256];
#define ERASE_LINE "\r\033[K"

void ps_log_set_level(ps_log_level lvl) { current_level = lvl; }
ps_log_level ps_log_get_level(void) { return current_level; }

static const char *level_word[] = {"error", "warning", "info", "debug"};
static const int level_syslog[] = {3, 4, 6, 7};

static void log_emit(ps_log_level lvl, const char *module, const char *suffix,
                     const char *fmt, va_list ap) {
  char line[2048 + sizeof status_text + 16];
  size_t n = 0;
  /* A status line on screen is erased first and redrawn after the message. */
  size_t room = sizeof line - sizeof status_text - 16;
  if (status_text[0]) {
    memcpy(line, ERASE_LINE, sizeof ERASE_LINE - 1);
    n = sizeof ERASE_LINE - 1;
  }
  size_t head = n;
  if (getenv("JOURNAL_STREAM"))
    n += (size_t)snprintf(line + n, room - n, "<%d>%s: ", level_syslog[lvl],
                          module);
  else
    n += (size_t)snprintf(line + n, room - n, "perfship[%ld]: %s %s: ",
                          (long)getpid(), level_word[lvl], module);
  if (n >= room)
    n = room - 1;
  int m = vsnprintf(line + n, room - n, fmt, ap);
  if (m > 0)
    n += (size_t)m < room - n ? (size_t)m : room - n - 1;
  if (suffix && n < room - 1) {
    int k = snprintf(line + n, room - n, "%s", suffix);
    if (k > 0)
      n += (size_t)k < room - n ? (size_t)k : room - n - 1;
  }
  /* Control characters from data (file names, server answers, run names)
   * must not forge extra log lines, drive the terminal or reorder the line
   * (core/visible.h): shown as their escapes, newlines as spaces. */
  char shown[sizeof line];
  size_t k = ps_visible_into(shown, room - head, line + head, n - head, 0);
  memcpy(line + head, shown, k);
  n = head + k;
  line[n++] = '\n';
  if (status_text[0]) {
    size_t t = strlen(status_text);
    memcpy(line + n, status_text, t);
    n += t;
  }
  ssize_t w = write(STDERR_FILENO, line, n);
  (void)w;
}

void ps_log(ps_log_level lvl, const char *module, const char *fmt, ...) {
  if (lvl > current_level)
    return;
  va_list ap;
  va_start(ap, fmt);
  log_emit(lvl, module, NULL, fmt, ap);
  va_end(ap);
}

#define LIMIT_SLOTS 64
static struct {
  char key[96];
  double last;
  unsigned long suppressed;
} limit_table[LIMIT_SLOTS];

static double now_monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void ps_log_limited(ps_log_level lvl, const char *module, const char *key,
                    double interval_s, const char *fmt, ...) {
  if (lvl > current_level)
    return;
  double now = now_monotonic();
  size_t slot = 0, empty = LIMIT_SLOTS, oldest = 0;
  for (slot = 0; slot < LIMIT_SLOTS; slot++) {
    if (!limit_table[slot].key[0]) {
      if (empty == LIMIT_SLOTS)
        empty = slot;
      continue;
    }
    if (strcmp(limit_table[slot].key, key) == 0)
      break;
    if (limit_table[slot].last < limit_table[oldest].last)
      oldest = slot;
  }
  char suffix[64] = "";
  if (slot < LIMIT_SLOTS) {
    if (now - limit_table[slot].last < interval_s) {
      limit_table[slot].suppressed++;
      return;
    }
    if (limit_table[slot].suppressed)
      snprintf(suffix, sizeof suffix, " (%lu similar messages suppressed)",
               limit_table[slot].suppressed);
  } else {
    slot = empty < LIMIT_SLOTS ? empty : oldest;
    snprintf(limit_table[slot].key, sizeof limit_table[slot].key, "%s", key);
  }
  limit_table[slot].last = now;
  limit_table[slot].suppressed = 0;
  va_list ap;
  va_start(ap, fmt);
  log_emit(lvl, module, suffix[0] ? suffix : NULL, fmt, ap);
  va_end(ap);
}

void ps_log_status(const char *text) {
  char line[sizeof status_text + 16];
  snprintf(status_text, sizeof status_text, "%s", text ? text : "");
  int n = snprintf(line, sizeof line, ERASE_LINE "%s", status_text);
  if (n > 0) {
    ssize_t w = write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    (void)w;
  }
}

void ps_log_status_done(void) {
  if (!status_text[0])
    return;
  status_text[0] = '\0';
  ssize_t w = write(STDERR_FILENO, "\n", 1);
  (void)w;
}
