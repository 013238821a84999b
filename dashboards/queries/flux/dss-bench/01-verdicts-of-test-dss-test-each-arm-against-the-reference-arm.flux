// perfship: DSS bench: Verdicts of test $dss_test: each arm against the reference arm
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod, v.dss_run, v.dss_test, v.bm_config, v.bm_load.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: 0)
  |> filter(fn: (r) => r._measurement == "perfship_verdict" and r.run == v.dss_run and r.series == v.dss_test)
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> filter(fn: (r) => r.method == "arm_compare")
  |> group()
  |> keep(columns: ["arm", "reference", "metric", "verdict", "change_pct", "variants", "variants_agree", "value", "baseline"])
  |> sort(columns: ["arm", "metric"])
