// perfship: one run: Process memory: RSS (KiB)
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.run.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "loadgen_process" and (r._field == "vmRss") and r.run == v.run)
  |> group(columns: ["process"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)
