// perfship: one run: Verdicts of this run: against earlier revisions, and each stage against the first
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.run.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "perfship_verdict" and r.run == v.run)
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> keep(columns: ["metric", "stage", "verdict", "value", "baseline", "change_pct", "change_run", "baseline_runs", "method", "backfill"])
  |> sort(columns: ["method", "metric", "stage"])
