/*
 * fuzz_jsonl.c: the generic JSONL format with a mapping that exercises
 * tags, declared types, flattening and the time key; every point it emits
 * goes through the encoder, whose output must parse back as line protocol.
 * Differential: a line our JSON reader accepts must also be valid JSON to
 * cJSON (ours is the stricter of the two, never the looser), except for the
 * NaN and Infinity tokens, which we take as "absent" on purpose.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "formats/format.h"
#include "influx/lp_encode.h"
#include "influx/lp_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_point(void *ctx, const ps_point *p, const ps_origin *o) {
  (void)o;
  ps_buf *out = ctx;
  const char *why = NULL;
  size_t before = out->len;
  if (ps_lp_encode(out, p, NULL, 0, &why) < 0) {
    if (!why || out->len != before)
      abort();
    return 0;
  }
  ps_buf check;
  ps_buf_init(&check, 0);
  if (ps_lp_parse_line(&check, out->data + before, out->len - before - 1, NULL,
                       0, &why) != 0 ||
      check.len != out->len - before ||
      memcmp(check.data, out->data + before, check.len) != 0)
    abort();
  ps_buf_free(&check);
  ps_buf_reset(out);
  return 0;
}

static int syntax_rejected;

static void on_reject(void *ctx, const ps_origin *o, const char *reason) {
  (void)ctx;
  (void)o;
  if (!reason || !*reason)
    abort();
  if (strstr(reason, "malformed JSON") || strstr(reason, "trailing text") ||
      strstr(reason, "not a JSON object"))
    syntax_rejected = 1;
}

static void cjson_must_accept(const char *q, size_t len) {
  size_t i = 0;
  while (i < len && (q[i] == ' ' || q[i] == '\t'))
    i++;
  if (i == len)
    return;
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(q, len, &end, 0);
  if (!root)
    abort();
  for (; end < q + len; end++)
    if (*end != ' ' && *end != '\t' && *end != '\r' && *end != '\n')
      abort();
  if (!cJSON_IsObject(root))
    abort();
  cJSON_Delete(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char *tags[] = {"t", "o.t", "n"};
  static ps_type_decl types[] = {{"i", PS_F_INT}, {"u", PS_F_UINT},
                                 {"s", PS_F_STRING}, {"b", PS_F_BOOL},
                                 {"f", PS_F_FLOAT}};
  ps_source_cfg src;
  memset(&src, 0, sizeof src);
  src.measurement = "m";
  src.tag_keys = tags;
  src.ntag_keys = 3;
  src.types = types;
  src.ntypes = 5;
  src.time_key = "ts";
  src.time_unit_exp = size ? -3 * (data[0] % 4) : 0;
  ps_parser *p = NULL;
  ps_buf err, out;
  ps_buf_init(&err, 0);
  ps_buf_init(&out, 0);
  ps_input_head head = {.path = "fuzz"};
  if (ps_format_jsonl.open(&p, &src, &head, &err) == 0) {
    ps_emitter em = {.point = on_point, .reject = on_reject, .ctx = &out,
                     .origin = {.file = "fuzz", .line = 1}};
    /* the whole input as lines, like the driver hands them */
    const char *q = (const char *)data, *end = q + size;
    while (q < end) {
      const char *nl = memchr(q, '\n', (size_t)(end - q));
      size_t len = nl ? (size_t)(nl - q) : (size_t)(end - q);
      syntax_rejected = 0;
      ps_format_jsonl.line(p, q, len, &em);
      /* NaN and Infinity are ours alone (Python writes them) */
      if (!syntax_rejected && !memmem(q, len, "NaN", 3) &&
          !memmem(q, len, "Infinity", 8))
        cjson_must_accept(q, len);
      q += len + (nl ? 1 : 0);
    }
    ps_format_jsonl.free(p);
  }
  ps_buf_free(&err);
  ps_buf_free(&out);
  return 0;
}
