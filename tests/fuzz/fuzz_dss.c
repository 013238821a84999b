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
  char dir[] = "/tmp/fuzz-dss-XXXXXX";
  if (!mkdtemp(dir))
    abort();
  char path[64];
  snprintf(path, sizeof path, "%s/results.json", dir);
  FILE *f = fopen(path, "w");
  if (!f)
    abort();
  fclose(f);
  ps_buf err;
  ps_buf_init(&err, 0);
  if (ps_format_dss_bench.open(&parser, NULL, path, &err))
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
