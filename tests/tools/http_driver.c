/*
 * http_driver: runs requests through the agent's HTTP transport
 * (net/http_loop.h, net/http_request.h) on a libuv loop, for
 * tests/integration/test_http_loop.py.
 *
 *   http_driver SPEC.json
 *
 * SPEC: {"requests": [{"method": "POST", "url": "...", "body": "...",
 *                      "headers": ["Name: value", ...], "timeout_ms": N,
 *                      "connect_timeout_ms": N, "answer_limit": N}, ...],
 *        "close_after_ms": N,        (close the transport after N ms)
 *        "close_in_callback": true}  (close it from the first callback)
 * Every request is started at once. Output on stdout: one JSON object
 * {"start": [rc, ...], "results": [{"index", "status", "errno",
 * "http_status", "body", "truncated", "error", "ms"}, ...] in callback
 * order, "callbacks_after_close": N (callbacks that came after `closed`),
 * "closed": 0|1, "loop_close": rc}. Without a close in the spec the
 * transport is closed once every request is answered. Exit 0 when the loop
 * closed cleanly.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <uv.h>

#include "core/buf.h"
#include "net/http_request.h"

typedef struct slot {
  int index;
  uint64_t started;
  const char **headers;
} slot;

static uv_loop_t loop;
static ps_http_loop *hl;
static cJSON *results;
static int closed, callbacks_after_close, close_in_callback, outstanding;
static uv_timer_t close_timer;
static int close_timer_used;

static const char *errno_name(int rc) {
  switch (-rc) {
  case 0: return "";
  case ETIMEDOUT: return "ETIMEDOUT";
  case ECONNREFUSED: return "ECONNREFUSED";
  case ECANCELED: return "ECANCELED";
  case EIO: return "EIO";
  case EINVAL: return "EINVAL";
  default: return "other";
  }
}

static void on_closed(void *arg) {
  (void)arg;
  closed = 1;
}

static void close_transport(void) {
  if (close_timer_used) {
    uv_close((uv_handle_t *)&close_timer, NULL);
    close_timer_used = 0;
  }
  ps_http_loop_close(hl, on_closed, NULL);
}

static void on_result(const ps_http_result *r, void *arg) {
  slot *sl = arg;
  if (closed)
    callbacks_after_close++;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "index", sl->index);
  cJSON_AddNumberToObject(o, "status", r->status);
  cJSON_AddStringToObject(o, "errno", errno_name(r->status));
  cJSON_AddNumberToObject(o, "http_status", (double)r->http_status);
  /* the body as text; the test server sends ASCII */
  char *body = malloc(r->body_len + 1);
  if (body) {
    memcpy(body, r->body, r->body_len);
    body[r->body_len] = '\0';
    cJSON_AddStringToObject(o, "body", body);
    free(body);
  }
  cJSON_AddNumberToObject(o, "body_len", (double)r->body_len);
  cJSON_AddBoolToObject(o, "truncated", r->truncated);
  cJSON_AddStringToObject(o, "error", r->error);
  cJSON_AddNumberToObject(o, "ms", (double)(uv_now(&loop) - sl->started));
  cJSON_AddItemToArray(results, o);
  free(sl->headers);
  free(sl);
  outstanding--;
  if (close_in_callback || !outstanding) {
    /* An idle connection may keep a socket on the loop: close when done. */
    close_in_callback = 0;
    close_transport();
  }
}

static void on_close_timer(uv_timer_t *t) {
  (void)t;
  close_transport();
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  ps_buf b;
  ps_buf_init(&b, 0);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    if (ps_buf_append(&b, chunk, n))
      break;
  fclose(f);
  return b.data;
}

static long num(const cJSON *o, const char *key, long dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? (long)v->valuedouble : dflt;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: http_driver SPEC.json\n");
    return 64;
  }
  char *text = read_file(argv[1]);
  cJSON *spec = text ? cJSON_Parse(text) : NULL;
  free(text);
  if (!spec) {
    fprintf(stderr, "http_driver: %s: not a JSON spec\n", argv[1]);
    return 65;
  }
  if (curl_global_init(CURL_GLOBAL_DEFAULT) || uv_loop_init(&loop))
    return 70;
  int rc = ps_http_loop_init(&hl, &loop, 0);
  if (rc) {
    fprintf(stderr, "http_driver: ps_http_loop_init: %s\n", strerror(-rc));
    return 70;
  }
  results = cJSON_CreateArray();
  cJSON *starts = cJSON_CreateArray();
  close_in_callback = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "close_in_callback"));
  const cJSON *reqs = cJSON_GetObjectItemCaseSensitive(spec, "requests");
  const cJSON *r;
  int index = 0;
  cJSON_ArrayForEach(r, reqs) {
    const cJSON *hs = cJSON_GetObjectItemCaseSensitive(r, "headers");
    int nh = cJSON_GetArraySize(hs);
    slot *sl = calloc(1, sizeof *sl);
    if (!sl || !(sl->headers = calloc((size_t)nh + 1, sizeof *sl->headers)))
      return 70;
    for (int i = 0; i < nh; i++)
      sl->headers[i] = cJSON_GetArrayItem(hs, i)->valuestring;
    sl->index = index++;
    sl->started = uv_now(&loop);
    const char *body = str(r, "body");
    ps_http_request_opts o = {
        .method = str(r, "method"),
        .url = str(r, "url"),
        .headers = sl->headers,
        .body = body,
        .body_len = body ? strlen(body) : 0,
        .timeout_ms = num(r, "timeout_ms", 0),
        .connect_timeout_ms = num(r, "connect_timeout_ms", 0),
        .answer_limit = (size_t)num(r, "answer_limit", 0),
    };
    rc = ps_http_request(hl, &o, on_result, sl);
    cJSON_AddItemToArray(starts, cJSON_CreateNumber(rc));
    if (!rc)
      outstanding++;
    if (rc) {
      free(sl->headers);
      free(sl);
    }
  }
  long close_after = num(spec, "close_after_ms", -1);
  if (close_after >= 0) {
    uv_timer_init(&loop, &close_timer);
    close_timer_used = 1;
    uv_timer_start(&close_timer, on_close_timer, (uint64_t)close_after, 0);
  }
  if (!outstanding)
    close_transport();
  uv_run(&loop, UV_RUN_DEFAULT);
  int lc = uv_loop_close(&loop);
  cJSON *out = cJSON_CreateObject();
  cJSON_AddItemToObject(out, "start", starts);
  cJSON_AddItemToObject(out, "results", results);
  cJSON_AddNumberToObject(out, "callbacks_after_close", callbacks_after_close);
  cJSON_AddNumberToObject(out, "closed", closed);
  cJSON_AddNumberToObject(out, "loop_close", lc);
  char *o = cJSON_PrintUnformatted(out);
  printf("%s\n", o ? o : "{}");
  cJSON_free(o);
  cJSON_Delete(out);
  cJSON_Delete(spec);
  curl_global_cleanup();
  return lc == 0 ? 0 : 1;
}
