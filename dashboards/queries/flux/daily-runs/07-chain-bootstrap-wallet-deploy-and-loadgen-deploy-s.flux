// perfship: daily runs: Chain bootstrap, wallet deploy and loadgen deploy (s)
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.revision, v.compare_revision.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "loadgen_run" and (r._field == "chainBootstrapDuration" or r._field == "walletDeployDuration" or r._field == "loadgenDeployDuration"))
