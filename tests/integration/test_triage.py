"""Triage decisions end to end: `perfship triage` writes them into a real
InfluxDB, the agent reads them back and judges by them, `perfship verdicts`
shows them, and a webhook receiver on loopback tells what reached people.

Histories come from the loadgen generator as in test_verdicts.py
(Scenario(slow=...) makes a slower revision, +-3 % run-to-run noise).
"""
import http.server
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Agent, InfluxTestCase, QueryError, free_port, run_perfship, wait_until,  # noqa: E402
                     write_config)
import nodetools  # noqa: E402
from faultproxy import FaultProxy  # noqa: E402
from test_verdicts import ACROSS, DAY, make_history  # noqa: E402

KEYS = ("verdict", "value", "baseline", "change_run", "baseline_runs")
CHROMIUM = os.environ.get("PERFSHIP_CHROMIUM", "/usr/bin/chromium")


def open_in_browser(page, shot, probe_url):
    """What Debian's chromium shows of the page (tests/node/report-check.mjs)."""
    node_modules = nodetools.ensure_node_modules()
    script = os.path.join(os.path.dirname(node_modules), "report-check.mjs")
    p = subprocess.run(["node", script, page, shot, probe_url], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PERFSHIP_CHROMIUM=CHROMIUM))
    if p.returncode != 0:
        raise AssertionError(f"report-check.mjs failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return json.loads(p.stdout)


class Receiver:
    """A webhook receiver on loopback: records every event it is sent."""

    def __init__(self):
        self.events = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.events.append(json.loads(body))
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok\n")

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def regressions(self):
        return [e for e in self.events if e["event"] == "regression"]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Triage(InfluxTestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="perfship-triage-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.n = getattr(type(self), "_n", 0) + 1
        type(self)._n = self.n
        self.db = f"t{self.n}"
        self.res = os.path.join(self.tmp, "results")
        os.makedirs(self.res)

    def config(self, state="state", extra=""):
        cfg = os.path.join(self.tmp, f"{state}.cfg")
        write_config(cfg, self.influx.url, os.path.join(self.tmp, state), database=self.db,
                     sources=f'{{ path = "{self.res}"; format = "loadgen"; }}', extra=extra)
        return cfg

    def once(self, cfg):
        rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=180)
        self.assertEqual(rc, 0, err[-3000:])
        return err

    def triage(self, cfg, *args, rc=0):
        got, out, err = run_perfship(["-c", cfg, "triage", *args], env={"USER": "ann", "SUDO_USER": ""})
        self.assertEqual(got, rc, out + err)
        return out, err

    def verdicts(self, metric="cycleAvgDuration"):
        rows = self.influx.query(self.db, f"SELECT * FROM \"perfship_verdict\" WHERE {ACROSS} "
                                          f"AND \"metric\" = '{metric}'")
        return {r["run"]: {k: r.get(k) for k in KEYS} for r in rows}

    def test_acknowledged_change_alerts_no_more_and_a_new_one_does(self):
        hook = Receiver()
        self.addCleanup(hook.close)
        t0 = int(time.time()) - 30 * DAY
        staged = os.path.join(self.tmp, "staged")
        names = make_history(staged, [1.0] * 9 + [1.12] * 4 + [1.40] * 4, seed=21, t0=t0)
        for name in names[:13]:
            shutil.move(os.path.join(staged, name), self.res)
        alerts = (f'alerts = {{ webhook = {{ url = "http://127.0.0.1:{hook.port}/h"; }}; '
                  f'on = ["regression"]; catch_up_s = {40 * DAY}; }};')
        self.once(self.config("first", alerts))
        self.assertEqual(len(hook.regressions()), 1, hook.events)
        first = hook.regressions()[0]
        self.assertIn(first["run"], names[9:11])
        out, _ = self.triage(self.config("first", alerts), "ack", "--run", first["run"],
                             "--reason", "expected: the new vault <costs> 12 %",
                             "--ticket", "https://tickets.example/7")
        ack_id = out.split()[1]
        # A second agent (a state lost, another machine) judges the same
        # history again: the acknowledged change reaches nobody twice.
        self.once(self.config("second", alerts))
        self.assertEqual(len(hook.regressions()), 1, hook.events)
        self.assertEqual(self.verdicts()[first["run"]]["verdict"] in ("regression", "none"),
                         True)
        # ... and `perfship verdicts` says it is known, by whom, why
        cfg = self.config("first", alerts)
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--since", "100d"])
        self.assertEqual(rc, 0, err)
        self.assertIn("acknowledged", out.splitlines()[0])
        self.assertIn("acknowledged by ann at ", out)
        self.assertIn("expected: the new vault <costs> 12 % <https://tickets.example/7> "
                      f"[{ack_id}]", out)
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--since", "100d", "--json"])
        acked = [r for r in json.loads(out) if r["verdict"] == "regression"
                 and first["run"] in (r["run"], r["change_run"])]
        self.assertTrue(acked and all(r["acknowledged"]["id"] == ack_id for r in acked), acked)
        self.assertEqual(acked[0]["acknowledged"]["ticket"], "https://tickets.example/7")
        # ... and the report, in the browser, shows it acknowledged, the
        # reason as text (no element made of it), the ticket a link
        if os.path.exists(CHROMIUM):
            page = os.path.join(self.tmp, "report.html")
            rc, out, err = run_perfship(["-c", cfg, "report", "-o", page, "--since", "100d"])
            self.assertEqual(rc, 0, err)
            with open(page) as f:
                self.assertIn('<a href="https://tickets.example/7" rel="noopener noreferrer">',
                              f.read())
            seen = open_in_browser(page, os.path.join(self.tmp, "report.png"),
                                   f"http://127.0.0.1:{hook.port}/probe")
            rows = {r["cells"][0]: r["cells"] for r in seen["tables"]["runs"]}
            shown = " ".join(rows[first["run"]])
            self.assertIn("acknowledged: expected: the new vault <costs> 12 % ticket", shown)
            self.assertEqual(seen["phases"]["load"]["pageErrors"], [])
            self.assertEqual(seen["texts"]["scripts"], 3)
        # A later, different change of the same series alerts as usual.
        for name in names[13:]:
            shutil.move(os.path.join(staged, name), self.res)
        self.once(self.config("first", alerts))
        # (its metrics may pass the night's family one run apart: each run
        # that reports a metric of it alerts once; docs/verdicts.md, "The
        # error of a night")
        regs = hook.regressions()
        self.assertIn(len(regs), (2, 3), hook.events)
        for reg in regs[1:]:
            self.assertIn(reg["run"], names[13:16])
        self.assertIn("cycleAvgDuration",
                      [m["metric"] for reg in regs[1:] for m in reg["metrics"]])

    def test_excluded_run_and_undo(self):
        levels = [1.0] * 14
        levels[8] = 1.30  # a noisy neighbour spoiled one night
        names = make_history(self.res, levels, seed=22)
        spoiled = names[8]
        # what the verdicts are without the spoiled run at all
        ref = os.path.join(self.tmp, "ref")
        shutil.copytree(self.res, ref)
        shutil.rmtree(os.path.join(ref, spoiled))
        ref_db = f"{self.db}ref"
        ref_cfg = os.path.join(self.tmp, "ref.cfg")
        write_config(ref_cfg, self.influx.url, os.path.join(self.tmp, "refstate"),
                     database=ref_db, sources=f'{{ path = "{ref}"; format = "loadgen"; }}')
        self.once(ref_cfg)
        rows = self.influx.query(ref_db, f"SELECT * FROM \"perfship_verdict\" WHERE {ACROSS} "
                                         "AND \"metric\" = 'cycleAvgDuration'")
        without = {r["run"]: {k: r.get(k) for k in KEYS} for r in rows}

        cfg = self.config()
        self.once(cfg)
        before = self.verdicts()
        later = names[9:]
        self.assertNotEqual([before[n] for n in later], [without[n] for n in later],
                            "the spoiled run changed nothing: the test cannot fail")
        out, _ = self.triage(cfg, "exclude", "--run", spoiled, "--reason", "noisy neighbour")
        ex_id = out.split()[1]
        err = self.once(cfg)
        self.assertIn("runs are judged again", err)
        after = self.verdicts()
        self.assertEqual(after[spoiled]["verdict"], "excluded")
        for n in later:
            self.assertEqual(after[n], without[n], n)
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--since", "10000d"])
        self.assertIn("excluded by ann at ", out)
        self.assertIn(f"noisy neighbour [{ex_id}]", out)
        # undo restores what was
        self.triage(cfg, "undo", ex_id)
        self.once(cfg)
        self.assertEqual(self.verdicts(), before)
        out, _ = self.triage(cfg, "list")
        self.assertIn("undone", out)
        self.assertIn("noisy neighbour", out)
        # a run no verdict names is most likely a typo: said
        _, err = self.triage(cfg, "ack", "--run", "no-such-run", "--reason", "typo")
        self.assertIn("warning: no verdict names the run no-such-run", err)
        # an id no decision has is said, not written
        _, err = self.triage(cfg, "undo", "t000000000000", rc=65)
        self.assertIn("no decision has the id", err)

    def test_baseline_decision_and_undo(self):
        names = make_history(self.res, [1.0] * 8 + [1.12] * 8, seed=23)
        cfg = self.config()
        self.once(cfg)
        before = self.verdicts()
        reg = [r for r, v in before.items() if v["verdict"] == "regression"]
        self.assertEqual(len(reg), 1, before)
        _, err = self.triage(cfg, "baseline", "--run", names[8], "--reason", "new hardware")
        self.assertNotIn("warning", err)
        self.once(cfg)
        after = self.verdicts()
        self.assertEqual(after[names[8]]["verdict"], "baseline")
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--since", "10000d"])
        self.assertIn("new baseline by ann at ", out)
        self.assertIn("new hardware", out)
        # from the new normal on nothing is a change, and the runs compared
        # again count only the runs since it
        self.assertFalse([r for r, v in after.items() if v["verdict"] == "regression"], after)
        last = after[names[-1]]
        self.assertEqual(last["verdict"], "none")
        self.assertLessEqual(last["baseline_runs"], 8)
        for n in names[:8]:
            self.assertEqual(after.get(n), before.get(n), n)
        out, _ = self.triage(cfg, "list", "--json")
        base_id = [d["id"] for d in json.loads(out) if d["action"] == "baseline"][0]
        self.triage(cfg, "undo", base_id)
        self.once(cfg)
        self.assertEqual(self.verdicts(), before)

    def test_triage_file_bad_line(self):
        levels = [1.0] * 12
        levels[7] = 1.30
        names = make_history(self.res, levels, seed=24)
        path = os.path.join(self.tmp, "decisions.triage")
        with open(path, "w") as f:
            f.write("# kept in git\n"
                    f"exclude run={names[7]} reason=\"slow disk\" who=bob\n"
                    f"ack run={names[9]} reason=\"no closing quote\n"
                    f"ack run={names[10]} reason=fine ticket=https://t.example/1\n")
        cfg = self.config(extra=f'triage_file = "{path}";')
        # a rejected line like any other input's: said, counted, exit 65
        rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=180)
        self.assertEqual(rc, 65, err[-3000:])
        self.assertIn(f"{path}:3: a quote is not closed", err)
        self.assertEqual(self.verdicts()[names[7]]["verdict"], "excluded")
        out, err = self.triage(cfg, "list", rc=65)
        self.assertIn(f"{path}:3: a quote is not closed", err)
        self.assertIn("2 decisions", out)
        self.assertIn("slow disk", out)
        self.assertIn(f"[{path}:4]", out)

    def test_empty_id_is_a_reported_line_not_a_crash(self):
        # `id=` with nothing after it made the service crash at every start
        # (a crash loop under systemd), and undo and list with it
        levels = [1.0] * 8
        names = make_history(self.res, levels, seed=28)
        path = os.path.join(self.tmp, "decisions.triage")
        with open(path, "w") as f:
            f.write(f"ack id= run={names[2]} reason=y\n"
                    f"exclude run={names[3]} reason=\"slow disk\" id=keep\n")
        cfg = self.config(extra=f'triage_file = "{path}";')
        rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=180)
        self.assertEqual(rc, 65, err[-3000:])
        self.assertIn(f"{path}:1: id= is empty", err)
        self.assertEqual(self.verdicts()[names[3]]["verdict"], "excluded")
        out, err = self.triage(cfg, "list", rc=65)
        self.assertIn("1 decision", out)
        self.assertIn("keep", out)
        out, err = self.triage(cfg, "undo", "nosuch", rc=65)
        self.assertIn("no decision has the id", err)

    def test_running_agent_rereads_the_file_on_sighup(self):
        levels = [1.0] * 12
        levels[7] = 1.30
        names = make_history(self.res, levels, seed=25)
        path = os.path.join(self.tmp, "decisions.triage")
        open(path, "w").close()
        agent = Agent(self.config(extra=f'triage_file = "{path}";')).start()
        self.addCleanup(agent.kill)
        def all_judged():
            try:
                v = self.verdicts()
            except QueryError:  # the agent has not created the database yet
                return None
            return v if len(v) == len(names) - 4 else None
        before = wait_until(all_judged, timeout=60, what="the verdicts of every run")
        self.assertNotEqual(before[names[7]]["verdict"], "excluded")
        with open(path, "w") as f:
            f.write(f"exclude run={names[7]} reason=\"slow disk\"\n")
        agent.proc.send_signal(signal.SIGHUP)
        try:
            wait_until(lambda: self.verdicts()[names[7]]["verdict"] == "excluded", timeout=30,
                       what="the run excluded")
            # the point still holds the baseline its earlier judgement wrote
            # (InfluxDB merges fields); the list does not show it as the run's
            stale = self.influx.query(self.db, "SELECT baseline FROM perfship_verdict WHERE "
                                               f"run='{names[7]}' AND metric='cycleAvgDuration'")
            self.assertIsNotNone(stale[0]["baseline"])
            rc, out, err = run_perfship(["-c", agent.config, "verdicts", "--since", "1000w"])
            self.assertEqual(rc, 0, err)
            (line,) = [x for x in out.splitlines()
                       if names[7] in x and " cycleAvgDuration " in x]
            self.assertRegex(line, r"^excluded +\S+ .* nan  ")
            # the line removed: what was comes back
            open(path, "w").close()
            agent.proc.send_signal(signal.SIGHUP)
            wait_until(lambda: self.verdicts() == before, timeout=30, what="the verdicts restored")
        except AssertionError as e:
            agent.stop()
            raise AssertionError(f"{e}\nthe agent said:\n{agent.output()[-4000:]}") from None
        self.assertEqual(agent.stop(), 0)
        self.assertIn("runs are judged again", agent.output())

    def test_decision_taken_while_verdicts_are_unanswered_still_counts(self):
        # The server stored the verdicts but its answer is held: the agent
        # still has the pass out when the file changes. The answer arriving
        # afterwards must not mark the runs the decision touches as judged.
        levels = [1.0] * 12
        levels[7] = 1.30
        names = make_history(self.res, levels, seed=26)
        path = os.path.join(self.tmp, "decisions.triage")
        open(path, "w").close()
        proxy = FaultProxy(self.influx.port, seed=26).start()
        self.addCleanup(proxy.stop)
        proxy.add_rule("delay", seconds=2, forward=True, contains=b"perfship_verdict,")
        cfg = os.path.join(self.tmp, "held.cfg")
        write_config(cfg, proxy.url, os.path.join(self.tmp, "held"), database=self.db,
                     sources=f'{{ path = "{self.res}"; format = "loadgen"; }}',
                     extra=f'triage_file = "{path}";')
        agent = Agent(cfg).start()
        self.addCleanup(agent.kill)

        def all_judged():
            try:
                v = self.verdicts()
            except QueryError:
                return None
            return v if len(v) == len(names) - 4 else None
        before = wait_until(all_judged, timeout=60, interval=0.05,
                            what="the verdicts of every run on the server")
        with open(path, "w") as f:
            f.write(f"exclude run={names[7]} reason=\"slow disk\"\n")
        agent.proc.send_signal(signal.SIGHUP)
        held = [r for r in proxy.requests if b"perfship_verdict," in (r.body or b"")]
        self.assertTrue(held and held[-1].done is None,
                        "the verdicts' answer was still held at the SIGHUP")
        try:
            wait_until(lambda: self.verdicts()[names[7]]["verdict"] == "excluded", timeout=40,
                       what="the run excluded")
        except AssertionError as e:
            agent.stop()
            raise AssertionError(f"{e}\nthe agent said:\n{agent.output()[-4000:]}") from None
        self.assertNotEqual(before[names[7]]["verdict"], "excluded")
        self.assertEqual(agent.stop(), 0)


if __name__ == "__main__":
    unittest.main()
