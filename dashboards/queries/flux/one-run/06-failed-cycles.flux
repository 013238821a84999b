// perfship: one run: Failed cycles
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.run.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "loadgen_cycle" and r.run == v.run)
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> filter(fn: (r) => r.success == false)
  |> group()
  |> keep(columns: ["_time", "stage", "task", "seq", "duration", "blockCount", "startBlockHeight"])
