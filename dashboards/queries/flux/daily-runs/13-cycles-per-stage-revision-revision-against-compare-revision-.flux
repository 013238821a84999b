// perfship: daily runs: Cycles per stage: revision $revision against $compare_revision (task all)
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.revision, v.compare_revision.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "loadgen_stage_cycles" and (r._field == "cycleSuccessRate" or r._field == "avgDuration" or r._field == "p95Duration" or r._field == "cycleCount") and (r.revision == v.revision or r.revision == v.compare_revision) and r.task == "all")
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> keep(columns: ["stage", "revision", "run", "cycleSuccessRate", "avgDuration", "p95Duration", "cycleCount"])
  |> sort(columns: ["stage", "revision"])
