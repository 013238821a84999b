/*
 * fuzz_tail: line framing on arbitrary file contents, line limits and read
 * sizes.
 *
 * Input: byte 0 picks max_line (1..64), byte 1 the read chunk (1..64), the
 * rest is the file. Invariants: every byte up to the last '\n' is accounted
 * for exactly once, as a returned line (plus its '\n', and a '\r' that was
 * stripped) or as a skipped over-long line; offsets are contiguous; a partial
 * last line is never returned; the buffer never holds much more than
 * max_line + one chunk.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "input/tail.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  size_t max_line = (size_t)(data[0] % 64) + 1, chunk = (size_t)(data[1] % 64) + 1;
  data += 2;
  size -= 2;
  fuzz_temp_file(path, sizeof path, "/tmp/fuzz-tail-XXXXXX");
  fuzz_write_file(path, data, size);
  size_t complete = 0; /* bytes up to and including the last '\n' */
  for (size_t i = size; i > 0; i--)
    if (data[i - 1] == '\n') {
      complete = i;
      break;
    }
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    abort();
  ps_tail t;
  ps_tail_init(&t, fd, 0, 1, max_line);
  uint64_t at = 0, line = 1;
  int skipping = 0;
  for (;;) {
    ps_tail_line ln;
    int r = ps_tail_next(&t, &ln);
    if (r == PS_TAIL_NONE) {
      long n = ps_tail_fill(&t, chunk);
      if (n < 0)
        abort();
      if (t.buf.cap > 2 * (max_line + chunk) + 512)
        abort();
      if (n == 0)
        break;
      continue;
    }
    if (r == PS_TAIL_LINE) {
      if (skipping || ln.start != at || ln.line_no != line || ln.len > max_line)
        abort();
      size_t raw = (size_t)(ln.end - ln.start) - 1; /* without '\n' */
      if (data[ln.end - 1] != '\n' || memcmp(ln.data, data + ln.start, ln.len) ||
          (raw != ln.len && !(raw == ln.len + 1 && data[ln.start + ln.len] == '\r')))
        abort();
      at = ln.end;
      line++;
      ps_tail_consume(&t);
    } else if (r == PS_TAIL_TOO_LONG) {
      if (skipping || ln.start != at || ln.line_no != line)
        abort();
      skipping = 1;
    } else if (r == PS_TAIL_SKIPPED) {
      if (!skipping || ln.end <= at || data[ln.end - 1] != '\n' ||
          memchr(data + at, '\n', (size_t)(ln.end - at) - 1))
        abort();
      skipping = 0;
      at = ln.end;
      line++;
    }
  }
  if (!skipping && at != complete)
    abort();
  if (ps_tail_offset(&t) > size)
    abort();
  ps_tail_free(&t);
  close(fd);
  return 0;
}
