/*
 * influx/http.c: the write URL and the batch container, shared by the sink
 * and the one-shot commands (check, mark). See include/influx/sink.h. The blocking
 * POST lives in influx/sink.c, next to the sink, so both set up their curl
 * handles (headers, auth, TLS, timeouts) with the same code.
 *
 * DESIGN: precision is always nanoseconds and is spelled per API, because
 * InfluxDB 1.x silently reads an unknown precision ("ns" is fine, but the v2
 * spelling "us" is not) as nanoseconds. v1 credentials go as HTTP Basic auth
 * rather than u/p query parameters so they never appear in a URL that might
 * be logged; v2 sends "Authorization: Token" (influx/sink.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "influx/sink.h"

static int append_escaped(ps_buf *url, CURL *curl, const char *s) {
  char *e = curl_easy_escape(curl, s, 0);
  if (!e)
    return -ENOMEM;
  int rc = ps_buf_puts(url, e);
  curl_free(e);
  return rc;
}

int ps_influx_write_url(const ps_config *cfg, ps_buf *url) {
  CURL *curl = curl_easy_init();
  if (!curl)
    return -ENOMEM;
  const char *base = cfg->influxdb.url ? cfg->influxdb.url : "http://127.0.0.1:8086";
  size_t blen = strlen(base);
  while (blen && base[blen - 1] == '/')
    blen--;
  int rc = ps_buf_append(url, base, blen);
  if (!rc && cfg->influxdb.api == PS_API_V2) {
    rc = ps_buf_puts(url, "/api/v2/write?precision=ns&org=");
    if (!rc)
      rc = append_escaped(url, curl, cfg->influxdb.org ? cfg->influxdb.org : "");
    if (!rc)
      rc = ps_buf_puts(url, "&bucket=");
    if (!rc)
      rc = append_escaped(url, curl, cfg->influxdb.bucket ? cfg->influxdb.bucket : "");
  } else if (!rc) {
    rc = ps_buf_puts(url, "/write?precision=n&db=");
    if (!rc)
      rc = append_escaped(url, curl, cfg->influxdb.database ? cfg->influxdb.database : "");
    if (!rc && cfg->influxdb.retention_policy && cfg->influxdb.retention_policy[0]) {
      rc = ps_buf_puts(url, "&rp=");
      if (!rc)
        rc = append_escaped(url, curl, cfg->influxdb.retention_policy);
    }
  }
  curl_easy_cleanup(curl);
  return rc;
}

void ps_batch_init(ps_batch *b) {
  memset(b, 0, sizeof *b);
  ps_buf_init(&b->body, 0);
}

int ps_batch_add_line_origin(ps_batch *b, size_t offset, const ps_origin *o) {
  if (b->npoints == b->lines_cap) {
    size_t cap = b->lines_cap ? b->lines_cap * 2 : 64;
    ps_batch_line *n = realloc(b->lines, cap * sizeof *n);
    if (!n)
      return -ENOMEM;
    b->lines = n;
    b->lines_cap = cap;
  }
  b->lines[b->npoints].offset = offset;
  b->lines[b->npoints].origin = *o;
  b->npoints++;
  return 0;
}

void ps_batch_free(ps_batch *b) {
  if (!b)
    return;
  ps_buf_free(&b->body);
  free(b->lines);
  b->lines = NULL;
  b->npoints = b->lines_cap = 0;
}
