"""Triage decisions end to end: `perfship triage` writes them into a real
InfluxDB, the agent reads them back and judges by them, `perfship verdicts`
shows them, and a webhook receiver on loopback tells what reached people.

Histories come from the loadgen generator as in test_verdicts.py
(Scenario(slow=...) makes a slower revision, +-3 % run-to-run noise).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (PERFSHIP_BIN, Agent, InfluxTestCase, QueryError,  # noqa: E402
                     WebhookReceiver, free_port, run_perfship, scratch_dir, wait_until,
                     write_config)
import nodetools  # noqa: E402
from faultproxy import FaultProxy  # noqa: E402
from reportdata import lp_line  # noqa: E402
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


class Triage(InfluxTestCase):
    def setUp(self):
        self.tmp = scratch_dir(self, "perfship-triage-")
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
        hook = WebhookReceiver()
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

    def perfship_bytes(self, cfg, *args):
        """stdout as bytes: run_perfship's decoding would hide invalid UTF-8."""
        p = subprocess.run([PERFSHIP_BIN, "-c", cfg, *args], capture_output=True, timeout=180)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")

    def test_large_file_and_its_problems_are_said(self):
        # 100,000 lines loaded in linear time (a linear duplicate search per
        # line took `triage list` 28 s), and every problem of the file said
        # with FILE:LINE where it used to pass silently
        # the last two nights 30 % slower: the change the file's last line
        # acknowledges (only a change carries its acknowledgement)
        names = make_history(self.res, [1.0] * 6 + [1.3] * 2, seed=29,
                             t0=int(time.time()) - 20 * DAY)
        path = os.path.join(self.tmp, "decisions.triage")
        cfg = self.config(extra=f'triage_file = "{path}";')
        self.influx.create_db(self.db)
        out, _ = self.triage(cfg, "exclude", "--run", names[5], "--reason", "server's")
        server_id = out.split()[1]
        # two server points with one id: the newer one holds
        self.influx.write(self.db, "perfship_triage,action=ack,id=dupid run=\"%s\",reason=\"older\" "
                          "1700000000000000000\n"
                          "perfship_triage,action=ack,id=dupid run=\"%s\",reason=\"newer\" "
                          "1700000100000000000\n" % (names[5], names[5]))
        with open(path, "wb") as f:
            f.write("".join(f"ack id=f{i} run=bulk{i} reason=seen{i}\n"
                            for i in range(100000)).encode())
            f.write(b"ack id=f5 run=copied reason=copied\n"                        # 100001
                    + f"exclude id={server_id} run={names[4]} reason=mine\n".encode()  # 100002
                    + b"undo revokes=nosuch reason=typo\n"                          # 100003
                    + f"ack run={names[6]} reason=x when=2026-02-31\n".encode()       # 100004
                    + f"ack id=latin run={names[6]} reason=caf\xe9\n".encode("latin-1"))
        rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=180)
        self.assertEqual(rc, 65, err[-3000:])
        self.assertIn(f"{path}:100001: id=f5 is the id of {path}:6 already", err)
        self.assertIn(f"{path}:100002: id={server_id} is the id of a decision on the server "
                      "already (perfship_triage), which stays in force", err)
        self.assertIn(f"{path}:100003: revokes= names no decision", err)
        self.assertIn(f"{path}:100004: when= is not a date", err)
        self.assertIn("the server holds 1 perfship_triage point whose id a newer point has too "
                      "(the first: dupid)", err)
        self.assertEqual(self.verdicts()[names[5]]["verdict"], "excluded")
        self.assertNotEqual(self.verdicts()[names[4]]["verdict"], "excluded")
        out, err = self.triage(cfg, "list", rc=65)
        self.assertEqual(out.splitlines()[0], "100004 decisions")  # 100,002 lines, 2 points
        self.assertIn(f"{path}:100001: id=f5 is the id of {path}:6 already", err)
        self.assertIn(f"{path}:100003: revokes= names no decision", err)
        self.assertIn("the server holds 1 perfship_triage point whose id a newer point has too "
                      "(the first: dupid)", err)
        # JSON is valid UTF-8 whatever the file's bytes (U+FFFD for a byte
        # that begins no character: docs/verdicts.md)
        rc, raw, err = self.perfship_bytes(cfg, "triage", "list", "--json")
        self.assertEqual(rc, 65, err[-2000:])
        listed = {d["id"]: d for d in json.loads(raw.decode("utf-8"))}
        self.assertEqual(listed["latin"]["reason"], "caf\ufffd")
        self.assertEqual(listed["dupid"]["reason"], "newer")
        self.assertEqual(listed["f5"]["run"], "bulk5")
        rc, raw, err = self.perfship_bytes(cfg, "verdicts", "--since", "100d", "--all", "--json")
        self.assertEqual(rc, 0, err[-2000:])
        rows = json.loads(raw.decode("utf-8"))
        acked = [r for r in rows if names[6] in (r.get("run"), r.get("change_run"))
                 and r.get("acknowledged")]
        self.assertTrue(acked, rows)
        self.assertEqual(acked[0]["acknowledged"]["reason"], "caf\ufffd")

    def test_hostile_strings_are_shown_not_obeyed_on_the_terminal(self):
        # the verdict field and a decision's id were printed as they are: an
        # id with an OSC title and a clear-screen drove the terminal, and
        # --candidate echoed its RUN and SERIES raw (issue 32)
        self.influx.create_db(self.db)
        cfg = self.config()
        now = int(time.time()) * 10**9
        evil_id = "t\x1b]0;pwned\x07\x1b[2J"
        points = [lp_line("perfship_verdict", {"source": "loadgen", "series": "daily-perf",
                                               "metric": "cycleAvgDuration", "run": run,
                                               "host": "h"},
                          {"verdict": verdict, "value": 27.8, "baseline": 24.3,
                           "change_pct": 14.4, "change_run": run, "baseline_runs": 6,
                           "method": "edivisive", "backfill": False}, now - 3600 * 10**9)
                  for run, verdict in (("r1", "regression"), ("r2", "\x1b[2J"),
                                       ("r3", "\u202e"), ("r4", "\x7f"))]
        self.influx.write(self.db, "\n".join(points + [
            lp_line("perfship_triage", {"action": "ack", "id": evil_id},
                    {"run": "r1", "who": "ann", "reason": "known"}, now - 60 * 10**9),
        ]) + "\n")
        raw = ("\x1b", "\x07", "\x7f", "\u202e")
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--since", "2d"])
        self.assertEqual(rc, 0, err)
        for c in raw:
            self.assertNotIn(c, out + err)
        self.assertIn("[t\\u001b]0;pwned\\u0007\\u001b[2J]", out)  # the id under the row
        for shown in ("\\u001b[2J", "\\u202e", "\\u007f"):  # the verdicts, escaped
            self.assertIn(f"\n{shown} ", out)
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--candidate", "c\x1b[2J\u202e",
                                     "--against", "s\x1b]0;x\x07"])
        self.assertEqual(rc, 65, err)
        for c in raw:
            self.assertNotIn(c, out + err)
        self.assertIn("run c\\u001b[2J\\u202e is not in loadgen_run", err)

    def test_messages_say_what_is_wrong(self):
        # --explain against a missing database named no database; a CR in a
        # name exited 69 with an empty message; a refused write was first
        # announced as written (issue 32)
        missing = os.path.join(self.tmp, "missing.cfg")
        write_config(missing, self.influx.url, os.path.join(self.tmp, "m"), database="nosuchdb")
        rc, out, err = run_perfship(["-c", missing, "verdicts", "--explain", "r1"])
        self.assertEqual(rc, 69, err)
        self.assertIn('database "nosuchdb" not found', err)
        self.assertNotIn("no loadgen run", err)
        self.influx.create_db(self.db)
        cfg = self.config()
        for args in (["--candidate", "c\rx", "--against", "daily-perf"],
                     ["--candidate", "c", "--against", "daily\rperf"],
                     ["--candidate", "c", "--against", "daily-perf", "--host", "h\r"],
                     ["--series", "s\r"], ["--host", "\rh"]):
            rc, out, err = run_perfship(["-c", cfg, "verdicts", *args])
            self.assertEqual(rc, 64, (args, err))
            opt = next(a for a, v in zip(args, args[1:]) if "\r" in v)
            self.assertIn(f"perfship verdicts: {opt}: a name holds a character InfluxQL cannot "
                          "carry (\\r, a carriage return)", err)
        proxy = FaultProxy(self.influx.port, seed=32).start()
        self.addCleanup(proxy.stop)
        proxy.add_rule("status", code=403, path="/write")
        refused = os.path.join(self.tmp, "refused.cfg")
        write_config(refused, proxy.url, os.path.join(self.tmp, "r"), database=self.db)
        out, err = self.triage(refused, "ack", "--run", "nosuchrun", "--reason", "x", rc=69)
        self.assertIn("the server refused the decision (HTTP 403", err)
        self.assertNotIn("written", err)
        # and when the write is taken, the unknown run is still said
        out, err = self.triage(cfg, "ack", "--run", "nosuchrun", "--reason", "x")
        self.assertIn("no verdict names the run nosuchrun (yet): the decision is written", err)

    def test_compare_link_is_bounded(self):
        # revisions of megabytes made one verdicts --json of 51 MB through
        # the compare_url link (issue 32): a link over 4 KiB is no link,
        # and a short one is still made
        self.influx.create_db(self.db)
        cfg = self.config(extra='verdicts = { compare_url = '
                                '"https://git.example/compare/{good}...{bad}"; };')
        now = int(time.time()) * 10**9
        self.influx.write(self.db, "\n".join(
            lp_line("perfship_verdict", {"source": "loadgen", "series": "daily-perf",
                                         "metric": "cycleAvgDuration", "run": run, "host": "h"},
                    {"verdict": "regression", "value": 27.8, "baseline": 24.3,
                     "change_pct": 14.4, "change_run": run, "baseline_runs": 6,
                     "method": "edivisive", "good_revision": good, "bad_revision": "b" + good,
                     "backfill": False}, now - 3600 * 10**9)
            for run, good in (("long", "/" * 60000), ("short", "abc123"))) + "\n")
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--since", "2d", "--json"])
        self.assertEqual(rc, 0, err)
        rows = {r["run"]: r for r in json.loads(out)}
        self.assertNotIn("compare_url", rows["long"])
        self.assertEqual(rows["short"]["compare_url"],
                         "https://git.example/compare/abc123...babc123")
        self.assertLess(len(out), 200000)
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--since", "2d"])
        self.assertEqual(rc, 0, err)
        self.assertLess(max(len(x) for x in out.splitlines()), 130000)

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
