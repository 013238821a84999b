/*
 * influx/sink.c: ships batches to InfluxDB with libcurl's multi interface on
 * the libuv loop. See include/influx/sink.h for the contract and DESIGN.md
 * "Delivery" for the answer matrix.
 *
 * DESIGN
 * - A submitted batch is cut into "pieces" (a run of its lines). A batch
 *   starts as one piece; 413 and partial writes split pieces, and the batch
 *   is done when its last piece is stored or rejected. Resending any piece is
 *   harmless because every point carries its own timestamp: a point stored
 *   twice overwrites itself. That is what makes bisecting a partial write
 *   safe.
 * - A few transfers run at once (SINK_MAX_IN_FLIGHT), each on its own easy
 *   handle that lives as long as the sink; the multi handle keeps the
 *   connections alive between requests.
 * - Back-off is server-wide: a failure sets `resume_at`, and no piece starts
 *   before it. One uv timer wakes the dispatcher; nothing polls. A failed
 *   piece goes back to the head of the queue so order is roughly kept.
 * - curl on libuv follows curl's docs/examples/multi-uv.c with its gaps
 *   closed: poll errors become CURL_CSELECT_ERR, handles find their owner via
 *   ->data, finished transfers are always reaped, and every return is
 *   checked. A user callback may close the sink; teardown then waits until
 *   the code that called the callback has unwound (`depth`).
 * - Reading a 400: 1.x stores the good lines of a "partial write" and names
 *   every line it could not parse, so those are rejected at once; a type
 *   conflict hides the parse errors and names no line, but "dropped=N"
 *   says how many; 2.x stores nothing when a line does not parse. Whatever
 *   is not certain is resent, bisecting until single lines are refused.
 * - Counters: batches_sent counts batches acknowledged (done with 0),
 *   bytes_sent what went on the wire (compressed, resends included).
 * - gzip: InfluxDB 1.x checks max-body-size only against the *compressed*
 *   Content-Length, so the uncompressed body must itself stay below the
 *   server limit; the batcher's max_bytes (1 MiB) keeps it far below the
 *   25 MB default.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <zlib.h>

#include "influx/admin.h"
#include "core/log.h"
#include "influx/easy.h"
#include "influx/sink.h"

#define SINK_MAX_IN_FLIGHT 2
/* An answer longer than this is cut; 1.x names every unparsable line in its
 * answer, so it can be long. */
#define ANSWER_LIMIT (1024 * 1024)
#define BACKOFF_FIRST_MS 200
#define BACKOFF_MAX_MS 60000
/* Configuration errors (401/403/404, a missing retention policy) need a
 * human; retry slowly. */
#define CONFIG_BACKOFF_FIRST_MS 5000
#define RETRY_AFTER_MAX_S 600

typedef struct tracked tracked;

typedef struct piece {
  tracked *t;
  size_t l0, l1; /* lines [l0, l1) of the batch */
  struct piece *next;
} piece;

struct tracked {
  ps_batch *batch;
  size_t nlines;
  size_t *offsets; /* line starts when batch->lines is NULL */
  size_t open_pieces;
  size_t rejected;
  tracked *prev, *next;
};

typedef struct slot {
  CURL *easy;
  piece *p; /* NULL: idle */
  ps_buf answer;
  ps_buf gz;
  z_stream zs;
  bool zs_ready;
  char errbuf[CURL_ERROR_SIZE]; /* curl's own words: names the TLS problem */
} slot;

typedef struct sock_ctx {
  uv_poll_t poll;
  curl_socket_t fd;
  ps_sink *sink;
  bool closed; /* uv_close called; memory lives until its callback */
  struct sock_ctx *prev, *next;
} sock_ctx;

struct ps_sink {
  uv_loop_t *loop;
  CURLM *multi;
  uv_timer_t curl_timer;
  uv_timer_t retry_timer;
  ps_buf url;
  ps_buf auth_header;
  struct curl_slist *headers;
  bool gzip;
  ps_api api;
  slot slots[SINK_MAX_IN_FLIGHT];
  piece *queue_head, *queue_tail;
  tracked *batches;
  size_t nbatches;
  uint64_t resume_at;
  unsigned fail_streak;
  unsigned config_streak;
  uint64_t rng;
  ps_sink_stats stats;
  ps_sink_done_cb done;
  ps_sink_reject_cb on_reject;
  void *data;
  int depth;     /* nesting of our code that may call user callbacks */
  bool closing;  /* ps_sink_close was called */
  bool torn;     /* teardown has started */
  bool held;     /* ps_sink_hold: nothing starts until released */
  bool create_db; /* v1 with influxdb.create_database on */
  void (*missing_db)(ps_sink *s, void *data);
  int pending_closes;
  void (*closed)(void *arg);
  void *closed_arg;
  sock_ctx *socks;
};

static const char *MOD = "sink";

/* ---- easy handle setup, shared with the blocking helper ---------------- */

static int build_headers(const ps_config *cfg, bool gzip, ps_buf *auth,
                         struct curl_slist **out) {
  struct curl_slist *h = NULL, *n;
  /* POSTFIELDS would default to form-urlencoded; "Expect:" stops curl from
   * waiting for 100-continue on large bodies. */
  static const char *fixed[] = {"Content-Type: text/plain; charset=utf-8",
                                "Expect:"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
    if (!(n = curl_slist_append(h, fixed[i])))
      goto oom;
    h = n;
  }
  if (gzip) {
    if (!(n = curl_slist_append(h, "Content-Encoding: gzip")))
      goto oom;
    h = n;
  }
  if (cfg->influxdb.api == PS_API_V2 && cfg->influxdb.token &&
      cfg->influxdb.token[0]) {
    if (ps_buf_printf(auth, "Authorization: Token %s", cfg->influxdb.token))
      goto oom;
    if (!(n = curl_slist_append(h, auth->data)))
      goto oom;
    h = n;
  }
  *out = h;
  return 0;
oom:
  curl_slist_free_all(h);
  return -ENOMEM;
}

static void wipe_buf(ps_buf *b) {
  if (b->data)
    memset(b->data, 0, b->cap);
  ps_buf_free(b);
}

static size_t collect_answer(char *p, size_t size, size_t n, void *userdata) {
  ps_buf *answer = userdata;
  size_t len = size * n;
  if (answer && answer->len < ANSWER_LIMIT) {
    size_t room = ANSWER_LIMIT - answer->len;
    if (ps_buf_append(answer, p, len < room ? len : room))
      return len; /* out of memory: lose the text, keep the status */
  }
  return len;
}

#define SETOPT(e, opt, val)                                                    \
  do {                                                                         \
    if (curl_easy_setopt((e), (opt), (val)) != CURLE_OK)                       \
      return -EINVAL;                                                          \
  } while (0)

static int setup_easy(CURL *e, const ps_config *cfg, const char *url,
                      struct curl_slist *headers, ps_buf *answer) {
  long timeout = (long)(cfg->influxdb.timeout_ms > 0 ? cfg->influxdb.timeout_ms
                                                     : 10000);
  SETOPT(e, CURLOPT_URL, url);
  SETOPT(e, CURLOPT_POST, 1L);
  SETOPT(e, CURLOPT_HTTPHEADER, headers);
  SETOPT(e, CURLOPT_TIMEOUT_MS, timeout);
  SETOPT(e, CURLOPT_CONNECTTIMEOUT_MS, timeout < 10000 ? timeout : 10000L);
  SETOPT(e, CURLOPT_NOSIGNAL, 1L);
  SETOPT(e, CURLOPT_WRITEFUNCTION, collect_answer);
  SETOPT(e, CURLOPT_WRITEDATA, answer);
  SETOPT(e, CURLOPT_TCP_KEEPALIVE, 1L);
  /* Never follow a redirect: it could carry the credentials elsewhere. */
  SETOPT(e, CURLOPT_FOLLOWLOCATION, 0L);
  if (cfg->influxdb.api != PS_API_V2 && cfg->influxdb.username &&
      cfg->influxdb.username[0]) {
    SETOPT(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    SETOPT(e, CURLOPT_USERNAME, cfg->influxdb.username);
    SETOPT(e, CURLOPT_PASSWORD,
           cfg->influxdb.password ? cfg->influxdb.password : "");
  }
  if (cfg->influxdb.tls_ca_file && cfg->influxdb.tls_ca_file[0])
    SETOPT(e, CURLOPT_CAINFO, cfg->influxdb.tls_ca_file);
  if (!cfg->influxdb.tls_verify) {
    SETOPT(e, CURLOPT_SSL_VERIFYPEER, 0L);
    SETOPT(e, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  return 0;
}

int ps_influx_easy_setup(CURL *e, const ps_config *cfg, const char *url, int post,
                         ps_buf *auth, struct curl_slist **headers, ps_buf *answer) {
  *headers = NULL;
  int rc = build_headers(cfg, false, auth, headers);
  if (!rc)
    rc = setup_easy(e, cfg, url, *headers, answer);
  if (!rc && !post && curl_easy_setopt(e, CURLOPT_HTTPGET, 1L) != CURLE_OK)
    rc = -EINVAL;
  return rc;
}

int ps_influx_post_sync(const ps_config *cfg, const char *body, size_t len,
                        long *http_status, ps_buf *answer) {
  *http_status = 0;
  ps_buf url, auth;
  ps_buf_init(&url, 0);
  ps_buf_init(&auth, 0);
  struct curl_slist *hdrs = NULL;
  CURL *curl = NULL;
  int rc = ps_influx_write_url(cfg, &url);
  if (!rc)
    rc = build_headers(cfg, false, &auth, &hdrs);
  if (!rc && !(curl = curl_easy_init()))
    rc = -ENOMEM;
  if (!rc)
    rc = setup_easy(curl, cfg, url.data, hdrs, answer);
  if (!rc && (curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body ? body : "") ||
              curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                               (curl_off_t)len)))
    rc = -EINVAL;
  char detail[CURL_ERROR_SIZE] = "";
  if (!rc && curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, detail) != CURLE_OK)
    rc = -EINVAL;
  if (!rc) {
    CURLcode cc = curl_easy_perform(curl);
    if (cc == CURLE_OK)
      curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, http_status);
    else {
      if (answer)
        ps_buf_printf(answer, "%s%s", detail[0] ? detail : curl_easy_strerror(cc),
                      ps_influx_tls_hint(cc, detail));
      rc = -EIO;
    }
  }
  curl_easy_cleanup(curl);
  curl_slist_free_all(hdrs);
  wipe_buf(&auth); /* the header held the token */
  ps_buf_free(&url);
  return rc;
}

/* ---- helpers ------------------------------------------------------------ */

static bool host_is_loopback(const char *url) {
  CURLU *u = curl_url();
  char *host = NULL;
  bool loop = false;
  if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host) {
    unsigned char a[16];
    const char *h = host;
    size_t hl = strlen(h);
    char v6[64];
    if (hl > 2 && h[0] == '[' && h[hl - 1] == ']' && hl - 2 < sizeof v6) {
      memcpy(v6, h + 1, hl - 2);
      v6[hl - 2] = 0;
      h = v6;
    }
    if (!strcasecmp(h, "localhost") || !strcasecmp(h, "localhost."))
      loop = true;
    else if (inet_pton(AF_INET, h, a) == 1)
      loop = a[0] == 127;
    else if (inet_pton(AF_INET6, h, a) == 1)
      loop = !memcmp(a, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\1", 16);
  }
  curl_free(host);
  curl_url_cleanup(u);
  return loop;
}

static uint64_t rng_next(ps_sink *s) {
  /* xorshift64*: jitter only, no need for quality. */
  s->rng ^= s->rng >> 12;
  s->rng ^= s->rng << 25;
  s->rng ^= s->rng >> 27;
  return s->rng * 2685821657736338717ULL;
}

static size_t line_start(const tracked *t, size_t i) {
  if (i >= t->nlines)
    return t->batch->body.len;
  return t->batch->lines ? t->batch->lines[i].offset : t->offsets[i];
}

/* The line's text without its newline. */
static void line_text(const tracked *t, size_t i, const char **p, size_t *len) {
  size_t a = line_start(t, i), b = line_start(t, i + 1);
  while (b > a && (t->batch->body.data[b - 1] == '\n' ||
                   t->batch->body.data[b - 1] == '\r'))
    b--;
  *p = t->batch->body.data + a;
  *len = b - a;
}

static ps_origin line_origin(const tracked *t, size_t i) {
  if (t->batch->lines)
    return t->batch->lines[i].origin;
  ps_origin o = {NULL, i + 1};
  return o;
}

static void queue_push_back(ps_sink *s, piece *p) {
  p->next = NULL;
  if (s->queue_tail)
    s->queue_tail->next = p;
  else
    s->queue_head = p;
  s->queue_tail = p;
}

static void queue_push_front(ps_sink *s, piece *p) {
  p->next = s->queue_head;
  s->queue_head = p;
  if (!s->queue_tail)
    s->queue_tail = p;
}

static piece *queue_pop(ps_sink *s) {
  piece *p = s->queue_head;
  if (p) {
    s->queue_head = p->next;
    if (!s->queue_head)
      s->queue_tail = NULL;
    p->next = NULL;
  }
  return p;
}

static void tracked_unlink(ps_sink *s, tracked *t) {
  if (t->prev)
    t->prev->next = t->next;
  else
    s->batches = t->next;
  if (t->next)
    t->next->prev = t->prev;
  s->nbatches--;
}

/* ---- dispatch ------------------------------------------------------------ */

static void pump(ps_sink *s);
static void teardown(ps_sink *s);

static void leave(ps_sink *s) {
  if (--s->depth == 0 && s->closing && !s->torn)
    teardown(s);
}

static void on_retry_timer(uv_timer_t *t) {
  ps_sink *s = t->data;
  s->depth++;
  pump(s);
  leave(s);
}

static void backoff(ps_sink *s, uint64_t delay_ms) {
  uint64_t at = uv_now(s->loop) + delay_ms;
  if (at > s->resume_at)
    s->resume_at = at;
}

static uint64_t jittered(ps_sink *s, uint64_t first, unsigned streak) {
  uint64_t d = first;
  for (unsigned i = 1; i < streak && d < BACKOFF_MAX_MS; i++)
    d *= 2;
  if (d > BACKOFF_MAX_MS)
    d = BACKOFF_MAX_MS;
  /* Up to +25%, so agents restarted together do not retry in lock step. */
  d += rng_next(s) % (d / 4 + 1);
  return d > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : d;
}

static int compress_body(slot *sl, const char *p, size_t len) {
  z_stream *zs = &sl->zs;
  if (!sl->zs_ready) {
    memset(zs, 0, sizeof *zs);
    /* 15 + 16: a gzip wrapper, which is what Content-Encoding: gzip means */
    if (deflateInit2(zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      return -ENOMEM;
    sl->zs_ready = true;
  } else if (deflateReset(zs) != Z_OK) {
    return -EIO;
  }
  ps_buf_reset(&sl->gz);
  uLong bound = deflateBound(zs, (uLong)len);
  int rc = ps_buf_reserve(&sl->gz, bound);
  if (rc)
    return rc;
  zs->next_in = (Bytef *)p;
  zs->avail_in = (uInt)len;
  zs->next_out = (Bytef *)sl->gz.data;
  zs->avail_out = (uInt)bound;
  if (deflate(zs, Z_FINISH) != Z_STREAM_END)
    return -EIO;
  sl->gz.len = bound - zs->avail_out;
  sl->gz.data[sl->gz.len] = '\0'; /* ps_buf's promise */
  return 0;
}

static int start_piece(ps_sink *s, slot *sl, piece *p) {
  tracked *t = p->t;
  sl->errbuf[0] = '\0';
  size_t a = line_start(t, p->l0), b = line_start(t, p->l1);
  const char *body = t->batch->body.data ? t->batch->body.data + a : "";
  size_t len = b - a;
  if (s->gzip) {
    int rc = compress_body(sl, body, len);
    if (rc)
      return rc;
    body = sl->gz.data;
    len = sl->gz.len;
  }
  ps_buf_reset(&sl->answer);
  /* POSTFIELDS is not copied: the batch (or sl->gz) outlives the transfer,
   * because the batch is only handed back in the done callback. */
  if (curl_easy_setopt(sl->easy, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
      curl_easy_setopt(sl->easy, CURLOPT_POSTFIELDSIZE_LARGE,
                       (curl_off_t)len) != CURLE_OK)
    return -EINVAL;
  if (curl_multi_add_handle(s->multi, sl->easy) != CURLM_OK)
    return -EIO;
  sl->p = p;
  return 0;
}

static void pump(ps_sink *s) {
  if (s->closing || s->held)
    return;
  uint64_t now = uv_now(s->loop);
  if (s->queue_head && now < s->resume_at) {
    if (uv_timer_start(&s->retry_timer, on_retry_timer, s->resume_at - now, 0))
      PS_ERROR(MOD, "cannot arm the retry timer");
    return;
  }
  for (int i = 0; i < SINK_MAX_IN_FLIGHT && s->queue_head; i++) {
    slot *sl = &s->slots[i];
    if (sl->p)
      continue;
    piece *p = queue_pop(s);
    int rc = start_piece(s, sl, p);
    if (rc) {
      /* Out of memory or a curl failure: keep the piece, try again soon. */
      PS_ERROR(MOD, "cannot start a request (%s); retrying", strerror(-rc));
      queue_push_front(s, p);
      s->fail_streak++;
      backoff(s, jittered(s, BACKOFF_FIRST_MS, s->fail_streak));
      pump(s);
      return;
    }
  }
}

/* ---- answers ------------------------------------------------------------- */

static void piece_done(ps_sink *s, piece *p) {
  tracked *t = p->t;
  free(p);
  if (--t->open_pieces)
    return;
  tracked_unlink(s, t);
  s->stats.batches_sent++;
  ps_batch *b = t->batch;
  size_t rejected = t->rejected;
  free(t->offsets);
  free(t);
  if (s->done)
    s->done(s, b, 0, rejected);
}

static void reject_line(ps_sink *s, tracked *t, size_t i, const char *reason) {
  const char *txt;
  size_t len;
  line_text(t, i, &txt, &len);
  ps_origin o = line_origin(t, i);
  t->rejected++;
  s->stats.points_rejected++;
  if (s->on_reject)
    s->on_reject(s, &o, txt, len, reason);
}

/* Splits p into [l0, m) and [m, l1) at the head of the queue. */
static int split_piece(ps_sink *s, piece *p) {
  piece *q = malloc(sizeof *q);
  if (!q)
    return -ENOMEM;
  size_t m = p->l0 + (p->l1 - p->l0) / 2;
  q->t = p->t;
  q->l0 = m;
  q->l1 = p->l1;
  p->l1 = m;
  p->t->open_pieces++;
  queue_push_front(s, q);
  queue_push_front(s, p);
  return 0;
}

/* The server's message: "error" (1.x) or "message" (2.x) of a JSON answer,
 * else the raw text. Returned string is malloc'ed. */
static char *answer_message(const ps_buf *answer) {
  if (!answer->len)
    return strdup("(empty answer)");
  cJSON *j = cJSON_ParseWithLength(answer->data, answer->len);
  char *out = NULL;
  if (j) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "error");
    if (!cJSON_IsString(m))
      m = cJSON_GetObjectItemCaseSensitive(j, "message");
    if (cJSON_IsString(m) && m->valuestring)
      out = strdup(m->valuestring);
    cJSON_Delete(j);
  }
  if (!out)
    out = strdup(answer->data);
  return out;
}

/* Cuts "partial write: " in front and " dropped=N" at the end: the rest is
 * the reason a single line was refused. */
static void trim_reason(char *msg) {
  static const char pw[] = "partial write: ";
  if (!strncmp(msg, pw, sizeof pw - 1))
    memmove(msg, msg + sizeof pw - 1, strlen(msg) - (sizeof pw - 1) + 1);
  char *d = strstr(msg, " dropped=");
  if (d)
    *d = 0;
}

static bool is_data_error(long code, const char *msg) {
  if (code == 422)
    return true;
  return code == 400 &&
         (strstr(msg, "partial write") || strstr(msg, "unable to parse") ||
          strstr(msg, "field type conflict"));
}

static void free_runs(piece *runs) {
  while (runs) {
    piece *n = runs->next;
    free(runs);
    runs = n;
  }
}

/* InfluxDB 1.x names every line it could not parse:
 *   unable to parse '<line>': <reason>
 * joined by newlines. Finds them in [l0, l1), rejects them with their reason
 * and queues the lines between them again (those that were stored are
 * harmless to resend; others may hide a type conflict) into *runs_out.
 * Returns the number of lines named, or a negative errno. */
static long reject_named_lines(ps_sink *s, piece *p, const char *msg,
                               bool *all_matched, piece **runs_out) {
  static const char key[] = "unable to parse '";
  tracked *t = p->t;
  size_t nclauses = 0, matched = 0;
  for (const char *c = strstr(msg, key); c; c = strstr(c + 1, key))
    nclauses++;
  *all_matched = false;
  *runs_out = NULL;
  /* More clauses than lines cannot all be ours; bisecting is then cheaper
   * than matching each against every line. */
  if (!nclauses || nclauses > p->l1 - p->l0)
    return 0;
  bool *bad = calloc(p->l1 - p->l0, sizeof *bad);
  if (!bad)
    return -ENOMEM;
  /* The server names lines in body order, so the search starts after the
   * last match: one pass over the piece for any number of bad lines. */
  size_t n = p->l1 - p->l0, cursor = 0, msg_len = strlen(msg);
  for (const char *c = strstr(msg, key); c; c = strstr(c + 1, key)) {
    const char *q = c + sizeof key - 1;
    size_t rest = msg_len - (size_t)(q - msg);
    for (size_t k = 0; k < n; k++) {
      size_t i = p->l0 + (cursor + k) % n;
      const char *txt;
      size_t len;
      line_text(t, i, &txt, &len);
      /* Bounded by the message's length, not by NULs: a line may hold a
       * NUL byte that the message then ends at. */
      if (bad[i - p->l0] || rest < len + 3 || memcmp(q, txt, len) ||
          memcmp(q + len, "': ", 3))
        continue;
      cursor = (i - p->l0 + 1) % n;
      /* The reason runs to the next clause or " dropped=". */
      const char *r = q + len + 3;
      size_t rl = strcspn(r, "\n");
      const char *d = strstr(r, " dropped=");
      if (d && (size_t)(d - r) < rl)
        rl = (size_t)(d - r);
      char reason[512];
      snprintf(reason, sizeof reason, "unable to parse: %.*s", (int)rl, r);
      bad[i - p->l0] = true;
      reject_line(s, t, i, reason);
      matched++;
      break;
    }
  }
  *all_matched = matched == nclauses;
  if (!matched) {
    free(bad);
    return 0;
  }
  /* Queue the runs of good lines, in order, at the head of the queue. */
  piece *runs = NULL, **tail = &runs;
  size_t i = p->l0;
  int rc = 0;
  while (i < p->l1) {
    while (i < p->l1 && bad[i - p->l0])
      i++;
    size_t a = i;
    while (i < p->l1 && !bad[i - p->l0])
      i++;
    if (a == i)
      continue;
    piece *r = malloc(sizeof *r);
    if (!r) {
      rc = -ENOMEM;
      break;
    }
    r->t = t;
    r->l0 = a;
    r->l1 = i;
    r->next = NULL;
    *tail = r;
    tail = &r->next;
  }
  free(bad);
  if (rc) {
    free_runs(runs);
    return rc;
  }
  *runs_out = runs;
  return (long)matched;
}

static void retry_later(ps_sink *s, piece *p, uint64_t delay_ms) {
  s->stats.http_retries++;
  queue_push_front(s, p);
  backoff(s, delay_ms);
}

/* Rejects every line of p with the server's message as the reason. */
static void reject_piece(ps_sink *s, piece *p, const char *msg) {
  char *reason = strdup(msg);
  if (reason)
    trim_reason(reason);
  for (size_t i = p->l0; i < p->l1; i++)
    reject_line(s, p->t, i, reason ? reason : msg);
  free(reason);
  piece_done(s, p);
}

static void on_data_error(ps_sink *s, piece *p, const char *msg) {
  tracked *t = p->t;
  bool all_matched;
  piece *runs;
  long named = reject_named_lines(s, p, msg, &all_matched, &runs);
  if (named < 0) {
    retry_later(s, p, jittered(s, BACKOFF_FIRST_MS, 1));
    return;
  }
  if (named > 0) {
    /* 1.x reports parse errors as a "partial write" only when every parsed
     * point was written; a type conflict hides them and is reported
     * instead. So when the message is parse errors alone and all were
     * found, the rest is in. 2.x stores nothing when a line does not parse
     * (plain 400, no "partial write"): the rest is sent again. */
    if (all_matched && strstr(msg, "partial write") &&
        !strstr(msg, "field type conflict")) {
      for (piece *r = runs; r; r = r->next)
        s->stats.points_written += r->l1 - r->l0;
      free_runs(runs);
    } else if (runs) {
      piece *last = runs;
      t->open_pieces++;
      while (last->next) {
        last = last->next;
        t->open_pieces++;
      }
      last->next = s->queue_head;
      s->queue_head = runs;
      if (!s->queue_tail)
        s->queue_tail = last;
    }
    piece_done(s, p);
    return;
  }
  /* 1.x counts what it refused: when that is every line of the piece (a
   * whole batch of the wrong type), bisecting would only confirm it. */
  const char *d = strstr(msg, " dropped=");
  if (p->l1 - p->l0 <= 1 ||
      (d && strtoull(d + 9, NULL, 10) == p->l1 - p->l0)) {
    reject_piece(s, p, msg);
    return;
  }
  /* No line named (type conflicts, 2.x's 422): bisect. */
  if (split_piece(s, p))
    retry_later(s, p, jittered(s, BACKOFF_FIRST_MS, 1));
}

static void on_too_large(ps_sink *s, piece *p) {
  if (p->l1 - p->l0 <= 1) {
    if (p->l1 > p->l0)
      reject_line(s, p->t, p->l0,
                  "the server refuses this line as too large (413); raise "
                  "its max-body-size");
    piece_done(s, p);
    return;
  }
  if (split_piece(s, p))
    retry_later(s, p, jittered(s, BACKOFF_FIRST_MS, 1));
}

static void on_config_error(ps_sink *s, piece *p, long code, const char *msg) {
  s->config_streak++;
  uint64_t delay = jittered(s, CONFIG_BACKOFF_FIRST_MS, s->config_streak);
  char key[32];
  snprintf(key, sizeof key, "http-%ld", code);
  const char *fix;
  if (code == 401)
    fix = s->api == PS_API_V2
              ? "check influxdb.token_file (or PERFSHIP_TOKEN)"
              : "check influxdb.username and influxdb.password_file";
  else if (code == 403)
    fix = s->api == PS_API_V2
              ? "give the token write access to the bucket"
              : "grant the user WRITE on the database";
  else if (strstr(msg, "retention policy not found"))
    fix = "create the retention policy or correct "
          "influxdb.retention_policy";
  else if (code == 404 && s->api == PS_API_V2)
    fix = "check influxdb.org and influxdb.bucket, or create the "
          "bucket (InfluxDB 1.x before 1.8 has no v2 API: use api = "
          "\"v1\")";
  else if (code == 404 && s->create_db && s->missing_db &&
           strstr(msg, "database not found")) {
    /* Dropped while we run: influxdb.create_database asks for it again. */
    fix = "creating it again (influxdb.create_database = true)";
    s->missing_db(s, s->data);
  } else if (code == 404)
    fix = s->create_db ? "create the database (CREATE DATABASE), or check "
                         "influxdb.database"
                       : "create the database (CREATE DATABASE) or set "
                         "influxdb.create_database = true";
  else
    fix = "check the influxdb settings";
  ps_log_limited(PS_LOG_ERROR, MOD, key, 60,
                 "InfluxDB refused the write (HTTP %ld: %.300s): %s; keeping "
                 "the data and retrying every %.0f s",
                 code, msg, fix, (double)delay / 1000.0);
  retry_later(s, p, delay);
}

static void on_transient(ps_sink *s, piece *p, long code, const char *what,
                         uint64_t retry_after_s) {
  /* One step of backoff per round of attempts, not per failed request: the
   * transfers in flight together fail together, and counting each would
   * double the delay as often as there are slots (a 10 s outage then cost
   * half a minute of waiting after the server was back). */
  if (uv_now(s->loop) >= s->resume_at)
    s->fail_streak++;
  uint64_t delay;
  if (retry_after_s > 0)
    delay = 1000 * (retry_after_s < RETRY_AFTER_MAX_S ? retry_after_s
                                                      : RETRY_AFTER_MAX_S);
  else
    delay = jittered(s, BACKOFF_FIRST_MS, s->fail_streak);
  if (code)
    ps_log_limited(PS_LOG_WARNING, MOD, "http-transient", 60,
                   "InfluxDB answered HTTP %ld (%.300s); keeping the data, "
                   "retrying in %.1f s",
                   code, what, (double)delay / 1000.0);
  else
    ps_log_limited(PS_LOG_WARNING, MOD, "unreachable", 60,
                   "cannot reach InfluxDB (%s); keeping the data, retrying "
                   "in %.1f s",
                   what, (double)delay / 1000.0);
  retry_later(s, p, delay);
}

static void transfer_done(ps_sink *s, slot *sl, CURLcode res) {
  piece *p = sl->p;
  sl->p = NULL;
  long code = 0;
  curl_off_t up = 0, retry_after = 0;
  curl_easy_getinfo(sl->easy, CURLINFO_RESPONSE_CODE, &code);
  if (curl_easy_getinfo(sl->easy, CURLINFO_SIZE_UPLOAD_T, &up) == CURLE_OK &&
      up > 0)
    s->stats.bytes_sent += (uint64_t)up;
  if (curl_easy_getinfo(sl->easy, CURLINFO_RETRY_AFTER, &retry_after) !=
          CURLE_OK ||
      retry_after < 0)
    retry_after = 0;
  if (curl_multi_remove_handle(s->multi, sl->easy) != CURLM_OK)
    PS_ERROR(MOD, "curl_multi_remove_handle failed");
  if (!p)
    return;

  if (res != CURLE_OK) {
    /* Refused, reset, timed out, or a half-written answer: resend. */
    if (!s->stats.unreachable_since_ms) {
      uint64_t now = uv_now(s->loop);
      s->stats.unreachable_since_ms = now ? now : 1;
    }
    /* curl's generic text for a TLS refusal ("SSL peer certificate or SSH
     * remote key was not OK") does not say why nor what to do. */
    char what[CURL_ERROR_SIZE + 160];
    snprintf(what, sizeof what, "%s%s", sl->errbuf[0] ? sl->errbuf : curl_easy_strerror(res),
             ps_influx_tls_hint(res, sl->errbuf));
    on_transient(s, p, 0, what, 0);
    return;
  }
  s->stats.unreachable_since_ms = 0;
  if (code >= 200 && code < 300) {
    s->fail_streak = 0;
    s->config_streak = 0;
    s->stats.points_written += p->l1 - p->l0;
    piece_done(s, p);
    return;
  }
  char *msg = answer_message(&sl->answer);
  const char *m = msg ? msg : "";
  if (is_data_error(code, m) || code == 413) {
    /* The server works and judged the data: whatever failed before is
     * over. (A batch with a bad line may never see a 2xx.) */
    s->fail_streak = 0;
    s->config_streak = 0;
  }
  if (is_data_error(code, m))
    on_data_error(s, p, m);
  else if (code == 413)
    on_too_large(s, p);
  else if (code == 429 || code == 503)
    on_transient(s, p, code, m, (uint64_t)retry_after);
  else if ((code >= 400 && code < 500) ||
           strstr(m, "retention policy not found")) /* 1.x says 500 */
    on_config_error(s, p, code, m);
  else
    on_transient(s, p, code, m, 0);
  free(msg);
}

static void reap(ps_sink *s) {
  CURLMsg *m;
  int left;
  /* Drain every time: the last transfer may end on a timeout. */
  while (!s->closing && (m = curl_multi_info_read(s->multi, &left))) {
    if (m->msg != CURLMSG_DONE)
      continue;
    CURL *e = m->easy_handle;
    CURLcode res = m->data.result;
    slot *sl = NULL;
    if (curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&sl) != CURLE_OK ||
        !sl) {
      curl_multi_remove_handle(s->multi, e);
      continue;
    }
    transfer_done(s, sl, res); /* m is invalid from here on */
  }
  pump(s);
}

/* ---- curl on libuv ------------------------------------------------------- */

static void maybe_finish(ps_sink *s) {
  if (!s->torn || s->pending_closes)
    return;
  void (*closed)(void *) = s->closed;
  void *arg = s->closed_arg;
  free(s);
  if (closed)
    closed(arg);
}

static void on_sock_closed(uv_handle_t *h) {
  sock_ctx *c = h->data;
  ps_sink *s = c->sink;
  free(c);
  s->pending_closes--;
  maybe_finish(s);
}

static void close_sock(ps_sink *s, sock_ctx *c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    s->socks = c->next;
  if (c->next)
    c->next->prev = c->prev;
  c->prev = c->next = NULL;
  c->closed = true;
  uv_poll_stop(&c->poll);
  s->pending_closes++;
  uv_close((uv_handle_t *)&c->poll, on_sock_closed);
}

static void on_poll(uv_poll_t *h, int status, int events) {
  sock_ctx *c = h->data;
  ps_sink *s = c->sink;
  int flags = 0;
  if (status < 0)
    flags = CURL_CSELECT_ERR;
  else {
    if (events & UV_READABLE)
      flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
      flags |= CURL_CSELECT_OUT;
  }
  int running;
  s->depth++;
  CURLMcode mc = curl_multi_socket_action(s->multi, c->fd, flags, &running);
  if (mc != CURLM_OK)
    PS_ERROR(MOD, "curl_multi_socket_action: %s", curl_multi_strerror(mc));
  reap(s);
  leave(s);
}

static int on_curl_socket(CURL *e, curl_socket_t fd, int what, void *userp,
                          void *socketp) {
  ps_sink *s = userp;
  sock_ctx *c = socketp;
  if (what == CURL_POLL_REMOVE) {
    if (c && !c->closed) {
      close_sock(s, c);
      if (!s->torn)
        curl_multi_assign(s->multi, fd, NULL);
    }
    return 0;
  }
  if (!c) {
    c = calloc(1, sizeof *c);
    if (!c)
      return -1;
    if (uv_poll_init_socket(s->loop, &c->poll, fd)) {
      free(c);
      return -1;
    }
    c->fd = fd;
    c->sink = s;
    c->poll.data = c;
    c->next = s->socks;
    if (s->socks)
      s->socks->prev = c;
    s->socks = c;
    if (curl_multi_assign(s->multi, fd, c) != CURLM_OK) {
      close_sock(s, c);
      return -1;
    }
  }
  int ev = 0;
  if (what & CURL_POLL_IN)
    ev |= UV_READABLE;
  if (what & CURL_POLL_OUT)
    ev |= UV_WRITABLE;
  if (uv_poll_start(&c->poll, ev, on_poll))
    return -1;
  return 0;
}

static void on_curl_timer_fired(uv_timer_t *t) {
  ps_sink *s = t->data;
  int running;
  s->depth++;
  CURLMcode mc =
      curl_multi_socket_action(s->multi, CURL_SOCKET_TIMEOUT, 0, &running);
  if (mc != CURLM_OK)
    PS_ERROR(MOD, "curl_multi_socket_action: %s", curl_multi_strerror(mc));
  reap(s);
  leave(s);
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp) {
  ps_sink *s = userp;
  if (timeout_ms < 0)
    return uv_timer_stop(&s->curl_timer) ? -1 : 0;
  /* 0 would call curl from inside its own callback; wait 1 ms instead. */
  uint64_t ms = timeout_ms ? (uint64_t)timeout_ms : 1;
  return uv_timer_start(&s->curl_timer, on_curl_timer_fired, ms, 0) ? -1 : 0;
}

/* ---- lifecycle ----------------------------------------------------------- */

static void on_timer_closed(uv_handle_t *h) {
  ps_sink *s = h->data;
  s->pending_closes--;
  maybe_finish(s);
}

static void teardown(ps_sink *s) {
  s->torn = true;
  for (int i = 0; i < SINK_MAX_IN_FLIGHT; i++) {
    slot *sl = &s->slots[i];
    if (sl->p) {
      curl_multi_remove_handle(s->multi, sl->easy);
      free(sl->p);
      sl->p = NULL;
    }
  }
  piece *p;
  while ((p = queue_pop(s)))
    free(p);
  while (s->batches) {
    tracked *t = s->batches;
    tracked_unlink(s, t);
    ps_batch *b = t->batch;
    size_t rejected = t->rejected;
    free(t->offsets);
    free(t);
    if (s->done)
      s->done(s, b, -ECANCELED, rejected);
  }
  /* curl may report its sockets as removed while it cleans up. */
  if (s->multi)
    curl_multi_cleanup(s->multi);
  s->multi = NULL;
  while (s->socks)
    close_sock(s, s->socks);
  for (int i = 0; i < SINK_MAX_IN_FLIGHT; i++) {
    slot *sl = &s->slots[i];
    curl_easy_cleanup(sl->easy);
    sl->easy = NULL;
    ps_buf_free(&sl->answer);
    ps_buf_free(&sl->gz);
    if (sl->zs_ready)
      deflateEnd(&sl->zs);
  }
  curl_slist_free_all(s->headers);
  s->headers = NULL;
  wipe_buf(&s->auth_header);
  ps_buf_free(&s->url);
  s->pending_closes += 2;
  uv_close((uv_handle_t *)&s->curl_timer, on_timer_closed);
  uv_close((uv_handle_t *)&s->retry_timer, on_timer_closed);
}

int ps_sink_init(ps_sink **out, uv_loop_t *loop, const ps_config *cfg,
                 ps_sink_done_cb done, ps_sink_reject_cb on_reject,
                 void *data) {
  *out = NULL;
  ps_sink *s = calloc(1, sizeof *s);
  if (!s)
    return -ENOMEM;
  s->loop = loop;
  s->done = done;
  s->on_reject = on_reject;
  s->data = data;
  s->api = cfg->influxdb.api;
  s->create_db = cfg->influxdb.api == PS_API_V1 && cfg->influxdb.create_database;
  s->rng = uv_hrtime() ^ (uint64_t)(uintptr_t)s;
  if (!s->rng)
    s->rng = 88172645463325252ULL;
  ps_buf_init(&s->url, 0);
  ps_buf_init(&s->auth_header, 0);
  int rc = ps_influx_write_url(cfg, &s->url);
  if (cfg->influxdb.gzip == PS_GZIP_ON)
    s->gzip = true;
  else if (cfg->influxdb.gzip == PS_GZIP_AUTO)
    s->gzip = !rc && !host_is_loopback(s->url.data);
  if (!rc)
    rc = build_headers(cfg, s->gzip, &s->auth_header, &s->headers);
  if (!rc && !(s->multi = curl_multi_init()))
    rc = -ENOMEM;
  if (!rc &&
      (curl_multi_setopt(s->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket) ||
       curl_multi_setopt(s->multi, CURLMOPT_SOCKETDATA, s) ||
       curl_multi_setopt(s->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer) ||
       curl_multi_setopt(s->multi, CURLMOPT_TIMERDATA, s) ||
       curl_multi_setopt(s->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                         (long)SINK_MAX_IN_FLIGHT)))
    rc = -EINVAL;
  for (int i = 0; !rc && i < SINK_MAX_IN_FLIGHT; i++) {
    slot *sl = &s->slots[i];
    ps_buf_init(&sl->answer, 0);
    ps_buf_init(&sl->gz, 0);
    if (!(sl->easy = curl_easy_init()))
      rc = -ENOMEM;
    if (!rc)
      rc = setup_easy(sl->easy, cfg, s->url.data, s->headers, &sl->answer);
    if (!rc && (curl_easy_setopt(sl->easy, CURLOPT_PRIVATE, sl) != CURLE_OK ||
                curl_easy_setopt(sl->easy, CURLOPT_ERRORBUFFER, sl->errbuf) != CURLE_OK))
      rc = -EINVAL;
  }
  int timers = 0; /* initialised timers: libuv holds them until closed */
  if (!rc && uv_timer_init(loop, &s->curl_timer))
    rc = -EIO;
  else if (!rc) {
    timers = 1;
    if (uv_timer_init(loop, &s->retry_timer))
      rc = -EIO;
  }
  if (rc) {
    curl_multi_cleanup(s->multi);
    for (int i = 0; i < SINK_MAX_IN_FLIGHT; i++) {
      curl_easy_cleanup(s->slots[i].easy);
      ps_buf_free(&s->slots[i].answer);
    }
    curl_slist_free_all(s->headers);
    wipe_buf(&s->auth_header);
    ps_buf_free(&s->url);
    if (timers) {
      /* The loop still lists the first timer: free s once it lets go. */
      s->torn = true;
      s->closed = NULL;
      s->pending_closes = 1;
      s->curl_timer.data = s;
      uv_close((uv_handle_t *)&s->curl_timer, on_timer_closed);
    } else {
      free(s);
    }
    return rc;
  }
  s->curl_timer.data = s;
  s->retry_timer.data = s;
  *out = s;
  return 0;
}

void ps_sink_hold(ps_sink *s, int hold) {
  if (!s)
    return;
  s->held = hold != 0;
  if (!s->held && !s->closing) {
    s->depth++;
    pump(s);
    leave(s);
  }
}

void ps_sink_on_missing_database(ps_sink *s, void (*cb)(ps_sink *s, void *data)) {
  if (s)
    s->missing_db = cb;
}

/* Line starts of a body that came without a line table. */
static int index_lines(tracked *t) {
  const ps_buf *body = &t->batch->body;
  size_t n = 0, cap = 0;
  for (size_t i = 0; i < body->len;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 256;
      size_t *o = realloc(t->offsets, cap * sizeof *o);
      if (!o)
        return -ENOMEM;
      t->offsets = o;
    }
    t->offsets[n++] = i;
    const char *nl = memchr(body->data + i, '\n', body->len - i);
    i = nl ? (size_t)(nl - body->data) + 1 : body->len;
  }
  t->nlines = n;
  return 0;
}

int ps_sink_submit(ps_sink *s, ps_batch *b) {
  if (!s || !b)
    return -EINVAL;
  if (s->closing)
    return -ECANCELED;
  if (b->lines) {
    for (size_t i = 0; i < b->npoints; i++)
      if (b->lines[i].offset > b->body.len ||
          (i && b->lines[i].offset < b->lines[i - 1].offset))
        return -EINVAL;
  }
  tracked *t = calloc(1, sizeof *t);
  piece *p = malloc(sizeof *p);
  if (!t || !p) {
    free(t);
    free(p);
    return -ENOMEM;
  }
  t->batch = b;
  if (b->lines) {
    t->nlines = b->npoints;
  } else if (index_lines(t)) {
    free(t->offsets);
    free(t);
    free(p);
    return -ENOMEM;
  }
  t->open_pieces = 1;
  p->t = t;
  p->l0 = 0;
  p->l1 = t->nlines;
  t->next = s->batches;
  if (s->batches)
    s->batches->prev = t;
  s->batches = t;
  s->nbatches++;
  queue_push_back(s, p);
  if (!s->depth) {
    s->depth++;
    pump(s);
    leave(s);
  }
  return 0;
}

size_t ps_sink_in_flight(const ps_sink *s) { return s ? s->nbatches : 0; }

void *ps_sink_data(const ps_sink *s) { return s ? s->data : NULL; }

const ps_sink_stats *ps_sink_get_stats(const ps_sink *s) {
  return s ? &s->stats : NULL;
}

void ps_sink_close(ps_sink *s, void (*closed)(void *arg), void *arg) {
  if (!s || s->closing)
    return;
  s->closing = true;
  s->closed = closed;
  s->closed_arg = arg;
  if (!s->depth)
    teardown(s);
}
