/*
 * fuzz_dss.c: libFuzzer target for the dss-bench parser. The input is the
 * whole results.json document. The emitter refuses every third point with
 * -EAGAIN so the resume path (cached tree, unit cursor) is fuzzed as well.
 * Seeds: tests/fuzz/corpus/dss/ (the fixtures, including the truncated one).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static ps_parser *parser;
static unsigned long offered;

static int on_point(void *ctx, const ps_point *p, const ps_origin *o) {
  (void)ctx;
  (void)o;
  if (++offered % 3 == 0)
    return -EAGAIN;
  /* every string a parser hands over must be readable to its end */
  size_t sum = strlen(p->measurement);
  for (size_t i = 0; i < p->ntags; i++)
    sum += strlen(p->tags[i].key) + strlen(p->tags[i].value);
  for (size_t i = 0; i < p->nfields; i++) {
    sum += strlen(p->fields[i].key);
    if (p->fields[i].type == PS_F_STRING && p->fields[i].v.s.n)
      sum += (unsigned char)p->fields[i].v.s.p[p->fields[i].v.s.n - 1];
  }
  if (p->nfields == 0 || sum == 0)
    abort();
  return 0;
}

static void on_reject(void *ctx, const ps_origin *o, const char *reason) {
  (void)ctx;
  (void)o;
  if (!reason[0])
    abort();
}

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
  ps_emitter em = {on_point, on_reject, NULL, {"fuzz", 0}};
  int rc, rounds = 0;
  while ((rc = ps_format_dss_bench.document(parser, (const char *)data, size,
                                            &em)) == -EAGAIN)
    if (++rounds > 1000000)
      abort();
  if (rc)
    abort();
  return 0;
}
