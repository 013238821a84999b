/*
 * jsonl_private.h (private to agent/formats/jsonl*.c): the jsonl parser's
 * state and what its two halves share. The format's design is told atop
 * jsonl.c; docs/schema.md "Generic sources" is the user's view.
 *
 * - jsonl_read.c: the JSON reader: one object per line, walked once,
 *   every scalar recorded as a leaf (flattened key, kind, value) in
 *   buffers the parser owns and reuses.
 * - jsonl.c: the ops table, and the leaves mapped to a point by the
 *   source configuration (tags, fields, declared types, the time key).
 */
#ifndef PS_FORMATS_JSONL_PRIVATE_H
#define PS_FORMATS_JSONL_PRIVATE_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "core/buf.h"
#include "formats/format.h"

#define TWO53 9007199254740992.0

enum { JV_NULL, JV_FALSE, JV_TRUE, JV_NUM, JV_STR };

/* Whether a number's text is already what the encoder would write for it
 * (ps_field.text), so it is copied instead of formatted. */
enum num_form {
  NUM_FORM_OTHER = 0, /* formatted from the value */
  NUM_FORM_WHOLE15,   /* integer digits, at most 15: an integer, or a whole float + ".0" */
  NUM_FORM_WHOLE18,   /* 16 to 18 integer digits: an integer only */
  NUM_FORM_DECIMAL,   /* a float written the shortest way (see read_number) */
};

typedef struct leaf {
  size_t key_off;
  int kind;
  double num;
  const char *num_text; /* the number as written */
  size_t num_len;
  enum num_form num_form;
  size_t str_off, str_len; /* unescaped string in the parser's text */
} leaf;

struct ps_parser {
  const ps_source_cfg *src;
  ps_buf text; /* flattened keys, unescaped strings, formatted tag values */
  leaf *leaves;
  size_t nleaves, leaves_cap;
  ps_tag *tags;
  size_t tags_cap;
  ps_field *fields;
  size_t fields_cap;
  ps_field *sort_tmp;
  size_t sort_tmp_cap;
  unsigned long arrays_skipped;
};

/* Grows an array to room for `need` elements (doubling from 16). 0 or
 * -ENOMEM. Inline: the reader calls it for every leaf. */
static inline int jsonl_grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return 0;
  size_t c = *cap ? *cap : 16;
  while (c < need)
    c *= 2;
  void *n = realloc(*arr, c * elem);
  if (!n)
    return -ENOMEM;
  *arr = n;
  *cap = c;
  return 0;
}

/* Reads one line into p->leaves (their text in p->text). 1 with the
 * leaves of a JSON object; 0 for a blank line or one rejected through
 * `em` (the reason names its column); -ENOMEM. */
int jsonl_read_line(ps_parser *p, const char *data, size_t len, ps_emitter *em);

#endif
