// perfship: daily runs: Change against the baseline (%) per metric
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.revision, v.compare_revision.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "perfship_verdict" and (r._field == "change_pct" or r._field == "method"))
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> filter(fn: (r) => r.method == "edivisive")
  |> group(columns: ["metric"])
  |> map(fn: (r) => ({_time: r._time, metric: r.metric, _value: r.change_pct, _field: "change_pct"}))
