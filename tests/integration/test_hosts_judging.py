"""Several bench machines, one database: what the judges say (docs/verdicts.md,
"A series is per host").

Real parts only: Debian's influxd (harness.InfluxServer), one perfship agent
per machine, each with its own `host` tag and state directory, and a webhook
receiver on loopback (harness.WebhookReceiver). Loadgen histories come from the
project's generator (tests/data/loadgen/gen_loadgen.py), DSS results from the
bundled sample of tests/data/dss/gen_dss.py.

The team of the issue: machines A and B run the same revisions (the same run
folder names), B on hardware 30 % slower; a real step (+12 %) comes with one
revision. Machine C joins later with a fresh state, on hardware 30 % faster,
running the revisions from some time before the step on. What a user checks:

- no hardware difference is a verdict: no improvement or regression but the
  step, on any machine;
- the step is reported on each machine, in its own series: against the
  machine's own earlier runs (its baseline is its own level), once;
- C judges only its own runs: it writes no verdict about A's or B's runs
  (runs of the same names), its values are its own, and its alerts are
  about its runs alone;
- the receiver gets one event per machine for the step: three ids, the
  host in each (a receiver that drops repeated ids keeps all three);
- two DSS machines with one results folder name: each compares the arms of
  its own file; B's slower hardware is no verdict, B's real arm difference
  is B's alone.
"""
import json
import os
import random
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import DATA_DIR, InfluxTestCase, run_perfship, scratch_dir, wait_until  # noqa: E402
from harness import WebhookReceiver as Receiver  # noqa: E402
from test_alerts import alert_id  # noqa: E402

sys.path.insert(0, os.path.join(DATA_DIR, "loadgen"))
import gen_loadgen as gen  # noqa: E402

DAY = 86400
ACROSS = "\"method\" = 'edivisive'"
SAME_NOISE = ("cycleAvgDuration", "cycleSuccessRate", "live_avgBlockDuration")
NRUNS = 14
STEP = 9  # the revision whose runs are 12 % slower on every machine


def make_runs(root, indexes, hardware, seed, t0, offset_s):
    """Runs of revisions `indexes` (the same folder names on every machine:
    the revision comes from the index alone), at `hardware` times the
    base level, +12 % from revision STEP on, each within +-3 % of its
    level (noise of the machine's own, from `seed`). Returns the names."""
    rng = random.Random(seed)
    names = []
    for i in indexes:
        level = hardware * (1.12 if i >= STEP else 1.0)
        sc = gen.Scenario(key="h", seed=seed * 1000 + i, rev_seed=f"hosts-{i}",
                          start_epoch=t0 + i * DAY + offset_s,
                          commit_time=t0 + i * DAY - 3600, stages=4, stage_minutes=10,
                          monitor_events=False, test_type="daily-perf",
                          slow=level * (1 + rng.uniform(-0.03, 0.03)), outcome="success",
                          outcome_stage=2, outcome_frac=0.8)
        sim = gen.RunSim(sc)
        sim.run()
        names.append(os.path.basename(gen.write_run(sim, root)))
    return names


class Machines(InfluxTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.hook = Receiver()
        cls.addClassCleanup(cls.hook.close)

    def setUp(self):
        self.hook.reset()
        self.dir = scratch_dir(self, "perfship-hosts-")

    def agent(self, host, db, source, fmt, extra=""):
        """A machine's configuration: its own host tag and state."""
        path = os.path.join(self.dir, f"{host}.cfg")
        with open(path, "w") as f:
            f.write(f"""
influxdb = {{ url = "{self.influx.url}"; database = "{db}"; }};
state_dir = "{os.path.join(self.dir, host + '-state')}";
tags = {{ host = "{host}"; }};
sources = ( {{ path = "{source}"; format = "{fmt}"; }} );
alerts = {{
  webhook = {{ url = "{self.hook.url}"; timeout_ms = 5000; }};
  on = ["regression", "improvement"];
  catch_up_s = {3650 * DAY};
  min_interval_s = 0;
}};
{extra}
""")
        return path

    def once(self, cfg):
        rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=240)
        self.assertEqual(rc, 0, err[-3000:])

    def rows(self, db, q):
        return self.influx.query(db, q)

    def events(self):
        return [e for e in self.hook.delivered() if e["event"] in ("regression", "improvement")]


class Loadgen(Machines):
    def test_three_machines_one_database(self):
        db = "hosts_loadgen"
        t0 = int(time.time()) - (NRUNS + 2) * DAY  # recent: the alerts are news
        res = {h: os.path.join(self.dir, h) for h in ("bench-a", "bench-b", "bench-c")}
        names = make_runs(res["bench-a"], range(NRUNS), 1.0, seed=31, t0=t0, offset_s=0)
        self.assertEqual(make_runs(res["bench-b"], range(NRUNS), 1.3, seed=32, t0=t0,
                                   offset_s=1800), names)  # the same run names
        c_names = make_runs(res["bench-c"], range(4, NRUNS), 0.7, seed=33, t0=t0,
                            offset_s=3600)
        self.assertEqual(c_names, names[4:])
        for h in ("bench-a", "bench-b"):
            self.once(self.agent(h, db, res[h], "loadgen"))
        # C joins later, with a fresh state, while A's and B's runs are there
        self.once(self.agent("bench-c", db, res["bench-c"], "loadgen"))

        # each machine's own values, as the database holds them
        own = {}
        for r in self.rows(db, "SELECT \"cycleAvgDuration\" FROM \"loadgen_run\" "
                               "GROUP BY \"host\", \"run\""):
            own[(r["host"], r["run"])] = r["cycleAvgDuration"]
        self.assertEqual(len(own), 2 * NRUNS + len(c_names))

        everything = self.rows(db, f"SELECT * FROM \"perfship_verdict\" WHERE {ACROSS}")
        by_host = {}
        for r in everything:
            by_host.setdefault(r["host"], []).append(r)
        self.assertEqual(set(by_host), {"bench-a", "bench-b", "bench-c"})
        mine = {"bench-a": names, "bench-b": names, "bench-c": c_names}
        # where the step may be reported: at its second run, or with fewer
        # than 10 runs in the window (C's young series) at its third
        # (docs/verdicts.md, "What p_value means")
        late = {"bench-a": 2, "bench-b": 2, "bench-c": 3}
        step = {}
        for h, rows in by_host.items():
            # a machine writes verdicts about its own runs only, from its own
            # min_runs-th (5th) run on: C has none for the runs A and B ran
            # before it joined, and none before its own fifth
            self.assertEqual({r["run"] for r in rows}, set(mine[h][4:]), h)
            v = {r["run"]: r for r in rows if r["metric"] == "cycleAvgDuration"}
            for run, r in v.items():
                self.assertAlmostEqual(r["value"], own[(h, run)], msg=(h, run))
            # no machine's hardware is a verdict: the step is the only one
            flagged = [(r["run"], r["metric"], r["verdict"]) for r in rows
                       if r["verdict"] != "none" and r["metric"] in SAME_NOISE]
            self.assertTrue(flagged, h)
            self.assertEqual({f[2] for f in flagged}, {"regression"}, (h, flagged))
            regs = [r for r in v.values() if r["verdict"] == "regression"]
            self.assertEqual(len(regs), 1, (h, regs))
            reg = regs[0]
            self.assertIn(reg["run"], names[STEP:STEP + late[h]], h)
            # where it began: the step's revision, or one run off where the
            # machine's own noise put the boundary (docs/verdicts.md, Step 3)
            self.assertIn(reg["change_run"], names[STEP - 1:STEP + 1], h)
            self.assertGreater(reg["change_pct"], 5, h)
            # against its own earlier runs: its baseline is its own level
            before = [own[(h, n)] for n in mine[h] if names.index(n) < STEP]
            self.assertLess(abs(reg["baseline"] / (sum(before) / len(before)) - 1), 0.03, h)
            step[h] = reg
        self.assertAlmostEqual(step["bench-b"]["baseline"] / step["bench-a"]["baseline"], 1.3,
                               delta=0.06)
        self.assertAlmostEqual(step["bench-c"]["baseline"] / step["bench-a"]["baseline"], 0.7,
                               delta=0.04)

        # the receiver (--once delivers before it exits): every event is
        # about a run its machine judged itself, under an id of its own, and
        # each machine's step is a regression event of its own, at the step
        # (the generator's deploy durations spread by +-20 % and may raise
        # events of their own)
        got = self.events()
        ids = [e["id"] for e in got]
        self.assertEqual(len(ids), len(set(ids)), got)
        judged = {(r["host"], r["run"]) for r in everything}
        for e in got:
            self.assertIn((e["host"], e["run"]), judged, e)
        steps = [e for e in got if {m["metric"] for m in e["metrics"]} & set(SAME_NOISE)]
        self.assertFalse([e for e in steps if e["event"] != "regression"], steps)
        self.assertEqual({e["host"] for e in steps}, set(mine), steps)
        for e in steps:
            self.assertIn(e["run"], names[STEP:STEP + late[e["host"]]], e)
        for h, reg in step.items():
            ev = [e for e in got if e["host"] == h and e["run"] == reg["run"]]
            self.assertEqual(len(ev), 1, (h, got))
            self.assertEqual(ev[0]["id"], alert_id("regression", "loadgen", reg["run"],
                                                   reg["time"], host=h))
            self.assertIn("cycleAvgDuration", [m["metric"] for m in ev[0]["metrics"]])
        # A and B reported the step on runs of one name: two ids all the same
        if step["bench-a"]["run"] == step["bench-b"]["run"]:
            a = [e["id"] for e in got if e["host"] == "bench-a" and
                 e["run"] == step["bench-a"]["run"]]
            b = [e["id"] for e in got if e["host"] == "bench-b" and
                 e["run"] == step["bench-b"]["run"]]
            self.assertNotEqual(a, b)

        # `perfship verdicts --host` shows one machine's verdicts, with the
        # runs A and B ran under the same names left out
        rc, out, err = run_perfship(["-c", self.agent("bench-c", db, res["bench-c"], "loadgen"),
                                     "verdicts", "--since", "10000d", "--host", "bench-c",
                                     "--json"])
        self.assertEqual(rc, 0, err)
        shown = json.loads(out)
        self.assertTrue(shown)
        self.assertEqual({r["host"] for r in shown}, {"bench-c"})
        self.assertEqual({r["run"] for r in shown}, set(c_names))  # stage drift: every run

        # series_by = "test_type": a machine D known to be like the others
        # joins with one run; every host's runs are its baseline (it has
        # none of its own), and it writes about its own run alone, though
        # A, B and C ran one of the same name
        res_d = os.path.join(self.dir, "bench-d")
        d_names = make_runs(res_d, [NRUNS - 1], 1.0, seed=34, t0=t0, offset_s=5400)
        self.once(self.agent("bench-d", db, res_d, "loadgen",
                             extra='verdicts = { series_by = "test_type"; };'))
        d_rows = self.rows(db, f"SELECT * FROM \"perfship_verdict\" WHERE {ACROSS} AND "
                               "\"host\" = 'bench-d'")
        self.assertEqual({r["run"] for r in d_rows}, set(d_names))
        d = [r for r in d_rows if r["metric"] == "cycleAvgDuration"][0]
        self.assertAlmostEqual(d["value"], self.rows(
            db, "SELECT \"cycleAvgDuration\" FROM \"loadgen_run\" WHERE \"host\" = "
                f"'bench-d'")[0]["cycleAvgDuration"])
        self.assertGreaterEqual(d["baseline_runs"], 4)
        # and the others' points are as they were
        self.assertEqual(len(self.rows(db, f"SELECT * FROM \"perfship_verdict\" WHERE {ACROSS}")),
                         len(everything) + len(d_rows))


class Dss(Machines):
    def test_two_dss_machines_one_folder_name(self):
        db = "hosts_dss"
        src = os.path.join(DATA_DIR, "dss", "synth", "latency_compare_images")
        with open(os.path.join(src, "results.json")) as f:
            doc = json.load(f)
        arms = list(doc["by_test"]["rid_isa"])
        ref, pr = arms[0], arms[1]
        # B: every arm on hardware 30 % slower, and the PR image 20 % slower
        # in rid_isa there alone (a real difference, on B)
        slow = json.loads(json.dumps(doc))
        for test, by_arm in slow["by_test"].items():
            for arm, variants in by_arm.items():
                for v in variants:
                    factor = 0.7 * (0.8 if test == "rid_isa" and arm == pr else 1.0)
                    v["rps_total"] = round(v["rps_total"] * factor, 2)
                    v["p95_ms"] = round(v["p95_ms"] * 1.3, 2)
        folder = "latency_compare_images"
        mtime = int(time.time()) - 600
        res = {}
        for h, d in (("dss-a", doc), ("dss-b", slow)):
            os.makedirs(os.path.join(self.dir, h, folder))
            path = os.path.join(self.dir, h, folder, "results.json")
            with open(path, "w") as f:
                json.dump(d, f, indent=2)
            # the same marker time on both machines: only the host tells
            # their events apart
            os.utime(path, (mtime, mtime))
            res[h] = os.path.join(self.dir, h)
        for h in res:
            self.once(self.agent(h, db, res[h], "dss-bench"))

        rows = self.rows(db, "SELECT * FROM \"perfship_verdict\" WHERE \"method\" = "
                             "'arm_compare' AND \"arm\" = '" + pr + "'")
        v = {(r["host"], r["series"], r["metric"]): r for r in rows}
        self.assertEqual({k[0] for k in v}, {"dss-a", "dss-b"})
        for r in rows:
            self.assertEqual(r["run"], folder)
            self.assertEqual(r["reference"], ref)
        # A: the PR image is no change in rid_isa (docs/verdicts.md)
        self.assertEqual(v[("dss-a", "rid_isa", "rps_total")]["verdict"], "none")
        # B: its own arms: the 20 % is B's regression, not A's
        reg = v[("dss-b", "rid_isa", "rps_total")]
        self.assertEqual(reg["verdict"], "regression")
        self.assertAlmostEqual(reg["change_pct"], -20, delta=1.5)
        # the slower hardware alone (rid_isa_sub) is what A says, on B's own
        # numbers: B's arms against B's reference
        for metric in ("rps_total", "p95_ms"):
            a, b = v[("dss-a", "rid_isa_sub", metric)], v[("dss-b", "rid_isa_sub", metric)]
            self.assertEqual(a["verdict"], b["verdict"], metric)
            self.assertAlmostEqual(a["change_pct"], b["change_pct"], delta=0.2)
            self.assertAlmostEqual(b["value"] / a["value"], 0.7 if metric == "rps_total" else 1.3,
                                   delta=0.01)

        # the receiver: B's regression is B's; the improvement both see in
        # rid_isa_sub is two events under two ids (same run name and time)
        got = wait_until(lambda: len(self.events()) >= 3 and self.events(), timeout=30,
                         what="the DSS events")
        regs = [e for e in got if e["event"] == "regression"]
        self.assertEqual([e["host"] for e in regs], ["dss-b"], got)
        self.assertEqual(regs[0]["run"], folder)
        better = {e["host"]: e for e in got if e["event"] == "improvement"}
        self.assertEqual(set(better), {"dss-a", "dss-b"}, got)
        self.assertNotEqual(better["dss-a"]["id"], better["dss-b"]["id"])
        ids = [e["id"] for e in got]
        self.assertEqual(len(ids), len(set(ids)), got)


if __name__ == "__main__":
    unittest.main()
