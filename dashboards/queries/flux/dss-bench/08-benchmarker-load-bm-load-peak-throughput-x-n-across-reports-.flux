// perfship: DSS bench: Benchmarker load $bm_load: peak throughput X(N*) across reports, per arm
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.dss_run, v.dss_test, v.bm_config, v.bm_load.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "benchmarker_fit" and (r._field == "x_n_star") and r.load == v.bm_load and r.operation == "all")
  |> group(columns: ["arm"])
  |> aggregateWindow(every: 1d, fn: max, createEmpty: false)
