/*
 * input/gzlines.c: lines out of a gzip stream that may have no end yet.
 * See include/input/gzlines.h.
 *
 * Design
 * - zlib's gz* file API treats a missing trailer as an error and hides
 *   where a member ends, so the framing is done here with inflate() on a
 *   raw read(2) loop: a member begins at the gzip magic, inflate says when
 *   it ended (trailer checked), and what follows is either the next
 *   member or garbage (docs/loadgen.md "Slogs": the loadgen writes one
 *   member per stage; a concatenated file is still read whole).
 * - A line that fits the decompressed chunk is handed out in place (no
 *   copy): the usual slog line is a few hundred bytes. Only a line split
 *   across chunks, or longer than the window, goes through the line
 *   buffer, and of a long line only the window and the last bytes are
 *   kept, so an 8 MB create-vat line costs no 8 MB (docs/benchmarks.md).
 */
#include "input/gzlines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#define IN_CAP ((size_t)128 << 10)
#define OUT_CAP ((size_t)256 << 10)
#define DEFAULT_WINDOW ((size_t)64 << 10)

struct ps_gzlines {
  int fd;
  z_stream z;
  int z_ready;
  int in_member; /* inflate is inside a member */
  int seeking;   /* after a break: skipping to the next member header */
  int eof;
  int failed;
  unsigned char *in;
  size_t in_pos, in_len;
  unsigned char *out;
  size_t out_pos, out_len;
  size_t window;
  char *lbuf;       /* head of a line assembled across chunks */
  size_t lbuf_len;  /* bytes of the head held */
  uint64_t llen;    /* the assembled line's length so far */
  char tbuf[PS_GZLINES_TAIL];
  size_t tbuf_len;
  int reset_line;   /* the assembled line was handed out */
  int break_after;  /* a break noted once the chunk's lines are out */
  char break_why[128];
  uint64_t line_no;
  ps_gzlines_status st;
};

int ps_gzlines_open(ps_gzlines **out, int fd, size_t window) {
  *out = NULL;
  ps_gzlines *r = calloc(1, sizeof *r);
  if (!r)
    return -ENOMEM;
  r->fd = fd;
  r->window = window ? window : DEFAULT_WINDOW;
  if (r->window < PS_GZLINES_TAIL) /* a long line's tail lies inside it */
    r->window = PS_GZLINES_TAIL;
  r->in = malloc(IN_CAP);
  r->out = malloc(OUT_CAP);
  r->lbuf = malloc(r->window);
  if (!r->in || !r->out || !r->lbuf || inflateInit2(&r->z, 16 + MAX_WBITS) != Z_OK) {
    free(r->in);
    free(r->out);
    free(r->lbuf);
    free(r);
    return -ENOMEM;
  }
  r->z_ready = 1;
  *out = r;
  return 0;
}

void ps_gzlines_free(ps_gzlines *r) {
  if (!r)
    return;
  if (r->z_ready)
    inflateEnd(&r->z);
  free(r->in);
  free(r->out);
  free(r->lbuf);
  free(r);
}

const ps_gzlines_status *ps_gzlines_end(const ps_gzlines *r) { return &r->st; }

void ps_gzlines_again(ps_gzlines *r) {
  if (r->failed || r->st.complete)
    return;
  r->eof = 0;
  r->st.no_trailer = 0;
  r->st.cut_bytes = 0;
}

/* More compressed input; keeps the unread rest. 0, or a negative errno. */
static int fill(ps_gzlines *r) {
  if (r->in_pos > 0) {
    memmove(r->in, r->in + r->in_pos, r->in_len - r->in_pos);
    r->in_len -= r->in_pos;
    r->in_pos = 0;
  }
  while (r->in_len < IN_CAP) {
    ssize_t n = read(r->fd, r->in + r->in_len, IN_CAP - r->in_len);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (n == 0) {
      r->eof = 1;
      break;
    }
    r->in_len += (size_t)n;
    r->st.in_bytes += (uint64_t)n;
    break;
  }
  return 0;
}

static void line_drop(ps_gzlines *r) {
  r->lbuf_len = 0;
  r->llen = 0;
  r->tbuf_len = 0;
}

static void note_break(ps_gzlines *r, const char *why) {
  if (r->st.corrupt++ == 0) {
    r->st.corrupt_line = r->line_no + 1;
    snprintf(r->st.message, sizeof r->st.message, "%s", why ? why : "corrupt data");
  }
  /* The line in progress has lost bytes: a line made of both sides of
   * the break would be a lie. */
  line_drop(r);
  r->in_member = 0;
  r->seeking = 1;
}

/* Append a piece of the line being assembled. */
static void line_add(ps_gzlines *r, const unsigned char *p, size_t n) {
  if (r->lbuf_len < r->window) {
    size_t take = r->window - r->lbuf_len;
    if (take > n)
      take = n;
    memcpy(r->lbuf + r->lbuf_len, p, take);
    r->lbuf_len += take;
  }
  r->llen += n;
  if (r->llen > r->window) { /* keep the last bytes for the tail */
    if (n >= PS_GZLINES_TAIL) {
      memcpy(r->tbuf, p + n - PS_GZLINES_TAIL, PS_GZLINES_TAIL);
      r->tbuf_len = PS_GZLINES_TAIL;
    } else {
      size_t keep = r->tbuf_len + n > PS_GZLINES_TAIL ? PS_GZLINES_TAIL - n : r->tbuf_len;
      memmove(r->tbuf, r->tbuf + r->tbuf_len - keep, keep);
      memcpy(r->tbuf + keep, p, n);
      r->tbuf_len = keep + n;
    }
  }
}

/* The assembled line as a ps_gzline. Its tail is the last bytes of the
 * line, which may overlap the head when the line is barely longer than
 * the window; that is fine for a reader of the end. */
static int line_emit(ps_gzlines *r, ps_gzline *line) {
  line->head = r->lbuf;
  line->head_len = r->lbuf_len;
  line->len = r->llen;
  if (r->llen > r->window) {
    if (r->tbuf_len < PS_GZLINES_TAIL && r->llen >= PS_GZLINES_TAIL) {
      /* the tail buffer began mid-line: fill its front from the head */
      size_t need = PS_GZLINES_TAIL - r->tbuf_len;
      memmove(r->tbuf + need, r->tbuf, r->tbuf_len);
      memcpy(r->tbuf, r->lbuf + r->lbuf_len - need, need);
      r->tbuf_len = PS_GZLINES_TAIL;
    }
    line->tail = r->tbuf;
    line->tail_len = r->tbuf_len;
  } else {
    line->tail = NULL;
    line->tail_len = 0;
  }
  line->line_no = ++r->line_no;
  r->reset_line = 1;
  return 1;
}

/* Position of the gzip magic (1f 8b 08) in the unread input, or in_len. */
static size_t find_magic(const ps_gzlines *r, size_t from) {
  for (size_t i = from; i + 2 < r->in_len; i++) {
    const unsigned char *q = memchr(r->in + i, 0x1f, r->in_len - i);
    if (!q)
      return r->in_len;
    i = (size_t)(q - r->in);
    if (i + 2 < r->in_len && q[1] == 0x8b && q[2] == 8)
      return i;
  }
  return r->in_len;
}

/* inflate() stopped on bad data, having started at in[from]. What it gave
 * before it stopped is handed out as zcat writes it: a CRC or length error
 * comes after the member's last byte, so dropping the chunk lost up to
 * 256 KiB of good lines (a small stage's all). Only the line the break
 * cuts is dropped, once the lines before it are out (ps_gzlines_next), so
 * the break is numbered where it happened. The search for the next member
 * starts where inflate stopped (a member may follow the trailer whose CRC
 * was wrong), one byte on only if it took none. 1: bytes to hand out. */
static int data_error(ps_gzlines *r, size_t from) {
  if (r->in_pos == from && r->in_pos < r->in_len)
    r->in_pos++;
  if (!r->out_len) {
    note_break(r, r->z.msg);
    return 0;
  }
  snprintf(r->break_why, sizeof r->break_why, "%s", r->z.msg ? r->z.msg : "corrupt data");
  r->break_after = 1;
  r->in_member = 0;
  r->seeking = 1;
  return 1;
}

/* Decompressed bytes into r->out. 1: some; 0: the stream is over;
 * negative errno. */
static int inflate_more(ps_gzlines *r) {
  for (;;) {
    if (!r->in_member) {
      if (r->in_len - r->in_pos < 3 && !r->eof) {
        int rc = fill(r);
        if (rc)
          return rc;
        continue;
      }
      if (r->in_len - r->in_pos < 3) {
        if (r->in_len > r->in_pos && !r->seeking)
          note_break(r, "bytes after the last gzip member");
        r->in_pos = r->in_len;
        return 0;
      }
      const unsigned char *h = r->in + r->in_pos;
      if (!(h[0] == 0x1f && h[1] == 0x8b && h[2] == 8)) {
        if (!r->seeking)
          note_break(r, r->st.members ? "bytes after a gzip member that are no gzip member"
                                      : "not a gzip file");
        size_t at = find_magic(r, r->in_pos + 1);
        /* keep two bytes: a magic may straddle the next read */
        r->in_pos = at < r->in_len ? at : (r->in_len > r->in_pos + 2 ? r->in_len - 2 : r->in_pos);
        if (at >= r->in_len) {
          if (r->eof) {
            r->in_pos = r->in_len;
            return 0;
          }
          int rc = fill(r);
          if (rc)
            return rc;
        }
        continue;
      }
      if (inflateReset2(&r->z, 16 + MAX_WBITS) != Z_OK)
        return -ENOMEM;
      r->in_member = 1;
      r->seeking = 0;
      r->st.members++;
    }
    if (r->in_pos == r->in_len && !r->eof) {
      int rc = fill(r);
      if (rc)
        return rc;
    }
    r->z.next_in = r->in + r->in_pos;
    r->z.avail_in = (uInt)(r->in_len - r->in_pos);
    r->z.next_out = r->out;
    r->z.avail_out = (uInt)OUT_CAP;
    size_t from = r->in_pos;
    int zr = inflate(&r->z, Z_NO_FLUSH);
    r->in_pos = r->in_len - r->z.avail_in;
    r->out_pos = 0;
    r->out_len = OUT_CAP - r->z.avail_out;
    r->st.out_bytes += r->out_len;
    if (zr == Z_STREAM_END) {
      r->in_member = 0;
      if (r->out_len)
        return 1;
      continue;
    }
    if (zr == Z_MEM_ERROR)
      return -ENOMEM;
    if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR) {
      if (data_error(r, from))
        return 1;
      continue;
    }
    if (r->out_len)
      return 1;
    if (r->in_pos == r->in_len && r->eof) { /* a member without its end */
      r->st.no_trailer = 1;
      return 0;
    }
  }
}

int ps_gzlines_next(ps_gzlines *r, ps_gzline *line) {
  if (r->failed)
    return -EIO;
  if (r->reset_line) {
    line_drop(r);
    r->reset_line = 0;
  }
  for (;;) {
    if (r->out_pos < r->out_len) {
      unsigned char *s = r->out + r->out_pos;
      size_t avail = r->out_len - r->out_pos;
      unsigned char *nl = memchr(s, '\n', avail);
      if (!nl) {
        line_add(r, s, avail);
        r->out_pos = r->out_len;
        continue;
      }
      size_t n = (size_t)(nl - s);
      r->out_pos += n + 1;
      if (r->llen == 0) { /* whole in this chunk: in place */
        line->head = (const char *)s;
        line->len = n;
        line->line_no = ++r->line_no;
        if (n <= r->window) {
          line->head_len = n;
          line->tail = NULL;
          line->tail_len = 0;
        } else {
          line->head_len = r->window;
          line->tail = (const char *)nl - PS_GZLINES_TAIL;
          line->tail_len = PS_GZLINES_TAIL;
        }
        return 1;
      }
      line_add(r, s, n);
      return line_emit(r, line);
    }
    if (r->break_after) {
      r->break_after = 0;
      note_break(r, r->break_why);
    }
    int rc = inflate_more(r);
    if (rc < 0) {
      r->failed = 1;
      return rc;
    }
    if (rc == 0) {
      r->st.complete = r->st.members > 0 && !r->st.no_trailer && r->st.corrupt == 0 &&
                       !r->in_member;
      if (r->llen) {
        if (r->st.complete)
          return line_emit(r, line);
        r->st.cut_bytes = r->llen; /* kept: ps_gzlines_again() may finish it */
      }
      return 0;
    }
  }
}
