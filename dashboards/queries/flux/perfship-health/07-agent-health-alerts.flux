// perfship: health: Agent health alerts
// InfluxDB 2 UI variables: v.timeRangeStart, v.timeRangeStop, v.windowPeriod.
// Bucket "perf/autogen" is database "perf", retention policy "autogen" (the 1.x DBRP mapping).
from(bucket: "perf/autogen")
  |> range(start: v.timeRangeStart, stop: v.timeRangeStop)
  |> filter(fn: (r) => r._measurement == "perfship_alert" and (r.event == "agent_unhealthy" or r.event == "agent_recovered"))
  |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
  |> group()
  |> keep(columns: ["_time", "event", "text", "id"])
  |> sort(columns: ["_time"], desc: true)
