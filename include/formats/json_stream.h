/*
 * json_stream: a push tokenizer for JSON documents too large to hold,
 * fed in pieces of any size (formats/benchmarker.c reads reports of
 * gigabytes through it).
 *
 * Contract
 * - ps_js_feed() takes the next bytes of the document; a token may span
 *   pieces. Each token is handed to the callback as it completes, with the
 *   byte offset where it began. A callback returning non-zero stops the
 *   stream (ps_js_feed() then returns PS_JS_STOPPED and takes no more).
 * - Strings (keys and values) are decoded (escapes, \u to UTF-8) into at
 *   most PS_JS_TEXT_MAX bytes; a longer one is still scanned whole and its
 *   token says `truncated` and its full encoded length, so a multi-megabyte
 *   value costs no memory. Numbers longer than that are a syntax error.
 * - Memory is fixed: this struct (nesting up to PS_JS_DEPTH_MAX).
 * - Syntax errors stop the stream with a reason and the byte offset;
 *   ps_js_finish() says whether the document ended complete.
 * - No I/O: a pure state machine.
 */
#ifndef PS_FORMATS_JSON_STREAM_H
#define PS_FORMATS_JSON_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define PS_JS_TEXT_MAX 4096
#define PS_JS_DEPTH_MAX 512

typedef enum ps_js_kind {
  PS_JS_OBJECT_BEGIN,
  PS_JS_OBJECT_END,
  PS_JS_ARRAY_BEGIN,
  PS_JS_ARRAY_END,
  PS_JS_KEY,
  PS_JS_STRING,
  PS_JS_NUMBER,
  PS_JS_TRUE,
  PS_JS_FALSE,
  PS_JS_NULL,
} ps_js_kind;

typedef struct ps_js_token {
  ps_js_kind kind;
  const char *text; /* KEY, STRING (decoded), NUMBER (as written); NUL-terminated */
  size_t len;
  int truncated;    /* a string longer than PS_JS_TEXT_MAX bytes */
  int has_nul;      /* a string holds \u0000: `text` is cut at it as a C string */
  uint64_t raw_len; /* a string's encoded length in the document */
  uint64_t offset;  /* byte where the token began */
} ps_js_token;

typedef int (*ps_js_cb)(void *ctx, const ps_js_token *tok);

enum { PS_JS_OK = 0, PS_JS_ERROR = -1, PS_JS_STOPPED = 1 };

typedef struct ps_json_stream {
  uint64_t offset;     /* bytes taken so far */
  uint64_t tok_offset; /* start of the token being read */
  uint64_t raw_len;
  int state, lex, esc_left, truncated, after_value, has_nul;
  unsigned esc_code, hi_surrogate;
  const char *literal;
  size_t lit_pos;
  size_t depth;
  unsigned char stack[PS_JS_DEPTH_MAX]; /* '{' or '[' per open container */
  size_t len;
  char text[PS_JS_TEXT_MAX + 8];
  const char *why; /* a syntax error, or NULL */
  uint64_t err_offset;
  int stopped;
} ps_json_stream;

void ps_js_init(ps_json_stream *js);
/* PS_JS_OK, PS_JS_ERROR (js->why, js->err_offset) or PS_JS_STOPPED. */
int ps_js_feed(ps_json_stream *js, const char *data, size_t len, ps_js_cb cb, void *ctx);
/* After the last piece: PS_JS_OK when one whole value was read (a number
 * ending the document is delivered now), else PS_JS_ERROR with a reason. */
int ps_js_finish(ps_json_stream *js, ps_js_cb cb, void *ctx);

#endif
