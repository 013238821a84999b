/*
 * fuzz_loadgen: perf.jsonl lines through the loadgen parser, with an
 * emitter that refuses points now and then (-EAGAIN) so the resume paths
 * of small records and of the perf-finish cursor are fuzzed too. The
 * first input byte picks the refusal period (bits 0-2) and whether the
 * first line also comes as the head's first line, as the driver reads it
 * for open() (bit 3); the rest is split into lines.
 * Every point is checked against the encoder's contract cheaply (fields
 * present, keys non-empty) and encoded, so bad shapes surface as crashes.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/buf.h"
#include "formats/format.h"
#include "influx/lp_encode.h"
#include "runs/runs.h"

typedef struct fz {
  unsigned period;
  unsigned offered;
  ps_buf out;
} fz;

static int fz_point(void *ctx, const ps_point *p, const ps_origin *o) {
  (void)o;
  fz *f = ctx;
  if (f->period && ++f->offered % f->period == 0)
    return -EAGAIN;
  if (p->nfields == 0 || !p->measurement[0])
    __builtin_trap();
  const char *reason = NULL;
  ps_buf_reset(&f->out);
  (void)ps_lp_encode(&f->out, p, NULL, 0, &reason);
  return 0;
}

static void fz_reject(void *ctx, const ps_origin *o, const char *reason) {
  (void)ctx;
  (void)o;
  (void)reason;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  fz f = {.period = data[0] % 8};
  if (f.period == 1) /* refusing every point would never progress */
    f.period = 2;
  ps_buf_init(&f.out, 0);
  const char *s = (const char *)data + 1, *end = (const char *)data + size;
  ps_input_head head = {.path = "/nonexistent/daily-perf-0123456789ab/perf.jsonl",
                        .mtime_ns = 1600000000250000000LL};
  const char *first_nl = memchr(s, '\n', (size_t)(end - s));
  if ((data[0] & 8) && first_nl) {
    head.first_line = s;
    head.first_len = (size_t)(first_nl - s);
  }
  ps_parser *p = NULL;
  if (ps_format_loadgen.open(&p, NULL, &head, NULL) != 0)
    return 0;
  ps_emitter em = {fz_point, fz_reject, &f, {"fuzz", 0}};
  while (s < end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
    em.origin.line++;
    int rc, guard = 0;
    while ((rc = ps_format_loadgen.line(p, s, n, &em)) == -EAGAIN &&
           ++guard < 1000000) {
    }
    s += n + 1;
  }
  /* the facts of what was read survive a JSON round trip */
  ps_buf js;
  ps_buf_init(&js, 0);
  ps_run_facts back;
  if (ps_run_facts_to_json(ps_format_loadgen.run_facts(p), &js) == 0 &&
      ps_run_facts_from_json(js.data, &back) != 0)
    __builtin_trap();
  ps_buf_free(&js);
  ps_format_loadgen.free(p);
  ps_buf_free(&f.out);
  return 0;
}
