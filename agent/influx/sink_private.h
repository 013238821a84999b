/*
 * sink_private.h (private to agent/influx/sink*.c and the sink's fuzz
 * target): the sink's state and the functions its two halves share.
 *
 * - sink.c: submitting batches, dispatch, compression, life cycle.
 * - sink_pieces.c: batches, pieces, the queue and back-off arithmetic,
 *   shared by the other two (it calls neither).
 * - sink_answer.c: what an answer means (the contract in
 *   include/influx/sink.h; docs/design-notes.md, "The HTTP answer matrix"):
 *   stored, lines rejected, split, retried now or later.
 *
 * A batch is cut into pieces (runs of its lines); it is done when its last
 * piece is stored or rejected. Everything here runs on the loop thread.
 */
#ifndef PS_INFLUX_SINK_PRIVATE_H
#define PS_INFLUX_SINK_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <uv.h>
#include <zlib.h>

#include "influx/endpoint.h"
#include "influx/sink.h"
#include "net/http_conn.h"
#include "net/http_easy.h"
#include "net/http_loop.h"

/* Four: with two, a backfill left both InfluxDB and the agent short of a
 * core each, waiting on each other's round trips (2.89 s against 2.39 s
 * for six full-size runs, docs/benchmarks.md "Backfill"). */
#define SINK_MAX_IN_FLIGHT 4
/* Below the service's fixed mmap threshold (128 KiB, agent/service/
 * service.c): curl allocates this buffer for every request and frees it
 * after, and above the threshold each request mapped, faulted in page by
 * page and unmapped 512 KiB (docs/benchmarks.md, "End to end"). */
#define SINK_UPLOAD_BUFFER (96 * 1024)
#define BACKOFF_FIRST_MS 200
#define BACKOFF_MAX_MS 60000
/* Configuration errors (401/403/404, a missing retention policy) need a
 * human; retry slowly. */
#define CONFIG_BACKOFF_FIRST_MS 5000
#define RETRY_AFTER_MAX_S 600
/* A 413 for a body no larger than one the server has taken is doubted this
 * many times (retried as a passing failure) before it is believed: a proxy
 * or an overloaded front may say 413 for what is not about size, and
 * believing it at once refuses a good line (docs/design-notes.md). */
#define SINK_413_DOUBTS 3

typedef struct tracked tracked;

typedef struct piece {
  tracked *t;
  size_t l0, l1; /* lines [l0, l1) of the batch */
  unsigned doubted_413s; /* see SINK_413_DOUBTS */
  struct piece *next;
} piece;

struct tracked {
  ps_batch *batch;
  size_t nlines;
  size_t *offsets; /* line starts, once a piece needs them (ps_sink_index_lines) */
  size_t open_pieces;
  size_t rejected;
  tracked *prev, *next;
};

typedef struct slot {
  CURL *easy; /* with curl (TLS, a proxy), else NULL */
  ps_http_xfer xfer;
  ps_http_conn *conn;   /* the agent's own connection, else NULL */
  char length_line[32]; /* "N\r\n\r\n": ends the shared head */
  ps_sink *sink;
  piece *p; /* NULL: idle */
  ps_buf answer;
  ps_http_answer collector; /* fills `answer`, bounded */
  size_t body_len;          /* on the wire: compressed when gzip is on */
  ps_buf gz;
  z_stream zs;
  bool zs_ready;
  char errbuf[CURL_ERROR_SIZE]; /* curl's own words: names the TLS problem */
} slot;

struct ps_sink {
  uv_loop_t *loop;
  ps_http_loop *http;
  uv_timer_t retry_timer;
  ps_buf url;
  ps_influx_headers headers;
  /* The request head up to the body's length, for the slots' own
   * connections (empty with curl); it holds the credentials. */
  ps_buf head;
  bool gzip;
  ps_api api;
  slot slots[SINK_MAX_IN_FLIGHT];
  piece *queue_head, *queue_tail;
  tracked *batches;
  size_t nbatches;
  uint64_t resume_at;
  /* the largest body (on the wire) the server has taken or judged by its
   * lines; a 413 for one no larger is doubted */
  size_t largest_body_taken;
  unsigned fail_streak;
  unsigned config_streak;
  uint64_t rng;
  ps_sink_stats stats;
  ps_sink_done_cb done;
  ps_sink_reject_cb on_reject;
  void *data;
  int depth;      /* nesting of our code that may call user callbacks */
  bool closing;   /* ps_sink_close was called */
  bool torn;      /* teardown has started */
  bool held;      /* ps_sink_hold: nothing starts until released */
  bool create_db; /* v1 with influxdb.create_database on */
  void (*missing_db)(ps_sink *s, void *data);
  ps_sink_trouble trouble;
  void (*on_trouble)(ps_sink *s, void *data);
  int pending_closes;
  void (*closed)(void *arg);
  void *closed_arg;
};

/* sink_pieces.c */
/* A piece of lines [l0, l1) of t, not queued, with no doubts yet; NULL
 * when out of memory. */
piece *ps_sink_piece_new(tracked *t, size_t l0, size_t l1);
void ps_sink_queue_push_back(ps_sink *s, piece *p);
void ps_sink_queue_push_front(ps_sink *s, piece *p);
piece *ps_sink_queue_pop(ps_sink *s);
/* Finds the line starts (once). 0 or -ENOMEM. */
int ps_sink_index_lines(tracked *t);
size_t ps_sink_line_start(const tracked *t, size_t i);
/* A piece is over (stored or rejected): frees it, and finishes its batch
 * (done callback) when it was the last. */
void ps_sink_piece_done(ps_sink *s, piece *p);
/* Splits p into [l0, m) and [m, l1) at the head of the queue. */
int ps_sink_split_piece(ps_sink *s, piece *p);
/* Back to the head of the queue; nothing starts for delay_ms. */
void ps_sink_retry_later(ps_sink *s, piece *p, uint64_t delay_ms);
/* first * 2^(streak-1), capped, plus up to 25 % jitter. */
uint64_t ps_sink_jittered(ps_sink *s, uint64_t first, unsigned streak);
/* Nothing starts before delay_ms from now (a later resume_at stays). */
void ps_sink_backoff(ps_sink *s, uint64_t delay_ms);
/* Takes a finished batch out of the list of those in flight. */
void ps_sink_tracked_unlink(ps_sink *s, tracked *t);

/* sink_answer.c */
/* How a request of a slot ended, whichever transport carried it. */
typedef struct ps_sink_outcome {
  const char *failed; /* no answer: why, in one line; NULL when answered */
  long code;          /* the HTTP status */
  uint64_t retry_after_s;
  uint64_t sent; /* body bytes on the wire */
} ps_sink_outcome;
/* Decides the fate of sl's piece from how its request ended (the answer's
 * body is in sl->answer). */
void ps_sink_answered(ps_sink *s, slot *sl, const ps_sink_outcome *o);
/* The same for a transfer curl carried (its result `res`). */
void ps_sink_transfer_done(ps_sink *s, slot *sl, CURLcode res);
/* The server's message: "error" (1.x) or "message" (2.x) of a JSON answer,
 * else the raw text. malloc'ed; NULL when out of memory. */
char *ps_sink_answer_message(const ps_buf *answer);
bool ps_sink_is_data_error(long code, const char *msg);
/* A 400/422 about the data: rejects what the server named, resends or
 * bisects the rest. */
void ps_sink_on_data_error(ps_sink *s, piece *p, const char *msg);
/* A 413: halves, or rejects a single line. */
void ps_sink_on_too_large(ps_sink *s, piece *p);
/* The trouble episode (ps_sink_trouble): a failed attempt, or the end. */
void ps_sink_note_trouble(ps_sink *s, long status, const char *text);
void ps_sink_trouble_over(ps_sink *s);

#endif
