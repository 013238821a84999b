// perfship: DSS bench: Best requests per second of test $dss_test over time, per arm
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.dss_run, v.dss_test, v.bm_config, v.bm_load.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "dss_bench" and (r._field == "rps_total") and r["test"] == v.dss_test)
  |> group(columns: ["arm"])
  |> aggregateWindow(every: 1d, fn: max, createEmpty: false)
