#!/usr/bin/env python3
"""The cost of one report page at its largest expected size: a year of
nightly loadgen runs plus a hundred DSS bench results files
(docs/benchmarks.md, "The report page").

    python3 -m bench.report_year [--runs N] [--bin PATH] [--keep]

Starts its own InfluxDB 1.6.7 (tests/integration/harness.py, loopback,
temporary directory) and writes, as line protocol shaped exactly like the
agent's (docs/schema.md), everything the page reads:
  - 365 daily-perf runs, one a night: start and end markers, the
    loadgen_run point with all its fields, 7 verdicts and 9 stage-drift
    verdicts each, loadgen_stage (6 stages), loadgen_stage_cycles (4
    loadgen stages x 4 task rows) and loadgen_stage_blocks (6 x 4
    summaries); about 1 run in 20 failed, 1 in 100 stalled;
  - 100 DSS results files (2 tests x 3 arms x 11 variants each, marker,
    arm verdicts), one every 3 days;
  - a day of self-metrics heartbeats (8,640 points).
Per-block and per-cycle points are left out: the page never reads them.

Then runs `perfship report -o page.html --since 366d` --runs times
(default 5) and prints the median CPU (user+sys from wait4: the perfship
process alone), wall time, peak RSS (bench/measure.py, as scripts/bench)
and the page's size. The page is kept at --keep.
"""
import argparse
import os
import random
import statistics
import subprocess
import tempfile
import time

import harness  # tests/integration, on the path by bench/__init__.py
from reportdata import lp_line

from bench import ROOT
from bench.measure import run_child

DAY = 86400
NS = 10**9
TASKS = ["all", "vault", "amm", "faucet"]
SUMMARIES = ["all", "last100", "onlyLive", "onlyCatchup"]
METRICS = ["cycleAvgDuration", "cycleSuccessRate", "live_avgSwingsetTime",
           "live_avgBlockDuration", "chainBootstrapDuration", "walletDeployDuration",
           "loadgenDeployDuration"]


def year_of_runs(now, rng):
    lines = []
    history = []
    for day in range(365):
        start = now - (365 - day) * DAY + 3600
        rev = "%012x" % rng.getrandbits(48)
        run = f"daily-perf-{rev}"
        tags = {"run": run, "revision": rev, "test_type": "daily-perf", "host": "bench-1"}
        r = rng.random()
        status = "stalled" if r < 0.01 else "failed" if r < 0.06 else "success"
        slow = 1.12 if day >= 300 else 1.0
        mk = {"source": "loadgen", "run": run, "revision": rev, "host": "bench-1"}
        lines.append(lp_line("runs", dict(mk, event="start", status="running"),
                             {"text": f"{run} started", "backfill": True}, start * NS))
        duration = rng.uniform(3300, 3500)
        lines.append(lp_line("runs", dict(mk, event="end", status=status),
                             {"text": f"{run} ended: {status}", "exitCode": 0 if status ==
                              "success" else 2, "duration": duration, "backfill": True},
                             int(start + duration) * NS))
        if status == "stalled":
            continue
        f = {"success": status == "success", "status": status, "exitCode": 0,
             "chainBootstrapDuration": rng.gauss(24.5, 0.7) * slow,
             "walletDeployDuration": rng.gauss(125, 4) * slow,
             "loadgenDeployDuration": rng.gauss(121, 4) * slow,
             "totalBlockCount": 616, "stageCount": 6, "cycleSuccessRate": 100.0,
             "cycleAvgDuration": rng.gauss(24.3, 0.7) * slow, "sdkRevision": rev[:9],
             "sdkCommitTime": start - 10000, "live_blockCount": 616, "live_liveMode": True,
             "live_startBlockHeight": 1, "live_endBlockHeight": 616}
        for k in ("avgLag", "avgBlockDuration", "avgChainBlockDuration", "avgIdleTime",
                  "avgCosmosTime", "avgSwingsetTime", "avgProcessingTime", "avgDeliveries",
                  "avgComputrons", "avgSwingsetPercentage", "avgProcessingPercentage"):
            f["live_" + k] = rng.uniform(0.1, 6.0) * slow
        if status == "success":
            f["duration"] = duration
        lines.append(lp_line("loadgen_run", dict(tags, profile="local"), f, start * NS))
        for s in range(6):
            st = (start + 100 + 600 * s) * NS
            lines.append(lp_line("loadgen_stage", dict(tags, stage=str(s)), {
                "stageIndex": s, "blockCount": 120, "cycleCount": 100, "duration": 600.0,
                "chainInitDuration": 2.0, "loadgen": 1 <= s <= 4}, st))
            for summary in SUMMARIES:
                lines.append(lp_line("loadgen_stage_blocks", dict(tags, stage=str(s),
                                                                  summary=summary), {
                    "blockCount": 120, "avgSwingsetTime": rng.uniform(0.15, 0.25) * slow,
                    "avgBlockDuration": rng.gauss(5.25, 0.02), "p95SwingsetTime": 0.4}, st))
            if 1 <= s <= 4:
                for task in TASKS:
                    lines.append(lp_line("loadgen_stage_cycles", dict(tags, stage=str(s),
                                                                      task=task), {
                        "cycleCount": 100 if task == "all" else 33, "cycleSuccessRate": 100.0,
                        "avgDuration": rng.gauss(24, 1) * slow, "p95Duration": 31.0,
                        "avgBlockCount": 4.5, "p95BlockCount": 6.0}, st))
        if status != "success":
            continue
        history.append(f)
        if len(history) > 5:
            base = history[-31:-1]
            for m in METRICS:
                b = sum(h[m] for h in base) / len(base)
                verdict = "regression" if day == 300 and m == "cycleAvgDuration" else "none"
                lines.append(lp_line("perfship_verdict", {
                    "source": "loadgen", "series": "daily-perf", "metric": m, "run": run,
                    "host": "bench-1"}, {
                    "verdict": verdict, "value": f[m], "baseline": b,
                    "change_pct": (f[m] - b) / b * 100, "change_run": run,
                    "baseline_runs": len(base), "method": "edivisive", "p_value": 0.3,
                    "revision": rev, "backfill": True}, start * NS))
        for s in (2, 3, 4):
            for m in ("stage_avgDuration", "stage_avgSwingsetTime", "stage_avgBlockDuration"):
                lines.append(lp_line("perfship_verdict", {
                    "source": "loadgen", "series": "daily-perf", "metric": m, "run": run,
                    "stage": str(s), "host": "bench-1"}, {
                    "verdict": "none", "value": 1.0, "baseline": 1.0, "change_pct": 0.0,
                    "change_run": run, "baseline_runs": 1, "method": "stage_drift",
                    "revision": rev, "backfill": True}, start * NS))
    return lines


def hundred_dss_files(now, rng):
    lines = []
    arms = ["interuss/dss:v0.22.0", "interuss/dss:v0.23.0-rc2", "local/dss:pr-1523"]
    for k in range(100):
        run = f"compare_{k:03d}"
        t = (now - 300 * DAY + 3 * DAY * k) * NS
        for test in ("rid_isa", "rid_isa_sub"):
            for arm in arms:
                for v in range(11):
                    lines.append(lp_line("dss_bench", {
                        "run": run, "test": test, "arm": arm, "variant": f"{10 * v}ms",
                        "sweep": "inter_latency", "base_datastore": "crdb",
                        "base_image": arms[0], "host": "bench-1"}, {
                        "variantIndex": v, "rps_total": 100.0 / (1 + v) * rng.uniform(0.9, 1.1),
                        "p50_ms": 100.0 + 40 * v, "p95_ms": 250.0 + 60 * v * rng.uniform(0.9, 1.1),
                        "errors": rng.randrange(3), "processes": 9, "duration_s": 60.0}, t))
            for arm in arms[1:]:
                for m in ("rps_total", "p95_ms", "errors"):
                    lines.append(lp_line("perfship_verdict", {
                        "source": "dss_bench", "series": test, "metric": m, "run": run,
                        "arm": arm, "reference": arms[0], "host": "bench-1"}, {
                        "verdict": "none", "value": 1.0, "baseline": 1.0, "change_pct": 0.0,
                        "change_run": run, "baseline_runs": 1, "method": "arm_compare",
                        "variants": 11, "variants_agree": 5, "backfill": True}, t))
        lines.append(lp_line("runs", {"source": "dss_bench", "run": run, "event": "end",
                                      "status": "success", "host": "bench-1"},
                             {"text": f"{run} written", "backfill": True}, t))
    return lines


def heartbeats(now):
    return [lp_line("perfship", {"host": "bench-1"}, {
        "lines_read": i, "records_parsed": i, "records_rejected": 0, "points_written": 40 * i,
        "points_rejected": 0, "batches_sent": i, "http_retries": 0, "bytes_sent": 1000 * i,
        "pending_points": 0, "files_watched": 14, "oldest_unacked_s": 0, "uptime_s": 10 * i},
        (now - DAY + 10 * i) * NS) for i in range(8640)]


def run_once(binary, cfg, page):
    rc, wall, cpu, rss_kb, err = run_child([binary, "-c", cfg, "report", "-o", page,
                                            "--since", "366d"])
    if rc != 0:
        raise SystemExit(f"perfship report failed ({rc}): {err}")
    return cpu, wall, rss_kb


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build-release", "perfship"))
    ap.add_argument("--keep", help="copy the page here")
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        subprocess.run(["cmake", "-S", ROOT, "-B", os.path.dirname(args.bin),
                        "-DCMAKE_BUILD_TYPE=Release"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", os.path.dirname(args.bin), "--target", "perfship",
                        "-j2"], check=True, stdout=subprocess.DEVNULL)
    rng = random.Random(2026)
    now = int(time.time())
    work = tempfile.mkdtemp(prefix="perfship-bench-report-")
    with harness.InfluxServer() as influx:
        influx.create_db("perf")
        lines = year_of_runs(now, rng) + hundred_dss_files(now, rng) + heartbeats(now)
        for i in range(0, len(lines), 5000):
            harness.write_lines(influx, "perf", "\n".join(lines[i:i + 5000]) + "\n")
        print(f"data: {len(lines)} points (365 nightly runs, 100 DSS results files)", flush=True)
        cfg = harness.write_config(os.path.join(work, "perfship.cfg"), influx.url,
                                   os.path.join(work, "state"))
        page = os.path.join(work, "page.html")
        results = [run_once(args.bin, cfg, page) for _ in range(args.runs)]
        cpu = statistics.median(r[0] for r in results)
        wall = statistics.median(r[1] for r in results)
        rss = statistics.median(r[2] for r in results)
        size = os.path.getsize(page)
        print(f"figure report cpu {cpu:.3f} s (perfship, median of {args.runs}; "
              f"{min(r[0] for r in results):.3f}-{max(r[0] for r in results):.3f})")
        print(f"figure report wall {wall:.3f} s (queries included)")
        print(f"figure report rss {rss / 1024:.1f} MB peak")
        print(f"figure report page {size / 1e6:.2f} MB")
        if args.keep:
            subprocess.run(["cp", page, args.keep], check=True)


if __name__ == "__main__":
    main()
