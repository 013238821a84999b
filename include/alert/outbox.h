/*
 * alert/outbox: events raised and not yet delivered everywhere, with each
 * channel's retries and back-off (docs/alerts.md "Delivered once, never
 * lost").
 *
 * Contract
 * - An entry holds one event and the channels (bits, in the order of the
 *   names given at init) it still has to reach. ps_outbox_result() records
 *   an attempt: delivered clears the channel, a failure schedules the next
 *   attempt after ps_outbox_backoff_ms(attempts); an entry no channel
 *   waits for any more is removed and freed (the caller's pointer to it is
 *   then invalid: the function returns 1).
 * - Entries are tried oldest first. ps_outbox_due() finds the oldest entry
 *   a channel may try now; in `once` mode (run --once) every entry is due
 *   once per process, whatever its back-off, and never twice.
 * - Bounded: at most `max` entries; a new one beyond that drops the oldest
 *   entry no attempt is using (counted in `dropped`), so a receiver that is
 *   down for a month cannot grow the state file without end.
 * - No clock, no I/O: times are the caller's wall-clock milliseconds, so
 *   the back-off is testable. Saved as JSON in the state file; the
 *   attempt counts survive a restart, the schedule starts over (a restart
 *   tries everything at once).
 */
#ifndef PS_ALERT_OUTBOX_H
#define PS_ALERT_OUTBOX_H

#include <stddef.h>
#include <stdint.h>

#include "alert/event.h"

struct cJSON;

#define PS_OUTBOX_MAX_CHANNELS 4
#define PS_OUTBOX_MAX 256

typedef struct ps_outbox_entry {
  ps_alert_event ev;
  unsigned pending; /* channels still to reach */
  unsigned busy;    /* channels with an attempt in flight (not saved) */
  unsigned tried;   /* channels this process tried (not saved) */
  int unsaved;      /* added since the state was last saved: not sent yet */
  unsigned attempts[PS_OUTBOX_MAX_CHANNELS];
  int64_t next_ms[PS_OUTBOX_MAX_CHANNELS];
} ps_outbox_entry;

typedef struct ps_outbox {
  ps_outbox_entry **v; /* oldest first */
  size_t n, cap, max;
  uint64_t dropped;
  const char *names[PS_OUTBOX_MAX_CHANNELS];
  size_t nchannels;
} ps_outbox;

void ps_outbox_init(ps_outbox *o, const char *const *names, size_t nchannels, size_t max);
/* Takes over `ev` (left zeroed) when it returns the new entry; NULL when
 * out of memory (then `ev` is left to the caller). */
ps_outbox_entry *ps_outbox_add(ps_outbox *o, ps_alert_event *ev, unsigned pending,
                               int64_t now_ms);
ps_outbox_entry *ps_outbox_due(ps_outbox *o, unsigned channel, int64_t now_ms, int once);
/* The state holding every entry was saved: they may be sent. */
void ps_outbox_saved(ps_outbox *o);
/* Entries held because the state was not saved since they were added. */
size_t ps_outbox_unsaved(const ps_outbox *o);
/* An attempt on `channel` starts. */
void ps_outbox_begin(ps_outbox_entry *e, unsigned channel);
int ps_outbox_result(ps_outbox *o, ps_outbox_entry *e, unsigned channel, int delivered,
                     int64_t now_ms);
/* The earliest time a channel in `mask` has something to try; INT64_MAX
 * when nothing waits. */
int64_t ps_outbox_next_ms(const ps_outbox *o, unsigned mask);
/* 1 s after the first failure, doubling, at most 5 minutes. */
int64_t ps_outbox_backoff_ms(unsigned attempts);
/* Entries with a channel in `mask` that this process has not tried (held
 * ones not counted: nothing will try them before a save). */
size_t ps_outbox_untried(const ps_outbox *o, unsigned mask);
/* Entries this process tried on a channel in `mask` that still wait. */
size_t ps_outbox_failed(const ps_outbox *o, unsigned mask);

/* Forgets the channels not in `mask` (no longer configured) and the
 * entries that then wait for nothing. Returns how many entries went. */
size_t ps_outbox_keep_channels(ps_outbox *o, unsigned mask);

struct cJSON *ps_outbox_to_cjson(const ps_outbox *o);
/* Adds the newest `max` entries `arr` holds (older ones are counted in
 * r->over). A channel an entry names that `o` does not have is dropped
 * from it; an entry left with nothing to do, or that cannot be read, is
 * skipped and counted in r->bad. `r` may be NULL. */
void ps_outbox_from_cjson(ps_outbox *o, const struct cJSON *arr, int64_t now_ms,
                          ps_alert_recall *r);
void ps_outbox_free(ps_outbox *o);

#endif
