/*
 * fuzz_dss.c: libFuzzer target for the dss-bench parser. The input is the
 * whole results.json document. The emitter refuses every third point with
 * -EAGAIN so the resume path (cached tree, unit cursor) is fuzzed as well.
 * Seeds: tests/fuzz/corpus/dss/ (the fixtures, including the truncated one).
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

static ps_parser *parser;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  /* the parser never looks at the file: the head is all it gets */
  ps_input_head head = {.path = "/nonexistent/fuzz-run/results.json",
                        .mtime_ns = 1600000000250000000LL};
  ps_buf err;
  ps_buf_init(&err, 0);
  if (ps_format_dss_bench.open(&parser, NULL, &head, &err))
    abort();
  ps_buf_free(&err);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_refusal refusal = {.period = 3};
  ps_emitter em = fuzz_refusing_emitter(&refusal);
  int rc, rounds = 0;
  while ((rc = ps_format_dss_bench.document(parser, (const char *)data, size,
                                            &em)) == -EAGAIN)
    if (++rounds > 1000000)
      abort();
  if (rc)
    abort();
  return 0;
}
