// perfship: daily runs: Cycle average duration (s), successful runs
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.revision, v.compare_revision.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "loadgen_run" and (r._field == "cycleAvgDuration" or r._field == "success"))
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> filter(fn: (r) => r.success == true)
  |> map(fn: (r) => ({_time: r._time, _value: r.cycleAvgDuration, _field: "cycleAvgDuration"}))
