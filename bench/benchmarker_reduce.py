#!/usr/bin/env python3
"""The Python reduction the benchmarker case compares perfship with
(docs/benchmarks.md "Benchmarker"): a report reduced as the tool's own
analysis does it (monitoring/benchmarker/reports/analysis.py), with the
standard library only.

    bench/benchmarker_reduce.py REPORT.json

json.load of the whole report, each operation's times parsed once (as
implicitdict's StringBasedDateTime does on loading), then for every step
with a stability time its throughput (throughput_of_step: successful
operations completed in the window per second) and latency
(latency_of_step: mean t1 - t0 of every operation completed in it), for
all types together and for each type. Prints one line per step and type.
"""
import datetime as dt
import json
import sys


def parse(s):
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


def main(path):
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    for si, scenario in enumerate(report["report"]["scenarios"]):
        ops = []  # (type, successful, t0, t1)
        for by_type in scenario["operations"]:
            for by_origin in by_type["origins"]:
                for outcome in by_origin["outcomes"]:
                    for ok in (True, False):
                        for op in outcome.get("successful" if ok else "unsuccessful") or []:
                            ops.append((by_type["type"], ok, parse(op["t0"]), parse(op["t1"])))
        types = [None] + sorted({o[0] for o in ops})
        for k, step in enumerate(scenario["steps"]):
            if not step.get("throughput_stability_time"):
                continue
            after, before = parse(step["throughput_stability_time"]), parse(step["end_time"])
            dur = (before - after).total_seconds()
            for t in types:
                sel = [o for o in ops if (t is None or o[0] == t) and not o[3] < after
                       and not o[3] > before]
                succ = sum(1 for o in sel if o[1])
                lat = (sum(((o[3] - o[2]) for o in sel), dt.timedelta(0)) / len(sel)
                       if sel else dt.timedelta(0))
                print(si, k + 1, t or "all", succ / dur if dur > 0 else 0.0,
                      lat.total_seconds())


if __name__ == "__main__":
    main(sys.argv[1])
