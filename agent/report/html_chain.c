/*
 * html_chain.c: the report's "inside the chain" part of a run (docs/report.md,
 * "Inside the chain"): the slog figures of its stages and vats, beside its
 * stage charts. Every data string through txt() (html_private.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/figures.h"
#include "html_private.h"
#include "readback/explain.h"

/* The chart of delivery seconds per block of the run's top vats (their
 * points are in the JSON block's chains[idx].blocks). */
static void chain_blocks(page *p, const ps_rchain *c, size_t idx) {
  if (!c->nchart) {
    /* slog points written before the agent wrote loadgen_slog_block_vat */
    put(p, "<p class=\"empty\">No figures per block and vat for this run "
           "(loadgen_slog_block_vat): no chart of delivery seconds per block.</p>\n");
    return;
  }
  int more = 0;
  for (size_t k = 0; k < c->nchart; k++)
    more |= c->chart[k].more;
  putf(p, "<div class=\"charts\"><figure><figcaption>Delivery seconds per block against block "
          "height, of the %zu vat%s with the most delivery seconds in the stages that take "
          "part (after stage 0, complete, with finished cycles)",
       c->nchart, c->nchart == 1 ? "" : "s");
  if (more)
    putf(p, "; only the first %d blocks of a vat are drawn: the run has more",
         PS_EXPLAIN_BLOCK_POINTS);
  putf(p, "</figcaption><div class=\"chart\"><canvas data-chart=\"chain-blocks\" "
          "data-chain=\"%zu\" role=\"img\" aria-label=\"delivery seconds per block per "
          "vat\"></canvas></div></figure></div>\n", idx);
}

/* The chain figures of stage run `of`, and their index in the JSON block's
 * chains; NULL when its slogs were not read. */
static const ps_rchain *chain_of(const ps_report_data *d, size_t of, size_t *idx) {
  for (size_t i = 0; i < d->nchains; i++)
    if (d->chains[i].of == of) {
      *idx = i;
      return &d->chains[i];
    }
  return NULL;
}

/* The table of the run's stages: cycles, delivery seconds, BOYD share and
 * the growth figures. */
static void chain_stages(page *p, const ps_rchain *c, size_t of, int first) {
  char id[40];
  snprintf(id, sizeof id, first ? "chain-stages" : "chain-stages-%zu", of);
  putf(p, "<table id=\"%s\" class=\"chain\"><thead><tr><th>Stage</th>"
          "<th class=\"n\">Finished cycles</th><th class=\"n\">Delivery s</th>"
          "<th class=\"n\">BOYD share</th>", id);
  for (int g = 0; g < PS_GROWTH_NFIGURES; g++) {
    put(p, "<th class=\"n\">");
    txt(p, ps_growth_figure((ps_growth_figure_id)g)->label);
    put(p, "</th>");
  }
  put(p, "<th>Slog</th></tr></thead><tbody>\n");
  for (size_t i = 0; i < c->nstages; i++) {
    const ps_explain_stage_row *st = &c->stages[i];
    putf(p, "<tr><td>%d</td><td class=\"n\">", st->stage);
    ps_html_fmt_num(p, st->cycles);
    put(p, "</td><td class=\"n\">");
    ps_html_fmt_num(p, st->delivery_s);
    put(p, "</td><td class=\"n\">");
    ps_html_fmt_num(p, st->delivery_s > 0 ? st->boyd_s / st->delivery_s * 100.0 : NAN);
    put(p, st->delivery_s > 0 ? " %</td>" : "</td>");
    for (int g = 0; g < PS_GROWTH_NFIGURES; g++) {
      put(p, "<td class=\"n\">");
      ps_html_fmt_num(p, st->growth[g]);
      put(p, "</td>");
    }
    put(p, st->partial ? "<td>partial</td></tr>\n" : "<td>complete</td></tr>\n");
  }
  put(p, "</tbody></table>\n");
}

/* The table of the vats that moved most: delivery milliseconds per cycle
 * then and now, and the change. */
static void chain_vats(page *p, const ps_rchain *c, size_t of, int first) {
  char id[40];
  snprintf(id, sizeof id, first ? "chain-vats" : "chain-vats-%zu", of);
  putf(p,
       "<table id=\"%s\" class=\"chain-vats\"><thead><tr><th>Vat</th><th>Name</th>"
       "<th class=\"n\">Then (ms per cycle)</th><th class=\"n\">Now (ms per cycle)</th>"
       "<th class=\"n\">Change</th></tr></thead><tbody>\n",
       id);
  for (size_t i = 0; i < c->e.ntop; i++) {
    const ps_explain_vat *v = &c->e.top[i];
    put(p, "<tr><td>");
    txt(p, v->vat);
    put(p, "</td><td><bdi>");
    txt(p, v->name);
    /* milliseconds: in seconds every vat read 0.001 then and now, -0.000 */
    put(p, "</bdi></td><td class=\"n\">");
    ps_html_fmt_num(p, v->then * 1000.0);
    put(p, "</td><td class=\"n\">");
    ps_html_fmt_num(p, v->now * 1000.0);
    put(p, "</td><td class=\"n\">");
    if (v->then > 0)
      ps_html_fmt_change(p, (v->now - v->then) / v->then * 100.0);
    else
      put(p, v->now > 0 ? "new" : "–");
    put(p, "</td></tr>\n");
  }
  put(p, "</tbody></table>\n");
}

/* Inside the chain: the slog figures of stage run `of` (docs/report.md,
 * "Inside the chain"): per stage, per vat against the old level, and
 * charts of the vats that moved most and of the top vats per block. */
void ps_html_chain(page *p, size_t of, int first) {
  size_t idx = 0;
  const ps_rchain *c = chain_of(p->d, of, &idx);
  put(p, "<h3>Inside the chain</h3>\n");
  if (!c) {
    put(p, "<p class=\"empty\">No slog figures for this run (no chain-stage slog read).</p>\n");
    return;
  }
  chain_stages(p, c, of, first);
  putf(p,
       "<p>Vats by the change of their delivery seconds per cycle, against %zu run%s %s; "
       "BOYD share of delivery time ",
       c->e.old_runs, c->e.old_runs == 1 ? "" : "s",
       c->regressed ? "of the level before the regression" : "before this one");
  ps_html_fmt_num(p, c->e.boyd_then * 100.0);
  put(p, " % then, ");
  ps_html_fmt_num(p, c->e.boyd_now * 100.0);
  put(p, " % now.</p>\n");
  if (!c->e.ntop) {
    put(p, "<p class=\"empty\">No vat took part in a complete stage with cycles.</p>\n");
    return;
  }
  chain_vats(p, c, of, first);
  putf(p, "<div class=\"charts\"><figure><figcaption>Delivery seconds per cycle of the vats "
          "that moved most, then and now</figcaption><div class=\"chart\"><canvas "
          "data-chart=\"chain-vats\" data-chain=\"%zu\" role=\"img\" aria-label=\"delivery "
          "seconds per cycle per vat\"></canvas></div></figure></div>\n", idx);
  chain_blocks(p, c, idx);
}
