// perfship: daily runs: Live blocks per stage: revision $revision against $compare_revision
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.revision, v.compare_revision.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "loadgen_stage_blocks" and (r._field == "avgSwingsetTime" or r._field == "avgSwingsetPercentage" or r._field == "avgBlockDuration" or r._field == "blockCount") and (r.revision == v.revision or r.revision == v.compare_revision) and r.summary == "onlyLive")
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> keep(columns: ["stage", "revision", "run", "avgSwingsetTime", "avgSwingsetPercentage", "avgBlockDuration", "blockCount"])
  |> sort(columns: ["stage", "revision"])
