// perfship: one run: Cycle duration by task (s)
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.run.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "loadgen_cycle" and (r._field == "duration") and r.run == v.run)
  |> group(columns: ["task"])
  |> aggregateWindow(every: v.windowPeriod, fn: mean, createEmpty: false)
