"""The chain's slog in stage drift (docs/verdicts.md "Within a run (stage
drift)") through a real InfluxDB: a generated run whose AMM vat slows down
from its second loadgen stage on is a stage-drift regression of that vat's
delivery seconds per cycle, named by vat; a steady run gives none; a stage
whose BOYD takes much more of the delivery time is a regression of
stage_boydShare; and a restart between the stages (the first stage read and
acknowledged by one start, the second by the next, also after a kill -9)
judges the same, since the figures are read back from the server.
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import (DATA_DIR, Agent, InfluxTestCase, run_perfship, wait_until,  # noqa: E402
                     write_config)
from test_report import CHART_JS, CHROMIUM, open_in_browser  # noqa: E402
from test_report import Receiver as Probe  # noqa: E402

GEN = os.path.join(DATA_DIR, "loadgen", "gen_loadgen.py")
GROUPS = ("batch = { flush_interval_ms = 100; };\n"
          "watch = { rescan_interval_ms = 300; settle_ms = 100; };\n")
VAT = "stage_vatSecondsPerCycle"
BOYD = "stage_boydShare"
# 0 setup, 1 and 2 loadgen, 3 the chain's restart; stages of 8 minutes
# have 60-70 cycles each, enough for a vat's time per cycle to be steady
# (docs/verdicts.md says what 3-minute stages do)
SHAPE = ["--stages", "4", "--stage-minutes", "8"]
SLOW = {"slow_vat": "amm", "slow_vat_base": 1.0, "slow_vat_from_stage": 2}
BOYD_HEAVY = {"boyd_every": 4, "boyd_seconds": 0.05, "boyd_from_stage": 2}


def generate(out, rev_seed, **scenario):
    scenario.setdefault("slog", "rich")
    scenario["rev_seed"] = rev_seed
    subprocess.run([sys.executable, GEN, "--out", out] + SHAPE +
                   ["--scenario-json", json.dumps(scenario)], check=True,
                   stdout=subprocess.DEVNULL)
    (name,) = os.listdir(out)
    return os.path.join(out, name)


class SlogDrift(InfluxTestCase):
    tmp_prefix = "perfship-slogdrift-"

    def setUp(self):
        self.dir = os.path.join(self.tmp, self.id().rsplit(".", 1)[-1])
        self.results = os.path.join(self.dir, "results")
        os.makedirs(self.results)

    def config(self, db, extra=""):
        self.state = os.path.join(self.dir, "state")
        os.makedirs(self.state, exist_ok=True)
        self.cfg = write_config(os.path.join(self.dir, "perfship.cfg"), self.influx.url,
                                self.state,
                                sources=f'{{ path = "{self.results}"; format = "loadgen"; }}',
                                extra=GROUPS + extra, database=db)
        return self.cfg

    def run_once(self, db, extra=""):
        agent = Agent(self.config(db, extra), ["--once"]).start()
        self.assertEqual(agent.wait(180), 0, agent.output()[-2000:])
        return agent

    def add_run(self, rev_seed, **scenario):
        folder = generate(os.path.join(self.dir, "gen-" + rev_seed), rev_seed, **scenario)
        run = os.path.basename(folder)
        shutil.move(folder, os.path.join(self.results, run))
        return run

    def drift(self, db, run):
        """The slog's stage-drift verdicts of the run: {(metric, stage, vat): row}."""
        rows = self.influx.query(db, "SELECT * FROM perfship_verdict WHERE method='stage_drift' "
                                     f"AND run='{run}' AND (metric='{VAT}' OR metric='{BOYD}') "
                                     "GROUP BY *")
        return {(r["metric"], r["stage"], r.get("vat") or None): r for r in rows}

    def regressions(self, got):
        return {k: v for k, v in got.items() if v["verdict"] != "none"}

    def check_slowing_vat(self, got):
        changed = self.regressions(got)
        self.assertEqual(len(changed), 1, changed)
        ((metric, stage, vat), v), = changed.items()
        self.assertEqual((metric, stage, v["verdict"]), (VAT, "2", "regression"), v)
        self.assertTrue(v["vat_name"].endswith("-amm"), v)
        # twice as slow: its delivery seconds per cycle about double
        self.assertGreater(v["value"] / v["baseline"], 1.6, v)
        self.assertEqual(v["series"], "daily-perf")
        self.assertEqual(v["change_run"], v["run"])
        # only the busy vats, at most five per stage, and the stage's BOYD share
        self.assertLessEqual(len([k for k in got if k[0] == VAT]), 5)
        self.assertIn((BOYD, "2", None), got)
        # nothing is judged against itself or before the first loadgen stage
        self.assertEqual({k[1] for k in got}, {"2"}, got)
        return vat

    def test_slowing_vat_is_named(self):
        run = self.add_run("slowvat", seed=4301, **SLOW)
        self.run_once("drift_slow")
        vat = self.check_slowing_vat(self.drift("drift_slow", run))
        # `perfship verdicts` lists it among the regressions, with its vat
        rc, out, err = run_perfship(["-c", self.cfg, "verdicts", "--since", "1000w"])
        self.assertEqual(rc, 0, err)
        line = [ln for ln in out.splitlines() if ln.startswith("regression") and VAT in ln]
        self.assertEqual(len(line), 1, out)
        self.assertIn(f"{VAT} {vat}, stage 2", line[0])
        if os.path.exists(CHROMIUM) and os.path.exists(CHART_JS):
            self.check_page(vat)

    def check_page(self, vat):
        """The report's stage-drift table, as a reader sees it in a browser:
        the vat's row says which vat, by ID and name, and that it regressed."""
        page = os.path.join(self.dir, "report.html")
        rc, out, err = run_perfship(["-c", self.cfg, "report", "-o", page, "--since", "1000w"])
        self.assertEqual(rc, 0, err)
        probe = Probe()
        self.addCleanup(probe.close)
        seen = open_in_browser(page, os.path.join(self.dir, "report.png"), probe.url)
        rows = [r["cells"] for r in seen["tables"]["drift"]]
        mine = [c for c in rows if c[1].startswith("Vat delivery seconds per cycle: " + vat)]
        self.assertEqual(len(mine), 1, rows)
        self.assertRegex(mine[0][1], r"\(zcf-[^)]*-amm\)$")
        self.assertEqual(mine[0][0], "2")
        self.assertIn("regression", mine[0][5].lower())
        boyd = [c for c in rows if c[1] == "BOYD share"]
        self.assertEqual(len(boyd), 1, rows)

    def test_steady_run_gives_none(self):
        run = self.add_run("steadydrift", seed=4302)
        self.run_once("drift_steady")
        got = self.drift("drift_steady", run)
        self.assertIn((BOYD, "2", None), got)
        self.assertGreaterEqual(len([k for k in got if k[0] == VAT]), 3, got)
        self.assertEqual(self.regressions(got), {})

    def test_boyd_heavy_stage_is_a_regression(self):
        run = self.add_run("boydheavy", seed=4303, **BOYD_HEAVY)
        self.run_once("drift_boyd")
        got = self.drift("drift_boyd", run)
        v = got[(BOYD, "2", None)]
        self.assertEqual(v["verdict"], "regression", v)
        # in percent of the stage's delivery seconds, compared in points
        self.assertLess(v["baseline"], v["value"], v)
        self.assertGreater(v["value"] - v["baseline"], 5, v)
        stage = self.influx.query("drift_boyd", "SELECT boydShare FROM loadgen_slog_stage "
                                                f"WHERE run='{run}' AND stage='2'")
        self.assertAlmostEqual(v["value"], stage[0]["boydShare"] * 100, places=6)

    def test_restart_between_stages_judges_the_same(self):
        run = self.add_run("slowvat", seed=4301, **SLOW)
        folder = os.path.join(self.results, run)
        aside = os.path.join(self.dir, "chain-stage-2.slog.gz")
        shutil.move(os.path.join(folder, "chain-stage-2.slog.gz"), aside)
        self.run_once("drift_restart")
        # the first start had stage 1 only: nothing to compare it with yet
        self.assertEqual(self.drift("drift_restart", run), {})
        stage1 = self.influx.query("drift_restart", "SELECT partial FROM loadgen_slog_stage "
                                                    f"WHERE run='{run}' AND stage='1'")
        self.assertEqual(stage1[0]["partial"], False)
        # the next start finds stage 2; stage 1 is done and not read again
        shutil.move(aside, os.path.join(folder, "chain-stage-2.slog.gz"))
        agent = self.run_once("drift_restart", 'log_level = "debug";\n')
        self.assertIn("chain-stage-2.slog.gz: read from its start", agent.output())
        self.assertNotIn("chain-stage-1.slog.gz: read from its start", agent.output())
        self.check_slowing_vat(self.drift("drift_restart", run))

    def saved_state(self):
        text = ""
        for root, _, files in os.walk(self.state):
            for f in files:
                try:
                    with open(os.path.join(root, f), errors="replace") as fh:
                        text += fh.read()
                except OSError:
                    pass
        return text

    def test_kill_9_between_stages_judges_the_same(self):
        """The service killed with SIGKILL once it has read stage 1 (and
        saved it as done), before stage 2 exists: the next start reads only
        stage 2 and judges it against stage 1 from the server."""
        run = self.add_run("slowvat", seed=4301, **SLOW)
        folder = os.path.join(self.results, run)
        aside = os.path.join(self.dir, "chain-stage-2.slog.gz")
        shutil.move(os.path.join(folder, "chain-stage-2.slog.gz"), aside)
        agent = Agent(self.config("drift_kill")).start()
        try:
            wait_until(lambda: "chain-stage-1.slog.gz" in self.saved_state() and
                       "chain-stage-3.slog.gz" in self.saved_state(), timeout=120,
                       what="stages 1 and 3 saved as read")
        finally:
            agent.kill()  # SIGKILL
        self.assertEqual(self.drift("drift_kill", run), {})
        shutil.move(aside, os.path.join(folder, "chain-stage-2.slog.gz"))
        agent = self.run_once("drift_kill", 'log_level = "debug";\n')
        self.assertNotIn("chain-stage-1.slog.gz: read from its start", agent.output())
        self.check_slowing_vat(self.drift("drift_kill", run))


if __name__ == "__main__":
    unittest.main()
