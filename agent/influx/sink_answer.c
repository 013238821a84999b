/*
 * influx/sink_answer.c: what InfluxDB's answer to a write means for the
 * piece that was sent (include/influx/sink.h has the contract; the state is
 * in sink_private.h).
 *
 * DESIGN
 * - Resending any piece is harmless because every point carries its own
 *   timestamp: a point stored twice overwrites itself. That is what makes
 *   bisecting a partial write safe.
 * - Reading a 400: 1.x stores the good lines of a "partial write" and names
 *   every line it could not parse, so those are rejected at once; a type
 *   conflict hides the parse errors and names no line, but "dropped=N"
 *   says how many; 2.x stores nothing when a line does not parse. Whatever
 *   is not certain is resent, bisecting until single lines are refused
 *   (docs/design-notes.md, "The HTTP answer matrix").
 * - Nothing is dropped on the sink's own judgement: only a line the server
 *   refused as data is given up, and it is reported with its origin.
 * - Back-off is server-wide (ps_sink_retry_later); transient failures grow it
 *   once per round of attempts, configuration errors start slower.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/log.h"
#include "influx/endpoint.h"
#include "sink_private.h"

static const char *MOD = "sink";

/* The line's text without its newline. */
static void line_text(const tracked *t, size_t i, const char **p, size_t *len) {
  size_t a = ps_sink_line_start(t, i), b = ps_sink_line_start(t, i + 1);
  while (b > a && (t->batch->body.data[b - 1] == '\n' ||
                   t->batch->body.data[b - 1] == '\r'))
    b--;
  *p = t->batch->body.data + a;
  *len = b - a;
}

static ps_origin line_origin(const tracked *t, size_t i) {
  return ps_batch_origin(t->batch, i);
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

char *ps_sink_answer_message(const ps_buf *answer) {
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

bool ps_sink_is_data_error(long code, const char *msg) {
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

/* The runs of good lines of p (bad[i - l0] false), in order, into *out;
 * 0 or -ENOMEM (none then). */
static int good_runs(const piece *p, const bool *bad, piece **out) {
  piece *runs = NULL, **tail = &runs;
  size_t i = p->l0;
  while (i < p->l1) {
    while (i < p->l1 && bad[i - p->l0])
      i++;
    size_t a = i;
    while (i < p->l1 && !bad[i - p->l0])
      i++;
    if (a == i)
      continue;
    piece *r = ps_sink_piece_new(p->t, a, i);
    if (!r) {
      free_runs(runs);
      return -ENOMEM;
    }
    *tail = r;
    tail = &r->next;
  }
  *out = runs;
  return 0;
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
  int rc = good_runs(p, bad, runs_out);
  free(bad);
  return rc ? rc : (long)matched;
}


/* Rejects every line of p with the server's message as the reason. */
static void reject_piece(ps_sink *s, piece *p, const char *msg) {
  char *reason = strdup(msg);
  if (reason)
    trim_reason(reason);
  for (size_t i = p->l0; i < p->l1; i++)
    reject_line(s, p->t, i, reason ? reason : msg);
  free(reason);
  ps_sink_piece_done(s, p);
}

void ps_sink_on_data_error(ps_sink *s, piece *p, const char *msg) {
  tracked *t = p->t;
  if (ps_sink_index_lines(t) < 0) {
    ps_sink_retry_later(s, p, ps_sink_jittered(s, BACKOFF_FIRST_MS, 1));
    return;
  }
  bool all_matched;
  piece *runs;
  long named = reject_named_lines(s, p, msg, &all_matched, &runs);
  if (named < 0) {
    ps_sink_retry_later(s, p, ps_sink_jittered(s, BACKOFF_FIRST_MS, 1));
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
    ps_sink_piece_done(s, p);
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
  if (ps_sink_split_piece(s, p))
    ps_sink_retry_later(s, p, ps_sink_jittered(s, BACKOFF_FIRST_MS, 1));
}

void ps_sink_on_too_large(ps_sink *s, piece *p) {
  if (ps_sink_index_lines(p->t) < 0) {
    ps_sink_retry_later(s, p, ps_sink_jittered(s, BACKOFF_FIRST_MS, 1));
    return;
  }
  if (p->l1 - p->l0 <= 1) {
    if (p->l1 > p->l0)
      reject_line(s, p->t, p->l0,
                  "the server refuses this line as too large (413); raise "
                  "its max-body-size");
    ps_sink_piece_done(s, p);
    return;
  }
  if (ps_sink_split_piece(s, p))
    ps_sink_retry_later(s, p, ps_sink_jittered(s, BACKOFF_FIRST_MS, 1));
}

void ps_sink_note_trouble(ps_sink *s, long status, const char *text) {
  ps_sink_trouble *t = &s->trouble;
  int news = !t->since_s || t->status != status;
  if (!t->since_s) {
    int64_t now = (int64_t)time(NULL);
    t->since_s = now > 0 ? now : 1;
  }
  t->status = status;
  /* one line of at most sizeof text: a 1.x answer can name many lines */
  size_t n = 0;
  for (const char *c = text ? text : ""; *c && n + 1 < sizeof t->text; c++)
    t->text[n++] = *c == '\n' || *c == '\r' || *c == '\t' ? ' ' : *c;
  t->text[n] = '\0';
  if (news && s->on_trouble)
    s->on_trouble(s, s->data);
}

void ps_sink_trouble_over(ps_sink *s) {
  if (!s->trouble.since_s)
    return;
  s->trouble.since_s = 0;
  if (s->on_trouble)
    s->on_trouble(s, s->data);
  s->trouble.status = 0;
  s->trouble.text[0] = '\0';
}

static void on_config_error(ps_sink *s, piece *p, long code, const char *msg) {
  s->config_streak++;
  uint64_t delay = ps_sink_jittered(s, CONFIG_BACKOFF_FIRST_MS, s->config_streak);
  char key[32];
  snprintf(key, sizeof key, "http-%ld", code);
  const char *fix;
  if (code == 401)
    fix = s->api == PS_API_V2
              ? "wrong token: check influxdb.token_file (or PERFSHIP_TOKEN)"
              : "wrong user or password: check influxdb.username and "
                "influxdb.password_file";
  else if (code == 403)
    fix = s->api == PS_API_V2
              ? "the token lacks the right to write the bucket: give it write access"
              : "the user lacks the right to write the database: GRANT WRITE (or "
                "ALL) on it";
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
  ps_sink_note_trouble(s, code, msg);
  ps_sink_retry_later(s, p, delay);
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
    delay = ps_sink_jittered(s, BACKOFF_FIRST_MS, s->fail_streak);
  ps_sink_note_trouble(s, code, what);
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
  ps_sink_retry_later(s, p, delay);
}

/* A 413 for a body no larger than one the server took cannot be its size
 * limit, unless the limit was lowered since: doubted SINK_413_DOUBTS times
 * per piece, then believed, and what was taken is forgotten, so the 413s
 * that follow are believed at once until the server takes a body again
 * (halves of a body too large may well be too large too). */
static void body_taken(ps_sink *s, const slot *sl) {
  if (sl->body_len > s->largest_body_taken)
    s->largest_body_taken = sl->body_len;
}

static bool doubt_too_large(ps_sink *s, const slot *sl, piece *p) {
  if (sl->body_len > s->largest_body_taken)
    return false;
  if (p->doubted_413s < SINK_413_DOUBTS) {
    p->doubted_413s++;
    return true;
  }
  s->largest_body_taken = 0;
  return false;
}

void ps_sink_transfer_done(ps_sink *s, slot *sl, CURLcode res) {
  ps_sink_outcome o = {0};
  curl_off_t up = 0, retry_after = 0;
  curl_easy_getinfo(sl->easy, CURLINFO_RESPONSE_CODE, &o.code);
  if (curl_easy_getinfo(sl->easy, CURLINFO_SIZE_UPLOAD_T, &up) == CURLE_OK && up > 0)
    o.sent = (uint64_t)up;
  if (curl_easy_getinfo(sl->easy, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK &&
      retry_after > 0)
    o.retry_after_s = (uint64_t)retry_after;
  /* curl's generic text for a TLS refusal ("SSL peer certificate or SSH
   * remote key was not OK") does not say why nor what to do. */
  char what[CURL_ERROR_SIZE + 160];
  if (res != CURLE_OK) {
    snprintf(what, sizeof what, "%s%s", sl->errbuf[0] ? sl->errbuf : curl_easy_strerror(res),
             ps_influx_tls_hint(res, sl->errbuf));
    o.failed = what;
  }
  ps_sink_answered(s, sl, &o);
}

void ps_sink_answered(ps_sink *s, slot *sl, const ps_sink_outcome *o) {
  piece *p = sl->p;
  sl->p = NULL;
  long code = o->code;
  s->stats.bytes_sent += o->sent;
  if (!p)
    return;

  if (o->failed) {
    /* Refused, reset, timed out, or a half-written answer: resend. */
    if (!s->stats.unreachable_since_ms) {
      uint64_t now = uv_now(s->loop);
      s->stats.unreachable_since_ms = now ? now : 1;
    }
    on_transient(s, p, 0, o->failed, 0);
    return;
  }
  s->stats.unreachable_since_ms = 0;
  if (code >= 200 && code < 300) {
    body_taken(s, sl);
    s->fail_streak = 0;
    s->config_streak = 0;
    ps_sink_trouble_over(s);
    s->stats.points_written += p->l1 - p->l0;
    ps_sink_piece_done(s, p);
    return;
  }
  char *msg = ps_sink_answer_message(&sl->answer);
  const char *m = msg ? msg : "";
  if (code == 413 && doubt_too_large(s, sl, p)) {
    on_transient(s, p, code, "too large, for a body no larger than one it took", 0);
    free(msg);
    return;
  }
  bool data_error = ps_sink_is_data_error(code, m);
  if (data_error)
    body_taken(s, sl); /* judged line by line: not too large */
  if (data_error || code == 413) {
    /* The server works and judged the data: whatever failed before is
     * over. (A batch with a bad line may never see a 2xx.) */
    s->fail_streak = 0;
    s->config_streak = 0;
    ps_sink_trouble_over(s);
  }
  if (data_error)
    ps_sink_on_data_error(s, p, m);
  else if (code == 413)
    ps_sink_on_too_large(s, p);
  else if (code == 429 || code == 503)
    on_transient(s, p, code, m, o->retry_after_s);
  else if ((code >= 400 && code < 500) ||
           strstr(m, "retention policy not found")) /* 1.x says 500 */
    on_config_error(s, p, code, m);
  else
    on_transient(s, p, code, m, 0);
  free(msg);
}
