"""Server faults: InfluxDB down, restarted, killed mid-batch; and a
fault proxy answering 500/503/429/413, slow answers, half-written answers
and dropped connections at random for a whole ingest, while the real
server answers genuine 400 partial writes for a few points.

The agent is also killed (SIGKILL) during the outage and restarted.
Every test ends with the FULL point set read back (SELECT *, tags + time +
fields) equal to what `perfship convert` makes of the files, minus exactly
the points the server itself refuses. During the outage the agent's memory
(VmRSS, sampled) stays bounded and it does not spin (CPU time over a 5 s
wait).

PERFSHIP_SEED=N replays the random faults (printed); PERFSHIP_SOAK=1
makes the outage a minute long and the input ten times larger.
"""
import os
import re
import signal
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultproxy import FaultProxy  # noqa: E402
from harness import Agent, InfluxServer, run_perfship, wait_until, write_config  # noqa: E402
from harness import scratch_dir  # noqa: E402
from pointset import db_points, diff, parse_lp  # noqa: E402
from procstat import RssSampler, agent_is_sanitized, cpu_seconds  # noqa: E402

SOAK = os.environ.get("PERFSHIP_SOAK") == "1"
SEED = int(os.environ.get("PERFSHIP_SEED", "4711"))
BASE = 1700000000


def jline(i, x=None):
    x = repr(i * 0.25) if x is None else x
    return ('{"ts": %d, "k": "k%d", "n": %d, "x": %s, "s": "row %d"}\n'
            % (BASE + i, i % 7, i, x, i))


class Faults(unittest.TestCase):
    def setUp(self):
        self.tmp = scratch_dir(self, "perfship-faults-")
        self.src = os.path.join(self.tmp, "src")
        os.mkdir(self.src)
        self.influx = InfluxServer().start()
        self.proxy = FaultProxy(self.influx.port, seed=SEED).start()
        self.agent = None

    def tearDown(self):
        if self.agent:
            self.agent.kill()
        self.proxy.stop()
        self.influx.close()
        res = getattr(self._outcome, "result", None)
        if res and any(t is self for t, _ in res.failures + res.errors) and self.agent:
            print("--- agent log:\n" + self.agent.output()[-5000:])

    def config(self, batch="", influx_extra=""):
        src = ('{ path = "%s"; format = "jsonl"; measurement = "m"; time_key = "ts"; '
               'tag_keys = ["k"]; types = { n = "integer"; }; }' % self.src)
        extra = (f"batch = {{ flush_interval_ms = 100; {batch} }};\n"
                 "watch = { rescan_interval_ms = 1000; settle_ms = 200; };\n"
                 "selfstats = { interval_ms = 600000; };\n")
        return write_config(os.path.join(self.tmp, "p.cfg"), self.proxy.url,
                            os.path.join(self.tmp, "state"), sources=src, extra=extra,
                            influx_extra=influx_extra)

    def expected(self, cfg):
        files = sorted(os.path.join(self.src, f) for f in os.listdir(self.src))
        rc, out, err = run_perfship(["-c", cfg, "convert", "-f", "jsonl"] + files)
        self.assertEqual(rc, 0, err)
        return parse_lp(out)

    def assert_exact(self, want, timeout):
        last = {}

        def same():
            last["d"] = diff(want, db_points(self.influx, "perf", ["m"]))
            return not last["d"]
        try:
            wait_until(same, timeout, interval=1.0, what="the exact point set")
        except AssertionError:
            self.fail(f"seed {SEED}: point sets differ:\n" + "\n".join(last["d"]))

    # ------------------------------------------------------------------------
    def test_outage_restart_and_second_outage_mid_batch(self):
        total = 500000 if SOAK else 50000
        outage = 60 if SOAK else 10
        cfg = self.config()  # default max_points, max_bytes, max_pending_bytes
        self.agent = Agent(cfg).start()
        path = os.path.join(self.src, "o.jsonl")
        first = 2000
        with open(path, "a") as f:
            f.write("".join(jline(i) for i in range(first)))
        wait_until(lambda: self.influx.count("perf", "m") == first
                   if self._db_exists() else False, 20, what="first points")

        self.influx.stop()
        t_down = time.time()
        with RssSampler(self.agent.proc.pid) as rss:
            with open(path, "a") as f:
                for i in range(first, total, 5000):
                    f.write("".join(jline(j) for j in range(i, min(total, i + 5000))))
                    f.flush()
            size_mb = os.path.getsize(path) / 2**20
            # Let it fill its pending memory and settle into backoff, then
            # measure the CPU it burns while waiting.
            time.sleep(max(0.0, outage - 5 - (time.time() - t_down)) / 2)
            c0, w0 = cpu_seconds(self.agent.proc.pid), time.time()
            time.sleep(5)
            cpu = cpu_seconds(self.agent.proc.pid) - c0
            waited = time.time() - w0
            time.sleep(max(0.0, outage - (time.time() - t_down)))
        down_for = time.time() - t_down
        hwm = self.agent.rss_kb()  # VmHWM: the peak since the agent started
        print(f"\noutage 1: {down_for:.1f} s down, {size_mb:.1f} MB ({total} lines) "
              f"written meanwhile; agent VmRSS peak {rss.peak_kb / 1024:.1f} MB over "
              f"{rss.samples} samples, VmHWM {hwm / 1024:.1f} MB; CPU {cpu:.2f} s in a "
              f"{waited:.1f} s wait")
        if agent_is_sanitized():
            print("memory bound not checked: the agent is an ASan build")
        else:
            self.assertLess(max(rss.peak_kb, hwm), 64 * 1024)
        self.assertLess(cpu, 0.3)

        # The agent killed while the server is down, and restarted: what it
        # held in memory was never committed, so it reads it again.
        self.agent.kill(signal.SIGKILL)
        self.agent = Agent(cfg).start()
        time.sleep(1)

        # Back up; then down again the moment the next write is in flight.
        n_before = len(self.proxy.requests)
        self.influx.start()
        t_up1 = time.time()
        self.proxy.wait_for(lambda rs: any(r.path == "/write" for r in rs[n_before:]),
                            timeout=30, what="a write after the restart")
        # This time the server crashes (SIGKILL): what it acknowledged is in
        # its WAL; what it had not, the agent must send again.
        self.influx.proc.kill()
        self.influx.proc.wait()
        self.influx.stop()
        t2 = time.time()
        print(f"first write {t2 - t_up1:.1f} s after the first restart")
        time.sleep(3)
        self.influx.start()
        print(f"outage 2: influxd SIGKILLed with a write in flight, back after "
              f"{time.time() - t2:.1f} s")

        t_up = time.time()
        want = self.expected(cfg)
        self.assertEqual(len(want), total)
        self.assert_exact(want, 120 if SOAK else 60)
        print(f"caught up {time.time() - t_up:.1f} s after the second restart")
        self.assertEqual(self.agent.stop(), 0)
        self.assertIn("cannot reach InfluxDB", self.agent.output())

    def _db_exists(self):
        try:
            return any(r.get("name") == "perf"
                       for r in self.influx.query(None, "SHOW DATABASES"))
        except (RuntimeError, OSError):
            return False

    # ------------------------------------------------------------------------
    def test_random_faults_for_a_whole_ingest(self):
        total = 200000 if SOAK else 20000
        # x is a float in this database; a few rows carry a string x, which
        # the real server refuses (400 partial write, type conflict).
        self.influx.create_db("perf")
        st, body = self.influx.write("perf", f"m,k=seed x=0.5 {(BASE - 1) * 10**9}\n")
        self.assertEqual(st, 204, body)
        conflicts = {1234, 7777, 15001, total - 3}
        cfg = self.config(batch="max_points = 1000;", influx_extra="timeout_ms = 1500;")
        p = self.proxy
        p.add_rule("pass", path="/query")   # keep CREATE DATABASE plain
        # Each kind once for certain, then at random.
        p.add_rule("status", code=500, count=1)
        p.add_rule("status", code=503, retry_after="1", count=1)
        p.add_rule("status", code=429, retry_after="1", count=1)
        p.add_rule("status", code=413, count=1)
        p.add_rule("delay", seconds=2.0, count=1)
        p.add_rule("half", count=1)
        p.add_rule("drop", count=1, forward=True)
        p.add_rule("status", code=500, prob=0.08)
        p.add_rule("status", code=503, retry_after="1", prob=0.04)
        p.add_rule("status", code=429, retry_after="1", prob=0.04)
        p.add_rule("status", code=413, prob=0.04)
        p.add_rule("delay", seconds=2.0, prob=0.04)       # beyond timeout_ms
        p.add_rule("delay", seconds=0.5, prob=0.04)       # slow but in time
        p.add_rule("half", prob=0.05)
        p.add_rule("drop", prob=0.05)
        p.add_rule("drop", prob=0.05, forward=True)
        self.agent = Agent(cfg).start()
        path = os.path.join(self.src, "chaos.jsonl")
        with open(path, "a") as f:
            for i in range(0, total, 2000):
                f.write("".join(jline(j, '"text"' if j in conflicts else None)
                                for j in range(i, i + 2000)))
                f.flush()
                time.sleep(0.1)
        want = self.expected(cfg)
        want.update(parse_lp(f"m,k=seed x=0.5 {(BASE - 1) * 10**9}\n"))
        for j in conflicts:
            del want[("m", (("host", "test"), ("k", f"k{j % 7}")), (BASE + j) * 10**9)]
        self.assert_exact(want, 240 if SOAK else 90)
        # Each refused row named with file:line: `status` keeps them all, the
        # log names the first the server refused (it rate-limits per file).
        # The good rows can all be stored while a batch is still being cut
        # down to its refused row (a type conflict names no line), and which
        # row is refused first depends on the faults: a batch held up by a
        # delay beyond the timeout is answered after the batches behind it.
        def refused():
            st = run_perfship(["-c", cfg, "status"])[1]
            return all(f"{path}:{j + 1}: rejected by the server" in st for j in conflicts)
        wait_until(refused, 60, 0.5, "every refused row in `perfship status`")
        # A row cut down to a request of its own may meet an injected 413:
        # the server has taken far larger bodies, so the agent retries it
        # rather than refuse the row as too large (a CI run once refused
        # the good line 1236 so, after its batch was cut down to find 1235).
        logged = re.findall(re.escape(path) + r":(\d+): rejected by the server: field type "
                            r"conflict", self.agent.output())
        self.assertNotIn("refuses this line as too large", self.agent.output())
        self.assertTrue(logged, self.agent.output())
        self.assertLessEqual({int(n) - 1 for n in logged}, conflicts, logged)
        self.assertEqual(self.agent.stop(), 0)
        st = run_perfship(["-c", cfg, "status"])[1]
        for j in conflicts:
            self.assertIn(f"{path}:{j + 1}: rejected by the server", st)
        acts = {}
        for r in p.requests:
            if r.path == "/write":
                key = r.action if r.action != "status" else str(r.status)
                acts[key] = acts.get(key, 0) + 1
        faults = sum(v for k, v in acts.items() if k not in ("pass", "204"))
        print(f"\nrandom faults (seed {SEED}): {sum(acts.values())} write requests, "
              f"{faults} faulted: {dict(sorted(acts.items()))}; {total} lines, "
              f"{len(want)} points exact, {len(conflicts)} refused by the server "
              "and reported")
        for k in ("500", "503", "429", "413", "delay", "half", "drop"):
            self.assertIn(k, acts)


if __name__ == "__main__":
    unittest.main(verbosity=2)
