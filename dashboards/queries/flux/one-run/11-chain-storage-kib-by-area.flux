// perfship: one run: Chain storage (KiB) by area
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.run.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "loadgen_storage" and (r._field == "kib") and r.run == v.run)
  |> group(columns: ["area"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)
