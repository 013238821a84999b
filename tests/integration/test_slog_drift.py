"""The chain's slog in stage drift (docs/verdicts.md "Within a run (stage
drift)") through a real InfluxDB: a generated run whose AMM vat slows down
from its second loadgen stage on is a stage-drift regression of that vat's
delivery seconds per cycle, named by vat; a steady run gives none; a stage
whose BOYD takes much more of the delivery time is a regression of
stage_boydShare; and a restart between the stages (the first stage read and
acknowledged by one start, the second by the next, also after a kill -9)
judges the same, since the figures are read back from the server; a run
whose stages were all read by one start is judged with the per-block rows
as they were sent, and its verdicts are the very ones read back gives.
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
from reportdata import lp_line  # noqa: E402

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
HOSTILE_VAT = "</script><img src=x onerror=alert(7)>&amp;"


def generate(out, rev_seed, shape=SHAPE, **scenario):
    scenario.setdefault("slog", "rich")
    scenario["rev_seed"] = rev_seed
    subprocess.run([sys.executable, GEN, "--out", out] + shape +
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

    def config(self, db, extra="", state="state"):
        self.state = os.path.join(self.dir, state)
        os.makedirs(self.state, exist_ok=True)
        self.cfg = write_config(os.path.join(self.dir, "perfship.cfg"), self.influx.url,
                                self.state,
                                sources=f'{{ path = "{self.results}"; format = "loadgen"; }}',
                                extra=GROUPS + extra, database=db)
        return self.cfg

    def run_once(self, db, extra="", state="state"):
        agent = Agent(self.config(db, extra, state), ["--once"]).start()
        self.assertEqual(agent.wait(180), 0, agent.output()[-2000:])
        return agent

    def add_run(self, rev_seed, shape=SHAPE, **scenario):
        folder = generate(os.path.join(self.dir, "gen-" + rev_seed), rev_seed, shape, **scenario)
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

    def test_steady_runs_of_any_stage_length_name_no_vat(self):
        """Steady runs with 4-minute stages (48 blocks, 12-19 cycles: a
        vat's time per cycle swings by 30 %, which the threshold alone
        reported) and 20-minute stages: no vat and no BOYD verdict, each
        point with the p-value of its test (docs/verdicts.md "How sure")."""
        short = [self.add_run(f"steady4m{i}", ["--stages", "6", "--stage-minutes", "4"],
                              seed=7002 + i) for i in range(3)]
        long = self.add_run("steady20m", ["--stages", "5", "--stage-minutes", "20"], seed=7011)
        self.run_once("drift_lengths")
        for run, stages in [(r, {"2", "3", "4"}) for r in short] + [(long, {"2", "3"})]:
            got = self.drift("drift_lengths", run)
            self.assertEqual({k[1] for k in got}, stages, (run, got))
            self.assertGreaterEqual(len([k for k in got if k[0] == VAT]), 3 * len(stages), got)
            self.assertEqual(self.regressions(got), {}, run)
            for key, v in got.items():
                self.assertTrue(0 <= v["p_value"] <= 1, (run, key, v))
            self.check_family(db="drift_lengths", run=run, judged=len(stages))

    def check_family(self, db, run, judged):
        """Every stage-drift point of the run, the stage figures' and the
        slog's, judged at different times, was decided in one family: 9
        tests for each judged stage, its p-value adjusted by Bonferroni
        (docs/verdicts.md, "The error of a night")."""
        rows = self.influx.query(db, "SELECT * FROM perfship_verdict WHERE method='stage_drift' "
                                     f"AND run='{run}' GROUP BY *")
        self.assertEqual({r["metric"] for r in rows},
                         {VAT, BOYD, "stage_avgDuration", "stage_avgSwingsetTime",
                          "stage_avgBlockDuration"}, rows)
        for r in rows:
            self.assertEqual(r["family_size"], 9 * judged, r)
            if r.get("p_value") is not None:
                self.assertAlmostEqual(r["p_adjusted"], min(1.0, r["p_value"] * 9 * judged),
                                       delta=1e-9, msg=r)
                if r["verdict"] != "none":
                    self.assertLess(r["p_adjusted"], 0.01, r)

    def test_vat_40_percent_slower_is_named_on_its_first_stage(self):
        """A vat 40 % slower from stage 2 on, in 20-minute stages: named in
        stage 2 and in each stage after it, nothing else."""
        run = self.add_run("slow40", ["--stages", "5", "--stage-minutes", "20"], seed=7021,
                           slow_vat="amm", slow_vat_base=0.4, slow_vat_factor=0,
                           slow_vat_from_stage=2)
        self.run_once("drift_slow40")
        changed = self.regressions(self.drift("drift_slow40", run))
        self.assertEqual({(k[0], k[1], v["verdict"]) for k, v in changed.items()},
                         {(VAT, "2", "regression"), (VAT, "3", "regression")}, changed)
        for v in changed.values():
            self.assertTrue(v["vat_name"].endswith("-amm"), v)
            self.assertLess(v["p_adjusted"], 0.01, v)  # in the run's stage family
            self.assertGreater(v["value"] / v["baseline"], 1.25, v)

    def test_what_a_person_sees(self):
        """A run's stage drift as a person meets it: in the report's runs
        table one mark per stage that changed, the worst stage first, each
        naming its worst change (a vat by its name, a hostile one as text),
        the other changes behind a disclosure; `perfship verdicts` lists the
        changes and counts the rest (--all lists them). The verdict points
        are written as the agent writes them (docs/schema.md)."""
        db, run, t = "drift_seen", "daily-perf-abc1234", 1700000000 * 10**9
        tags = {"source": "loadgen", "run": run, "revision": "abc1234"}
        lines = [
            lp_line("runs", dict(tags, event="start", status="running"),
                    {"text": f"{run} started", "backfill": True}, t),
            lp_line("runs", dict(tags, event="end", status="success"),
                    {"text": f"{run} ended: success", "exitCode": 0, "duration": 3600.0,
                     "backfill": True}, t + 3600 * 10**9),
            lp_line("loadgen_run", {"run": run, "revision": "abc1234", "test_type": "daily-perf"},
                    {"success": True, "status": "success", "exitCode": 0,
                     "cycleAvgDuration": 24.0}, t)]
        drift = [  # stage, metric, vat, vat_name, verdict, value, baseline
            ("2", VAT, "v16", HOSTILE_VAT, "regression", 0.0336, 0.0234),
            ("2", BOYD, None, None, "regression", 67.0, 42.0),
            ("2", "stage_avgSwingsetTime", None, None, "none", 0.17, 0.165),
            ("3", VAT, "v16", HOSTILE_VAT, "regression", 0.0374, 0.0234),
            ("3", VAT, "v11", "zoe", "improvement", 0.036, 0.045),
            ("4", VAT, "v11", "zoe", "none", 0.046, 0.045),
            ("4", BOYD, None, None, "none", 43.0, 42.0)]
        for stage, metric, vat, name, verdict, value, base in drift:
            vtags = {"source": "loadgen", "series": "daily-perf", "metric": metric, "run": run,
                     "stage": stage, "vat": vat}
            fields = {"verdict": verdict, "value": value, "baseline": base,
                      "change_pct": round((value - base) / base * 100, 2), "change_run": run,
                      "method": "stage_drift", "p_value": 1e-6 if verdict != "none" else 0.4,
                      "revision": "abc1234", "backfill": True}
            if name:
                fields["vat_name"] = name
            lines.append(lp_line("perfship_verdict", vtags, fields, t + int(stage) * 10**9))
        self.influx.create_db(db)
        st, resp = self.influx.write(db, "\n".join(lines))
        self.assertEqual(st, 204, resp)
        self.config(db)
        rc, out, err = run_perfship(["-c", self.cfg, "verdicts", "--since", "1000w"])
        self.assertEqual(rc, 0, err)
        self.assertIn("3 regressions, 1 improvement, 3 without change",
                      out.splitlines()[0])
        self.assertIn("--all lists them", out)
        listed = [ln.split()[0] for ln in out.splitlines()[3:] if ln and not ln.startswith(" ")]
        self.assertEqual(listed, ["regression"] * 3 + ["improvement"], out)
        rc, out, err = run_perfship(["-c", self.cfg, "verdicts", "--since", "1000w", "--all"])
        self.assertEqual([ln.split()[0] for ln in out.splitlines()[2:]].count("none"), 3, out)
        if not (os.path.exists(CHROMIUM) and os.path.exists(CHART_JS)):
            self.skipTest("needs chromium and libjs-chart.js for the page")
        page = os.path.join(self.dir, "report.html")
        rc, out, err = run_perfship(["-c", self.cfg, "report", "-o", page, "--since", "1000w"])
        self.assertEqual(rc, 0, err)
        probe = Probe()
        self.addCleanup(probe.close)
        seen = open_in_browser(page, os.path.join(self.dir, "report.png"), probe.url)
        (row,) = [r for r in seen["tables"]["runs"] if r["cells"][0] == run]
        marks = row["stageMarks"]
        # stage 3's AMM (+59.8 %) is its worst and worse than stage 2's worst,
        # the BOYD share (+59.5 %: 42 to 67 %, told in points as judged)
        self.assertEqual([m["text"] for m in marks],
                         [f"\u25b2 stage 3: vat {HOSTILE_VAT} +59.8\u00a0%",
                          "\u25b2 stage 2: BOYD share +25.0\u00a0points"], marks)
        self.assertTrue(all("v-regression" in m["cls"] for m in marks), marks)
        self.assertIn("v16", marks[0]["title"])
        self.assertEqual(row["stageMore"]["summary"], "2 more stage changes", row)
        self.assertEqual(len(row["stageMore"]["items"]), 2, row)
        self.assertIn(HOSTILE_VAT, row["stageMore"]["text"])  # stage 2's AMM, as text
        self.assertIn("zoe", row["stageMore"]["text"])
        self.assertEqual(row["images"], 0, row)
        self.assertEqual(seen["dialogs"], [])

    def test_boyd_heavy_stage_is_a_regression(self):
        run = self.add_run("boydheavy", seed=4303, **BOYD_HEAVY)
        self.run_once("drift_boyd")
        got = self.drift("drift_boyd", run)
        v = got[(BOYD, "2", None)]
        self.assertEqual(v["verdict"], "regression", v)
        # in percent of the stage's delivery seconds, compared in points
        self.assertLess(v["baseline"], v["value"], v)
        self.assertGreater(v["value"] - v["baseline"], 5, v)
        self.assertLess(v["p_adjusted"], 0.01, v)  # significant in the run's family
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
        # stage 1 was read by the first start: its block rows are read back
        judged = [ln for ln in agent.output().splitlines() if "slog stage drift judged" in ln]
        self.assertTrue(judged, agent.output()[-2000:])
        self.assertFalse([ln for ln in judged if "per-block rows as sent" in ln], judged)
        restarted = self.drift("drift_restart", run)
        self.check_slowing_vat(restarted)
        # one start that reads every stage judges with the rows it sent
        # (docs/verdicts.md "When they are judged"): the same verdicts
        agent = self.run_once("drift_whole", 'log_level = "debug";\n', state="state-whole")
        self.assertIn("per-block rows as sent", agent.output())
        whole = self.drift("drift_whole", run)
        fields = ("verdict", "value", "baseline", "p_value", "p_adjusted", "family_size", "time")
        self.assertEqual({k: [v.get(f) for f in fields] for k, v in whole.items()},
                         {k: [v.get(f) for f in fields] for k, v in restarted.items()})

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
