/*
 * readback/triage.c: the decisions of triage_file and of the server
 * (include/readback/triage.h).
 */
#include "readback/triage.h"

#include <errno.h>
#include <string.h>

#include "core/util.h"
#include "influx/client.h"
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
  long n = ps_triage_parse_text(out, cfg->triage_file, text.data ? text.data : "", text.len,
                                bad, ctx);
  ps_buf_free(&text);
  if (n == -ENOMEM)
    ps_buf_puts(err, "out of memory");
  return n;
}

int ps_rb_triage_read_server(const ps_config *cfg, ps_triage_set *out, ps_buf *err) {
  ps_buf q, answer;
  ps_buf_init(&q, 0);
  ps_buf_init(&answer, PS_INFLUX_QUERY_MAX_BYTES);
  int rc = ps_triage_statement(&q);
  if (rc == 0)
    rc = ps_rb_query(cfg, q.data, &answer, err);
  if (rc == 0 && ps_triage_parse_answer(out, answer.data ? answer.data : "", answer.len) < 0) {
    rc = -ENOMEM;
    ps_buf_puts(err, "out of memory");
  }
  ps_buf_free(&q);
  ps_buf_free(&answer);
  return rc;
}
