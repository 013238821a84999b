// perfship: one run: Live blocks per stage: swingset time (s) and percentage
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.run.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "loadgen_stage_blocks" and r.run == v.run and r.summary == "onlyLive")
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> keep(columns: ["stage", "blockCount", "avgSwingsetTime", "avgSwingsetPercentage", "p95SwingsetTime", "avgBlockDuration"])
  |> sort(columns: ["stage"])
