"""`perfship report` end to end: a real influxd holding the bundled samples,
a generated nightly history with a regression and hand-written verdicts
(tests/integration/reportdata.py); the page opened in Debian's chromium,
driven by playwright-core (tests/node/report-check.mjs), and what the
browser shows compared with what InfluxDB holds.

The full-page screenshot is kept as a test artifact:
<build>/test-artifacts/report.png (and the page beside it).
"""
import http.server
import json
import math
import os
import shutil
import socketserver
import stat
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import nodetools  # noqa: E402
import reportdata  # noqa: E402
from reportdata import HOSTILE_ARM, HOSTILE_DSS, HOSTILE_ERROR, HOSTILE_RUN, HOSTILE_TEST_TYPE  # noqa: E402

CHROMIUM = os.environ.get("PERFSHIP_CHROMIUM", "/usr/bin/chromium")
CHART_JS = "/usr/share/javascript/chart.js/chart.min.js"
ARTIFACTS = os.path.join(os.path.dirname(os.path.abspath(harness.PERFSHIP_BIN)), "test-artifacts")
METRICS = ["cycleAvgDuration", "cycleSuccessRate", "live_avgSwingsetTime",
           "live_avgBlockDuration", "chainBootstrapDuration", "walletDeployDuration",
           "loadgenDeployDuration"]
SINCE = "3650d"  # the bundled samples are from 2022


class Receiver:
    """A real HTTP server on loopback that records every request: the page
    must never reach it, whatever it tries."""

    def __init__(self):
        self.hits = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                owner.hits.append(self.path)
                self.send_response(200)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(b"GIF89a")

            def log_message(self, *a):
                pass

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def open_in_browser(page, shot, probe_url):
    node_modules = nodetools.ensure_node_modules()
    script = os.path.join(os.path.dirname(node_modules), "report-check.mjs")
    p = subprocess.run(["node", script, page, shot, probe_url], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PERFSHIP_CHROMIUM=CHROMIUM))
    if p.returncode != 0:
        raise AssertionError(f"report-check.mjs failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout)


def close(a, b):
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@unittest.skipUnless(os.path.exists(CHROMIUM) and os.path.exists(CHART_JS),
                     "needs Debian's chromium and libjs-chart.js (scripts/deps --test)")
class ReportInBrowser(harness.InfluxTestCase):
    tmp_prefix = "perfship-report-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.fx = reportdata.ReportData(cls.influx, cls.tmp).build()
        cls.cfg = harness.write_config(os.path.join(cls.tmp, "perfship.cfg"), cls.influx.url,
                                       os.path.join(cls.tmp, "state"))
        os.makedirs(ARTIFACTS, exist_ok=True)
        cls.page = os.path.join(ARTIFACTS, "report.html")
        cls.shot = os.path.join(ARTIFACTS, "report.png")
        rc, out, err = harness.run_perfship(["-c", cls.cfg, "report", "-o", cls.page,
                                             "--since", SINCE])
        if rc != 0:
            raise AssertionError(f"perfship report: exit {rc}: {err}")
        cls.receiver = Receiver()
        cls.addClassCleanup(cls.receiver.close)
        cls.seen = open_in_browser(cls.page, cls.shot, cls.receiver.url)

    def q(self, text):
        return self.influx.query("perf", text)

    # -- what the browser did ----------------------------------------------
    def test_no_console_error_and_no_request(self):
        load = self.seen["phases"]["load"]
        self.assertEqual([c for c in load["console"] if c["type"] in ("error", "warning")], [])
        self.assertEqual(load["pageErrors"], [])
        self.assertEqual(load["failed"], [])
        # the page itself is the one thing loaded
        self.assertEqual(load["requests"], ["file://" + self.page])
        self.assertEqual(self.seen["texts"]["violations"], [])

    def test_csp_forbids_requests_and_injected_scripts(self):
        csp = self.seen["texts"]["csp"]
        self.assertIn("default-src 'none'", csp)
        self.assertNotIn("unsafe-inline", csp)
        self.assertRegex(csp, r"script-src 'sha256-[A-Za-z0-9+/]{43}=' 'sha256-[A-Za-z0-9+/]{43}=';")
        probe = self.seen["probe"]
        self.assertEqual((probe["fetch"], probe["image"], probe["inlineScript"], probe["handler"]),
                         ("blocked", "blocked", "blocked", "blocked"))
        directives = {v["directive"] for v in probe["violations"]}
        self.assertTrue({"connect-src", "img-src", "script-src-elem", "script-src-attr"} <= directives,
                        probe["violations"])
        self.assertEqual(self.receiver.hits, [], "the page reached the network")

    def test_hostile_names_are_text_and_no_script_runs(self):
        t = self.seen["texts"]
        self.assertEqual(self.seen["dialogs"], [])
        self.assertIsNone(t["pwned"])
        self.assertEqual(t["images"], 0, "data became an <img> element")
        self.assertEqual(t["scripts"], 3, "data became a <script> element")
        runs = {r["cells"][0]: r for r in self.seen["tables"]["runs"]}
        self.assertIn(HOSTILE_RUN, runs)
        self.assertIn(self.fx.hostile_folder, runs)
        self.assertEqual(runs[self.fx.hostile_folder]["cells"][3], HOSTILE_TEST_TYPE)
        failed_nightly = self.fx.nightly[4]
        self.assertIn(HOSTILE_ERROR, runs[failed_nightly]["cells"][6])
        self.assertIn(HOSTILE_TEST_TYPE + " (1 successful run)", t["trendHeadings"])
        dss = {r["cells"][0]: r for r in self.seen["tables"]["dss"]}
        self.assertIn(HOSTILE_DSS, dss)
        self.assertIn(HOSTILE_ARM, dss[HOSTILE_DSS]["cells"][5])
        # the hostile run reached the charts' data too, as a string
        bad = [p["run"] for c in self.seen["charts"] if c["kind"] == "trend"
               for p in c["datasets"][1]["data"]]
        self.assertIn(HOSTILE_RUN, bad)

    # -- what a reader sees ----------------------------------------------------
    def test_every_run_appears_with_its_status(self):
        runs = {r["cells"][0]: r for r in self.seen["tables"]["runs"]}
        self.assertEqual(set(runs), set(self.fx.statuses))
        for name, status in self.fx.statuses.items():
            with self.subTest(run=name):
                self.assertEqual(runs[name]["status"], status)
                self.assertTrue(runs[name]["badgeText"] == status, runs[name])
        # newest first
        starts = [r["cells"][4] for r in self.seen["tables"]["runs"]]
        self.assertEqual(starts, sorted(starts, reverse=True))

    def test_failed_run_is_marked_failed_in_word_and_colour(self):
        runs = {r["cells"][0]: r for r in self.seen["tables"]["runs"]}
        for name in ("daily-perf-ba4674aa5495", self.fx.nightly[4]):
            self.assertEqual(runs[name]["badgeText"], "failed")
            self.assertIn("st-failed", runs[name]["badgeClass"])
            self.assertIn("Error:", runs[name]["cells"][6])
        self.assertEqual(runs["daily-perf-31400797d904"]["badgeText"], "stalled")
        self.assertEqual(runs["manual-7102939"]["badgeText"], "interrupted")

    def test_headline_names_the_newest_run_and_its_regressions(self):
        heads = {h["id"]: h for h in self.seen["texts"]["headlines"]}
        h = heads["headline-loadgen"]
        self.assertIn(self.fx.newest_run, h["text"])
        self.assertIn("h-bad", h["cls"])
        self.assertIn("regression", h["text"].lower())
        for label in ("Cycle avg duration", "Live swingset time"):
            self.assertIn(label, h["text"])
        d = heads["headline-dss"]
        self.assertIn("latency_compare_images", d["text"])
        self.assertIn("local/dss:pr-1523", d["text"])

    def test_agent_health_line(self):
        health = self.seen["texts"]["health"]
        self.assertIn("48\u2009211 points written", health)
        self.assertIn("3 rejected lines", health)
        self.assertIn("last error: none", health)

    def test_stage_section_and_drift_verdicts(self):
        self.assertEqual(self.seen["texts"]["stageRun"], self.fx.newest_run)
        drift = {r["cells"][0]: r["cells"][5] for r in self.seen["tables"]["drift"]}
        want = {s: {"regression": "\u25b2 regression", "improvement": "\u25c6 improvement",
                    "none": "no change"}[v] for s, v in self.fx.drift.items()}
        self.assertEqual(drift, want)

    # -- the charts ---------------------------------------------------------------
    def charts(self, kind):
        return [c for c in self.seen["charts"] if c["kind"] == kind]

    def test_every_chart_is_drawn(self):
        self.assertGreater(len(self.seen["charts"]), 20)
        for c in self.seen["charts"]:
            with self.subTest(chart=c["caption"], under=c["group"], file=c["file"]):
                self.assertEqual(c["drawn"], "1")
                self.assertGreater(c["painted"], 1000, "a blank canvas")
                for ds, pixels in zip(c["datasets"], c["colourPixels"]):
                    values = [p["y"] if isinstance(p, dict) else p for p in ds["data"]]
                    if pixels is not None and any(v not in (None, 0) for v in values):
                        self.assertGreater(pixels, 20, f"{ds['label']}: no pixel in its colour")

    def test_trend_charts_hold_what_influxdb_holds(self):
        trends = self.charts("trend")
        series = {}
        for c in trends:
            series.setdefault(c["group"].rsplit(" (", 1)[0], []).append(c)
        self.assertEqual(set(series), {"nightly", "daily-perf", HOSTILE_TEST_TYPE})
        for test_type, charts in series.items():
            self.assertEqual(len(charts), len(METRICS))
            rows = self.influx.query("perf", "SELECT * FROM loadgen_run WHERE test_type = "
                                     f"'{test_type.replace(chr(39), chr(92) + chr(39))}' "
                                     "AND status = 'success'")
            for c in charts:
                metric = METRICS[int(c["metric"])]
                with self.subTest(test_type=test_type, metric=metric):
                    want = [(r["time"] / 1e6, r[metric]) for r in rows if r.get(metric) is not None]
                    got = [(p["x"], p["y"]) for p in c["datasets"][0]["data"]]
                    self.assertEqual(len(got), len(want))
                    for (gx, gy), (wx, wy) in zip(got, want):
                        self.assertLess(abs(gx - wx), 0.001)
                        self.assertEqual(gy, wy)
        # the regression is marked on the newest nightly point, and only there
        nightly = {METRICS[int(c["metric"])]: c for c in series["nightly"]}
        for metric in METRICS:
            marks = [p["run"] for p in nightly[metric]["datasets"][0]["data"] if p["v"] == 1]
            want = [self.fx.newest_run] if metric in self.fx.regressions[self.fx.newest_run] else []
            self.assertEqual(marks, want, metric)
        # failed runs of the series sit on the time axis
        bad = {p["run"]: p["status"] for p in nightly["cycleAvgDuration"]["datasets"][1]["data"]}
        self.assertEqual(bad, {self.fx.nightly[4]: "failed", HOSTILE_RUN: "failed"})

    def test_stage_charts_hold_what_influxdb_holds(self):
        run = self.fx.newest_run
        cycles = {(r["stage"], r["task"]): r for r in self.influx.query(
            "perf", f"SELECT * FROM loadgen_stage_cycles WHERE run = '{run}' GROUP BY stage, task")}
        blocks = {r["stage"]: r for r in self.influx.query(
            "perf", f"SELECT * FROM loadgen_stage_blocks WHERE run = '{run}' AND "
                    "summary = 'onlyLive' GROUP BY stage")}
        for kind, field in (("stage-cycles", "cycleCount"), ("stage-duration", "avgDuration")):
            (c,) = self.charts(kind)
            stages = [label.split()[1] for label in c["labels"]]
            self.assertEqual(stages, sorted({s for s, _ in cycles} | set(blocks), key=int))
            tasks = {ds["label"]: ds["data"] for ds in c["datasets"]}
            self.assertEqual(set(tasks), {t for _, t in cycles})
            for task, values in tasks.items():
                for stage, v in zip(stages, values):
                    want = cycles.get((stage, task), {}).get(field)
                    self.assertEqual(v, want, (kind, task, stage))
        (c,) = self.charts("stage-blocks")
        stages = [label.split()[1] for label in c["labels"]]
        for ds, field in zip(c["datasets"], ("avgSwingsetTime", "avgBlockDuration")):
            self.assertEqual(ds["data"], [blocks.get(s, {}).get(field) for s in stages])

    def test_dss_charts_hold_what_influxdb_holds(self):
        charts = self.charts("dss-rps") + self.charts("dss-p95")
        files = {c["file"].split(" \u00b7 ")[0] for c in charts}
        self.assertEqual(files, set(self.fx.dss_files))
        for c in charts:
            run = c["file"].split(" \u00b7 ")[0]
            test = c["group"].split()[1]  # "test rid_isa sweep inter_latency"
            field = "rps_total" if c["kind"] == "dss-rps" else "p95_ms"
            rows = self.influx.query("perf", "SELECT * FROM dss_bench WHERE run = "
                                     f"'{run}' AND test = '{test}' GROUP BY arm, variant")
            by = {(r["arm"], r["variant"]): r for r in rows}
            with self.subTest(file=run, test=test, chart=c["kind"]):
                # the x axis is the sweep, in its order
                order = sorted({(r["variantIndex"], r["variant"]) for r in rows})
                self.assertEqual(c["labels"], [v for _, v in order])
                arms = [ds for ds in c["datasets"] if not ds["label"].endswith(" errors")]
                self.assertEqual({ds["label"] for ds in arms}, {r["arm"] for r in rows})
                for ds in arms:
                    want = [by.get((ds["label"], v), {}).get(field) for v in c["labels"]]
                    self.assertEqual(ds["data"], want, ds["label"])
                for ds in c["datasets"]:
                    if ds["label"].endswith(" errors"):
                        arm = ds["label"][:-len(" errors")]
                        want = [by.get((arm, v), {}).get("errors") for v in c["labels"]]
                        self.assertEqual(ds["data"], want, ds["label"])

    def test_screenshot_kept(self):
        with open(self.shot, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(self.shot), 50000)


@unittest.skipUnless(os.path.exists(CHART_JS), "needs libjs-chart.js (scripts/deps)")
class ReportCommand(harness.InfluxTestCase):
    """What `perfship report` does around the page: where and how it is
    written, exit codes, ranges and sources."""
    tmp_prefix = "perfship-report-cmd-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        harness.convert_into(cls.influx, "perf", "loadgen",
                             [os.path.join(harness.DATA_DIR, "loadgen", "synth", n)
                              for n in ("daily-perf-9eb37164f6f7", "daily-perf-ba4674aa5495")],
                             ok=(0,))
        cls.cfg = harness.write_config(os.path.join(cls.tmp, "perfship.cfg"), cls.influx.url,
                                       os.path.join(cls.tmp, "state"))

    def report(self, *args, cfg=None, umask=None):
        def pre():
            if umask is not None:
                os.umask(umask)
        p = subprocess.run([harness.PERFSHIP_BIN, "-c", cfg or self.cfg, "report"] + list(args),
                           capture_output=True, text=True, timeout=120, preexec_fn=pre)
        return p.returncode, p.stdout, p.stderr

    def test_file_and_folder_modes_for_a_web_server(self):
        path = os.path.join(self.tmp, "www", "perf", "index.html")
        rc, out, err = self.report("-o", path, "--since", SINCE, umask=0o077)
        self.assertEqual(rc, 0, err)
        self.assertIn(path, out)
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o644)
        for d in (os.path.dirname(path), os.path.dirname(os.path.dirname(path))):
            self.assertEqual(stat.S_IMODE(os.stat(d).st_mode), 0o755, d)
        # written whole, nothing left beside it
        self.assertEqual(os.listdir(os.path.dirname(path)), ["index.html"])
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.assertTrue(text.startswith("<!DOCTYPE html>") and text.endswith("</html>\n"))
        self.assertIn("daily-perf-ba4674aa5495", text)
        # a second page replaces the first, inode and all (a rename)
        ino = os.stat(path).st_ino
        rc, _, err = self.report("-o", path, "--since", SINCE)
        self.assertEqual(rc, 0, err)
        self.assertNotEqual(os.stat(path).st_ino, ino)

    def test_unreachable_server_exits_69(self):
        cfg = harness.write_config(os.path.join(self.tmp, "down.cfg"),
                                   f"http://127.0.0.1:{harness.free_port()}",
                                   os.path.join(self.tmp, "state"))
        path = os.path.join(self.tmp, "down.html")
        rc, _, err = self.report("-o", path, cfg=cfg)
        self.assertEqual(rc, 69, err)
        self.assertIn("perfship: report:", err)
        self.assertFalse(os.path.exists(path))

    def test_unwritable_place_exits_73(self):
        blocker = os.path.join(self.tmp, "a-file")
        with open(blocker, "w") as f:
            f.write("x")
        rc, _, err = self.report("-o", os.path.join(blocker, "index.html"), "--since", SINCE)
        self.assertEqual(rc, 73, err)
        self.assertIn(blocker, err)
        rc, _, err = self.report("-o", "/proc/perfship-report.html", "--since", SINCE)
        self.assertEqual(rc, 73, err)

    def test_since_limits_the_range(self):
        rc, out, err = self.report("-o", "-", "--since", SINCE)
        self.assertEqual(rc, 0, err)
        self.assertIn("daily-perf-9eb37164f6f7", out)
        # the samples are from March 2022: a day back shows none of them
        rc, out, err = self.report("-o", "-", "--since", "1d")
        self.assertEqual(rc, 0, err)
        self.assertNotIn("daily-perf-9eb37164f6f7", out)
        self.assertIn("No loadgen run in this range.", out)

    def test_source_limits_the_sections(self):
        rc, out, err = self.report("-o", "-", "--since", SINCE, "--source", "dss_bench")
        self.assertEqual(rc, 0, err)
        self.assertNotIn("daily-perf-9eb37164f6f7", out)
        self.assertIn("Loadgen runs are not part of this page (--source).", out)

    def test_usage_errors_exit_64(self):
        for args in ([], ["-o"], ["-o", "x.html", "--since", "soon"],
                     ["-o", "x.html", "--source", "locust"], ["-o", "x.html", "--bogus"]):
            with self.subTest(args=args):
                rc, _, err = self.report(*args)
                self.assertEqual(rc, 64, err)
                self.assertIn("perfship: report:", err)

    @unittest.skipUnless(harness.VictoriaMetrics.BIN, "victoria-metrics is not installed")
    def test_server_without_influxql_exits_69(self):
        vm = harness.VictoriaMetrics(os.path.join(self.tmp, "vm")).start()
        self.addCleanup(vm.stop)
        cfg = harness.write_config(os.path.join(self.tmp, "vm.cfg"), f"http://127.0.0.1:{vm.port}",
                                   os.path.join(self.tmp, "state"),
                                   influx_extra='api = "v2"; bucket = "perf";')
        path = os.path.join(self.tmp, "vm.html")
        rc, _, err = self.report("-o", path, cfg=cfg)
        self.assertEqual(rc, 69, err)
        self.assertIn("no InfluxQL", err)
        self.assertFalse(os.path.exists(path))

    def test_missing_chart_js_is_named(self):
        cfg = harness.write_config(os.path.join(self.tmp, "nochart.cfg"), self.influx.url,
                                   os.path.join(self.tmp, "state"),
                                   extra='report = { chart_js = "/nonexistent/chart.min.js"; };')
        rc, _, err = self.report("-o", os.path.join(self.tmp, "x.html"), cfg=cfg)
        self.assertEqual(rc, 78, err)
        self.assertIn("/nonexistent/chart.min.js", err)
        self.assertIn("libjs-chart.js", err)

    def test_empty_database_page_says_so(self):
        # an existing database with nothing in it (a missing one is an
        # error: test_reads.py)
        self.influx.create_db("nothing_yet")
        cfg = harness.write_config(os.path.join(self.tmp, "empty.cfg"), self.influx.url,
                                   os.path.join(self.tmp, "state"), database="nothing_yet")
        rc, out, err = self.report("-o", "-", cfg=cfg)
        self.assertEqual(rc, 0, err)
        body = out.split("<script", 1)[0]
        self.assertNotIn("<canvas", body)
        for line in ("No loadgen run in this range.", "No DSS bench results in this range.",
                     "No run in this range has stage data yet.", "No self-metrics"):
            self.assertIn(line, body)


if __name__ == "__main__":
    unittest.main()
