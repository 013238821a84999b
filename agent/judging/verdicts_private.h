/*
 * verdicts_private.h: what the parts of the verdict stage share
 * (agent/judging/verdicts.c: the look, sending and state; verdicts_fetch.c:
 * the history read back; verdicts_triage.c: the decisions; verdicts_growth.c:
 * growth against its limit and across revisions; verdicts_slogdrift.c: the
 * slog's stage drift; verdicts_judge.c: the judges). Each part's state is
 * its sub-struct of jd_verdicts (include/judging/verdicts.h, "Parts"). Not
 * a contract for anyone else: the stage's own is include/judging/verdicts.h.
 */
#ifndef PS_JUDGING_VERDICTS_PRIVATE_H
#define PS_JUDGING_VERDICTS_PRIVATE_H

#include <cjson/cJSON.h>

#include "core/figures.h"
#include "judging/verdicts.h"
#include "verdict/growth_limit.h"

#define JD_VERDICTS_MOD "verdicts"
#define JD_VERDICTS_LOADGEN "loadgen"
/* A failed read is tried again after 2 s, doubling (history and triage). */
#define HISTORY_RETRY_FIRST_MS 2000
/* The first history read looks this far back from the runs to judge, each
 * further read twice as far, until the window is full or the span covers
 * any history a database can hold (docs/verdicts.md, "Where the history
 * comes from": every read is bounded in time). */
#define JD_VERDICTS_DAY_NS (86400LL * 1000000000LL)
#define HISTORY_SPAN_FIRST_NS (30 * JD_VERDICTS_DAY_NS)
/* Triage decisions are read every minute, and before a pass when the last
 * read is older than a few seconds, so a decision taken just before a run
 * ends counts for that run (docs/verdicts.md "Triage"). */
#define TRIAGE_READ_MS 60000
#define TRIAGE_FRESH_MS 3000

struct jd_vseries {
  jd_vseries *next;
  char *source, *series, *host; /* the ledger series' key */
  int64_t span_ns;     /* how far back the next history read looks */
  int64_t until_ns;    /* where the last read began: the next reads before it */
  int synced;          /* the server's history was merged, or there is none */
  unsigned fails;      /* history reads that failed in a row */
  uint64_t retry_at;   /* uv_now() before which it is not read again */
  int waiting_server;  /* --once: the server could not give it now */
};

/* PASS_LIMIT and PASS_SLOG_DRIFT mark nothing done: judging again comes
 * from the slog's points (verdicts_growth.c, verdicts_slogdrift.c). */
typedef enum { PASS_SERIES, PASS_STAGES, PASS_DSS, PASS_LIMIT, PASS_SLOG_DRIFT } pass_kind;

struct jd_vpass {
  jd_vpass *next;
  jd_verdicts *vd;
  pass_kind kind;
  int failed; /* judging it went wrong: nothing is marked done */
  char *source, *series, *host; /* PASS_SERIES: whose runs to mark */
  char **runs, **hosts;  /* PASS_SERIES: the runs judged, (host, name) */
  uint64_t *put_seqs;    /* PASS_SERIES: and which of their puts */
  size_t nruns;
  jd_lg_run *ended;      /* PASS_STAGES: the run judged */
  jd_dss_doc *doc;       /* PASS_DSS */
  uint64_t *growth_seqs; /* PASS_LIMIT: the held stages' seqs */
  size_t ngrowth;
};

/* The driver's table (verdicts.c sets vd->driver at init): what a part
 * hands back when a read or a point of its own, not a call of the driver,
 * ends on the loop. The driver calls down into its parts and never the
 * other way (docs/architecture.md, "stages never call back up"): a part
 * returns what it judged, or goes through this table. */
struct jd_vdriver {
  /* a look at what is due after `delay` ms (0: in the next loop turn) */
  void (*look)(jd_verdicts *vd, uint64_t delay);
  /* sends a pass's verdicts (aux batches); its runs are marked done when
   * every batch was acknowledged; takes `p` */
  void (*send)(jd_verdicts *vd, jd_vpass *p, const ps_verdict_list *l);
};

/* The history (verdicts_fetch.c, `history`): the series' read state, found
 * (NULL: none) or made when first asked for (NULL: out of memory); one
 * history read of `vs` started (history.fetching), or a negative errno and
 * nothing started. */
const jd_vseries *jd_verdicts_fetch_find(const jd_vhistory_state *h, const char *source,
                                         const char *series, const char *host);
jd_vseries *jd_verdicts_fetch_series(jd_vhistory_state *h, const char *source, const char *series,
                                     const char *host);
int jd_verdicts_fetch_history(jd_verdicts *vd, jd_vseries *vs);
void jd_verdicts_fetch_free(jd_vhistory_state *h);

/* Triage (verdicts_triage.c, `triage`): the triage_file read again on the
 * threadpool (judging waits; what it could not read is said, and the
 * decisions in force stay); at a reload, read again and the server asked
 * at once; a read of the server's decisions started when one is due. The
 * decisions judged under as a JSON array for the state, and back (how many
 * damaged entries were left out). */
void jd_verdicts_triage_init(jd_vtriage_state *t);
void jd_verdicts_triage_read_file(jd_verdicts *vd, const ps_config *cfg);
void jd_verdicts_triage_reload(jd_verdicts *vd, const ps_config *cfg);
void jd_verdicts_triage_fetch(jd_verdicts *vd);
cJSON *jd_verdicts_triage_to_json(const jd_vtriage_state *t);
size_t jd_verdicts_triage_from_json(jd_vtriage_state *t, const cJSON *a);
void jd_verdicts_triage_free(jd_vtriage_state *t);

/* The judges (verdicts_judge.c): each judges what is due into `l` (made
 * empty by the caller) and returns the pass the driver sends it as (its
 * `failed` set when judging went wrong), or NULL when there is nothing to
 * judge or no memory (nothing is sent; judged again at a later look). */
const char *jd_verdicts_candidate_against(const jd_verdicts *vd, const char *source,
                                          const char *series);
jd_vpass *jd_verdicts_judge_series(jd_verdicts *vd, ps_ledger_series *s, ps_verdict_list *l);
jd_vpass *jd_verdicts_judge_stages(jd_verdicts *vd, jd_lg_run *r, ps_verdict_list *l);
jd_vpass *jd_verdicts_judge_dss(jd_verdicts *vd, jd_dss_doc *d, ps_verdict_list *l);

/* Kernel growth against its limit (verdicts_growth.c): a judged stage is
 * held from its slog point until its verdicts are acknowledged, waiting for
 * its run's end or out in a pass (`sent`, found again by `seq`), and is
 * saved with the stage's state: a slog read to its end is not read again
 * after a restart, so what it left to judge must come back from the state. */
typedef struct jd_vgrowth {
  struct jd_vgrowth *next;
  ps_growth_stage g;
  char *run, *series, *revision;
  uint64_t seq;
  uint64_t held_ms; /* uv_now() when it was held */
  int sent;
} jd_vgrowth;
/* Every held stage let go (at the stage's end). */
void jd_verdicts_growth_clear(jd_vgrowth_state *gs);
/* The run `run` ended: its held stages are judged. Returns whether their
 * growth has the run's series judged again (a look is due at once). */
int jd_verdicts_growth_run_ended(jd_verdicts *vd, const char *run);
/* From the look: held stages of known runs that are not out are sent (a
 * failed pass, a restart). `waiting`: whether such a stage is held. */
void jd_verdicts_growth_due(jd_verdicts *vd);
/* Whether a held stage waits to be sent. */
int jd_verdicts_growth_unsent(const jd_verdicts *vd);
/* Whether the series wait for the other stages' growth of a run judged
 * again for one's: while the slog reader has stages left, at most
 * GROWTH_WAIT_MAX_MS (30 s) from the first; the wait's start is this
 * part's alone to set and end. */
int jd_verdicts_growth_rejudge_wait(jd_verdicts *vd, uint64_t now);
int jd_verdicts_growth_waiting(const jd_verdicts *vd);
/* A limit pass answered: acknowledged, its stage is let go; failed, it is
 * sent again at a later look. */
void jd_verdicts_growth_finished(jd_vgrowth_state *gs, uint64_t seq, int ok);
/* The held stages as a JSON array for the state, and back. */
cJSON *jd_verdicts_growth_to_json(const jd_vgrowth_state *gs);
/* Returns how many damaged entries were left out. */
size_t jd_verdicts_growth_from_json(jd_verdicts *vd, const cJSON *a);
/* Growth across revisions: a run's growth per cycle as series metrics, the
 * largest of its judged stages (docs/verdicts.md, "Kernel growth across
 * revisions"). `of` reads the run's (NaN: none, or not a judged metric);
 * `fold` raises the run's to `g` where `g` is larger and says whether one
 * rose. Indexed by ps_growth_figure_id. */
void jd_verdicts_growth_of(const jd_verdicts *vd, const ps_ledger_run *r,
                           double out[PS_GROWTH_NFIGURES]);
int jd_verdicts_growth_fold(jd_verdicts *vd, ps_ledger_run *r, const double g[PS_GROWTH_NFIGURES]);
/* The series' runs from `at` on are judged again (their put_seq renewed:
 * a pass still out judged the old values) at the caller's next look. */
void jd_verdicts_rejudge_from(jd_verdicts *vd, ps_ledger_series *s, size_t at);

/* The slog's stage drift (verdicts_slogdrift.c): its timer closed, the
 * runs waiting dropped. */
void jd_verdicts_slogdrift_close(jd_vslogdrift_state *sd);
/* A slog point as it is encoded: its per-block rows held for the run's
 * stage drift (judging/verdicts_sdheld.h). */
void jd_verdicts_slogdrift_point(jd_verdicts *vd, const ps_point *p);
/* The runs waiting for more of their stages are read now. */
void jd_verdicts_slogdrift_kick(jd_verdicts *vd);
/* A slog point as it is encoded: a judged stage's kernel growth. */
void jd_verdicts_growth_point(jd_verdicts *vd, const ps_point *p);

#endif
