// perfship: daily runs: Run summaries (one row per run, the per-revision comparison)
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.revision, v.compare_revision.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "loadgen_run")
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> keep(columns: ["_time", "run", "revision", "status", "duration", "cycleSuccessRate", "cycleAvgDuration", "chainBootstrapDuration", "walletDeployDuration", "loadgenDeployDuration", "live_avgSwingsetTime", "live_avgSwingsetPercentage", "sdkRevision"])
  |> sort(columns: ["_time"], desc: true)
