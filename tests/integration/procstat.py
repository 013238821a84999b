"""What the reliability tests measure of a running agent, from /proc.

    rss_kb(pid)        resident set size now (VmRSS), kB
    cpu_seconds(pid)   user + system CPU time so far (utime + stime)
    RssSampler(pid)    samples VmRSS in a thread; .peak_kb, .samples
"""
import os
import threading
import time

_TICK = os.sysconf("SC_CLK_TCK")


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    # the command name may hold spaces: fields start after the last ')'
    fields = stat[stat.rindex(")") + 2:].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / _TICK


class RssSampler:
    def __init__(self, pid, interval=0.05):
        self.pid = pid
        self.interval = interval
        self.peak_kb = 0
        self.samples = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            v = rss_kb(self.pid)
            if v is not None:
                self.peak_kb = max(self.peak_kb, v)
                self.samples += 1
            time.sleep(self.interval)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def agent_is_sanitized(binary=None):
    """True when the agent binary is an ASan build, whose shadow memory and
    quarantine make its RSS several times larger: memory bounds measured
    on it mean nothing (scripts/soak runs the whole suite that way)."""
    if binary is None:
        from harness import PERFSHIP_BIN as binary
    try:
        with open(binary, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False
