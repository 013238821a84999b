"""perfship benchmarks (docs/benchmarks.md explains the method and figures).

    scripts/bench [--quick] [--runs N] [--case NAME]... [--bin PATH] [--data DIR]
    python3 -m bench ...      (the same, from the source tree)

Builds a Release binary in build-release/, starts its own InfluxDB 1.6.7
(tests/integration/harness.py InfluxServer, loopback, temporary directory)
and measures, each case --runs times (default 3; medians printed):

  convert     perfship convert -f jsonl on the 1,000,000-line stats file of
              bench/gen_stats_jsonl.py (--tag type --time-key time
              --time-unit s), and as convert-ts on bench/gen_jsonl.py's file;
              with e2e, each convert run goes right before an e2e run of the
              same file, and the pair's CPU ratio is reported (e2e-pair)
  plain       the plain client (bench/plain_client.py) posting the same
              points as pre-made line protocol in 5,000-line batches over 1
              and over 2 connections
  e2e         perfship run --once on that file into the server (gzip off);
              e2e-ts on the gen_jsonl.py file
  gzip        the same with gzip on (its cost reported separately)
  bigline     run --once on one full-size loadgen run (its ~9 MB perf-finish line)
  scale       1,000 files growing at once vs one file, same points
  latency     appended line -> queryable, 1,000 lines/s, p50/p99
  idle        CPU of a running agent with nothing to do
  verdicts    the verdict engine (tests/tools/bench_verdicts, no server): one
              new run against a 365-run history x 7 metrics, and every verdict
              of that year recomputed, with window_runs 60 (and 365); once, a
              newest-first backfill that judges at every arrival
  slog        (opt-in) a ~1 GB stage slog reduced, side by side with gzip -dc
              of the same file, and peak RSS with 8 MB lines (bench/slog_bench.py;
              no server; --quick: 64 MB)
  slog-vs-agoric  (opt-in) the same stage slog read by gzip -dc, by perfship
              and by agoric-sdk's monitor-slog-block-time.py (gzip -dc | the
              script), CPU, wall and peak RSS of each and whether their blocks
              agree (bench/slog_agoric.py; no server; needs --agoric-script
              PATH, skipped with a message without it)
  benchmarker (opt-in) a ~1 GB InterUSS benchmarker report with query
              details: the Python reduction of the tool's analysis, convert
              -f benchmarker and run --once on it (bench/benchmarker_bench.py;
              --quick: ~57 MB)
  backfill    (opt-in) six full-size daily loadgen runs of the current
              runner's shape (no chain monitor records), run --once against
              bench/plain_client.py posting the same points as LP over 2
              keep-alive connections, interleaved --runs times; then a month
              of daily runs (with monitor records), plain client and agent
              once each

Default cases: all but backfill. CPU is user+sys of the agent (wait4 for a
child that exits, /proc/<pid>/task/*/schedstat for one that keeps running), RSS the peak
(ru_maxrss / VmHWM), InfluxDB's CPU from /proc/<influxd>/stat before/after.
Each line starting with "figure" is one measured figure; the table at the
end compares them with the targets.
"""

import argparse
import os
import shutil

from bench import BUILD
from bench.benchmarker_bench import case_benchmarker
from bench.cases import case_backfill, case_bigline, case_convert, case_throughput, case_verdicts
from bench.context import Bench, build
from bench.inputs import (JSONL_SOURCE, STATS_CONVERT, STATS_SOURCE, TS_CONVERT, issue_stats_files,
                          loadgen_dir, loadgen_lp, stats_files)
from bench.live import case_latency_idle, case_scale
from bench.measure import figure, record
from bench.slog_agoric import case_slog_vs_agoric
from bench.slog_bench import case_slog
from bench.state_bench import case_state
from bench.summary import summary

ALL_CASES = ["convert", "plain", "e2e", "gzip", "bigline", "scale", "latency", "idle",
             "verdicts"]
OPT_IN = ["backfill", "backfill6", "slog", "slog-vs-agoric", "benchmarker", "state"]
NO_SERVER = {"verdicts", "slog", "slog-vs-agoric"}


def main():
    ap = argparse.ArgumentParser(prog="scripts/bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small inputs, one run (CI smoke)")
    ap.add_argument("--runs", type=int, default=None, help="repetitions per case (default 3; 1 with --quick)")
    ap.add_argument("--case", action="append", choices=ALL_CASES + OPT_IN,
                    help="run only these cases (repeatable)")
    ap.add_argument("--no-build", action="store_true", help="use build-release/perfship as it is")
    ap.add_argument("--bin", default=None, help="measure this perfship binary (no build)")
    ap.add_argument("--agoric-script", default=None, metavar="PATH",
                    help="agoric-sdk's packages/SwingSet/misc-tools/monitor-slog-block-time.py, "
                    "for the slog-vs-agoric case")
    ap.add_argument("--data", default=None, help="where generated inputs are cached "
                    "(default build-release/bench-data, a temporary directory with --quick)")
    args = ap.parse_args()
    args.runs = args.runs or (1 if args.quick else 3)
    cases = args.case or ALL_CASES
    if args.bin:
        binary = os.path.abspath(args.bin)
    elif args.no_build:
        binary = os.path.join(BUILD, "perfship")
    else:
        binary = build()
    lines = 20000 if args.quick else 1000000
    b = Bench(args, binary)
    data = args.data or (os.path.join(b.tmp, "data") if args.quick else os.path.join(BUILD, "bench-data"))
    os.makedirs(data, exist_ok=True)
    print(f"perfship bench: {os.cpu_count()} cpus, {args.runs} run(s) per case, "
          f"{lines} stats lines, binary {b.bin}, load average "
          f"{open('/proc/loadavg').read().split()[0]}", flush=True)
    try:
        if "verdicts" in cases:
            case_verdicts(b, args.quick)
        if "slog" in cases:  # its own module, no server (bench/slog_bench.py)
            case_slog(b.bin, data, 64 if args.quick else 1024, args.runs, figure, record)
        if "slog-vs-agoric" in cases:  # bench/slog_agoric.py, no server either
            case_slog_vs_agoric(b.bin, data, 64 if args.quick else 1024, args.runs,
                                args.agoric_script, figure, record)
        if set(cases) <= NO_SERVER:
            summary()
            return
        if set(cases) - {"benchmarker", "state"}:  # they bring their own input
            gjsonl, glp = issue_stats_files(b, data, lines)
            jsonl, lp = stats_files(data, lines)
        b.start_influx()
        if "convert" in cases and "e2e" not in cases:  # else paired with e2e's runs
            case_convert(b, "convert", gjsonl, STATS_CONVERT, lines)
            case_convert(b, "convert-ts", jsonl, TS_CONVERT, lines)
        if {"plain", "e2e", "gzip"} & set(cases):
            inputs = [("", gjsonl, glp, STATS_SOURCE.format(path=gjsonl), STATS_CONVERT),
                      ("-ts", jsonl, lp, JSONL_SOURCE.format(path=jsonl), TS_CONVERT)]
            case_throughput(b, inputs, lines, cases)
        if "bigline" in cases:
            case_bigline(b, loadgen_dir(data, "oneday", 1, 5 if args.quick else 120))
        if "scale" in cases:
            case_scale(b, jsonl, args.quick)
        if {"latency", "idle"} & set(cases):
            case_latency_idle(b, cases, args.quick)
        if "benchmarker" in cases:
            case_benchmarker(b, data, args.quick, args.runs, figure)
        if "state" in cases:
            case_state(b, args.runs)
        if {"backfill", "backfill6"} & set(cases):  # backfill6: the six runs alone
            d = loadgen_dir(data, "six", 6, 5 if args.quick else 120, monitor=False)
            case_backfill(b, "backfill6", d, loadgen_lp(b, d), args.runs)
        if "backfill" in cases:
            d = loadgen_dir(data, "month", 3 if args.quick else 30, 5 if args.quick else 120)
            case_backfill(b, "month", d, loadgen_lp(b, d), 1)
        print(f"load average at the end: {open('/proc/loadavg').read().split()[0]}", flush=True)
        summary()
    finally:
        b.close()
        shutil.rmtree(b.tmp, ignore_errors=True)
