/*
 * fuzz_lp.c: the line-protocol parser and encoder. Besides not crashing,
 * normalisation must be idempotent: a normalised line parses back to the
 * same line, or the encoder and parser disagree about escaping.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "influx/lp_parse.h"
#include "influx/numfmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const ps_tag extra[] = {{"host", "fuzz"}, {"a b", "c,d"}};
  ps_buf once, twice;
  ps_buf_init(&once, 0);
  ps_buf_init(&twice, 0);
  const char *why = NULL;
  int rc = ps_lp_parse_line(&once, (const char *)data, size, extra, 2, &why);
  if (rc == 0) {
    if (once.len == 0 || once.data[once.len - 1] != '\n')
      abort();
    rc = ps_lp_parse_line(&twice, once.data, once.len - 1, NULL, 0, &why);
    if (rc != 0 || twice.len != once.len ||
        memcmp(once.data, twice.data, once.len) != 0)
      abort();
  } else if (rc < 0 && !why) {
    abort(); /* every refusal has a reason */
  }
  char num[40];
  if (size >= 8) {
    double v;
    memcpy(&v, data, sizeof v);
    if (v == v && v - v == 0) {
      ps_fmt_double(v, num);
      if (strtod(num, NULL) != v)
        abort();
    }
  }
  ps_buf_free(&once);
  ps_buf_free(&twice);
  return 0;
}
