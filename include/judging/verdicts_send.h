/*
 * judging/verdicts_send: a list of verdicts out as perfship_verdict points,
 * in aux batches (pipeline/shared.h pl_aux_out), answered as one.
 *
 * Contract
 * - pl_verdicts_send() encodes every verdict of `l` (verdict/verdict.h)
 *   into batches of at most PL_VERDICTS_PER_BATCH points and sends them;
 *   `done` is called exactly once: with 1 when every batch was
 *   acknowledged, with 0 when one was not or could not be sent. With
 *   nothing to send, `done(arg, 1)` is called before it returns.
 * - The list may be freed as soon as it returns: the points are encoded.
 *   A verdict the encoder refuses is logged and left out.
 * - Returns 0, or -ENOMEM without sending anything and without `done`.
 */
#ifndef PS_JUDGING_VERDICTS_SEND_H
#define PS_JUDGING_VERDICTS_SEND_H

#include "pipeline/shared.h"
#include "verdict/verdict.h"

#define PL_VERDICTS_PER_BATCH 2000

int pl_verdicts_send(const pl_aux_out *out, const ps_verdict_list *l,
                     void (*done)(void *arg, int ok), void *arg);

#endif
