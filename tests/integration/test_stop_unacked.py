"""Commit only what was acknowledged, in the live agent.

`perfship run` tails a JSONL file that a writer keeps growing. InfluxDB is
killed (SIGKILL: a crash, no goodbye) in the middle of the stream; lines
keep coming, the agent reads them and fails to deliver them; the agent
gets SIGTERM while those points are unacknowledged. It must exit 0 without
committing them (docs/run.md, "What is guaranteed" and "Signals"). Then
the server comes back, the agent starts again, the writer goes on, and the
database must hold every written point, exactly as written.

InfluxDB overwrites a point sent twice, so the database cannot tell a
re-send from a first send; the fault proxy in front of it can. Its log
shows which points were acknowledged before the stop, which were re-sent
after the restart (all of them from the unacknowledged tail), and that
nothing acknowledged before the committed offset was sent again.
"""
import os
import re
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultproxy import FaultProxy, acked_writes  # noqa: E402
from harness import (Agent, InfluxServer, run_perfship, scratch_dir, wait_until,  # noqa: E402
                     write_config)
from pointset import db_points, diff, parse_lp, request_lines  # noqa: E402

BASE = 1700000000


def jline(i):
    return '{"ts": %d, "k": "a", "n": %d, "x": %s}\n' % (BASE + i, i, i * 0.25)


def lp(i):
    return f"m,host=test,k=a n={i}i,x={i * 0.25} {(BASE + i) * 10**9}\n"


def numbers(lines):
    """The `n` of each line protocol line of measurement m."""
    out = []
    for ln in lines:
        m = re.match(r"m,\S* n=(\d+)i", ln)
        if m:
            out.append(int(m.group(1)))
    return out


class Writer(threading.Thread):
    """Appends lines n..n+step every `pause` seconds until told to stop or
    until `upto`."""

    def __init__(self, path, start, upto, step=50, pause=0.02):
        super().__init__(daemon=True)
        self.path, self.n, self.upto, self.step, self.pause = path, start, upto, step, pause
        self.halt = threading.Event()

    def run(self):
        with open(self.path, "a") as f:
            while self.n < self.upto and not self.halt.is_set():
                k = min(self.step, self.upto - self.n)
                f.write("".join(jline(i) for i in range(self.n, self.n + k)))
                f.flush()
                self.n += k
                time.sleep(self.pause)

    def stop(self):
        self.halt.set()
        self.join(10)
        return self.n


class StopWithUnacknowledgedPoints(unittest.TestCase):
    def setUp(self):
        self.tmp = scratch_dir(self, "perfship-stop-")
        self.src = os.path.join(self.tmp, "src")
        os.mkdir(self.src)
        self.influx = InfluxServer().start()
        self.addCleanup(self.influx.close)
        self.proxy = FaultProxy(self.influx.port, seed=5).start()
        self.addCleanup(self.proxy.stop)
        self.agents = []
        self.addCleanup(self._kill_agents)

    def _kill_agents(self):
        for a in self.agents:
            a.kill()

    def agent(self, cfg):
        a = Agent(cfg, log_path=os.path.join(self.tmp, f"agent{len(self.agents)}.log"))
        self.agents.append(a)
        return a.start()

    def status(self, cfg):
        rc, out, err = run_perfship(["-c", cfg, "status"])
        self.assertEqual(rc, 0, err)
        return out

    def test_sigterm_with_unacknowledged_points_then_restart(self):
        path = os.path.join(self.src, "bench.jsonl")
        src = ('{ path = "%s"; format = "jsonl"; measurement = "m"; time_key = "ts"; '
               'tag_keys = ["k"]; types = { n = "integer"; }; }' % self.src)
        cfg = write_config(os.path.join(self.tmp, "p.cfg"), self.proxy.url,
                           os.path.join(self.tmp, "state"), sources=src, database="perf",
                           influx_extra="create_database = true;",
                           extra="batch = { flush_interval_ms = 50; max_points = 100; };\n"
                                 "watch = { rescan_interval_ms = 500; settle_ms = 200; };\n"
                                 "selfstats = { interval_ms = 600000; };\n")
        first = self.agent(cfg)
        writer = Writer(path, 0, 100000)
        writer.start()
        self.addCleanup(writer.stop)

        # Mid-stream: a good part acknowledged, then the server dies.
        self.proxy.wait_for(lambda rs: sum(len(numbers(request_lines(r)))
                                           for r in acked_writes(rs)) >= 1500,
                            20, what="1500 points acknowledged")
        self.influx.crash()
        down_at = len(self.proxy.requests)
        # The agent reads on and tries to deliver: those points are read,
        # sent, and not acknowledged.
        self.proxy.wait_for(lambda rs: len(rs) >= down_at + 3, 20,
                            what="writes attempted while the server is down")
        written = writer.stop()
        sent_first = [n for r in self.proxy.requests for n in numbers(request_lines(r))]
        acked_first = [n for r in acked_writes(self.proxy.requests)
                       for n in numbers(request_lines(r))]
        tried = set(numbers(ln for r in self.proxy.requests[down_at:]
                            for ln in request_lines(r)))
        self.assertTrue(tried, "no point was read and sent while the server was down")
        self.assertEqual(len(acked_first), len(set(acked_first)),
                         "a point acknowledged twice before the stop")

        t0 = time.monotonic()
        self.assertEqual(first.stop(60), 0, first.output()[-3000:])
        stop_s = time.monotonic() - t0

        # What is committed was acknowledged; what was only sent is not.
        st = self.status(cfg)
        m = re.search(re.escape(path) + r"\s+offset (\d+) of (\d+) .*?(\d+) bytes behind", st)
        self.assertIsNotNone(m, st)
        offset, size, behind = map(int, m.groups())
        self.assertGreater(behind, 0, st)
        with open(path, "rb") as f:
            head = f.read(offset)
        self.assertTrue(head == b"" or head.endswith(b"\n"), "the offset is not at a line end")
        committed = head.count(b"\n")  # points 0 .. committed-1
        self.assertLessEqual(set(range(committed)), set(acked_first),
                             "committed past a point the server never acknowledged")
        unacked = tried - set(acked_first)
        self.assertTrue(unacked, "every point sent during the outage was acknowledged")
        self.assertGreaterEqual(min(unacked), committed,
                                "a point sent but never acknowledged counts as committed")

        # The server back, the agent restarted, the writer going on.
        self.proxy.clear_requests()
        self.influx.start()
        second = self.agent(cfg)
        total = written + 2000
        writer = Writer(path, written, total)
        writer.start()
        writer.join(30)
        self.assertEqual(writer.n, total)

        want = parse_lp("".join(lp(i) for i in range(total)))
        last = {}

        def arrived():
            last["d"] = diff(want, db_points(self.influx, "perf", ["m"]))
            return not last["d"]
        try:
            wait_until(arrived, 30, interval=0.5, what="every written point")
        except AssertionError:
            self.fail("point sets differ:\n" + "\n".join(last["d"]) +
                      "\n--- agent log:\n" + second.output()[-3000:])
        self.assertEqual(second.stop(30), 0, second.output()[-3000:])

        # The second agent started at the committed offset: each point from
        # there on acknowledged once, none before it sent again.
        after = [n for r in acked_writes(self.proxy.requests) for n in numbers(request_lines(r))]
        self.assertEqual(len(after), len(set(after)), "a point acknowledged twice after the restart")
        self.assertEqual(set(after), set(range(committed, total)))
        resent = set(sent_first) & set(after)
        self.assertTrue(unacked <= resent, "a point never acknowledged was not sent again")
        print(f"\nSIGTERM with the server down: exit 0 after {stop_s:.1f} s; "
              f"{len(acked_first)} points acknowledged, {committed} committed, "
              f"{len(unacked)} sent but unacknowledged, {written} written. "
              f"After the restart: {len(resent)} re-sent (n {min(resent)}..{max(resent)}), "
              f"{len(set(acked_first) & set(after))} of them acknowledged before (out of order)")


if __name__ == "__main__":
    unittest.main(verbosity=2)
