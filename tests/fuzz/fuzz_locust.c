/*
 * fuzz_locust.c: libFuzzer target for the locust parser. The first byte
 * picks the file kind: stats or failures (the rest is one document, fed
 * with -EAGAIN on every fourth point to fuzz the resume cursor), or stats
 * history (the rest is written to the file, so open() reads its header,
 * then fed line by line as the tailer does).
 * Seeds: tests/fuzz/corpus/locust/ (the fixtures with a kind byte in front).
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

static char paths[3][64];
static unsigned long offered;
static int refuse;

static int on_point(void *ctx, const ps_point *p, const ps_origin *o) {
  (void)ctx;
  (void)o;
  if (refuse && ++offered % 4 == 0)
    return -EAGAIN;
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
    FILE *f = fopen(path, "wb");
    if (!f)
      abort();
    fwrite(text, 1, len, f);
    fclose(f);
  }
  ps_parser *p = NULL;
  ps_buf err;
  ps_buf_init(&err, 0);
  int rc = ps_format_locust.open(&p, NULL, path, &err);
  ps_buf_free(&err);
  if (rc)
    return 0; /* a history file whose first line is no header */
  ps_emitter em = {on_point, on_reject, NULL, {"fuzz", 0}};
  if (kind == 2) {
    refuse = 0;
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
    refuse = 1;
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
