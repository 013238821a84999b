"""The report with two bench machines in one database, opened in Debian's
chromium as the report's own test does (tests/node/report-check.mjs):
machine B is 30 % slower and ran the same revisions, so both machines'
loadgen runs have the same folder names, and both wrote a DSS results
folder of the same name. Every run of every host is on the page with its
host, no chart line holds two hosts' values, each host has its newest-run
headline, its stage charts and its DSS results; `--host` narrows the page.
The full-page screenshot is kept: <build>/test-artifacts/report-hosts.png.
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_report import ARTIFACTS, CHART_JS, CHROMIUM, Receiver, open_in_browser  # noqa: E402

HOSTS = {"bench-a": 1.0, "bench-b": 1.3}
REVS = ["1a2b3c4", "2b3c4d5", "3c4d5e6", "4d5e6f7", "5e6f7a8", "6f7a8b9"]
DAY = 86400


def lp(measurement, tags, fields, t_s):
    def val(v):
        if isinstance(v, str):
            return '"' + v.replace('"', '\\"') + '"'
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return f"{v}i"
        return repr(float(v))
    tag = ",".join(f"{k}={v}" for k, v in sorted(tags.items()))
    field = ",".join(f"{k}={val(v)}" for k, v in fields.items())
    return f"{measurement},{tag} {field} {int(t_s * 10**9)}"


def history(t0):
    """Line protocol of both machines' runs, verdicts, stages and DSS."""
    lines = []
    for host, slow in HOSTS.items():
        for i, rev in enumerate(REVS):
            run, t = f"daily-perf-{rev}", t0 + i * DAY + (600 if host == "bench-b" else 0)
            value = round(24.0 * slow * (1 + i / 100), 4)
            tags = {"host": host, "run": run, "revision": rev, "source": "loadgen"}
            lines.append(lp("runs", dict(tags, event="start", status="running"),
                            {"text": "started"}, t))
            lines.append(lp("loadgen_run", {"host": host, "run": run, "revision": rev,
                                            "test_type": "daily-perf"},
                            {"cycleAvgDuration": value, "cycleSuccessRate": 100.0,
                             "status": "success", "duration": 1800.0}, t))
            lines.append(lp("runs", dict(tags, event="end", status="success"),
                            {"text": "success", "duration": 1800.0}, t + 1800))
            if i >= 2:
                verdict = "regression" if host == "bench-a" and i == len(REVS) - 1 else "none"
                lines.append(lp("perfship_verdict", {
                    "host": host, "source": "loadgen", "series": "daily-perf",
                    "metric": "cycleAvgDuration", "run": run},
                    {"verdict": verdict, "value": value, "baseline": 24.0 * slow,
                     "change_pct": round((value / (24.0 * slow) - 1) * 100, 2),
                     "change_run": run, "method": "edivisive", "backfill": False}, t))
        newest = f"daily-perf-{REVS[-1]}"
        t = t0 + (len(REVS) - 1) * DAY + (600 if host == "bench-b" else 0)
        for stage in range(3):
            lines.append(lp("loadgen_stage", {"host": host, "run": newest, "stage": str(stage)},
                            {"stageIndex": stage}, t + 60 * stage))
            lines.append(lp("loadgen_stage_cycles", {"host": host, "run": newest,
                                                     "stage": str(stage), "task": "all"},
                            {"cycleCount": 10 + stage, "avgDuration": 20.0 * slow + stage,
                             "p95Duration": 30.0 * slow, "cycleSuccessRate": 100.0},
                            t + 60 * stage))
            lines.append(lp("loadgen_stage_blocks", {"host": host, "run": newest,
                                                     "stage": str(stage), "summary": "onlyLive"},
                            {"avgSwingsetTime": 0.5 * slow, "avgBlockDuration": 6.0 * slow,
                             "blockCount": 100}, t + 60 * stage))
        td = t0 + 2 * DAY + (900 if host == "bench-b" else 0)
        for k, variant in enumerate(("v1", "v2", "v3")):
            for arm, base in (("interuss/dss:v0.22.0", 100.0), ("local/dss:pr-1", 90.0)):
                lines.append(lp("dss_bench", {"host": host, "run": "cmp", "test": "rid_isa",
                                              "arm": arm, "variant": variant},
                                {"variantIndex": k, "rps_total": round(base / slow, 3),
                                 "p95_ms": 10.0 * slow, "errors": 0}, td))
        lines.append(lp("runs", {"host": host, "run": "cmp", "source": "dss_bench",
                                 "event": "end", "status": "success"}, {"text": "ok"}, td + 10))
    return "\n".join(lines) + "\n"


@unittest.skipUnless(os.path.exists(CHROMIUM) and os.path.exists(CHART_JS),
                     "needs Debian's chromium and libjs-chart.js (scripts/deps --test)")
class TwoHostsInBrowser(harness.InfluxTestCase):
    tmp_prefix = "perfship-report-hosts-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.t0 = int(time.time()) - 10 * DAY
        cls.influx.create_db("perf")
        harness.write_lines(cls.influx, "perf", history(cls.t0))
        cls.cfg = harness.write_config(os.path.join(cls.tmp, "perfship.cfg"), cls.influx.url,
                                       os.path.join(cls.tmp, "state"))
        cls.page = os.path.join(cls.tmp, "hosts.html")
        rc, out, err = harness.run_perfship(["-c", cls.cfg, "report", "-o", cls.page,
                                             "--since", "30d"])
        if rc != 0:
            raise AssertionError(f"perfship report: exit {rc}: {err}")
        cls.receiver = Receiver()
        cls.addClassCleanup(cls.receiver.close)
        os.makedirs(ARTIFACTS, exist_ok=True)  # the screenshot is kept, as the report's own
        cls.seen = open_in_browser(cls.page, os.path.join(ARTIFACTS, "report-hosts.png"),
                                   cls.receiver.url)

    def test_no_console_error(self):
        load = self.seen["phases"]["load"]
        self.assertEqual([c for c in load["console"] if c["type"] in ("error", "warning")], [])
        self.assertEqual(load["pageErrors"], [])

    def test_every_run_of_every_host_with_its_host(self):
        rows = [(r["cells"][0], r["cells"][1]) for r in self.seen["tables"]["runs"]]
        want = {(f"daily-perf-{rev}", h) for rev in REVS for h in HOSTS}
        self.assertEqual(len(rows), len(want))
        self.assertEqual(set(rows), want)

    def test_no_chart_line_mixes_hosts(self):
        heads = self.seen["texts"]["trendHeadings"]
        self.assertEqual(sorted(h.rsplit(" (", 1)[0] for h in heads),
                         ["daily-perf on bench-a", "daily-perf on bench-b"])
        rows = self.influx.query("perf", "SELECT cycleAvgDuration FROM loadgen_run GROUP BY host")
        by_host = {}
        for r in rows:
            by_host.setdefault(r["host"], []).append((r["time"] / 1e6, r["cycleAvgDuration"]))
        trends = [c for c in self.seen["charts"] if c["kind"] == "trend" and c["metric"] == "0"]
        self.assertEqual(len(trends), 2)
        for c in trends:
            host = c["group"].rsplit(" (", 1)[0].split(" on ")[1]
            got = [(p["x"], p["y"]) for p in c["datasets"][0]["data"]]
            want = sorted(by_host[host])
            self.assertEqual(len(got), len(want), host)
            for (gx, gy), (wx, wy) in zip(got, want):
                self.assertLess(abs(gx - wx), 0.001)
                self.assertEqual(gy, wy)
            # the regression is bench-a's newest run only
            marks = [p["run"] for p in c["datasets"][0]["data"] if p["v"] == 1]
            self.assertEqual(marks, [f"daily-perf-{REVS[-1]}"] if host == "bench-a" else [])

    def test_a_headline_per_host(self):
        heads = {h["id"]: h for h in self.seen["texts"]["headlines"]}
        loadgen = [heads[k]["text"] for k in ("headline-loadgen", "headline-loadgen-1")]
        self.assertEqual(sorted(h for t in loadgen for h in HOSTS if f"on {h}" in t),
                         sorted(HOSTS))
        for t in loadgen:
            self.assertIn(f"daily-perf-{REVS[-1]}", t)
        # bench-b ran later: its night is the first line; bench-a's regression
        # is on its own line, not on bench-b's
        self.assertIn("bench-b", heads["headline-loadgen"]["text"])
        self.assertNotIn("regression", heads["headline-loadgen"]["text"].lower())
        self.assertIn("regression", heads["headline-loadgen-1"]["text"].lower())
        dss = [heads[k]["text"] for k in ("headline-dss", "headline-dss-1")]
        self.assertEqual(sorted(h for t in dss for h in HOSTS if f"on {h}" in t), sorted(HOSTS))

    def test_stages_and_dss_per_host(self):
        self.assertEqual(len([c for c in self.seen["charts"] if c["kind"] == "stage-cycles"]), 2)
        charts = [c for c in self.seen["charts"] if c["kind"] == "stage-duration"]
        self.assertEqual(len(charts), 2)
        durations = sorted(c["datasets"][0]["data"][0] for c in charts)
        self.assertEqual(durations, [20.0 * HOSTS["bench-a"], 20.0 * HOSTS["bench-b"]])
        dss = [(r["cells"][0], r["cells"][1]) for r in self.seen["tables"]["dss"]]
        self.assertEqual(sorted(dss), [("cmp", "bench-a"), ("cmp", "bench-b")])
        rps = [c for c in self.seen["charts"] if c["kind"] == "dss-rps"]
        self.assertEqual(len(rps), 2)
        for c in rps:
            host = "bench-b" if "bench-b" in c["file"] else "bench-a"
            ref = next(ds for ds in c["datasets"] if ds["label"] == "interuss/dss:v0.22.0")
            self.assertEqual(ref["data"], [round(100.0 / HOSTS[host], 3)] * 3, host)

    def test_host_option_narrows_the_page(self):
        rc, out, err = harness.run_perfship(["-c", self.cfg, "report", "-o", "-", "--since",
                                             "30d", "--host", "bench-a"])
        self.assertEqual(rc, 0, err)
        body = out.split("<script", 1)[0]
        self.assertIn(f"{len(REVS)} loadgen runs", body)
        self.assertIn("bench-a", body)
        self.assertNotIn("bench-b", body)


if __name__ == "__main__":
    unittest.main()
