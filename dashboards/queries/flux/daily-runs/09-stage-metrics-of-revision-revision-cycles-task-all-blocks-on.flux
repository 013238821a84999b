// perfship: daily runs: Stage metrics of revision $revision (cycles: task all; blocks: onlyLive)
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.revision, v.run.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "loadgen_stage_cycles" and (r._field == "cycleSuccessRate" or r._field == "avgDuration" or r._field == "p95Duration" or r._field == "cycleCount") and r.revision == v.revision and r.task == "all")
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> keep(columns: ["_time", "run", "stage", "cycleSuccessRate", "avgDuration", "p95Duration", "cycleCount"])
  |> sort(columns: ["run", "stage"])
