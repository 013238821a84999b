"""What the benchmarks measure and how they print it (docs/benchmarks.md,
"What is measured"): CPU and peak RSS of a child that exits or of one that
keeps running, and the figures, kept per (case, metric) so that every run
of a case adds one value and the medians are printed."""
import os
import statistics
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")

results = {}  # (case, metric) -> list of values


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def record(case, **metrics):
    for k, v in metrics.items():
        results.setdefault((case, k), []).append(v)


def median(case, metric):
    v = results.get((case, metric))
    return statistics.median(v) if v else None


def lowest(case, metric):
    """The least of a case's runs: what noise on the machine cannot add to."""
    v = results.get((case, metric))
    return min(v) if v else None


def spread(case, metric):
    v = results.get((case, metric))
    return f"{min(v):.2f}-{max(v):.2f}" if v and len(v) > 1 else ""


def figure(case, text):
    print(f"figure {case:<10} {text}", flush=True)


def run_child(argv, stdout=subprocess.DEVNULL):
    """Runs argv to completion: (rc, wall s, cpu s, peak rss KB, stderr text).

    CPU comes from wait4 (microseconds, the child and what it waited for).
    The peak RSS cannot: a forked child's ru_maxrss starts at this Python
    process's size before exec. So the child runs under /usr/bin/time, a
    small process whose own child (perfship) starts from its tiny image, and
    we read perfship's peak from time's report."""
    errf = tempfile.TemporaryFile()
    with tempfile.NamedTemporaryFile(prefix="rss-") as rssf:
        t0 = time.perf_counter()
        p = subprocess.Popen(["/usr/bin/time", "-o", rssf.name, "-f", "%M %x"] + argv,
                             stdout=stdout, stderr=errf)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        rss_kb, rc = (int(x) for x in open(rssf.name).read().split()[-2:])
    errf.seek(0)
    err = errf.read().decode("utf-8", "replace")
    errf.close()
    return rc, wall, ru.ru_utime + ru.ru_stime, rss_kb, err


def proc_cpu(pid):
    """user+sys seconds of a running process (all threads)."""
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / TICK


def proc_cpu_ns(pid):
    """CPU time in ns summed over threads (schedstat: finer than ticks)."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def proc_hwm_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0
