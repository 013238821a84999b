"""Alerts from perfship itself, end to end (docs/alerts.md).

Real parts only: Debian's influxd (harness.InfluxServer), the perfship
binary, a webhook receiver on loopback (a small HTTP server started here,
which can answer 500 for a while), and an `exec` notifier script that
appends its stdin to a file. Loadgen runs come from the project's
generator (tests/data/loadgen/gen_loadgen.py) and its bundled samples.

What a user would check:
- a run that fails, one that stalls and then finishes, a source with no
  new run within a short no_new_run_after_s, a regression from hand-written
  verdict points over generated histories, the server down longer than
  unhealthy_after_s: each yields exactly the expected events, with the ids
  computed here from what InfluxDB holds (event, host, source, run, marker time);
- the receiver answering 500 for a while, then 200: delivered once it
  recovers;
- kill -9 of the agent at random moments (seeded) while events are
  pending: every event delivered at least once, never under two ids, none
  for backfilled runs;
- a run name with shell metacharacters and quotes reaches `exec`
  unchanged, as JSON, and nothing runs a shell;
- catch-up: a failed run from long ago found at the first start raises
  nothing, one that failed an hour before does; `run --once` delivers
  before it exits, and exits 69 when it could not;
- a state that cannot be saved (a full file system, a state.json that is
  a directory beside an old state.json.corrupt): no alert leaves, `run
  --once` exits 74 naming the state file and the next run does not
  re-notify; the service keeps shipping points, and once space is freed
  the held event is delivered, once;
- `perfship alert test` says what each channel answered;
- the webhook's URL (a secret) never reaches the log.

PERFSHIP_SEED=N replays the kill moments.
"""
import errno
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import (DATA_DIR, Agent, InfluxServer, InfluxTestCase, WebhookReceiver,  # noqa: E402
                     run_perfship, wait_until, write_config)

sys.path.insert(0, os.path.join(DATA_DIR, "loadgen"))
import gen_loadgen  # noqa: E402

SEED = int(os.environ.get("PERFSHIP_SEED", "20261201"))
SECRET = "T000SECRET/B000/xyzzy-do-not-log"
OLD_FAILED = "daily-perf-ba4674aa5495"   # bundled: failed in March 2022
OLD_OK = "daily-perf-9eb37164f6f7"
SLOWER = "daily-perf-1cb7c2d80874"       # bundled: the same run ~12 % slower


def alert_id(event, source, run, marker_ns, host="test"):
    """The event id as docs/alerts.md defines it, computed independently
    (`host`: write_config's)."""
    data = b"".join(p.encode() + b"\0" for p in (event, host, source, run, str(marker_ns)))
    mask = (1 << 64) - 1
    h1 = 0xcbf29ce484222325
    for c in data:
        h1 = ((h1 ^ c) * 0x100000001b3) & mask
    h2 = 0x6c62272e07bb0142
    for c in reversed(data):
        h2 = ((h2 ^ c) * 0x100000001b3) & mask
    return f"{h1:016x}{h2:016x}"


class Receiver(WebhookReceiver):
    """The shared webhook receiver (harness.WebhookReceiver) at a path holding
    SECRET, which no log may show."""

    def __init__(self):
        super().__init__(path=f"/hooks/{SECRET}")


def generate(out, name, start_epoch, outcome="fail", seed=7, slow=1.0):
    """A loadgen run folder from the project's generator, renamed `name`."""
    stage = dict(fail=2, success=None, inprogress=2)[outcome]
    sc = gen_loadgen.Scenario(key="x", seed=seed, rev_seed=name, start_epoch=int(start_epoch),
                              commit_time=int(start_epoch) - 3600, outcome=outcome,
                              outcome_stage=stage, outcome_frac=0.55, stages=4,
                              stage_minutes=6, slow=slow)
    sim = gen_loadgen.RunSim(sc)
    sim.run()
    folder = gen_loadgen.write_run(sim, out)
    final = os.path.join(out, name)
    os.rename(folder, final)
    return final


def lines_of(path):
    with open(path, "rb") as f:
        return f.read().splitlines(keepends=True)


class AlertsTest(InfluxTestCase):
    tmp_prefix = "perfship-alerts-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.hook = Receiver()
        cls.addClassCleanup(cls.hook.close)
        # Generated once: runs whose failure is recent, and a successful one.
        cls.gen = os.path.join(cls.tmp, "generated")
        os.makedirs(cls.gen)
        now = time.time()
        cls.recent = [generate(cls.gen, f"daily-perf-{'%012x' % (0xa11e0 + i)}",
                               now - 3 * 3600 + i * 600, seed=11 + i) for i in range(3)]
        cls.ok_run = generate(cls.gen, "daily-perf-0000000000aa", now - 1800,
                              outcome="success", seed=21)

    def setUp(self):
        self.hook.reset()
        self.db = self.id().rsplit(".", 1)[-1]  # a database per test: its own points
        self.dir = os.path.join(self.tmp, self.db)
        self.influx.create_db(self.db)
        os.makedirs(self.dir)
        self.results = os.path.join(self.dir, "results")
        os.makedirs(self.results)
        self.got = os.path.join(self.dir, "exec.jsonl")
        self.notify = os.path.join(self.dir, "notify")
        with open(self.notify, "w") as f:
            f.write(f"#!/bin/sh\ncat >> '{self.got}'\n")
        os.chmod(self.notify, 0o755)
        self.agents = []

    def tearDown(self):
        for a in self.agents:
            a.kill()
        outcome = getattr(self, "_outcome", None)
        res = getattr(outcome, "result", None)
        if res and any(t is self for t, _ in res.failures + res.errors) and self.agents:
            print("--- agent log:\n" + self.agents[-1].output()[-5000:])

    # -- helpers -----------------------------------------------------------
    def config(self, alerts="", sources=None, influx=None, extra=""):
        src = sources if sources is not None else \
            f'{{ path = "{self.results}"; format = "loadgen"; }}'
        return write_config(
            os.path.join(self.dir, "perfship.cfg"), (influx or self.influx).url,
            os.path.join(self.dir, "state"), sources=src, database=self.db,
            extra=f"""
watch = {{ rescan_interval_ms = 300; settle_ms = 200; }};
batch = {{ flush_interval_ms = 100; }};
selfstats = {{ interval_ms = 500; }};
alerts = {{
  exec = ["{self.notify}"];
  exec_timeout_ms = 5000;
  webhook = {{ url = "{self.hook.url}"; timeout_ms = 2000; }};
  min_interval_s = 0;
  {alerts}
}};
{extra}""")

    def start(self, cfg, once=False):
        a = Agent(cfg, args=["--once"] if once else [])
        self.agents.append(a)
        return a.start()

    def execd(self):
        """The events the exec notifier received."""
        if not os.path.exists(self.got):
            return []
        with open(self.got) as f:
            return [json.loads(line) for line in f if line.strip()]

    def marker_ns(self, run, event="start"):
        rows = self.influx.query(self.db, f"SELECT * FROM runs WHERE \"run\" = '{run}' "
                                     f"AND \"event\" = '{event}'")
        self.assertTrue(rows, f"no {event} marker for {run}")
        return rows[0]["time"]

    def wait_events(self, n, timeout=30, what="events"):
        return wait_until(lambda: len(self.hook.delivered()) >= n and len(self.execd()) >= n,
                          timeout=timeout, what=what)

    def assert_same_everywhere(self, events, influx=None):
        """Each channel got the same events, and InfluxDB has their points."""
        ids = sorted(e["id"] for e in events)
        self.assertEqual(sorted(e["id"] for e in self.execd()), ids)

        def points():
            rows = (influx or self.influx).query(self.db, "SELECT * FROM perfship_alert")
            return rows if len(rows) >= len(ids) else None
        rows = wait_until(points, timeout=15, what="perfship_alert points")
        self.assertEqual(sorted(r["id"] for r in rows), ids)
        for r in rows:
            e = next(e for e in events if e["id"] == r["id"])
            self.assertEqual((r["event"], r["source"], r["run"], r["text"]),
                             (e["event"], e["source"], e["run"], e["text"]))

    # -- scenarios ---------------------------------------------------------
    def test_a_run_that_fails_while_watched(self):
        run = "daily-perf-5eb5eb5eb5eb"
        full = generate(os.path.join(self.dir), "staged", time.time() - 1200, seed=3)
        perf = lines_of(os.path.join(full, "perf.jsonl"))
        folder = os.path.join(self.results, run)
        os.makedirs(folder)
        with open(os.path.join(folder, "perf.jsonl"), "wb") as f:
            f.writelines(perf[:len(perf) // 2])
        open(os.path.join(folder, "exit_code"), "w").close()
        self.hook.fail_until = time.time() + 1e6   # the receiver is down at first
        agent = self.start(self.config())
        start_ns = wait_until(lambda: self.influx.query(
            self.db, f"SELECT * FROM runs WHERE \"run\" = '{run}'"), timeout=20,
            what="start marker")[0]["time"]
        # The run fails.
        with open(os.path.join(folder, "perf.jsonl"), "ab") as f:
            f.writelines(perf[len(perf) // 2:])
        shutil.copy(os.path.join(full, "docker.log"), folder)
        with open(os.path.join(folder, "exit_code"), "w") as f:
            f.write("2\n")
        wait_until(lambda: len(self.hook.all()) >= 2, timeout=20,
                   what="the receiver refusing twice")
        self.hook.fail_until = 0   # it recovers: the next retry is delivered
        events = self.wait_events(1, what="run_failed")
        events = self.hook.delivered()
        self.assertEqual(len(events), 1, events)
        ev = events[0]
        self.assertEqual(ev["event"], "run_failed")
        self.assertEqual(ev["id"], alert_id("run_failed", "loadgen", run, start_ns))
        self.assertEqual((ev["source"], ev["run"], ev["series"], ev["test_type"],
                          ev["revision"], ev["status"], ev["host"]),
                         ("loadgen", run, "daily-perf", "daily-perf", "5eb5eb5eb5eb",
                          "failed", "test"))
        self.assertRegex(ev["text"], r"^daily-perf-5eb5eb5eb5eb failed after \d+m\d+s "
                                     r"\(exit code 2\): Error: Loadgen \w+ task \d+ failed$")
        # Every attempt carried the same event, its id in a header too.
        attempts = self.hook.all()
        self.assertGreaterEqual(len(attempts), 3)
        self.assertEqual({r["body"]["id"] for r in attempts}, {ev["id"]})
        self.assertEqual({r["headers"]["X-Perfship-Alert-Id"] for r in attempts}, {ev["id"]})
        self.assert_same_everywhere(events)
        time.sleep(1.5)   # nothing more comes: not re-sent, not re-raised
        self.assertEqual(len(self.hook.delivered()), 1)
        self.assertEqual(agent.stop(), 0)
        log = agent.output()
        self.assertNotIn(SECRET, log)
        self.assertIn(f"not delivered by webhook: http://127.0.0.1:{self.hook.port} answered "
                      "HTTP 500", log)

    def test_a_run_that_stalls_then_finishes(self):
        run = "daily-perf-57a1157a1157"
        full = generate(self.dir, "staged", time.time() - 1800, outcome="success", seed=4)
        perf = lines_of(os.path.join(full, "perf.jsonl"))
        folder = os.path.join(self.results, run)
        os.makedirs(folder)
        with open(os.path.join(folder, "perf.jsonl"), "wb") as f:
            f.writelines(perf[:len(perf) // 2])
        open(os.path.join(folder, "exit_code"), "w").close()
        agent = self.start(self.config("stall_after_s = 2;"))
        self.wait_events(1, what="run_stalled")
        start_ns = self.marker_ns(run)
        # It was only slow: the rest comes, and it ends well.
        with open(os.path.join(folder, "perf.jsonl"), "ab") as f:
            f.writelines(perf[len(perf) // 2:])
        with open(os.path.join(folder, "exit_code"), "w") as f:
            f.write("0\n")
        self.wait_events(2, what="run_recovered")
        time.sleep(1.5)
        events = self.hook.delivered()
        self.assertEqual([(e["event"], e["run"]) for e in events],
                         [("run_stalled", run), ("run_recovered", run)])
        self.assertEqual([e["id"] for e in events],
                         [alert_id("run_stalled", "loadgen", run, start_ns),
                          alert_id("run_recovered", "loadgen", run, start_ns)])
        self.assertIn("stalled: no file changed for", events[0]["text"])
        self.assertEqual(events[1]["status"] in ("running", "success"), True)
        self.assert_same_everywhere(events)
        self.assertEqual(agent.stop(), 0)

    def test_no_new_run(self):
        agent = self.start(self.config("no_new_run_after_s = 2;"))
        self.wait_events(1, what="no_new_run")
        time.sleep(3)   # once per silence
        events = self.hook.delivered()
        self.assertEqual([e["event"] for e in events], ["no_new_run"])
        self.assertEqual((events[0]["source"], events[0]["run"]), ("loadgen", self.results))
        self.assertIn(f"no loadgen run in {self.results} for", events[0]["text"])
        # A run starts now: a new silence, said again once it lasts.
        generate(self.results, "daily-perf-0000000000bb", time.time(), outcome="inprogress",
                 seed=5)
        self.wait_events(2, timeout=20, what="the second no_new_run")
        time.sleep(1)
        events = self.hook.delivered()
        self.assertEqual([e["event"] for e in events], ["no_new_run", "no_new_run"])
        self.assertNotEqual(events[0]["id"], events[1]["id"])
        self.assertIn("the last one started", events[1]["text"])
        # A restart does not say it again.
        self.assertEqual(agent.stop(), 0)
        agent = self.start(self.config("no_new_run_after_s = 2;"))
        time.sleep(2.5)
        self.assertEqual(len(self.hook.delivered()), 2)
        # The channels are the running ones until a restart; a reload says so.
        cfg = self.config("no_new_run_after_s = 2;")
        with open(cfg) as f:
            text = f.read()
        with open(cfg, "w") as f:
            f.write(text.replace("exec_timeout_ms = 5000;", "exec_timeout_ms = 4000;"))
        agent.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: "alerts.exec changed" in agent.output(), timeout=10,
                   what="the reload's warning")
        self.assertEqual(agent.stop(), 0)

    def test_regression_from_verdict_points(self):
        # Generated histories: the bundled run and the same run on a later
        # revision, ~12 % slower. The verdicts are written as the verdict
        # stage will write them (docs/schema.md "Verdicts").
        empty = os.path.join(self.dir, "empty.cfg")   # not the machine's own
        open(empty, "w").close()
        rc, out, err = run_perfship(["-c", empty, "convert", "-f", "loadgen",
                                     os.path.join(DATA_DIR, "loadgen/synth", OLD_OK),
                                     os.path.join(DATA_DIR, "loadgen/synth", SLOWER)])
        self.assertEqual(rc, 0, err)
        runs = {}
        for line in out.splitlines():
            if line.startswith("loadgen_run,"):
                head, fields, t = line.rsplit(" ", 2)
                run = dict(kv.split("=", 1) for kv in head.split(",")[1:])["run"]
                vals = {}
                for kv in fields.split(","):
                    k, v = kv.split("=", 1)
                    try:
                        vals[k] = float(v.rstrip("i"))
                    except ValueError:
                        pass
                runs.setdefault(run, (int(t), {}))[1].update(vals)
        t, slower = runs[SLOWER]
        base = runs[OLD_OK][1]
        lines, changed = [], []
        for metric in ("cycleAvgDuration", "live_avgSwingsetTime", "chainBootstrapDuration"):
            v, b = slower[metric], base[metric]
            pct = (v - b) / b * 100
            verdict = "regression" if pct > 5 else "none"
            if verdict == "regression":
                changed.append(metric)
            lines.append(
                f'perfship_verdict,metric={metric},run={SLOWER},series=daily-perf,'
                f'source=loadgen verdict="{verdict}",value={v},baseline={b},'
                f'change_pct={pct},change_run="{SLOWER}",baseline_runs=1i,'
                f'method="edivisive",revision="1cb7c2d80874",backfill=false {t}')
        self.assertGreaterEqual(len(changed), 2, (slower, base))
        verdicts = os.path.join(self.dir, "verdicts")
        os.makedirs(verdicts)
        agent = self.start(self.config(
            sources=f'{{ path = "{verdicts}/*.lp"; format = "lp"; }}'))
        time.sleep(0.5)
        with open(os.path.join(verdicts, "v.lp"), "w") as f:
            f.write("\n".join(lines) + "\n")
        self.wait_events(1, what="regression")
        time.sleep(1.5)
        events = self.hook.delivered()
        self.assertEqual(len(events), 1, events)
        ev = events[0]
        self.assertEqual(ev["event"], "regression")
        self.assertEqual(ev["id"], alert_id("regression", "loadgen", SLOWER, t))
        self.assertEqual((ev["run"], ev["series"], ev["revision"]),
                         (SLOWER, "daily-perf", "1cb7c2d80874"))
        self.assertEqual([m["metric"] for m in ev["metrics"]], changed)
        for m in ev["metrics"]:
            self.assertAlmostEqual(m["value"], slower[m["metric"]])
            self.assertAlmostEqual(m["baseline"], base[m["metric"]])
        self.assertIn(f"{SLOWER}: regression against earlier daily-perf runs in", ev["text"])
        self.assert_same_everywhere(events)
        self.assertEqual(agent.stop(), 0)

    def test_server_down_longer_than_the_threshold(self):
        influx = InfluxServer().start()
        try:
            agent = self.start(self.config("unhealthy_after_s = 2; no_new_run_after_s = 0;",
                                           sources="", influx=influx))
            time.sleep(1.5)
            influx.stop()
            down_at = time.time()
            self.wait_events(1, timeout=20, what="agent_unhealthy")
            self.assertGreaterEqual(time.time() - down_at, 2)
            time.sleep(1)
            self.assertEqual([e["event"] for e in self.hook.delivered()], ["agent_unhealthy"])
            influx.start()
            self.wait_events(2, timeout=30, what="agent_recovered")
            time.sleep(1)
            events = self.hook.delivered()
            self.assertEqual([(e["event"], e["source"], e["run"]) for e in events],
                             [("agent_unhealthy", "perfship", "agent"),
                              ("agent_recovered", "perfship", "agent")])
            self.assertIn(f"InfluxDB at {influx.url} has not taken a write for",
                          events[0]["text"])
            self.assertIn("takes writes again", events[1]["text"])
            # Both are in InfluxDB too, the first written once it was back.
            self.assert_same_everywhere(events, influx)
            self.assertEqual(agent.stop(), 0)
        finally:
            influx.close()

    def test_catch_up_and_once(self):
        # A year-old failure and a success, and a failure from this morning.
        for name in (OLD_FAILED, OLD_OK):
            shutil.copytree(os.path.join(DATA_DIR, "loadgen/synth", name),
                            os.path.join(self.results, name))
        recent = os.path.basename(self.recent[0])
        shutil.copytree(self.recent[0], os.path.join(self.results, recent))
        cfg = self.config("no_new_run_after_s = 0;")
        # The receiver is down: --once tries once, keeps the event, exits 69.
        self.hook.fail_until = time.time() + 1e6
        rc = self.start(cfg, once=True).wait(120)
        self.assertEqual(rc, 69, self.agents[-1].output()[-3000:])
        self.assertIn("could not be delivered", self.agents[-1].output())
        self.assertEqual(len(self.hook.all()), 1)
        self.assertEqual(len(self.execd()), 1)   # exec did get it
        # The next cron run delivers it, and only it.
        self.hook.fail_until = 0
        rc = self.start(cfg, once=True).wait(120)
        self.assertEqual(rc, 0, self.agents[-1].output()[-3000:])
        events = self.hook.delivered()
        self.assertEqual([(e["event"], e["run"]) for e in events], [("run_failed", recent)])
        self.assertEqual(events[0]["id"],
                         alert_id("run_failed", "loadgen", recent, self.marker_ns(recent)))
        # exec had delivered it already: it was not sent there again.
        self.assertEqual([e["id"] for e in self.execd()], [events[0]["id"]])
        # A third run: nothing new.
        rc = self.start(cfg, once=True).wait(120)
        self.assertEqual(rc, 0)
        self.assertEqual(len(self.hook.all()), 2)

    # -- a state that cannot be saved ---------------------------------------
    def full_state_dir(self):
        """The state directory on a small tmpfs, filled to the last block
        (as root; skips where mount is not allowed). Returns the filler's
        path: removing it frees the space."""
        state = os.path.join(self.dir, "state")
        os.makedirs(state)
        if os.geteuid() != 0 or subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", state],
                capture_output=True).returncode != 0:
            self.skipTest("cannot mount a small tmpfs here (needs root)")
        self.addCleanup(subprocess.run, ["umount", "-l", state], capture_output=True)
        filler = os.path.join(state, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while os.write(fd, b"\0" * 4096) > 0:
                pass
        except OSError as e:
            self.assertEqual(e.errno, errno.ENOSPC)
        finally:
            os.close(fd)
        return filler

    def test_once_with_a_full_state_sends_nothing(self):
        recent = os.path.basename(self.recent[0])
        shutil.copytree(self.recent[0], os.path.join(self.results, recent))
        filler = self.full_state_dir()
        cfg = self.config("no_new_run_after_s = 0;")
        state_json = os.path.join(self.dir, "state", "state.json")
        for attempt in range(2):   # a cron job's ticks: the same, never re-notified
            a = self.start(cfg, once=True)
            rc = a.wait(120)
            out = a.output().rsplit("starting (--once)", 1)[-1]   # this run's lines
            self.assertEqual(rc, 74, out[-3000:])
            self.assertIn(f"{state_json}: cannot save the state (No space left on device)", out)
            self.assertIn(f"{state_json}: the state could not be saved", out)
            self.assertEqual(out.count("cannot save the state"), 1, out[-3000:])  # said once
            self.assertIn("held, not sent", out)
            self.assertEqual(self.hook.all(), [])
            self.assertEqual(self.execd(), [])
            self.assertEqual(self.influx.query(self.db, "SELECT * FROM perfship_alert"), [])
            # the data itself went on
            self.assertTrue(self.influx.query(self.db, f"SELECT * FROM runs WHERE \"run\" = "
                                                       f"'{recent}'"))
        os.unlink(filler)
        rc = self.start(cfg, once=True).wait(120)
        self.assertEqual(rc, 0, self.agents[-1].output()[-3000:])
        events = self.hook.delivered()
        self.assertEqual([(e["event"], e["run"]) for e in events], [("run_failed", recent)])
        self.assert_same_everywhere(events)
        rc = self.start(cfg, once=True).wait(120)   # and only once
        self.assertEqual(rc, 0)
        self.assertEqual(len(self.hook.all()), 1)

    def test_service_holds_alerts_until_the_state_is_saved(self):
        filler = self.full_state_dir()
        agent = self.start(self.config("no_new_run_after_s = 0;"))
        recent = os.path.basename(self.recent[1])
        shutil.copytree(self.recent[1], os.path.join(self.results, recent))
        # points keep landing while nothing can be committed
        wait_until(lambda: self.influx.query(self.db, f"SELECT * FROM runs WHERE \"run\" = "
                                                      f"'{recent}' AND \"event\" = 'end'"),
                   timeout=30, what="the run's end marker")
        wait_until(lambda: "held, not sent" in agent.output(), timeout=20, what="the hold")
        time.sleep(2)
        self.assertEqual(self.hook.all(), [])
        self.assertEqual(self.execd(), [])
        self.assertEqual(agent.output().count("cannot save the state"), 1)
        os.unlink(filler)   # space comes back: the next retry saves, then sends
        self.wait_events(1, timeout=90, what="the held run_failed")
        self.assertIn("the state is saved again", agent.output())
        time.sleep(1.5)
        events = self.hook.delivered()
        self.assertEqual([(e["event"], e["run"]) for e in events], [("run_failed", recent)])
        self.assert_same_everywhere(events)
        self.assertEqual(agent.stop(), 0)

    def test_state_path_is_a_directory(self):
        recent = os.path.basename(self.recent[2])
        shutil.copytree(self.recent[2], os.path.join(self.results, recent))
        state = os.path.join(self.dir, "state")
        os.makedirs(os.path.join(state, "state.json"))
        with open(os.path.join(state, "state.json.corrupt"), "w") as f:
            f.write("an earlier corrupt state\n")
        cfg = self.config("no_new_run_after_s = 0;")
        a = self.start(cfg, once=True)
        rc = a.wait(120)
        out = a.output()
        self.assertEqual(rc, 74, out[-3000:])
        path = os.path.join(state, "state.json")
        self.assertIn(f"{path} is a directory, not a state file", out)
        self.assertIn("it is a directory; move it away", out)
        self.assertEqual(self.hook.all(), [])
        self.assertEqual(self.execd(), [])
        with open(os.path.join(state, "state.json.corrupt")) as f:   # left as it was
            self.assertEqual(f.read(), "an earlier corrupt state\n")
        os.rmdir(path)
        rc = self.start(cfg, once=True).wait(120)
        self.assertEqual(rc, 0, self.agents[-1].output()[-3000:])
        self.assertEqual([e["run"] for e in self.hook.delivered()], [recent])

    def test_hostile_run_name_reaches_exec_unchanged(self):
        name = "daily-perf-$(touch PWNED);'\"`id`|&<>*?\\b x"
        shutil.copytree(self.recent[1], os.path.join(self.results, name))
        cfg = self.config("no_new_run_after_s = 0;")
        rc = self.start(cfg, once=True).wait(120)
        self.assertEqual(rc, 0, self.agents[-1].output()[-3000:])
        got = self.execd()
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0]["run"], name)
        self.assertTrue(got[0]["text"].startswith(name + " failed after "))
        self.assertEqual(self.hook.delivered()[0]["run"], name)
        for where in (self.dir, self.results, os.getcwd()):
            self.assertFalse(os.path.exists(os.path.join(where, "PWNED")))

    def test_kill_9_while_events_are_pending(self):
        rng = random.Random(SEED)
        print(f"PERFSHIP_SEED={SEED}")
        for name in (OLD_FAILED, OLD_OK):
            shutil.copytree(os.path.join(DATA_DIR, "loadgen/synth", name),
                            os.path.join(self.results, name))
        recent = [os.path.basename(p) for p in self.recent]
        for p in self.recent:
            shutil.copytree(p, os.path.join(self.results, os.path.basename(p)))
        cfg = self.config("no_new_run_after_s = 0;")
        # The receiver refuses now and then; the agent dies at random moments.
        for _ in range(6):
            self.hook.fail_count = rng.randint(0, 3)
            agent = self.start(cfg)
            time.sleep(rng.uniform(0.05, 1.2))
            agent.kill(signal.SIGKILL)
        self.hook.fail_count = 0
        agent = self.start(cfg)
        wait_until(lambda: {e["run"] for e in self.hook.delivered()} >= set(recent)
                   and {e["run"] for e in self.execd()} >= set(recent),
                   timeout=60, what="every event delivered")
        time.sleep(1)
        self.assertEqual(agent.stop(), 0)
        for got in (self.hook.delivered(), self.execd()):
            ids = {}
            for e in got:
                self.assertEqual(e["event"], "run_failed")
                ids.setdefault(e["run"], set()).add(e["id"])
            # every event at least once, never under two ids, none backfilled
            self.assertEqual(set(ids), set(recent))
            for run, s in ids.items():
                self.assertEqual(s, {alert_id("run_failed", "loadgen", run,
                                              self.marker_ns(run))})
        rows = self.influx.query(self.db, "SELECT * FROM perfship_alert")
        self.assertEqual(sorted({r["run"] for r in rows}), sorted(recent))
        print(f"kill -9 x6: {len(recent)} events; webhook deliveries "
              f"{len(self.hook.delivered())} (attempts {len(self.hook.all())}), exec "
              f"{len(self.execd())}")

    def test_alert_test_command(self):
        cfg = self.config()
        rc, out, err = run_perfship(["-c", cfg, "alert", "test", "--event", "regression"])
        self.assertEqual(rc, 0, out + err)
        self.assertIn("exec " + self.notify + ": delivered: exit 0", out)
        self.assertIn(f"webhook: delivered: http://127.0.0.1:{self.hook.port} answered HTTP 200",
                      out)
        self.assertNotIn(SECRET, out + err)
        got = self.hook.delivered()
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0]["event"], "regression")
        self.assertEqual(got[0]["metrics"][0]["metric"], "cycleAvgDuration")
        self.assertEqual(self.execd()[0]["id"], got[0]["id"])
        # a failing receiver: said, exit 69
        self.hook.fail_count = 1
        rc, out, err = run_perfship(["-c", cfg, "alert", "test"])
        self.assertEqual(rc, 69, out + err)
        self.assertIn("webhook: NOT delivered: ", out)
        self.assertIn("answered HTTP 500: try later", out)
        rc, out, err = run_perfship(["-c", cfg, "alert", "test", "--event", "run_exploded"])
        self.assertEqual(rc, 64)
        self.assertIn("'run_exploded' is not an event", err)
        # Slack's format
        self.hook.reset()
        path = os.path.join(self.dir, "slack.cfg")
        with open(path, "w") as f:
            f.write(f'alerts = {{ webhook = {{ url = "{self.hook.url}"; format = "slack"; }}; }};\n'
                    'tags = { host = "bench-<1>"; };\n')
        rc, out, err = run_perfship(["-c", path, "alert", "test"])
        self.assertEqual(rc, 0, out + err)
        body = self.hook.delivered()[0]
        self.assertEqual(list(body), ["text"])
        self.assertIn("*run_failed* on bench-&lt;1&gt;: perfship alert test", body["text"])
        # no channel
        with open(path, "w") as f:
            f.write("alerts = { };\n")
        rc, out, err = run_perfship(["-c", path, "alert", "test"])
        self.assertEqual(rc, 78)
        self.assertIn("no alert channel is configured", err)


if __name__ == "__main__":
    unittest.main()
