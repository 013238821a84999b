/*
 * fuzz_alert_state: what the alerting stage reads back from the state file
 * (its "alerts" section: the outbox, the throttle, the ledger, the
 * sources' silences and the health) on arbitrary bytes.
 *
 * The section can be damaged like the rest of the file; reading it must
 * never crash or leak, must skip what it cannot use, and what it kept must
 * save and read back to the same text (the writer and the reader agree, so
 * an event waiting for delivery survives any number of restarts).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "alert/decided.h"
#include "alert/outbox.h"
#include "alert/throttle.h"
#include "judging/alerting_clock.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[3] = {"exec", "webhook", "influxdb"};

static char *outbox_text(const ps_outbox *o) {
  cJSON *j = ps_outbox_to_cjson(o);
  char *t = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *root = cJSON_ParseWithLength((const char *)data, size);
  if (!root)
    return 0;
  const cJSON *box = cJSON_GetObjectItemCaseSensitive(root, "outbox");
  ps_outbox a, b;
  ps_outbox_init(&a, names, 3, 0);
  ps_outbox_from_cjson(&a, box ? box : root, 0, NULL);
  ps_outbox_init(&b, names, 3, 0);
  char *t1 = outbox_text(&a);
  cJSON *again = t1 ? cJSON_Parse(t1) : NULL;
  size_t skipped = 0;
  ps_outbox_from_cjson(&b, again, 0, &skipped);
  char *t2 = outbox_text(&b);
  if (skipped || a.n != b.n || !t1 || !t2 || strcmp(t1, t2) != 0)
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
  ps_alert_throttle_from_cjson(&t, cJSON_GetObjectItemCaseSensitive(root, "throttle"));
  ps_alert_throttle_from_cjson(&t, root);
  ps_alert_throttle_prune(&t, 0, 300);
  ps_alert_throttle_free(&t);

  ps_alert_decided l;
  ps_alert_decided_init(&l);
  ps_alert_decided_from_cjson(&l, cJSON_GetObjectItemCaseSensitive(root, "seen"));
  ps_alert_decided_from_cjson(&l, root);
  for (size_t i = 0; i < l.n; i++)
    if (!ps_alert_decided_has(&l, l.v[i].id))
      abort();
  ps_alert_decided_free(&l);

  /* Read without a loop: reading touches neither the timer nor the configuration. */
  pl_alert_clock clock;
  memset(&clock, 0, sizeof clock);
  pl_alert_clock_from_cjson(&clock, root);
  pl_alert_clock_from_cjson(&clock, root); /* a source read twice is kept once */
  pl_alert_clock_free(&clock);
  cJSON_Delete(root);
  return 0;
}
