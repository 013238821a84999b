/*
 * sink_driver: feeds a line-protocol file through the HTTP sink, for the
 * integration tests (tests/integration/test_sink.py) and for trying the sink
 * by hand against a server.
 *
 *   sink_driver [options] FILE.lp
 *     -c FILE          load a perfship configuration (its influxdb part);
 *                      the options below override it
 *     --url URL --api v1|v2 --db DB --rp RP --org ORG --bucket BUCKET
 *     --user USER      v1 Basic auth; the password comes from PERFSHIP_PASSWORD
 *                      and the v2 token from PERFSHIP_TOKEN, never from argv
 *     --gzip auto|on|off --timeout-ms N --ca-file FILE --insecure
 *     --batch N        lines per batch (default 5000)
 *     --close-after-ms N  close the sink after N ms even if batches are open
 *                      (their done callbacks then report -ECANCELED)
 *     --close-after-batches N  close the sink from inside the Nth done
 *                      callback
 *
 * Every batch is submitted at once; the loop runs until each is done. Output
 * on stdout: one "REJECT FILE:LINE reason" per line the server refused, then
 * one JSON object with the sink's counters, the number of batches cancelled
 * and the result of uv_loop_close(). Exit 0 when the loop closed cleanly.
 *
 * DESIGN: origins are FILE:LINE of the input, so a test can check that the
 * sink reports exactly the lines it planted. The configuration is a static
 * so that its strings stay reachable for leak checkers whichever config
 * module is linked.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uv.h>

#include "core/config.h"
#include "core/log.h"
#include "formats/format.h"
#include "influx/sink.h"

static ps_config cfg;
static size_t batches_total, batches_done, batches_cancelled;
static long close_after_batches = -1;
static size_t rejected_reported, rejected_counted;
static ps_sink *sink;
static uv_timer_t close_timer;
static int close_timer_used;

static void set_str(char **field, const char *v) {
  free(*field);
  *field = v ? strdup(v) : NULL;
  if (v && !*field) {
    fprintf(stderr, "sink_driver: out of memory\n");
    exit(1);
  }
}

static void on_reject(ps_sink *s, const ps_origin *o, const char *line,
                      size_t len, const char *reason) {
  (void)s;
  (void)line;
  (void)len;
  rejected_reported++;
  printf("REJECT %s:%" PRIu64 " %s\n", o->file ? o->file : "?", o->line,
         reason);
}

static void on_closed(void *arg) { (void)arg; }

static void on_close_timer_closed(uv_handle_t *h) { (void)h; }

static ps_sink_stats final_stats;
static int closing;

static void close_everything(void) {
  if (closing)
    return;
  closing = 1;
  /* The sink is freed once closed: keep its counters. */
  final_stats = *ps_sink_get_stats(sink);
  if (close_timer_used && !uv_is_closing((uv_handle_t *)&close_timer))
    uv_close((uv_handle_t *)&close_timer, on_close_timer_closed);
  ps_sink_close(sink, on_closed, NULL);
}

static void on_done(ps_sink *s, ps_batch *b, int status, size_t rejected) {
  (void)s;
  batches_done++;
  rejected_counted += rejected;
  if (status == -ECANCELED)
    batches_cancelled++;
  else if (status)
    fprintf(stderr, "sink_driver: batch done with %s\n", strerror(-status));
  ps_batch_free(b);
  free(b);
  if (batches_done == batches_total ||
      (long)batches_done == close_after_batches)
    close_everything(); /* from inside the callback, as a pipeline may */
}

static void on_close_timer(uv_timer_t *t) {
  (void)t;
  close_everything();
}

static int read_file(const char *path, char **data, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return -errno;
  ps_buf b;
  ps_buf_init(&b, 0);
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    if (ps_buf_append(&b, chunk, n)) {
      fclose(f);
      ps_buf_free(&b);
      return -ENOMEM;
    }
  fclose(f);
  *data = b.data;
  *len = b.len;
  return 0;
}

static void usage(void) {
  fprintf(stderr,
          "usage: sink_driver [-c FILE] [--url URL] [--api v1|v2] [--db DB] "
          "[--rp RP] [--org ORG] [--bucket B] [--user U] [--gzip auto|on|off] "
          "[--timeout-ms N] [--ca-file F] [--insecure] [--batch N] "
          "[--close-after-ms N] [--close-after-batches N] FILE.lp\n");
  exit(64);
}

int main(int argc, char **argv) {
  const char *input = NULL, *config_file = NULL;
  long batch_lines = 5000, close_after = -1;
  ps_config_defaults(&cfg);
  /* The built-in defaults (perfship.cfg(5)), in case the linked config module
   * leaves them empty. */
  if (!cfg.influxdb.api)
    cfg.influxdb.api = PS_API_V1;
  if (!cfg.influxdb.timeout_ms)
    cfg.influxdb.timeout_ms = 10000;
  cfg.influxdb.tls_verify = 1;
  /* The file first, so that options given next to it override it. */
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "-c"))
      config_file = argv[i + 1];
  if (config_file) {
    ps_buf err;
    ps_buf_init(&err, 0);
    if (ps_config_load(&cfg, config_file, ps_format_source_rules, &err) ||
        ps_config_load_secrets(&cfg, &err)) {
      fprintf(stderr, "sink_driver: %s\n", err.data ? err.data : "bad config");
      ps_buf_free(&err);
      return 78;
    }
    ps_buf_free(&err);
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define OPT(name) (!strcmp(a, name) && v && (i++, 1))
    if (OPT("-c"))
      ; /* loaded above */
    else if (OPT("--url"))
      set_str(&cfg.influxdb.url, v);
    else if (OPT("--api"))
      cfg.influxdb.api = !strcmp(v, "v2") ? PS_API_V2 : PS_API_V1;
    else if (OPT("--db"))
      set_str(&cfg.influxdb.database, v);
    else if (OPT("--rp"))
      set_str(&cfg.influxdb.retention_policy, v);
    else if (OPT("--org"))
      set_str(&cfg.influxdb.org, v);
    else if (OPT("--bucket"))
      set_str(&cfg.influxdb.bucket, v);
    else if (OPT("--user"))
      set_str(&cfg.influxdb.username, v);
    else if (OPT("--gzip"))
      cfg.influxdb.gzip = !strcmp(v, "on")    ? PS_GZIP_ON
                          : !strcmp(v, "off") ? PS_GZIP_OFF
                                              : PS_GZIP_AUTO;
    else if (OPT("--timeout-ms"))
      cfg.influxdb.timeout_ms = atol(v);
    else if (OPT("--ca-file"))
      set_str(&cfg.influxdb.tls_ca_file, v);
    else if (OPT("--batch"))
      batch_lines = atol(v);
    else if (OPT("--close-after-batches"))
      close_after_batches = atol(v);
    else if (OPT("--close-after-ms"))
      close_after = atol(v);
    else if (!strcmp(a, "--insecure"))
      cfg.influxdb.tls_verify = 0;
    else if (a[0] == '-' || input)
      usage();
    else
      input = a;
#undef OPT
  }
  if (!input || batch_lines <= 0)
    usage();
  if (getenv("PERFSHIP_TOKEN"))
    set_str(&cfg.influxdb.token, getenv("PERFSHIP_TOKEN"));
  if (getenv("PERFSHIP_PASSWORD"))
    set_str(&cfg.influxdb.password, getenv("PERFSHIP_PASSWORD"));
  if (getenv("PERFSHIP_DEBUG"))
    ps_log_set_level(PS_LOG_DEBUG);

  char *data;
  size_t len;
  int rc = read_file(input, &data, &len);
  if (rc) {
    fprintf(stderr, "sink_driver: %s: %s\n", input, strerror(-rc));
    return 66;
  }

  uv_loop_t loop;
  if (uv_loop_init(&loop))
    return 1;
  rc = ps_sink_init(&sink, &loop, &cfg, on_done, on_reject, NULL);
  if (rc) {
    fprintf(stderr, "sink_driver: ps_sink_init: %s\n", strerror(-rc));
    return 1;
  }

  ps_batch *b = NULL;
  uint64_t lineno = 0;
  for (size_t pos = 0; pos < len;) {
    const char *nl = memchr(data + pos, '\n', len - pos);
    size_t end = nl ? (size_t)(nl - data) + 1 : len;
    lineno++;
    size_t l = end - pos;
    if (l > 1 || (l == 1 && data[pos] != '\n')) {
      if (!b) {
        b = malloc(sizeof *b);
        if (!b)
          return 1;
        ps_batch_init(b);
      }
      ps_origin o = {input, lineno};
      if (ps_batch_add_line_origin(b, b->body.len, &o) ||
          ps_buf_append(&b->body, data + pos, l) ||
          (data[end - 1] != '\n' && ps_buf_putc(&b->body, '\n')))
        return 1;
      if (b->npoints == (size_t)batch_lines) {
        if ((rc = ps_sink_submit(sink, b)))
          return fprintf(stderr, "submit: %s\n", strerror(-rc)), 1;
        batches_total++;
        b = NULL;
      }
    }
    pos = end;
  }
  if (b) {
    if ((rc = ps_sink_submit(sink, b)))
      return fprintf(stderr, "submit: %s\n", strerror(-rc)), 1;
    batches_total++;
  }
  free(data);
  if (close_after >= 0) {
    uv_timer_init(&loop, &close_timer);
    close_timer_used = 1;
    uv_timer_start(&close_timer, on_close_timer, (uint64_t)close_after, 0);
  }
  if (!batches_total)
    close_everything();

  uv_run(&loop, UV_RUN_DEFAULT);
  int lc = uv_loop_close(&loop);
  const ps_sink_stats *st = &final_stats;
  printf("{\"batches\": %zu, \"batches_done\": %zu, \"batches_cancelled\": "
         "%zu, \"rejected_reported\": %zu, \"rejected_counted\": %zu, "
         "\"batches_sent\": %" PRIu64 ", \"points_written\": %" PRIu64
         ", \"points_rejected\": %" PRIu64 ", \"http_retries\": %" PRIu64
         ", \"bytes_sent\": %" PRIu64 ", \"unreachable_since_ms\": %" PRIu64
         ", \"loop_close\": %d}\n",
         batches_total, batches_done, batches_cancelled, rejected_reported,
         rejected_counted, st->batches_sent, st->points_written,
         st->points_rejected, st->http_retries, st->bytes_sent,
         st->unreachable_since_ms, lc);
  ps_config_free(&cfg);
  return lc == 0 ? 0 : 1;
}
