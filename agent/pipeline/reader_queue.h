/*
 * reader_queue.h (private to agent/pipeline/reader*.c): the reader's work
 * queue, the files with something to read, in order. The stage's state
 * and contract are include/pipeline/reader.h.
 *
 * Contract
 * - pl_reader_enqueue() queues a file at the end (no-op when it is retired,
 *   already queued, or a stop began) and starts the reader's turn (the idle
 *   handle runs rd->turn) if it was not running: an agent with nothing
 *   queued sleeps in epoll.
 * - pl_reader_to_front() moves a queued file to the head: a file that holds
 *   a half-read record, or was paused by back-pressure, continues first.
 * - The queue links the files (pl_file.qnext); it owns none of them.
 */
#ifndef PS_PIPELINE_READER_QUEUE_H
#define PS_PIPELINE_READER_QUEUE_H

#include "pipeline/reader.h"

/* pl_reader_enqueue() is declared in pipeline/reader.h. */

/* The head of the queue, taken off it; NULL when empty. */
pl_file *pl_reader_dequeue(pl_reader *rd);
void pl_reader_to_front(pl_reader *rd, pl_file *f);

#endif
