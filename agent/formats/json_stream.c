/*
 * formats/json_stream.c: a push tokenizer for JSON (include/formats/json_stream.h).
 *
 * DESIGN
 * - One state for the structure (what may come next) and one for the
 *   lexeme being read (string, number, literal), so a token may end in a
 *   later piece. A number only ends at the byte after it, which is then
 *   read again in the structural state.
 * - Inside a string the bytes up to the next quote, backslash or control
 *   character are taken in one scan: query details are mostly long strings
 *   and this loop is where a gigabyte report spends its time.
 */
#include "formats/json_stream.h"

#include <string.h>

#include "core/jsontext.h"
#include "influx/numfmt.h"

enum {
  ST_VALUE,        /* a value must come */
  ST_ARRAY_FIRST,  /* after '[': a value or ']' */
  ST_OBJECT_FIRST, /* after '{': a key or '}' */
  ST_KEY,          /* after ',' in an object: a key */
  ST_COLON,
  ST_AFTER, /* after a value: ',' or the closer (or the end at top level) */
  ST_DONE,
};

enum { LEX_NONE, LEX_STRING, LEX_KEY, LEX_NUMBER, LEX_LITERAL };

void ps_js_init(ps_json_stream *js) {
  memset(js, 0, sizeof *js);
  js->state = ST_VALUE;
}

static int fail(ps_json_stream *js, const char *why, uint64_t at) {
  if (!js->why) {
    js->why = why;
    js->err_offset = at;
  }
  return PS_JS_ERROR;
}

static int deliver(ps_json_stream *js, ps_js_kind kind, ps_js_cb cb, void *ctx) {
  js->text[js->len] = '\0';
  ps_js_token t = {kind,        js->text,    js->len,       js->truncated,
                   js->has_nul, js->raw_len, js->tok_offset};
  if (cb(ctx, &t)) {
    js->stopped = 1;
    return PS_JS_STOPPED;
  }
  return PS_JS_OK;
}

/* The structure after a complete value. */
static void value_done(ps_json_stream *js) { js->state = js->depth ? ST_AFTER : ST_DONE; }

static void put_byte(ps_json_stream *js, unsigned char c) {
  if (js->len < PS_JS_TEXT_MAX)
    js->text[js->len++] = (char)c;
  else
    js->truncated = 1;
}

static void put_code_point(ps_json_stream *js, unsigned cp) {
  if (cp < 0x80) {
    put_byte(js, (unsigned char)cp);
  } else if (cp < 0x800) {
    put_byte(js, (unsigned char)(0xC0 | (cp >> 6)));
    put_byte(js, (unsigned char)(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    put_byte(js, (unsigned char)(0xE0 | (cp >> 12)));
    put_byte(js, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
    put_byte(js, (unsigned char)(0x80 | (cp & 0x3F)));
  } else {
    put_byte(js, (unsigned char)(0xF0 | (cp >> 18)));
    put_byte(js, (unsigned char)(0x80 | ((cp >> 12) & 0x3F)));
    put_byte(js, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
    put_byte(js, (unsigned char)(0x80 | (cp & 0x3F)));
  }
}

static int hex_value(unsigned char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* A \uXXXX escape is complete: surrogate pairs join, a lone half is U+FFFD. */
static void escape_code_done(ps_json_stream *js) {
  unsigned cp = js->esc_code;
  if (cp >= 0xD800 && cp < 0xDC00) {
    if (js->hi_surrogate)
      put_code_point(js, 0xFFFD);
    js->hi_surrogate = cp;
    return;
  }
  if (cp >= 0xDC00 && cp < 0xE000 && js->hi_surrogate) {
    cp = 0x10000 + ((js->hi_surrogate - 0xD800) << 10) + (cp - 0xDC00);
    js->hi_surrogate = 0;
  } else if (cp >= 0xDC00 && cp < 0xE000) {
    cp = 0xFFFD;
  }
  js->has_nul |= cp == 0;
  put_code_point(js, cp);
}

static void flush_surrogate(ps_json_stream *js) {
  if (js->hi_surrogate) {
    put_code_point(js, 0xFFFD);
    js->hi_surrogate = 0;
  }
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Whether any byte of the 8 at `p` ends a plain run of string bytes: a
 * quote, a backslash or a control character (the classic "has zero byte"
 * and "has byte less than" word tricks), so long strings go 8 bytes a step. */
static int word_has_stop(const char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  uint64_t q = v ^ (ONES * '"'), b = v ^ (ONES * '\\');
  uint64_t stop = ((q - ONES) & ~q) | ((b - ONES) & ~b) | ((v - ONES * 0x20) & ~v);
  return (stop & HIGHS) != 0;
}

/* The end of the plain run of string bytes starting at `i`. */
static size_t plain_run_end(const char *data, size_t len, size_t i) {
  while (i + 8 <= len && !word_has_stop(data + i))
    i += 8;
  while (i < len && data[i] != '"' && data[i] != '\\' && (unsigned char)data[i] >= 0x20)
    i++;
  return i;
}

/* Reads string bytes from data[*i]; returns 1 when the string ended. */
static int string_step(ps_json_stream *js, const char *data, size_t len, size_t *i) {
  while (*i < len) {
    unsigned char c = (unsigned char)data[*i];
    if (js->esc_left == 0) {
      size_t start = *i;
      *i = plain_run_end(data, len, *i);
      size_t n = *i - start;
      if (n) {
        flush_surrogate(js);
        size_t room = js->len < PS_JS_TEXT_MAX ? PS_JS_TEXT_MAX - js->len : 0;
        size_t take = n < room ? n : room;
        memcpy(js->text + js->len, data + start, take);
        js->len += take;
        if (take < n)
          js->truncated = 1;
        js->raw_len += n;
      }
      if (*i >= len)
        return 0;
      c = (unsigned char)data[*i];
      (*i)++;
      js->raw_len++;
      if (c == '"') {
        flush_surrogate(js);
        return 1;
      }
      if (c < 0x20)
        return fail(js, "control character in a string", js->offset + *i - 1);
      js->esc_left = -1; /* backslash */
      continue;
    }
    (*i)++;
    js->raw_len++;
    if (js->esc_left == -1) {
      static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
      const char *at = c ? strchr(from, c) : NULL;
      if (c == 'u') {
        js->esc_left = 4;
        js->esc_code = 0;
      } else if (at) {
        flush_surrogate(js);
        put_byte(js, (unsigned char)to[at - from]);
        js->esc_left = 0;
      } else {
        return fail(js, "invalid escape in a string", js->offset + *i - 1);
      }
      continue;
    }
    int h = hex_value(c);
    if (h < 0)
      return fail(js, "invalid \\u escape in a string", js->offset + *i - 1);
    js->esc_code = (js->esc_code << 4) | (unsigned)h;
    if (--js->esc_left == 0)
      escape_code_done(js);
  }
  return 0;
}

static int number_end(ps_json_stream *js, ps_js_cb cb, void *ctx) {
  js->lex = LEX_NONE;
  if (ps_json_number_end(js->text, js->text + js->len) != js->text + js->len)
    return fail(js, "invalid number", js->tok_offset);
  value_done(js);
  return deliver(js, PS_JS_NUMBER, cb, ctx);
}

static void begin_token(ps_json_stream *js, int lex, uint64_t at) {
  js->lex = lex;
  js->tok_offset = at;
  js->len = 0;
  js->truncated = 0;
  js->has_nul = 0;
  js->raw_len = 0;
  js->esc_left = 0;
  js->hi_surrogate = 0;
}

static int open_container(ps_json_stream *js, unsigned char c, uint64_t at, ps_js_cb cb,
                          void *ctx) {
  if (js->depth >= PS_JS_DEPTH_MAX)
    return fail(js, "nested too deeply", at);
  js->stack[js->depth++] = c;
  js->state = c == '{' ? ST_OBJECT_FIRST : ST_ARRAY_FIRST;
  js->tok_offset = at;
  js->len = 0;
  js->truncated = js->has_nul = 0;
  return deliver(js, c == '{' ? PS_JS_OBJECT_BEGIN : PS_JS_ARRAY_BEGIN, cb, ctx);
}

static int close_container(ps_json_stream *js, unsigned char c, uint64_t at, ps_js_cb cb,
                           void *ctx) {
  unsigned char open = c == '}' ? '{' : '[';
  if (!js->depth || js->stack[js->depth - 1] != open)
    return fail(js, c == '}' ? "unexpected '}'" : "unexpected ']'", at);
  js->depth--;
  value_done(js);
  js->tok_offset = at;
  js->len = 0;
  js->truncated = js->has_nul = 0;
  return deliver(js, c == '}' ? PS_JS_OBJECT_END : PS_JS_ARRAY_END, cb, ctx);
}

static int start_value(ps_json_stream *js, unsigned char c, uint64_t at, ps_js_cb cb, void *ctx) {
  if (c == '{' || c == '[')
    return open_container(js, c, at, cb, ctx);
  if (c == '"') {
    begin_token(js, LEX_STRING, at);
    return PS_JS_OK;
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    begin_token(js, LEX_NUMBER, at);
    js->text[js->len++] = (char)c;
    return PS_JS_OK;
  }
  const char *lit = c == 't' ? "true" : c == 'f' ? "false" : c == 'n' ? "null" : NULL;
  if (!lit)
    return fail(js, "unexpected character", at);
  begin_token(js, LEX_LITERAL, at);
  js->literal = lit;
  js->lit_pos = 1;
  return PS_JS_OK;
}

/* One structural byte (not whitespace). */
static int structure_byte(ps_json_stream *js, unsigned char c, uint64_t at, ps_js_cb cb,
                          void *ctx) {
  switch (js->state) {
  case ST_ARRAY_FIRST:
    if (c == ']')
      return close_container(js, c, at, cb, ctx);
    return start_value(js, c, at, cb, ctx);
  case ST_VALUE: return start_value(js, c, at, cb, ctx);
  case ST_OBJECT_FIRST:
    if (c == '}')
      return close_container(js, c, at, cb, ctx);
    /* fallthrough */
  case ST_KEY:
    if (c != '"')
      return fail(js, "expected a member name", at);
    begin_token(js, LEX_KEY, at);
    return PS_JS_OK;
  case ST_COLON:
    if (c != ':')
      return fail(js, "expected ':'", at);
    js->state = ST_VALUE;
    return PS_JS_OK;
  case ST_AFTER:
    if (c == ',') {
      js->state = js->stack[js->depth - 1] == '{' ? ST_KEY : ST_VALUE;
      return PS_JS_OK;
    }
    if (c == '}' || c == ']')
      return close_container(js, c, at, cb, ctx);
    return fail(js, js->stack[js->depth - 1] == '{' ? "expected ',' or '}'" : "expected ',' or ']'",
                at);
  default: return fail(js, "text after the document", at);
  }
}

static int lexeme_step(ps_json_stream *js, const char *data, size_t len, size_t *i, ps_js_cb cb,
                       void *ctx) {
  if (js->lex == LEX_STRING || js->lex == LEX_KEY) {
    int done = string_step(js, data, len, i);
    if (done <= 0)
      return done;
    int key = js->lex == LEX_KEY;
    js->lex = LEX_NONE;
    if (key) {
      js->state = ST_COLON;
      return deliver(js, PS_JS_KEY, cb, ctx);
    }
    value_done(js);
    return deliver(js, PS_JS_STRING, cb, ctx);
  }
  if (js->lex == LEX_NUMBER) {
    while (*i < len && ps_number_byte((unsigned char)data[*i])) {
      if (js->len >= 64)
        return fail(js, "number too long", js->tok_offset);
      js->text[js->len++] = data[(*i)++];
    }
    return *i < len ? number_end(js, cb, ctx) : PS_JS_OK;
  }
  while (*i < len && js->literal[js->lit_pos]) {
    if (data[*i] != js->literal[js->lit_pos])
      return fail(js, "invalid literal", js->offset + *i);
    (*i)++;
    js->lit_pos++;
  }
  if (js->literal[js->lit_pos])
    return PS_JS_OK;
  js->lex = LEX_NONE;
  value_done(js);
  ps_js_kind k = js->literal[0] == 't'   ? PS_JS_TRUE
                 : js->literal[0] == 'f' ? PS_JS_FALSE
                                         : PS_JS_NULL;
  return deliver(js, k, cb, ctx);
}

int ps_js_feed(ps_json_stream *js, const char *data, size_t len, ps_js_cb cb, void *ctx) {
  if (js->why)
    return PS_JS_ERROR;
  if (js->stopped)
    return PS_JS_STOPPED;
  size_t i = 0;
  int rc = PS_JS_OK;
  while (i < len && rc == PS_JS_OK) {
    if (js->lex != LEX_NONE) {
      rc = lexeme_step(js, data, len, &i, cb, ctx);
      continue;
    }
    unsigned char c = (unsigned char)data[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      i++;
      continue;
    }
    i++;
    rc = structure_byte(js, c, js->offset + i - 1, cb, ctx);
  }
  js->offset += i;
  return rc;
}

int ps_js_finish(ps_json_stream *js, ps_js_cb cb, void *ctx) {
  if (js->why)
    return PS_JS_ERROR;
  if (js->stopped)
    return PS_JS_STOPPED;
  if (js->lex == LEX_NUMBER) {
    int rc = number_end(js, cb, ctx);
    if (rc != PS_JS_OK)
      return rc;
  }
  if (js->state != ST_DONE || js->lex != LEX_NONE)
    return fail(js, "unexpected end", js->offset);
  return PS_JS_OK;
}
