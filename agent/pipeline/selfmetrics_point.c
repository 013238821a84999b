/*
 * selfmetrics_point.c: the `perfship` point. See
 * include/pipeline/selfmetrics_point.h.
 *
 * Built as an ordinary ps_point and encoded by the one encoder, so the
 * agent's own data follows the same escaping and typing rules as the rest.
 */
#include "pipeline/selfmetrics_point.h"

#include <string.h>
#include <unistd.h>

#include "influx/lp_encode.h"

int ps_selfmetrics_encode(ps_buf *out, const ps_selfmetrics_counts *s, int64_t time_ns,
                        const ps_tag *extra, size_t nextra, const char **reason) {
  const struct {
    const char *key;
    uint64_t v;
  } f[] = {
      {"lines_read", s->lines_read},
      {"records_parsed", s->records_parsed},
      {"records_rejected", s->records_rejected},
      {"points_written", s->points_written},
      {"points_rejected", s->points_rejected},
      {"batches_sent", s->batches_sent},
      {"http_retries", s->http_retries},
      {"bytes_sent", s->bytes_sent},
      {"pending_points", s->pending_points},
      {"files_watched", s->files_watched},
      {"oldest_unacked_s", s->oldest_unacked_s},
      {"uptime_s", s->uptime_s},
      {"alerts_raised", s->alerts_raised},
      {"alerts_suppressed", s->alerts_suppressed},
      {"alerts_failed", s->alerts_failed},
      {"alerts_pending", s->alerts_pending},
  };
  ps_field fields[sizeof f / sizeof f[0]];
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    fields[i] = ps_field_int(f[i].key, f[i].v > INT64_MAX ? INT64_MAX : (int64_t)f[i].v);
  }
  int have_host = 0;
  for (size_t i = 0; i < nextra; i++)
    if (strcmp(extra[i].key, "host") == 0 && extra[i].value && extra[i].value[0])
      have_host = 1;
  char host[256] = "";
  ps_tag tag = {"host", host};
  if (!have_host && gethostname(host, sizeof host - 1) < 0)
    strcpy(host, "unknown");
  ps_point p = {
      .measurement = "perfship",
      .tags = &tag,
      .ntags = have_host ? 0 : 1,
      .fields = fields,
      .nfields = sizeof fields / sizeof fields[0],
      .time_ns = time_ns,
  };
  return ps_lp_encode(out, &p, extra, nextra, reason);
}
