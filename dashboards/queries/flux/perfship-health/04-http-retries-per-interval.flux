// perfship: health: HTTP retries (per interval)
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "perfship" and (r._field == "http_retries"))
  |> group(columns: ["host"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)
  |> difference(nonNegative: true)
