"""The live pipeline under AddressSanitizer + UBSan and under valgrind.

One scenario exercises every moving part of `perfship run` -- all five
formats, bursts, a line written in pieces, a bad record, truncation,
rotation, a new folder, server faults through the fault proxy (500, a
dropped connection, a half answer, 413 splitting), SIGHUP reload, SIGTERM
drain -- then `run --once` over the same files. It runs twice:

- the ASan+UBSan build (build-asan/perfship, or PERFSHIP_ASAN_BIN) with
  leak detection: no sanitizer report may appear;
- the normal build under `valgrind --error-exitcode=1 --leak-check=full
  --errors-for-leak-kinds=definite`: no error, no definite leak.

Both must exit 0 after SIGTERM, which includes the agent's own check that
its event loop closed with no handle left open (a failure exits 70), and
the points in InfluxDB must equal what `perfship convert` makes of the
files. A missing (or older than the sources) ASan build, or a missing
valgrind, fails that half with what to run: ctest counts a skip as a pass,
and this is the only place the live agent runs under the sanitizers.
scripts/test builds build-asan before it runs ctest.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultproxy import FaultProxy  # noqa: E402
from harness import (DATA_DIR, PERFSHIP_BIN, SOURCE_DIR, InfluxServer,  # noqa: E402
                     run_perfship, wait_until, write_config)
from pointset import db_points, diff, measurements, parse_lp  # noqa: E402

ASAN_BIN = os.environ.get("PERFSHIP_ASAN_BIN",
                          os.path.join(SOURCE_DIR, "build-asan", "perfship"))
VALGRIND = shutil.which("valgrind")
BASE = 1700000000
SAN_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
               "SUMMARY: UndefinedBehaviorSanitizer", "handles open", "handle still open")


def jline(i, k="a"):
    return '{"ts": %d, "k": "%s", "n": %d, "x": %s}\n' % (BASE + i, k, i, i * 0.5)


def no_backfill(points):
    """A marker's backfill says whether the agent saw the run end (false,
    live) or found it ended (true, as convert does); it is the one field
    that may differ here, and is proven by its own tests."""
    return {k: {f: v for f, v in fs.items() if f != "backfill"}
            if k[0] == "runs" else fs for k, fs in points.items()}


def newest_source_mtime():
    """The newest modification time among the agent's sources and headers
    (and the build description), or 0."""
    newest = 0
    for top in ("agent", "include"):
        for d, _, files in os.walk(os.path.join(SOURCE_DIR, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    newest = max(newest, os.stat(os.path.join(d, f)).st_mtime)
    cml = os.path.join(SOURCE_DIR, "CMakeLists.txt")
    if os.path.exists(cml):
        newest = max(newest, os.stat(cml).st_mtime)
    return newest


def asan_build_problem():
    """Why ASAN_BIN cannot stand for the code under test, or None."""
    if not os.access(ASAN_BIN, os.X_OK):
        return f"no ASan build at {ASAN_BIN}"
    with open(ASAN_BIN, "rb") as f:
        if b"__asan_init" not in f.read():
            return f"{ASAN_BIN} is not built with AddressSanitizer"
    if os.stat(ASAN_BIN).st_mtime < newest_source_mtime():
        # The source changed since: the scenario would pass or fail for
        # code that is no longer there.
        return f"{ASAN_BIN} is older than the sources (not rebuilt since they changed)"
    return None


class Scenario:
    """Runs the scenario with `prefix` (e.g. valgrind ...) in front of `binary`."""

    def __init__(self, test, binary, prefix=(), env=None, slow=1.0):
        self.t = test
        self.binary = binary
        self.prefix = list(prefix)
        self.env = dict(os.environ, **(env or {}))
        self.slow = slow

    def run(self):
        t = self.t
        tmp = tempfile.mkdtemp(prefix="perfship-san-")
        try:
            return self._run(tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _sources(self, tmp):
        d = {k: os.path.join(tmp, k) for k in ("jsonl", "lp", "loadgen", "dss", "locust")}
        for p in d.values():
            os.mkdir(p)
        subprocess.run([sys.executable, os.path.join(DATA_DIR, "loadgen", "gen_loadgen.py"),
                        "--out", d["loadgen"], "--only", "a,b"], check=True,
                       capture_output=True)
        for name in ("baseline_single", "datastores_with_errors"):
            os.mkdir(os.path.join(d["dss"], name))
            shutil.copy(os.path.join(DATA_DIR, "dss", "synth", name, "results.json"),
                        os.path.join(d["dss"], name))
        for f in os.listdir(os.path.join(DATA_DIR, "dss", "synth", "locust_isa")):
            shutil.copy(os.path.join(DATA_DIR, "dss", "synth", "locust_isa", f), d["locust"])
        return d

    def _run(self, tmp):
        t = self.t
        d = self._sources(tmp)
        srcs = (f'{{ path = "{d["jsonl"]}"; format = "jsonl"; measurement = "m"; '
                f'time_key = "ts"; tag_keys = ["k"]; types = {{ n = "integer"; }}; }},\n'
                f'{{ path = "{d["lp"]}"; format = "lp"; }},\n'
                f'{{ path = "{d["loadgen"]}"; format = "loadgen"; }},\n'
                f'{{ path = "{d["dss"]}"; format = "dss-bench"; }},\n'
                f'{{ path = "{d["locust"]}"; format = "locust"; }}')
        extra = ("batch = { flush_interval_ms = 100; max_points = 400; };\n"
                 "watch = { rescan_interval_ms = 700; settle_ms = 300; };\n"
                 "selfstats = { interval_ms = 1000; };\n")
        proxy = t.proxy
        proxy.clear_rules()
        proxy.add_rule("pass", path="/query")
        proxy.add_rule("status", code=500, count=1)
        proxy.add_rule("drop", count=1)
        proxy.add_rule("half", count=1)
        proxy.add_rule("status", code=413, count=1, min_body=8192)
        db = "san_" + t._testMethodName
        cfg = write_config(os.path.join(tmp, "p.cfg"), proxy.url, os.path.join(tmp, "state"),
                           sources=srcs, extra=extra, database=db)
        log_path = os.path.join(tmp, "agent.log")
        log = open(log_path, "ab")
        t0 = time.time()
        proc = subprocess.Popen(self.prefix + [self.binary, "-c", cfg, "run"],
                                stdout=log, stderr=subprocess.STDOUT, env=self.env)

        def output():
            with open(log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        try:
            wait_until(lambda: "starting" in output(), 60 * self.slow, what="agent start")
            jl = os.path.join(d["jsonl"], "a.jsonl")
            for burst in range(4):
                with open(jl, "a") as f:
                    f.write("".join(jline(i) for i in range(burst * 300, burst * 300 + 300)))
                time.sleep(0.2)
            piece = jline(5000)
            for part in (piece[:7], piece[7:30], piece[30:]):
                with open(jl, "a") as f:
                    f.write(part)
                time.sleep(0.15)
            with open(jl, "a") as f:
                f.write('{"ts": 1, "broken\n' + jline(5001))
            with open(os.path.join(d["lp"], "x.lp"), "w") as f:
                f.write("".join(f"lpm,t=a v={i}i {(BASE + i) * 10**9}\n" for i in range(200)))
            # truncation (then rewritten), rotation (renamed away, new file)
            tr = os.path.join(d["jsonl"], "t.jsonl")
            with open(tr, "w") as f:
                f.write("".join(jline(i, "t") for i in range(50)))
            time.sleep(0.8 * self.slow)
            with open(tr, "w") as f:
                f.write("".join(jline(i, "t") for i in range(100, 110)))
            ro = os.path.join(d["jsonl"], "r.jsonl")
            with open(ro, "w") as f:
                f.write("".join(jline(i, "r") for i in range(40)))
            time.sleep(0.8 * self.slow)
            os.rename(ro, ro + ".1")
            with open(ro, "w") as f:
                f.write("".join(jline(i, "r") for i in range(40, 60)))
            os.mkdir(os.path.join(d["jsonl"], "later"))
            with open(os.path.join(d["jsonl"], "later", "l.jsonl"), "w") as f:
                f.write("".join(jline(i, "l") for i in range(30)))
            proc.send_signal(signal.SIGHUP)

            # What the files hold now, plus what t.jsonl held before it was
            # truncated (those points were read and must stay).
            hist = os.path.join(tmp, "history")
            os.mkdir(hist)
            with open(os.path.join(hist, "t.jsonl"), "w") as f:
                f.write("".join(jline(i, "t") for i in range(50)))

            def files(top):
                return sorted(os.path.join(r, f) for r, _, fs in os.walk(top) for f in fs)
            want = {}
            for fmt, args in (("jsonl", files(d["jsonl"]) + files(hist)),
                              ("lp", files(d["lp"])), ("loadgen", [d["loadgen"]]),
                              ("dss-bench", files(d["dss"])), ("locust", [f for f in files(d["locust"])
                                          if not f.endswith("_exceptions.csv")])):
                rc, out, err = run_perfship(["-c", cfg, "convert", "-f", fmt] + args)
                t.assertIn(rc, (0, 65), err)
                parse_lp(out, into=want)
            names = measurements(want)
            last = {}

            def arrived():
                last["d"] = diff(no_backfill(want),
                                 no_backfill(db_points(t.influx, db, names)))
                return not last["d"]
            try:
                wait_until(arrived, 120 * self.slow, interval=1.0, what="the point set")
            except AssertionError:
                t.fail("point sets differ:\n" + "\n".join(last["d"]) +
                       "\n--- log:\n" + output()[-3000:])
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(120 * self.slow)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()
        out = output()
        for m in SAN_MARKERS:
            t.assertNotIn(m, out, out[-6000:])
        t.assertEqual(rc, 0, out[-6000:])
        t.assertIn(f"{jl}:", out)  # the broken record was reported
        live_s = time.time() - t0

        # --once over the same folders from scratch (new state).
        shutil.rmtree(os.path.join(tmp, "state"))
        t1 = time.time()
        p = subprocess.run(self.prefix + [self.binary, "-c", cfg, "run", "--once"],
                           capture_output=True, text=True, env=self.env,
                           timeout=300 * self.slow)
        for m in SAN_MARKERS:
            t.assertNotIn(m, p.stderr, p.stderr[-6000:])
        t.assertEqual(p.returncode, 65, p.stderr[-6000:])  # the broken record
        t.assertEqual(diff(no_backfill(want), no_backfill(db_points(t.influx, db, names))), [])
        faults = [r.action for r in proxy.requests if r.action != "pass"]
        return len(want), live_s, time.time() - t1, faults


class Sanitizers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.influx = InfluxServer().start()
        cls.proxy = FaultProxy(cls.influx.port, seed=11).start()

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.influx.close()

    def test_asan_ubsan_build(self):
        problem = asan_build_problem()
        if problem:
            self.fail(f"{problem}; build it with\n"
                      f"  cmake -S {SOURCE_DIR} -B {SOURCE_DIR}/build-asan "
                      "-DCMAKE_BUILD_TYPE=Debug -DPERFSHIP_SANITIZE=ON\n"
                      f"  cmake --build {SOURCE_DIR}/build-asan -j2\n"
                      "(scripts/test does both), or point PERFSHIP_ASAN_BIN at an ASan build")
        env = {"ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0:halt_on_error=1",
               "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
        n, live, once, faults = Scenario(self, ASAN_BIN, env=env, slow=2).run()
        print(f"\nASan+UBSan: {n} points exact; live run {live:.1f} s, --once {once:.1f} s; "
              f"faults {faults}; no report, loop closed clean")

    def test_valgrind(self):
        if not VALGRIND:
            self.fail("valgrind is not installed (scripts/deps --test installs it)")
        prefix = [VALGRIND, "-q", "--error-exitcode=1", "--leak-check=full",
                  "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite"]
        n, live, once, faults = Scenario(self, PERFSHIP_BIN, prefix=prefix, slow=6).run()
        print(f"\nvalgrind: {n} points exact; live run {live:.1f} s, --once {once:.1f} s; "
              f"faults {faults}; no error, no definite leak")


if __name__ == "__main__":
    unittest.main(verbosity=2)
