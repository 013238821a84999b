// perfship itself is silent: no self-metrics (measurement perfship, one point
// per selfstats.interval_ms) for 5 minutes. InfluxDB 2.x task.
import "influxdata/influxdb/monitor"
import "experimental"

option task = {name: "perfship-agent-deadman", every: 1m, offset: 5s}

check = {
    _check_id: "0000000000000004",
    _check_name: "perfship agent silent",
    _type: "deadman",
    tags: {source: "perfship"},
}

from(bucket: "perf/autogen")
    |> range(start: -1h)
    |> filter(fn: (r) => r._measurement == "perfship" and r._field == "uptime_s")
    |> group(columns: ["host"])
    |> monitor.deadman(t: experimental.subDuration(d: 5m, from: now()))
    |> monitor.check(
        data: check,
        messageFn: (r) => if r.dead then "perfship on ${r.host} is silent" else "perfship on ${r.host} is alive",
        crit: (r) => r.dead,
        ok: (r) => not r.dead,
    )
