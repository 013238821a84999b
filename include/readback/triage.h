/*
 * readback/triage: the triage decisions in force for this agent or
 * command, read: the `perfship_triage` points on the server and the lines
 * of triage_file (docs/verdicts.md "Triage"; what they mean is
 * verdict/triage.h, which reads nothing).
 *
 * Contract
 * - ps_rb_triage_read_file() adds the decisions of cfg->triage_file (none
 *   when it is ""), each bad line reported through `bad` as FILE:LINE and
 *   skipped. Returns the number of bad lines, -ENOENT/-EACCES/... when the
 *   file cannot be read (`err` says which file and why), or -ENOMEM. It
 *   reads a file: a command, or the agent's threadpool or start.
 * - ps_rb_triage_statement() writes the InfluxQL that reads the decisions
 *   back (newest first, at most PS_TRIAGE_MAX_READ rows; not bounded in
 *   time: a decision holds until undone). 0 or -ENOMEM.
 * - ps_rb_triage_parse_answer() adds the rows of one answer to that
 *   statement; it never fails on shape (fuzzed by tests/fuzz/fuzz_triage.c)
 *   and skips rows it cannot use. Returns the rows added, or -ENOMEM.
 * - ps_rb_triage_read_server() is both with one blocking request
 *   (readback/query.h ps_rb_query: a command or the threadpool). Returns
 *   0, or the code of ps_rb_query() with `err` saying why. A database
 *   without `perfship_triage` points is no decision, not an error.
 * - The agent does not block its loop: it runs ps_rb_triage_statement()
 *   through ps_rb_run() and parses the answer with
 *   ps_rb_triage_parse_answer() (judging/verdicts_triage.c).
 */
#ifndef PS_READBACK_TRIAGE_H
#define PS_READBACK_TRIAGE_H

#include <stddef.h>

#include "core/buf.h"
#include "core/config.h"
#include "verdict/triage.h"

long ps_rb_triage_read_file(const ps_config *cfg, ps_triage_set *out, ps_triage_bad_fn bad,
                            void *ctx, ps_buf *err);
int ps_rb_triage_statement(ps_buf *out);
long ps_rb_triage_parse_answer(ps_triage_set *s, const char *json, size_t len);
int ps_rb_triage_read_server(const ps_config *cfg, ps_triage_set *out, ps_buf *err);

#endif
