// perfship: daily runs: Verdicts across revisions: regressions and improvements
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.revision, v.compare_revision.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "perfship_verdict")
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> filter(fn: (r) => r.method == "edivisive" and r.verdict != "none")
  |> group()
  |> keep(columns: ["_time", "series", "metric", "run", "verdict", "value", "baseline", "change_pct", "change_run", "baseline_runs", "p_value", "revision", "backfill"])
  |> sort(columns: ["_time"], desc: true)
