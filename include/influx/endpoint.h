/*
 * influx/endpoint: where and how to talk to the configured InfluxDB (or
 * compatible) server. Both the blocking client (influx/client.h) and the
 * sink (influx/sink.h) build their URLs and curl handles here, so that
 * `perfship check` proves what the sink will do.
 *
 * Contract
 * - The base URL is influxdb.url without trailing slashes, or
 *   PS_INFLUX_DEFAULT_URL (core/config.h) when unset.
 * - ps_influx_write_url(): v1 `/write?precision=n&db=DB[&rp=RP]`, v2
 *   `/api/v2/write?precision=ns&org=ORG&bucket=BUCKET`. Precision is always
 *   nanoseconds, spelled per API. ps_influx_query_url(): `/query?epoch=ns`
 *   plus, when `with_db`, `&db=DB[&rp=RP]` (v1) or, for v2, `&db=BUCKET`
 *   (the v1-compatible /query of 2.x finds a bucket through its DBRP
 *   mapping by that name) and for a bucket of the form `DB/RP` (1.8's v2
 *   API) `&db=DB&rp=RP`. Every value is percent-encoded. Both append to
 *   `url`: 0 or -ENOMEM.
 * - ps_influx_headers_init(): the request headers (the content type,
 *   "Expect:" so curl does not wait for a 100-continue, Content-Encoding
 *   when `gzip`, and for v2 "Authorization: Token ..."). The token line is
 *   held in the struct; ps_influx_headers_free() wipes it.
 * - ps_influx_easy_setup(): net/http_easy.h's options from the
 *   configuration (ps_influx_timeouts(), TLS verification and CA file),
 *   the headers, and for v1 with a username HTTP Basic auth (never u/p in
 *   a URL, which servers and proxies log). Method and body are the caller's. 0 or -EINVAL.
 * - Nothing returned or written here ever holds the password or the token,
 *   except the easy handle's options and the header list themselves.
 *   ps_influx_redact() replaces either one by "***" in server text;
 *   ps_influx_answer_text() gives a server answer as one redacted line.
 */
#ifndef PS_INFLUX_ENDPOINT_H
#define PS_INFLUX_ENDPOINT_H

#include <stddef.h>

#include <curl/curl.h>

#include "core/buf.h"
#include "core/config.h"
#include "net/http_easy.h"

/* What the sink and the blocking calls keep of an answer: InfluxDB 1.x
 * names every unparsable line of a write, so it can be long. */
#define PS_INFLUX_ANSWER_LIMIT (1024 * 1024)

#define PS_INFLUX_CONTENT_LP "text/plain; charset=utf-8"
#define PS_INFLUX_CONTENT_FORM "application/x-www-form-urlencoded"

/* The base URL and its length without trailing slashes. */
const char *ps_influx_base_url(const ps_config *cfg, size_t *len);

int ps_influx_write_url(const ps_config *cfg, ps_buf *url);
int ps_influx_query_url(const ps_config *cfg, int with_db, ps_buf *url);

typedef struct ps_influx_headers {
  struct curl_slist *list;
  ps_buf token_line;
} ps_influx_headers;

int ps_influx_headers_init(ps_influx_headers *h, const ps_config *cfg,
                           const char *content_type, int gzip);
void ps_influx_headers_free(ps_influx_headers *h);

/* The timeouts of every request to the server, in ms: influxdb.timeout_ms
 * (10 s when unset) for the whole request, and at most 10 s of it to
 * connect. */
void ps_influx_timeouts(const ps_config *cfg, long *total_ms, long *connect_ms);

int ps_influx_easy_setup(CURL *e, const ps_config *cfg, const char *url,
                         const ps_influx_headers *h, ps_http_answer *answer,
                         char *errbuf);

/* The head of a request on the agent's own connection (net/http_conn.h),
 * ending in "Content-Length: " for the caller to finish: the request
 * line, Host, the lines of `h` (curl's "Name:" lines, which only remove a
 * header of curl's, are left out), and for v1 with a username the Basic
 * auth ps_influx_easy_setup() has curl send. It holds the credentials:
 * ps_influx_head_free() wipes it. 0 or -ENOMEM. */
int ps_influx_request_head(const ps_config *cfg, const ps_influx_headers *h, const char *method,
                           const char *authority, const char *path, ps_buf *out);
void ps_influx_head_free(ps_buf *head);

/* Appends `text` to `out` with every occurrence of the configured password
 * and token replaced by "***", so server answers can be shown safely. */
void ps_influx_redact(const ps_config *cfg, const char *text, size_t len, ps_buf *out);

/* A server answer as one line for a message: the "error" member when the
 * body is InfluxDB's JSON (or that of its first result), else the body,
 * trailing newlines cut; redacted like ps_influx_redact. */
void ps_influx_answer_text(const ps_config *cfg, const char *body, size_t len,
                           ps_buf *out);

/* What to do about a failed TLS verification (curl result `curl_code`,
 * curl's error buffer `detail`): "" for any other failure. curl's own
 * text for it ("SSL peer certificate ... was not OK") says neither. */
const char *ps_influx_tls_hint(int curl_code, const char *detail);

#endif
