"""The report page's Benchmarker section in Debian's chromium (driven by
playwright-core, tests/node/benchmarker-check.mjs), from generated reports
of the InterUSS benchmarker (tests/tools/gen_benchmarker.py) in a real
InfluxDB, as a person checks it (docs/report.md "Benchmarker"): a group per
configuration and load with every arm listed, each arm's fitted curve and
measured steps, the step the fit discarded and the step that went Unstable
marked as such, the latency lines, the peak of every report; a hostile
scenario name is text, and no script it carries runs."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import harness  # noqa: E402
import nodetools  # noqa: E402

CHROMIUM = os.environ.get("PERFSHIP_CHROMIUM", "/usr/bin/chromium")
GEN = os.path.join(harness.SOURCE_DIR, "tests", "tools", "gen_benchmarker.py")
HOSTILE = 'ISAs <img src=x onerror=alert(1)> "crdb" & </h3><script>alert(2)</script>'


def generate(path, *args):
    subprocess.run([sys.executable, GEN, "--out", path, *args], check=True)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def reconvert(path, doc):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, sort_keys=True)


@unittest.skipUnless(os.path.exists(CHROMIUM), "needs Debian's chromium (scripts/deps --test)")
class ReportBenchmarkerSection(harness.InfluxTestCase):
    tmp_prefix = "perfship-report-benchmarker-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # two releases of one configuration (three arms of load `ramp`); in
        # seed 3's newest report the fit discards a step of the first arm,
        # and the second arm's last step went Unstable (the generator's plan)
        cls.docs, paths = [], []
        for day in (0, 1):
            path = os.path.join(cls.tmp, "r%d" % day, "isas_images", "report.json")
            doc = generate(path, "--seed", str(2 + day), "--scenarios", "3", "--day", str(day))
            doc["configuration"]["scenarios"][2]["name"] = HOSTILE
            reconvert(path, doc)
            cls.docs.append(doc)
            paths.append(path)
        rc, out, err = harness.convert_into(cls.influx, "perf", "benchmarker", paths)
        if rc != 0:
            raise AssertionError(err)
        cls.fits = cls.influx.query("perf", "SELECT * FROM benchmarker_fit WHERE operation = 'all'")
        cfg = harness.write_config(os.path.join(cls.tmp, "perfship.cfg"), cls.influx.url,
                                   os.path.join(cls.tmp, "state"))
        cls.page = os.path.join(cls.tmp, "report.html")
        rc, _, err = harness.run_perfship(["-c", cfg, "report", "-o", cls.page, "--since", "3650d"])
        if rc != 0:
            raise AssertionError(f"perfship report: exit {rc}: {err}")
        node_modules = nodetools.ensure_node_modules()
        script = os.path.join(os.path.dirname(node_modules), "benchmarker-check.mjs")
        p = subprocess.run(["node", script, cls.page], capture_output=True, text=True,
                           timeout=300, env=dict(os.environ, PERFSHIP_CHROMIUM=CHROMIUM))
        if p.returncode != 0:
            raise AssertionError(f"benchmarker-check.mjs failed:\n{p.stderr[-3000:]}")
        cls.seen = json.loads(p.stdout)
        cls.section = cls.seen["section"]

    def scenarios(self):
        """The newest report's scenarios: (name, the report's scenario)."""
        doc = self.docs[-1]
        return [(doc["configuration"]["scenarios"][i]["name"], scen)
                for i, scen in enumerate(doc["report"]["scenarios"])]

    def newest_fit(self, scenario):
        fits = [f for f in self.fits if f["scenario"] == scenario]
        return max(fits, key=lambda f: f["time"])

    def test_a_group_per_configuration_and_load_with_every_arm(self):
        self.assertIsNotNone(self.section)
        groups = self.section["groups"]
        self.assertEqual([(g["configuration"], g["load"]) for g in groups], [("isas_images", "ramp")])
        g = groups[0]
        self.assertIn("isas_images", g["heading"])
        self.assertEqual(sorted(a["scenario"] for a in g["arms"]),
                         sorted(name for name, _ in self.scenarios()))
        self.assertEqual({a["arm"] for a in g["arms"]},
                         {f["arm"] for f in self.fits})

    def test_each_arm_has_its_curve_points_and_latency(self):
        g = self.section["groups"][0]
        names = {name for name, _ in self.scenarios()}
        self.assertEqual({f["scenario"] for f in g["fits"] if f["drawn"]}, names)
        self.assertEqual({f["scenario"] for f in g["latency"] if f["drawn"]}, names)
        for name, scen in self.scenarios():
            want = sorted(s["load_factor"] for s in scen["steps"])
            got = sorted(s["load"] for s in g["steps"] if s["scenario"] == name)
            self.assertEqual(got, want, name)  # the newest report's steps only
        self.assertTrue(all(s["drawn"] for s in g["steps"]))

    def test_discarded_and_unstable_steps_marked(self):
        g = self.section["groups"][0]
        for name, scen in self.scenarios():
            fit = self.newest_fit(name)
            want = sorted(float(x) for x in (fit.get("discarded_loads") or "").split(",") if x)
            got = sorted(s["load"] for s in g["steps"]
                         if s["scenario"] == name and s["kind"] == "discarded")
            self.assertEqual(got, want, name)
            want = sorted((s["load_factor"], s["termination_reason"]) for s in scen["steps"]
                          if s["termination_reason"] != "Completed")
            got = sorted((s["load"], s["reason"]) for s in g["steps"]
                         if s["scenario"] == name and s["kind"] == "unstable")
            self.assertEqual(got, want, name)
        kinds = {s["kind"] for s in g["steps"]}
        self.assertEqual(kinds, {"kept", "discarded", "unstable"})
        reasons = {s["reason"] for s in g["steps"] if s["kind"] == "unstable"}
        self.assertEqual(reasons, {"Unstable", "StabilityNotAchieved"})

    def test_peak_of_every_report(self):
        rows = self.section["groups"][0]["peaks"]
        self.assertEqual(len(rows), len(self.fits))
        for f in self.fits:
            self.assertTrue([r for r in rows if r[1] == f["scenario"] and r[2] == f["arm"]
                             and r[3] and abs(float(r[3].replace(",", "")) - f["x_n_star"])
                             <= 0.01 * f["x_n_star"]], (f, rows))

    def test_hostile_scenario_name_is_text(self):
        g = self.section["groups"][0]
        self.assertTrue([a for a in g["arms"] if HOSTILE in a["text"]], g["arms"])
        self.assertEqual((self.section["images"], self.section["scripts"]), (0, 0))
        self.assertEqual(self.seen["dialogs"], [])
        self.assertEqual(self.seen["errors"], [])


if __name__ == "__main__":
    unittest.main()
