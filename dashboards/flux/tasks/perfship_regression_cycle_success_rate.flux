// perfship: regression of cycleSuccessRate (lower is worse). InfluxDB 2.x task.
//
// Warns when the newest successful daily run is worse than the mean of the
// previous `baseline_runs` successful daily runs by more than
// `threshold_pct` percent (and at least `min_baseline_runs` exist).
import "influxdata/influxdb/monitor"

option task = {name: "perfship-regression-cycle-success-rate", every: 1h, offset: 1m}

metric = "cycleSuccessRate"
sign = -1.0
threshold_pct = 10.0
baseline_runs = 7
min_baseline_runs = 3

check = {
    _check_id: "0000000000000006",
    _check_name: "perfship regression cycleSuccessRate",
    _type: "threshold",
    tags: {source: "perfship"},
}

daily = from(bucket: "perf/autogen")
    |> range(start: -60d)
    |> filter(fn: (r) => r._measurement == "loadgen_run" and r.test_type == "daily-perf")

successful = daily
    |> filter(fn: (r) => r._field == "success" and r._value == true)
    |> keep(columns: ["_time", "run"])

values = daily
    |> filter(fn: (r) => r._field == metric)
    |> keep(columns: ["_time", "run", "_value"])

runs = join(tables: {s: successful, v: values}, on: ["_time", "run"])
    |> group()
    |> sort(columns: ["_time"], desc: true)

previous = runs |> limit(n: baseline_runs, offset: 1)
baseline = previous |> mean() |> findRecord(fn: (key) => true, idx: 0)
counted = previous |> count() |> findRecord(fn: (key) => true, idx: 0)

runs
    |> limit(n: 1)
    |> map(fn: (r) => ({r with
        _measurement: "loadgen_run",
        _field: metric,
        baseline: baseline._value,
        baseline_count: counted._value,
        worse_pct: sign * 100.0 * (r._value - baseline._value) / baseline._value,
    }))
    |> monitor.check(
        data: check,
        messageFn: (r) => "${metric} of ${r.run}: ${string(v: r._value)}, ${string(v: r.worse_pct)}% worse than the mean of the previous ${string(v: r.baseline_count)} successful runs",
        warn: (r) => r.baseline_count >= min_baseline_runs and r.worse_pct > threshold_pct,
        ok: (r) => r.baseline_count < min_baseline_runs or r.worse_pct <= threshold_pct,
    )
