// perfship: health: Rejected points and records (per interval)
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "perfship" and (r._field == "points_rejected" or r._field == "records_rejected"))
  |> group(columns: ["host", "_field"])
  |> aggregateWindow(every: v.windowPeriod, fn: max, createEmpty: false)
  |> difference(nonNegative: true)
