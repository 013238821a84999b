// perfship: DSS bench: Benchmarker $bm_config, load $bm_load: fitted scalability curve, per arm
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.dss_run, v.dss_test, v.bm_config, v.bm_load.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "benchmarker_fit" and r.configuration == v.bm_config and r.load == v.bm_load and r.operation == "all")
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> keep(columns: ["arm", "gamma", "alpha", "beta", "n_star", "x_n_star", "peak_within_loads", "points_kept", "points_discarded", "rmse"])
  |> sort(columns: ["arm"])
