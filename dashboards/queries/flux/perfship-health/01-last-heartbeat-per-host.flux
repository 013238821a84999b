// perfship: health: Last heartbeat per host
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "perfship")
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group(columns: ["host"])
  |> last(column: "_time")
  |> group()
  |> keep(columns: ["_time", "host", "uptime_s", "points_written", "points_rejected", "pending_points", "files_watched", "oldest_unacked_s"])
