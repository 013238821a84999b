/*
 * fuzz_benchmarker.c: libFuzzer target for the benchmarker report reader
 * (formats/benchmarker*.c over formats/json_stream.c). The input is a
 * report; its first byte chooses the piece size the stream gets it in, so
 * tokens cut at every place are fuzzed. The emitter refuses every third
 * point with -EAGAIN so the resumed emission is fuzzed as well.
 * Seeds: tests/fuzz/corpus/benchmarker/ (a generated report, cut and whole).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/format.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t piece = 1 + data[0] % 64;
  data++;
  size--;
  /* the parser never looks at the file: the head is all it gets */
  ps_input_head head = {.path = "/nonexistent/fuzz-config/report.json"};
  ps_parser *p = NULL;
  ps_buf err;
  ps_buf_init(&err, 0);
  if (ps_format_benchmarker.open(&p, NULL, &head, &err))
    abort();
  ps_buf_free(&err);
  fuzz_refusal refusal = {.period = 3};
  ps_emitter em = fuzz_refusing_emitter(&refusal);
  for (size_t i = 0; i < size; i += piece)
    if (ps_format_benchmarker.stream(p, (const char *)data + i, size - i < piece ? size - i : piece,
                                     0, &em))
      abort();
  int rc, rounds = 0;
  while ((rc = ps_format_benchmarker.stream(p, NULL, 0, 1, &em)) == -EAGAIN)
    if (++rounds > 1000000)
      abort();
  if (rc)
    abort();
  ps_format_benchmarker.free(p);
  return 0;
}
