"""Crash loop: kill -9 the agent at random moments while results grow.

A loadgen run (tests/data/loadgen/gen_loadgen.py --only a) is written into
a watched results folder the way the runner writes it: perf.jsonl cut at
random byte positions (so the agent often sees half a line), exit_code
created empty first and filled last, as the queue scripts do. JSONL files
are appended to at the same time: one only appears half-way, one is
rotated by rename and one by copytruncate (copies left in the folder). Meanwhile the agent is killed with SIGKILL at random
moments and restarted. At the end the FULL point set in InfluxDB -- every
measurement, tags, time and every field value -- must equal what
`perfship convert` makes of the final files with the same parsers: nothing
lost, nothing doubled, nothing else.

The moments are drawn from a seeded RNG: PERFSHIP_SEED=N replays a run
(the seed is printed). PERFSHIP_SOAK=1 makes it long (200 kills, bigger
input). A counting proxy in front of the real InfluxDB measures how many
points were sent more than once (re-sent after a kill, before their offset
was committed): those overwrite themselves, which the set comparison
proves.
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultproxy import FaultProxy  # noqa: E402
from harness import (AGENT_OWN, DATA_DIR, Agent, InfluxServer, run_perfship,  # noqa: E402
                     wait_until, write_config)
from harness import scratch_dir  # noqa: E402
from pointset import db_points, diff, parse_lp  # noqa: E402

SOAK = os.environ.get("PERFSHIP_SOAK") == "1"
SEED = int(os.environ.get("PERFSHIP_SEED", "20261129"))
KILLS = 200 if SOAK else 20
JSONL_LINES = 60000 if SOAK else 4000
RUN = "daily-perf-9eb37164f6f7"
BASE = 1700000000

# The run tracker's lifecycle markers depend on when the agent first saw the
# run (backfill=true for convert, false live); everything else must match.
MARKER_ONLY_FIELDS = {"backfill"}


def jsonl_line(i, tag):
    return ('{"ts": %d.%03d, "k": "%s", "n": %d, "x": %r, "s": "v%d"}\n'
            % (BASE + i // 1000, i % 1000, tag, i, i * 0.1, i))


class CrashLoop(unittest.TestCase):
    def setUp(self):
        self.tmp = scratch_dir(self, "perfship-crash-")
        self.influx = InfluxServer().start()
        self.proxy = FaultProxy(self.influx.port, seed=SEED).start()
        self.agents = []

    def tearDown(self):
        for a in self.agents:
            a.kill()
        self.proxy.stop()
        self.influx.close()
        if not self._ok():
            print("--- last agent log:\n" + self.agents[-1].output()[-4000:]
                  if self.agents else "")

    def _ok(self):
        res = getattr(self._outcome, "result", None)
        return res is None or not any(t is self for t, _ in res.failures + res.errors)

    def _writer(self, rng, lg_src, lg_dst, js_dir, duration, done):
        """Writes the run and the JSONL files over about `duration` s."""
        with open(os.path.join(lg_src, "perf.jsonl"), "rb") as f:
            perf = f.read()
        cuts = sorted(rng.sample(range(1, len(perf)), 300 if not SOAK else 3000))
        cuts = [0] + cuts + [len(perf)]
        js_per_step = JSONL_LINES // (len(cuts) - 1) + 1
        step_sleep = duration / (len(cuts) - 1)
        os.makedirs(lg_dst)
        # The queue script creates exit_code empty when the run starts and
        # fills it once the runner's container has exited.
        open(os.path.join(lg_dst, "exit_code"), "w").close()
        for name in ("docker.log", "chain-stage-0.slog.gz"):
            shutil.copy(os.path.join(lg_src, name), lg_dst)
        n = 0
        with open(os.path.join(lg_dst, "perf.jsonl"), "ab") as pf:
            for a, b in zip(cuts, cuts[1:]):
                pf.write(perf[a:b])
                pf.flush()
                for _ in range(js_per_step):
                    if n >= JSONL_LINES:
                        break
                    if n == JSONL_LINES // 3:
                        # rename rotation inside the watched folder: the
                        # renamed file must not be read again as new
                        os.rename(os.path.join(js_dir, "b.jsonl"),
                                  os.path.join(js_dir, "b.jsonl.1"))
                    if n == 2 * JSONL_LINES // 3:
                        # copytruncate, the copy also in the watched folder
                        a_path = os.path.join(js_dir, "a.jsonl")
                        shutil.copy(a_path, a_path + ".1")
                        os.truncate(a_path, 0)
                    # third file appears half-way; tags alternate
                    f = "late.jsonl" if n >= JSONL_LINES // 2 and n % 3 == 0 else \
                        ("a.jsonl" if n % 2 else "b.jsonl")
                    with open(os.path.join(js_dir, f), "a") as jf:
                        jf.write(jsonl_line(n, f[0]))
                    n += 1
                time.sleep(step_sleep * rng.uniform(0.2, 1.8))
        # the queue script writes exit_code after the runner has exited
        with open(os.path.join(lg_dst, "exit_code"), "w") as f:
            f.write("0\n")
        done.set()

    def test_sigkill_loop_loses_and_doubles_nothing(self):
        rng = random.Random(SEED)
        print(f"\ncrash loop: PERFSHIP_SEED={SEED} ({KILLS} kills; "
              f"{'soak' if SOAK else 'CI'} size)")
        gen = os.path.join(self.tmp, "gen")
        args = [sys.executable, os.path.join(DATA_DIR, "loadgen", "gen_loadgen.py"),
                "--out", gen, "--only", "a"]
        if SOAK:
            args += ["--stage-minutes", "60"]
        subprocess.run(args, check=True, capture_output=True)
        lg_root = os.path.join(self.tmp, "results")
        js_dir = os.path.join(self.tmp, "jsonl")
        os.makedirs(lg_root)
        os.makedirs(js_dir)
        state = os.path.join(self.tmp, "state")
        sources = (f'{{ path = "{lg_root}"; format = "loadgen"; }},\n'
                   f'{{ path = "{js_dir}"; format = "jsonl"; measurement = "m"; '
                   f'time_key = "ts"; tag_keys = ["k"]; types = {{ n = "integer"; }}; }}')
        extra = ("batch = { flush_interval_ms = 50; max_points = 300; };\n"
                 "watch = { rescan_interval_ms = 1000; settle_ms = 200; };\n"
                 "selfstats = { interval_ms = 600000; };\n")
        cfg = write_config(os.path.join(self.tmp, "p.cfg"), self.proxy.url, state,
                           sources=sources, extra=extra, database="perf")

        duration = 120.0 if SOAK else 22.0
        done = threading.Event()
        w = threading.Thread(target=self._writer, daemon=True, args=(
            random.Random(SEED + 1), os.path.join(gen, RUN),
            os.path.join(lg_root, RUN), js_dir, duration, done))
        w.start()
        kill_gaps = [rng.uniform(0.05, 2 * duration / KILLS) for _ in range(KILLS)]
        t0 = time.time()
        kills = 0
        for gap in kill_gaps:
            a = Agent(cfg, log_path=os.path.join(self.tmp, "agent.log"))
            self.agents.append(a)
            a.start()
            time.sleep(gap)
            a.kill(signal.SIGKILL)
            kills += 1
            time.sleep(rng.uniform(0.0, 0.2))
        w.join(duration * 3)
        self.assertTrue(done.is_set(), "the writer did not finish")
        a = Agent(cfg, log_path=os.path.join(self.tmp, "agent.log"))
        self.agents.append(a)
        a.start()

        # What the files hold, by perfship's own parsers.
        rc, out, err = run_perfship(["-c", cfg, "convert", "-f", "loadgen",
                                     os.path.join(lg_root, RUN)])
        self.assertEqual(rc, 0, err)
        want = parse_lp(out)
        js_files = sorted(os.path.join(js_dir, f) for f in os.listdir(js_dir))
        rc, out, err = run_perfship(["-c", cfg, "convert", "-f", "jsonl"] + js_files)
        self.assertEqual(rc, 0, err)
        parse_lp(out, into=want)
        self.assertEqual(sum(1 for k in want if k[0] == "m"), JSONL_LINES)
        names = sorted({k[0] for k in want})

        def strip(pts):
            return {k: {f: v for f, v in fs.items() if f not in MARKER_ONLY_FIELDS}
                    for k, fs in pts.items()}
        want = strip(want)
        state_of = {}

        def arrived():
            got = strip(db_points(self.influx, "perf", names))
            state_of["diff"] = diff(want, got)
            return not state_of["diff"]
        try:
            wait_until(arrived, 90, interval=1.0, what="the exact point set")
        except AssertionError:
            self.fail(f"seed {SEED}: point sets differ after {kills} kills:\n" +
                      "\n".join(state_of["diff"]))
        # Nothing else: no measurement the files do not explain (the
        # agent's own counters excepted).
        shown = {r["name"] for r in self.influx.query("perf", "SHOW MEASUREMENTS")}
        self.assertEqual(shown - set(names) - AGENT_OWN, set())
        self.assertEqual(a.stop(), 0)
        elapsed = time.time() - t0

        sent = 0
        for r in self.proxy.requests:
            if r.path == "/write" and r.status == 204:
                sent += sum(1 for ln in r.body.split(b"\n") if ln.strip())
        print(f"crash loop: {kills} SIGKILLs in {elapsed:.0f} s; {len(want)} distinct "
              f"points expected and found exactly; {sent} points acknowledged in "
              f"total, so {sent - len(want)} sent again -- after kills, and the "
              f"copytruncate copy read as a new file -- each overwrote itself")


if __name__ == "__main__":
    unittest.main(verbosity=2)
