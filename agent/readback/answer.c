/*
 * readback/answer.c: the InfluxQL answer reader (include/readback/answer.h).
 *
 * DESIGN
 * - The answer is parsed whole (cJSON) and walked in place: a reader asks
 *   for rows, never copies them. A chunked answer is a list of documents
 *   read one after another with cJSON's end pointer; whatever follows the
 *   last document that parses is ignored, as the shape of anything else is.
 * - Cells are found by column name on each call: the answers perfship asks
 *   for have a handful of columns, and a lookup by name keeps a reader
 *   true when the server reorders or adds columns.
 */
#include "readback/answer.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

static int add_doc(ps_rb_answer *a, cJSON *doc) {
  cJSON **d = realloc(a->docs, (a->ndocs + 1) * sizeof *d);
  if (!d) {
    cJSON_Delete(doc);
    return -ENOMEM;
  }
  a->docs = d;
  a->docs[a->ndocs++] = doc;
  return 0;
}

int ps_rb_answer_parse(ps_rb_answer *a, const char *json, size_t len) {
  memset(a, 0, sizeof *a);
  const char *p = json, *end = json ? json + len : NULL;
  while (p && p < end) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
      p++;
    if (p == end)
      break;
    const char *after = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &after, 0);
    if (!doc)
      break; /* not JSON: no (more) rows */
    int rc = add_doc(a, doc);
    if (rc) {
      ps_rb_answer_free(a);
      return rc;
    }
    if (!after || after <= p)
      break;
    p = after;
  }
  return 0;
}

void ps_rb_answer_free(ps_rb_answer *a) {
  for (size_t i = 0; i < a->ndocs; i++)
    cJSON_Delete(a->docs[i]);
  free(a->docs);
  memset(a, 0, sizeof *a);
}

static size_t statement_of(const cJSON *result, size_t index) {
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(result, "statement_id");
  return cJSON_IsNumber(id) && id->valuedouble >= 0 && id->valuedouble < 1e9
             ? (size_t)id->valuedouble
             : index;
}

/* Steps to the next series that has a list of column names; 0 at the end. */
static int next_series(ps_rb_answer *a) {
  for (;;) {
    if (a->series)
      a->series = a->series->next;
    while (!a->series) {
      if (a->result) {
        a->result = a->result->next;
        a->result_index++;
      } else if (!a->started) {
        a->started = 1;
        a->doc = 0;
        a->result_index = 0;
        a->result = a->ndocs ? cJSON_GetObjectItemCaseSensitive(a->docs[0], "results") : NULL;
        a->result = cJSON_IsArray(a->result) ? a->result->child : NULL;
      }
      while (!a->result && a->doc + 1 < a->ndocs) {
        a->doc++;
        a->result_index = 0;
        const cJSON *results = cJSON_GetObjectItemCaseSensitive(a->docs[a->doc], "results");
        a->result = cJSON_IsArray(results) ? results->child : NULL;
      }
      if (!a->result)
        return 0;
      const cJSON *list = cJSON_GetObjectItemCaseSensitive(a->result, "series");
      a->series = cJSON_IsArray(list) ? list->child : NULL;
    }
    const cJSON *columns = cJSON_GetObjectItemCaseSensitive(a->series, "columns");
    if (!cJSON_IsArray(columns))
      continue;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(a->series, "name");
    const cJSON *tags = cJSON_GetObjectItemCaseSensitive(a->series, "tags");
    a->row = (ps_rb_row){statement_of(a->result, a->result_index),
                         cJSON_IsString(name) ? name->valuestring : NULL,
                         cJSON_IsObject(tags) ? tags : NULL, columns, NULL};
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(a->series, "values");
    a->value = cJSON_IsArray(values) ? values->child : NULL;
    return 1;
  }
}

void ps_rb_answer_rewind(ps_rb_answer *a) {
  a->doc = a->result_index = 0;
  a->result = a->series = a->value = NULL;
  a->started = 0;
}

/* a->value is the next row to hand out of the current series. */
const ps_rb_row *ps_rb_answer_next(ps_rb_answer *a) {
  for (;;) {
    while (!a->value)
      if (!next_series(a))
        return NULL;
    const cJSON *v = a->value;
    a->value = v->next;
    if (cJSON_IsArray(v)) {
      a->row.values = v;
      return &a->row;
    }
  }
}

const ps_rb_row *ps_rb_answer_next_series(ps_rb_answer *a) {
  while (next_series(a)) {
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(a->series, "values");
    const cJSON *last = cJSON_GetArrayItem(values, cJSON_GetArraySize(values) - 1);
    a->value = NULL;
    if (cJSON_IsArray(last)) {
      a->row.values = last;
      return &a->row;
    }
  }
  return NULL;
}

int ps_rb_answer_whole(const ps_rb_answer *a) {
  for (size_t i = 0; i < a->ndocs; i++) {
    const cJSON *results = cJSON_GetObjectItemCaseSensitive(a->docs[i], "results");
    if (!cJSON_IsArray(results))
      return 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, results) {
      if (cJSON_GetObjectItemCaseSensitive(r, "error"))
        return 0;
    }
  }
  return a->ndocs > 0;
}

const char *ps_rb_answer_error(const ps_rb_answer *a) {
  for (size_t i = 0; i < a->ndocs; i++) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(a->docs[i], "error");
    if (cJSON_IsString(e))
      return e->valuestring;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(a->docs[i], "results")) {
      e = cJSON_GetObjectItemCaseSensitive(r, "error");
      if (cJSON_IsString(e))
        return e->valuestring;
    }
  }
  return NULL;
}

const cJSON *ps_rb_cell(const ps_rb_row *r, const char *column) {
  int i = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, r->columns) {
    if (cJSON_IsString(c) && strcmp(c->valuestring, column) == 0)
      return cJSON_GetArrayItem(r->values, i);
    i++;
  }
  return NULL;
}

const char *ps_rb_str(const ps_rb_row *r, const char *column) {
  const cJSON *c = ps_rb_cell(r, column);
  return cJSON_IsString(c) ? c->valuestring : NULL;
}

double ps_rb_num(const ps_rb_row *r, const char *column) {
  const cJSON *c = ps_rb_cell(r, column);
  return cJSON_IsNumber(c) && isfinite(c->valuedouble) ? c->valuedouble : NAN;
}

int ps_rb_bool(const ps_rb_row *r, const char *column) {
  const cJSON *c = ps_rb_cell(r, column);
  return cJSON_IsBool(c) ? cJSON_IsTrue(c) : -1;
}

const char *ps_rb_tag(const ps_rb_row *r, const char *name) {
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(r->tags, name);
  if (!cJSON_IsString(t))
    t = ps_rb_cell(r, name);
  return cJSON_IsString(t) && t->valuestring[0] ? t->valuestring : NULL;
}

int64_t ps_rb_time_ns(const ps_rb_row *r) {
  double t = ps_rb_num(r, "time");
  /* beyond ±2^62 is no time InfluxDB stores; keep the cast defined */
  return isnan(t) || fabs(t) > 4.6e18 ? 0 : (int64_t)t;
}

int64_t ps_rb_time_us(const ps_rb_row *r) {
  double t = ps_rb_num(r, "time");
  return isnan(t) || fabs(t) >= 9.2e18 ? 0 : (int64_t)llround(t / 1000.0) * 1000;
}

/* --- the strict check ------------------------------------------------------ */

static int is_string_column(const char *name, const char *const *strings) {
  for (size_t i = 0; strings && strings[i]; i++)
    if (strcmp(strings[i], name) == 0)
      return 1;
  return 0;
}

/* A series' column names: strings, "time" among them (its index). */
static long time_column(const cJSON *cols, ps_buf *why) {
  long time_col = -1, n = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, cols) {
    if (!cJSON_IsString(c)) {
      ps_buf_puts(why, "a column name that is not a string");
      return -2;
    }
    if (strcmp(c->valuestring, "time") == 0)
      time_col = n;
    n++;
  }
  if (time_col < 0)
    ps_buf_puts(why, "no time column");
  return time_col;
}

static int row_ok(const cJSON *cols, const cJSON *r, long k, long time_col,
                  const char *const *strings, ps_buf *why) {
  int n = cJSON_GetArraySize(cols);
  if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != n) {
    ps_buf_printf(why, "row %ld is not a list of %d values", k + 1, n);
    return 0;
  }
  long i = 0;
  const cJSON *v, *c = cols->child;
  cJSON_ArrayForEach(v, r) {
    int is_str = is_string_column(c->valuestring, strings);
    /* a time no int64 of nanoseconds holds is none (the fuzz target
     * found 1.6e20 overflowing the microsecond rounding) */
    int ok = i == time_col ? cJSON_IsNumber(v) && fabs(v->valuedouble) < 9.2e18
             : is_str      ? cJSON_IsString(v) || cJSON_IsNull(v)
                           : cJSON_IsNumber(v) || cJSON_IsNull(v);
    if (!ok) {
      ps_buf_printf(why, "row %ld: %s is not %s", k + 1, c->valuestring,
                    i == time_col ? "a time in nanoseconds"
                    : is_str      ? "a string"
                                  : "a number");
      return 0;
    }
    i++;
    c = c->next;
  }
  return 1;
}

static int series_ok(const cJSON *series, const char *const *strings, ps_buf *why) {
  const cJSON *cols = cJSON_GetObjectItemCaseSensitive(series, "columns");
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(series, "values");
  const cJSON *tags = cJSON_GetObjectItemCaseSensitive(series, "tags");
  if (!cJSON_IsObject(series) || !cJSON_IsArray(cols) || (rows && !cJSON_IsArray(rows)) ||
      (tags && !cJSON_IsObject(tags))) {
    ps_buf_puts(why, "a series without a list of columns and of rows");
    return 0;
  }
  long time_col = time_column(cols, why);
  if (time_col < 0)
    return 0;
  const cJSON *tag;
  cJSON_ArrayForEach(tag, tags) {
    if (!cJSON_IsString(tag) && !cJSON_IsNull(tag)) {
      ps_buf_printf(why, "the tag '%.40s' is not a string", tag->string ? tag->string : "?");
      return 0;
    }
  }
  const cJSON *r;
  long k = 0;
  cJSON_ArrayForEach(r, rows) {
    if (!row_ok(cols, r, k++, time_col, strings, why))
      return 0;
  }
  return 1;
}

static int document_ok(const cJSON *doc, const char *const *strings, ps_buf *why) {
  const cJSON *results = cJSON_GetObjectItemCaseSensitive(doc, "results"), *res;
  if (!cJSON_IsArray(results)) {
    ps_buf_puts(why, "no list of results");
    return 0;
  }
  cJSON_ArrayForEach(res, results) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(res, "error");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(res, "series"), *series;
    if (!cJSON_IsObject(res) || e || (list && !cJSON_IsArray(list))) {
      if (cJSON_IsString(e))
        ps_buf_printf(why, "the server said: %.200s", e->valuestring);
      else
        ps_buf_puts(why, "a result that is not an object with a list of series");
      return 0;
    }
    cJSON_ArrayForEach(series, list) {
      if (!series_ok(series, strings, why))
        return 0;
    }
  }
  return 1;
}

int ps_rb_answer_check(const ps_rb_answer *a, const char *const *string_columns, ps_buf *why) {
  ps_buf ignored;
  ps_buf_init(&ignored, 256);
  if (!why)
    why = &ignored;
  int ok = a->ndocs > 0;
  if (!ok)
    ps_buf_puts(why, "not JSON");
  for (size_t i = 0; ok && i < a->ndocs; i++)
    ok = document_ok(a->docs[i], string_columns, why);
  ps_buf_free(&ignored);
  return ok ? 0 : -EPROTO;
}
