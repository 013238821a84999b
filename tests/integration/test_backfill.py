"""Backfill of several loadgen runs under tight back-pressure: run --once
must store exactly the points `convert -f loadgen` makes of the same folder.

The batcher is kept tiny so that every run's perf-finish record (the big
last line) is stopped by back-pressure many times: reading waits while the
batcher is full, and a paused file resumes before the other queued files
(so a backfill holds one big line at a time). Nothing may be lost or
doubled by that.

A DSS results file found at start is a backfill, one that appears while the
agent watches is not (DssBackfillFlag)."""
import os
import shutil
import subprocess
import sys
import unittest

import harness
from harness import or_empty, wait_until, write_config


class Backfill(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = harness.scratch_dir(cls, "perfship-backfill-")
        cls.runs = os.path.join(cls.tmp, "results")
        subprocess.run([sys.executable, "-m", "bench.gen_month",
                        "--out", cls.runs, "--days", "3", "--stage-minutes", "5"],
                       cwd=harness.SOURCE_DIR, check=True, stdout=subprocess.DEVNULL)
        cls.influx = harness.InfluxServer().start()

    @classmethod
    def tearDownClass(cls):
        cls.influx.close()

    def counts(self, db):
        out = {}
        for s in self.influx.series(db, "SHOW MEASUREMENTS"):
            for (m,) in s["values"]:
                for row in self.influx.series(db, f'SELECT count(*) FROM "{m}"'):
                    out[m] = dict(zip(row["columns"][1:], row["values"][0][1:]))
        return out

    def test_paused_runs_store_exactly_what_convert_makes(self):
        rc, lp, err = harness.run_perfship(["convert", "-f", "loadgen", self.runs])
        self.assertEqual(rc, 0, err)
        self.influx.create_db("expected")
        lines = lp.encode().splitlines(True)
        for i in range(0, len(lines), 5000):
            st, body = self.influx.write("expected", b"".join(lines[i:i + 5000]))
            self.assertEqual(st, 204, body)

        state = os.path.join(self.tmp, "state")
        os.makedirs(state)
        cfg = harness.write_config(
            os.path.join(state, "perfship.cfg"), self.influx.url, state,
            sources=f'{{ path = "{self.runs}"; format = "loadgen"; }}', database="agent",
            extra="batch = { max_points = 500; max_bytes = 32768; max_pending_bytes = 65536; };")
        agent = harness.Agent(cfg, args=["--once"]).start()
        self.assertEqual(agent.wait(120), 0, agent.output()[-2000:])

        expected, got = self.counts("expected"), self.counts("agent")
        self.assertGreater(len(expected), 3)
        for m, fields in expected.items():
            self.assertEqual(got.get(m), fields, f"measurement {m}")



class DssBackfillFlag(harness.AgentTestCase):
    """A DSS results file found at start is a backfill; one that appears
    while the agent watches is live (docs/design-notes.md, "DSS bench
    markers follow the data contract's backfill rule per file")."""

    def test_dss_backfill_only_for_results_found_at_start(self):
        synth = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                             "dss", "synth")
        old = os.path.join(self.data, "old")
        os.makedirs(old)
        shutil.copy(os.path.join(synth, "baseline_single", "results.json"), old)
        cfg = os.path.join(self.dir, "perfship.cfg")
        write_config(cfg, self.influx.url, os.path.join(self.dir, "state"),
                     '{ path = "%s"; format = "dss-bench"; }' % self.data,
                     database=self.db, influx_extra="create_database = true;",
                     extra="watch = { settle_ms = 200; rescan_interval_ms = 500; };")

        def markers():
            rows = or_empty(self.influx.query, self.db, "SELECT * FROM runs")
            return {r["run"]: r["backfill"] for r in rows}

        a = self.agent(cfg)
        wait_until(lambda: "old" in markers(), 15, what="the old run's marker")
        new = os.path.join(self.data, "new")
        os.makedirs(new)
        shutil.copy(os.path.join(synth, "datastores_with_errors", "results.json"), new)
        wait_until(lambda: "new" in markers(), 15, what="the new run's marker")
        # Found at start: ended before perfship saw it. Appeared while
        # watched: a live run, which alerts may act on.
        self.assertEqual(markers(), {"old": True, "new": False})
        self.assertEqual(a.stop(), 0)

if __name__ == "__main__":
    unittest.main()
