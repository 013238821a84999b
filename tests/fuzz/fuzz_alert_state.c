/*
 * fuzz_alert_state: what the alerting stage reads back from the state file
 * (its "alerts" section: the outbox, the throttle, the ledger, the
 * sources' silences and the health) on arbitrary bytes.
 *
 * The section can be damaged like the rest of the file; reading it must
 * never crash or leak, must skip what it cannot use, and what it kept must
 * save and read back to the same text (the writer and the reader agree, so
 * an event waiting for delivery survives any number of restarts).
 *
 * Whatever the input, what is kept stays within the caps the agent keeps
 * while running; once, before fuzzing, a hand-made section far over every
 * cap (the sizes an issue report measured as quadratic) must be read in
 * bounded CPU time and leave bounded memory behind.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include <cjson/cJSON.h>
#include <sanitizer/allocator_interface.h>

#include "core/buf.h"

#include "alert/decided.h"
#include "alert/outbox.h"
#include "alert/throttle.h"
#include "judging/alerting_clock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char *const names[3] = {"exec", "webhook", "influxdb"};

static char *outbox_text(const ps_outbox *o) {
  cJSON *j = ps_outbox_to_cjson(o);
  char *t = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  return t;
}

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void large(ps_buf *b, const char *name, size_t n, const char *fmt) {
  ps_buf_printf(b, "%s\"%s\":[", b->len > 1 ? "," : "", name);
  for (size_t i = 0; i < n; i++) {
    ps_buf_puts(b, i ? "," : "");
    ps_buf_printf(b, fmt, (unsigned long long)i);
  }
  ps_buf_puts(b, "]");
}

/* 100,000 outbox entries, 1 M throttle keys and seen ids, 80,000 sources. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ps_buf b;
  ps_buf_init(&b, 0);
  ps_buf_puts(&b, "{");
  large(&b, "outbox", 100000,
        "{\"alert\":{\"id\":\"%032llx\",\"event\":\"run_failed\",\"source\":\"l\","
        "\"run\":\"r\",\"text\":\"t\"},\"time_us\":\"1\",\"pending\":[\"exec\"]}");
  large(&b, "throttle", 1000000,
        "{\"event\":\"run_failed\",\"key\":\"k%llu\",\"last_ns\":1}");
  large(&b, "seen", 1000000, "{\"id\":\"%032llx\",\"at\":1}");
  large(&b, "sources", 80000, "{\"key\":\"loadgen:/srv/results/%llu\",\"since\":1}");
  ps_buf_puts(&b, "}");
  cJSON *root = cJSON_Parse(b.data);
  ps_buf_free(&b);
  if (!root)
    abort();
  size_t heap0 = __sanitizer_get_current_allocated_bytes();
  double t0 = cpu_s();
  ps_outbox box;
  ps_outbox_init(&box, names, 3, 0);
  ps_alert_recall rb = {0}, rt = {0}, rs = {0}, rc = {0};
  ps_outbox_from_cjson(&box, cJSON_GetObjectItemCaseSensitive(root, "outbox"), 0, &rb);
  ps_alert_throttle t;
  ps_alert_throttle_init(&t);
  ps_alert_throttle_from_cjson(&t, cJSON_GetObjectItemCaseSensitive(root, "throttle"), &rt);
  ps_alert_decided l;
  ps_alert_decided_init(&l);
  ps_alert_decided_from_cjson(&l, cJSON_GetObjectItemCaseSensitive(root, "seen"), &rs);
  jd_alerting_clock clock;
  memset(&clock, 0, sizeof clock);
  jd_alerting_clock_from_cjson(&clock, root, &rc);
  double took = cpu_s() - t0;
  char newest[PS_ALERT_ID_LEN + 1];
  snprintf(newest, sizeof newest, "%032llx", 999999ULL);
  size_t kept = __sanitizer_get_current_allocated_bytes() - heap0;
  /* what is kept: the caps' worth of entries, a few hundred KB; the read
   * itself a walk over each list (a quadratic one took seconds per list) */
  if (took > 1.0 || kept > 4u << 20 || box.n != PS_OUTBOX_MAX ||
      rb.over != 100000 - PS_OUTBOX_MAX || t.n != PS_ALERT_THROTTLE_MAX ||
      rt.over != 1000000 - PS_ALERT_THROTTLE_MAX || l.n != PS_ALERT_DECIDED_MAX ||
      rs.over != 1000000 - PS_ALERT_DECIDED_MAX || !ps_alert_decided_has(&l, newest) ||
      jd_alerting_clock_nsources(&clock) != JD_ALERTING_CLOCK_SOURCES_MAX ||
      rc.over != 80000 - JD_ALERTING_CLOCK_SOURCES_MAX) {
    fprintf(stderr, "large state section: %.3f s, %zu bytes kept, %zu/%zu/%zu/%zu entries\n", took,
            kept, box.n, t.n, l.n, jd_alerting_clock_nsources(&clock));
    abort();
  }
  ps_outbox_free(&box);
  ps_alert_throttle_free(&t);
  ps_alert_decided_free(&l);
  jd_alerting_clock_free(&clock);
  cJSON_Delete(root);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *root = cJSON_ParseWithLength((const char *)data, size);
  if (!root)
    return 0;
  const cJSON *box = cJSON_GetObjectItemCaseSensitive(root, "outbox");
  ps_outbox a, b;
  ps_outbox_init(&a, names, 3, 0);
  ps_outbox_from_cjson(&a, box ? box : root, 0, NULL);
  if (a.n > a.max)
    abort();
  ps_outbox_init(&b, names, 3, 0);
  char *t1 = outbox_text(&a);
  cJSON *again = t1 ? cJSON_Parse(t1) : NULL;
  ps_alert_recall r = {0};
  ps_outbox_from_cjson(&b, again, 0, &r);
  char *t2 = outbox_text(&b);
  if (r.bad || r.over || a.n != b.n || !t1 || !t2 || strcmp(t1, t2) != 0)
    abort();
  for (size_t i = 0; i < a.n; i++)
    if (!a.v[i]->pending || a.v[i]->ev.time_ns != b.v[i]->ev.time_ns)
      abort();
  free(t1);
  free(t2);
  cJSON_Delete(again);
  ps_outbox_free(&a);
  ps_outbox_free(&b);

  ps_alert_throttle t;
  ps_alert_throttle_init(&t);
  ps_alert_throttle_from_cjson(&t, cJSON_GetObjectItemCaseSensitive(root, "throttle"), NULL);
  ps_alert_throttle_from_cjson(&t, root, NULL);
  if (t.n > PS_ALERT_THROTTLE_MAX)
    abort();
  ps_alert_throttle_prune(&t, 0, 300);
  ps_alert_throttle_free(&t);

  ps_alert_decided l;
  ps_alert_decided_init(&l);
  ps_alert_decided_from_cjson(&l, cJSON_GetObjectItemCaseSensitive(root, "seen"), NULL);
  ps_alert_decided_from_cjson(&l, root, NULL);
  if (l.n > PS_ALERT_DECIDED_MAX)
    abort();
  for (size_t i = 0; i < l.n; i++)
    if (!ps_alert_decided_has(&l, l.v[i].id))
      abort();
  ps_alert_decided_free(&l);

  /* Read without a loop: reading touches neither the timer nor the configuration. */
  jd_alerting_clock clock;
  memset(&clock, 0, sizeof clock);
  jd_alerting_clock_from_cjson(&clock, root, NULL);
  jd_alerting_clock_from_cjson(&clock, root, NULL); /* a source read twice is kept once */
  if (jd_alerting_clock_nsources(&clock) > JD_ALERTING_CLOCK_SOURCES_MAX)
    abort();
  jd_alerting_clock_free(&clock);
  cJSON_Delete(root);
  return 0;
}
