// perfship: in a DSS bench results file, an arm is worse than the reference arm
// over the sweep, method arm_compare. InfluxDB 2.x task.
//
// Source: the verdict points perfship writes (measurement perfship_verdict;
// docs/schema.md, "Verdicts"): the agent has already judged the run, so this
// task computes no baseline; it forwards the regressions as check statuses
// (level warn) to _monitoring, where a notification rule on check
// "perfship DSS arm regression" sends them on.
//
// A verdict carries its run's start time and is written when the run ends,
// up to a day later for a daily run. A task that looked back only
// task.every would never see it, so the range looks back `lookback`
// (longer than the longest run; raise it if yours run longer), and each
// (series, metric, run, arm) is reported once: the regressions this
// check already wrote a status for are left out. Verdicts of runs found
// already ended (backfill=true) never alert.
import "join"
import "influxdata/influxdb/monitor"
import "influxdata/influxdb/schema"

option task = {name: "perfship-regression-dss-arm", every: 10m, offset: 30s}

lookback = 3d

check = {
    _check_id: "0000000000000007",
    _check_name: "perfship DSS arm regression",
    _type: "custom",
    tags: {source: "perfship"},
}

reported = from(bucket: "_monitoring")
    |> range(start: -lookback)
    |> filter(fn: (r) => r._measurement == "statuses" and r._check_id == check._check_id and r._field == "_message")
    |> group()
    |> keep(columns: ["series", "metric", "run", "arm"])

regressions = from(bucket: "perf/autogen")
    |> range(start: -lookback)
    |> filter(fn: (r) => r._measurement == "perfship_verdict")
    |> schema.fieldsAsCols()
    |> filter(fn: (r) => r.method == "arm_compare" and r.verdict == "regression")
    |> filter(fn: (r) => not exists r.backfill or r.backfill == false)
    |> group()

join.left(
    left: regressions,
    right: reported,
    on: (l, r) => l.series == r.series and l.metric == r.metric and l.run == r.run and l.arm == r.arm,
    as: (l, r) => ({l with reported: exists r.run}),
)
    |> filter(fn: (r) => not r.reported)
    |> drop(columns: ["reported"])
    |> group(columns: ["series", "metric", "run", "arm"])
    |> monitor.check(
        data: check,
        messageFn: (r) => "DSS bench ${r.run}, test ${r.series}: ${r.metric} of ${r.arm} is worse than ${r.reference} (${string(v: r.variants_agree)} of ${string(v: r.variants)} variants agree)",
        warn: (r) => true,
    )
