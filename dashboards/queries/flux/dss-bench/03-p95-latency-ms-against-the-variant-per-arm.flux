// perfship: DSS bench: p95 latency (ms) against the variant, per arm
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.dss_run, v.dss_test, v.bm_config, v.bm_load.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "dss_bench" and (r._field == "variantIndex" or r._field == "p95_ms") and r.run == v.dss_run and r["test"] == v.dss_test)
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group(columns: ["arm"])
  |> sort(columns: ["variantIndex"])
  |> keep(columns: ["arm", "variant", "variantIndex", "p95_ms"])
