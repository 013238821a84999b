/*
 * report/model: what the report shows, as read back from InfluxDB: the
 * runs, their verdicts, the stages of the newest run, the DSS bench points
 * and the agent's health (docs/report.md; every name is a measurement,
 * tag or field of docs/schema.md).
 *
 * Contract
 * - One ps_report_data owns everything in it (strings and arrays); one call
 *   of ps_report_data_free() releases it all, also when half filled.
 * - Absent numbers are NAN (a field InfluxDB did not hold); absent times 0.
 * - The query side (report/query.h) only appends rows. ps_report_finish()
 *   then settles them once: a run's status from its markers and its
 *   `loadgen_run` point, runs newest first, a DSS results file reduced to
 *   its newest version, the source filter applied. The writer
 *   (report/html.h) reads a finished model and never changes it.
 * - Strings are kept exactly as the server sent them (they may hold any
 *   text a run folder or an arm label can); escaping is the writer's job.
 * - Every row keeps its `host` tag (NULL: the point had none). A run is
 *   (host, name): two bench machines run folders of the same names, and
 *   their runs, verdicts, DSS files and stages are never merged
 *   (docs/report.md). `hosts`, when set, narrows the page to those hosts
 *   (the query asks for nothing else).
 */
#ifndef PS_REPORT_MODEL_H
#define PS_REPORT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "verdict/explain.h"

#include "core/figures.h"
#include "readback/benchmarker.h"
#include "readback/status.h"
#include "verdict/triage.h"

/* The run-level metrics of loadgen_run the page tabulates and trends: the
 * headline figures the verdicts judge, in the order of their rows in
 * core/figures.h (field, label, unit). */
#define PS_REPORT_NMETRICS PS_FIGURES_NHEADLINE

typedef ps_figure ps_report_metric;

extern const ps_report_metric *const ps_report_metrics;
/* The metric's index, or -1. */
int ps_report_metric_index(const char *field);

/* A run's status, read with the one table of readback/status.h; the
 * report's names for its values. */
typedef ps_rb_status ps_rstatus;
#define PS_RS_UNKNOWN PS_RB_UNKNOWN
#define PS_RS_RUNNING PS_RB_RUNNING
#define PS_RS_SUCCESS PS_RB_SUCCESS
#define PS_RS_FAILED PS_RB_FAILED
#define PS_RS_INTERRUPTED PS_RB_INTERRUPTED
#define PS_RS_STALLED PS_RB_STALLED

/* One loadgen run: its `runs` markers and its `loadgen_run` point. */
typedef struct ps_rrun {
  char *host; /* NULL: no host tag */
  char *name;
  char *revision;  /* NULL when unknown */
  char *test_type; /* NULL when unknown */
  char *text;      /* the end marker's sentence (a failure's error line) */
  ps_rstatus status;
  int64_t start_ns; /* 0: unknown */
  int64_t end_ns;       /* the end marker's time, else the stall marker's */
  int64_t stalled_ns;   /* the stall marker's time */
  int64_t run_point_ns; /* the loadgen_run point's time (stats.startedAt) */
  double duration_s;
  double metric[PS_REPORT_NMETRICS];
  int have_exit;
  int64_t exit_code;
  /* what the markers and the run point said, before ps_report_finish() */
  ps_rstatus end_status, stalled_status, point_status;
  int have_start_marker;
} ps_rrun;

/* One perfship_verdict point. */
typedef struct ps_rverdict {
  char *host;
  char *source, *series, *metric, *run;
  char *stage;            /* stage drift; NULL otherwise */
  char *arm, *reference;  /* DSS; NULL otherwise */
  char *verdict;          /* "regression", "improvement", "none" */
  char *change_run, *method, *revision;
  char *good_revision, *bad_revision; /* a change's revision range, or NULL */
  char *against;          /* a candidate's: the series it was judged against, else NULL */
  char *vat, *vat_name;   /* stage drift of a vat's figure: its vatID and name, else NULL */
  char *note;             /* a benchmarker report's steps against the one before, else NULL */
  double value, baseline, change_pct, p_value;
  double baseline_runs, variants, variants_agree;
  int64_t time_ns;
} ps_rverdict;

/* One dss_bench point (a test, arm and variant of a results file). */
typedef struct ps_rdss {
  char *host;
  char *run, *test, *arm, *variant, *sweep;
  int64_t time_ns;
  double variant_index, rps, p95, errors;
} ps_rdss;

/* A DSS results file as its `runs` marker tells it. */
typedef struct ps_rdssfile {
  char *host;
  char *run;
  int64_t time_ns;
  ps_rstatus status;
  char *text;
} ps_rdssfile;

/* A run and a time: the newest loadgen_stage point of a run, from which
 * the stage run is picked. */
typedef struct ps_rstamp {
  char *host;
  char *run;
  int64_t time_ns;
} ps_rstamp;

/* loadgen_stage_cycles of a stage run, one row per stage and task. */
typedef struct ps_rstage {
  size_t of; /* its stage run: index in d->stage_runs */
  char *stage, *task;
  double cycles, avg_duration, p95_duration, success_rate;
} ps_rstage;

/* loadgen_stage_blocks (summary onlyLive) of a stage run, per stage. */
typedef struct ps_rblocks {
  size_t of; /* its stage run: index in d->stage_runs */
  char *stage;
  double avg_swingset, avg_block, block_count;
} ps_rblocks;

/* The newest self-metrics point of an agent (`perfship`, per host). */
typedef struct ps_rhealth {
  char *host;
  int64_t time_ns;
  double points_written, records_rejected, points_rejected, uptime_s;
} ps_rhealth;

/* Inside the chain: a stage run's slog figures and its explanation
 * (verdict/explain.h, read by readback/explain.h). At most PS_RCHAIN_STAGES
 * stages are kept. */
#define PS_RCHAIN_STAGES 64
/* One vat of the chart of delivery seconds per block: the run's vats with
 * the most delivery seconds over its stages that take part (readback/explain.h
 * ps_rb_explain_query_blocks), its points points[begin .. begin + n). */
typedef struct ps_rchain_point {
  double height, seconds; /* blockHeight, deliverySeconds */
} ps_rchain_point;

typedef struct ps_rchain_vat {
  char vat[48];
  char name[128]; /* "" when the slog named none */
  size_t begin, n;
  int more; /* the server held more points than were read */
} ps_rchain_vat;

typedef struct ps_rchain {
  size_t of; /* its stage run: index in d->stage_runs */
  ps_explanation e;
  int regressed; /* the explanation is of a regression of time in the chain */
  ps_explain_stage_row stages[PS_RCHAIN_STAGES]; /* `run` not kept: NULL */
  size_t nstages;
  ps_rchain_vat chart[PS_EXPLAIN_TOP];
  size_t nchart;
  ps_rchain_point *points; /* owned; by vat, then as the server answered */
  size_t npoints;
} ps_rchain;

#define PS_REPORT_ARRAY(type, name)                                                   \
  type *name;                                                                         \
  size_t n##name, cap_##name

typedef struct ps_report_data {
  int64_t now_ns;   /* when the page was made */
  int64_t since_ns; /* the oldest time it shows */
  char *source;     /* only this source's sections ("loadgen", "dss_bench"); NULL all */
  char **hosts;     /* only these hosts (nhosts of them); NULL: every host */
  size_t nhosts;
  PS_REPORT_ARRAY(ps_rrun, runs);
  PS_REPORT_ARRAY(ps_rverdict, verdicts);
  PS_REPORT_ARRAY(ps_rdss, dss);
  PS_REPORT_ARRAY(ps_rdssfile, dssfiles);
  PS_REPORT_ARRAY(ps_rstage, stages);
  PS_REPORT_ARRAY(ps_rblocks, blocks);
  PS_REPORT_ARRAY(ps_rhealth, health);
  PS_REPORT_ARRAY(ps_rchain, chains);
  /* Newest stage data per run (loadgen_stage), before the stage run is
   * picked: the candidates. */
  PS_REPORT_ARRAY(ps_rstamp, stage_candidates);
  /* The runs whose stages are shown: the newest of each host, newest
   * first. */
  PS_REPORT_ARRAY(ps_rstamp, stage_runs);
  /* The stage run the stage statements ask for (the query sets each in
   * turn; the newest one after ps_report_pick_stage_run()), and its index. */
  char *stage_run;
  char *stage_host; /* its host (NULL: no host tag) */
  size_t stage_of;
  /* The triage decisions (verdict/triage.h): an acknowledged change and an
   * excluded run are shown so, with who, when, why and the ticket. */
  ps_triage_set triage;
  char *last_error;      /* the local agent's last error line, or NULL */
  char *compare_url;     /* verdicts.compare_url (a revision range's link), or NULL */
  char *alert_error;     /* the newest agent_unhealthy alert text, or NULL */
  int64_t alert_error_ns;
  /* The benchmarker's steps and fits of the range (readback/benchmarker.h):
   * the page's section per configuration and load. */
  ps_rb_bm_data bm;
} ps_report_data;

void ps_report_data_init(ps_report_data *d, int64_t now_ns, int64_t since_ns,
                         const char *source);
/* Narrows the page to these hosts (copied). 0 or -ENOMEM. */
int ps_report_set_hosts(ps_report_data *d, const char *const *hosts, size_t n);
void ps_report_data_free(ps_report_data *d);

/* Appends a zeroed element (numbers NAN) and returns it, or NULL (ENOMEM). */
ps_rrun *ps_report_add_run(ps_report_data *d, const char *name);
ps_rverdict *ps_report_add_verdict(ps_report_data *d);
ps_rdss *ps_report_add_dss(ps_report_data *d);
ps_rdssfile *ps_report_add_dssfile(ps_report_data *d);
ps_rstage *ps_report_add_stage(ps_report_data *d);
ps_rblocks *ps_report_add_blocks(ps_report_data *d);
ps_rhealth *ps_report_add_health(ps_report_data *d);
ps_rchain *ps_report_add_chain(ps_report_data *d);
ps_rstamp *ps_report_add_stage_candidate(ps_report_data *d);

/* The run of that name on that host (NULL: a run without host tag), or
 * NULL. */
ps_rrun *ps_report_find_host_run(ps_report_data *d, const char *host, const char *name);
/* The first run of that name, whatever its host, or NULL. */
ps_rrun *ps_report_find_run(ps_report_data *d, const char *name);
/* NULL-safe string equality, for host tags that may be absent. */
int ps_report_same(const char *a, const char *b);

/* The runs whose stages the page shows: of each host, the newest
 * candidate that is a loadgen run of the page (the same host and name).
 * Fills d->stage_runs, newest first, and sets d->stage_run and
 * d->stage_host to the first (or leaves them NULL). */
int ps_report_pick_stage_run(ps_report_data *d);

/* Makes stage run `k` of d->stage_runs the one the stage statements ask
 * for. 0 or -ENOMEM. */
int ps_report_use_stage_run(ps_report_data *d, size_t k);

/* Settles the rows (see the contract). Returns 0 or -ENOMEM. */
int ps_report_finish(ps_report_data *d);

/* Does the page show this source's sections? */
int ps_report_shows(const ps_report_data *d, const char *source);

#endif
