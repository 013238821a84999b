/*
 * fuzz_rb_answer.c: the read-back layer's answer reader
 * (agent/readback/answer.c), which every read of perfship goes through.
 *
 * Input: the text of an answer (tests/fuzz/corpus/rb_answer/ holds real
 * 1.6.7 answers of the report's and the history's statements, and two of
 * them one after another, as a chunked answer comes).
 * Properties: any text is read without a crash or a leak; the row walk
 * and the walk of each series' last row end; every row handed out has a
 * list of columns and a list of values; each typed cell is what it says (a
 * string, a finite number or NAN, a boolean or -1); a row's time is 0 or
 * within what InfluxDB stores.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "readback/answer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_row(const ps_rb_row *r) {
  if (!cJSON_IsArray(r->columns) || !cJSON_IsArray(r->values))
    abort();
  const cJSON *c;
  cJSON_ArrayForEach(c, r->columns) {
    if (!cJSON_IsString(c))
      continue;
    double n = ps_rb_num(r, c->valuestring);
    if (!isnan(n) && !isfinite(n))
      abort();
    int b = ps_rb_bool(r, c->valuestring);
    if (b < -1 || b > 1)
      abort();
    const char *t = ps_rb_tag(r, c->valuestring);
    if (t && !t[0])
      abort();
  }
  int64_t t = ps_rb_time_ns(r);
  if (t > (int64_t)4.6e18 || t < -(int64_t)4.6e18)
    abort();
  (void)ps_rb_time_us(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ps_rb_answer a;
  if (ps_rb_answer_parse(&a, (const char *)data, size) == 0) {
    (void)ps_rb_answer_whole(&a);
    (void)ps_rb_answer_error(&a);
    for (const ps_rb_row *r; (r = ps_rb_answer_next(&a));)
      check_row(r);
  }
  ps_rb_answer_free(&a);
  if (ps_rb_answer_parse(&a, (const char *)data, size) == 0)
    for (const ps_rb_row *r; (r = ps_rb_answer_next_series(&a));)
      check_row(r);
  ps_rb_answer_free(&a);
  return 0;
}
