// perfship: one run: Cycles per stage and task
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.run.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "loadgen_stage_cycles" and r.run == v.run and r.task != "all")
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> keep(columns: ["stage", "task", "cycleCount", "cycleSuccessRate", "avgDuration", "p95Duration"])
  |> sort(columns: ["stage", "task"])
