/*
 * judging/verdicts_sdblocks: the per-block slog figures behind a run's
 * stage drift, read back from the server (docs/verdicts.md, "Within a run
 * (stage drift)", "How sure"): every loadgen_slog_block (BOYD and delivery
 * seconds) and loadgen_slog_block_vat (a vat's delivery seconds) of the
 * run, so that the judge (verdict/slog_drift.h) can weigh a stage's change
 * against the variation of its blocks.
 *
 * Contract
 * - jd_verdicts_sdblocks_statement() builds statement `s` (JD_VERDICTS_SDBLOCKS_*) for `run` on
 *   `host`, host-scoped and bounded in time as the other slog drift reads
 *   (JD_VERDICTS_SLOGDRIFT_SPAN_NS either side of `anchor_ns`); names quoted. 0 or
 *   -EINVAL.
 * - jd_verdicts_sdblocks_parse() reads the answer to statement `s` into `b`: rows
 *   without a stage (a number 0-100000), a time, or (block vats) a vat
 *   string are skipped; at most JD_VERDICTS_SDBLOCKS_MAX_ROWS rows of each kind are kept
 *   (beyond, the rest are dropped and `b->dropped` counts them). Vat IDs
 *   are kept once each (a run has tens of vats, hundreds of thousands of
 *   rows). Any text is read without a crash (fuzz target
 *   tests/fuzz/fuzz_sdblocks.c). 0, -ENOMEM, or -EPROTO when the text is
 *   not an InfluxQL answer or holds an error.
 * - jd_verdicts_sdblocks_read() is the only I/O: each statement in, its rows out
 *   into `b` (readback/query.h's ps_rb_query; its codes, `err` its
 *   words). Runs on a worker thread; touches nothing but its arguments.
 * - jd_verdicts_sdblocks_add_block() and jd_verdicts_sdblocks_add_vat()
 *   append one row, a vat ID kept once (the parse's, and the rows held as
 *   sent, judging/verdicts_sdheld.h); 0 or -ENOMEM. No bound: the caller's.
 * - jd_verdicts_sdblocks_view() gives the judge's view (borrowing `b`);
 *   jd_verdicts_sdblocks_free() frees what `b` owns.
 */
#ifndef PS_JUDGING_VERDICTS_SDBLOCKS_H
#define PS_JUDGING_VERDICTS_SDBLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/config.h"
#include "verdict/slog_drift.h"

#define JD_VERDICTS_SDBLOCKS_MAX_ROWS ((size_t)1 << 20)

enum {
  JD_VERDICTS_SDBLOCKS_BLOCKS = 0,
  JD_VERDICTS_SDBLOCKS_BLOCK_VATS,
  JD_VERDICTS_SDBLOCKS_NSTATEMENTS
};

typedef struct jd_verdicts_sdblocks {
  ps_slog_drift_block *blocks;
  size_t nblocks, blocks_cap;
  ps_slog_drift_block_vat *vats;
  size_t nvats, vats_cap;
  char **ids; /* the vat IDs, each once; the rows point into them */
  size_t nids, ids_cap;
  size_t dropped;
} jd_verdicts_sdblocks;

int jd_verdicts_sdblocks_statement(int s, const char *run, const char *host, int64_t anchor_ns,
                                   ps_buf *q);
int jd_verdicts_sdblocks_parse(jd_verdicts_sdblocks *b, int s, const char *json, size_t len);
int jd_verdicts_sdblocks_read(const ps_config *cfg, const char *run, const char *host,
                              int64_t anchor_ns, jd_verdicts_sdblocks *b, ps_buf *err);
int jd_verdicts_sdblocks_add_block(jd_verdicts_sdblocks *b, const ps_slog_drift_block *row);
int jd_verdicts_sdblocks_add_vat(jd_verdicts_sdblocks *b, int stage, int64_t time_ns,
                                 const char *vat, double delivery_s);
ps_slog_drift_blocks jd_verdicts_sdblocks_view(const jd_verdicts_sdblocks *b);
void jd_verdicts_sdblocks_free(jd_verdicts_sdblocks *b);

#endif
