/*
 * fuzz_locust.c: libFuzzer target for the locust parser. The first byte
 * picks the file kind: stats or failures (the rest is one document, fed
 * with -EAGAIN on every fourth point to fuzz the resume cursor), or stats
 * history (its first line is the head's first line, as the driver reads it
 * for open(), then every line is fed as the tailer does).
 * Seeds: tests/fuzz/corpus/locust/ (the fixtures with a kind byte in front).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/format.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static fuzz_refusal refusal;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  static const char *const paths[3] = {"/nonexistent/f_stats.csv",
                                       "/nonexistent/f_failures.csv",
                                       "/nonexistent/f_stats_history.csv"};
  int kind = data[0] % 3;
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  ps_input_head head = {.path = paths[kind], .mtime_ns = 1600000000250000000LL};
  const char *first_nl = memchr(text, '\n', len);
  if (kind == 2 && first_nl) {
    head.first_line = text;
    head.first_len = (size_t)(first_nl - text);
    if (head.first_len && text[head.first_len - 1] == '\r')
      head.first_len--;
  }
  ps_parser *p = NULL;
  ps_buf err;
  ps_buf_init(&err, 0);
  int rc = ps_format_locust.open(&p, NULL, &head, &err);
  ps_buf_free(&err);
  if (rc)
    return 0; /* a history file whose first line is no header */
  ps_emitter em = fuzz_refusing_emitter(&refusal);
  if (kind == 2) {
    refusal.period = 0;
    size_t pos = 0;
    while (pos < len) {
      const char *nl = memchr(text + pos, '\n', len - pos);
      size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
      size_t m = n;
      if (m && text[pos + m - 1] == '\r')
        m--;
      em.origin.line++;
      if (ps_format_locust.line(p, text + pos, m, &em))
        abort();
      pos += n + 1;
    }
  } else {
    refusal.period = 4;
    int rounds = 0;
    while ((rc = ps_format_locust.document(p, text, len, &em)) == -EAGAIN)
      if (++rounds > 1000000)
        abort();
    if (rc)
      abort();
  }
  ps_format_locust.free(p);
  return 0;
}
