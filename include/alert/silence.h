/*
 * alert/silence: when a source that owes runs has started none for too long
 * (no_new_run, docs/alerts.md "Where they come from").
 *
 * Contract
 * - A silence begins at the later of the latest run start known and the
 *   moment the agent began watching the source, so a source never seen to
 *   run is judged from then. The caller saves the three times of a
 *   ps_alert_silence, so the clock runs across restarts.
 * - It is due once it lasted `after_s`; an `after_s` of 0 or less is off.
 * - It is said once: ps_alert_silence_check() marks the silence it reports
 *   as said, and reports again only after a later run start began a new
 *   silence that lasted as long.
 * - Pure: the times are given; nothing is read or kept elsewhere.
 */
#ifndef PS_ALERT_SILENCE_H
#define PS_ALERT_SILENCE_H

#include <stdint.h>

typedef struct ps_alert_silence {
  int64_t watching_since_s; /* when the agent began watching the source */
  int64_t last_start_s;     /* the latest run start known, 0: none */
  int64_t said_for_s;       /* when the silence last said began, 0: none */
} ps_alert_silence;

/* A run of the source started at `start_s`. Returns 1 when no later start
 * was known (a new silence begins: the caller saves it and looks at its
 * new deadline), else 0. */
int ps_alert_silence_run_started(ps_alert_silence *s, int64_t start_s);

/* Returns 1 when the silence is due at `now_s`: *began_s is when it began,
 * and it is now marked said. Otherwise 0, and *due_s is when it will be
 * due, or 0 when it will not (off, or said already). */
int ps_alert_silence_check(ps_alert_silence *s, int64_t after_s, int64_t now_s,
                           int64_t *began_s, int64_t *due_s);

#endif
