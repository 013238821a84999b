/*
 * influx_http.c: the write URL, auth and a blocking one-shot POST, shared by
 * the sink and the one-shot commands (check, mark). See include/sink.h.
 *
 * DESIGN: precision is always nanoseconds and is spelled per API, because
 * InfluxDB 1.x silently reads an unknown precision ("ns" is fine, but the v2
 * spelling "us" is not) as nanoseconds. v1 credentials go as HTTP Basic auth
 * rather than u/p query parameters so they never appear in a URL that might
 * be logged; v2 sends "Authorization: Token".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "sink.h"

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

static size_t collect_answer(char *p, size_t size, size_t n, void *userdata) {
  ps_buf *answer = userdata;
  size_t len = size * n;
  if (answer && answer->len < 4096)
    ps_buf_append(answer, p, len < 4096 - answer->len ? len : 4096 - answer->len);
  return len;
}

int ps_influx_post_sync(const ps_config *cfg, const char *body, size_t len,
                        long *http_status, ps_buf *answer) {
  ps_buf url;
  ps_buf_init(&url, 0);
  int rc = ps_influx_write_url(cfg, &url);
  if (rc)
    return rc;
  CURL *curl = curl_easy_init();
  if (!curl) {
    ps_buf_free(&url);
    return -ENOMEM;
  }
  struct curl_slist *hdrs = NULL;
  hdrs = curl_slist_append(hdrs, "Content-Type: text/plain; charset=utf-8");
  ps_buf auth;
  ps_buf_init(&auth, 0);
  if (cfg->influxdb.api == PS_API_V2 && cfg->influxdb.token) {
    ps_buf_printf(&auth, "Authorization: Token %s", cfg->influxdb.token);
    hdrs = curl_slist_append(hdrs, auth.data);
  } else if (cfg->influxdb.api != PS_API_V2 && cfg->influxdb.username &&
             cfg->influxdb.username[0]) {
    curl_easy_setopt(curl, CURLOPT_USERNAME, cfg->influxdb.username);
    curl_easy_setopt(curl, CURLOPT_PASSWORD,
                     cfg->influxdb.password ? cfg->influxdb.password : "");
  }
  curl_easy_setopt(curl, CURLOPT_URL, url.data);
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body ? body : "");
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   (long)(cfg->influxdb.timeout_ms > 0 ? cfg->influxdb.timeout_ms : 10000));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect_answer);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, answer);
  if (cfg->influxdb.tls_ca_file && cfg->influxdb.tls_ca_file[0])
    curl_easy_setopt(curl, CURLOPT_CAINFO, cfg->influxdb.tls_ca_file);
  if (!cfg->influxdb.tls_verify) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  CURLcode cc = curl_easy_perform(curl);
  *http_status = 0;
  if (cc == CURLE_OK)
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, http_status);
  else if (answer)
    ps_buf_printf(answer, "%s", curl_easy_strerror(cc));
  curl_slist_free_all(hdrs);
  /* The header held the token: wipe it before freeing. */
  if (auth.data)
    memset(auth.data, 0, auth.len);
  ps_buf_free(&auth);
  curl_easy_cleanup(curl);
  ps_buf_free(&url);
  return cc == CURLE_OK ? 0 : -EIO;
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
