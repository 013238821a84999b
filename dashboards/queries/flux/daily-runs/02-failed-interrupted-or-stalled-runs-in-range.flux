// perfship: daily runs: Failed, interrupted or stalled runs in range
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.revision, v.compare_revision.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "runs" and (r._field == "text") and r.event == "end" and (r.status == "failed" or r.status == "interrupted" or r.status == "stalled"))
  |> group()
  |> count()
