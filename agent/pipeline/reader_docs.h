/*
 * reader_docs.h (private to agent/pipeline/reader*.c): reading a settled document whole and parsing it.
 *
 * Contract
 * - pl_reader_doc_turn() loads `f` (once settled; see reader_settle.h) and
 *   hands it to a fresh parser, unless its content hash is the one last
 *   sent: a rewritten results.json with the same contents sends nothing.
 *   A document larger than watch.max_line_bytes is skipped, counted and
 *   recorded with its path.
 * - It returns 1 when the document continues in the next turn (emitted
 *   over several turns, `yielded`), 0 otherwise; a document refused by
 *   back-pressure is `paused` and its parse resumes where it stopped.
 * - Parsed to the end, the parser's `finish` runs and the hash is the
 *   cursor's to commit once its points are acknowledged.
 */
#ifndef PS_PIPELINE_READER_DOCS_H
#define PS_PIPELINE_READER_DOCS_H

#include "pipeline/reader.h"

int pl_reader_doc_turn(pl_reader *rd, pl_file *f);

#endif
