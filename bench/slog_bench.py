#!/usr/bin/env python3
"""The slog case of the benchmarks (docs/benchmarks.md "Slog").

    bench/slog_bench.py --bin build-release/perfship [--mb 1024] [--data DIR] [--runs 3]

scripts/bench runs it as its opt-in `slog` case; it also runs alone, and
needs no server. It measures, side by side in one run, on the same file:

  gzip        `gzip -dc chain-stage-1.slog.gz >/dev/null`: inflating alone,
              the floor of any reader
  reduce      `perfship convert -f loadgen` of a run folder holding that
              stage's slog, minus the same folder without it (so perf.jsonl's
              share is not counted); the target is <= 2 x gzip
  bigline     peak RSS of `perfship convert -f loadgen` on a run whose
              create-vat lines are 8 MB each (bundle_bytes); target <= 32 MB

The input is tests/data/loadgen/gen_loadgen.py --big-slog MB (a stage slog
of about MB megabytes uncompressed), cached in --data.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
GEN = os.path.join(ROOT, "tests", "data", "loadgen", "gen_loadgen.py")


def timed(argv, stdout=subprocess.DEVNULL):
    """(rc, wall s, user+sys s, peak RSS KB) of argv, run under /usr/bin/time
    so the peak is the program's own, not this Python's after fork."""
    with tempfile.NamedTemporaryFile(prefix="rss-") as rssf:
        t0 = time.perf_counter()
        p = subprocess.Popen(["/usr/bin/time", "-o", rssf.name, "-f", "%M %x"] + argv,
                             stdout=stdout, stderr=subprocess.DEVNULL)
        _, _, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        with open(rssf.name) as f:
            rss_kb, rc = (int(x) for x in f.read().split()[-2:])
    return rc, wall, ru.ru_utime + ru.ru_stime, rss_kb


def only_folder(run, dst, keep_slog):
    """A copy of run's perf.jsonl and exit_code, with its stage-1 slog linked
    in or not: the same perf.jsonl work on both sides of the difference."""
    if os.path.exists(dst):
        shutil.rmtree(dst)
    os.makedirs(dst)
    for name in ("perf.jsonl", "exit_code", "docker.log"):
        src = os.path.join(run, name)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(dst, name))
    if keep_slog:
        os.symlink(os.path.join(run, "chain-stage-1.slog.gz"),
                   os.path.join(dst, "chain-stage-1.slog.gz"))
    return dst


def generate(data, name, args):
    out = os.path.join(data, name)
    if not os.path.isdir(out):
        print(f"slog bench: generating {name} ({' '.join(args)})", file=sys.stderr, flush=True)
        tmp = out + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run([sys.executable, GEN, "--out", tmp] + args, check=True,
                       stdout=subprocess.DEVNULL)
        os.rename(tmp, out)
    (run,) = [os.path.join(out, d) for d in os.listdir(out)]
    return run


def uncompressed_mb(path):
    p = subprocess.run(["sh", "-c", 'gzip -dc "$1" 2>/dev/null | wc -c', "sh", path],
                       capture_output=True, text=True)
    return int(p.stdout.strip() or 0) / 1e6


def case_slog(binary, data, mb, runs, figure=None, record=None):
    """Runs the case; figure(case, text) and record(case, **metrics) are
    scripts/bench's reporters (printing alone when None)."""
    figure = figure or (lambda case, text: print(f"figure {case:<10} {text}", flush=True))
    record = record or (lambda case, **m: None)
    run = generate(data, f"big-{mb}", ["--big-slog", str(mb)])
    slog = os.path.join(run, "chain-stage-1.slog.gz")
    raw_mb = uncompressed_mb(slog)
    work = tempfile.mkdtemp(prefix="slog-bench-")
    try:
        with_slog = only_folder(run, os.path.join(work, os.path.basename(run)), True)
        without = only_folder(run, os.path.join(work, "plain", os.path.basename(run)), False)
        g, r, w = [], [], []
        for _ in range(runs):  # interleaved, so the machine's load falls on both alike
            rc, _, cpu, _ = timed(["gzip", "-dc", slog])
            assert rc == 0
            g.append(cpu)
            rc, _, cpu, rss = timed([binary, "convert", "-f", "loadgen", with_slog])
            assert rc in (0, 65), rc
            r.append((cpu, rss))
            rc, _, cpu, _ = timed([binary, "convert", "-f", "loadgen", without])
            w.append(cpu)
        gz = statistics.median(g)
        red = statistics.median(c for c, _ in r) - statistics.median(w)
        rss = max(m for _, m in r)
        record("slog", gzip_cpu=gz, reduce_cpu=red, ratio=red / gz, rss_mb=rss / 1024)
        figure("slog", f"{raw_mb:.0f} MB slog ({os.path.getsize(slog) / 1e6:.0f} MB gzipped): "
                       f"gzip -dc {gz:.2f} s CPU, perfship reduce {red:.2f} s CPU "
                       f"({red / gz:.2f} x gzip; target <= 2), peak RSS {rss / 1024:.1f} MB")
        big = generate(data, "biglines", [
            "--stages", "2", "--stage-minutes", "5", "--scenario-json",
            json.dumps({"slog": "rich", "seed": 4107, "bundle_bytes": {"amm": 8000000,
                                                                       "zoe": 8000000}})])
        rss = []
        for _ in range(runs):
            rc, _, _, m = timed([binary, "convert", "-f", "loadgen", big])
            assert rc in (0, 65), rc
            rss.append(m)
        record("slog", bigline_rss_mb=max(rss) / 1024)
        figure("slog", f"8 MB create-vat lines: peak RSS {max(rss) / 1024:.1f} MB (target <= 32)")
        return red / gz, max(rss) / 1024
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build-release", "perfship"))
    ap.add_argument("--mb", type=int, default=1024, help="stage slog size, uncompressed MB")
    ap.add_argument("--data", default=os.path.join(ROOT, "build-release", "bench-data"))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    os.makedirs(args.data, exist_ok=True)
    case_slog(os.path.abspath(args.bin), args.data, args.mb, args.runs)


if __name__ == "__main__":
    main()
