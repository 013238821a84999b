/*
 * readback/triage: the triage decisions in force for this agent or
 * command: the `perfship_triage` points on the server and the lines of
 * triage_file (docs/verdicts.md "Triage"; what they mean is
 * verdict/triage.h).
 *
 * Contract
 * - ps_rb_triage_read_file() adds the decisions of cfg->triage_file (none when
 *   it is ""), each bad line reported through `bad` as FILE:LINE and
 *   skipped. Returns the number of bad lines, -ENOENT/-EACCES/... when the
 *   file cannot be read (`err` says which file and why), or -ENOMEM.
 * - ps_rb_triage_read_server() adds the decisions the server holds (one
 *   bounded query, PS_TRIAGE_MAX_READ rows, blocking for up to
 *   influxdb.timeout_ms: call it from a command or libuv's threadpool).
 *   Returns 0, or the code of ps_rb_query() with `err` saying why. A
 *   database without `perfship_triage` points is no decision, not an
 *   error.
 * - The agent does not block its loop: it runs ps_triage_statement()
 *   through readback/query.h ps_rb_run() and parses the answer with
 *   ps_triage_parse_answer() (judging/verdicts.c).
 */
#ifndef PS_READBACK_TRIAGE_H
#define PS_READBACK_TRIAGE_H

#include "core/buf.h"
#include "core/config.h"
#include "verdict/triage.h"

long ps_rb_triage_read_file(const ps_config *cfg, ps_triage_set *out, ps_triage_bad_fn bad,
                            void *ctx, ps_buf *err);
int ps_rb_triage_read_server(const ps_config *cfg, ps_triage_set *out, ps_buf *err);

#endif
