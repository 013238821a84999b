"""A service for months: the agent's memory over many nightly runs.

Nightly-shaped loadgen runs (tests/data/loadgen/gen_loadgen.py: 4 stages,
some failed, a slower revision now and then so verdicts change) are
written one after another into the folder a live `perfship run` watches,
the way the runner writes them: the folder appears with an empty
exit_code, perf.jsonl grows in pieces, then exit_code gets its status.
Alerts go to an exec program, the report page is kept current. After each
run has ended and been judged, the agent's resident size is read from
/proc. What a user would check: the memory after the first runs stays
where it is (docs/benchmarks.md "A year of nightly runs").

PERFSHIP_SOAK=1 (scripts/soak): 200 runs, RSS <= 24 MB at the end and
<= 2 MB growth from run 50 to run 200 (the lows of the runs around each).
The suite's form: 60 runs, the slope of RSS from run 30 on at most two and
a half times that bound's (2 MB / 150 runs = 13.7 KB a run: a short window
reads higher and noisier, see the assertion), in about a minute (before the
fixes it was 400 KB a run). The first 30 runs fill what is meant to fill:
the verdicts' window of runs and the report's window of days (20 days in
the suite, the default 90 in the soak). PERFSHIP_LONGHAUL_RUNS=N overrides the count.
"""
import multiprocessing
import os
import random
import shutil
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import DATA_DIR, Agent, InfluxTestCase, wait_until, write_config  # noqa: E402
from procstat import rss_kb  # noqa: E402

sys.path.insert(0, os.path.join(DATA_DIR, "loadgen"))
import gen_loadgen  # noqa: E402

SOAK = os.environ.get("PERFSHIP_SOAK") == "1"
RUNS = int(os.environ.get("PERFSHIP_LONGHAUL_RUNS", "200" if SOAK else "60"))
STAGE_MINUTES = int(os.environ.get("PERFSHIP_LONGHAUL_STAGE_MINUTES", "12"))
DAY = 86400
# The page shows the runs of its last since_days (90 by default: with a run
# a day it fills by run 90). The suite cannot afford 90 runs before it
# measures, so its page looks back 20 days: the same code, full by run 20.
REPORT_DAYS = 90 if SOAK else 20


def make_run(args):
    """One nightly run into `out`/gen-<i>: (folder, perf.jsonl lines)."""
    out, i, t0 = args
    rng = random.Random(1000 + i)
    outcome = "fail" if i % 9 == 4 else "success"
    sc = gen_loadgen.Scenario(key=f"l{i}", seed=5000 + i, rev_seed=f"night-{i}",
                              start_epoch=t0 + i * DAY, commit_time=t0 + i * DAY - 3600,
                              test_type="nightly", stages=4, stage_minutes=STAGE_MINUTES,
                              slow=(1.12 if (i // 25) % 2 else 1.0) * (1 + rng.uniform(-0.03, 0.03)),
                              outcome=outcome, outcome_stage=2, outcome_frac=0.6)
    sim = gen_loadgen.RunSim(sc)
    sim.run()
    d = os.path.join(out, f"gen-{i:04d}")
    os.makedirs(d)
    return gen_loadgen.write_run(sim, d)


class LongHaul(InfluxTestCase):
    tmp_prefix = "perfship-longhaul-"

    def test_memory_flat_over_nightly_runs(self):
        gen = os.path.join(self.tmp, "gen")
        os.makedirs(gen)
        t0 = int(time.time()) - (RUNS + 2) * DAY
        with multiprocessing.Pool(max(1, min(2, os.cpu_count() or 1))) as pool:
            folders = pool.map(make_run, [(gen, i, t0) for i in range(RUNS)])
        results = os.path.join(self.tmp, "results")
        os.makedirs(results)
        self.influx.create_db("perf")
        notify = os.path.join(self.tmp, "notify")
        with open(notify, "w") as f:
            f.write("#!/bin/sh\ncat > /dev/null\n")
        os.chmod(notify, 0o755)
        cfg = write_config(
            os.path.join(self.tmp, "perfship.cfg"), self.influx.url,
            os.path.join(self.tmp, "state"),
            sources=f'{{ path = "{results}"; format = "loadgen"; }}',
            extra=f"""
watch = {{ rescan_interval_ms = 500; settle_ms = 100; }};
batch = {{ flush_interval_ms = 100; }};
alerts = {{ exec = ["{notify}"]; min_interval_s = 0; no_new_run_after_s = 0; }};
report = {{ path = "{os.path.join(self.tmp, 'report', 'index.html')}"; min_interval_s = 0;
           since_days = {REPORT_DAYS}; }};
""")
        env = None
        if os.environ.get("LONGHAUL_ENV"):
            env = dict(os.environ)
            for kv in os.environ["LONGHAUL_ENV"].split(","):
                k, v = kv.split("=", 1)
                env[k] = v
        agent = Agent(cfg, env=env).start()
        self.addCleanup(agent.kill)
        rss = []
        t_start = time.time()
        for i, src in enumerate(folders):
            name = os.path.basename(src)
            dst = os.path.join(results, name)
            os.makedirs(dst)
            open(os.path.join(dst, "exit_code"), "w").close()
            with open(os.path.join(src, "perf.jsonl"), "rb") as f:
                lines = f.read().splitlines(keepends=True)
            with open(os.path.join(dst, "perf.jsonl"), "wb") as f:
                for k in range(4):   # the run writes its stages one by one
                    f.writelines(lines[k * len(lines) // 4:(k + 1) * len(lines) // 4])
                    f.flush()
                    time.sleep(0.02)
            for extra in ("docker.log",):
                if os.path.exists(os.path.join(src, extra)):
                    shutil.copy(os.path.join(src, extra), dst)
            shutil.copy(os.path.join(src, "exit_code"), os.path.join(dst, "exit_code"))
            wait_until(lambda: self.influx.query(
                "perf", f"SELECT * FROM runs WHERE \"run\" = '{name}' AND \"event\" = 'end'"),
                timeout=300, what=f"run {i + 1}'s end marker")
            time.sleep(0.3)   # judged and reported (the verdict stage's delay)
            rss.append(rss_kb(agent.proc.pid))
            if (i + 1) % 10 == 0:
                print(f"longhaul: run {i + 1}: RSS {rss[-1] / 1024:.1f} MB "
                      f"({time.time() - t_start:.0f} s)", flush=True)
        self.assertEqual(agent.stop(), 0, agent.output()[-3000:])
        # RSS moves by a few hundred KB from one run to the next (a page
        # being made, a batch in flight): a window's low is compared, and
        # the slope over every run from `first` on (least squares), so one
        # busy moment is not growth, and growth is not hidden by one quiet one.
        first = 50 if RUNS >= 200 else max(1, RUNS // 2)
        low = lambda i: min(rss[max(0, i - 3):i + 2])  # noqa: E731
        growth = (low(RUNS - 3) - low(first - 1)) / 1024
        xs = list(range(first - 1, RUNS))
        mx = sum(xs) / len(xs)
        my = sum(rss[x] for x in xs) / len(xs)
        slope = sum((x - mx) * (rss[x] - my) for x in xs) / sum((x - mx) ** 2 for x in xs)
        per_run_bound = 2.0 * 1024 / 150   # 2 MB from run 50 to run 200
        print(f"longhaul: {RUNS} runs: RSS at start {rss[0] / 1024:.1f} MB, after run {first} "
              f"{rss[first - 1] / 1024:.1f} MB, at the end {rss[-1] / 1024:.1f} MB, peak "
              f"{max(rss) / 1024:.1f} MB; growth from run {first} {growth:.2f} MB, "
              f"{slope:.1f} KB a run (bound {per_run_bound:.1f})")
        self.assertLessEqual(rss[-1] / 1024, 24.0)
        # The suite's slope over runs 30-60 measured 11.8-21.9 KB a run on
        # this kind of machine (the later, steadier runs of the 200-run soak
        # average 8 KB), so a short window reads above the 200-run bound and
        # spreads with the machine's load: the suite allows two and a half
        # times it (34 KB a run), still a quarter of the growth it guards
        # against (120-400 KB a run); scripts/soak's 200 runs assert the
        # bound itself.
        slack = 1.0 if RUNS >= 200 else 2.5
        self.assertLessEqual(slope, per_run_bound * slack)
        if RUNS >= 200:
            self.assertLessEqual(growth, 2.0)

if __name__ == "__main__":
    unittest.main()
