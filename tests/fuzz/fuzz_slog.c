/*
 * fuzz_slog: slog lines through the line scanner and the stage reducer,
 * as input/gzlines.h hands them over: whole, or as a kept head and tail
 * when the line is longer than the window.
 *
 * Input: byte 0 picks the window (bits 0-5: 1..64 bytes, or 64 KiB when
 * all set), whether the stream is complete at the end (bit 6), and the
 * emitter's refusal period is never used (the slog driver is
 * synchronous). The rest is split into lines. Invariants: the scanner's
 * answer is -1 with a reason, 0, or 1 with a known type; a record's vat ID
 * is a non-empty string of the safe alphabet (it becomes a tag); every
 * point keeps the emitter's contract (fuzz_common.h). A line cut by the
 * window that reads whole as a record is read from its head: a record of
 * the same type (unless the cut reached its type), and whatever the head
 * gives agrees with the whole line (docs/loadgen.md "Slogs").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/slog_reduce.h"
#include "formats/slog_scan.h"
#include "fuzz_common.h"
#include "input/gzlines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reasons a head cut before the end of its type may give. */
static int cut_in_type(const char *why) {
  return why && (strcmp(why, "not a JSON object") == 0 ||
                 strcmp(why, "type is not a string") == 0 || strncmp(why, "no \"type\"", 9) == 0);
}

/* `"key"` occurs once in the line: a member the cut line read is then the
 * one the whole line read (with a key twice, the whole line reads the
 * later one, which the cut may not reach). */
static int once(const char *s, size_t n, const char *key) {
  char q[40];
  size_t k = (size_t)snprintf(q, sizeof q, "\"%s\"", key);
  const char *a = memmem(s, n, q, k);
  return a && !memmem(a + 1, n - (size_t)(a + 1 - s), q, k);
}

static void same_as_whole(const char *s, size_t n, const ps_slog_rec *cut, int rc,
                          const char *why) {
  ps_slog_rec whole;
  const char *wwhy = NULL;
  if (ps_slog_scan(s, n, NULL, 0, 0, 1, &whole, &wwhy) != 1)
    return;
  if (rc != 1) {
    if (!cut_in_type(why))
      abort();
    return;
  }
  if (cut->type != whole.type || cut->era != whole.era)
    abort();
  if ((cut->has & PS_SR_VAT) && once(s, n, "vatID") && strcmp(cut->vat, whole.vat) != 0)
    abort();
  if ((cut->has & PS_SR_HEIGHT) && once(s, n, "blockHeight") && cut->height != whole.height)
    abort();
  if ((cut->has & PS_SR_NAME) && once(s, n, "name") && strcmp(cut->name, whole.name) != 0)
    abort();
  if ((cut->has & PS_SR_REPLAY) && once(s, n, "replay") && cut->replay != whole.replay)
    abort();
  if ((cut->has & whole.has & PS_SR_TIME) && !(cut->time == whole.time) &&
      !(cut->time != cut->time && whole.time != whole.time))
    abort();
  for (int c = 0; c < PS_SLOG_NCOUNTERS; c++)
    if ((cut->counters_has & (1u << c)) && once(s, n, "stats") &&
        once(s, n, ps_slog_counter_names[c]) && !(cut->counters[c] == whole.counters[c]))
      abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t window = (data[0] & 63) == 63 ? (size_t)64 << 10 : (size_t)(data[0] & 63) + 1;
  int complete = (data[0] >> 6) & 1;
  const char *s = (const char *)data + 1, *end = (const char *)data + size;
  fuzz_refusal ref = {0, 0};
  ps_emitter em = fuzz_refusing_emitter(&ref);
  ps_slog_reducer *r = NULL;
  if (ps_slog_reduce_new(&r, "run", "", "rev", "1") != 0)
    return 0;
  ps_slog_reduce_set_cycles(r, 3);
  while (s < end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
    em.origin.line++;
    size_t head = n > window ? window : n;
    const char *tail = NULL;
    size_t tail_len = 0;
    if (n > window) {
      tail_len = n < PS_GZLINES_TAIL ? n : PS_GZLINES_TAIL;
      tail = s + n - tail_len;
    }
    ps_slog_rec rec;
    const char *why = NULL;
    int rc = ps_slog_scan(s, head, tail, tail_len, n > window, 1, &rec, &why);
    if (rc < 0 && (!why || !*why))
      abort();
    if (rc == 1 && rec.type == PS_SLOG_OTHER)
      abort();
    if (rc >= 0 && (rec.has & PS_SR_VAT) &&
        (!rec.vat[0] || strcspn(rec.vat, " ,=\"\\\n") != strlen(rec.vat)))
      abort();
    if (n > window)
      same_as_whole(s, n, &rec, rc, why);
    if (ps_slog_reduce_line(r, s, head, tail, tail_len, n, &em) != 0)
      abort();
    s += n + (nl ? 1 : 0);
  }
  if (ps_slog_reduce_finish(r, complete, (uint64_t)size, &em) != 0)
    abort();
  ps_slog_reduce_free(r);
  return 0;
}
