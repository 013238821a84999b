/*
 * log: one line per event on stderr, with a level and the module's name.
 *
 * Contract
 * - ps_log() checks the level before formatting anything.
 * - Lines look like "perfship[pid]: <level> <module>: message"; when stderr
 *   is the journal (JOURNAL_STREAM set) the level is given as an sd-daemon
 *   "<N>" prefix instead, so journald records the priority.
 * - ps_log_limited() suppresses repeats of the same `key` for `interval_s`
 *   seconds and reports how many were suppressed when it next prints.
 * - Nothing here knows secrets; callers never pass them (config.h).
 * - ps_log_status() keeps one transient line (a progress line, only ever
 *   used when stderr is a terminal) at the bottom of stderr, redrawn with
 *   "\r": a log line printed meanwhile first erases it and draws it again
 *   below itself, so the two never mix. ps_log_status_done() leaves the
 *   current text in place with a newline and forgets it.
 */
#ifndef PS_CORE_LOG_H
#define PS_CORE_LOG_H

#include "core/config.h"

void ps_log_set_level(ps_log_level lvl);
ps_log_level ps_log_get_level(void);
void ps_log(ps_log_level lvl, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void ps_log_limited(ps_log_level lvl, const char *module, const char *key,
                    double interval_s, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

void ps_log_status(const char *text);
void ps_log_status_done(void);

#define PS_ERROR(mod, ...) ps_log(PS_LOG_ERROR, mod, __VA_ARGS__)
#define PS_WARN(mod, ...) ps_log(PS_LOG_WARNING, mod, __VA_ARGS__)
#define PS_INFO(mod, ...) ps_log(PS_LOG_INFO, mod, __VA_ARGS__)
#define PS_DEBUG(mod, ...)                                                     \
  do {                                                                         \
    if (ps_log_get_level() >= PS_LOG_DEBUG)                                    \
      ps_log(PS_LOG_DEBUG, mod, __VA_ARGS__);                                  \
  } while (0)

#endif
