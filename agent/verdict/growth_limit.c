/*
 * growth_limit.c: kernel growth per cycle against an absolute limit. See
 * include/verdict/growth_limit.h.
 *
 * Design
 * - The limit is the baseline, so the point reads like every other
 *   verdict: value against what it was compared with (docs/schema.md
 *   "Verdicts", method `limit`).
 * - "Above", not "at": with the default of 1 a stage whose counter moves by
 *   exactly one per cycle is at the limit, which docs/verdicts.md states as
 *   the edge that still passes.
 */
#include "verdict/growth_limit.h"

#include <errno.h>
#include <math.h>

int ps_growth_judged(const ps_growth_stage *s) { return s->stage > 0 && !s->partial; }

int ps_growth_limit(const ps_verdicts_cfg *cfg, const ps_growth_stage *s,
                    ps_verdict_list *out) {
  if (!ps_growth_judged(s))
    return 0;
  for (int i = 0; i < PS_GROWTH_NFIGURES; i++) {
    double g = s->growth[i], limit = cfg->max_growth_per_cycle[i];
    if (!isfinite(g))
      continue;
    ps_verdict v = ps_verdict_blank();
    v.source = s->source;
    v.series = s->series;
    v.metric = ps_growth_figure((ps_growth_figure_id)i)->name;
    v.run = s->run;
    v.stage = s->stage;
    v.verdict = g > limit ? PS_VERDICT_REGRESSION : PS_VERDICT_NONE;
    v.method = PS_METHOD_LIMIT;
    v.value = g;
    v.baseline = limit;
    v.change_run = s->run;
    v.revision = s->revision;
    v.backfill = s->backfill;
    v.time_ns = s->time_ns;
    if (ps_verdict_list_push(out, &v) < 0)
      return -ENOMEM;
  }
  return 0;
}
