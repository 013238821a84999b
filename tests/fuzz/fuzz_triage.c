/*
 * fuzz_triage.c: the two readers of triage decisions
 * (agent/verdict/triage.c, agent/readback/triage.c): a triage_file's text
 * and the server's answer to the statement that reads `perfship_triage`
 * back.
 *
 * Input: a byte choosing the reader (even: the file, odd: the answer),
 * then the text (tests/fuzz/corpus/triage/ holds a file and an answer).
 * Properties: any input is read without a crash or a leak; the file
 * reader reports exactly the lines it did not keep, each once, with a
 * line number inside the text; ids are unique in the set (the first of a
 * repeated id stays) and each is found by its index, before and after the
 * set is sorted by time; every decision kept answers the questions of the
 * module without a crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "readback/triage.h"
#include "verdict/triage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct seen {
  size_t lines, bad, last;
} seen;

static void on_bad(void *ctx, const char *name, size_t line, const char *why) {
  seen *s = ctx;
  if (!name || !why || !why[0] || line == 0 || line > s->lines || line <= s->last)
    abort();
  s->last = line;
  s->bad++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  ps_triage_set set;
  ps_triage_set_init(&set);
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  if (data[0] % 2 == 0) {
    seen s = {1, 0, 0};
    for (size_t i = 0; i < len; i++)
      s.lines += text[i] == '\n';
    long nbad = ps_triage_parse_text(&set, "fuzz.triage", text, len, on_bad, &s);
    if (nbad < 0 || (size_t)nbad != s.bad)
      abort();
  } else if (ps_rb_triage_parse_answer(&set, text, len) < 0) {
    abort();
  }
  ps_triage_check_file(&set, NULL, NULL);
  for (int sorted = 0; sorted < 2; sorted++) {
    for (size_t i = 0; i < set.n; i++)
      if (ps_triage_find(&set, set.d[i].id) != &set.d[i])
        abort();
    if (!sorted && ps_triage_sort_by_time(&set) < 0)
      abort();
  }
  for (size_t i = 0; i < set.n; i++) {
    const ps_triage_decision *d = &set.d[i];
    if (!d->id || (unsigned)d->action >= PS_TRIAGE_NACTIONS)
      abort();
    ps_triage_ack_of(&set, d->host, d->run, NULL, d->metric);
    ps_triage_excluded(&set, d->host, d->run);
    ps_verdict_run r = {.name = d->run ? d->run : "", .host = d->host};
    if (ps_triage_baseline_start(&set, &r, 1) != 0)
      abort();
  }
  ps_triage_set_free(&set);
  return 0;
}
