// perfship: health: Lag: age of the oldest unacknowledged point (s)
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "perfship" and (r._field == "oldest_unacked_s"))
  |> group(columns: ["host"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)
