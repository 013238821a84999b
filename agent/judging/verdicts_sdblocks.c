/*
 * verdicts_sdblocks.c: the per-block slog figures of a run, read back for
 * its stage drift. See include/judging/verdicts_sdblocks.h.
 *
 * Design
 * - Its own statements and reader, beside the slog drift's others: the
 *   rows are many (a block per 5 s, a row per block and busy vat) and
 *   want a compact form (vat IDs interned, no strings per row), and the
 *   read is one function (statement in, rows out) however the server is
 *   asked.
 * - Only the fields the test needs are selected: a 12-stage run of two
 *   hours per stage has about 17,000 blocks and 10 times as many block
 *   vat rows, some 10 MB of answer.
 */
#include "judging/verdicts_sdblocks.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/util.h"
#include "influx/client.h"
#include "judging/verdicts_slogdrift.h"
#include "readback/answer.h"
#include "readback/query.h"
#include "readback/statement.h"

int jd_verdicts_sdblocks_statement(int s, const char *run, const char *host, int64_t anchor_ns,
                                   ps_buf *q) {
  static const char *const head[JD_VERDICTS_SDBLOCKS_NSTATEMENTS] = {
      [JD_VERDICTS_SDBLOCKS_BLOCKS] = "SELECT \"boydSeconds\", \"deliverySeconds\", \"stage\" "
                                      "FROM \"loadgen_slog_block\"",
      [JD_VERDICTS_SDBLOCKS_BLOCK_VATS] = "SELECT \"deliverySeconds\", \"stage\", \"vat\" "
                                          "FROM \"loadgen_slog_block_vat\"",
  };
  if (s < 0 || s >= JD_VERDICTS_SDBLOCKS_NSTATEMENTS || !run || !host)
    return -EINVAL;
  int64_t from = anchor_ns > JD_VERDICTS_SLOGDRIFT_SPAN_NS
                     ? anchor_ns - JD_VERDICTS_SLOGDRIFT_SPAN_NS
                     : 0;
  int rc = ps_buf_puts(q, head[s]) | ps_buf_puts(q, " WHERE \"run\" = ") | ps_rb_string(q, run) |
           ps_rb_tag_is(q, "host", host) |
           ps_rb_and_time_range(q, from, anchor_ns + JD_VERDICTS_SLOGDRIFT_SPAN_NS + 1);
  return rc ? -EINVAL : 0;
}

static int stage_of(const ps_rb_row *r) { return ps_stage_number(ps_rb_str(r, "stage")); }

static const char *intern(jd_verdicts_sdblocks *b, const char *vat) {
  for (size_t i = 0; i < b->nids; i++)
    if (strcmp(b->ids[i], vat) == 0)
      return b->ids[i];
  if (ps_array_room((void **)&b->ids, b->nids, &b->ids_cap, sizeof *b->ids, 32))
    return NULL;
  char *copy = strdup(vat);
  if (copy)
    b->ids[b->nids++] = copy;
  return copy;
}

int jd_verdicts_sdblocks_add_block(jd_verdicts_sdblocks *b, const ps_slog_drift_block *row) {
  if (ps_array_room((void **)&b->blocks, b->nblocks, &b->blocks_cap, sizeof *b->blocks, 256))
    return -ENOMEM;
  b->blocks[b->nblocks++] = *row;
  return 0;
}

int jd_verdicts_sdblocks_add_vat(jd_verdicts_sdblocks *b, int stage, int64_t time_ns,
                                 const char *vat, double delivery_s) {
  const char *id = intern(b, vat);
  if (!id || ps_array_room((void **)&b->vats, b->nvats, &b->vats_cap, sizeof *b->vats, 256))
    return -ENOMEM;
  b->vats[b->nvats++] = (ps_slog_drift_block_vat){stage, time_ns, id, delivery_s};
  return 0;
}

static int on_row(jd_verdicts_sdblocks *b, int s, const ps_rb_row *r) {
  const cJSON *t = ps_rb_cell(r, "time");
  int stage = stage_of(r);
  if (!cJSON_IsNumber(t) || !(t->valuedouble >= 0 && t->valuedouble < 9.2e18) || stage < 0)
    return 0;
  int64_t time_ns = (int64_t)t->valuedouble;
  double secs = ps_rb_num(r, "deliverySeconds");
  size_t n = s == JD_VERDICTS_SDBLOCKS_BLOCKS ? b->nblocks : b->nvats;
  if (n >= JD_VERDICTS_SDBLOCKS_MAX_ROWS) {
    b->dropped++;
    return 0;
  }
  if (s == JD_VERDICTS_SDBLOCKS_BLOCKS)
    return jd_verdicts_sdblocks_add_block(
        b, &(ps_slog_drift_block){stage, time_ns, secs, ps_rb_num(r, "boydSeconds")});
  const char *vat = ps_rb_str(r, "vat");
  return vat && *vat ? jd_verdicts_sdblocks_add_vat(b, stage, time_ns, vat, secs) : 0;
}

int jd_verdicts_sdblocks_parse(jd_verdicts_sdblocks *b, int s, const char *json, size_t len) {
  if (s < 0 || s >= JD_VERDICTS_SDBLOCKS_NSTATEMENTS)
    return -EINVAL;
  ps_rb_answer a;
  if (ps_rb_answer_parse(&a, json ? json : "", json ? len : 0) < 0)
    return -ENOMEM;
  int rc = ps_rb_answer_whole(&a) ? 0 : -EPROTO;
  for (const ps_rb_row *r; rc == 0 && (r = ps_rb_answer_next(&a));)
    rc = on_row(b, s, r);
  ps_rb_answer_free(&a);
  return rc;
}

int jd_verdicts_sdblocks_read(const ps_config *cfg, const char *run, const char *host,
                              int64_t anchor_ns, jd_verdicts_sdblocks *b, ps_buf *err) {
  int rc = 0;
  for (int s = 0; rc == 0 && s < JD_VERDICTS_SDBLOCKS_NSTATEMENTS; s++) {
    ps_buf q, answer;
    ps_buf_init(&q, 0);
    ps_buf_init(&answer, PS_INFLUX_QUERY_MAX_BYTES);
    rc = jd_verdicts_sdblocks_statement(s, run, host, anchor_ns, &q);
    if (rc == 0)
      rc = ps_rb_query(cfg, q.data, &answer, err);
    if (rc == 0)
      rc = jd_verdicts_sdblocks_parse(b, s, answer.data, answer.len);
    ps_buf_free(&q);
    ps_buf_free(&answer);
  }
  return rc;
}

ps_slog_drift_blocks jd_verdicts_sdblocks_view(const jd_verdicts_sdblocks *b) {
  return (ps_slog_drift_blocks){b->blocks, b->nblocks, b->vats, b->nvats};
}

void jd_verdicts_sdblocks_free(jd_verdicts_sdblocks *b) {
  for (size_t i = 0; i < b->nids; i++)
    free(b->ids[i]);
  free(b->ids);
  free(b->blocks);
  free(b->vats);
  memset(b, 0, sizeof *b);
}
