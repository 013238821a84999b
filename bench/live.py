"""The cases with an agent that keeps running: many files growing at once
(scale), an appended line until it can be queried (latency), and the agent
with nothing to do (idle) (docs/benchmarks.md, "Cases")."""
import os
import subprocess
import tempfile
import threading
import time

from bench.inputs import JSONL_SOURCE
from bench.measure import figure, median, proc_cpu_ns, proc_hwm_kb, record, spread


def grow_files(b, name, lines, nfiles, rounds, pause):
    """A service-mode agent watching nfiles files; `lines` lines are appended
    to them round-robin in `rounds` rounds. Returns (cpu s, wall s, hwm KB)."""
    d = tempfile.mkdtemp(dir=b.tmp, prefix=f"{name}-")
    paths = [os.path.join(d, f"f{i:04d}.jsonl") for i in range(nfiles)]
    for p in paths:
        open(p, "w").close()
    db = b.fresh_db(name)
    cfg = b.config(db, JSONL_SOURCE.format(path=os.path.join(d, "*.jsonl")),
                   extra="selfstats = { interval_ms = 600000; };")
    log_path = cfg + ".log"
    logf = open(log_path, "ab")
    proc = subprocess.Popen([b.bin, "-c", cfg, "run"], stdout=logf, stderr=subprocess.STDOUT)
    try:
        time.sleep(1.0 + nfiles / 1000)  # let it open every file
        per_file = [[] for _ in range(nfiles)]
        for i, ln in enumerate(lines):
            per_file[i % nfiles].append(ln)
        fds = [os.open(p, os.O_WRONLY | os.O_APPEND) for p in paths]
        prof = None
        if os.environ.get("PERFSHIP_BENCH_PERF") and nfiles > 1:
            # profile the agent of this case: perf record -p, stopped with SIGINT
            prof = subprocess.Popen(["perf", "record", "--call-graph", os.environ.get("PERFSHIP_BENCH_PERF_CG", "fp"), "-o", os.environ["PERFSHIP_BENCH_PERF"],
                                     "-p", str(proc.pid)], stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        c0 = proc_cpu_ns(proc.pid)
        t0 = time.perf_counter()
        for r in range(rounds):
            for k, fd in enumerate(fds):
                chunk = per_file[k]
                lo = len(chunk) * r // rounds
                hi = len(chunk) * (r + 1) // rounds
                if hi > lo:
                    os.write(fd, b"".join(chunk[lo:hi]))
            time.sleep(pause)
        for fd in fds:
            os.close(fd)
        deadline = time.time() + 300
        while b.count(db) < len(lines):
            if time.time() > deadline or proc.poll() is not None:
                raise RuntimeError(f"{name}: points missing; log: {open(log_path).read()[-800:]}")
            time.sleep(0.2)
        wall = time.perf_counter() - t0
        cpu = (proc_cpu_ns(proc.pid) - c0) / 1e9
        hwm = proc_hwm_kb(proc.pid)
        if prof:
            prof.send_signal(2)
            prof.wait(60)
    finally:
        proc.terminate()
        proc.wait(30)
        logf.close()
        b.drop(db)
    return cpu, wall, hwm


def case_scale(b, jsonl, quick):
    nfiles = 50 if quick else 1000
    npts = 20000 if quick else 200000
    with open(jsonl, "rb") as f:
        lines = [f.readline() for _ in range(npts)]
    for r in range(b.args.runs):
        for name, nf in (("scale1", 1), (f"scale{nfiles}", nfiles)):
            cpu, wall, hwm = grow_files(b, name, lines, nf, rounds=10, pause=0.2)
            record(name, cpu_us=cpu / npts * 1e6, wall=wall, rss_mb=hwm / 1024)
    one = median("scale1", "cpu_us")
    many = median(f"scale{nfiles}", "cpu_us")
    record("scale", ratio=many / one, files=nfiles)
    figure("scale", f"1 file: cpu {one:.2f} us/pt [{spread('scale1', 'cpu_us')}] "
           f"rss {median('scale1', 'rss_mb'):.1f} MB;  "
           f"{nfiles} files: cpu {many:.2f} us/pt [{spread(f'scale{nfiles}', 'cpu_us')}] "
           f"rss {median(f'scale{nfiles}', 'rss_mb'):.1f} MB  "
           f"(x{many / one:.2f} cpu; n={npts}, 10 rounds of appends; cpu from schedstat, ns)")


def case_latency_idle(b, cases, quick):
    seconds = 3 if quick else 10
    rate = 1000
    d = tempfile.mkdtemp(dir=b.tmp, prefix="lat-")
    path = os.path.join(d, "live.jsonl")
    open(path, "w").close()
    db = b.fresh_db("latency")
    cfg = b.config(db, JSONL_SOURCE.format(path=path))
    logf = open(cfg + ".log", "ab")
    proc = subprocess.Popen([b.bin, "-c", cfg, "run"], stdout=logf, stderr=subprocess.STDOUT)
    flush_ms = 1000
    try:
        time.sleep(1.0)
        if "latency" in cases:
            total = seconds * rate
            appended = [0.0] * total
            polls = []
            done = threading.Event()

            def poller():
                while not done.is_set():
                    try:
                        c = b.count(db)
                    except Exception:
                        c = 0
                    polls.append((time.perf_counter(), c))
                    if c >= total:
                        return
                    time.sleep(0.01)

            th = threading.Thread(target=poller)
            th.start()
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            base = time.time()
            t0 = time.perf_counter()
            for i in range(total):
                due = t0 + i / rate
                now = time.perf_counter()
                if due > now:
                    time.sleep(due - now)
                line = (f'{{"ts":{base + i / rate:.6f},"stage":"0","seq":{i},'
                        f'"rps":{1000 + i % 7}.5}}\n').encode()
                appended[i] = time.perf_counter()
                os.write(fd, line)
            os.close(fd)
            th.join(60)
            done.set()
            lat = []
            k = 0
            for i in range(total):
                while k < len(polls) and polls[k][1] <= i:
                    k += 1
                if k == len(polls):
                    raise RuntimeError(f"latency: line {i} never became queryable")
                lat.append((polls[k][0] - appended[i]) * 1000)
            lat.sort()
            p50 = lat[len(lat) // 2]
            p99 = lat[int(len(lat) * 0.99)]
            record("latency", p50_ms=p50, p99_ms=p99, max_ms=lat[-1], flush_ms=flush_ms)
            figure("latency", f"p50 {p50:.0f} ms  p99 {p99:.0f} ms  max {lat[-1]:.0f} ms  "
                   f"(flush_interval_ms {flush_ms}, {rate} lines/s for {seconds} s, polled every ~10 ms)")
        if "idle" in cases:
            time.sleep(2.0)  # the last flush and its ack
            span = 3.0 if quick else 20.0
            c0 = proc_cpu_ns(proc.pid)
            time.sleep(span)
            used = (proc_cpu_ns(proc.pid) - c0) / 1e6
            record("idle", cpu_ms_per_min=used / span * 60)
            figure("idle", f"cpu {used / span * 60:.2f} ms per minute  ({span:.0f} s watched, one file, "
                   "nothing appended)")
    finally:
        proc.terminate()
        proc.wait(30)
        logf.close()
        b.drop(db)
