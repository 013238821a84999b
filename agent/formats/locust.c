/*
 * formats/locust.c: the `locust` format, the CSV files of `locust --csv
 * PREFIX` (docs/dss-locust.md, docs/schema.md "Locust CSVs").
 *
 * DESIGN
 * - Locust rewrites PREFIX_stats.csv and PREFIX_failures.csv in place, so
 *   they are DOCUMENTS (timed by the file's modification time); it appends
 *   to PREFIX_stats_history.csv, so that one is LINES, each row timed by its
 *   own Timestamp column. PREFIX_exceptions.csv holds only texts and
 *   tracebacks and is ignored (`convert` notes it: not_converted).
 * - Columns are found by header name, never by position, so another Locust
 *   version with more or fewer percentile columns still maps. A history
 *   parser takes the header from the first line the driver read for open():
 *   after a restart it starts at a mid-file offset and never sees line 1.
 * - Field keys are the header turned into snake_case once per header, not per
 *   row; rows reuse one scratch buffer and one field array (no allocation per
 *   field).
 * - CSV per Python's csv module (what Locust uses): fields may be quoted,
 *   "" is a quote inside a quoted field, a quoted field may hold commas and
 *   line breaks, records end in \r\n, \n, or \r\r\n (written on Windows).
 * - History rows are timed by their Timestamp (whole seconds) plus their
 *   line number in ns: Locust writes a name's last sample and its final row
 *   in the same second, and the line number keeps them apart the same way
 *   on every read, after a restart too.
 * - `N/A` and empty cells are "absent". Only the counters listed in
 *   docs/schema.md are integers; every other number is a float.
 * - Failures rows share type+name tags and the file's time, so each is kept
 *   apart by adding its 0-based row index in nanoseconds.
 * - Back-pressure (emit.h): every unit a document produces (point or reject)
 *   is numbered; after -EAGAIN the next call skips the units delivered.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/visible.h"
#include "formats/format.h"

#define LOCUST_MAX_COLUMNS 128
#define LOCUST_HEADER_MAX 65536
#define LOCUST_RUN_MAX 256

typedef enum { LOCUST_STATS, LOCUST_HISTORY, LOCUST_FAILURES } locust_kind;

typedef enum {
  COL_IGNORE = 0,
  COL_TYPE,    /* tag `type` (Type, or Method in failures) */
  COL_NAME,    /* tag `name` */
  COL_TIME,    /* Timestamp (history) */
  COL_STRING,  /* Error */
  COL_INT,
  COL_FLOAT,
} col_role;

typedef struct locust_col {
  char *key; /* snake_case field key */
  col_role role;
} locust_col;

struct ps_parser {
  locust_kind kind;
  char run[LOCUST_RUN_MAX];
  int64_t mtime_s;
  locust_col cols[LOCUST_MAX_COLUMNS];
  size_t ncols; /* 0: no header known yet */
  /* per-record scratch, reused */
  ps_buf cells;
  size_t cell_off[LOCUST_MAX_COLUMNS + 1];
  ps_field fields[LOCUST_MAX_COLUMNS];
  size_t cursor; /* units of the current document already delivered */
};

static const char *const integer_fields[] = {
    "request_count",       "failure_count",       "user_count",
    "total_request_count", "total_failure_count", "occurrences",
};

static int has_suffix(const char *s, const char *suffix, size_t *prefix_len) {
  size_t n = strlen(s), m = strlen(suffix);
  if (n < m || strcmp(s + n - m, suffix) != 0)
    return 0;
  if (prefix_len)
    *prefix_len = n - m;
  return 1;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

static int classify(const char *path, locust_kind *kind, size_t *prefix_len) {
  const char *base = base_name(path);
  if (has_suffix(base, "_stats_history.csv", prefix_len))
    *kind = LOCUST_HISTORY;
  else if (has_suffix(base, "_stats.csv", prefix_len))
    *kind = LOCUST_STATS;
  else if (has_suffix(base, "_failures.csv", prefix_len))
    *kind = LOCUST_FAILURES;
  else
    return 0;
  return 1;
}

static ps_input_kind locust_input_kind(const ps_source_cfg *src,
                                       const char *path) {
  (void)src;
  locust_kind kind;
  size_t n;
  if (!classify(path, &kind, &n))
    return PS_INPUT_IGNORE; /* _exceptions.csv and everything else */
  return kind == LOCUST_HISTORY ? PS_INPUT_LINES : PS_INPUT_DOCUMENT;
}

/* ---- CSV ------------------------------------------------------------------ */

/* Parses one record from data[*pos..len) into p->cells (each cell
 * NUL-terminated, starts in p->cell_off). Stops after the record's line
 * break. Returns the number of cells, -E2BIG for too many, -ENOMEM; *lines
 * gets the number of line breaks consumed (quoted cells may hold some). */
static int csv_record(ps_parser *p, const char *data, size_t len, size_t *pos,
                      uint64_t *lines) {
  size_t i = *pos;
  size_t ncells = 0;
  int quoted = 0, in_quotes = 0;
  *lines = 0;
  ps_buf_reset(&p->cells);
  p->cell_off[0] = 0;
  for (;;) {
    int end_cell = 0, end_record = 0;
    if (i >= len) {
      end_cell = end_record = 1;
    } else {
      char c = data[i];
      if (in_quotes) {
        if (c == '"') {
          if (i + 1 < len && data[i + 1] == '"') {
            if (ps_buf_putc(&p->cells, '"'))
              return -ENOMEM;
            i++;
          } else {
            in_quotes = 0;
          }
        } else {
          if (c == '\n')
            (*lines)++;
          if (ps_buf_putc(&p->cells, c))
            return -ENOMEM;
        }
        i++;
      } else if (c == '"' && !quoted &&
                 p->cells.len == p->cell_off[ncells]) {
        quoted = in_quotes = 1;
        i++;
      } else if (c == ',') {
        end_cell = 1;
        i++;
      } else if (c == '\r' || c == '\n') {
        /* \n, \r\n, and the \r\r\n of Python's csv writer on Windows in
         * text mode (it writes \r\n, the file turns \n into \r\n) each end
         * one record, as Python's csv reader reads them */
        end_cell = end_record = 1;
        while (i < len && data[i] == '\r')
          i++;
        if (i < len && data[i] == '\n') {
          i++;
          (*lines)++;
        }
      } else {
        if (ps_buf_putc(&p->cells, c))
          return -ENOMEM;
        i++;
      }
    }
    if (end_cell) {
      if (ncells >= LOCUST_MAX_COLUMNS)
        return -E2BIG;
      if (ps_buf_putc(&p->cells, '\0'))
        return -ENOMEM;
      ncells++;
      p->cell_off[ncells] = p->cells.len;
      quoted = 0;
      if (end_record)
        break;
    }
  }
  *pos = i;
  return (int)ncells;
}

static const char *cell(const ps_parser *p, size_t k) {
  return p->cells.data + p->cell_off[k];
}

/* ---- header ----------------------------------------------------------------
 */

/* `Request Count` -> request_count, `Requests/s` -> requests_per_s,
 * `50%` -> p50, `99.9%` -> p99_9. */
static char *snake_case(const char *h) {
  size_t n = strlen(h);
  char *out = malloc(n * 5 + 2); /* "/" grows to "_per_" */
  if (!out)
    return NULL;
  size_t o = 0;
  int pct = n > 0 && h[n - 1] == '%';
  if (pct) {
    out[o++] = 'p';
    n--;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)h[i];
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80) {
      out[o++] = (char)c;
    } else if (c >= 'A' && c <= 'Z') {
      out[o++] = (char)(c - 'A' + 'a');
    } else {
      const char *sep = c == '/' ? "_per_" : "_";
      for (const char *s = sep; *s; s++) {
        if (*s == '_' && (o == 0 || out[o - 1] == '_'))
          continue;
        out[o++] = *s;
      }
    }
  }
  while (o > 0 && out[o - 1] == '_')
    o--;
  out[o] = '\0';
  return out;
}

static void clear_header(ps_parser *p) {
  for (size_t k = 0; k < p->ncols; k++) {
    free(p->cols[k].key);
    p->cols[k].key = NULL;
  }
  p->ncols = 0;
}

/* Sets the columns from the record in p->cells. */
static int set_header(ps_parser *p, size_t ncells) {
  clear_header(p);
  for (size_t k = 0; k < ncells; k++) {
    const char *h = cell(p, k);
    locust_col *c = &p->cols[k];
    c->key = snake_case(h);
    if (!c->key) {
      p->ncols = k;
      clear_header(p);
      return -ENOMEM;
    }
    if (strcmp(h, "Type") == 0 || strcmp(h, "Method") == 0)
      c->role = COL_TYPE;
    else if (strcmp(h, "Name") == 0)
      c->role = COL_NAME;
    else if (strcmp(h, "Timestamp") == 0 && p->kind == LOCUST_HISTORY)
      c->role = COL_TIME;
    else if (strcmp(h, "Error") == 0)
      c->role = COL_STRING;
    else if (c->key[0] == '\0')
      c->role = COL_IGNORE;
    else
      c->role = COL_FLOAT;
    if (c->role == COL_FLOAT)
      for (size_t i = 0; i < sizeof integer_fields / sizeof *integer_fields;
           i++)
        if (strcmp(c->key, integer_fields[i]) == 0)
          c->role = COL_INT;
  }
  p->ncols = ncells;
  return 0;
}

/* A header row is recognised by its first cell, so a history parser that
 * met no header in open() (an empty file then) picks it up from line 1. */
static int is_header(const ps_parser *p) {
  const char *first = cell(p, 0);
  if (p->kind == LOCUST_HISTORY)
    return strcmp(first, "Timestamp") == 0;
  if (p->kind == LOCUST_FAILURES)
    return strcmp(first, "Method") == 0;
  return strcmp(first, "Type") == 0;
}

/* ---- rows ------------------------------------------------------------------
 */

/* A cell as a reject message shows it: a control character as its escape
 * (a stray CR printed as a blank hid why "123" was no number). */
static const char *shown_cell(char *dst, size_t cap, const char *v) {
  ps_visible_into(dst, cap, v, strlen(v), PS_VISIBLE_ESCAPE_LINES);
  return dst;
}

static int parse_number(const char *s, double *out) {
  char *end;
  errno = 0;
  double d = strtod(s, &end);
  if (end == s || *end != '\0' || !isfinite(d))
    return 0;
  *out = d;
  return 1;
}

/* Builds the point of the record in p->cells at `time_ns` (a history row:
 * its Timestamp plus `time_ns`). Returns 1 with *pt filled, or 0 after
 * writing a reason to `why`. */
static int number_cell(const locust_col *c, const char *v, double *d, char *why, size_t why_cap) {
  char sh[48];
  if (parse_number(v, d))
    return 1;
  snprintf(why, why_cap, "column %s: not a number: \"%s\"", c->key, shown_cell(sh, sizeof sh, v));
  return 0;
}

/* Timestamp is in seconds, added to the time the row came with (its line
 * number in ns, which keeps apart rows of one second). */
static int add_time_cell(double d, const char *v, int64_t *time_ns, char *why, size_t why_cap) {
  char sh[48];
  if (d < -9.2e9 || d > 9.2e9) {
    snprintf(why, why_cap, "Timestamp out of range: %s", shown_cell(sh, sizeof sh, v));
    return 0;
  }
  *time_ns = ps_seconds_to_ns(d) + *time_ns;
  return 1;
}

/* A counting column (integer_fields) takes whole numbers only: a fraction
 * there is a broken row, not a rounding. */
static int number_field(const locust_col *c, double d, const char *v, ps_field *f, char *why,
                        size_t why_cap) {
  char sh[48];
  *f = (ps_field){.key = c->key};
  if (c->role != COL_INT) {
    f->type = PS_F_FLOAT;
    f->v.f = d;
    return 1;
  }
  if (d != floor(d) || d < -9.2e18 || d > 9.2e18) {
    snprintf(why, why_cap, "column %s: not a whole number: \"%s\"", c->key,
             shown_cell(sh, sizeof sh, v));
    return 0;
  }
  f->type = PS_F_INT;
  f->v.i = (int64_t)d;
  return 1;
}

static const char *measurement_of(locust_kind kind) {
  return kind == LOCUST_STATS     ? "locust_stats"
         : kind == LOCUST_HISTORY ? "locust_history"
                                  : "locust_failures";
}

static int build_point(ps_parser *p, size_t ncells, int64_t time_ns,
                       ps_tag *tags, ps_point *pt, char *why,
                       size_t why_cap) {
  if (ncells != p->ncols) {
    snprintf(why, why_cap, "row has %zu columns, the header has %zu", ncells,
             p->ncols);
    return 0;
  }
  size_t nt = 0, nf = 0;
  int has_time = 0;
  if (p->run[0]) {
    tags[nt].key = "run";
    tags[nt++].value = p->run;
  }
  for (size_t k = 0; k < ncells; k++) {
    const locust_col *c = &p->cols[k];
    const char *v = cell(p, k);
    size_t vlen = p->cell_off[k + 1] - p->cell_off[k] - 1;
    if (c->role == COL_IGNORE)
      continue;
    if (c->role == COL_TYPE || c->role == COL_NAME) {
      /* the Aggregated row has an empty Type: no `type` tag */
      if (*v) {
        tags[nt].key = c->role == COL_TYPE ? "type" : "name";
        tags[nt++].value = v;
      }
      continue;
    }
    if (c->role == COL_STRING) {
      ps_field *f = &p->fields[nf++];
      *f = (ps_field){.key = c->key};
      f->type = PS_F_STRING;
      f->v.s.p = v;
      f->v.s.n = vlen;
      continue;
    }
    if (*v == '\0' || strcmp(v, "N/A") == 0)
      continue; /* no requests yet: absent, not 0 */
    double d;
    if (!number_cell(c, v, &d, why, why_cap))
      return 0;
    if (c->role == COL_TIME) {
      if (!add_time_cell(d, v, &time_ns, why, why_cap))
        return 0;
      has_time = 1;
      continue;
    }
    if (!number_field(c, d, v, &p->fields[nf++], why, why_cap))
      return 0;
  }
  if (p->kind == LOCUST_HISTORY && !has_time) {
    snprintf(why, why_cap, "no Timestamp");
    return 0;
  }
  if (nf == 0) {
    snprintf(why, why_cap, "no value in any column");
    return 0;
  }
  pt->measurement = measurement_of(p->kind);
  pt->tags = tags;
  pt->ntags = nt;
  pt->fields = p->fields;
  pt->nfields = nf;
  pt->time_ns = time_ns;
  return 1;
}

/* ---- open / free ----------------------------------------------------------
 */

static void locust_free(ps_parser *p) {
  if (!p)
    return;
  clear_header(p);
  ps_buf_free(&p->cells);
  free(p);
}

/* Takes a history file's header from its first line (read by the driver):
 * after a restart the parser starts mid-file and never sees line 1. A file
 * still without a complete first line has none yet; line() then takes it
 * from line 1. */
static int header_from_head(ps_parser *p, const ps_input_head *head,
                            ps_buf *err) {
  if (!head->first_line)
    return 0;
  size_t len = head->first_len, pos = 0;
  uint64_t lines;
  if (len > LOCUST_HEADER_MAX) {
    ps_buf_printf(err, "line 1: header longer than %d bytes", LOCUST_HEADER_MAX);
    return -EINVAL;
  }
  while (len > 0 && head->first_line[len - 1] == '\r')
    len--;
  int n = csv_record(p, head->first_line, len, &pos, &lines);
  if (n > 0 && is_header(p))
    return set_header(p, (size_t)n);
  if (n == -ENOMEM)
    return n;
  ps_buf_printf(err, "line 1: not a Locust stats history header "
                     "(Timestamp,User Count,...)");
  return -EINVAL;
}

static int locust_open(ps_parser **out, const ps_source_cfg *src,
                       const ps_input_head *head, ps_buf *err) {
  (void)src;
  *out = NULL;
  locust_kind kind;
  size_t prefix_len;
  if (!classify(head->path, &kind, &prefix_len)) {
    ps_buf_printf(err, "not a Locust --csv stats, history or failures file "
                       "(PREFIX_stats.csv, PREFIX_stats_history.csv, "
                       "PREFIX_failures.csv)");
    return -EINVAL;
  }
  ps_parser *p = calloc(1, sizeof *p);
  if (!p)
    return -ENOMEM;
  ps_buf_init(&p->cells, 0);
  p->kind = kind;
  /* Whole seconds, as st_mtime (docs/schema.md "Locust CSVs"). A rewritten
   * document gets a new parser, so this is the time of its own version. */
  p->mtime_s = ps_whole_seconds(head->mtime_ns);
  const char *base = base_name(head->path);
  if (prefix_len >= sizeof p->run)
    prefix_len = sizeof p->run - 1;
  memcpy(p->run, base, prefix_len);
  p->run[prefix_len] = '\0';
  if (kind == LOCUST_HISTORY) {
    int rc = header_from_head(p, head, err);
    if (rc) {
      locust_free(p);
      return rc;
    }
  }
  *out = p;
  return 0;
}

static const char *locust_not_converted(const char *path) {
  return has_suffix(base_name(path), "_exceptions.csv", NULL)
             ? "Locust exceptions file"
             : NULL;
}

/* ---- line / document ------------------------------------------------------
 */

static int locust_line(ps_parser *p, const char *data, size_t len,
                       ps_emitter *em) {
  size_t pos = 0;
  uint64_t lines;
  while (len > 0 && data[len - 1] == '\r')
    len--; /* the driver took one CR; \r\r\n leaves another */
  if (len == 0)
    return 0;
  const char *nul = memchr(data, '\0', len);
  if (nul) { /* cells are C strings: a NUL would cut one short */
    ps_emit_reject(em, "column %zu: NUL byte in the line", (size_t)(nul - data) + 1);
    return 0;
  }
  int n = csv_record(p, data, len, &pos, &lines);
  if (n == -E2BIG) {
    ps_emit_reject(em, "more than %d columns", LOCUST_MAX_COLUMNS);
    return 0;
  }
  if (n < 0)
    return n;
  if (is_header(p))
    return set_header(p, (size_t)n);
  if (p->ncols == 0) {
    ps_emit_reject(em, "a row before the Locust header (no column names)");
    return 0;
  }
  ps_tag tags[LOCUST_MAX_COLUMNS + 1];
  ps_point pt;
  char why[160];
  /* the line number in ns keeps apart rows of one name in one second */
  if (!build_point(p, (size_t)n, (int64_t)em->origin.line, tags, &pt, why, sizeof why)) {
    ps_emit_reject(em, "%s", why);
    return 0;
  }
  return ps_emit_point(em, &pt);
}

static int locust_document(ps_parser *p, const char *data, size_t len,
                           ps_emitter *em) {
  clear_header(p);
  size_t pos = 0, unit = 0, row = 0;
  uint64_t line = 1;
  ps_tag tags[LOCUST_MAX_COLUMNS + 1];
  char why[160];
  while (pos < len) {
    uint64_t start_line = line, lines;
    size_t rec_start = pos;
    int n = csv_record(p, data, len, &pos, &lines);
    line += lines;
    em->origin.line = start_line;
    if (n == -E2BIG) {
      /* csv_record left pos at the record's start: skip that physical
       * line and count its line break only once */
      line = start_line;
      while (pos < len && data[pos] != '\n')
        pos++;
      if (pos < len)
        pos++, line++;
      if (unit++ >= p->cursor)
        ps_emit_reject(em, "more than %d columns", LOCUST_MAX_COLUMNS);
      if (p->ncols == 0)
        break; /* the header itself: no row can be read */
      continue;
    }
    if (n < 0)
      return n;
    if (n == 1 && cell(p, 0)[0] == '\0')
      continue; /* blank line */
    if (p->ncols == 0) {
      if (!is_header(p)) {
        if (unit++ >= p->cursor)
          ps_emit_reject(em, "no Locust header on the first line");
        break;
      }
      int rc = set_header(p, (size_t)n);
      if (rc)
        return rc;
      continue;
    }
    int64_t t = p->mtime_s * 1000000000LL;
    if (p->kind == LOCUST_FAILURES)
      t += (int64_t)row;
    row++;
    ps_point pt;
    int ok = build_point(p, (size_t)n, t, tags, &pt, why, sizeof why);
    if (ok && memchr(data + rec_start, '\0', pos - rec_start)) {
      snprintf(why, sizeof why, "NUL byte in the row"); /* a cell was cut at it */
      ok = 0;
    }
    if (unit++ < p->cursor)
      continue;
    if (!ok) {
      ps_emit_reject(em, "%s", why);
      continue;
    }
    int rc = ps_emit_point(em, &pt);
    if (rc == -EAGAIN) {
      p->cursor = unit - 1;
      return rc;
    }
    if (rc) {
      p->cursor = 0;
      return rc;
    }
  }
  p->cursor = 0;
  return 0;
}

const ps_format_ops ps_format_locust = {
    .id = PS_FMT_LOCUST,
    .name = "locust",
    .needs = PS_FMT_NEEDS_FIRST_LINE,
    .input_kind = locust_input_kind,
    .open = locust_open,
    .line = locust_line,
    .document = locust_document,
    .finish = NULL,
    .free = locust_free,
    .not_converted = locust_not_converted,
};
