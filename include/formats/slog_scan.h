/*
 * formats/slog_scan: one SwingSet slog line read for what perfship uses
 * (docs/schema.md "Slog figures", docs/loadgen.md "Slogs").
 *
 * Contract
 * - Pure: bytes in, a record out; no I/O, no allocation, no state.
 * - A prefix filter first: the line's type comes from its first bytes,
 *   `{"type":"T"` (type first: SDKs since mid-2022) or `{"time":N,"type":"T"`
 *   (time first: the earlier writer). That is also the era: it is read from
 *   which key comes first, never from a date. A line of a type perfship
 *   does not use (syscall-result, console, vat startup, replays' framing,
 *   ...) is counted (returns 0) and not read further, however long.
 * - A used line is read member by member at the top level of its object,
 *   values skipped without building anything, and only as far as the keys
 *   its type needs (a syscall stops at `replay`; a create-vat at `name`,
 *   before the bundle). The envelope's `time` and `seconds` are read from
 *   the first member (time first) or from the line's end (type first: the
 *   writer appends them after every other member).
 * - `head`/`tail`: the line, or the first bytes and the last bytes of a
 *   line too long to keep (input/gzlines.h); `truncated` says which. Keys
 *   beyond the head are then missing, not guessed: a value the head ends
 *   in (a delivery's megabyte `kd`, a number whose last digits may be
 *   cut) ends the reading there, and what was read before it stands.
 * - Returns 1 (a record of a used type), 0 (a line only counted), or -1
 *   with `*why` set: the line is not a slog event (not a JSON object, no
 *   type), or a used key holds something it cannot (a vatID that is no
 *   vat ID, a height that is no integer, a broken value).
 * - `want_time`: read `time` of lines only counted too (the stage's time is
 *   its first line's).
 */
#ifndef PS_FORMATS_SLOG_SCAN_H
#define PS_FORMATS_SLOG_SCAN_H

#include <stddef.h>
#include <stdint.h>

typedef enum ps_slog_type {
  PS_SLOG_OTHER = 0,
  PS_SLOG_BEGIN_BLOCK,
  PS_SLOG_CRANK_FINISH,
  PS_SLOG_DELIVER,
  PS_SLOG_DELIVER_RESULT,
  PS_SLOG_SYSCALL,
  PS_SLOG_CLIST,
  PS_SLOG_KERNEL_STATS,
  PS_SLOG_COMMIT_START,
  PS_SLOG_COMMIT_FINISH,
  PS_SLOG_AFTER_COMMIT,
  PS_SLOG_SNAPSHOT,
  PS_SLOG_CREATE_VAT,
} ps_slog_type;

typedef enum ps_slog_era {
  PS_SLOG_ERA_UNKNOWN = 0,
  PS_SLOG_ERA_TIME_FIRST, /* {"time":..,"type":..}: no monotime, no seconds */
  PS_SLOG_ERA_TYPE_FIRST, /* {"type":..,...,"time":..,"monotime":..[,"seconds":..]} */
} ps_slog_era;

/* The kernel counters perfship keeps, in kernel-stats' `stats` object. */
enum {
  PS_SLOG_KERNEL_OBJECTS = 0,
  PS_SLOG_KERNEL_PROMISES,
  PS_SLOG_KP_UNRESOLVED,
  PS_SLOG_CLIST_ENTRIES,
  PS_SLOG_PROMISE_QUEUES_LENGTH,
  PS_SLOG_RUN_QUEUE_LENGTH,
  PS_SLOG_VATS,
  PS_SLOG_NCOUNTERS
};
extern const char *const ps_slog_counter_names[PS_SLOG_NCOUNTERS];

enum { PS_SLOG_CLIST_IMPORT = 1, PS_SLOG_CLIST_EXPORT, PS_SLOG_CLIST_DROP };

/* which members were found */
enum {
  PS_SR_TIME = 1u << 0,
  PS_SR_SECONDS = 1u << 1,
  PS_SR_REPLAY = 1u << 2,
  PS_SR_VAT = 1u << 3,
  PS_SR_HEIGHT = 1u << 4,
  PS_SR_COMPUTE = 1u << 5,
  PS_SR_RSS = 1u << 6,
  PS_SR_HEAP_USED = 1u << 7,
  PS_SR_SNAPSHOT_SIZE = 1u << 8,
  PS_SR_NAME = 1u << 9,
  PS_SR_KIND = 1u << 10, /* deliver: kd[0] was read */
};

#define PS_SLOG_VAT_MAX 48
#define PS_SLOG_NAME_MAX 128

typedef struct ps_slog_rec {
  ps_slog_type type;
  ps_slog_era era;
  unsigned has; /* PS_SR_* */
  double time;
  double seconds;
  int replay;
  int routing;    /* crank-finish: crankType "routing" */
  int boyd;       /* deliver: kd[0] is "bringOutYourDead" */
  int clist_mode; /* PS_SLOG_CLIST_* or 0 */
  int64_t height;
  double compute; /* deliver-result dr[2].compute */
  double rss, heap_used, snapshot_size;
  unsigned counters_has; /* bit i: counters[i] */
  double counters[PS_SLOG_NCOUNTERS];
  char vat[PS_SLOG_VAT_MAX];
  char name[PS_SLOG_NAME_MAX];
} ps_slog_rec;

int ps_slog_scan(const char *head, size_t head_len, const char *tail, size_t tail_len,
                 int truncated, int want_time, ps_slog_rec *out, const char **why);

#endif
