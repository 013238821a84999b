// perfship: one run: Stage timing: restart time (chainInitDuration) and readiness (s)
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.run.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "loadgen_stage" and r.run == v.run)
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> keep(columns: ["stage", "loadgen", "duration", "chainInitDuration", "readyDuration", "clientInitDuration", "loadgenInitDuration", "blockCount", "cycleCount"])
  |> sort(columns: ["stage"])
