/*
 * reader_parser.c: opening a tracked file's parser. See
 * agent/pipeline/reader_parser.h.
 */
#include "reader_parser.h"

#include <string.h>

#include "core/buf.h"
#include "core/log.h"
#include "input/feed.h"

/* Opens the file's parser; `fd` is the open file, from which the head the
 * format needs is read first (input/feed.h): formats never read files. */
int pl_reader_open_parser(pl_reader *rd, pl_file *f, int fd) {
  if (f->parser)
    return 0;
  ps_buf err;
  ps_buf_init(&err, 1024);
  ps_head_buf hb;
  int rc = ps_input_read_head(fd, f->path, f->ops, f->kind, &hb);
  if (rc == 0) {
    rc = f->ops->open(&f->parser, f->src, &hb.head, &err);
    ps_head_buf_free(&hb);
  }
  if (rc < 0) {
    ps_log_limited(PS_LOG_WARNING, "parse", pl_log_key("parser-open", f->path), 60, "%s: %s",
                   f->path, err.data ? err.data : strerror(-rc));
    f->parser = NULL;
  } else if (f->kind == PS_INPUT_LINES && rd->hooks.parser_opened) {
    rd->hooks.parser_opened(rd->hooks.ctx, f);
  }
  ps_buf_free(&err);
  return rc;
}
