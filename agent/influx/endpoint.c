/*
 * influx/endpoint.c: URLs, curl handle setup and server text for the
 * configured server (include/influx/endpoint.h).
 *
 * DESIGN
 * - Precision is always nanoseconds and is spelled per API, because
 *   InfluxDB 1.x silently reads an unknown precision (the v2 spelling "ns"
 *   happens to work, "us" does not) as nanoseconds.
 * - v1 credentials go as HTTP Basic auth rather than u/p query parameters,
 *   so they never appear in a URL that might be logged; v2 sends
 *   "Authorization: Token". docs/design-notes.md, "The HTTP answer matrix",
 *   records this departure from the original design.
 * - URL building needs curl_easy_escape, whose handle argument curl
 *   ignores since 7.82: NULL is passed, so building a URL allocates nothing
 *   but the result.
 */
#include "influx/endpoint.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

const char *ps_influx_base_url(const ps_config *cfg, size_t *len) {
  const char *base = cfg->influxdb.url ? cfg->influxdb.url : PS_INFLUX_DEFAULT_URL;
  size_t n = strlen(base);
  while (n && base[n - 1] == '/')
    n--;
  *len = n;
  return base;
}

/* &name=value, percent-encoded. */
static int put_param(ps_buf *url, const char *name, const char *value) {
  char *e = curl_easy_escape(NULL, value ? value : "", 0);
  if (!e)
    return -ENOMEM;
  int rc = ps_buf_printf(url, "&%s=%s", name, e);
  curl_free(e);
  return rc;
}

static int put_base(const ps_config *cfg, ps_buf *url, const char *path) {
  size_t blen;
  const char *base = ps_influx_base_url(cfg, &blen);
  int rc = ps_buf_append(url, base, blen);
  return rc ? rc : ps_buf_puts(url, path);
}

static int has(const char *s) { return s && s[0]; }

int ps_influx_write_url(const ps_config *cfg, ps_buf *url) {
  int rc;
  if (cfg->influxdb.api == PS_API_V2) {
    rc = put_base(cfg, url, "/api/v2/write?precision=ns");
    if (!rc)
      rc = put_param(url, "org", cfg->influxdb.org);
    if (!rc)
      rc = put_param(url, "bucket", cfg->influxdb.bucket);
    return rc;
  }
  rc = put_base(cfg, url, "/write?precision=n");
  if (!rc)
    rc = put_param(url, "db", cfg->influxdb.database);
  if (!rc && has(cfg->influxdb.retention_policy))
    rc = put_param(url, "rp", cfg->influxdb.retention_policy);
  return rc;
}

int ps_influx_query_url(const ps_config *cfg, int with_db, ps_buf *url) {
  int rc = put_base(cfg, url, "/query?epoch=ns");
  if (rc || !with_db)
    return rc;
  if (cfg->influxdb.api == PS_API_V2) {
    /* A bucket spelt "db/rp" (InfluxDB 1.8's v2 API names its database
     * and retention policy that way, docs/operations.md) is a database
     * and a retention policy to /query, which has no bucket names. */
    const char *b = cfg->influxdb.bucket ? cfg->influxdb.bucket : "";
    const char *slash = strchr(b, '/');
    if (!slash)
      return put_param(url, "db", b);
    char *db = strndup(b, (size_t)(slash - b));
    if (!db)
      return -ENOMEM;
    rc = put_param(url, "db", db);
    free(db);
    if (!rc && has(slash + 1))
      rc = put_param(url, "rp", slash + 1);
    return rc;
  }
  rc = put_param(url, "db", cfg->influxdb.database);
  if (!rc && has(cfg->influxdb.retention_policy))
    rc = put_param(url, "rp", cfg->influxdb.retention_policy);
  return rc;
}

static int append_header(struct curl_slist **list, const char *line) {
  struct curl_slist *n = curl_slist_append(*list, line);
  if (!n)
    return -ENOMEM;
  *list = n;
  return 0;
}

int ps_influx_headers_init(ps_influx_headers *h, const ps_config *cfg,
                           const char *content_type, int gzip) {
  h->list = NULL;
  ps_buf_init(&h->token_line, 0);
  ps_buf ct;
  ps_buf_init(&ct, 0);
  int rc = ps_buf_printf(&ct, "Content-Type: %s", content_type);
  if (!rc)
    rc = append_header(&h->list, ct.data);
  ps_buf_free(&ct);
  if (!rc)
    rc = append_header(&h->list, "Expect:");
  if (!rc && gzip)
    rc = append_header(&h->list, "Content-Encoding: gzip");
  if (!rc && cfg->influxdb.api == PS_API_V2 && has(cfg->influxdb.token)) {
    rc = ps_buf_printf(&h->token_line, "Authorization: Token %s", cfg->influxdb.token);
    if (!rc)
      rc = append_header(&h->list, h->token_line.data);
  }
  if (rc)
    ps_influx_headers_free(h);
  return rc;
}

void ps_influx_headers_free(ps_influx_headers *h) {
  curl_slist_free_all(h->list);
  h->list = NULL;
  /* curl copied the token line into the list, which it frees without
   * wiping; ours at least does not linger. */
  if (h->token_line.data)
    memset(h->token_line.data, 0, h->token_line.cap);
  ps_buf_free(&h->token_line);
}

void ps_influx_timeouts(const ps_config *cfg, long *total_ms, long *connect_ms) {
  *total_ms = (long)(cfg->influxdb.timeout_ms > 0 ? cfg->influxdb.timeout_ms : 10000);
  *connect_ms = *total_ms < 10000 ? *total_ms : 10000L;
}

int ps_influx_easy_setup(CURL *e, const ps_config *cfg, const char *url,
                         const ps_influx_headers *h, ps_http_answer *answer,
                         char *errbuf) {
  long timeout, connect;
  ps_influx_timeouts(cfg, &timeout, &connect);
  ps_http_easy_opts o = {
      url, timeout, connect, !cfg->influxdb.tls_verify, cfg->influxdb.tls_ca_file, answer, errbuf};
  int rc = ps_http_easy_setup(e, &o);
  if (rc)
    return rc;
  if (curl_easy_setopt(e, CURLOPT_HTTPHEADER, h ? h->list : NULL) != CURLE_OK)
    return -EINVAL;
  if (cfg->influxdb.api != PS_API_V2 && has(cfg->influxdb.username) &&
      (curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC) != CURLE_OK ||
       curl_easy_setopt(e, CURLOPT_USERNAME, cfg->influxdb.username) != CURLE_OK ||
       curl_easy_setopt(e, CURLOPT_PASSWORD,
                        cfg->influxdb.password ? cfg->influxdb.password : "") != CURLE_OK))
    return -EINVAL;
  return 0;
}

/* Standard base64 with padding, for the Basic auth line. */
static int put_base64(ps_buf *out, const unsigned char *p, size_t n) {
  static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  int rc = ps_buf_reserve(out, (n + 2) / 3 * 4);
  for (size_t i = 0; !rc && i < n; i += 3) {
    unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    char q[4] = {abc[v >> 18 & 63], abc[v >> 12 & 63], i + 1 < n ? abc[v >> 6 & 63] : '=',
                 i + 2 < n ? abc[v & 63] : '='};
    rc = ps_buf_append(out, q, 4);
  }
  return rc;
}

int ps_influx_request_head(const ps_config *cfg, const ps_influx_headers *h, const char *method,
                           const char *authority, const char *path, ps_buf *out) {
  /* Room first, so growing never leaves a copy of the secrets behind. */
  int rc = ps_buf_reserve(out, 4096);
  if (!rc)
    rc = ps_buf_printf(out, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, authority);
  for (const struct curl_slist *l = h ? h->list : NULL; !rc && l; l = l->next) {
    size_t n = strlen(l->data);
    if (n && l->data[n - 1] == ':')
      continue;
    rc = ps_buf_printf(out, "%s\r\n", l->data);
  }
  if (!rc && cfg->influxdb.api != PS_API_V2 && has(cfg->influxdb.username)) {
    ps_buf pair;
    ps_buf_init(&pair, 0);
    rc = ps_buf_reserve(&pair, 1024);
    if (!rc)
      rc = ps_buf_printf(&pair, "%s:%s", cfg->influxdb.username,
                         cfg->influxdb.password ? cfg->influxdb.password : "");
    if (!rc)
      rc = ps_buf_puts(out, "Authorization: Basic ");
    if (!rc)
      rc = put_base64(out, (const unsigned char *)pair.data, pair.len);
    if (!rc)
      rc = ps_buf_puts(out, "\r\n");
    ps_influx_head_free(&pair);
  }
  if (!rc)
    rc = ps_buf_puts(out, "Content-Length: ");
  if (rc)
    ps_influx_head_free(out);
  return rc;
}

void ps_influx_head_free(ps_buf *head) {
  if (head->data)
    memset(head->data, 0, head->cap);
  ps_buf_free(head);
}

void ps_influx_redact(const ps_config *cfg, const char *text, size_t len, ps_buf *out) {
  const char *secrets[2] = {cfg->influxdb.password, cfg->influxdb.token};
  size_t i = 0;
  while (i < len) {
    size_t hit = 0;
    for (int k = 0; k < 2; k++) {
      const char *s = secrets[k];
      size_t sl = s ? strlen(s) : 0;
      if (sl && sl <= len - i && memcmp(text + i, s, sl) == 0)
        hit = sl;
    }
    if (hit) {
      ps_buf_puts(out, "***");
      i += hit;
    } else {
      ps_buf_putc(out, text[i++]);
    }
  }
}

void ps_influx_answer_text(const ps_config *cfg, const char *body, size_t len,
                           ps_buf *out) {
  const char *t = body ? body : "";
  size_t n = body ? len : 0;
  cJSON *j = body ? cJSON_ParseWithLength(body, len) : NULL;
  const cJSON *e = j ? cJSON_GetObjectItemCaseSensitive(j, "error") : NULL;
  if (!e && j) {
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(j, "results");
    const cJSON *r0 = cJSON_IsArray(results) ? cJSON_GetArrayItem(results, 0) : NULL;
    e = r0 ? cJSON_GetObjectItemCaseSensitive(r0, "error") : NULL;
  }
  if (cJSON_IsString(e)) {
    t = e->valuestring;
    n = strlen(t);
  }
  while (n && (t[n - 1] == '\n' || t[n - 1] == '\r'))
    n--;
  ps_influx_redact(cfg, t, n, out);
  cJSON_Delete(j);
}

const char *ps_influx_tls_hint(int curl_code, const char *detail) {
  if (curl_code != CURLE_PEER_FAILED_VERIFICATION)
    return "";
  if (detail && strstr(detail, "subject name"))
    return "; the certificate was issued for another name: use that name in "
           "influxdb.url";
  return "; the server's certificate is not trusted: set influxdb.tls_ca_file to the CA "
         "that signed it";
}
