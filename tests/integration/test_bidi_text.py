"""No string from the data reorders what is shown (docs/report.md, "Safe to
open, whatever the data holds").

A run named with a right-to-left override, its error text and the agent's
host likewise (the "Trojan Source" trick: `daily-perf-\\u202edeliaf-ton`
renders as "daily-perf-not-failed"), written into a real InfluxDB by
`perfship mark` and by hand, then read back the ways a person reads them:
the report page in Debian's chromium (tests/node/report-check.mjs), the
terminal (`perfship verdicts`, `perfship mark`), and the log. What a user
would check: the controls are shown as `\\u202e`, never obeyed; every data
string in the page is isolated (<bdi>, unicode-bidi: isolate), so a
right-to-left name still displays as itself; the browser's find-in-page
for the name leads to its row.
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from reportdata import lp_line  # noqa: E402
from test_report import ARTIFACTS, CHART_JS, CHROMIUM, Receiver, open_in_browser  # noqa: E402

RLO, PDF = "\u202e", "\u202c"
RUN = f"daily-perf-{RLO}deliaf-ton"
TEXT = f"Error: {RLO}retfa deliaf-ton"
HOST = f"{RLO}exe.gnp-evil{PDF}"
HEBREW = "\u05e9\u05dc\u05d5\u05dd-run"   # right-to-left letters: not a control
CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def shown(s):
    return "".join(f"\\u{ord(c):04x}" if c in CONTROLS else c for c in s)


@unittest.skipUnless(os.path.exists(CHROMIUM) and os.path.exists(CHART_JS),
                     "needs Debian's chromium and libjs-chart.js (scripts/deps --test)")
class BidiText(harness.InfluxTestCase):
    tmp_prefix = "perfship-bidi-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.influx.create_db("perf")
        cls.cfg = harness.write_config(os.path.join(cls.tmp, "perfship.cfg"), cls.influx.url,
                                       os.path.join(cls.tmp, "state"))
        with open(cls.cfg, encoding="utf-8") as f:
            text = f.read().replace('host = "test"', f'host = "{HOST}"')
        with open(cls.cfg, "w", encoding="utf-8") as f:
            f.write(text)
        now = int(time.time())
        t = (now - 3600) * 10**9
        # a marker posted by hand says the name it posted
        rc, out, err = harness.run_perfship(["-c", cls.cfg, "mark", "end", "--run", RUN,
                                             "--source", "by-hand", "--status", "failed"])
        if rc != 0:
            raise AssertionError(f"perfship mark: exit {rc}: {err}")
        cls.marked = out + err
        tags = {"source": "loadgen", "run": RUN, "revision": "abcdef1"}
        heb = {"source": "loadgen", "run": HEBREW, "revision": "abcdef2"}
        t2 = t - 86400 * 10**9
        lines = [
            lp_line("runs", dict(tags, event="start", status="running"),
                    {"text": f"{RUN} started", "backfill": False}, t),
            lp_line("runs", dict(tags, event="end", status="failed"),
                    {"text": TEXT, "exitCode": 1, "duration": 60.0, "backfill": False},
                    t + 60 * 10**9),
            lp_line("runs", dict(heb, event="start", status="running"),
                    {"text": f"{HEBREW} started", "backfill": False}, t2),
            lp_line("runs", dict(heb, event="end", status="success"),
                    {"text": "ok", "exitCode": 0, "duration": 60.0, "backfill": False},
                    t2 + 60 * 10**9),
            lp_line("loadgen_run", {"run": HEBREW, "revision": "abcdef2",
                                    "test_type": "daily-perf"},
                    {"status": "success", "success": True, "exitCode": 0}, t2),
            lp_line("loadgen_run", {"run": RUN, "revision": "abcdef1", "test_type": "daily-perf"},
                    {"status": "failed", "success": False, "exitCode": 1}, t),
            lp_line("perfship_verdict", {"source": "loadgen", "series": "daily-perf",
                                         "metric": "cycleAvgDuration", "run": RUN,
                                         "host": HOST},
                    {"verdict": "regression", "value": 27.8, "baseline": 24.3,
                     "change_pct": 14.4, "change_run": RUN, "baseline_runs": 6,
                     "method": "edivisive", "p_value": 0.004, "backfill": False}, t),
            lp_line("perfship", {"host": HOST}, {"points_written": 1, "uptime_s": 5.0},
                    (now - 60) * 10**9),
        ]
        cls.influx.write("perf", "\n".join(lines) + "\n")
        os.makedirs(ARTIFACTS, exist_ok=True)
        cls.page = os.path.join(ARTIFACTS, "report-bidi.html")
        rc, out, cls.report_err = harness.run_perfship(
            ["-c", cls.cfg, "report", "-o", cls.page, "--since", "2d"])
        if rc != 0:
            raise AssertionError(f"perfship report: exit {rc}: {cls.report_err}")
        cls.receiver = Receiver()
        cls.addClassCleanup(cls.receiver.close)
        os.environ["PERFSHIP_FIND"] = "deliaf-ton"
        try:
            cls.seen = open_in_browser(cls.page, os.path.join(ARTIFACTS, "report-bidi.png"),
                                       cls.receiver.url)
        finally:
            del os.environ["PERFSHIP_FIND"]

    def test_page_shows_controls_never_renders_them(self):
        with open(self.page, encoding="utf-8") as f:
            html = f.read()
        for c in CONTROLS:
            self.assertNotIn(c, html)
        b = self.seen["bidi"]
        self.assertEqual(b["rawControls"], 0)
        runs = {r["cells"][0]: r for r in self.seen["tables"]["runs"]}
        self.assertIn(shown(RUN), runs)
        row = runs[shown(RUN)]["cells"]   # run, host, revision, test type, start, duration, status
        self.assertIn(shown(TEXT), row[6])
        self.assertIn(HEBREW, runs)   # right-to-left letters are shown as they are
        head = " ".join(h["text"] for h in self.seen["texts"]["headlines"])
        self.assertIn(shown(RUN), head)
        self.assertNotIn("not-failed", head)
        self.assertIn(shown(HOST), self.seen["texts"]["health"])

    def test_every_data_string_is_isolated(self):
        b = self.seen["bidi"]
        self.assertGreater(b["dataStrings"], 3)
        self.assertEqual(b["notIsolated"], [])

    def test_find_in_page_finds_the_row(self):
        b = self.seen["bidi"]
        self.assertTrue(b["found"])
        self.assertIsNotNone(b["foundRow"])
        self.assertEqual(b["foundRow"][0], shown(RUN))

    def test_terminal_and_log(self):
        # perfship mark said the name as data
        self.assertIn(f"run={shown(RUN)} status=failed", self.marked)
        rc, out, err = harness.run_perfship(["-c", self.cfg, "verdicts", "--since", "2d", "--all"])
        self.assertEqual(rc, 0, err)
        for c in CONTROLS:
            self.assertNotIn(c, out + err)
        self.assertIn(shown(RUN), out)
        # the agent's log: a run folder with that name, read by `run --once`
        res = os.path.join(self.tmp, "results")
        os.makedirs(os.path.join(res, RUN))
        with open(os.path.join(res, RUN, "perf.jsonl"), "w") as f:
            f.write("not json\n")
        cfg = harness.write_config(
            os.path.join(self.tmp, "run.cfg"), self.influx.url, os.path.join(self.tmp, "st2"),
            sources=f'{{ path = "{res}"; format = "loadgen"; }}')
        rc, out, err = harness.run_perfship(["-c", cfg, "run", "--once"], timeout=120)
        self.assertIn(shown(RUN), err)
        for c in CONTROLS:
            self.assertNotIn(c, err)


if __name__ == "__main__":
    unittest.main()
