// perfship: DSS bench: Benchmarker $bm_config, load $bm_load: every step, per arm
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.dss_run, v.dss_test, v.bm_config, v.bm_load.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "benchmarker_step" and r.configuration == v.bm_config and r.load == v.bm_load and r.operation == "all")
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> keep(columns: ["arm", "step", "load_factor", "termination_reason", "throughput", "latency_mean_s", "latency_p95_s", "unsuccessful_share"])
  |> sort(columns: ["arm", "step"])
