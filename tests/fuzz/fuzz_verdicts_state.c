/*
 * fuzz_verdicts_state: what the verdict stage reads back from the state
 * file (its "verdicts" section: the ledger of judged series, the collector's
 * pending runs and DSS files, the slog stages held for their limit verdicts
 * and the triage decisions the saved verdicts were judged under) on
 * arbitrary bytes.
 *
 * The section can be damaged like the rest of the file; reading it must
 * never crash or leak, must skip what it cannot use, and what it kept must
 * save and read back to the same text (the writer and the reader agree, so
 * a run waiting to be judged survives any number of restarts unchanged).
 *
 * The stage is the agent's own: jd_verdicts_init() on a real loop with the
 * default configuration, as the judging face builds it. Reading sends
 * nothing (the send half aborts) and only arms the stage's timer, which is
 * never run: the stage is closed and the loop turned once for the close.
 *
 * Whatever the input, what is kept stays within the caps the agent keeps
 * while running; once, before fuzzing, a hand-made section over the caps is
 * read in bounded CPU time and keeps exactly the caps' worth.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uv.h>

#include "core/buf.h"
#include "core/config.h"
#include "judging/verdicts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
const char *__ubsan_default_options(void);

/* Undefined behaviour is a finding like a crash (a number from the file
 * cast to an int it does not fit), not a line in the log. */
const char *__ubsan_default_options(void) { return "halt_on_error=1:print_stacktrace=1"; }

static uv_loop_t loop;
static ps_config cfg;
static pl_shared sh;

static int no_encode(void *ctx, ps_pbatch *b, const ps_point *p, const ps_origin *o,
                     const char **reason) {
  (void)ctx;
  (void)b;
  (void)p;
  (void)o;
  (void)reason;
  abort(); /* reading a state section judges nothing */
}

static int no_send(void *ctx, ps_pbatch *b, void (*on_done)(void *, int), void *arg) {
  (void)ctx;
  (void)b;
  (void)on_done;
  (void)arg;
  abort();
}

static void stage_init(jd_verdicts *vd) {
  pl_aux_out out = {no_encode, no_send, NULL};
  if (jd_verdicts_init(vd, &sh, &cfg, &out, NULL) != 0)
    abort();
}

/* Every stage is closed before the loop turns: an open one's timer would
 * judge what it read. */
static void stages_free(jd_verdicts *a, jd_verdicts *b) {
  jd_verdicts_close(a);
  if (b)
    jd_verdicts_close(b);
  /* the timers' close, and the triage_file read the stage started on the
   * threadpool: it must answer into this input's stages, not the next's */
  uv_run(&loop, UV_RUN_DEFAULT);
  jd_verdicts_free(a);
  if (b)
    jd_verdicts_free(b);
}

/* What the stage keeps, against the caps the running agent keeps. */
static void check_caps(const jd_verdicts *vd) {
  if (vd->growth.nheld > JD_VERDICTS_GROWTH_HELD_MAX)
    abort();
  for (size_t i = 0; i < vd->ledger.nseries; i++) {
    const ps_ledger_series *s = &vd->ledger.series[i];
    if (s->nruns > PS_LEDGER_MAX_RUNS)
      abort();
    /* the judge reads a series in (start, name) order */
    for (size_t k = 1; k < s->nruns; k++)
      if (s->runs[k - 1].start_ns > s->runs[k].start_ns ||
          (s->runs[k - 1].start_ns == s->runs[k].start_ns &&
           strcmp(s->runs[k - 1].name, s->runs[k].name) > 0))
        abort();
  }
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 5,000 held slog stages and 3,000 runs in one series: the caps' worth
 * stays, read in one walk over each list. */
static void large(void) {
  ps_buf b;
  ps_buf_init(&b, 0);
  ps_buf_puts(&b, "{\"history\":[{\"source\":\"loadgen\",\"series\":\"nightly\","
                  "\"host\":\"bench-1\",\"runs\":[");
  for (unsigned i = 0; i < 3000; i++)
    ps_buf_printf(&b, "%s{\"host\":\"bench-1\",\"name\":\"run-%u\",\"start_ns\":\"%u\","
                      "\"status\":\"success\",\"backfill\":false,\"judged\":true,"
                      "\"values\":{\"cycleAvgDuration\":%u.5}}",
                  i ? "," : "", i, 1000u + i, i);
  ps_buf_puts(&b, "]}],\"growth\":[");
  for (unsigned i = 0; i < 5000; i++)
    ps_buf_printf(&b, "%s{\"run\":\"slog-%u\",\"series\":\"nightly\",\"stage\":1,"
                      "\"time\":\"%u\",\"growth\":[2,null,0.5]}",
                  i ? "," : "", i, i);
  ps_buf_puts(&b, "]}");
  jd_verdicts vd;
  stage_init(&vd);
  double t0 = cpu_s();
  jd_verdicts_from_json(&vd, b.data);
  double took = cpu_s() - t0;
  ps_buf_free(&b);
  check_caps(&vd);
  if (took > 2.0 || vd.growth.nheld != JD_VERDICTS_GROWTH_HELD_MAX || vd.ledger.nseries != 1 ||
      vd.ledger.series[0].nruns != PS_LEDGER_MAX_RUNS ||
      strcmp(vd.ledger.series[0].runs[0].name, "run-1000") != 0) {
    fprintf(stderr, "large verdicts section: %.3f s, %zu held stages, %zu series\n", took,
            vd.growth.nheld, vd.ledger.nseries);
    abort();
  }
  stages_free(&vd, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (uv_loop_init(&loop) != 0)
    abort();
  ps_config_defaults(&cfg);
  /* the agent's host from the global tags, not the machine's name */
  cfg.tags = calloc(1, sizeof *cfg.tags);
  if (!cfg.tags || !(cfg.tags[0].key = strdup("host")) ||
      !(cfg.tags[0].value = strdup("bench-1")))
    abort();
  cfg.ntags = 1;
  sh.loop = &loop;
  sh.cfg = &cfg;
  large();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text)
    abort();
  memcpy(text, data, size);
  text[size] = '\0';
  jd_verdicts a, b;
  stage_init(&a);
  jd_verdicts_from_json(&a, text);
  free(text);
  check_caps(&a);
  char *t1 = jd_verdicts_to_json(&a);
  if (!t1)
    abort();
  stage_init(&b);
  jd_verdicts_from_json(&b, t1);
  char *t2 = jd_verdicts_to_json(&b);
  if (!t2 || strcmp(t1, t2) != 0) {
    fprintf(stderr, "saved:   %s\nread back: %s\n", t1, t2 ? t2 : "(null)");
    abort();
  }
  free(t1);
  free(t2);
  stages_free(&a, &b);
  return 0;
}
