/*
 * readback/benchmarker.c: the benchmarker's steps and fits for the page.
 * See include/readback/benchmarker.h.
 *
 * Design
 * - Tags are selected as columns (as the page's other reads do): one
 *   series of rows per statement, the tags looked up by name.
 * - Only what the page draws is asked for: a long history of reports is
 *   a few hundred steps, not the operations behind them.
 */
#include "readback/benchmarker.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "readback/answer.h"
#include "readback/query.h"
#include "readback/statement.h"

#define TAGS "\"configuration\", \"load\", \"scenario\", \"arm\", \"host\""

int ps_rb_benchmarker_text(ps_buf *q, int64_t since_ns, int64_t until_ns) {
  int rc = ps_buf_puts(q, "SELECT \"load_factor\", \"termination_reason\", \"throughput\", "
                          "\"latency_mean_s\", " TAGS " FROM \"benchmarker_step\" WHERE "
                          "\"operation\" = 'all'");
  rc = rc ? rc : ps_rb_and_time_range(q, since_ns, until_ns);
  rc = rc ? rc
          : ps_buf_puts(q, "; SELECT \"gamma\", \"alpha\", \"beta\", \"x_n_star\", "
                           "\"discarded_loads\", " TAGS " FROM \"benchmarker_fit\" WHERE "
                           "\"operation\" = 'all'");
  return rc ? rc : ps_rb_and_time_range(q, since_ns, until_ns);
}

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

static void key_free(ps_rb_bm_key *k) {
  free(k->configuration);
  free(k->load);
  free(k->scenario);
  free(k->arm);
  free(k->host);
}

/* The row's key, copied; -1 when it has none, -ENOMEM. */
static int key_of(const ps_rb_row *r, ps_rb_bm_key *k) {
  const char *c = ps_rb_str(r, "configuration"), *s = ps_rb_str(r, "scenario"),
             *a = ps_rb_str(r, "arm"), *l = ps_rb_str(r, "load"), *h = ps_rb_str(r, "host");
  if (!c || !s || !a)
    return -1;
  *k = (ps_rb_bm_key){strdup(c), dup_or_null(l), strdup(s), strdup(a), dup_or_null(h)};
  if (!k->configuration || !k->scenario || !k->arm || (l && !k->load) || (h && !k->host)) {
    key_free(k);
    return -ENOMEM;
  }
  return 0;
}

static int grow(void **arr, size_t *cap, size_t n, size_t size) {
  if (n < *cap)
    return 0;
  size_t want = *cap ? *cap * 2 : 64;
  void *g = realloc(*arr, want * size);
  if (!g)
    return -ENOMEM;
  *arr = g;
  *cap = want;
  return 0;
}

static int add_step(ps_rb_bm_data *d, const ps_rb_row *r, const ps_rb_bm_key *k) {
  if (grow((void **)&d->steps, &d->cap_steps, d->nsteps, sizeof *d->steps) < 0)
    return -ENOMEM;
  const char *reason = ps_rb_str(r, "termination_reason");
  ps_rb_bm_step *s = &d->steps[d->nsteps];
  *s = (ps_rb_bm_step){*k,
                       ps_rb_time_ns(r),
                       ps_rb_num(r, "load_factor"),
                       ps_rb_num(r, "throughput"),
                       ps_rb_num(r, "latency_mean_s"),
                       dup_or_null(reason)};
  if (reason && !s->reason)
    return -ENOMEM;
  d->nsteps++;
  return 0;
}

static int add_fit(ps_rb_bm_data *d, const ps_rb_row *r, const ps_rb_bm_key *k) {
  if (grow((void **)&d->fits, &d->cap_fits, d->nfits, sizeof *d->fits) < 0)
    return -ENOMEM;
  const char *discarded = ps_rb_str(r, "discarded_loads");
  ps_rb_bm_fit *f = &d->fits[d->nfits];
  *f = (ps_rb_bm_fit){*k,
                      ps_rb_time_ns(r),
                      ps_rb_num(r, "gamma"),
                      ps_rb_num(r, "alpha"),
                      ps_rb_num(r, "beta"),
                      ps_rb_num(r, "x_n_star"),
                      dup_or_null(discarded)};
  if (discarded && !f->discarded_loads)
    return -ENOMEM;
  d->nfits++;
  return 0;
}

int ps_rb_benchmarker_parse(ps_rb_bm_data *out, const char *json, size_t len) {
  ps_rb_answer a;
  int rc = ps_rb_answer_parse(&a, json, len);
  if (rc < 0)
    return rc;
  for (const ps_rb_row *r; rc == 0 && (r = ps_rb_answer_next(&a));) {
    ps_rb_bm_key k;
    int got = key_of(r, &k);
    if (got == -1)
      continue;
    rc = got < 0 ? got : r->statement == 0 ? add_step(out, r, &k) : add_fit(out, r, &k);
    if (rc < 0 && got == 0)
      key_free(&k);
  }
  ps_rb_answer_free(&a);
  return rc;
}

int ps_rb_benchmarker_read(const ps_config *cfg, int64_t since_ns, int64_t until_ns,
                           ps_rb_bm_data *out, ps_buf *err) {
  ps_buf q, answer;
  ps_buf_init(&q, 0);
  ps_buf_init(&answer, 0);
  int rc = ps_rb_benchmarker_text(&q, since_ns, until_ns);
  if (rc == 0)
    rc = ps_rb_query(cfg, q.data, &answer, err);
  if (rc == 0)
    rc = ps_rb_benchmarker_parse(out, answer.data ? answer.data : "", answer.len);
  ps_buf_free(&q);
  ps_buf_free(&answer);
  return rc;
}

void ps_rb_benchmarker_free(ps_rb_bm_data *d) {
  for (size_t i = 0; i < d->nsteps; i++) {
    key_free(&d->steps[i].k);
    free(d->steps[i].reason);
  }
  for (size_t i = 0; i < d->nfits; i++) {
    key_free(&d->fits[i].k);
    free(d->fits[i].discarded_loads);
  }
  free(d->steps);
  free(d->fits);
  memset(d, 0, sizeof *d);
}
