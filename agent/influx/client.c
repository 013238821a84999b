/*
 * influx/client.c: blocking calls to InfluxDB (include/influx/client.h).
 *
 * DESIGN
 * - One curl easy handle per call, set up by influx/endpoint.c exactly as
 *   the sink sets up its own (timeouts, auth, TLS, no redirects), so what
 *   `check` proves is what the sink will do. These run in one-shot commands
 *   or on libuv's threadpool, never on the loop, so blocking is fine.
 * - Queries go as a POST form: InfluxDB 1.x accepts every statement that
 *   way (GET only read-only ones), and the query text stays out of URLs,
 *   which servers and proxies log.
 * - VictoriaMetrics accepts /query but answers every query with the same
 *   canned SHOW DATABASES result (for Grafana's data source check). A
 *   SELECT is never answered with a "databases" series whose only column
 *   is "name" (InfluxDB's SELECT results always start with "time"), so that
 *   answer to anything but SHOW DATABASES means: no InfluxQL here.
 */
#include "influx/client.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "influx/endpoint.h"
#include "influx/influxql.h"

typedef struct call {
  const char *url;
  const char *content_type;
  const char *body; /* NULL: GET */
  size_t len;
  size_t limit;
  ps_buf answer;
  int truncated;
  ps_buf *version; /* X-Influxdb-Version, or NULL */
  long status;     /* 0: nothing answered */
  CURLcode cc;
  char detail[CURL_ERROR_SIZE];
} call;

static size_t on_header(char *p, size_t size, size_t n, void *userdata) {
  call *c = userdata;
  size_t len = size * n;
  static const char name[] = "X-Influxdb-Version:";
  if (c->version && len > sizeof name - 1 && strncasecmp(p, name, sizeof name - 1) == 0) {
    const char *v = p + sizeof name - 1;
    size_t vl = len - (sizeof name - 1);
    while (vl && (*v == ' ' || *v == '\t'))
      v++, vl--;
    while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
      vl--;
    ps_buf_reset(c->version);
    ps_buf_append(c->version, v, vl);
  }
  return len;
}

/* 0 when the server answered (any status), -EIO when it could not be
 * reached (c->cc, c->detail say why), or a setup error. */
static int perform(const ps_config *cfg, call *c) {
  c->status = 0;
  c->cc = CURLE_OK;
  c->detail[0] = '\0';
  ps_buf_init(&c->answer, 0);
  CURL *e = curl_easy_init();
  if (!e)
    return -ENOMEM;
  ps_influx_headers h;
  int rc = ps_influx_headers_init(&h, cfg, c->content_type, 0);
  if (rc) {
    curl_easy_cleanup(e);
    return rc;
  }
  ps_http_answer a = {&c->answer, c->limit ? c->limit : PS_INFLUX_ANSWER_LIMIT, 0};
  rc = ps_influx_easy_setup(e, cfg, c->url, &h, &a, c->detail);
  if (!rc && c->body &&
      (curl_easy_setopt(e, CURLOPT_POSTFIELDS, c->body) != CURLE_OK ||
       curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->len) != CURLE_OK))
    rc = -EINVAL;
  if (!rc && !c->body && curl_easy_setopt(e, CURLOPT_HTTPGET, 1L) != CURLE_OK)
    rc = -EINVAL;
  if (!rc && (curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK ||
              curl_easy_setopt(e, CURLOPT_HEADERDATA, c) != CURLE_OK))
    rc = -EINVAL;
  if (!rc) {
    c->cc = curl_easy_perform(e);
    if (c->cc == CURLE_OK)
      curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &c->status);
    else
      rc = -EIO;
  }
  c->truncated = a.truncated;
  curl_easy_cleanup(e);
  ps_influx_headers_free(&h);
  return rc;
}

static int url_len(const char *url) { return (int)strcspn(url, "?"); }

/* The sentence for perform()'s failure. */
static void say_failed(const call *c, int rc, ps_buf *err) {
  if (!err)
    return;
  const char *url = c->url ? c->url : "the server";
  if (rc != -EIO) {
    ps_buf_printf(err, "cannot set up a request to %.*s (%s)", url_len(url), url,
                  strerror(-rc));
    return;
  }
  ps_buf_printf(err, "cannot reach %.*s: %s%s%s", url_len(url), url,
                c->detail[0] ? c->detail : curl_easy_strerror(c->cc),
                ps_influx_tls_hint(c->cc, c->detail),
                c->cc == CURLE_PEER_FAILED_VERIFICATION
                    ? ""
                    : "; is the server running, and is influxdb.url right?");
}

static int refused(long status) { return status == 401 || status == 403; }

static int ok(long status) { return status >= 200 && status <= 299; }

int ps_influx_ping(const ps_config *cfg, ps_buf *version, ps_buf *err) {
  size_t blen;
  const char *base = ps_influx_base_url(cfg, &blen);
  ps_buf url;
  ps_buf_init(&url, 0);
  if (ps_buf_printf(&url, "%.*s/ping", (int)blen, base))
    return -ENOMEM;
  call c = {.url = url.data, .content_type = PS_INFLUX_CONTENT_LP, .version = version};
  int rc = perform(cfg, &c);
  if (rc)
    say_failed(&c, rc, err);
  else if (!ok(c.status)) {
    if (err) {
      ps_buf_printf(err, "%s answered HTTP %ld to GET /ping: ", url.data, c.status);
      ps_influx_answer_text(cfg, c.answer.data, c.answer.len, err);
      ps_buf_puts(err, "; is influxdb.url an InfluxDB server?");
    }
    rc = refused(c.status) ? -EACCES : -EPROTO;
  }
  ps_buf_free(&c.answer);
  ps_buf_free(&url);
  return rc;
}

int ps_influx_write_sync(const ps_config *cfg, const char *body, size_t len,
                         long *http_status, ps_buf *answer) {
  *http_status = 0;
  ps_buf url;
  ps_buf_init(&url, 0);
  if (ps_influx_write_url(cfg, &url))
    return -ENOMEM;
  call c = {.url = url.data, .content_type = PS_INFLUX_CONTENT_LP,
            .body = body ? body : "", .len = body ? len : 0};
  int rc = perform(cfg, &c);
  if (rc == -EIO && answer)
    ps_buf_printf(answer, "%s%s", c.detail[0] ? c.detail : curl_easy_strerror(c.cc),
                  ps_influx_tls_hint(c.cc, c.detail));
  else if (!rc && answer && c.answer.len)
    ps_buf_append(answer, c.answer.data, c.answer.len);
  *http_status = c.status;
  ps_buf_free(&c.answer);
  ps_buf_free(&url);
  return rc;
}

/* POSTs q=<influxql> to /query. */
static int query_call(const ps_config *cfg, const char *influxql, int with_db,
                      size_t limit, call *c, ps_buf *url, ps_buf *form) {
  char *q = curl_easy_escape(NULL, influxql, 0);
  if (!q)
    return -ENOMEM;
  int rc = ps_buf_printf(form, "q=%s", q);
  curl_free(q);
  if (!rc)
    rc = ps_influx_query_url(cfg, with_db, url);
  if (rc)
    return rc;
  c->url = url->data;
  c->content_type = PS_INFLUX_CONTENT_FORM;
  c->body = form->data;
  c->len = form->len;
  c->limit = limit;
  return perform(cfg, c);
}

/* The first "error" of the answer: top level (a query that did not parse)
 * or of any statement's result. */
static const cJSON *first_error(const cJSON *j) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
  if (e)
    return e;
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(j, "results");
  const cJSON *r;
  cJSON_ArrayForEach(r, results) {
    if ((e = cJSON_GetObjectItemCaseSensitive(r, "error")))
      return e;
  }
  return NULL;
}

int ps_influx_create_database(const ps_config *cfg, ps_buf *err) {
  const char *db = cfg->influxdb.database ? cfg->influxdb.database : "";
  ps_buf q, url, form;
  ps_buf_init(&q, 0);
  ps_buf_init(&url, 0);
  ps_buf_init(&form, 0);
  call c = {0};
  int rc = ps_buf_puts(&q, "CREATE DATABASE ");
  if (!rc)
    rc = ps_influxql_quote_ident(&q, db);
  if (rc) {
    if (err)
      ps_buf_printf(err, "cannot write CREATE DATABASE for \"%s\" (%s)", db, strerror(-rc));
    ps_buf_free(&q);
    return rc;
  }
  rc = query_call(cfg, q.data, 0, 0, &c, &url, &form);
  if (rc) {
    say_failed(&c, rc, err);
  } else {
    cJSON *j = c.answer.data ? cJSON_ParseWithLength(c.answer.data, c.answer.len) : NULL;
    int has_error = j && first_error(j);
    cJSON_Delete(j);
    if (!ok(c.status) || has_error) {
      rc = refused(c.status) ? -EACCES : -EPROTO;
      if (err) {
        /* 401 is the credentials themselves, 403 a user without the right:
         * two different fixes (docs/operations.md, InfluxDB 1.x) */
        const char *user = cfg->influxdb.username ? cfg->influxdb.username : "";
        if (c.status == 401)
          ps_buf_printf(err, "CREATE DATABASE \"%s\": wrong user or password for user "
                        "\"%s\" (HTTP 401: ", db, user);
        else if (c.status == 403)
          ps_buf_printf(err, "CREATE DATABASE \"%s\": the user \"%s\" lacks the right to "
                        "create databases (HTTP 403: ", db, user);
        else
          ps_buf_printf(err, "CREATE DATABASE \"%s\" failed (HTTP %ld: ", db, c.status);
        ps_influx_answer_text(cfg, c.answer.data, c.answer.len, err);
        if (c.status == 401)
          ps_buf_puts(err, "); check influxdb.username and the password in "
                           "influxdb.password_file");
        else if (rc == -EACCES)
          ps_buf_puts(err, "); that needs an admin user: create the database by hand "
                           "and set influxdb.create_database = false, or give "
                           "influxdb.username an admin user");
        else
          ps_buf_puts(err, "); create the database by hand");
      }
    }
  }
  ps_buf_free(&c.answer);
  ps_buf_free(&q);
  ps_buf_free(&url);
  ps_buf_free(&form);
  return rc;
}

/* Does the statement text start with SHOW DATABASES? */
static int is_show_databases(const char *q) {
  static const char *words[] = {"SHOW", "DATABASES"};
  for (int i = 0; i < 2; i++) {
    while (isspace((unsigned char)*q))
      q++;
    size_t n = strlen(words[i]);
    if (strncasecmp(q, words[i], n) || isalnum((unsigned char)q[n]) || q[n] == '_')
      return 0;
    q += n;
  }
  return 1;
}

/* VictoriaMetrics' canned answer (see the design comment at the top). */
static int canned_database_list(const cJSON *j) {
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(j, "results");
  const cJSON *series = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(results, 0),
                                                         "series");
  const cJSON *s0 = cJSON_GetArrayItem(series, 0);
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(s0, "name");
  const cJSON *cols = cJSON_GetObjectItemCaseSensitive(s0, "columns");
  const cJSON *c0 = cJSON_GetArrayItem(cols, 0);
  return cJSON_GetArraySize(results) == 1 && cJSON_GetArraySize(series) == 1 &&
         cJSON_IsString(name) && !strcmp(name->valuestring, "databases") &&
         cJSON_GetArraySize(cols) == 1 && cJSON_IsString(c0) &&
         !strcmp(c0->valuestring, "name");
}

static const char *what_to_check(const ps_config *cfg) {
  return cfg->influxdb.api == PS_API_V2
             ? "check influxdb.token_file (or PERFSHIP_TOKEN) and that the token may "
               "read the bucket"
             : "check influxdb.username and influxdb.password_file, and that the user "
               "may read the database";
}

/* The database a read names: influxdb.database (v1), or the bucket's
 * database part (v2; influx/endpoint.h reads "db/rp" as db and rp). */
static void read_database(const ps_config *cfg, ps_buf *out) {
  if (cfg->influxdb.api != PS_API_V2) {
    ps_buf_puts(out, cfg->influxdb.database ? cfg->influxdb.database : "");
    return;
  }
  const char *b = cfg->influxdb.bucket ? cfg->influxdb.bucket : "";
  ps_buf_append(out, b, strcspn(b, "/"));
}

/* "database not found" on a read: an error that names the database and
 * what to do, never "nothing yet" (docs/operations.md, "Reads"). For the
 * v2 API the usual cause is a bucket without a DBRP mapping: InfluxDB 2.x
 * answers InfluxQL only for mapped buckets, and the same words. */
static void say_not_found(const ps_config *cfg, const char *where, long status,
                          const char *text, ps_buf *err) {
  if (!err)
    return;
  ps_buf db;
  ps_buf_init(&db, 0);
  read_database(cfg, &db);
  const char *name = db.data ? db.data : "";
  ps_buf_printf(err, "database \"%s\" not found on %.*s (HTTP %ld: ", name, url_len(where),
                where, status);
  if (text)
    ps_influx_redact(cfg, text, strlen(text), err);
  if (cfg->influxdb.api == PS_API_V2) {
    const char *slash = cfg->influxdb.bucket ? strchr(cfg->influxdb.bucket, '/') : NULL;
    ps_buf_printf(err, "); InfluxQL reads need bucket \"%s\" mapped to a database and "
                  "retention policy: on InfluxDB 2.x `influx v1 dbrp create --db %s --rp "
                  "%s --bucket-id <bucket-id> --default`; on InfluxDB 1.8 write the bucket "
                  "as \"database/retention-policy\"",
                  cfg->influxdb.bucket ? cfg->influxdb.bucket : "", name,
                  slash && slash[1] ? slash + 1 : "autogen");
  } else {
    ps_buf_printf(err, "); check influxdb.database, or create it (CREATE DATABASE \"%s\")",
                  name);
  }
  ps_buf_free(&db);
}

int ps_influx_query(const ps_config *cfg, const char *influxql, ps_buf *json,
                    ps_buf *err) {
  if (!influxql || !json)
    return -EINVAL;
  ps_buf url, form;
  ps_buf_init(&url, 0);
  ps_buf_init(&form, 0);
  call c = {0};
  cJSON *j = NULL;
  int rc = query_call(cfg, influxql, 1, PS_INFLUX_QUERY_MAX_BYTES, &c, &url, &form);
  const char *where = url.data ? url.data : "";
  if (rc) {
    say_failed(&c, rc, err);
    goto out;
  }
  if (refused(c.status)) {
    rc = -EACCES;
    if (err) {
      ps_buf_printf(err, "%.*s refused the credentials (HTTP %ld: ", url_len(where), where,
                    c.status);
      ps_influx_answer_text(cfg, c.answer.data, c.answer.len, err);
      ps_buf_printf(err, "); %s", what_to_check(cfg));
    }
    goto out;
  }
  if (c.status == 404) {
    rc = -EOPNOTSUPP;
    if (err)
      ps_buf_printf(err, "%.*s answered HTTP 404: the server has no InfluxQL query "
                    "endpoint", url_len(where), where);
    goto out;
  }
  if (c.truncated) {
    rc = -E2BIG;
    if (err)
      ps_buf_printf(err, "the answer of %.*s is over %u MiB; ask for less (a shorter "
                    "time range, fewer fields, or GROUP BY time)", url_len(where), where,
                    PS_INFLUX_QUERY_MAX_BYTES / (1024 * 1024));
    goto out;
  }
  j = c.answer.data ? cJSON_ParseWithLength(c.answer.data, c.answer.len) : NULL;
  const cJSON *e = j ? first_error(j) : NULL;
  if (e || !ok(c.status) || !j) {
    const char *text = cJSON_IsString(e) ? e->valuestring : NULL;
    rc = text && strstr(text, "database not found") ? -ENOENT : -EPROTO;
    if (rc == -ENOENT) {
      say_not_found(cfg, where, c.status, text, err);
    } else if (err) {
      ps_buf_printf(err, "%.*s answered HTTP %ld: ", url_len(where), where, c.status);
      if (text)
        ps_influx_redact(cfg, text, strlen(text), err);
      else
        ps_influx_answer_text(cfg, c.answer.data, c.answer.len, err);
      if (!j && ok(c.status))
        ps_buf_puts(err, " (not JSON: is influxdb.url an InfluxDB server?)");
    }
    goto out;
  }
  if (canned_database_list(j) && !is_show_databases(influxql)) {
    rc = -EOPNOTSUPP;
    if (err)
      ps_buf_printf(err, "%.*s answered a query with a fixed database list: the server "
                    "(VictoriaMetrics?) has no InfluxQL", url_len(where), where);
    goto out;
  }
  rc = ps_buf_append(json, c.answer.data, c.answer.len);
out:
  cJSON_Delete(j);
  ps_buf_free(&c.answer);
  ps_buf_free(&url);
  ps_buf_free(&form);
  return rc;
}
