#!/usr/bin/env python3
"""Generates perfship's dashboards from one description of their cells.

Every dashboard exists three times: as a Chronograf resource
(chronograf/*.dashboard), as a Grafana dashboard (grafana/dashboards/*.json)
and as paste-ready query files (queries/influxql/, queries/flux/). Keeping
them in sync by hand is how dashboards rot, so they are all written from
DASHBOARDS below. The committed files are the product (installed to
/usr/share/perfship/dashboards); this script only regenerates them:

    python3 dashboards/build.py          # rewrite the generated files
    python3 dashboards/build.py --check  # exit 1 if any is out of date

Queries are written once in Grafana's InfluxQL dialect ($timeFilter,
$__interval, '$run') and translated for Chronograf (:dashboardTime:,
:interval:, :run:). Flux variants use the InfluxDB 2 UI's variables
(v.timeRangeStart, v.windowPeriod, v.run).

What each tool's loader accepts decides the shapes written here (checked by
tests/integration/test_dashboards.py and test_loaders.py; the versions are
in docs/queries.md):
  - Chronograf's resources path opens a dashboard by reading every
    *.dashboard file as a bare dashboard and comparing its top-level id, so
    the files are bare objects with unique negative ids (its export wrapper
    is listed but answers 404 when opened);
  - Grafana panels carry the options its published schema requires, and the
    InfluxDB annotations use the `target` form Grafana 10+ stores (the
    top-level query/textColumn fields are the legacy form it migrates).
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DB = "perf"
RP = "autogen"
BUCKET = "perf/autogen"
DS = {"type": "influxdb", "uid": "perfship-influxdb"}
# A variable's values are bounded in time: on InfluxDB 3 an unbounded SHOW
# TAG VALUES lists the last day's values only, so the run and revision
# pickers would offer yesterday's runs (docs/queries.md, "InfluxDB 3").
# Grafana fills $timeFilter in a variable's query; Chronograf fills only the
# dashboard's own variables there, never :dashboardTime:, so its pickers
# look back as far as a text variable of the dashboard says.
CHRONOGRAF_RANGE_VAR = "picker_range"
CHRONOGRAF_RANGE_DEFAULT = "90d"
CHRONOGRAF_TAG_VALUES = ("SHOW TAG VALUES ON :database: FROM :measurement: WITH KEY=:tagKey:"
                         f" WHERE time > now() - :{CHRONOGRAF_RANGE_VAR}:")

# Colours shared by both tools so a failed run looks the same everywhere.
RED, YELLOW, GREEN, ORANGE = "#DC4E58", "#FFB94A", "#4ED8A0", "#F48D38"
STATUS_COLORS = {"failed": RED, "stalled": RED, "interrupted": ORANGE,
                 "running": YELLOW, "success": GREEN}
# perfship_verdict.verdict (docs/schema.md, "Verdicts"): only a change is coloured.
VERDICT_COLORS = {"regression": RED, "improvement": GREEN, "none": "transparent"}
# perfship_alert.event (docs/schema.md, "Alerts").
ALERT_COLORS = {"run_failed": RED, "run_stalled": RED, "run_interrupted": ORANGE,
                "no_new_run": ORANGE, "regression": RED, "agent_unhealthy": RED,
                "run_recovered": GREEN, "improvement": GREEN, "agent_recovered": GREEN}


def flux_from(measurement, fields=None, start="v.timeRangeStart", stop="v.timeRangeStop", where=None):
    """The common head of a Flux query: bucket, range, measurement, fields."""
    rng = f"range(start: {start}, stop: {stop})" if stop else f"range(start: {start})"
    preds = [f'r._measurement == "{measurement}"']
    if fields:
        preds.append("(" + " or ".join(f'r._field == "{f}"' for f in fields) + ")")
    if where:
        preds.append(where)
    return (f'from(bucket: "{BUCKET}")\n  |> {rng}\n'
            f'  |> filter(fn: (r) => {" and ".join(preds)})\n')


PIVOT = '  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")\n'


def cell(title, kind, influxql, flux, w=12, h=8, expect=None, note="", colored=None, **extra):
    """One dashboard cell. kind: line, table, stat, bar. `colored` is (column,
    {value: colour}) for a table whose text column Grafana colours. `expect`
    is read by the integration test only (what a user would check in the cell)."""
    return dict(title=title, kind=kind, influxql=influxql.strip(), flux=flux.strip(),
                w=w, h=h, expect=expect or {}, note=note, colored=colored, **extra)


def var(name, measurement, tag, label):
    return dict(name=name, measurement=measurement, tag=tag, label=label)


RUN_MARKERS_ANNOTATION = {
    "name": "Run markers",
    "influxql": 'SELECT "text", "status", "event" FROM "runs" WHERE $timeFilter',
    "textColumn": "text", "tagsColumn": "status", "color": "purple",
}
# perfship's verdicts (docs/schema.md, "Verdicts") at their run's time: only
# a change is marked, so a panel shows where a metric got worse or better and
# which run began it, without a query that recomputes it.
VERDICT_ANNOTATION = {
    "name": "Verdicts: regressions and improvements",
    "influxql": 'SELECT "run", "verdict", "metric", "series", "host", "change_pct", "change_run" FROM "perfship_verdict" WHERE $timeFilter AND "verdict" != \'none\'',
    "textColumn": "run", "tagsColumn": "verdict,metric,series,host", "color": "red",
}
# What people decided about verdicts (docs/schema.md, "Triage decisions"), at
# the time of the decision. `host` is a tag of the point and the rest fields;
# InfluxQL selects tags and fields by name alike, so the query holds whichever
# they are.
TRIAGE_ANNOTATION = {
    "name": "Triage decisions",
    "influxql": 'SELECT "reason", "action", "run", "metric", "host", "who", "ticket" FROM "perfship_triage" WHERE $timeFilter',
    "textColumn": "reason", "tagsColumn": "action,run,metric,host,who", "color": "blue",
}
JUDGED_ANNOTATIONS = [RUN_MARKERS_ANNOTATION, VERDICT_ANNOTATION, TRIAGE_ANNOTATION]

DAILY = dict(
    slug="daily-runs", uid="perfship-daily-runs", chronograf_id=-101,
    title="perfship: daily runs",
    description="The latest runs, their status, and the key run metrics across revisions.",
    time_from="now-30d",
    variables=[var("revision", "loadgen_run", "revision", "Revision"),
               var("compare_revision", "loadgen_run", "revision", "Compare with revision")],
    annotations=JUDGED_ANNOTATIONS,
    cells=[
        cell("Runs: last status (failed and stalled in red, running in yellow)", "table",
             '''SELECT last("text") AS "text", "status", "event", "source", "duration" FROM "runs" WHERE $timeFilter GROUP BY "run"''',
             flux_from("runs") + PIVOT +
             '''  |> group(columns: ["run"])
  |> last(column: "_time")
  |> group()
  |> keep(columns: ["_time", "run", "status", "event", "source", "text", "duration"])''',
             w=24, h=8, colored=("status", STATUS_COLORS),
             expect={"kind": "runs_status"}),
        cell("Failed, interrupted or stalled runs in range", "stat",
             '''SELECT count("text") AS "bad runs" FROM "runs" WHERE $timeFilter AND "event" = 'end' AND ("status" = 'failed' OR "status" = 'interrupted' OR "status" = 'stalled')''',
             flux_from("runs", ["text"], where='r.event == "end" and (r.status == "failed" or r.status == "interrupted" or r.status == "stalled")') +
             '''  |> group()
  |> count()''',
             w=6, h=4, thresholds=[(0, GREEN), (1, RED)],
             expect={"kind": "bad_run_count"}),
        cell("Runs started in range", "stat",
             '''SELECT count("text") AS "runs started" FROM "runs" WHERE $timeFilter AND "event" = 'start\'''',
             flux_from("runs", ["text"], where='r.event == "start"') + '''  |> group()
  |> count()''',
             w=6, h=4, expect={"kind": "started_count"}),
        cell("Run summaries (one row per run, the per-revision comparison)", "table",
             '''SELECT last("status") AS "status", last("duration") AS "duration", last("cycleSuccessRate") AS "cycleSuccessRate", last("cycleAvgDuration") AS "cycleAvgDuration", last("chainBootstrapDuration") AS "chainBootstrapDuration", last("walletDeployDuration") AS "walletDeployDuration", last("loadgenDeployDuration") AS "loadgenDeployDuration", last("live_avgSwingsetTime") AS "live_avgSwingsetTime", last("live_avgSwingsetPercentage") AS "live_avgSwingsetPercentage", last("sdkRevision") AS "sdkRevision" FROM "loadgen_run" WHERE $timeFilter GROUP BY "run", "revision"''',
             flux_from("loadgen_run") + PIVOT +
             '''  |> group()
  |> keep(columns: ["_time", "run", "revision", "status", "duration", "cycleSuccessRate", "cycleAvgDuration", "chainBootstrapDuration", "walletDeployDuration", "loadgenDeployDuration", "live_avgSwingsetTime", "live_avgSwingsetPercentage", "sdkRevision"])
  |> sort(columns: ["_time"], desc: true)''',
             w=12, h=8, colored=("status", STATUS_COLORS), expect={"kind": "run_summaries"}),
        cell("Cycle success rate (%) per run", "line",
             '''SELECT "cycleSuccessRate" AS "cycle success rate" FROM "loadgen_run" WHERE $timeFilter''',
             flux_from("loadgen_run", ["cycleSuccessRate"]),
             expect={"kind": "run_field", "field": "cycleSuccessRate", "column": "cycle success rate"}),
        cell("Cycle average duration (s), successful runs", "line",
             '''SELECT "cycleAvgDuration" AS "cycle avg duration" FROM "loadgen_run" WHERE $timeFilter AND "success" = true''',
             flux_from("loadgen_run", ["cycleAvgDuration", "success"]) + PIVOT +
             '''  |> filter(fn: (r) => r.success == true)
  |> map(fn: (r) => ({_time: r._time, _value: r.cycleAvgDuration, _field: "cycleAvgDuration"}))''',
             expect={"kind": "run_field", "field": "cycleAvgDuration", "column": "cycle avg duration", "success_only": True}),
        cell("Chain bootstrap, wallet deploy and loadgen deploy (s)", "line",
             '''SELECT "chainBootstrapDuration" AS "chain bootstrap", "walletDeployDuration" AS "wallet deploy", "loadgenDeployDuration" AS "loadgen deploy" FROM "loadgen_run" WHERE $timeFilter''',
             flux_from("loadgen_run", ["chainBootstrapDuration", "walletDeployDuration", "loadgenDeployDuration"]),
             expect={"kind": "run_field", "field": "chainBootstrapDuration", "column": "chain bootstrap"}),
        cell("Live average swingset time (s) and percentage", "line",
             '''SELECT "live_avgSwingsetTime" AS "avg swingset time (s)", "live_avgSwingsetPercentage" AS "avg swingset %" FROM "loadgen_run" WHERE $timeFilter''',
             flux_from("loadgen_run", ["live_avgSwingsetTime", "live_avgSwingsetPercentage"]),
             expect={"kind": "run_field", "field": "live_avgSwingsetTime", "column": "avg swingset time (s)"}),
        # Verdicts (docs/schema.md, "Verdicts"): perfship's own judgement of
        # each run, so no panel recomputes a baseline.
        cell("Regressions across revisions in range", "stat",
             '''SELECT count("verdict") AS "regressions" FROM "perfship_verdict" WHERE $timeFilter AND "source" = 'loadgen' AND "method" = 'edivisive' AND "verdict" = 'regression\'''',
             flux_from("perfship_verdict", where='r.source == "loadgen"') + PIVOT +
             '''  |> filter(fn: (r) => r.method == "edivisive" and r.verdict == "regression")
  |> group()
  |> count(column: "verdict")''',
             w=6, h=8, thresholds=[(0, GREEN), (1, RED)],
             expect={"kind": "regression_count"},
             note="Backfilled runs count too: a regression is one whenever it was found (only the alerts skip them)."),
        cell("Verdicts across revisions: regressions and improvements", "table",
             '''SELECT "verdict", "value", "baseline", "change_pct", "change_run", "baseline_runs", "p_value", "revision", "backfill" FROM "perfship_verdict" WHERE $timeFilter AND "method" = 'edivisive' AND "verdict" != 'none' GROUP BY "series", "metric", "run"''',
             flux_from("perfship_verdict") + PIVOT +
             '''  |> filter(fn: (r) => r.method == "edivisive" and r.verdict != "none")
  |> group()
  |> keep(columns: ["_time", "series", "metric", "run", "verdict", "value", "baseline", "change_pct", "change_run", "baseline_runs", "p_value", "revision", "backfill"])
  |> sort(columns: ["_time"], desc: true)''',
             w=18, h=8, colored=("verdict", VERDICT_COLORS), expect={"kind": "verdicts"},
             note="change_run is the run where the change began; later runs at the new level read none."),
        cell("Change against the baseline (%) per metric", "line",
             '''SELECT "change_pct" AS "change %" FROM "perfship_verdict" WHERE $timeFilter AND "method" = 'edivisive' GROUP BY "metric"''',
             flux_from("perfship_verdict", ["change_pct", "method"]) + PIVOT +
             '''  |> filter(fn: (r) => r.method == "edivisive")
  |> group(columns: ["metric"])
  |> map(fn: (r) => ({_time: r._time, metric: r.metric, _value: r.change_pct, _field: "change_pct"}))''',
             expect={"kind": "verdict_change"}),
        cell("Alerts raised by perfship", "table",
             '''SELECT "run", "text", "id" FROM "perfship_alert" WHERE $timeFilter GROUP BY "event", "source"''',
             flux_from("perfship_alert") + PIVOT + '''  |> group()
  |> keep(columns: ["_time", "event", "source", "run", "text", "id"])
  |> sort(columns: ["_time"], desc: true)''',
             colored=("event", ALERT_COLORS), expect={"kind": "alerts"}),
        cell("Cycles per stage: revision $revision against $compare_revision (task all)", "table",
             '''SELECT "cycleSuccessRate", "avgDuration", "p95Duration", "cycleCount" FROM "loadgen_stage_cycles" WHERE ("revision" = '$revision' OR "revision" = '$compare_revision') AND "task" = 'all' GROUP BY "stage", "revision"''',
             flux_from("loadgen_stage_cycles", ["cycleSuccessRate", "avgDuration", "p95Duration", "cycleCount"],
                       start="0", stop=None, where='(r.revision == v.revision or r.revision == v.compare_revision) and r.task == "all"') + PIVOT +
             '''  |> group()
  |> keep(columns: ["stage", "revision", "run", "cycleSuccessRate", "avgDuration", "p95Duration", "cycleCount"])
  |> sort(columns: ["stage", "revision"])''',
             w=12, h=8, expect={"kind": "revision_stage_cycles"}),
        cell("Live blocks per stage: revision $revision against $compare_revision", "table",
             '''SELECT "avgSwingsetTime", "avgSwingsetPercentage", "avgBlockDuration", "blockCount" FROM "loadgen_stage_blocks" WHERE ("revision" = '$revision' OR "revision" = '$compare_revision') AND "summary" = 'onlyLive' GROUP BY "stage", "revision"''',
             flux_from("loadgen_stage_blocks", ["avgSwingsetTime", "avgSwingsetPercentage", "avgBlockDuration", "blockCount"],
                       start="0", stop=None, where='(r.revision == v.revision or r.revision == v.compare_revision) and r.summary == "onlyLive"') + PIVOT +
             '''  |> group()
  |> keep(columns: ["stage", "revision", "run", "avgSwingsetTime", "avgSwingsetPercentage", "avgBlockDuration", "blockCount"])
  |> sort(columns: ["stage", "revision"])''',
             w=12, h=8, expect={"kind": "revision_stage_blocks"}),
        cell("Run markers", "table",
             '''SELECT "run", "event", "status", "text", "backfill" FROM "runs" WHERE $timeFilter''',
             flux_from("runs") + PIVOT + '''  |> group()
  |> keep(columns: ["_time", "run", "event", "status", "text", "backfill"])''',
             w=24, h=6, colored=("status", STATUS_COLORS), expect={"kind": "markers"},
             note="Grafana also shows these as annotations; Chronograf shows its own annotations (database chronograf) when perfship writes them."),
    ])

ONE_RUN = dict(
    slug="one-run", uid="perfship-one-run", chronograf_id=-102,
    title="perfship: one run",
    description="Stage against stage within one loadgen run, and the run's time series.",
    time_from="now-2d",
    variables=[var("run", "loadgen_stage", "run", "Run")],
    annotations=JUDGED_ANNOTATIONS,
    cells=[
        cell("Verdicts of this run: against earlier revisions, and each stage against the first", "table",
             '''SELECT "verdict", "value", "baseline", "change_pct", "change_run", "baseline_runs", "method", "backfill" FROM "perfship_verdict" WHERE "run" = '$run' GROUP BY "metric", "stage"''',
             flux_from("perfship_verdict", None, start="0", stop=None, where="r.run == v.run") + PIVOT +
             '''  |> group()
  |> keep(columns: ["metric", "stage", "verdict", "value", "baseline", "change_pct", "change_run", "baseline_runs", "method", "backfill"])
  |> sort(columns: ["method", "metric", "stage"])''',
             w=24, h=8, colored=("verdict", VERDICT_COLORS), expect={"kind": "run_verdicts"},
             note="stage is empty for the verdicts across revisions (method edivisive); stage_drift compares the stage with the run's first loadgen stage."),
        cell("Cycles per loadgen stage (task all)", "table",
             '''SELECT "cycleCount", "cycleSuccessRate", "avgDuration", "p95Duration", "avgBlockCount" FROM "loadgen_stage_cycles" WHERE "run" = '$run' AND "task" = 'all' GROUP BY "stage"''',
             flux_from("loadgen_stage_cycles", None, start="0", stop=None, where='r.run == v.run and r.task == "all"') + PIVOT +
             '''  |> group()
  |> keep(columns: ["stage", "cycleCount", "cycleSuccessRate", "avgDuration", "p95Duration", "avgBlockCount"])
  |> sort(columns: ["stage"])''',
             w=12, h=8, expect={"kind": "stage_cycles"}),
        cell("Live blocks per stage: swingset time (s) and percentage", "table",
             '''SELECT "blockCount", "avgSwingsetTime", "avgSwingsetPercentage", "p95SwingsetTime", "avgBlockDuration" FROM "loadgen_stage_blocks" WHERE "run" = '$run' AND "summary" = 'onlyLive' GROUP BY "stage"''',
             flux_from("loadgen_stage_blocks", None, start="0", stop=None, where='r.run == v.run and r.summary == "onlyLive"') + PIVOT +
             '''  |> group()
  |> keep(columns: ["stage", "blockCount", "avgSwingsetTime", "avgSwingsetPercentage", "p95SwingsetTime", "avgBlockDuration"])
  |> sort(columns: ["stage"])''',
             w=12, h=8, expect={"kind": "stage_blocks"}),
        cell("Stage timing: restart time (chainInitDuration) and readiness (s)", "table",
             '''SELECT "loadgen", "duration", "chainInitDuration" AS "restart time", "readyDuration", "clientInitDuration", "loadgenInitDuration", "blockCount", "cycleCount" FROM "loadgen_stage" WHERE "run" = '$run' GROUP BY "stage"''',
             flux_from("loadgen_stage", None, start="0", stop=None, where='r.run == v.run') + PIVOT +
             '''  |> group()
  |> keep(columns: ["stage", "loadgen", "duration", "chainInitDuration", "readyDuration", "clientInitDuration", "loadgenInitDuration", "blockCount", "cycleCount"])
  |> sort(columns: ["stage"])''',
             w=12, h=8, expect={"kind": "stage_timing"}),
        cell("Cycles per stage and task", "table",
             '''SELECT "cycleCount", "cycleSuccessRate", "avgDuration", "p95Duration" FROM "loadgen_stage_cycles" WHERE "run" = '$run' AND "task" != 'all' GROUP BY "stage", "task"''',
             flux_from("loadgen_stage_cycles", None, start="0", stop=None, where='r.run == v.run and r.task != "all"') + PIVOT +
             '''  |> group()
  |> keep(columns: ["stage", "task", "cycleCount", "cycleSuccessRate", "avgDuration", "p95Duration"])
  |> sort(columns: ["stage", "task"])''',
             w=12, h=8, expect={"kind": "stage_tasks"}),
        cell("Failed cycles", "table",
             '''SELECT "seq", "duration", "blockCount", "startBlockHeight" FROM "loadgen_cycle" WHERE "run" = '$run' AND "success" = false GROUP BY "stage", "task"''',
             flux_from("loadgen_cycle", None, start="0", stop=None, where='r.run == v.run') + PIVOT +
             '''  |> filter(fn: (r) => r.success == false)
  |> group()
  |> keep(columns: ["_time", "stage", "task", "seq", "duration", "blockCount", "startBlockHeight"])''',
             w=12, h=6, expect={"kind": "failed_cycles"}),
        cell("Block time and swingset time (s)", "line",
             '''SELECT mean("blockDuration") AS "block time", mean("swingsetTime") AS "swingset time" FROM "loadgen_block" WHERE "run" = '$run' AND $timeFilter GROUP BY time($__interval) fill(none)''',
             flux_from("loadgen_block", ["blockDuration", "swingsetTime"], where="r.run == v.run") +
             '''  |> group(columns: ["_field"])
  |> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)''',
             w=12, h=8, expect={"kind": "timeseries", "measurement": "loadgen_block"}),
        cell("Cycle duration by task (s)", "line",
             '''SELECT mean("duration") AS "duration" FROM "loadgen_cycle" WHERE "run" = '$run' AND $timeFilter GROUP BY time($__interval), "task" fill(none)''',
             flux_from("loadgen_cycle", ["duration"], where="r.run == v.run") +
             '''  |> group(columns: ["task"])
  |> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)''',
             expect={"kind": "timeseries", "measurement": "loadgen_cycle", "group": "task"}),
        cell("Process memory: RSS (KiB)", "line",
             '''SELECT max("vmRss") AS "vmRss" FROM "loadgen_process" WHERE "run" = '$run' AND $timeFilter GROUP BY time($__interval), "process" fill(none)''',
             flux_from("loadgen_process", ["vmRss"], where="r.run == v.run") +
             '''  |> group(columns: ["process"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)''',
             expect={"kind": "timeseries", "measurement": "loadgen_process", "group": "process"}),
        cell("Process CPU (user + kernel seconds per second)", "line",
             '''SELECT non_negative_derivative(max("user"), 1s) + non_negative_derivative(max("kernel"), 1s) AS "cpu" FROM "loadgen_process" WHERE "run" = '$run' AND $timeFilter GROUP BY time($__interval), "process" fill(none)''',
             flux_from("loadgen_process", ["user", "kernel"], where="r.run == v.run") + PIVOT +
             '''  |> map(fn: (r) => ({r with _value: r.user + r.kernel}))
  |> group(columns: ["process", "stage"])
  |> derivative(unit: 1s, nonNegative: true)
  |> group(columns: ["process"])
  |> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)''',
             expect={"kind": "timeseries", "measurement": "loadgen_process", "group": "process"}),
        cell("Chain storage (KiB) by area", "line",
             '''SELECT max("kib") AS "kib" FROM "loadgen_storage" WHERE "run" = '$run' AND $timeFilter GROUP BY time($__interval), "area" fill(none)''',
             flux_from("loadgen_storage", ["kib"], where="r.run == v.run") +
             '''  |> group(columns: ["area"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)''',
             expect={"kind": "timeseries", "measurement": "loadgen_storage", "group": "area"}),
    ])

DSS = dict(
    slug="dss-bench", uid="perfship-dss-bench", chronograf_id=-103,
    title="perfship: DSS bench",
    description="Throughput and latency against the swept variant, one series per compared arm.",
    time_from="now-90d",
    variables=[var("dss_run", "dss_bench", "run", "Result folder"),
               var("dss_test", "dss_bench", "test", "Test"),
               var("bm_config", "benchmarker_step", "configuration", "Benchmarker configuration"),
               var("bm_load", "benchmarker_step", "load", "Benchmarker load")],
    annotations=JUDGED_ANNOTATIONS,
    cells=[
        cell("Verdicts of test $dss_test: each arm against the reference arm", "table",
             '''SELECT "verdict", "change_pct", "variants", "variants_agree", "value", "baseline" FROM "perfship_verdict" WHERE "run" = '$dss_run' AND "series" = '$dss_test' AND "method" = 'arm_compare' GROUP BY "arm", "reference", "metric"''',
             flux_from("perfship_verdict", None, start="0", stop=None, where="r.run == v.dss_run and r.series == v.dss_test") + PIVOT +
             '''  |> filter(fn: (r) => r.method == "arm_compare")
  |> group()
  |> keep(columns: ["arm", "reference", "metric", "verdict", "change_pct", "variants", "variants_agree", "value", "baseline"])
  |> sort(columns: ["arm", "metric"])''',
             w=24, h=6, colored=("verdict", VERDICT_COLORS), expect={"kind": "arm_verdicts"},
             note="change_pct is the geometric mean of the per-variant ratios; value and baseline are the arms' geometric means."),
        cell("Requests per second against the variant, per arm", "bar",
             '''SELECT "arm", "variant", "variantIndex", "rps_total" FROM "dss_bench" WHERE "run" = '$dss_run' AND "test" = '$dss_test\'''',
             flux_from("dss_bench", ["variantIndex", "rps_total"], start="0", stop=None,
                       where='r.run == v.dss_run and r["test"] == v.dss_test') + PIVOT +
             '''  |> group(columns: ["arm"])
  |> sort(columns: ["variantIndex"])
  |> keep(columns: ["arm", "variant", "variantIndex", "rps_total"])''',
             w=12, h=9, x_field="variant", y_field="rps_total", expect={"kind": "dss_arms", "field": "rps_total"}),
        cell("p95 latency (ms) against the variant, per arm", "bar",
             '''SELECT "arm", "variant", "variantIndex", "p95_ms" FROM "dss_bench" WHERE "run" = '$dss_run' AND "test" = '$dss_test\'''',
             flux_from("dss_bench", ["variantIndex", "p95_ms"], start="0", stop=None,
                       where='r.run == v.dss_run and r["test"] == v.dss_test') + PIVOT +
             '''  |> group(columns: ["arm"])
  |> sort(columns: ["variantIndex"])
  |> keep(columns: ["arm", "variant", "variantIndex", "p95_ms"])''',
             w=12, h=9, x_field="variant", y_field="p95_ms", expect={"kind": "dss_arms", "field": "p95_ms"}),
        cell("Every point: throughput, latency and errors", "table",
             '''SELECT "variantIndex", "rps_total", "p50_ms", "p95_ms", "errors", "err_p95_ms", "processes" FROM "dss_bench" WHERE "run" = '$dss_run' AND "test" = '$dss_test' GROUP BY "arm", "variant"''',
             flux_from("dss_bench", None, start="0", stop=None, where='r.run == v.dss_run and r["test"] == v.dss_test') + PIVOT +
             '''  |> group()
  |> keep(columns: ["arm", "variant", "variantIndex", "rps_total", "p50_ms", "p95_ms", "errors", "err_p95_ms", "processes"])
  |> sort(columns: ["arm", "variantIndex"])''',
             w=24, h=9, expect={"kind": "dss_points"}),
        cell("Best requests per second of test $dss_test over time, per arm", "line",
             '''SELECT max("rps_total") AS "rps_total" FROM "dss_bench" WHERE $timeFilter AND "test" = '$dss_test' GROUP BY time(1d), "arm" fill(none)''',
             flux_from("dss_bench", ["rps_total"], where='r["test"] == v.dss_test') +
             '''  |> group(columns: ["arm"])
  |> aggregateWindow(every: 1d, fn: max, createEmpty: false)''',
             w=24, h=8, expect={"kind": "dss_trend"}),
        # The InterUSS benchmarker's reports (docs/schema.md "Benchmarker"):
        # the scenarios of one load are the arms.
        cell("Benchmarker $bm_config, load $bm_load: every step, per arm", "table",
             '''SELECT "step", "load_factor", "termination_reason", "throughput", "latency_mean_s", "latency_p95_s", "unsuccessful_share" FROM "benchmarker_step" WHERE "configuration" = '$bm_config' AND "load" = '$bm_load' AND "operation" = 'all' GROUP BY "arm"''',
             flux_from("benchmarker_step", None, start="0", stop=None,
                       where='r.configuration == v.bm_config and r.load == v.bm_load and r.operation == "all"') + PIVOT +
             '''  |> group()
  |> keep(columns: ["arm", "step", "load_factor", "termination_reason", "throughput", "latency_mean_s", "latency_p95_s", "unsuccessful_share"])
  |> sort(columns: ["arm", "step"])''',
             w=24, h=9, expect={"kind": "bm_steps"},
             note="Throughput over each step's stable window; steps that went Unstable or never got stable say so."),
        cell("Benchmarker $bm_config, load $bm_load: fitted scalability curve, per arm", "table",
             '''SELECT "gamma", "alpha", "beta", "n_star", "x_n_star", "peak_within_loads", "points_kept", "points_discarded", "rmse" FROM "benchmarker_fit" WHERE "configuration" = '$bm_config' AND "load" = '$bm_load' AND "operation" = 'all' GROUP BY "arm"''',
             flux_from("benchmarker_fit", None, start="0", stop=None,
                       where='r.configuration == v.bm_config and r.load == v.bm_load and r.operation == "all"') + PIVOT +
             '''  |> group()
  |> keep(columns: ["arm", "gamma", "alpha", "beta", "n_star", "x_n_star", "peak_within_loads", "points_kept", "points_discarded", "rmse"])
  |> sort(columns: ["arm"])''',
             w=24, h=6, expect={"kind": "bm_fits"},
             note="X(N) = gamma N / (1 + alpha (N-1) + beta N (N-1)); N* the load of peak throughput X(N*)."),
        cell("Benchmarker load $bm_load: peak throughput X(N*) across reports, per arm", "line",
             '''SELECT max("x_n_star") AS "x_n_star" FROM "benchmarker_fit" WHERE $timeFilter AND "load" = '$bm_load' AND "operation" = 'all' GROUP BY time(1d), "arm" fill(none)''',
             flux_from("benchmarker_fit", ["x_n_star"], where='r.load == v.bm_load and r.operation == "all"') +
             '''  |> group(columns: ["arm"])
  |> aggregateWindow(every: 1d, fn: max, createEmpty: false)''',
             w=24, h=8, expect={"kind": "bm_peak_trend"}),
    ])

HEALTH = dict(
    slug="perfship-health", uid="perfship-health", chronograf_id=-104,
    title="perfship: health",
    description="The agent's own metrics: what it wrote, what was rejected, retries, backlog and lag.",
    time_from="now-6h",
    variables=[],
    annotations=[],
    cells=[
        cell("Last heartbeat per host", "table",
             '''SELECT last("uptime_s") AS "uptime_s", "points_written", "points_rejected", "pending_points", "files_watched", "oldest_unacked_s" FROM "perfship" WHERE $timeFilter GROUP BY "host"''',
             flux_from("perfship") + PIVOT + '''  |> group(columns: ["host"])
  |> last(column: "_time")
  |> group()
  |> keep(columns: ["_time", "host", "uptime_s", "points_written", "points_rejected", "pending_points", "files_watched", "oldest_unacked_s"])''',
             w=24, h=5, expect={"kind": "health_last"}),
        cell("Points written per second", "line",
             '''SELECT non_negative_derivative(max("points_written"), 1s) AS "points/s" FROM "perfship" WHERE $timeFilter GROUP BY time($__interval), "host" fill(none)''',
             flux_from("perfship", ["points_written"]) + '''  |> group(columns: ["host"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)
  |> derivative(unit: 1s, nonNegative: true)''',
             expect={"kind": "health_series", "column": "points/s"}),
        cell("Rejected points and records (per interval)", "line",
             '''SELECT non_negative_difference(max("points_rejected")) AS "points rejected", non_negative_difference(max("records_rejected")) AS "records rejected" FROM "perfship" WHERE $timeFilter GROUP BY time($__interval), "host" fill(none)''',
             flux_from("perfship", ["points_rejected", "records_rejected"]) + '''  |> group(columns: ["host", "_field"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)
  |> difference(nonNegative: true)''',
             expect={"kind": "health_series", "column": "points rejected"}),
        cell("HTTP retries (per interval)", "line",
             '''SELECT non_negative_difference(max("http_retries")) AS "retries" FROM "perfship" WHERE $timeFilter GROUP BY time($__interval), "host" fill(none)''',
             flux_from("perfship", ["http_retries"]) + '''  |> group(columns: ["host"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)
  |> difference(nonNegative: true)''',
             expect={"kind": "health_series", "column": "retries"}),
        cell("Pending points (read, not yet acknowledged)", "line",
             '''SELECT max("pending_points") AS "pending" FROM "perfship" WHERE $timeFilter GROUP BY time($__interval), "host" fill(none)''',
             flux_from("perfship", ["pending_points"]) + '''  |> group(columns: ["host"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)''',
             expect={"kind": "health_series", "column": "pending"}),
        cell("Lag: age of the oldest unacknowledged point (s)", "line",
             '''SELECT max("oldest_unacked_s") AS "lag" FROM "perfship" WHERE $timeFilter GROUP BY time($__interval), "host" fill(none)''',
             flux_from("perfship", ["oldest_unacked_s"]) + '''  |> group(columns: ["host"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)''',
             expect={"kind": "health_series", "column": "lag"}),
        cell("Agent health alerts", "table",
             '''SELECT "text", "id" FROM "perfship_alert" WHERE $timeFilter AND ("event" = 'agent_unhealthy' OR "event" = 'agent_recovered') GROUP BY "event"''',
             flux_from("perfship_alert", where='(r.event == "agent_unhealthy" or r.event == "agent_recovered")') + PIVOT +
             '''  |> group()
  |> keep(columns: ["_time", "event", "text", "id"])
  |> sort(columns: ["_time"], desc: true)''',
             w=24, h=5, colored=("event", ALERT_COLORS), expect={"kind": "agent_alerts"}),
    ])

DASHBOARDS = [DAILY, ONE_RUN, DSS, HEALTH]


# -- layout ------------------------------------------------------------------

def layout(cells, width=24):
    """Flows cells left to right into rows of `width` units; returns
    (x, y) per cell. Both tools use a 24-column grid here (Chronograf's grid
    is 12 wide, so its coordinates are halved)."""
    x = y = row_h = 0
    out = []
    for c in cells:
        if x + c["w"] > width:
            x, y, row_h = 0, y + row_h, 0
        out.append((x, y))
        x += c["w"]
        row_h = max(row_h, c["h"])
    return out


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:60]


def cell_files(d):
    return [f"{i + 1:02d}-{slug(c['title'])}" for i, c in enumerate(d["cells"])]


# -- dialects ----------------------------------------------------------------

def to_chronograf(q):
    """Grafana's InfluxQL dialect -> Chronograf's, and fully qualified
    measurements (Chronograf cells name their database in the query)."""
    q = q.replace("$timeFilter", "time > :dashboardTime: AND time < :upperDashboardTime:")
    q = q.replace("$__interval", ":interval:")
    q = re.sub(r"'\$(\w+)'", r":\1:", q)
    q = re.sub(r'FROM "(\w+)"', rf'FROM "{DB}"."{RP}"."\1"', q)
    return q


def title_to_chronograf(t):
    return re.sub(r"\$(\w+)", r":\1:", t)


# -- Chronograf ----------------------------------------------------------------

CHRONOGRAF_TYPES = {"line": "line", "table": "table", "stat": "single-stat", "bar": "table"}


def chronograf_dashboard(d):
    cells = []
    for i, (c, (x, y)) in enumerate(zip(d["cells"], layout(d["cells"]))):
        q = to_chronograf(c["influxql"])
        colors = []
        if c["kind"] == "stat" and c.get("thresholds"):
            for j, (v, color) in enumerate(c["thresholds"]):
                colors.append({"id": f"{d['slug']}-{i}-c{j}", "type": "background" if j else "text",
                               "hex": color, "name": "threshold" if j else "base", "value": str(v)})
        cells.append({
            "i": f"{d['uid']}-cell-{i + 1:02d}",
            "x": x // 2, "y": y, "w": max(1, c["w"] // 2), "h": c["h"],
            "name": title_to_chronograf(c["title"]),
            "queries": [{
                "query": q, "label": "", "source": "", "type": "influxql",
                "queryConfig": {
                    "database": DB, "measurement": "", "retentionPolicy": RP,
                    "fields": [], "tags": {}, "groupBy": {"time": "", "tags": []},
                    "areTagsAccepted": False, "rawText": q, "range": None, "shifts": [],
                },
            }],
            "axes": {"x": {"bounds": ["", ""], "label": "", "prefix": "", "suffix": "", "base": "10", "scale": "linear"},
                     "y": {"bounds": ["", ""], "label": "", "prefix": "", "suffix": "", "base": "10", "scale": "linear"},
                     "y2": {"bounds": ["", ""], "label": "", "prefix": "", "suffix": "", "base": "10", "scale": "linear"}},
            "type": CHRONOGRAF_TYPES[c["kind"]],
            "colors": colors,
            "legend": {},
            "tableOptions": {"verticalTimeAxis": True,
                             "sortBy": {"internalName": "dss_bench.variantIndex" if c["kind"] == "bar" else "time",
                                        "displayName": "", "visible": True},
                             "wrapping": "truncate", "fixFirstColumn": True},
            "fieldOptions": [{"internalName": "time", "displayName": "", "visible": True}],
            "timeFormat": "YYYY-MM-DD HH:mm:ss",
            "decimalPlaces": {"isEnforced": True, "digits": 3},
            "note": c["note"] or (f"Chronograf tables colour numbers only: the {c['colored'][0]} column is plain text here; the Grafana dashboard colours it."
                                  if c["colored"] else ""),
            "noteVisibility": "default",
        })
    templates = []
    if d["variables"]:
        templates.append({
            "tempVar": f":{CHRONOGRAF_RANGE_VAR}:", "id": f"{d['uid']}-var-{CHRONOGRAF_RANGE_VAR}",
            "type": "text", "label": "the pickers look back (an InfluxQL duration)",
            "values": [{"value": CHRONOGRAF_RANGE_DEFAULT, "type": "constant", "selected": True}],
        })
    for v in d["variables"]:
        templates.append({
            "tempVar": f":{v['name']}:", "id": f"{d['uid']}-var-{v['name']}", "type": "tagValues",
            "label": v["label"], "values": [], "sourceID": "dynamic",
            "query": {"influxql": CHRONOGRAF_TAG_VALUES,
                      "db": DB, "rp": RP, "measurement": v["measurement"], "tagKey": v["tag"], "fieldKey": ""},
        })
    # The bare dashboard: Chronograf's lookup by id decodes each file as one
    # (its {"meta", "dashboard"} export wrapper would be listed, never opened).
    return {"id": d["chronograf_id"], "name": d["title"], "organization": "default",
            "cells": cells, "templates": templates}


# -- Grafana -------------------------------------------------------------------

def grafana_panel(d, i, c, x, y):
    p = {"id": i + 1, "title": c["title"], "description": c["note"],
         "gridPos": {"x": x, "y": y, "w": c["w"], "h": c["h"]},
         "datasource": DS,
         "targets": [{"refId": "A", "datasource": DS, "query": c["influxql"], "rawQuery": True,
                      "resultFormat": "time_series" if c["kind"] == "line" else "table"}],
         "fieldConfig": {"defaults": {}, "overrides": []}, "options": {}, "transformations": []}
    if c["kind"] == "line":
        p["type"] = "timeseries"
        p["fieldConfig"]["defaults"] = {"custom": {"drawStyle": "line", "showPoints": "always", "spanNulls": True}}
        p["options"] = {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True, "calcs": []},
                        "tooltip": {"mode": "multi", "sort": "none"}}
    elif c["kind"] == "table":
        p["type"] = "table"
        p["options"] = {"showHeader": True, "cellHeight": "sm"}
        p["transformations"] = [{"id": "merge", "options": {}}]
        if c["colored"]:
            column, colors = c["colored"]
            p["fieldConfig"]["overrides"].append({
                "matcher": {"id": "byName", "options": column},
                "properties": [
                    {"id": "custom.cellOptions", "value": {"type": "color-background", "mode": "basic"}},
                    {"id": "mappings", "value": [{"type": "value", "options": {
                        k: {"color": v, "index": n} for n, (k, v) in enumerate(colors.items())}}]},
                ]})
    elif c["kind"] == "stat":
        p["type"] = "stat"
        steps = [{"color": color, "value": None if j == 0 else v} for j, (v, color) in enumerate(c.get("thresholds", []))]
        p["fieldConfig"]["defaults"] = {"thresholds": {"mode": "absolute", "steps": steps or [{"color": "blue", "value": None}]},
                                        "color": {"mode": "thresholds"}}
        p["options"] = {"colorMode": "background", "graphMode": "none", "orientation": "auto",
                        "textMode": "auto", "justifyMode": "auto",
                        "reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}}
    elif c["kind"] == "bar":
        p["type"] = "barchart"
        # No xField: the matrix names its first column "variant\\arm", and
        # the bar chart takes the first string column as its axis anyway.
        p["options"] = {"orientation": "vertical", "showValue": "auto",
                        "xTickLabelMaxLength": 0, "xTickLabelRotation": 0,
                        "tooltip": {"mode": "multi", "sort": "none"},
                        "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True, "calcs": []}}
        # One flat frame comes back (arm, variant, variantIndex, value).
        # Sorting by variantIndex keeps the sweep's order instead of the
        # labels' alphabetical one; the matrix turns each arm into a series.
        p["transformations"] = [
            {"id": "sortBy", "options": {"sort": [{"field": "variantIndex"}]}},
            {"id": "groupingToMatrix", "options": {"columnField": "arm", "rowField": c["x_field"],
                                                    "valueField": c["y_field"]}},
        ]
    return p


def grafana_dashboard(d):
    panels = [grafana_panel(d, i, c, x, y)
              for i, (c, (x, y)) in enumerate(zip(d["cells"], layout(d["cells"])))]
    templ = []
    for v in d["variables"]:
        q = f'SHOW TAG VALUES FROM "{v["measurement"]}" WITH KEY = "{v["tag"]}" WHERE $timeFilter'
        templ.append({"name": v["name"], "label": v["label"], "type": "query", "datasource": DS,
                      "query": q, "definition": q, "refresh": 2, "sort": 0,
                      "multi": False, "includeAll": False, "options": [], "hide": 0,
                      # Nothing chosen yet: Grafana selects the first value the query returns.
                      "current": {"selected": False, "text": "", "value": ""}})
    ann = [{"name": "Annotations & Alerts", "builtIn": 1, "enable": True, "hide": True,
            "iconColor": "rgba(0, 211, 255, 1)", "type": "dashboard",
            "datasource": {"type": "grafana", "uid": "-- Grafana --"}}]
    for a in d["annotations"]:
        # The form Grafana 10+ stores for an InfluxQL annotation (its InfluxDB
        # plugin's annotation editor): the query and the column mappings in
        # `target`. The legacy top-level fields are migrated on load, and the
        # dashboard schema refuses them.
        ann.append({"name": a["name"], "datasource": DS, "enable": True, "iconColor": a["color"],
                    "target": {"refId": "Anno", "query": a["influxql"], "rawQuery": True,
                               "fromAnnotations": True, "textEditor": True,
                               "textColumn": a["textColumn"], "tagsColumn": a["tagsColumn"],
                               "titleColumn": "", "timeEndColumn": ""}})
    return {"uid": d["uid"], "title": d["title"], "description": d["description"],
            "tags": ["perfship"], "timezone": "utc", "editable": True, "schemaVersion": 39,
            "version": 1, "graphTooltip": 1, "refresh": "1m",
            "time": {"from": d["time_from"], "to": "now"},
            "templating": {"list": templ}, "annotations": {"list": ann}, "panels": panels}


# -- query files ---------------------------------------------------------------

def influxql_file(d, c):
    return (f"-- {d['title']}: {c['title']}\n"
            "-- Grafana dialect. Chronograf: $timeFilter -> time > :dashboardTime: AND time < :upperDashboardTime:,\n"
            "-- $__interval -> :interval:, '$name' -> :name:. influx CLI: replace them with literals.\n"
            f"{c['influxql']}\n")


def flux_file(d, c):
    return (f"// {d['title']}: {c['title']}\n"
            "// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod"
            + "".join(f", v.{v['name']}" for v in d["variables"]) + ".\n"
            f"// Bucket \"{BUCKET}\" is database \"{DB}\", retention policy \"{RP}\" (the 1.x DBRP mapping).\n"
            f"{c['flux']}\n")


def outputs():
    files = {}
    for d in DASHBOARDS:
        files[f"chronograf/{d['slug']}.dashboard"] = json.dumps(chronograf_dashboard(d), indent=2) + "\n"
        files[f"grafana/dashboards/{d['slug']}.json"] = json.dumps(grafana_dashboard(d), indent=2) + "\n"
        for c, name in zip(d["cells"], cell_files(d)):
            files[f"queries/influxql/{d['slug']}/{name}.influxql"] = influxql_file(d, c)
            files[f"queries/flux/{d['slug']}/{name}.flux"] = flux_file(d, c)
    return files


def main(argv):
    check = "--check" in argv
    stale = []
    for rel, text in sorted(outputs().items()):
        path = os.path.join(HERE, rel)
        try:
            with open(path) as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current == text:
            continue
        stale.append(rel)
        if not check:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
    # Files a renamed or removed cell left behind are stale too.
    generated = set(outputs())
    for top in ("chronograf", "grafana/dashboards", "queries"):
        for root, _, names in os.walk(os.path.join(HERE, top)):
            for n in names:
                rel = os.path.relpath(os.path.join(root, n), HERE)
                if rel not in generated:
                    stale.append(rel)
                    if not check:
                        os.unlink(os.path.join(HERE, rel))
    if check and stale:
        print("out of date (run python3 dashboards/build.py):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    if not check:
        print(f"{len(stale)} file(s) written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
