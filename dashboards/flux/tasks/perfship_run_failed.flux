// perfship: a run ended failed or interrupted (InfluxDB 2.x task; 1.8+ with Flux enabled can run
// the query part, everything before monitor.check, which needs 2.x's
// _monitoring bucket). Writes a check status to _monitoring; a notification rule
// on check "perfship run failed" sends it on.
//
// The marker's time is the run's end time from the data, which can be a few
// minutes older than its arrival: the range looks back 30 minutes, and
// statuses are keyed by run, so a notification rule on status changes sends
// each run once. Markers with backfill=true (runs that had already ended when
// perfship first saw them) never alert.
import "influxdata/influxdb/monitor"

option task = {name: "perfship-run-failed", every: 5m, offset: 20s}

check = {
    _check_id: "0000000000000001",
    _check_name: "perfship run failed",
    _type: "custom",
    tags: {source: "perfship"},
}

from(bucket: "perf/autogen")
    |> range(start: -30m)
    |> filter(fn: (r) => r._measurement == "runs" and r.event == "end" and (r.status == "failed" or r.status == "interrupted"))
    // schema.fieldsAsCols() spelt out: the Flux of InfluxDB 1.8 has pivot,
    // not the influxdata/influxdb/schema package (docs/queries.md)
    |> pivot(rowKey: ["_time"], columnKey: ["_field"], valueColumn: "_value")
    |> filter(fn: (r) => not exists r.backfill or r.backfill == false)
    |> monitor.check(
        data: check,
        messageFn: (r) => "run ${r.run} ${r.status}: ${r.text}",
        crit: (r) => true,
    )
