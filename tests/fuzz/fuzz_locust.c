/*
 * fuzz_locust.c: libFuzzer target for the locust parser. The first byte
 * picks the file kind: stats or failures (the rest is one document, fed
 * with -EAGAIN on every fourth point to fuzz the resume cursor), or stats
 * history (the rest is written to the file, so open() reads its header,
 * then fed line by line as the tailer does).
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
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char paths[3][64];
static fuzz_refusal refusal;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  static const char *const names[3] = {"f_stats.csv", "f_failures.csv",
                                       "f_stats_history.csv"};
  char dir[] = "/tmp/fuzz-locust-XXXXXX";
  if (!mkdtemp(dir))
    abort();
  for (int i = 0; i < 3; i++) {
    snprintf(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
    FILE *f = fopen(paths[i], "w");
    if (!f)
      abort();
    fclose(f);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  int kind = data[0] % 3;
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  const char *path = paths[kind];
  if (kind == 2) {
    fuzz_write_file(path, data + 1, len);
  }
  ps_parser *p = NULL;
  ps_buf err;
  ps_buf_init(&err, 0);
  int rc = ps_format_locust.open(&p, NULL, path, &err);
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
