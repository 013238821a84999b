/*
 * judging/alerting_clock: the alerts that time passing raises
 * (docs/alerts.md "Where they come from"): a source that started no new
 * run for too long (no_new_run), and the agent's own health
 * (agent_unhealthy, agent_recovered) from the sink's statistics and the
 * shared counters of rejected input.
 *
 * Contract
 * - The sources it watches are the configured ones whose format says its
 *   files are runs (ops->run_source, formats/format.h), matched to the
 *   configuration at every look (a reload may change them). A source is
 *   known by its format and path and is watched from when it is first seen.
 * - jd_alerting_clock_run_started() and jd_alerting_clock_run_started_in() hear
 *   that a run started (the run alerts tell it); a start later than any
 *   known begins a new silence (alert/silence.h), and the timer is moved
 *   to its deadline.
 * - Silence is judged only once the backlog present at start has been read
 *   and its runs judged, or two rescans passed (`rd`, `runs`: NULL for
 *   none), so a restart does not mistake runs not yet re-read for silence.
 *   Health follows alert/health.h; `dl` NULL: no server to judge (tests).
 * - One timer judges them; it wakes at the nearest no_new_run deadline or a
 *   quarter of unhealthy_after_s, whichever comes first, and now and then
 *   prunes the raiser's memory. In --once (sh->once) it judges the server
 *   only: jd_alerting_clock_finish() judges rejected input and silence once,
 *   when everything present was read.
 * - Events go to the raiser (alerting_raise.h). Memory: the "sources" and
 *   "health" members of the stage's state section (to/from cJSON).
 */
#ifndef PS_JUDGING_ALERTING_CLOCK_H
#define PS_JUDGING_ALERTING_CLOCK_H

#include <stdint.h>
#include <uv.h>

#include "alert/health.h"
#include "core/config.h"
#include "judging/alerting_raise.h"
#include "pipeline/commit.h"
#include "pipeline/delivery.h"
#include "pipeline/reader.h"
#include "pipeline/runtracker.h"
#include "pipeline/shared.h"

struct cJSON;

/* The sources read back from a state file: the agent saves only the
 * configured ones, so more than this were not written by it. */
#define JD_ALERTING_CLOCK_SOURCES_MAX 1024

typedef struct jd_alerting_clock_source jd_alerting_clock_source;

typedef struct jd_alerting_clock {
  pl_shared *sh;
  jd_alerting_raiser *raiser;
  pl_delivery *dl; /* sink health; NULL: none */
  pl_reader *rd;
  pl_runs *runs;
  pl_commit *commit;
  jd_alerting_clock_source *sources;
  ps_alert_health health;
  uv_timer_t tick;
  int armed; /* the backlog at start was read: silence means silence */
  int held;  /* stopping: the timer stays stopped */
  int ticks;
} jd_alerting_clock;

void jd_alerting_clock_init(jd_alerting_clock *c, pl_shared *sh, jd_alerting_raiser *raiser,
                            pl_delivery *dl, pl_reader *rd, pl_runs *runs, pl_commit *commit);
/* Reads the members back; `r` (may be NULL) counts the sources left out:
 * those beyond JD_ALERTING_CLOCK_SOURCES_MAX, unreadable ones. */
void jd_alerting_clock_from_cjson(jd_alerting_clock *c, const struct cJSON *section,
                                  ps_alert_recall *r);
/* Adds its members to `section`. */
void jd_alerting_clock_to_cjson(jd_alerting_clock *c, struct cJSON *section);
/* How many sources it knows (configured or read back). */
size_t jd_alerting_clock_nsources(const jd_alerting_clock *c);
/* Starts the timer. */
void jd_alerting_clock_start(jd_alerting_clock *c);

/* A run of source `src` started at `start_s` (unix seconds). */
void jd_alerting_clock_run_started(jd_alerting_clock *c, const ps_source_cfg *src, int64_t start_s);
/* A run in run folder `folder` started: its source is the one of run
 * folders (ops->run_folder) whose path (up to a wildcard) holds it. */
void jd_alerting_clock_run_started_in(jd_alerting_clock *c, const char *folder, int64_t start_s);

/* --once: everything present was read. */
void jd_alerting_clock_finish(jd_alerting_clock *c);
void jd_alerting_clock_hold(jd_alerting_clock *c);
void jd_alerting_clock_close(jd_alerting_clock *c);
void jd_alerting_clock_free(jd_alerting_clock *c);

#endif
