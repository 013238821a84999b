// perfship: one run: Process CPU (user + kernel seconds per second)
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.run.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "loadgen_process" and (r._field == "user" or r._field == "kernel") and r.run == v.run)
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> map(fn: (r) => ({r with _value: r.user + r.kernel}))
  |> group(columns: ["process", "stage"])
  |> derivative(unit: 1s, nonNegative: true)
  |> group(columns: ["process"])
  |> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)
