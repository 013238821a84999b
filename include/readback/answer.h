/*
 * readback/answer: the one reader of InfluxDB's InfluxQL answers, for every
 * read perfship makes (judging, the report, the commands).
 *
 * Contract
 * - ps_rb_answer_parse() takes the text of one answer: one JSON document
 *   ({"results":[{"statement_id":N,"series":[...]}]}) or several after one
 *   another (a chunked answer: each chunk is a document, a statement's
 *   series may go on in the next chunk). Text that is not JSON, or a
 *   document of another shape, is an answer without rows: the reader never
 *   fails on shape (fuzzed by tests/fuzz/fuzz_rb_answer.c); -ENOMEM is its
 *   only error, and then nothing is held. ps_rb_answer_free() frees it
 *   (harmless after a failed parse).
 * - ps_rb_answer_next() steps to the next row of every series of every
 *   statement, in the answer's order, and returns it, or NULL at the end.
 *   A series without a list of column names, a row that is not a list, is
 *   skipped. ps_rb_answer_next_series() steps to the next series instead
 *   and returns its last row (a series without rows is skipped): what a
 *   read of "the newest of each group" wants.
 * - A row says which statement it answers (`statement`: the result's
 *   statement_id when it has one, else its place in the document), its
 *   series' `name`, `tags` (GROUP BY's object, may be NULL), `columns` and
 *   `values`. The cells are looked up by column name (a column InfluxDB
 *   adds or reorders changes nothing): ps_rb_cell() the cell or NULL,
 *   ps_rb_str() a string (NULL for anything else), ps_rb_num() a finite
 *   number (NAN for anything else), ps_rb_bool() 1/0 (-1 when not a
 *   boolean), ps_rb_tag() a tag from the series' tags, else a string column
 *   (SELECT * returns tags as columns); an empty value, which GROUP BY gives
 *   a series without the tag, is NULL. ps_rb_time_ns() the row's time (the
 *   client asks for epoch nanoseconds; 0 when none or beyond what InfluxDB
 *   stores), ps_rb_time_us() the same rounded to the whole microsecond
 *   (0 only beyond what an int64 holds),
 *   which gives a time perfship wrote back exactly (a JSON number is a
 *   double: near 1.7e18 it is off by up to 128 ns; times from the data are
 *   whole microseconds: core/point.h).
 * - ps_rb_answer_whole() says whether every document holds a list of
 *   results and none an error: a reader that must not take half an answer
 *   for the whole checks it first.
 * - ps_rb_answer_check() is the strict reading, for a reader that takes
 *   the whole answer or nothing (the judges' history): every document a
 *   list of results without an error, every series a list of string
 *   column names with "time" among them, tags strings or null, rows of as
 *   many cells, each time a number of nanoseconds an int64 holds, each
 *   column of `string_columns` (NULL-terminated, may be NULL) a string or
 *   null, every other a number or null. 0, or -EPROTO with `why` (may be
 *   NULL) saying the first thing that is not so.
 * - ps_rb_answer_error() is the text of the first "error" the answer holds
 *   (top level or of a statement), or NULL.
 * - The strings returned live as long as the answer.
 */
#ifndef PS_READBACK_ANSWER_H
#define PS_READBACK_ANSWER_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

struct cJSON;

typedef struct ps_rb_row {
  size_t statement;
  const char *name;            /* the series' measurement, may be NULL */
  const struct cJSON *tags;    /* object or NULL */
  const struct cJSON *columns; /* array of names */
  const struct cJSON *values;  /* this row's array */
} ps_rb_row;

typedef struct ps_rb_answer {
  struct cJSON **docs;
  size_t ndocs;
  /* the cursor */
  size_t doc, result_index;
  const struct cJSON *result, *series, *value;
  int started;
  ps_rb_row row;
} ps_rb_answer;

int ps_rb_answer_parse(ps_rb_answer *a, const char *json, size_t len);
void ps_rb_answer_free(ps_rb_answer *a);
const ps_rb_row *ps_rb_answer_next(ps_rb_answer *a);
const ps_rb_row *ps_rb_answer_next_series(ps_rb_answer *a);
void ps_rb_answer_rewind(ps_rb_answer *a);
int ps_rb_answer_whole(const ps_rb_answer *a);
int ps_rb_answer_check(const ps_rb_answer *a, const char *const *string_columns, ps_buf *why);
const char *ps_rb_answer_error(const ps_rb_answer *a);

const struct cJSON *ps_rb_cell(const ps_rb_row *r, const char *column);
const char *ps_rb_str(const ps_rb_row *r, const char *column);
double ps_rb_num(const ps_rb_row *r, const char *column);
int ps_rb_bool(const ps_rb_row *r, const char *column);
const char *ps_rb_tag(const ps_rb_row *r, const char *name);
int64_t ps_rb_time_ns(const ps_rb_row *r);
int64_t ps_rb_time_us(const ps_rb_row *r);

#endif
