"""SIGHUP during `run --once` (it used to crash the agent).

docs/run.md: `run --once` logs the signal and otherwise ignores it, keeps
the configuration it started with and finishes with the same points. A log
rotation may send HUP at any moment of a backfill, so the signal is sent
at each of these, one run per moment:

- start-up: as soon as the agent has logged that it started;
- reading: when the first data write reaches the server (reading has
  begun; the small max_pending_bytes holds the rest of it back);
- back-pressure: while a write is held by the proxy with max_pending_bytes
  small, so batches are in flight and reading waits (three HUPs in a row);
- final drain: while the closing self-metrics point, sent once everything
  else was acknowledged, is held.

over two backfills: the bundled loadgen samples (success, failure,
interruption, a run in progress) and a generated history of daily runs.
Every run must exit 0 and store exactly the point set of the same backfill
run without a HUP. The fault proxy only delays requests (it holds one for
up to half a second), so each moment lasts long enough to be hit.
"""
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultproxy import FaultProxy  # noqa: E402
from harness import (DATA_DIR, SOURCE_DIR, Agent, InfluxTestCase, wait_until,  # noqa: E402
                     write_config)
from pointset import db_points, diff  # noqa: E402

# Times from the agent's clock (docs/schema.md): a new value every run.
AGENT_CLOCK = {"perfship", "perfship_alert"}
HOLD = 0.5


def data_write(r):
    return r.path == "/write" and b"loadgen_" in r.body


class OnceSighup(InfluxTestCase):
    tmp_prefix = "perfship-hup-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.samples = os.path.join(cls.tmp, "samples")
        shutil.copytree(os.path.join(DATA_DIR, "loadgen", "synth"), cls.samples,
                        ignore=shutil.ignore_patterns("*.csv"))
        # The run captured in progress stays "running" (not stalled) for
        # every run of this test, whenever the fixtures were checked out.
        live = os.path.join(cls.samples, "daily-perf-31400797d904")
        for name in os.listdir(live):
            os.utime(os.path.join(live, name))
        cls.history = os.path.join(cls.tmp, "history")
        subprocess.run([sys.executable, "-m", "bench.gen_month",
                        "--out", cls.history, "--days", "4", "--stage-minutes", "12"],
                       cwd=SOURCE_DIR, check=True, stdout=subprocess.DEVNULL)
        cls.proxy = FaultProxy(cls.influx.port, seed=1).start()
        cls.addClassCleanup(cls.proxy.stop)
        cls.runs = 0
        cls.reference = {}

    def backfill(self, results, moment=None):
        """One `run --once` over `results` into a new database, with a HUP
        at `moment`; returns (database, exit code, log)."""
        OnceSighup.runs += 1
        n = OnceSighup.runs
        db = f"hup{n}"
        work = os.path.join(self.tmp, f"run{n}")
        os.mkdir(work)
        cfg = write_config(
            os.path.join(work, "p.cfg"), self.proxy.url, os.path.join(work, "state"),
            sources=f'{{ path = "{results}"; format = "loadgen"; }}', database=db,
            influx_extra="create_database = true;",
            extra="batch = { max_points = 500; max_bytes = 32768; max_pending_bytes = 65536; };\n")
        p = self.proxy
        p.clear_rules()
        p.clear_requests()
        if moment == "start-up":
            p.add_rule("delay", seconds=HOLD, path="/write", count=1)
        elif moment == "reading":
            p.add_rule("delay", seconds=HOLD, path="/write", contains=b"loadgen_", count=1)
        elif moment == "back-pressure":
            p.add_rule("pass", path="/write", contains=b"loadgen_", count=5)
            p.add_rule("delay", seconds=HOLD, path="/write", contains=b"loadgen_", count=1)
        elif moment == "final drain":
            p.add_rule("delay", seconds=HOLD, path="/write", contains=b"perfship,")
        agent = Agent(cfg, args=["--once"], log_path=os.path.join(work, "agent.log")).start()
        try:
            hups = self.hup_at(agent, moment)
            rc = agent.wait(120)
        finally:
            agent.kill()
        return db, rc, agent.output(), hups

    def hup_at(self, agent, moment):
        """Waits for `moment`, then sends HUP while the agent runs."""
        if moment is None:
            return 0
        p = self.proxy
        if moment == "start-up":
            wait_until(lambda: "starting" in agent.output(), 30, interval=0.005,
                       what="the agent's start-up line")
        elif moment == "reading":
            p.wait_for(lambda rs: any(data_write(r) for r in rs), 30, what="the first data write")
        elif moment == "back-pressure":
            p.wait_for(lambda rs: any(data_write(r) and r.action == "delay" for r in rs), 30,
                       what="a data write held")
        elif moment == "final drain":
            def draining(rs):
                held = [r for r in rs if r.action == "delay" and r.done is None]
                others = [r for r in rs if r.path == "/write" and r.action != "delay"]
                return held and others and all(r.done for r in others)
            p.wait_for(draining, 60, what="the closing self-metrics point held, "
                                          "everything else answered")
        self.assertIsNone(agent.proc.poll(), f"{moment}: the agent ended before the HUP")
        sent = 0
        for _ in range(3 if moment == "back-pressure" else 1):
            if agent.proc.poll() is not None:
                break  # ended by the previous one: the exit code tells
            agent.proc.send_signal(signal.SIGHUP)
            sent += 1
            time.sleep(0.05)
        return sent

    def stored(self, db):
        names = [r["name"] for r in self.influx.query(db, "SHOW MEASUREMENTS")]
        return db_points(self.influx, db, [m for m in names if m not in AGENT_CLOCK])

    def check(self, results):
        db, rc, log, _ = self.backfill(results)
        self.assertEqual(rc, 0, log[-3000:])
        want = self.stored(db)
        self.assertIn("loadgen_run", {k[0] for k in want})
        done = []
        for moment in ("start-up", "reading", "back-pressure", "final drain"):
            with self.subTest(moment=moment):
                db, rc, log, hups = self.backfill(results, moment)
                self.assertEqual(rc, 0, f"HUP at {moment}: exit {rc}\n{log[-3000:]}")
                problems = diff(want, self.stored(db))
                self.assertEqual(problems, [], f"HUP at {moment}:\n" + "\n".join(problems))
                self.assertIn("SIGHUP", log, f"HUP at {moment}: the agent did not log it")
                done.append(f"{moment} ({hups} HUP)")
        print(f"\n{os.path.basename(results)}: {len(want)} points; exit 0 and the same "
              f"points with a HUP at: {', '.join(done)}")

    def test_bundled_samples(self):
        self.check(self.samples)

    def test_generated_history(self):
        self.check(self.history)


if __name__ == "__main__":
    unittest.main(verbosity=2)
