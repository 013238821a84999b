// perfship: within one loadgen run, a later stage drifted from the first loadgen
// stage beyond verdicts.stage_drift_pct, method stage_drift. InfluxDB 2.x task.
//
// Source: the verdict points perfship writes (measurement perfship_verdict;
// docs/schema.md, "Verdicts"): the agent has already judged the run, so this
// task computes no baseline; it forwards the regressions as check statuses
// (level warn) to _monitoring, where a notification rule on check
// "perfship stage drift" sends them on.
//
// A verdict carries its run's start time and is written when the run ends,
// up to a day later for a daily run. A task that looked back only
// task.every would never see it, so the range looks back `lookback`
// (longer than the longest run; raise it if yours run longer), and each
// (series, metric, run, stage) is reported once: the regressions this
// check already wrote a status for are left out. Verdicts of runs found
// already ended (backfill=true) never alert.
import "join"
import "influxdata/influxdb/monitor"
import "influxdata/influxdb/schema"

option task = {name: "perfship-regression-stage-drift", every: 10m, offset: 30s}

lookback = 3d

check = {
    _check_id: "0000000000000006",
    _check_name: "perfship stage drift",
    _type: "custom",
    tags: {source: "perfship"},
}

reported = from(bucket: "_monitoring")
    |> range(start: -lookback)
    |> filter(fn: (r) => r._measurement == "statuses" and r._check_id == check._check_id and r._field == "_message")
    |> group()
    |> keep(columns: ["series", "metric", "run", "stage"])

regressions = from(bucket: "perf/autogen")
    |> range(start: -lookback)
    |> filter(fn: (r) => r._measurement == "perfship_verdict")
    |> schema.fieldsAsCols()
    |> filter(fn: (r) => r.method == "stage_drift" and r.verdict == "regression")
    |> filter(fn: (r) => not exists r.backfill or r.backfill == false)
    |> group()

join.left(
    left: regressions,
    right: reported,
    on: (l, r) => l.series == r.series and l.metric == r.metric and l.run == r.run and l.stage == r.stage,
    as: (l, r) => ({l with reported: exists r.run}),
)
    |> filter(fn: (r) => not r.reported)
    |> drop(columns: ["reported"])
    |> group(columns: ["series", "metric", "run", "stage"])
    |> monitor.check(
        data: check,
        messageFn: (r) => "run ${r.run}: ${r.metric} of stage ${r.stage} is ${string(v: r.value)} against ${string(v: r.baseline)} in the first loadgen stage",
        warn: (r) => true,
    )
