/*
 * fuzz_slogs_state: what the slog reader reads back from the state file
 * (its "slogs" section: the stages read to their end and the finished
 * cycles of each run folder's stages) on arbitrary bytes.
 *
 * Reading it must never crash or leak, must skip what it cannot use, and
 * what it kept must save and read back to the same text: a stage read to
 * its end stays unread and its cycles stay counted over any number of
 * restarts (docs/loadgen.md "Slogs"). What is kept stays within the cap of
 * cycles per folder.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "pipeline/slogs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
const char *__ubsan_default_options(void);

/* A number from the file cast to an int it does not fit is a finding. */
const char *__ubsan_default_options(void) { return "halt_on_error=1:print_stacktrace=1"; }

static uv_loop_t loop;
static pl_shared sh;

static int no_encode(void *ctx, ps_pbatch *b, const ps_point *p, const ps_origin *o,
                     const char **reason) {
  (void)ctx, (void)b, (void)p, (void)o, (void)reason;
  abort(); /* reading a state section reads no slog */
}

static int no_send(void *ctx, ps_pbatch *b, void (*on_done)(void *, int), void *arg) {
  (void)ctx, (void)b, (void)on_done, (void)arg;
  abort();
}

static void reader_init(pl_slogs *t) {
  pl_aux_out out = {no_encode, no_send, NULL};
  pl_slogs_init(t, &sh, &out, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (uv_loop_init(&loop) != 0)
    abort();
  sh.loop = &loop;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text)
    abort();
  memcpy(text, data, size);
  text[size] = '\0';
  pl_slogs a, b;
  reader_init(&a);
  pl_slogs_from_json(&a, text);
  free(text);
  char *t1 = pl_slogs_to_json(&a);
  if (!t1)
    abort();
  reader_init(&b);
  pl_slogs_from_json(&b, t1);
  char *t2 = pl_slogs_to_json(&b);
  if (!t2 || strcmp(t1, t2) != 0) {
    fprintf(stderr, "saved:     %s\nread back: %s\n", t1, t2 ? t2 : "(null)");
    abort();
  }
  free(t1);
  free(t2);
  pl_slogs_close(&a);
  pl_slogs_close(&b);
  uv_run(&loop, UV_RUN_NOWAIT); /* the idle handles' close */
  pl_slogs_free(&a);
  pl_slogs_free(&b);
  return 0;
}
