/*
 * influx/admin.c: ping and CREATE DATABASE, one blocking request each. See
 * include/influx/admin.h.
 *
 * DESIGN: these run in one-shot commands, or on libuv's threadpool for the
 * agent (pipeline/service.c: never on the loop), so a plain curl easy handle is
 * enough. The handle is set up by the sink's helper (influx/easy.h) so that
 * `check` proves what the sink will do.
 */
#include "influx/admin.h"
#include "influx/easy.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

typedef struct answer {
  ps_buf body;
  ps_buf *version;
} answer;

static size_t on_header(char *p, size_t size, size_t n, void *userdata) {
  answer *a = userdata;
  size_t len = size * n;
  static const char name[] = "X-Influxdb-Version:";
  if (a->version && len > sizeof name - 1 && strncasecmp(p, name, sizeof name - 1) == 0) {
    const char *v = p + sizeof name - 1;
    size_t vl = len - (sizeof name - 1);
    while (vl && (*v == ' ' || *v == '\t'))
      v++, vl--;
    while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
      vl--;
    ps_buf_reset(a->version);
    ps_buf_append(a->version, v, vl);
  }
  return len;
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

static const char *base_url(const ps_config *cfg, size_t *len) {
  const char *base = cfg->influxdb.url ? cfg->influxdb.url : "http://127.0.0.1:8086";
  size_t n = strlen(base);
  while (n && base[n - 1] == '/')
    n--;
  *len = n;
  return base;
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

/* One request; *status is the HTTP status or 0 when nothing answered.
 * The handle is set up by the sink's own helper (timeouts, connect timeout,
 * auth, TLS, no redirects): what `check` proves is what the sink does. */
static int perform(const ps_config *cfg, const char *url, int post, long *status,
                   answer *a, ps_buf *err) {
  *status = 0;
  CURL *curl = curl_easy_init();
  if (!curl)
    return -ENOMEM;
  ps_buf auth;
  ps_buf_init(&auth, 0);
  struct curl_slist *hdrs = NULL;
  int rc = ps_influx_easy_setup(curl, cfg, url, post, &auth, &hdrs, &a->body);
  if (!rc && post &&
      (curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "") != CURLE_OK ||
       curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, 0L) != CURLE_OK))
    rc = -EINVAL;
  if (!rc && (curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK ||
              curl_easy_setopt(curl, CURLOPT_HEADERDATA, a) != CURLE_OK))
    rc = -EINVAL;
  if (rc && err)
    ps_buf_printf(err, "cannot set up a request to %.*s (%s)", (int)strcspn(url, "?"),
                  url, strerror(-rc));
  char detail[CURL_ERROR_SIZE] = "";
  if (!rc && curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, detail) != CURLE_OK)
    rc = -EINVAL;
  if (!rc) {
    CURLcode cc = curl_easy_perform(curl);
    if (cc == CURLE_OK)
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, status);
    else {
      rc = -EIO;
      if (err)
        ps_buf_printf(err, "cannot reach %.*s: %s%s%s", (int)strcspn(url, "?"), url,
                      detail[0] ? detail : curl_easy_strerror(cc),
                      ps_influx_tls_hint(cc, detail),
                      cc == CURLE_PEER_FAILED_VERIFICATION
                          ? ""
                          : "; is the server running, and is influxdb.url right?");
    }
  }
  curl_slist_free_all(hdrs);
  if (auth.data)
    memset(auth.data, 0, auth.cap);
  ps_buf_free(&auth);
  curl_easy_cleanup(curl);
  return rc;
}

/* The server's own words: the "error" member of a JSON answer, else the
 * body; scrubbed of secrets. */
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

int ps_influx_ping(const ps_config *cfg, ps_buf *version, ps_buf *err) {
  size_t blen;
  const char *base = base_url(cfg, &blen);
  ps_buf url;
  ps_buf_init(&url, 0);
  ps_buf_printf(&url, "%.*s/ping", (int)blen, base);
  answer a = {{0}, version};
  ps_buf_init(&a.body, 0);
  long status;
  int rc = perform(cfg, url.data, 0, &status, &a, err);
  if (!rc && (status < 200 || status > 299)) {
    if (err) {
      ps_buf_printf(err, "%s answered HTTP %ld to GET /ping: ", url.data, status);
      ps_influx_answer_text(cfg, a.body.data, a.body.len, err);
      ps_buf_puts(err, "; is influxdb.url an InfluxDB server?");
    }
    rc = (status == 401 || status == 403) ? -EACCES : -EPROTO;
  }
  ps_buf_free(&a.body);
  ps_buf_free(&url);
  return rc;
}

int ps_influx_create_database(const ps_config *cfg, ps_buf *err) {
  const char *db = cfg->influxdb.database ? cfg->influxdb.database : "";
  /* An InfluxQL identifier in double quotes: escape '"' and '\'. */
  ps_buf q;
  ps_buf_init(&q, 0);
  ps_buf_puts(&q, "CREATE DATABASE \"");
  for (const char *p = db; *p; p++) {
    if (*p == '"' || *p == '\\')
      ps_buf_putc(&q, '\\');
    ps_buf_putc(&q, *p);
  }
  ps_buf_putc(&q, '"');
  CURL *esc = curl_easy_init();
  char *qe = esc && q.data ? curl_easy_escape(esc, q.data, (int)q.len) : NULL;
  size_t blen;
  const char *base = base_url(cfg, &blen);
  ps_buf url;
  ps_buf_init(&url, 0);
  if (qe)
    ps_buf_printf(&url, "%.*s/query?q=%s", (int)blen, base, qe);
  curl_free(qe);
  if (esc)
    curl_easy_cleanup(esc);
  ps_buf_free(&q);
  if (!url.data)
    return -ENOMEM;

  answer a = {{0}, NULL};
  ps_buf_init(&a.body, 0);
  long status;
  int rc = perform(cfg, url.data, 1, &status, &a, err);
  if (!rc) {
    int has_error = 0;
    cJSON *j = a.body.data ? cJSON_ParseWithLength(a.body.data, a.body.len) : NULL;
    if (j) {
      const cJSON *results = cJSON_GetObjectItemCaseSensitive(j, "results");
      const cJSON *r0 = cJSON_IsArray(results) ? cJSON_GetArrayItem(results, 0) : NULL;
      has_error = cJSON_GetObjectItemCaseSensitive(j, "error") != NULL ||
                  (r0 && cJSON_GetObjectItemCaseSensitive(r0, "error") != NULL);
    }
    cJSON_Delete(j);
    if (status < 200 || status > 299 || has_error) {
      rc = (status == 401 || status == 403) ? -EACCES : -EPROTO;
      if (err) {
        ps_buf_printf(err, "CREATE DATABASE \"%s\" failed (HTTP %ld: ", db, status);
        ps_influx_answer_text(cfg, a.body.data, a.body.len, err);
        ps_buf_puts(err, rc == -EACCES
                             ? "); the user needs admin rights to create it; create "
                               "the database by hand or give influxdb.username an "
                               "admin user"
                             : "); create the database by hand");
      }
    }
  }
  ps_buf_free(&a.body);
  ps_buf_free(&url);
  return rc;
}
