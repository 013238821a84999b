"""The agent keeps the report page current (report = { path = ...; }):
after a run ends, at most every min_interval_s, atomically, readable by a
web server whatever the service's umask, and never by holding up the
shipping of points (the page is made on the threadpool). Real influxd,
real agent, a fault proxy in front of the server for the slow case.
"""
import os
import shutil
import stat
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from faultproxy import FaultProxy  # noqa: E402

CHART_JS = "/usr/share/javascript/chart.js/chart.min.js"
SYNTH = os.path.join(harness.DATA_DIR, "loadgen", "synth")
RUN_A = "daily-perf-9eb37164f6f7"
RUN_B = "daily-perf-1cb7c2d80874"


def page_text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def umask_077():
    os.umask(0o077)  # the unit's UMask=


@unittest.skipUnless(os.path.exists(CHART_JS), "needs libjs-chart.js (scripts/deps)")
class ReportAgent(harness.InfluxTestCase):
    tmp_prefix = "perfship-report-agent-"

    def setUp(self):
        self.dir = os.path.join(self.tmp, self.id().rsplit(".", 1)[1])
        os.makedirs(os.path.join(self.dir, "results"))
        self.page = os.path.join(self.dir, "www", "report", "index.html")

    def config(self, url=None, min_interval_s=0, extra_influx=""):
        # since_days reaches back to the samples of 2022
        return harness.write_config(
            os.path.join(self.dir, "perfship.cfg"), url or self.influx.url,
            os.path.join(self.dir, "state"), database=self.id().rsplit(".", 1)[1].lower(),
            sources=f'{{ path = "{self.dir}/results"; format = "loadgen"; }}',
            influx_extra=extra_influx,
            extra=f'report = {{ path = "{self.page}"; since_days = 3660; '
                  f'min_interval_s = {min_interval_s}; }};\n'
                  'watch = { rescan_interval_ms = 500; settle_ms = 200; };')

    def agent(self, cfg, *args):
        a = harness.Agent(cfg, args, preexec=umask_077).start()
        self.addCleanup(a.stop)
        return a

    def add_run(self, name):
        shutil.copytree(os.path.join(SYNTH, name), os.path.join(self.dir, "results", name))

    def test_rewritten_after_a_run_ends_readable_by_a_web_server(self):
        a = self.agent(self.config())
        harness.wait_until(lambda: "No loadgen run in this range." in page_text(self.page),
                           timeout=30, what="the first page, written at start")
        first_ino = os.stat(self.page).st_ino
        self.add_run(RUN_A)
        harness.wait_until(lambda: RUN_A in page_text(self.page), timeout=60,
                           what="a page with the run that ended")
        text = page_text(self.page)
        self.assertIn('<tr class="row-success" data-status="success"><td class="name run"><bdi>'
                      + RUN_A, text)
        # replaced by a rename, never rewritten in place
        self.assertNotEqual(os.stat(self.page).st_ino, first_ino)
        # the service's umask 077 applies to its state, not to the page
        self.assertEqual(stat.S_IMODE(os.stat(self.page).st_mode), 0o644)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(self.page)).st_mode), 0o755)
        self.assertEqual(os.listdir(os.path.dirname(self.page)), ["index.html"])
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(self.dir, "state", "state.json"))
                                      .st_mode), 0o600)
        self.assertIn("report: wrote " + self.page, a.output())

    def test_at_most_every_min_interval(self):
        a = self.agent(self.config(min_interval_s=20))
        harness.wait_until(lambda: os.path.exists(self.page), timeout=30, what="the first page")
        t_first = time.monotonic()
        self.add_run(RUN_A)
        db = "test_at_most_every_min_interval"
        harness.wait_until(lambda: self.influx.query(db, "SELECT * FROM runs WHERE event = 'end'"),
                           timeout=15, what="the run's end marker")
        # the run has ended, but the page waits for the interval
        time.sleep(max(0.0, 12 - (time.monotonic() - t_first)))
        self.assertNotIn(RUN_A, page_text(self.page), "rewritten before min_interval_s")
        self.add_run(RUN_B)
        harness.wait_until(lambda: RUN_A in page_text(self.page) and RUN_B in page_text(self.page),
                           timeout=40, what="one page with both runs after the interval")
        self.assertGreaterEqual(time.monotonic() - t_first, 17)
        # both runs' events made one page, not two
        self.assertEqual(a.output().count("report: wrote"), 2, a.output()[-3000:])

    def test_a_slow_query_never_delays_shipping(self):
        with FaultProxy(upstream_port=self.influx.port) as proxy:
            # the first page's first query hangs for 20 s; writes pass
            proxy.add_rule("delay", seconds=20, path="/query", count=1)
            db = "test_a_slow_query_never_delays_shipping"
            self.influx.create_db(db)
            a = self.agent(self.config(url=proxy.url,
                                       extra_influx="create_database = false; timeout_ms = 30000;"))
            harness.wait_until(lambda: any(r.path.startswith("/query") for r in proxy.requests),
                               timeout=30, what="the first page's query")
            t0 = time.monotonic()
            self.add_run(RUN_A)
            harness.wait_until(lambda: self.influx.count(db, "loadgen_block") > 0, timeout=10,
                               what="points shipped while the page's query hangs")
            self.assertLess(time.monotonic() - t0, 8)
            self.assertFalse(os.path.exists(self.page), "the page came before the slow query")
            harness.wait_until(lambda: RUN_A in page_text(self.page), timeout=90,
                               what="the page once the queries answer")
            self.assertEqual(a.stop(), 0)

    def test_once_writes_the_page_at_the_end(self):
        self.add_run(RUN_A)
        self.add_run("daily-perf-ba4674aa5495")
        cfg = self.config(min_interval_s=3600)
        a = harness.Agent(cfg, ["--once"], preexec=umask_077).start()
        self.assertEqual(a.wait(120), 0, a.output()[-3000:])
        text = page_text(self.page)
        self.assertIn(RUN_A, text)
        self.assertIn('data-status="failed"><td class="name run"><bdi>daily-perf-ba4674aa5495',
                      text)

    def test_a_page_that_cannot_be_written_is_reported_not_fatal(self):
        blocker = os.path.join(self.dir, "www")
        with open(blocker, "w") as f:
            f.write("not a folder")
        cfg = self.config()
        a = self.agent(cfg)
        harness.wait_until(lambda: "was not rewritten" in a.output(), timeout=30,
                           what="the warning")
        self.assertIn(self.page, a.output())
        # shipping goes on
        self.add_run(RUN_A)
        db = "test_a_page_that_cannot_be_written_is_reported_not_fatal"
        harness.wait_until(lambda: self.influx.count(db, "loadgen_run") > 0, timeout=30,
                           what="the run shipped")
        self.assertEqual(a.stop(), 0)
        rc, status, _ = harness.run_perfship(["-c", cfg, "status"])
        self.assertIn("report: " + self.page, status)


if __name__ == "__main__":
    unittest.main()
