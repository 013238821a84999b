"""The chain's kernel growth judged (docs/verdicts.md "Kernel growth against
a limit") through a real InfluxDB: a generated run that leaks kernel
objects every cycle is a regression against verdicts.max_growth_per_cycle
on its first night, with no history at all, and a steady run is not. The
cause beside a slower night ("Why it got slower"): `perfship verdicts
--explain` names the vat the generator slowed down first.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DATA_DIR, Agent, InfluxTestCase, run_perfship, write_config  # noqa: E402
from faultproxy import FaultProxy  # noqa: E402
from harness import wait_until  # noqa: E402
from harness import WebhookReceiver as Receiver  # noqa: E402
from test_report import CHART_JS, CHROMIUM, open_in_browser  # noqa: E402
from test_report import Receiver as Probe  # noqa: E402
from test_bidi_text import shown  # noqa: E402  (a direction control as the page shows it)

GEN = os.path.join(DATA_DIR, "loadgen", "gen_loadgen.py")
DAY = 86400
START = 1647216131
GROUPS = ("batch = { flush_interval_ms = 100; };\n"
          "watch = { rescan_interval_ms = 300; settle_ms = 100; };\n")


def generate(out, rev_seed, **scenario):
    scenario.setdefault("slog", "rich")
    scenario["rev_seed"] = rev_seed
    subprocess.run([sys.executable, GEN, "--out", out, "--stages", "3", "--stage-minutes", "3",
                    "--scenario-json", json.dumps(scenario)], check=True,
                   stdout=subprocess.DEVNULL)
    (name,) = os.listdir(out)
    return os.path.join(out, name)


class SlogJudged(InfluxTestCase):
    tmp_prefix = "perfship-slogjudged-"

    def setUp(self):
        self.dir = os.path.join(self.tmp, self.id().rsplit(".", 1)[-1])
        self.results = os.path.join(self.dir, "results")
        os.makedirs(self.results)

    def run_once(self, db, extra=""):
        state = os.path.join(self.dir, "state")
        os.makedirs(state, exist_ok=True)
        cfg = self.cfg = write_config(os.path.join(self.dir, "perfship.cfg"), self.influx.url, state,
                           sources=f'{{ path = "{self.results}"; format = "loadgen"; }}',
                           extra=GROUPS + extra, database=db)
        agent = Agent(cfg, ["--once"]).start()
        self.assertEqual(agent.wait(180), 0, agent.output()[-2000:])
        return agent

    def add_run(self, rev_seed, **scenario):
        folder = generate(os.path.join(self.dir, "gen-" + rev_seed), rev_seed, **scenario)
        run = os.path.basename(folder)
        shutil.move(folder, os.path.join(self.results, run))
        return run

    def limit_verdicts(self, db, run):
        rows = self.influx.query(db, "SELECT * FROM perfship_verdict WHERE method='limit' "
                                     f"AND run='{run}' GROUP BY *")
        return {(r["metric"], r["stage"]): r for r in rows}

    def test_leak_is_a_regression_on_the_first_night(self):
        run = self.add_run("leak-first", seed=4102, leak_per_cycle={"kernelObjects": 2})
        self.run_once("leak1", self.hooked())
        # a red line on the first night: the alert names the leaking counter
        events = [e for e in self.hook.delivered() if e["event"] == "regression"]
        self.assertEqual(len(events), 1, self.hook.delivered())
        self.assertEqual([m["metric"] for m in events[0]["metrics"]], ["kernelObjectsPerCycle"])
        self.assertEqual(events[0]["metrics"][0]["stage"], "1")
        got = self.limit_verdicts("leak1", run)
        # stage 0 (setup) grows by design and is not judged; the last stage
        # (the chain's restart) has no cycles, so no growth per cycle
        self.assertEqual({s for _, s in got}, {"1"}, got)
        for stage in ("1",):
            v = got[("kernelObjectsPerCycle", stage)]
            self.assertEqual(v["verdict"], "regression", v)
            self.assertEqual(v["value"], 2.0)
            self.assertEqual(v["baseline"], 1.0)  # the default limit
            self.assertEqual(v["series"], "daily-perf")
            for metric in ("kpUnresolvedPerCycle", "clistEntriesPerCycle"):
                self.assertEqual(got[(metric, stage)]["verdict"], "none", got[(metric, stage)])
        # the list tells a count per cycle against its limit, not a percent of it
        rc, out, err = run_perfship(["-c", self.cfg, "verdicts", "--since", "1000w", "--all"])
        self.assertEqual(rc, 0, err)
        def row(what):
            (line,) = [x for x in out.splitlines() if what in x]
            return line
        self.assertRegex(row("kernelObjectsPerCycle, stage 1"), r"^regression +> limit ")
        self.assertRegex(row("clistEntriesPerCycle, stage 1"), r"^none +<= limit ")
        self.assertNotIn("-100.0 %", out)
        if os.path.exists(CHROMIUM) and os.path.exists(CHART_JS):
            self.check_limit_rows()

    def check_limit_rows(self):
        """The page's stage-drift table of the latest run shows growth against
        its limit as such: counts per cycle, the limit, which side of it;
        not a drift against the first stage of -100 % (issue 32)."""
        page = os.path.join(self.dir, "report.html")
        rc, out, err = run_perfship(["-c", self.cfg, "report", "-o", page, "--since", "1000w"])
        self.assertEqual(rc, 0, err)
        probe = Probe()
        self.addCleanup(probe.close)
        seen = open_in_browser(page, os.path.join(self.dir, "report.png"), probe.url)
        rows = {(r["cells"][0], r["cells"][1]): r["cells"] for r in seen["tables"]["drift"]}
        leak = rows[("1", "Kernel objects per cycle")]
        self.assertEqual(leak[2:], ["2.00 per cycle", "limit 1.00 per cycle", ">\u00a0limit",
                                    "\u25b2 regression"], leak)
        clist = [c for k, c in rows.items() if k[0] == "1" and k[1].startswith("C-list")]
        self.assertEqual(len(clist), 1, rows)
        self.assertEqual(clist[0][3:], ["limit 1.00 per cycle", "\u2264\u00a0limit",
                                        "within the limit"])
        self.assertRegex(clist[0][2], r"^-?\d+(\.\d+)? per cycle$")
        for cells in rows.values():
            self.assertNotIn("100.0", cells[4])

    def test_steady_run_passes_and_the_limit_is_configurable(self):
        run = self.add_run("steady", seed=4101)
        self.run_once("steady1")
        got = self.limit_verdicts("steady1", run)
        self.assertTrue(got)
        self.assertEqual({v["verdict"] for v in got.values()}, {"none"}, got)
        # a leak of 2 per cycle under a limit of 3 passes: the limit is the configured one
        shutil.rmtree(self.results)
        os.makedirs(self.results)
        shutil.rmtree(os.path.join(self.dir, "state"))
        run = self.add_run("leak-limit", seed=4102, leak_per_cycle={"kernelObjects": 2})
        self.run_once("limit3", "verdicts = { max_growth_per_cycle = { kernel_objects = 3.0; }; };\n")
        v = self.limit_verdicts("limit3", run)[("kernelObjectsPerCycle", "1")]
        self.assertEqual((v["verdict"], v["baseline"]), ("none", 3.0), v)

    def test_limit_verdict_kept_across_kill_9(self):
        """The stage's slog is read to its end and saved as done, but the
        server refuses the verdicts: killed then, the next start does not
        read the slog again, and still writes the limit verdict it owes
        (held in the state until acknowledged)."""
        run = self.add_run("leak-kill", seed=4102, leak_per_cycle={"kernelObjects": 2})
        state = os.path.join(self.dir, "state")
        os.makedirs(state, exist_ok=True)
        with FaultProxy(upstream_port=self.influx.port) as proxy:
            proxy.add_rule("status", code=500, contains=b"perfship_verdict,")
            cfg = write_config(os.path.join(self.dir, "perfship.cfg"), proxy.url, state,
                               sources=f'{{ path = "{self.results}"; format = "loadgen"; }}',
                               extra=GROUPS, database="kill1")
            agent = Agent(cfg).start()
            self.addCleanup(agent.kill)

            def saved():
                try:
                    with open(os.path.join(state, "state.json")) as f:
                        text = f.read()
                except OSError:
                    return False
                return ("chain-stage-1.slog.gz" in text and '"growth":[{' in text and
                        f'"run":"{run}"' in text)
            try:
                wait_until(saved, timeout=90, what="the stage read and its verdict held, saved")
                # the slog state says done: the stage is not read again
                with open(os.path.join(state, "state.json")) as f:
                    self.last_state = f.read()
            finally:
                agent.kill()
        self.assertEqual(self.limit_verdicts("kill1", run), {})
        blocks = self.influx.count("kill1", "loadgen_slog_block")
        self.assertGreater(blocks, 50)
        again = self.run_once("kill1")
        written = re.findall(r"done: .*?, (\d+) points written", again.output())
        self.assertLess(int(written[-1]), 20, "the slogs were read again")
        v = self.limit_verdicts("kill1", run)[("kernelObjectsPerCycle", "1")]
        self.assertEqual((v["verdict"], v["value"]), ("regression", 2.0), v)

    def test_cycles_survive_a_kill_before_the_slog_is_read(self):
        """perf.jsonl is read once; its finished cycles are what a stage's
        growth per cycle divides by. Killed after perf.jsonl was committed
        and before stage 1's slog was read (the slogs' writes slowed), the
        next start reads the stage again and still knows its cycles: the
        leak is judged as without the kill."""
        run = self.add_run("leak-cycles", seed=4102, leak_per_cycle={"kernelObjects": 2})
        state = os.path.join(self.dir, "state")
        os.makedirs(state, exist_ok=True)
        with FaultProxy(upstream_port=self.influx.port) as proxy:
            proxy.add_rule("delay", seconds=3, contains=b"loadgen_slog_")
            cfg = write_config(os.path.join(self.dir, "perfship.cfg"), proxy.url, state,
                               sources=f'{{ path = "{self.results}"; format = "loadgen"; }}',
                               extra=GROUPS, database="cyc1")

            perf = os.path.join(self.results, run, "perf.jsonl")

            def saved():
                """perf.jsonl committed to its end (not read again after
                the kill), the stages' cycles saved with it."""
                try:
                    with open(os.path.join(state, "state.json")) as f:
                        st = json.load(f)
                except (OSError, ValueError):
                    return False
                done = [x for x in st.get("files", []) if x.get("path") == perf and
                        int(x.get("offset", 0)) == os.path.getsize(perf)]
                seen = [c for c in st.get("slogs", {}).get("cycles", [])
                        if any(stage == 1 for stage, _ in c.get("seen", []))]
                read = [d for d in st.get("slogs", {}).get("done", [])
                        if d["path"].endswith("chain-stage-1.slog.gz")]
                self.assertFalse(read, "stage 1 was read before the kill")
                return bool(done and seen)
            agent = Agent(cfg).start()
            self.addCleanup(agent.kill)
            try:
                wait_until(saved, timeout=90, what="the run's cycles saved")
            finally:
                agent.kill()
        self.run_once("cyc1")
        got = self.influx.query("cyc1", "SELECT finishedCycles, kernelObjectsPerCycle FROM "
                                        f"loadgen_slog_stage WHERE run='{run}' AND stage='1'")
        self.assertEqual(len(got), 1, got)
        self.assertGreater(got[0]["finishedCycles"] or 0, 0, got)
        self.assertEqual(got[0]["kernelObjectsPerCycle"], 2.0)
        v = self.limit_verdicts("cyc1", run)[("kernelObjectsPerCycle", "1")]
        self.assertEqual((v["verdict"], v["value"]), ("regression", 2.0), v)

    def test_more_growth_than_the_revision_before_is_a_regression(self):
        """Five nights without a leak, then two that keep 3 kernel objects a
        cycle, under a limit of 5 (so only the judge across revisions can
        see it): the second leaking night is a regression of the run's
        growth per cycle, in counts per cycle (docs/verdicts.md "Kernel
        growth across revisions"). A fresh agent then judges an eighth night
        against that history as the server gives it back."""
        limit = "verdicts = { max_growth_per_cycle = { kernel_objects = 5.0; }; };\n"
        for i in range(5):
            self.add_run(f"tight{i}", seed=4300 + i, start_epoch=START + i * DAY)
        runs = [self.add_run(f"leaky{i}", seed=4300 + i, start_epoch=START + i * DAY,
                             leak_per_cycle={"kernelObjects": 3}) for i in (5, 6)]
        self.run_once("grow1", limit)

        def across(run):
            rows = self.influx.query("grow1", "SELECT * FROM perfship_verdict WHERE "
                                              "metric='kernelObjectsPerCycle' AND "
                                              f"method='edivisive' AND run='{run}'")
            self.assertEqual(len(rows), 1, rows)
            return rows[0]
        self.assertFalse([v for v in self.limit_verdicts("grow1", runs[1]).values()
                          if v["verdict"] != "none"])
        v = across(runs[1])
        self.assertEqual(v["verdict"], "regression", v)
        self.assertEqual(v["value"], 3.0)
        self.assertEqual(v["baseline"], 0.0)
        self.assertEqual(v["change_run"], runs[0], v)
        rc, out, err = run_perfship(["-c", self.cfg, "verdicts", "--since", "1000w"])
        self.assertEqual(rc, 0, err)
        (line,) = [x for x in out.splitlines() if runs[1] in x and "kernelObjectsPerCycle " in x]
        self.assertRegex(line, r"^regression +\+3/cyc ")
        # the other figures of those nights are as before: no change
        cyc = self.influx.query("grow1", "SELECT * FROM perfship_verdict WHERE "
                                         f"metric='cycleAvgDuration' AND run='{runs[1]}'")
        self.assertEqual([r["verdict"] for r in cyc], ["none"], cyc)

        # a fresh agent, the eighth night only on disk: the growth of the
        # seven before comes from the server's loadgen_slog_stage points
        shutil.rmtree(self.results)
        os.makedirs(self.results)
        shutil.rmtree(os.path.join(self.dir, "state"))
        eighth = self.add_run("leaky7", seed=4307, start_epoch=START + 7 * DAY,
                              leak_per_cycle={"kernelObjects": 3})
        self.run_once("grow1", limit)
        v = across(eighth)
        self.assertEqual(v["value"], 3.0)
        self.assertEqual(v["verdict"], "none", v)  # the new level goes on
        # ... and began where the first agent found it, against the five
        # nights without a leak: both known only from the server
        self.assertEqual((v["change_run"], v["baseline"], v["baseline_runs"]),
                         (runs[0], 0.0, 5), v)

    def slowing_series(self, steady=5):
        """Five steady nights, then two whose AMM vat's deliveries take 7
        times as long: the second is where the swingset time's regression is
        found (a new level shows at its second run, docs/verdicts.md), the
        first is where it began."""
        for i in range(steady):
            self.add_run(f"base{i}", seed=4200 + i, start_epoch=START + i * DAY)
        for i in (steady, steady + 1):
            run = self.add_run(f"slow{i}", seed=4200 + i, start_epoch=START + i * DAY,
                               slow_vat="amm", slow_vat_base=6)
        return run

    def test_alert_cause_compares_with_the_baseline_runs(self):
        """Twelve steady nights: the alert's cause compares with the runs the
        verdict's baseline is the median of, not a fixed ten."""
        run = self.slowing_series(steady=12)
        self.run_once("slow12", self.hooked())
        v = self.influx.query("slow12", "SELECT * FROM perfship_verdict WHERE "
                                        f"verdict='regression' AND run='{run}' AND "
                                        "metric='live_avgSwingsetTime'")
        self.assertEqual(len(v), 1, v)
        self.assertGreater(v[0]["baseline_runs"], 10, v)
        events = [e for e in self.hook.delivered()
                  if e["event"] == "regression" and e["run"] == run]
        self.assertEqual(len(events), 1, self.hook.delivered())
        self.assertEqual(events[0]["cause"]["oldRuns"], v[0]["baseline_runs"],
                         (events[0]["cause"], events[0]["metrics"]))

    def explain(self, run, *args):
        rc, out, err = run_perfship(["-c", self.cfg, "verdicts", "--explain", run,
                                     "--since", "1000w"] + list(args))
        self.assertEqual(rc, 0, err)
        return out

    def hooked(self):
        """Alerts to a webhook receiver on loopback; the generated runs are
        from 2022, so their age is no reason to stay quiet."""
        self.hook = Receiver()
        self.addCleanup(self.hook.close)
        return (f'alerts = {{ webhook = {{ url = "{self.hook.url}"; timeout_ms = 5000; }}; '
                'min_interval_s = 0; catch_up_s = 315000000; };\n')

    def test_slowing_vat_is_named_first(self):
        run = self.slowing_series()
        self.run_once("slow1", self.hooked())
        regressions = self.influx.query(
            "slow1", "SELECT * FROM perfship_verdict WHERE verdict='regression' "
                     f"AND run='{run}' AND method='edivisive'")
        self.assertIn("live_avgSwingsetTime", {r["metric"] for r in regressions}, regressions)
        got = json.loads(self.explain(run, "--json"))
        self.assertEqual(got["old_runs"], 5, got)
        first = got["vats"][0]
        self.assertTrue(first["name"].endswith("-amm"), got["vats"])
        self.assertGreater(first["change"], 0)
        self.assertAlmostEqual(first["now"] / first["then"], 7, delta=1)
        self.assertLessEqual(len(got["vats"]), 5)
        self.assertIn("boydShareNow", got)
        self.assertEqual(got["growth"]["kernelObjectsPerCycle"], 0)
        text = self.explain(run)
        self.assertIn("regression of live_avgSwingsetTime", text)
        self.assertRegex(text, r"\n  1\. v\d+ \(zcf-[^)]*-amm\): ")
        # the alert carries the same cause: its text and its payload
        events = [e for e in self.hook.delivered()
                  if e["event"] == "regression" and e["run"] == run]
        self.assertEqual(len(events), 1, self.hook.delivered())
        cause = events[0]["cause"]
        self.assertEqual(cause["vats"][0]["vat"], first["vat"], cause)
        self.assertTrue(cause["vats"][0]["name"].endswith("-amm"))
        self.assertEqual(cause["oldRuns"], 5)
        self.assertIn("boydShareNow", cause)
        self.assertRegex(events[0]["text"], r"; inside the chain: v\d+ \(zcf-[^)]*-amm\) ")
        if os.path.exists(CHROMIUM) and os.path.exists(CHART_JS):
            self.check_page(run, first)

    def check_page(self, run, first):
        """The report's "inside the chain" part, as a reader sees it in a browser."""
        page = os.path.join(self.dir, "report.html")
        rc, out, err = run_perfship(["-c", self.cfg, "report", "-o", page, "--since", "1000w"])
        self.assertEqual(rc, 0, err)
        probe = Probe()
        self.addCleanup(probe.close)
        seen = open_in_browser(page, os.path.join(self.dir, "report.png"), probe.url)
        vats = seen["tables"]["chainVats"]
        self.assertTrue(vats, seen["tables"])
        self.assertLessEqual(len(vats), 5)
        # per-cycle seconds in milliseconds with their digits, the change in
        # percent (every vat read 0.001 then and now, -0.000: issue 32)
        for cells in (r["cells"] for r in vats):
            then, change = cells[2], cells[4]
            self.assertRegex(then, r"^\d+\.\d+$|^\d+$", cells)
            self.assertNotEqual(then, "0.001", cells)
            self.assertRegex(change, r"^[+\u2212\u00b1]\d+\.\d\u00a0%$", cells)
        then, now = float(vats[0]["cells"][2]), float(vats[0]["cells"][3])
        self.assertAlmostEqual(now / then, first["now"] / first["then"], delta=0.1)
        self.assertAlmostEqual(then, first["then"] * 1000, delta=abs(first["then"]) * 10)
        self.assertEqual(vats[0]["cells"][0], first["vat"])
        self.assertTrue(vats[0]["cells"][1].endswith("-amm"), vats[0])
        stages = [r["cells"][0] for r in seen["tables"]["chainStages"]]
        self.assertEqual(stages, ["0", "1", "2"])
        (chart,) = [c for c in seen["charts"] if c["kind"] == "chain-vats"]
        self.assertEqual(chart["drawn"], "1")
        self.assertTrue(chart["labels"][0].endswith("-amm"), chart)
        self.assertGreater(chart["datasets"][1]["data"][0], chart["datasets"][0]["data"][0])
        self.assertTrue(all(n and n > 0 for n in chart["colourPixels"]), chart)
        self.check_block_chart("slow1", run, seen)

    def check_block_chart(self, db, run, seen):
        """The chart of delivery seconds per block: one line per top vat (the
        five with the most delivery seconds over the stages that take part,
        docs/verdicts.md), named as the slog names them, its points the
        loadgen_slog_block_vat points of the store."""
        q = lambda text: self.influx.query(db, text)  # noqa: E731
        stages = [r["stage"] for r in q("SELECT * FROM loadgen_slog_stage "
                                         f"WHERE run='{run}' GROUP BY stage")
                  if r["stage"] != "0" and r["partial"] is False and (r["finishedCycles"] or 0) > 0]
        self.assertTrue(stages)
        total, names = {}, {}
        for r in q(f"SELECT * FROM loadgen_slog_vat WHERE run='{run}' GROUP BY vat, stage"):
            if r["stage"] in stages:
                total[r["vat"]] = total.get(r["vat"], 0.0) + r["deliverySeconds"]
                names[r["vat"]] = r.get("name") or names.get(r["vat"])
        top = sorted(total, key=lambda v: (-total[v], v))[:5]
        (chart,) = [c for c in seen["charts"] if c["kind"] == "chain-blocks"]
        self.assertEqual(chart["drawn"], "1")
        self.assertEqual([d["label"] for d in chart["datasets"]],
                         [shown(names[v] or v) for v in top])
        self.assertTrue(any(d["label"].endswith("-amm") for d in chart["datasets"]), chart)
        self.assertTrue(all(n and n > 0 for n in chart["colourPixels"]), chart)
        for vat, ds in zip(top, chart["datasets"]):
            rows = [r for r in q("SELECT blockHeight, deliverySeconds FROM loadgen_slog_block_vat "
                                 f"WHERE run='{run}' AND vat='{vat}' GROUP BY stage")
                    if r["stage"] in stages]
            want = sorted((r["blockHeight"], r["deliverySeconds"]) for r in rows)
            got = [(p["x"], p["y"]) for p in ds["data"]]
            self.assertGreater(len(want), 10, vat)
            self.assertEqual(got, want, f"{vat}: the chart's points are the store's")
        self.assertIn("with the most delivery seconds", chart["caption"])
        self.assertNotIn("only the first", chart["caption"])

    @unittest.skipUnless(os.path.exists(CHROMIUM) and os.path.exists(CHART_JS),
                         "needs chromium and chart.js")
    def test_block_chart_vat_names_are_text(self):
        """A vat name from the slog is a label in the chart, never markup or
        script (docs/report.md "Safe to open")."""
        run = self.add_run("hostile-names", seed=4101)
        hostile = "zcf-</script><img src=x onerror=window.__pwned=1>\u202e-amm"
        folder = os.path.join(self.results, run)
        for f in sorted(os.listdir(folder)):
            if f.startswith("chain-stage-") and f.endswith(".slog.gz"):
                path = os.path.join(folder, f)
                with gzip.open(path, "rb") as g:
                    lines = g.read().split(b"\n")
                for i, line in enumerate(lines):
                    if b'"create-vat"' in line[:40]:
                        e = json.loads(line)
                        if str(e.get("name", "")).endswith("-amm"):
                            e["name"] = hostile
                            lines[i] = json.dumps(e, separators=(",", ":")).encode()
                with gzip.open(path, "wb") as g:
                    g.write(b"\n".join(lines))
        self.run_once("names1")
        page = os.path.join(self.dir, "report.html")
        rc, out, err = run_perfship(["-c", self.cfg, "report", "-o", page, "--since", "1000w"])
        self.assertEqual(rc, 0, err)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        self.assertNotIn("<img src=x", html)
        self.assertNotIn("\u202e", html)  # direction controls as their escapes
        probe = Probe()
        self.addCleanup(probe.close)
        seen = open_in_browser(page, os.path.join(self.dir, "report.png"), probe.url)
        self.assertEqual(seen["dialogs"], [])
        self.assertIsNone(seen["texts"]["pwned"])
        (chart,) = [c for c in seen["charts"] if c["kind"] == "chain-blocks"]
        self.assertIn(shown(hostile), [d["label"] for d in chart["datasets"]], chart)
        self.check_block_chart("names1", run, seen)


if __name__ == "__main__":
    unittest.main()
