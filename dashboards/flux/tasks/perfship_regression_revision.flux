// perfship: a loadgen run regressed against the earlier successful runs of its
// series (its test_type), method edivisive. InfluxDB 2.x task.
//
// Source: the verdict points perfship writes (measurement perfship_verdict;
// docs/schema.md, "Verdicts"): the agent has already judged the run, so this
// task computes no baseline; it forwards the regressions as check statuses
// (level warn) to _monitoring, where a notification rule on check
// "perfship regression" sends them on.
//
// A verdict carries its run's start time and is written when the run ends,
// up to a day later for a daily run. A task that looked back only
// task.every would never see it, so the range looks back `lookback`
// (longer than the longest run; raise it if yours run longer), and each
// (series, metric, run) is reported once: the regressions this
// check already wrote a status for are left out. Verdicts of runs found
// already ended (backfill=true) never alert.
import "join"
import "influxdata/influxdb/monitor"
import "influxdata/influxdb/schema"

option task = {name: "perfship-regression-revision", every: 10m, offset: 30s}

lookback = 3d

check = {
    _check_id: "0000000000000005",
    _check_name: "perfship regression",
    _type: "custom",
    tags: {source: "perfship"},
}

reported = from(bucket: "_monitoring")
    |> range(start: -lookback)
    |> filter(fn: (r) => r._measurement == "statuses" and r._check_id == check._check_id and r._field == "_message")
    |> group()
    |> keep(columns: ["series", "metric", "run"])

regressions = from(bucket: "perf/autogen")
    |> range(start: -lookback)
    |> filter(fn: (r) => r._measurement == "perfship_verdict")
    |> schema.fieldsAsCols()
    |> filter(fn: (r) => r.method == "edivisive" and r.verdict == "regression")
    |> filter(fn: (r) => not exists r.backfill or r.backfill == false)
    |> group()

join.left(
    left: regressions,
    right: reported,
    on: (l, r) => l.series == r.series and l.metric == r.metric and l.run == r.run,
    as: (l, r) => ({l with reported: exists r.run}),
)
    |> filter(fn: (r) => not r.reported)
    |> drop(columns: ["reported"])
    |> group(columns: ["series", "metric", "run"])
    |> monitor.check(
        data: check,
        messageFn: (r) => "${r.metric} of ${r.series} regressed at run ${r.run}: ${string(v: r.value)} against ${string(v: r.baseline)}, the mean of ${string(v: r.baseline_runs)} earlier runs; the change began at ${r.change_run}",
        warn: (r) => true,
    )
