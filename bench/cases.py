"""The cases that run a perfship to its end: convert, the plain client
against run --once (plain, e2e, gzip), bigline, the verdict engine, and
the opt-in backfill (docs/benchmarks.md, "Cases")."""
import os
import subprocess
import sys

from bench import ROOT, plain_client
from bench.inputs import count_lines
from bench.measure import figure, log, median, record, run_child, spread


def convert_once(b, name, jsonl, mapping, n):
    """One convert run; its CPU per point."""
    argv = [b.bin, "-c", b.convert_cfg, "convert", "-f", "jsonl"] + mapping + [jsonl]
    rc, wall, cpu, rss, err = run_child(argv)
    if rc != 0:
        raise RuntimeError(f"convert exited {rc}: {err[-500:]}")
    record(name, cpu_us=cpu / n * 1e6, wall=wall, rss_mb=rss / 1024, pps=n / wall)
    return cpu / n * 1e6


def convert_figure(name, n):
    figure(name, f"cpu {median(name, 'cpu_us'):.3f} us/pt [{spread(name, 'cpu_us')}]  "
           f"wall {median(name, 'wall'):.2f} s  "
           f"rss {median(name, 'rss_mb'):.1f} MB  {median(name, 'pps') / 1000:.0f}k pt/s  (n={n})")


def case_convert(b, name, jsonl, mapping, n):
    for r in range(b.args.runs):
        convert_once(b, name, jsonl, mapping, n)
    convert_figure(name, n)


def case_plain_once(b, batches, n, conns, suffix=""):
    name = f"plain{conns}{suffix}"
    db = b.fresh_db(name.replace("-", "_"))
    c0 = b.influx_cpu()
    wall = plain_client.post("127.0.0.1", b.influx.port, db, batches, conns)
    ic = b.influx_cpu() - c0
    record(name, wall=wall, pps=n / wall, influx_us=ic / n * 1e6)
    b.drop(db)


def case_agent_once(b, name, source, n, gzip, verify):
    """One run --once into a fresh database; its CPU per point."""
    db = b.fresh_db(name.replace("-", "_"))
    cfg = b.config(db, source, gzip=gzip)
    c0 = b.influx_cpu()
    rc, wall, cpu, rss, err = run_child([b.bin, "-c", cfg, "run", "--once"])
    ic = b.influx_cpu() - c0
    if rc != 0:
        raise RuntimeError(f"{name}: run --once exited {rc}: {err[-800:]}")
    if verify:
        got = b.count(db, field="blocks" if name in ("e2e", "gzip") else "rps")
        if got != n:
            raise RuntimeError(f"{name}: {got} points in InfluxDB, expected {n}")
    record(name, cpu_us=cpu / n * 1e6, wall=wall, rss_mb=rss / 1024, pps=n / wall,
           influx_us=ic / n * 1e6)
    b.drop(db)
    return cpu / n * 1e6


def case_throughput(b, inputs, n, cases):
    """plain, e2e and gzip interleaved over both inputs, so drift in the
    server hits all alike. `inputs`: (suffix, jsonl, lp, source, mapping)
    per input; gzip runs on the first only. With convert asked for too, a
    convert run goes right before each e2e run, and each pair's ratio is
    recorded ("e2e-pair"): the machine's speed drifts by a tenth over a
    session (docs/benchmarks.md, "Ninth pass"), and a ratio of runs taken
    minutes apart measures that drift as much as the agent."""
    batches = {}
    pairs = "convert" in cases and "e2e" in cases
    if "plain" in cases:
        for suffix, _, lp, _, _ in inputs:
            batches[suffix], nlp = plain_client.batches(lp)
            assert nlp == n, (lp, nlp, n)
    for r in range(b.args.runs):
        for k, (suffix, jsonl, lp, source, mapping) in enumerate(inputs):
            if "plain" in cases:
                case_plain_once(b, batches[suffix], n, 1, suffix)
                case_plain_once(b, batches[suffix], n, 2, suffix)
            if "e2e" in cases:
                c = convert_once(b, "convert" + suffix, jsonl, mapping, n) if pairs else None
                e = case_agent_once(b, "e2e" + suffix, source, n, "off", verify=r == 0)
                if c is not None:
                    record("e2e-pair" + suffix, ratio=e / c)
            if "gzip" in cases and k == 0:
                case_agent_once(b, "gzip", source, n, "on", verify=r == 0)
    if pairs:
        for suffix, _, _, _, _ in inputs:
            convert_figure("convert" + suffix, n)
            figure("e2e-pair" + suffix, f"run --once CPU / convert CPU of the run just before: "
                   f"median {median('e2e-pair' + suffix, 'ratio'):.2f} "
                   f"[{spread('e2e-pair' + suffix, 'ratio')}]  medians of the interleaved runs "
                   f"{median('e2e' + suffix, 'cpu_us') / median('convert' + suffix, 'cpu_us'):.2f}")
    for suffix, _, _, _, _ in inputs:
        for c in ("plain1" + suffix, "plain2" + suffix):
            if median(c, "wall") is not None:
                figure(c, f"wall {median(c, 'wall'):.2f} s [{spread(c, 'wall')}]  "
                       f"{median(c, 'pps') / 1000:.0f}k pt/s  "
                       f"influxd {median(c, 'influx_us'):.2f} us/pt  (n={n}, 5000-line batches)")
        for c in ("e2e" + suffix, "gzip" + suffix):
            if median(c, "wall") is not None:
                figure(c, f"cpu {median(c, 'cpu_us'):.3f} us/pt [{spread(c, 'cpu_us')}]  "
                       f"wall {median(c, 'wall'):.2f} s [{spread(c, 'wall')}]  "
                       f"rss {median(c, 'rss_mb'):.1f} MB  {median(c, 'pps') / 1000:.0f}k pt/s  "
                       f"influxd {median(c, 'influx_us'):.2f} us/pt  (n={n})")


def case_bigline(b, d):
    finish = os.path.getsize(os.path.join(d, os.listdir(d)[0], "perf.jsonl"))
    for r in range(b.args.runs):
        db = b.fresh_db("bigline")
        cfg = b.config(db, f'{{ path = "{d}"; format = "loadgen"; }}')
        rc, wall, cpu, rss, err = run_child([b.bin, "-c", cfg, "run", "--once"])
        if rc != 0:
            raise RuntimeError(f"bigline: run --once exited {rc}: {err[-800:]}")
        record("bigline", cpu=cpu, wall=wall, rss_mb=rss / 1024)
        b.drop(db)
    with open(os.path.join(d, os.listdir(d)[0], "perf.jsonl"), "rb") as f:
        f.seek(max(0, finish - (64 << 20)))
        last = f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    figure("bigline", f"cpu {median('bigline', 'cpu'):.3f} s  wall {median('bigline', 'wall'):.2f} s  "
           f"rss {median('bigline', 'rss_mb'):.1f} MB  (perf.jsonl {finish / 1e6:.1f} MB, "
           f"perf-finish line {len(last) / 1e6:.1f} MB)")


def case_verdicts(b, quick):
    """CPU of the verdict engine itself: no server, no I/O, so the figure is
    the judging alone (what the agent adds when a run ends)."""
    exe = b.tool("bench_verdicts")
    if not os.path.exists(exe):
        raise RuntimeError(f"{exe} is missing: build the bench_verdicts target")
    for window in [60] if quick else [60, 365]:
        case = f"verdicts{window}"
        for r in range(b.args.runs):
            # the newest-first backfill takes about 90 s: once, default window
            reverse = ["--reverse"] if window == 60 and r == 0 and not quick else []
            out = subprocess.run([exe, "cost", "--runs", "365", "--window", str(window)] + reverse,
                                 check=True, capture_output=True, text=True).stdout
            for line in out.splitlines():
                kind, *pairs = line.split()
                record(case, **{kind: float(dict(p.split("=") for p in pairs)["cpu_s"])})
        rev = median(case, "reverse_arrival")
        figure("verdicts", f"365 runs x 7 metrics, window {window}: one new run "
               f"{median(case, 'one_run') * 1000:.1f} ms  every run "
               f"{median(case, 'all_runs'):.2f} s  (CPU)"
               + (f"  judged at every newest-first arrival {rev:.1f} s" if rev else ""))
    # a generated triage_file of 100,000 lines (docs/benchmarks.md, "Triage at scale")
    lines = 10000 if quick else 100000
    for r in range(b.args.runs):
        out = subprocess.run([exe, "triage", "--lines", str(lines)], check=True,
                             capture_output=True, text=True).stdout
        pairs = dict(p.split("=") for p in out.split()[1:])
        for k in ("parse_cpu_s", "copy_cpu_s", "ask_all_cpu_s"):
            record("triage", **{k: float(pairs[k])})
    figure("triage", f"a triage_file of {lines:,} lines: parsed {median('triage', 'parse_cpu_s') * 1000:.0f} ms  "
           f"put in force {median('triage', 'copy_cpu_s') * 1000:.0f} ms  every run asked "
           f"{median('triage', 'ask_all_cpu_s') * 1000:.0f} ms  (CPU)")


def plain_client_process(b, db, lp, conns=2):
    """bench/plain_client.py over `conns` keep-alive connections: the wall
    seconds it reports (the file is read and split before its clock)."""
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "plain_client.py"),
                        b.influx.url, db, lp, str(conns)], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"plain_client.py exited {p.returncode}: {p.stderr[-500:]}")
    return float(p.stdout.split()[-1])


def case_backfill(b, name, d, lp, runs):
    """The plain client and run --once on the same points, interleaved."""
    n = count_lines(lp)
    size = sum(os.path.getsize(os.path.join(d, r, "perf.jsonl")) for r in os.listdir(d)
               if os.path.isdir(os.path.join(d, r)))
    for r in range(runs):
        db = b.fresh_db(name + "_plain")
        c0 = b.influx_cpu()
        plain = plain_client_process(b, db, lp)
        plain_ic = b.influx_cpu() - c0
        b.drop(db)
        db = b.fresh_db(name)
        cfg = b.config(db, f'{{ path = "{d}"; format = "loadgen"; }}')
        c0 = b.influx_cpu()
        rc, wall, cpu, rss, err = run_child([b.bin, "-c", cfg, "run", "--once"])
        ic = b.influx_cpu() - c0
        b.drop(db)
        if rc != 0:
            raise RuntimeError(f"{name}: run --once exited {rc}: {err[-800:]}")
        progress = [ln for ln in err.splitlines() if "progress" in ln]
        record(name, wall=wall, plain_wall=plain, cpu_us=cpu / n * 1e6, rss_mb=rss / 1024,
               progress_lines=len(progress), influx_us=ic / n * 1e6,
               plain_influx_us=plain_ic / n * 1e6)
        log(f"  {name} run {r + 1}: agent {wall:.2f} s, plain client {plain:.2f} s")
        if progress:
            log("  last progress line: " + progress[-1])
    w, pw = median(name, "wall"), median(name, "plain_wall")
    record(name + "-ratio", ratio=w / pw)
    figure(name, f"wall {w:.2f} s [{spread(name, 'wall')}] vs plain client (2 conns, LP) "
           f"{pw:.2f} s [{spread(name, 'plain_wall')}] = x{w / pw:.2f}  "
           f"cpu {median(name, 'cpu_us'):.2f} us/pt  rss {median(name, 'rss_mb'):.1f} MB  "
           f"influxd {median(name, 'influx_us'):.2f} (plain {median(name, 'plain_influx_us'):.2f}) "
           f"us/pt  progress lines {median(name, 'progress_lines'):.0f}  "
           f"(n={n}, perf.jsonl {size / 1e6:.0f} MB, {runs} interleaved run(s))")
