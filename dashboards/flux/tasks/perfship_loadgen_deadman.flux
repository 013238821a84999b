// perfship: no new loadgen data for 26 h (a stuck load generator, or a daily
// run that never started). InfluxDB 2.x task.
//
// Judged on the data's own timestamps: the newest loadgen_event point per
// host is older than `silent_after`. Daily runs start about every 24 h.
import "influxdata/influxdb/monitor"
import "experimental"

option task = {name: "perfship-loadgen-deadman", every: 10m, offset: 30s}

silent_after = 26h

check = {
    _check_id: "0000000000000003",
    _check_name: "perfship loadgen silent",
    _type: "deadman",
    tags: {source: "perfship"},
}

from(bucket: "perf/autogen")
    |> range(start: -7d)
    |> filter(fn: (r) => r._measurement == "loadgen_event" and r._field == "elapsed")
    |> group(columns: ["host"])
    |> monitor.deadman(t: experimental.subDuration(d: silent_after, from: now()))
    |> monitor.check(
        data: check,
        messageFn: (r) => if r.dead then "no loadgen data for 26h: is the load generator stuck?" else "loadgen data arriving",
        crit: (r) => r.dead,
        ok: (r) => not r.dead,
    )
