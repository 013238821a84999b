/*
 * reader_parser.h (private to agent/pipeline/reader*.c): a tracked file's parser, opened when first needed.
 *
 * Contract
 * - pl_reader_open_parser() opens the parser of `f` unless it has one. The
 *   head the format needs (formats/format.h) is read from `fd`, the open
 *   file, by input/feed.h: formats never read files. A parser that cannot
 *   open is logged (rate-limited, with the path) and -errno returned; the
 *   file is tried again at its next change.
 * - A line file's new parser is shown to the `parser_opened` hook (the run
 *   tracker restores the facts it learned before a restart).
 */
#ifndef PS_PIPELINE_READER_PARSER_H
#define PS_PIPELINE_READER_PARSER_H

#include "pipeline/reader.h"

int pl_reader_open_parser(pl_reader *rd, pl_file *f, int fd);

#endif
