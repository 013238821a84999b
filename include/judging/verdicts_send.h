/*
 * judging/verdicts_send: a list of verdicts out as perfship_verdict points,
 * in aux batches (pipeline/shared.h pl_aux_out), answered as one.
 *
 * Contract
 * - jd_verdicts_send() encodes every verdict of `l` (verdict/verdict.h)
 *   into batches of at most JD_VERDICTS_PER_BATCH points and sends them;
 *   `done` is called exactly once: with 1 when every batch was
 *   acknowledged, with 0 when one was not or could not be sent. With
 *   nothing to send, `done(arg, 1)` is called before it returns.
 * - The list may be freed as soon as it returns: the points are encoded.
 *   A verdict the encoder refuses is logged and left out.
 * - Returns 0, or -ENOMEM without sending anything and without `done`.
 * - `sent` (may be NULL) remembers the points acknowledged lately, one per
 *   series and time (a fixed table: a newer point takes an older one's
 *   slot). A point exactly as the one acknowledged for its series and time
 *   is not sent again: a run judged again with one figure more rewrites
 *   only what changed. The table is filled when `done` is about to say 1,
 *   so a point that was not acknowledged is sent again next time.
 */
#ifndef PS_JUDGING_VERDICTS_SEND_H
#define PS_JUDGING_VERDICTS_SEND_H

#include "pipeline/shared.h"
#include "verdict/verdict.h"

#define JD_VERDICTS_PER_BATCH 2000
#define JD_VERDICTS_SENT_SLOTS 4096

typedef struct jd_verdicts_sent {
  uint64_t key[JD_VERDICTS_SENT_SLOTS];     /* series and time */
  uint64_t content[JD_VERDICTS_SENT_SLOTS]; /* every field */
} jd_verdicts_sent;

int jd_verdicts_send(const pl_aux_out *out, jd_verdicts_sent *sent, const ps_verdict_list *l,
                     void (*done)(void *arg, int ok), void *arg);

#endif
