/*
 * fuzz_gzlines: arbitrary bytes as a slog.gz that may be cut, corrupt or
 * several members long, through the gzip line reader.
 *
 * Input: byte 0 picks the line window (1..256 bytes), the rest is the
 * file. Invariants: line numbers run 1, 2, ... without gaps; a line comes
 * whole (no tail) exactly when it fits the window, else with a head of the
 * window's size and a tail of PS_GZLINES_TAIL bytes, never more than its
 * length; the lines and their '\n's never exceed the bytes inflated; a
 * complete stream has no cut bytes and no break; a break's line number
 * is at most the one after the last line handed out.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "input/gzlines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t window = (size_t)data[0] + 1;
  if (window < PS_GZLINES_TAIL)
    window = PS_GZLINES_TAIL; /* the reader's own floor */
  fuzz_temp_file(path, sizeof path, "/tmp/fuzz-gzlines-XXXXXX");
  fuzz_write_file(path, data + 1, size - 1);
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    abort();
  ps_gzlines *g = NULL;
  if (ps_gzlines_open(&g, fd, window) != 0) {
    close(fd);
    return 0;
  }
  ps_gzline l;
  uint64_t expect = 1, total = 0;
  int rc;
  while ((rc = ps_gzlines_next(g, &l)) == 1) {
    if (l.line_no != expect++)
      abort();
    if (l.len <= window) {
      if (l.tail || l.head_len != l.len)
        abort();
    } else if (!l.tail || l.head_len != window || l.tail_len != PS_GZLINES_TAIL) {
      abort();
    }
    if (l.head_len && memchr(l.head, '\n', l.head_len))
      abort();
    total += l.len + 1;
  }
  const ps_gzlines_status *st = ps_gzlines_end(g);
  if (rc == 0 && total > st->out_bytes + 1) /* +1: a complete stream's last line may lack '\n' */
    abort();
  if (st->complete && (st->cut_bytes || st->corrupt || st->no_trailer))
    abort();
  /* a break is numbered after the lines handed out before it */
  if (rc == 0 && st->corrupt && (st->corrupt_line < 1 || st->corrupt_line > expect))
    abort();
  ps_gzlines_free(g);
  close(fd);
  return 0;
}
