"""Verdicts end to end: the agent judges generated loadgen histories and the
DSS samples into a real InfluxDB, and `perfship verdicts` reads them back.

Histories come from the loadgen generator (tests/data/loadgen/gen_loadgen.py,
the runner's record shapes): Scenario(slow=...) makes a slower revision, and
every run gets noise of its own on top: its level within +-3 % (uniform), as
the verdict engine's own tests and docs/verdicts.md ("How well it works")
define "about 3 % run-to-run noise"; the generator adds about 1 % of its own
in the cycle figures of 10-minute stages. Folder names are revisions
(random hex), so a backfill reads runs in an order unrelated to their time:
the order-independence the verdicts promise is exercised by every test.
"""
import json
import os
import random
import shutil
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultproxy import FaultProxy  # noqa: E402
from harness import (DATA_DIR, InfluxServer, InfluxTestCase, VictoriaMetrics,  # noqa: E402
                     run_perfship, scratch_dir, wait_until, write_config)
import pointset  # noqa: E402

sys.path.insert(0, os.path.join(DATA_DIR, "loadgen"))
import gen_loadgen as gen  # noqa: E402

DAY = 86400
T0 = 1700000000
ACROSS = "\"method\" = 'edivisive'"


def make_history(root, levels, seed, noise=0.03, outcome=None, test_type="daily-perf", t0=T0):
    """One run per day; levels[i] is run i's slowness (1.0 = base), times
    1 + U(-noise, noise).
    outcome: {index: "fail"|...}. Returns the folder names in time order."""
    rng = random.Random(seed)
    names = []
    for i, level in enumerate(levels):
        sc = gen.Scenario(key="h", seed=seed * 1000 + i, rev_seed=f"{seed}-{i}",
                          start_epoch=t0 + i * DAY, commit_time=t0 + i * DAY - 3600,
                          stages=4, stage_minutes=10, monitor_events=False,
                          test_type=test_type,
                          slow=level * (1 + rng.uniform(-noise, noise)),
                          outcome=(outcome or {}).get(i, "success"), outcome_stage=2,
                          outcome_frac=0.8)
        sim = gen.RunSim(sc)
        sim.run()
        names.append(os.path.basename(gen.write_run(sim, root)))
    return names


class VerdictCase(InfluxTestCase):
    def setUp(self):
        self.tmp = scratch_dir(self, "perfship-verdicts-")
        self.n = getattr(type(self), "_n", 0) + 1
        type(self)._n = self.n

    def agent(self, results, db, state="state", extra=""):
        cfg = os.path.join(self.tmp, f"{db}-{state}.cfg")
        write_config(cfg, self.influx.url, os.path.join(self.tmp, state), database=db,
                     sources=f'{{ path = "{results}"; format = "loadgen"; }}', extra=extra)
        return cfg

    def once(self, cfg):
        rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=180)
        self.assertEqual(rc, 0, err[-3000:])
        return err

    def verdicts(self, db, where=ACROSS, metric="cycleAvgDuration"):
        """run -> row of the across-revisions verdict of `metric`."""
        rows = self.influx.query(
            db, f"SELECT * FROM \"perfship_verdict\" WHERE {where} AND \"metric\" = '{metric}'")
        return {r["run"]: r for r in rows}


class AcrossRevisions(VerdictCase):
    def test_step_up_reported_once_where_it_began(self):
        res = os.path.join(self.tmp, "results")
        # recent runs, so that the regression is news for the alerts too
        # (catch_up_s: a backfilled verdict older than that raises nothing)
        names = make_history(res, [1.0] * 9 + [1.12] * 6, seed=11,
                             t0=int(time.time()) - 20 * DAY)
        db = f"v{self.n}"
        events = os.path.join(self.tmp, "events.jsonl")
        alerts = (f'alerts = {{ exec = ["/bin/sh", "-c", "cat >> {events}"]; '
                  f'on = ["regression", "improvement"]; catch_up_s = {30 * DAY}; }};')
        self.once(self.agent(res, db, extra=alerts))
        v = self.verdicts(db)
        self.assertEqual(sorted(v), sorted(names[4:]))
        regressions = [r for r in v.values() if r["verdict"] == "regression"]
        self.assertEqual(len(regressions), 1, regressions)
        reg = regressions[0]
        # reported at the run where it began or the next one, pointing at the first
        self.assertIn(reg["run"], names[9:11])
        self.assertEqual(reg["change_run"], names[9])
        self.assertGreater(reg["change_pct"], 5)
        self.assertEqual(reg["series"], "daily-perf")
        self.assertEqual(reg["source"], "loadgen")
        self.assertIs(reg["backfill"], True)  # the runs had ended before the agent saw them
        # later runs at the new level: none, pointing back
        for name in names[names.index(reg["run"]) + 1:]:
            self.assertEqual(v[name]["verdict"], "none", name)
            self.assertEqual(v[name]["change_run"], names[9], name)
        # before the change: none
        for name in names[:9]:
            self.assertNotEqual(v.get(name, {}).get("verdict"), "regression", name)
        # the verdict's time is the run's loadgen_run time, so it overwrites itself
        runs = self.influx.query(db, "SELECT \"cycleAvgDuration\" FROM \"loadgen_run\" "
                                     "GROUP BY \"run\"")
        times = {r["run"]: r["time"] for r in runs}
        self.assertEqual(reg["time"], times[reg["run"]])
        self.assertAlmostEqual(reg["value"], [r for r in runs if r["run"] == reg["run"]][0]
                               ["cycleAvgDuration"])
        # ... and reaches a person once, as one event carrying the metrics
        # that changed (stage drift raises none: it is expected of a run)
        with open(events) as f:
            got = [json.loads(line) for line in f if line.strip()]
        regs = {e["run"]: e for e in got if e["event"] == "regression"}
        # one event per run (other metrics may first show the change a run
        # earlier or later), only for runs where the change began
        self.assertEqual(len(regs), len([e for e in got if e["event"] == "regression"]), got)
        self.assertLessEqual(set(regs), set(names[9:11]), got)
        self.assertIn("cycleAvgDuration", [m["metric"] for m in regs[reg["run"]]["metrics"]])
        for e in regs.values():
            self.assertNotIn("stage", json.dumps(e["metrics"]))
        self.assertFalse([e for e in got if e["event"] == "improvement"], got)

        # `perfship verdicts` shows it first, and --json carries it
        cfg = self.agent(res, db)
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--since", "10000d",
                                     "--series", "daily-perf"])
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertIn("regression", lines[0])
        # the verdicts without change are counted, not listed (--all lists them)
        self.assertIn("--all lists them", lines[1])
        self.assertTrue(lines[2].startswith("VERDICT"), out[:2000])
        self.assertTrue(lines[3].startswith("regression"), out[:2000])
        self.assertFalse([ln for ln in lines if ln.startswith("none")], out[:2000])
        self.assertIn(names[9], out)
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--since", "10000d", "--json"])
        self.assertEqual(rc, 0, err)
        got = json.loads(out)
        self.assertEqual(got[0]["verdict"], "regression")
        self.assertTrue(any(g["run"] == reg["run"] and g["metric"] == "cycleAvgDuration"
                            for g in got))

    def test_same_points_whatever_the_order(self):
        res = os.path.join(self.tmp, "results")
        names = make_history(res, [1.0] * 8 + [1.12] * 6, seed=12)
        # all at once
        db1 = f"v{self.n}a"
        self.once(self.agent(res, db1, state="s1"))
        want = pointset.db_points(self.influx, db1, ["perfship_verdict"])
        self.assertGreater(len(want), 14 * 7)
        # newest first, a few runs per backfill: every older run rewrites
        # the later verdicts
        db2 = f"v{self.n}b"
        staged = os.path.join(self.tmp, "staged")
        os.makedirs(staged)
        cfg2 = self.agent(staged, db2, state="s2")
        for chunk in (names[10:], names[5:10], names[:5]):
            for name in reversed(chunk):
                shutil.move(os.path.join(res, name), staged)
            self.once(cfg2)
        got = pointset.db_points(self.influx, db2, ["perfship_verdict"])
        self.assertEqual(pointset.diff(want, got), [], "newest-first backfill differs")
        # ingested twice: the same points again, nothing new
        shutil.rmtree(os.path.join(self.tmp, "s2"))
        self.once(cfg2)
        again = pointset.db_points(self.influx, db2, ["perfship_verdict"])
        self.assertEqual(pointset.diff(want, again), [], "a second ingestion differs")

    def test_stable_history_single_outlier_and_failed_run(self):
        res = os.path.join(self.tmp, "results")
        levels = [1.0] * 24
        levels[11] = 1.15  # one slow night
        names = make_history(res, levels, seed=13, outcome={16: "fail"})
        db = f"v{self.n}"
        self.once(self.agent(res, db))
        rows = self.influx.query(db, f"SELECT * FROM \"perfship_verdict\" WHERE {ACROSS}")
        # The metrics the generator draws with the noise under test (its
        # deploy and bootstrap durations it draws with a +-20 % spread and
        # its swingset time with 6 %: not "the same noise").
        same_noise = {"cycleAvgDuration", "cycleSuccessRate", "live_avgBlockDuration"}
        flagged = [(r["run"], r["metric"], r["verdict"]) for r in rows
                   if r["verdict"] != "none" and r["metric"] in same_noise]
        self.assertEqual(flagged, [], "a stable history raised verdicts")
        self.assertEqual({r["metric"] for r in rows} & same_noise, same_noise)
        judged = {r["run"] for r in rows}
        self.assertNotIn(names[16], judged)  # a failed run gets no verdict ...
        v = self.verdicts(db)
        # ... and is in no baseline: the run after it counts one run fewer
        self.assertEqual(v[names[17]]["baseline_runs"], v[names[15]]["baseline_runs"] + 1)
        # fewer than min_runs of history: no verdict yet
        self.assertNotIn(names[0], judged)

    def test_step_down_is_an_improvement(self):
        res = os.path.join(self.tmp, "results")
        names = make_history(res, [1.12] * 8 + [1.0] * 5, seed=14)
        db = f"v{self.n}"
        self.once(self.agent(res, db))
        v = self.verdicts(db)
        # every run with min_runs (5) runs of history has its verdict, however
        # the backfill's ends and the server's answers interleaved
        self.assertEqual(sorted(v), sorted(names[4:]))
        better = [r for r in v.values() if r["verdict"] != "none"]
        self.assertEqual([r["verdict"] for r in better], ["improvement"], better)
        self.assertEqual(better[0]["change_run"], names[8])
        self.assertLess(better[0]["change_pct"], -5)

    def test_fresh_agent_judges_against_the_servers_history(self):
        res = os.path.join(self.tmp, "results")
        names = make_history(res, [1.0] * 8 + [1.12] * 3, seed=15)
        db = f"v{self.n}"
        # a first agent (another host, say) ingested all but the newest run
        newest = os.path.join(self.tmp, "newest")
        os.makedirs(newest)
        shutil.move(os.path.join(res, names[-1]), newest)
        self.once(self.agent(res, db, state="first"))
        # a fresh agent sees only the newest run, and judges it against the
        # runs the server holds: the same verdict the first agent would give
        self.once(self.agent(newest, db, state="fresh"))
        v = self.verdicts(db)[names[-1]]
        ref_db = f"v{self.n}ref"
        shutil.move(os.path.join(newest, names[-1]), res)
        self.once(self.agent(res, ref_db, state="ref"))
        ref = self.verdicts(ref_db)[names[-1]]
        for k in ("verdict", "value", "baseline", "change_run", "baseline_runs", "p_value"):
            self.assertEqual(v[k], ref[k], k)


    def test_history_answer_that_is_not_one(self):
        """A 200 whose rows are not times and numbers is a failed read: said,
        nothing judged from it, and asked again (here: the next start), after
        which the verdict is the one the server's history gives."""
        res = os.path.join(self.tmp, "results")
        names = make_history(res, [1.0] * 8 + [1.12] * 3, seed=15)
        db = f"v{self.n}"
        newest = os.path.join(self.tmp, "newest")
        os.makedirs(newest)
        shutil.move(os.path.join(res, names[-1]), newest)
        self.once(self.agent(res, db, state="first"))
        bogus = json.dumps({"results": [{"statement_id": 0, "series": [{
            "name": "loadgen_run", "tags": {"run": names[0], "revision": "x"},
            "columns": ["time", "status", "cycleAvgDuration"],
            "values": [["yesterday", "success", "fast"]]}]}]})
        with FaultProxy(upstream_port=self.influx.port, seed=3) as proxy:
            # the history read by what it selects: the slog's stage drift
            # reads loadgen_run too (its status)
            proxy.add_rule("status", code=200, body=bogus, path="/query",
                           contains=b"cycleAvgDuration", count=1)
            cfg = os.path.join(self.tmp, "fresh.cfg")
            write_config(cfg, proxy.url, os.path.join(self.tmp, "fresh"), database=db,
                         sources=f'{{ path = "{newest}"; format = "loadgen"; }}')
            rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=180)
            self.assertIn("the server's answer to the history query is not one "
                          "(row 1: time is not a time in nanoseconds)", err)
            self.assertIn("read again at the next start", err)
            self.assertNotIn(names[-1], self.verdicts(db))   # nothing judged from it
            self.assertTrue(any(r.status == 200 and b"loadgen_run" in r.body
                                for r in proxy.requests))
            # the next start asks again; the server's real answer this time
            self.once(cfg)
        v = self.verdicts(db)[names[-1]]
        ref_db = f"v{self.n}ref"
        shutil.move(os.path.join(newest, names[-1]), res)
        self.once(self.agent(res, ref_db, state="ref"))
        ref = self.verdicts(ref_db)[names[-1]]
        for k in ("verdict", "value", "baseline", "change_run", "baseline_runs", "p_value"):
            self.assertEqual(v[k], ref[k], k)


    def test_history_of_a_database_that_is_not_there(self):
        """A history read answered "database not found" (what a v2 bucket
        without a database mapping answers while its writes land) is an error
        that names the database, said once, and nothing is judged from it:
        never an empty history. Only an agent that creates its database
        itself may take a missing one as "no history yet"."""
        res = os.path.join(self.tmp, "results")
        names = make_history(res, [1.0] * 8 + [1.12] * 3, seed=16)
        db = f"v{self.n}"
        newest = os.path.join(self.tmp, "newest")
        os.makedirs(newest)
        shutil.move(os.path.join(res, names[-1]), newest)
        self.once(self.agent(res, db, state="first"))
        missing = json.dumps({"results": [{"statement_id": 0,
                                           "error": f"database not found: {db}"}]})
        with FaultProxy(upstream_port=self.influx.port, seed=4) as proxy:
            proxy.add_rule("status", code=200, body=missing, path="/query",
                           contains=b"loadgen_run", count=1000)
            cfg = os.path.join(self.tmp, "nodb.cfg")
            write_config(cfg, proxy.url, os.path.join(self.tmp, "nodb"), database=db,
                         sources=f'{{ path = "{newest}"; format = "loadgen"; }}',
                         influx_extra="create_database = false;")
            rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=180)
        said = [line for line in err.splitlines() if "cannot read the series' history" in line]
        self.assertEqual(len(said), 1, err[-3000:])
        self.assertIn(db, said[0])
        self.assertIn("wait for the next start", said[0])
        self.assertNotIn(names[-1], self.verdicts(db))   # nothing judged from it


class StageDriftAndDss(VerdictCase):
    def test_bundled_run_drifts_within_its_noise(self):
        """The bundled run's swingset time is 18.5 % higher in stage 4 than in
        stage 1, and its vats' time per cycle moves by up to 69 %: beyond the
        thresholds, but its 4-minute stages are too short for such swings to
        mean anything (docs/verdicts.md "How sure"): no stage changed, and
        every point says how sure its test was."""
        res = os.path.join(self.tmp, "results")
        shutil.copytree(os.path.join(DATA_DIR, "loadgen", "synth", "daily-perf-9eb37164f6f7"),
                        os.path.join(res, "daily-perf-9eb37164f6f7"))
        db = f"v{self.n}"
        self.once(self.agent(res, db))
        rows = self.influx.query(db, "SELECT * FROM \"perfship_verdict\" WHERE \"method\" = "
                                     "'stage_drift'")
        self.assertEqual(len(rows), 27, rows)  # 3 stages: 3 figures, BOYD, 5 vats
        self.assertEqual([r for r in rows if r["verdict"] != "none"], [])
        swingset = {int(r["stage"]): r for r in rows if r["metric"] == "stage_avgSwingsetTime"}
        last = swingset[max(swingset)]
        self.assertGreater(last["change_pct"], 15)
        self.assertGreater(last["p_value"], 0.01, last)
        self.assertEqual(last["run"], "daily-perf-9eb37164f6f7")
        self.assertTrue(all(0 <= r["p_value"] <= 1 for r in rows), rows)

    def test_dss_arms_compared_both_ways(self):
        src = os.path.join(DATA_DIR, "dss", "synth", "latency_compare_images")
        with open(os.path.join(src, "results.json")) as f:
            doc = json.load(f)
        arms = list(next(iter(doc["by_test"].values())).keys())
        self.assertGreaterEqual(len(arms), 2)
        got = {}
        for i, ref in enumerate((arms[0], arms[1])):
            res = os.path.join(self.tmp, f"dss{i}")
            shutil.copytree(src, os.path.join(res, "latency_compare_images"))
            db = f"v{self.n}d{i}"
            cfg = os.path.join(self.tmp, f"dss{i}.cfg")
            write_config(cfg, self.influx.url, os.path.join(self.tmp, f"dstate{i}"),
                         database=db, sources=f'{{ path = "{res}"; format = "dss-bench"; }}',
                         extra=f'verdicts = {{ dss = {{ reference_arm = "{ref}"; }}; }};')
            self.once(cfg)
            rows = self.influx.query(db, "SELECT * FROM \"perfship_verdict\" WHERE "
                                         "\"method\" = 'arm_compare'")
            self.assertTrue(rows, "no arm verdicts")
            for r in rows:
                self.assertEqual(r["reference"], ref)
                self.assertEqual(r["source"], "dss_bench")
                self.assertEqual(r["run"], "latency_compare_images")
            got[ref] = {(r["series"], r["metric"]): r for r in rows if r["arm"] in arms[:2]}
        a, b = got[arms[0]], got[arms[1]]
        self.assertEqual(set(a), set(b))
        mirror = {"regression": "improvement", "improvement": "regression", "none": "none"}
        for k in a:
            if k[1] == "errors":
                continue
            self.assertEqual(a[k]["verdict"], mirror[b[k]["verdict"]], k)
            self.assertAlmostEqual(a[k]["value"], b[k]["baseline"], places=9)
            self.assertAlmostEqual(a[k]["baseline"], b[k]["value"], places=9)


class WithoutInfluxQL(unittest.TestCase):
    """VictoriaMetrics takes writes but has no InfluxQL: the agent judges
    against the runs it saw itself."""

    def test_own_history(self):
        if not VictoriaMetrics.BIN:
            self.skipTest("victoria-metrics is not installed")
        tmp = scratch_dir(self, "perfship-verdicts-vm-")
        vm = VictoriaMetrics(os.path.join(tmp, "vm")).start()
        self.addCleanup(vm.stop)
        res = os.path.join(tmp, "results")
        # recent runs: victoria-metrics drops points older than its retention
        # period (a month by default)
        names = make_history(res, [1.0] * 8 + [1.12] * 4, seed=16,
                             t0=int(time.time()) - 14 * DAY)
        cfg = os.path.join(tmp, "c.cfg")
        write_config(cfg, f"http://127.0.0.1:{vm.port}", os.path.join(tmp, "state"),
                     sources=f'{{ path = "{res}"; format = "loadgen"; }}')
        rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=180)
        self.assertEqual(rc, 0, err[-2000:])
        self.assertIn("no InfluxQL", err)

        def judged():
            import urllib.request
            # VictoriaMetrics keeps numeric fields as measurement_field, tags as
            # labels; the string fields (verdict, change_run) it drops.
            q = 'perfship_verdict_value{metric="cycleAvgDuration"}'
            url = (f"http://127.0.0.1:{vm.port}/api/v1/export?match[]="
                   + urllib.request.quote(q))
            with urllib.request.urlopen(url, timeout=5) as r:
                return {json.loads(x)["metric"]["run"] for x in r.read().decode().splitlines() if x}
        # min_runs (5) runs of history, then every run gets its verdict
        runs = wait_until(lambda: len(judged()) >= len(names) - 4 and judged(), timeout=30,
                          what="verdicts in victoria-metrics")
        self.assertIn(names[-1], runs)
        self.assertNotIn(names[0], runs)
        # `perfship verdicts` needs InfluxQL: it says so and exits 69
        rc, out, err = run_perfship(["-c", cfg, "verdicts"])
        self.assertEqual(rc, 69, err)


class ServerDown(VerdictCase):
    def test_verdicts_wait_for_the_server(self):
        res = os.path.join(self.tmp, "results")
        make_history(res, [1.0] * 8 + [1.12] * 3, seed=17)
        db = f"v{self.n}"
        cfg = self.agent(res, db)
        # a server that does not answer: --once gives up, nothing is judged
        down = os.path.join(self.tmp, "down.cfg")
        write_config(down, "http://127.0.0.1:9", os.path.join(self.tmp, "state"), database=db,
                     sources=f'{{ path = "{res}"; format = "loadgen"; }}',
                     influx_extra="unreachable_deadline_s = 2;")
        rc, out, err = run_perfship(["-c", down, "run", "--once"], timeout=60)
        self.assertEqual(rc, 69, err[-2000:])
        # the same state, the server back: every verdict arrives
        self.once(cfg)
        v = self.verdicts(db)
        self.assertEqual(len([r for r in v.values() if r["verdict"] == "regression"]), 1)
        rc, out, err = run_perfship(["-c", down, "verdicts"])
        self.assertEqual(rc, 69)


if __name__ == "__main__":
    unittest.main()
