/*
 * reader_settle.h (private to agent/pipeline/reader*.c): waiting for a file to stop changing.
 *
 * Contract
 * - A document (results.json, Locust stats) is read once it has settled:
 *   watch.settle_ms without a change of size or modification time (at once
 *   in --once). pl_reader_doc_changed() is told of each change seen at its
 *   path; a document being sent is looked at again afterwards.
 * - A line file gone from its path is kept settle_ms for a producer that
 *   still writes to it (f->settle_due set by the lines reader), then queued
 *   to be retired.
 * - pl_reader_arm_settle() sets the one timer to the earliest settle_due;
 *   the timer is stopped when nothing waits or a stop began. Due files are
 *   queued (reader_queue.h).
 */
#ifndef PS_PIPELINE_READER_SETTLE_H
#define PS_PIPELINE_READER_SETTLE_H

#include "pipeline/reader.h"

/* pl_reader_doc_changed() is in pipeline/reader.h. */
void pl_reader_arm_settle(pl_reader *rd);

#endif
