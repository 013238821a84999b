/*
 * edivisive.c: E-Divisive means with a permutation test
 * (include/verdict/edivisive.h; the method in docs/verdicts.md).
 *
 * DESIGN
 * - The statistic of every split of a segment comes from one pass over it:
 *   moving the split one value to the right moves that value from the right
 *   part to the left. Its distance sum to the left part is read from two
 *   Fenwick trees over the segment's ranks (count and sum of the smaller
 *   values), and its distance sum to the whole segment does not depend on
 *   the order, so it is computed once per segment from the sorted values.
 *   A pass is O(L log L) instead of the O(L^2) of summing a distance
 *   matrix, which is what keeps a year of runs with a whole-year window
 *   cheap (docs/benchmarks.md, "Verdicts").
 * - A permutation only reorders a segment's values, so the sorted values,
 *   the per-value distance sums and the total stay valid: the test shuffles
 *   an array of ranks and scans again.
 * - Equal statistics count as exceedances, with a relative tolerance of
 *   1e-9 for the rounding of the running sums: a tie must never make noise
 *   look significant (a constant series is never split).
 * - No allocation after ps_cp_ws_new(); segments are bounded by
 *   PS_CP_MAX_POINTS + 1.
 */
#include "verdict/edivisive.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ranked {
  double v;
  uint32_t i;
} ranked;

struct ps_cp_ws {
  size_t cap;
  double *sorted;      /* per segment [a,b): its values ascending */
  double *rowsum;      /* per segment, at a + rank: sum of |v - w| over the segment */
  uint32_t *orig_rank; /* per position: the rank of x[pos] in its segment */
  uint32_t *order;     /* per position: the rank placed there (permuted) */
  uint32_t *fen_cnt;   /* Fenwick trees over ranks, 1-based */
  double *fen_sum;
  ranked *tmp;
};

unsigned ps_cp_default_permutations(double significance) {
  if (!(significance > 0.0) || significance >= 1.0)
    return 199;
  double r = ceil(10.0 / significance - 1e-9) - 1.0;
  if (r < 19.0)
    r = 19.0;
  if (r > 100000.0)
    r = 100000.0;
  return (unsigned)r;
}

int ps_cp_ws_new(ps_cp_ws **out, size_t capacity) {
  *out = NULL;
  if (capacity == 0 || capacity > UINT32_MAX / 2)
    return -EINVAL;
  ps_cp_ws *w = calloc(1, sizeof *w);
  if (!w)
    return -ENOMEM;
  w->cap = capacity;
  w->sorted = malloc(capacity * sizeof *w->sorted);
  w->rowsum = malloc(capacity * sizeof *w->rowsum);
  w->orig_rank = malloc(capacity * sizeof *w->orig_rank);
  w->order = malloc(capacity * sizeof *w->order);
  w->fen_cnt = malloc((capacity + 1) * sizeof *w->fen_cnt);
  w->fen_sum = malloc((capacity + 1) * sizeof *w->fen_sum);
  w->tmp = malloc(capacity * sizeof *w->tmp);
  if (!w->sorted || !w->rowsum || !w->orig_rank || !w->order || !w->fen_cnt ||
      !w->fen_sum || !w->tmp) {
    ps_cp_ws_free(w);
    return -ENOMEM;
  }
  *out = w;
  return 0;
}

void ps_cp_ws_free(ps_cp_ws *ws) {
  if (!ws)
    return;
  free(ws->sorted);
  free(ws->rowsum);
  free(ws->orig_rank);
  free(ws->order);
  free(ws->fen_cnt);
  free(ws->fen_sum);
  free(ws->tmp);
  free(ws);
}

/* ---- randomness ---------------------------------------------------------- */

uint64_t ps_cp_seed(const char *series, const char *metric, const char *run) {
  uint64_t h = 14695981039346656037ULL;
  const char *parts[3] = {series, metric, run};
  for (int k = 0; k < 3; k++) {
    for (const unsigned char *p = (const unsigned char *)(parts[k] ? parts[k] : "");
         *p; p++) {
      h ^= *p;
      h *= 1099511628211ULL;
    }
    h ^= 0xffu;
    h *= 1099511628211ULL;
  }
  return h;
}

/* splitmix64 (Steele, Lea & Flood 2014): small, fast, and good enough for
 * shuffling; what matters here is that it is fixed and portable. */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [0, n) without modulo bias (Lemire 2019, 32-bit form). */
static uint32_t below(uint64_t *s, uint32_t n) {
  uint64_t m = (next_u64(s) >> 32) * (uint64_t)n;
  uint32_t low = (uint32_t)m;
  if (low < n) {
    uint32_t t = (uint32_t)(-n) % n;
    while (low < t) {
      m = (next_u64(s) >> 32) * (uint64_t)n;
      low = (uint32_t)m;
    }
  }
  return (uint32_t)(m >> 32);
}

static void shuffle(uint32_t *a, size_t n, uint64_t *s) {
  for (size_t i = n; i > 1; i--) {
    size_t j = below(s, (uint32_t)i);
    uint32_t t = a[i - 1];
    a[i - 1] = a[j];
    a[j] = t;
  }
}

/* ---- the statistic ------------------------------------------------------- */

double ps_edivisive_q(const double *x, size_t n, size_t tau) {
  if (tau < 2 || n < tau + 2)
    return NAN;
  size_t m = tau, r = n - tau;
  double b = 0, wl = 0, wr = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      double d = fabs(x[i] - x[j]);
      if (j < tau)
        wl += d;
      else if (i >= tau)
        wr += d;
      else
        b += d;
    }
  double e = 2.0 * b / ((double)m * (double)r) - 2.0 * wl / ((double)m * (double)(m - 1)) -
             2.0 * wr / ((double)r * (double)(r - 1));
  return (double)m * (double)r / (double)(m + r) * e;
}

/* Q of a split whose right part is the two values x[i], x[k], from the
 * total T of all pair distances and the row sums S (S[i] = sum_j |x_i - x_j|). */
static double tail_q(const double *x, const double *S, double T, size_t n, size_t i, size_t k) {
  double wr = fabs(x[i] - x[k]);
  double b = S[i] + S[k] - 2.0 * wr;
  double wl = T - b - wr;
  double m = (double)(n - 2), r = 2.0;
  double e = 2.0 * b / (m * r) - 2.0 * wl / (m * (m - 1.0)) - 2.0 * wr / (r * (r - 1.0));
  return m * r / (m + r) * e;
}

double ps_edivisive_tail_p(const double *x, size_t n) {
  if (n < 4)
    return NAN;
  double *S = calloc(n, sizeof *S);
  if (!S)
    return NAN;
  double T = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      double d = fabs(x[i] - x[j]);
      S[i] += d;
      S[j] += d;
      T += d;
    }
  double observed = tail_q(x, S, T, n, n - 2, n - 1);
  /* Ties within rounding count as at least as extreme: the observed split
   * is always among the choices, so p >= 1 / C(n, 2). */
  double eps = 1e-12 * (fabs(observed) + 1.0);
  size_t at_least = 0, all = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t k = i + 1; k < n; k++, all++)
      at_least += tail_q(x, S, T, n, i, k) >= observed - eps;
  free(S);
  return (double)at_least / (double)all;
}

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  if (x->v < y->v)
    return -1;
  if (x->v > y->v)
    return 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

/* Sorts segment [a, b) of x into the workspace; returns the sum of |v - w|
 * over the segment's pairs. */
static double prepare_segment(ps_cp_ws *w, const double *x, size_t a, size_t b) {
  size_t len = b - a;
  for (size_t i = 0; i < len; i++) {
    w->tmp[i].v = x[a + i];
    w->tmp[i].i = (uint32_t)i;
  }
  qsort(w->tmp, len, sizeof *w->tmp, cmp_ranked);
  double total = 0, all = 0;
  for (size_t k = 0; k < len; k++) {
    w->sorted[a + k] = w->tmp[k].v;
    w->orig_rank[a + w->tmp[k].i] = (uint32_t)k;
    all += w->tmp[k].v;
  }
  double below_sum = 0;
  for (size_t k = 0; k < len; k++) {
    double v = w->sorted[a + k];
    double above_sum = all - below_sum - v;
    w->rowsum[a + k] = (v * (double)k - below_sum) + (above_sum - v * (double)(len - 1 - k));
    total += v * ((double)(2 * k) - (double)(len - 1));
    below_sum += v;
  }
  return total;
}

/* The best split of segment [a, b) in the order w->order holds: its Q, and
 * its index in *tau. -INFINITY when the segment is too short to split. */
static double scan_segment(ps_cp_ws *w, size_t a, size_t b, double total, size_t ms,
                           size_t *tau) {
  size_t len = b - a;
  if (len < 2 * ms)
    return -INFINITY;
  memset(w->fen_cnt, 0, (len + 1) * sizeof *w->fen_cnt);
  memset(w->fen_sum, 0, (len + 1) * sizeof *w->fen_sum);
  double wl = 0, wr = total, left_sum = 0, best = -INFINITY;
  for (size_t i = 0; i + ms < len; i++) {
    uint32_t rank = w->order[a + i];
    double v = w->sorted[a + rank];
    uint32_t cnt_less = 0;
    double sum_less = 0;
    for (size_t k = rank; k > 0; k &= k - 1) {
      cnt_less += w->fen_cnt[k];
      sum_less += w->fen_sum[k];
    }
    double to_left = (v * (double)cnt_less - sum_less) +
                     ((left_sum - sum_less) - v * (double)(i - cnt_less));
    wl += to_left;
    wr -= w->rowsum[a + rank] - to_left;
    for (size_t k = (size_t)rank + 1; k <= len; k += k & (~k + 1)) {
      w->fen_cnt[k]++;
      w->fen_sum[k] += v;
    }
    left_sum += v;
    size_t m = i + 1, r = len - m;
    if (m < ms)
      continue;
    double md = (double)m, rd = (double)r;
    double between = total - wl - wr;
    double e = 2.0 * between / (md * rd) - 2.0 * wl / (md * (md - 1.0)) -
               2.0 * wr / (rd * (rd - 1.0));
    double q = md * rd / (md + rd) * e;
    if (q > best) {
      best = q;
      *tau = a + m;
    }
  }
  return best;
}

/* ---- the hierarchical search --------------------------------------------- */

typedef struct search {
  size_t bounds[PS_CP_MAX_POINTS + 2]; /* segment starts, then n */
  size_t nseg;
  double total[PS_CP_MAX_POINTS + 1];
} search;

/* max over segments of their best Q, in the current order; *seg and *tau
 * name the winner (the first on ties). */
static double best_split(ps_cp_ws *w, const search *s, size_t ms, size_t *seg, size_t *tau) {
  double best = -INFINITY;
  for (size_t k = 0; k < s->nseg; k++) {
    size_t t = 0;
    double q = scan_segment(w, s->bounds[k], s->bounds[k + 1], s->total[k], ms, &t);
    if (q > best) {
      best = q;
      *seg = k;
      *tau = t;
    }
  }
  return best;
}

int ps_edivisive(ps_cp_ws *w, const double *x, size_t n, const ps_cp_params *params,
                 uint64_t seed, ps_cp_result *out) {
  memset(out, 0, sizeof *out);
  if (!w || !params || n > w->cap || !(params->significance > 0.0) ||
      !(params->significance < 1.0))
    return -EINVAL;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(x[i]))
      return -EINVAL;
  size_t ms = params->min_segment ? params->min_segment : 2;
  size_t maxp = params->max_points ? params->max_points : PS_CP_MAX_POINTS;
  if (ms < 2 || maxp > PS_CP_MAX_POINTS)
    return -EINVAL;
  unsigned perms = params->permutations ? params->permutations
                                        : ps_cp_default_permutations(params->significance);
  /* p <= significance  <=>  exceedances <= significance * (perms + 1) - 1:
   * at `limit` exceedances the answer is no whatever follows. */
  double allowed = floor(params->significance * ((double)perms + 1.0) + 1e-9) - 1.0;
  uint64_t limit = allowed < 0 ? 1 : (uint64_t)allowed + 1;
  uint64_t rng = seed;

  search s;
  s.nseg = 1;
  s.bounds[0] = 0;
  s.bounds[1] = n;
  s.total[0] = prepare_segment(w, x, 0, n);

  while (out->npoints < maxp) {
    memcpy(w->order, w->orig_rank, n * sizeof *w->order);
    size_t seg = 0, tau = 0;
    double observed = best_split(w, &s, ms, &seg, &tau);
    if (observed == -INFINITY)
      break; /* no segment long enough to split: nothing tested */
    double floor_q = observed - 1e-9 * fabs(observed);
    uint64_t exceed = 0, done = 0;
    int stopped = 0;
    while (done < perms) {
      for (size_t k = 0; k < s.nseg; k++)
        shuffle(w->order + s.bounds[k], s.bounds[k + 1] - s.bounds[k], &rng);
      size_t ps = 0, pt = 0;
      double q = best_split(w, &s, ms, &ps, &pt);
      done++;
      if (q >= floor_q && ++exceed >= limit) {
        stopped = 1;
        break;
      }
    }
    out->permutations_run += done;
    ps_cp cp = {tau, stopped ? (double)exceed / (double)done
                             : ((double)exceed + 1.0) / ((double)perms + 1.0),
                observed};
    if (stopped || cp.p_value > params->significance) {
      out->rejected = 1;
      out->rejected_cp = cp;
      break;
    }
    /* accept: insert, keeping the points sorted, and split the segment */
    size_t k = out->npoints;
    while (k > 0 && out->points[k - 1].at > tau) {
      out->points[k] = out->points[k - 1];
      k--;
    }
    out->points[k] = cp;
    out->npoints++;
    for (size_t j = s.nseg + 1; j > seg + 1; j--)
      s.bounds[j] = s.bounds[j - 1];
    for (size_t j = s.nseg; j > seg + 1; j--)
      s.total[j] = s.total[j - 1];
    s.bounds[seg + 1] = tau;
    s.nseg++;
    s.total[seg] = prepare_segment(w, x, s.bounds[seg], tau);
    s.total[seg + 1] = prepare_segment(w, x, tau, s.bounds[seg + 2]);
  }
  return 0;
}
