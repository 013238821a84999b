"""How a loadgen run ended, end to end: `run --once` over the bundled run
folders into a real influxd, and the status a user's dashboard and alerts
read back (docs/schema.md, "Run lifecycle and markers").

- daily-perf-ba4674aa5495 failed in stage 3: `exit_code` holds 2, and
  docker.log ends with the runner's error. Its `runs` end marker says
  status=failed, exitCode=2 and names that error line; its `loadgen_run`
  point says status "failed", exitCode 2, success false.
- manual-7102939 was interrupted (SIGTERM; `exit_code` 2, docker.log shows
  the runner's interruption): status "interrupted" in both places.
- daily-perf-9eb37164f6f7, beside them, succeeded: status "success",
  exitCode 0, so the two above are not the agent calling every run failed.

A run is not bad input: --once exits 0.
"""
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import DATA_DIR, InfluxTestCase, run_perfship, write_config  # noqa: E402

SYNTH = os.path.join(DATA_DIR, "loadgen", "synth")
FAILED = "daily-perf-ba4674aa5495"
INTERRUPTED = "manual-7102939"
SUCCEEDED = "daily-perf-9eb37164f6f7"


def last_error_line(folder):
    """The runner's last `Error: ...` line in docker.log, as written."""
    with open(os.path.join(SYNTH, folder, "docker.log")) as f:
        errors = [ln.strip() for ln in f if ln.lstrip().startswith("Error:")]
    return errors[-1] if errors else None


class RunStatus(InfluxTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        results = os.path.join(cls.tmp, "results")
        for run in (FAILED, INTERRUPTED, SUCCEEDED):
            shutil.copytree(os.path.join(SYNTH, run), os.path.join(results, run))
        cfg = write_config(os.path.join(cls.tmp, "p.cfg"), cls.influx.url,
                           os.path.join(cls.tmp, "state"), database="status",
                           sources=f'{{ path = "{results}"; format = "loadgen"; }}',
                           extra="selfstats = { interval_ms = 600000; };")
        cls.rc, _, cls.err = run_perfship(["-c", cfg, "run", "--once"], timeout=120)

    def markers(self, run):
        rows = self.influx.query("status", f"SELECT * FROM runs WHERE run = '{run}'")
        return {r["event"]: r for r in rows}

    def summary(self, run):
        rows = self.influx.query(
            "status", f"SELECT status, exitCode, success FROM loadgen_run WHERE run = '{run}'")
        self.assertEqual(len(rows), 1, rows)  # status and perf-finish merge into one point
        return rows[0]

    def test_once_exits_0(self):
        self.assertEqual(self.rc, 0, self.err[-3000:])

    def test_failed_run(self):
        error = last_error_line(FAILED)
        self.assertEqual(error, "Error: Loadgen vault task 25 failed")  # the fixture's
        with open(os.path.join(SYNTH, FAILED, "exit_code")) as f:
            self.assertEqual(f.read().strip(), "2")
        m = self.markers(FAILED)
        self.assertEqual(sorted(m), ["end", "start"], self.err[-3000:])
        end = m["end"]
        self.assertEqual((end["status"], end["exitCode"], end["source"], end["backfill"]),
                         ("failed", 2, "loadgen", True))
        self.assertIn(FAILED, end["text"])
        self.assertIn("failed", end["text"])
        self.assertIn(error, end["text"])
        self.assertEqual(m["start"]["status"], "running")
        s = self.summary(FAILED)
        self.assertEqual((s["status"], s["exitCode"], s["success"]), ("failed", 2, False))

    def test_interrupted_run(self):
        self.assertIn("Interrupted", last_error_line(INTERRUPTED))
        m = self.markers(INTERRUPTED)
        self.assertEqual(sorted(m), ["end", "start"], self.err[-3000:])
        end = m["end"]
        self.assertEqual((end["status"], end["exitCode"], end["backfill"]),
                         ("interrupted", 2, True))
        self.assertIn(INTERRUPTED, end["text"])
        self.assertIn("interrupted", end["text"])
        s = self.summary(INTERRUPTED)
        self.assertEqual((s["status"], s["exitCode"], s["success"]), ("interrupted", 2, False))

    def test_successful_run_beside_them(self):
        m = self.markers(SUCCEEDED)
        self.assertEqual(sorted(m), ["end", "start"], self.err[-3000:])
        self.assertEqual((m["end"]["status"], m["end"]["exitCode"]), ("success", 0))
        s = self.summary(SUCCEEDED)
        self.assertEqual((s["status"], s["exitCode"], s["success"]), ("success", 0, True))

    def test_one_end_marker_per_run_with_its_own_status(self):
        rows = self.influx.query("status", "SELECT * FROM runs WHERE event = 'end'")
        self.assertEqual(sorted((r["run"], r["status"]) for r in rows),
                         sorted([(FAILED, "failed"), (INTERRUPTED, "interrupted"),
                                 (SUCCEEDED, "success")]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
