/*
 * fuzz_feed: the synchronous reader (input/feed.h) and the head reader on
 * arbitrary file contents, line limits and end offsets.
 *
 * Input: byte 0 picks max_line (1..64), byte 1 the end offset (< 128: the
 * whole file, else 4 * (byte - 128)), the rest is the file. Invariants,
 * against a plain split of the bytes before the end offset at '\n': every
 * complete line reaches the parser once, in order, with its number and
 * without a trailing '\r', unless it is longer than max_line, in which case
 * exactly one reject names its number; the unterminated rest comes back as
 * the last line (or is rejected when too long); the head's first line is
 * the file's first line.
 * Seeds: tests/fuzz/corpus/feed/.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "input/feed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

typedef struct expect {
  const uint8_t *data;
  size_t end;     /* bytes the feed may read */
  size_t pos;     /* start of the next expected line */
  uint64_t line;  /* its number */
  size_t max_line;
} expect;

struct ps_parser {
  expect *x;
};

/* Line numbers of the rejects, in order, and how many were checked. */
static uint64_t rejects[4096];
static size_t nrejects, checked;

/* The next reject must name line `line`. */
static void take_reject(uint64_t line) {
  if (checked >= nrejects || rejects[checked] != line)
    abort();
  checked++;
}

/* Steps over the expected lines that are too long (each must have been
 * rejected) and returns the raw length of the next one, which must exist. */
static size_t next_kept(expect *x) {
  for (;;) {
    const uint8_t *nl = memchr(x->data + x->pos, '\n', x->end - x->pos);
    if (!nl)
      abort(); /* a complete line was handed over where none is */
    size_t raw = (size_t)(nl - (x->data + x->pos));
    if (raw <= x->max_line)
      return raw;
    take_reject(x->line);
    x->pos += raw + 1;
    x->line++;
  }
}

static int check_line(ps_parser *p, const char *s, size_t len, ps_emitter *em) {
  expect *x = p->x;
  size_t raw = next_kept(x);
  size_t want = raw && x->data[x->pos + raw - 1] == '\r' ? raw - 1 : raw;
  if (em->origin.line != x->line || len != want || memcmp(s, x->data + x->pos, len))
    abort();
  x->pos += raw + 1;
  x->line++;
  return 0;
}

static const ps_format_ops checker = {
    .name = "check", .needs = PS_FMT_NEEDS_FIRST_LINE, .line = check_line};

static int no_point(void *ctx, const ps_point *pt, const ps_origin *o) {
  (void)ctx;
  (void)pt;
  (void)o;
  abort();
}

static void on_reject(void *ctx, const ps_origin *o, const char *reason) {
  (void)ctx;
  if (!strstr(reason, "line longer than") || nrejects >= sizeof rejects / sizeof *rejects)
    abort();
  rejects[nrejects++] = o->line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  size_t max_line = (size_t)(data[0] % 64) + 1;
  uint64_t end_offset = data[1] < 128 ? UINT64_MAX : (uint64_t)(data[1] - 128) * 4;
  data += 2;
  size -= 2;
  fuzz_temp_file(path, sizeof path, "/tmp/fuzz-feed-XXXXXX");
  fuzz_write_file(path, data, size);
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    abort();

  ps_head_buf hb;
  if (ps_input_read_head(fd, path, &checker, PS_INPUT_LINES, &hb))
    abort();
  const uint8_t *first_nl = memchr(data, '\n', size);
  if (!first_nl != !hb.head.first_line)
    abort();
  if (first_nl) {
    size_t n = (size_t)(first_nl - data);
    if (n && data[n - 1] == '\r')
      n--;
    if (hb.head.first_len != n || memcmp(hb.head.first_line, data, n))
      abort();
  }
  ps_head_buf_free(&hb);

  expect x = {data, end_offset < size ? (size_t)end_offset : size, 0, 1, max_line};
  ps_parser p = {&x};
  ps_emitter em = {no_point, on_reject, NULL, {"fuzz", 0}};
  ps_feed_last last;
  ps_buf_init(&last.text, 0);
  nrejects = checked = 0;
  if (ps_feed_fd(fd, &checker, &p, &em, end_offset, max_line, &last))
    abort();
  /* complete lines after the last one handed over: all rejected */
  const uint8_t *nl;
  while ((nl = memchr(x.data + x.pos, '\n', x.end - x.pos))) {
    size_t raw = (size_t)(nl - (x.data + x.pos));
    if (raw <= max_line)
      abort(); /* a line that should have reached the parser */
    take_reject(x.line);
    x.pos += raw + 1;
    x.line++;
  }
  size_t rest = x.end - x.pos;
  if (rest > max_line) { /* an over-long unterminated rest: rejected */
    take_reject(x.line);
    if (last.text.len)
      abort();
  } else {
    size_t want = rest && x.data[x.end - 1] == '\r' ? rest - 1 : rest;
    /* an empty rest leaves the buffer unallocated: memcmp wants no NULL */
    if (last.text.len != want ||
        (want && (memcmp(last.text.data, x.data + x.pos, want) || last.line_no != x.line)))
      abort();
  }
  if (checked != nrejects)
    abort(); /* a reject for a line that was fine */
  ps_buf_free(&last.text);
  close(fd);
  return 0;
}
