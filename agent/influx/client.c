/*
 * influx/client.c: blocking calls to InfluxDB (include/influx/client.h).
 *
 * DESIGN
 * - Each call sets up a curl easy handle through influx/endpoint.c exactly
 *   as the sink sets up its own (timeouts, auth, TLS, no redirects), so
 *   what `check` proves is what the sink will do. These run in one-shot
 *   commands or on libuv's threadpool, never on the loop, so blocking is
 *   fine. The handle is one per thread, reset and kept between calls: a
 *   reset keeps its open connection, so a backfill's judging reads (319 in
 *   a six-run backfill, each a new handle) stop connecting for every
 *   statement (docs/benchmarks.md, "Backfill of six full-size runs").
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
#include <pthread.h>
#include <stdlib.h>
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
/* The threads' kept handles, in one list: the threadpool's threads outlive
 * the loop, and a handle only a thread-local pointer held would be lost to
 * valgrind and LeakSanitizer. main() frees them before curl's global
 * cleanup (ps_influx_client_release). */
#define KEPT_MAX 64
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static CURL *kept[KEPT_MAX];
static size_t nkept;

void ps_influx_client_release(void) {
  pthread_mutex_lock(&kept_lock);
  for (size_t i = 0; i < nkept; i++)
    curl_easy_cleanup(kept[i]);
  nkept = 0;
  pthread_mutex_unlock(&kept_lock);
}

/* A new handle this thread keeps, or NULL (out of memory, or more threads
 * than the list holds: that thread's calls then take a handle each). */
static CURL *kept_easy(void) {
  pthread_mutex_lock(&kept_lock);
  CURL *e = nkept < KEPT_MAX ? curl_easy_init() : NULL;
  if (e)
    kept[nkept++] = e;
  pthread_mutex_unlock(&kept_lock);
  return e;
}

static int perform(const ps_config *cfg, call *c) {
  c->status = 0;
  c->cc = CURLE_OK;
  c->detail[0] = '\0';
  ps_buf_init(&c->answer, 0);
  static _Thread_local CURL *thread_easy;
  if (!thread_easy)
    thread_easy = kept_easy();
  CURL *e = thread_easy ? thread_easy : curl_easy_init();
  if (!e)
    return -ENOMEM;
  ps_influx_headers h;
  int rc = ps_influx_headers_init(&h, cfg, c->content_type, 0);
  if (rc) {
    if (e != thread_easy)
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
  /* no pointer into this call may stay set (headers, answer, error
   * buffer); a reset drops every option and keeps the connection */
  if (e == thread_easy)
    curl_easy_reset(e);
  else
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

int ps_influx_query_post(const ps_config *cfg, const char *influxql, ps_influx_reply *r,
                         ps_buf *err) {
  memset(r, 0, sizeof *r);
  ps_buf_init(&r->body, 0);
  ps_buf_init(&r->url, 0);
  if (!influxql)
    return -EINVAL;
  ps_buf form;
  ps_buf_init(&form, 0);
  call c = {0};
  int rc = query_call(cfg, influxql, 1, PS_INFLUX_QUERY_MAX_BYTES, &c, &r->url, &form);
  if (rc)
    say_failed(&c, rc, err);
  r->status = c.status;
  r->truncated = c.truncated;
  r->body = c.answer;
  ps_buf_free(&form);
  return rc;
}

void ps_influx_reply_free(ps_influx_reply *r) {
  ps_buf_free(&r->body);
  ps_buf_free(&r->url);
}
