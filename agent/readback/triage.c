/*
 * readback/triage.c: the decisions of triage_file and of the server
 * (include/readback/triage.h).
 */
#include "readback/triage.h"

#include <errno.h>
#include <string.h>

#include "core/util.h"
#include "influx/client.h"
#include "readback/answer.h"
#include "readback/query.h"

/* A decision is a line of words: a file far larger is a mistake, and the
 * bound keeps it from costing the agent its memory. */
#define TRIAGE_FILE_MAX_BYTES (16u << 20)

long ps_rb_triage_read_file(const ps_config *cfg, ps_triage_set *out, ps_triage_bad_fn bad,
                            void *ctx, ps_buf *err) {
  if (!cfg->triage_file || !cfg->triage_file[0])
    return 0;
  ps_buf text;
  ps_buf_init(&text, 0);
  int rc = ps_read_file(cfg->triage_file, TRIAGE_FILE_MAX_BYTES, &text, NULL);
  if (rc < 0) {
    ps_buf_printf(err, "triage_file %s: %s", cfg->triage_file,
                  rc == -EFBIG ? "larger than 16 MiB" : strerror(-rc));
    ps_buf_free(&text);
    return rc;
  }
  long n = ps_triage_parse_text(out, cfg->triage_file, text.data ? text.data : "", text.len, bad,
                                ctx);
  ps_buf_free(&text);
  if (n == -ENOMEM)
    ps_buf_puts(err, "out of memory");
  return n;
}

int ps_rb_triage_statement(ps_buf *out) {
  return ps_buf_printf(out,
                       "SELECT \"id\", \"action\", \"run\", \"metric\", \"host\", \"who\", "
                       "\"reason\", \"ticket\", \"revokes\" FROM \"" PS_TRIAGE_MEASUREMENT
                       "\" ORDER BY time DESC LIMIT %d",
                       PS_TRIAGE_MAX_READ) < 0
             ? -ENOMEM
             : 0;
}

/* A row is a decision when it says what it is and what it is about. */
static int decision_of(const ps_rb_row *r, ps_triage_decision *d) {
  int action = ps_triage_action_parse(ps_rb_str(r, "action"));
  double t = ps_rb_num(r, "time");
  *d = (ps_triage_decision){
      .id = (char *)ps_rb_str(r, "id"),
      .action = (ps_triage_action)(action < 0 ? 0 : action),
      .run = (char *)ps_rb_str(r, "run"),
      .metric = (char *)ps_rb_str(r, "metric"),
      .host = (char *)ps_rb_str(r, "host"),
      .who = (char *)ps_rb_str(r, "who"),
      .reason = (char *)ps_rb_str(r, "reason"),
      .ticket = (char *)ps_rb_str(r, "ticket"),
      .revokes = (char *)ps_rb_str(r, "revokes"),
      /* epoch=ns: exact in a double only to ~256 ns, enough to order */
      .when_ns = t > 0 && t < 9e18 ? (int64_t)t : 0,
  };
  if (action < 0 || !d->id || !d->id[0])
    return 0;
  return action == PS_TRIAGE_UNDO ? d->revokes && d->revokes[0] : d->run && d->run[0];
}

long ps_rb_triage_parse_answer(ps_triage_set *s, const char *json, size_t len) {
  ps_rb_answer a;
  long added = ps_rb_answer_parse(&a, json, len);
  ps_triage_decision d;
  for (const ps_rb_row *r; added >= 0 && (r = ps_rb_answer_next(&a));) {
    if (!decision_of(r, &d))
      continue;
    int rc = ps_triage_add(s, &d);
    if (rc < 0 || (rc > 0 && !s->repeated_id && !(s->repeated_id = strdup(d.id)))) {
      added = -ENOMEM;
      break;
    }
    /* newest first: a repeat is an older point, and the newer holds */
    s->repeated += rc > 0;
    added += rc == 0;
  }
  ps_rb_answer_free(&a);
  return added;
}

int ps_rb_triage_read_server(const ps_config *cfg, ps_triage_set *out, ps_buf *err) {
  ps_buf q, answer;
  ps_buf_init(&q, 0);
  ps_buf_init(&answer, PS_INFLUX_QUERY_MAX_BYTES);
  int rc = ps_rb_triage_statement(&q);
  if (rc == 0)
    rc = ps_rb_query(cfg, q.data, &answer, err);
  if (rc == 0 && ps_rb_triage_parse_answer(out, answer.data ? answer.data : "", answer.len) < 0) {
    rc = -ENOMEM;
    ps_buf_puts(err, "out of memory");
  }
  ps_buf_free(&q);
  ps_buf_free(&answer);
  return rc;
}
