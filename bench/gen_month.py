#!/usr/bin/env python3
"""A month of daily loadgen runs for the backfill benchmark.

    python3 -m bench.gen_month --out DIR [--days 30] [--stages 12] [--stage-minutes 120] [--jobs 2]
                 [--no-monitor-events]

Each day is the successful scenario of tests/data/loadgen/gen_loadgen.py
(so the records have exactly the shape that generator documents) with its
own SDK revision, seed and start time one day apart, written as
DIR/daily-perf-<rev12>/. Full size (12 stages x 120 min) is about 9-12 MB
of perf.jsonl a day, its last line the multi-megabyte perf-finish record.
--no-monitor-events leaves out the chain monitor's storage and process
records, as the current daily runner does (about 9 MB and 26,000 points a
day at full size).
"""
import argparse
import multiprocessing
import os

import gen_loadgen  # tests/data/loadgen, on the path by bench/__init__.py

DAY = 86400
FIRST_START = 1647216131


def one_day(job):
    out, day, stages, minutes, monitor = job
    sc = gen_loadgen.Scenario(key="a", seed=1000 + day, rev_seed=f"month-{day}",
                              start_epoch=FIRST_START + day * DAY,
                              commit_time=FIRST_START + day * DAY - 10000,
                              stages=stages, stage_minutes=minutes,
                              monitor_events=monitor)
    sim = gen_loadgen.RunSim(sc)
    sim.run()
    return gen_loadgen.write_run(sim, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--stages", type=int, default=12)
    ap.add_argument("--stage-minutes", type=float, default=120)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-monitor-events", action="store_true",
                    help="no chain monitor records (the current runner's shape)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    jobs = [(a.out, d, a.stages, a.stage_minutes, not a.no_monitor_events)
            for d in range(a.days)]
    with multiprocessing.Pool(a.jobs) as pool:
        for d in pool.imap(one_day, jobs):
            print(d, flush=True)


if __name__ == "__main__":
    main()
