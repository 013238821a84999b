"""perfship run on the benchmark formats, end to end against real servers.

What test_pipeline.py proves already (bursts, rotation, kill -9, a run that
stalls then ends, documents settled once per content, Locust files equal to
convert's after a restart) is not repeated. This module adds:

- a backfill: `run --once` over a results folder of 30 ended daily runs and
  one still running, with its progress line on a terminal, its periodic
  progress in a log, its summary, and its closing self-metrics point;
- a loadgen run written line by line while the agent watches, compared
  point for point with the same folder ingested from scratch;
- a DSS results.json overwritten by a second run, touched, and rewritten
  with identical contents; a Locust history arriving row by row and a
  failures file rewritten mid-run;
- the InfluxDB v2 write path through the agent, against VictoriaMetrics
  (which accepts /api/v2/write and ignores token, org and bucket, so their
  shape is asserted at the proxy in front of it).
"""
import hashlib
import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from faultproxy import FaultProxy  # noqa: E402
from harness import (AGENT_OWN, DATA_DIR, PERFSHIP_BIN, Agent, InfluxServer, VictoriaMetrics, free_port,  # noqa: E402
                     or_empty, run_perfship, wait_until, write_config)
from harness import scratch_dir  # noqa: E402

GEN = os.path.join(DATA_DIR, "loadgen", "gen_loadgen.py")
DSS = os.path.join(DATA_DIR, "dss", "synth")
VICTORIA = VictoriaMetrics.BIN

INFLUX = None


def setUpModule():
    global INFLUX
    INFLUX = InfluxServer().start()


def tearDownModule():
    INFLUX.close()


def groups(watch=None, other=""):
    w = {"rescan_interval_ms": 500, "settle_ms": 300}
    w.update(watch or {})
    ws = " ".join(f"{k} = {v};" for k, v in w.items())
    return (f"batch = {{ flush_interval_ms = 100; }};\nwatch = {{ {ws} }};\n"
            f"selfstats = {{ interval_ms = 600000; }};\n{other}")


def dump(db, measurements=None, drop=()):
    """Every point of every measurement (or of `measurements`), as sorted
    tuples of (column, repr(value)), the fields in `drop` left out."""
    names = measurements or [r["name"] for r in INFLUX.query(db, "SHOW MEASUREMENTS")]
    out = {}
    for m in names:
        if m in AGENT_OWN:
            continue
        rows = INFLUX.query(db, f'SELECT * FROM "{m}" GROUP BY *')
        out[m] = sorted(tuple(sorted((k, repr(v)) for k, v in r.items() if k not in drop))
                        for r in rows)
    return out


def query(db, q):
    """Rows, or [] while the database does not exist yet (a measurement
    that does not exist yet gives no rows by itself)."""
    return or_empty(INFLUX.query, db, q)


def convert_into(db, cfg, fmt, paths):
    """What `perfship convert` makes of `paths`, written into `db`."""
    rc, lp, err = run_perfship(["-c", cfg, "convert", "-f", fmt] + list(paths))
    if rc != 0:
        raise AssertionError(f"convert {paths}: {rc}\n{err}")
    INFLUX.create_db(db)
    st, body = INFLUX.write(db, lp)
    if st != 204:
        raise AssertionError(f"write of convert's output: {st} {body!r}")
    return lp


def generate(out, only, *extra):
    subprocess.run([sys.executable, GEN, "--out", out, "--only", only, "--stages", "3",
                    "--stage-minutes", "5", *extra], check=True, stdout=subprocess.DEVNULL)
    return {name: os.path.join(out, name) for name in os.listdir(out)}


def run_on_a_terminal(args, timeout=60):
    """Runs perfship with stdin, stdout and stderr on a pseudo-terminal;
    returns (exit code, everything it printed, seconds taken)."""
    master, slave = pty.openpty()
    t0 = time.monotonic()
    p = subprocess.Popen([PERFSHIP_BIN] + args, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    out = b""
    try:
        while True:
            if time.monotonic() - t0 > timeout:
                p.kill()
                raise AssertionError("perfship on a terminal did not finish:\n" +
                                     out.decode("utf-8", "replace")[-3000:])
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        rc = p.wait(30)
    finally:
        os.close(master)
    return rc, out.decode("utf-8", "replace"), time.monotonic() - t0


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = scratch_dir(self, "perfship-live-")
        self.src = os.path.join(self.tmp, "src")
        os.mkdir(self.src)
        self.db = "t_" + self._testMethodName
        self.agents = []

    def tearDown(self):
        failed = hasattr(self, "_outcome") and not self._ok()
        for a in self.agents:
            a.kill()
            if failed:
                try:
                    print(f"--- agent log {a.log_path}:\n" + a.output()[-4000:])
                except OSError:
                    pass

    def _ok(self):
        res = getattr(self._outcome, "result", None)
        if res is None:
            return True
        return not any(t is self for t, _ in res.failures + res.errors)

    def config(self, fmt, name="p.cfg", db=None, state="state", url=None, extra=None,
               influx_extra="", path=None):
        src = '{ path = "%s"; format = "%s"; }' % (path or self.src, fmt)
        return write_config(os.path.join(self.tmp, name), url or INFLUX.url,
                            os.path.join(self.tmp, state), sources=src,
                            extra=groups() if extra is None else extra,
                            database=db or self.db, influx_extra=influx_extra)

    def agent(self, cfg):
        a = Agent(cfg)
        self.agents.append(a)
        return a.start()


PROGRESS = re.compile(r"runs (\d+)/(\d+), files (\d+)/(\d+): (\d+) points written "
                      r"\((\d+)/s\), (\d+) pending, (\d+) s")
SUMMARY = re.compile(r"done: (\d+) files, (\d+) run folders, (\d+) points written, "
                     r"(\d+) rejected, in ([\d.]+) s \((\d+) points/s\)")


class BackfillTests(Base):
    def test_a_month_of_daily_runs_with_progress_summary_and_heartbeat(self):
        gen = generate(os.path.join(self.tmp, "gen"), "a,c")
        ended = gen["daily-perf-9eb37164f6f7"]
        running = gen["daily-perf-31400797d904"]
        results = os.path.join(self.tmp, "results")
        os.mkdir(results)
        days = ["daily-perf-" + hashlib.sha1(b"day %d" % d).hexdigest()[:12]
                for d in range(30)]
        for name in days:
            shutil.copytree(ended, os.path.join(results, name))
        today = "daily-perf-" + hashlib.sha1(b"today").hexdigest()[:12]
        shutil.copytree(running, os.path.join(results, today))
        for f in os.listdir(os.path.join(results, today)):  # written to just now
            os.utime(os.path.join(results, today, f))

        cfg = self.config("loadgen", path=results)
        rc, out, took = run_on_a_terminal(["-c", cfg, "run", "--once"])
        self.assertEqual(rc, 0, out)
        print(f"\nbackfill of 31 run folders on a terminal: {took:.2f} s")
        self.assertLess(took, 20)  # the running run was not waited for
        # The status line is redrawn in place (\r, erase line) with counts...
        self.assertIn("\r\x1b[Kruns ", out)
        progress = [tuple(int(x) for x in m) for m in PROGRESS.findall(out)]
        self.assertTrue(progress, out[-3000:])
        for runs_done, runs, files_done, files, *_ in progress:
            self.assertEqual((runs, files), (31, 31))
            self.assertLessEqual(runs_done, runs)
            self.assertLessEqual(files_done, files)
        written = [p[4] for p in progress]
        self.assertEqual(written, sorted(written))
        self.assertEqual(progress[-1][:4], (31, 31, 31, 31))
        self.assertEqual(progress[-1][6], 0)  # nothing pending at the end
        # ...and a summary line closes it.
        m = SUMMARY.search(out)
        self.assertIsNotNone(m, out[-3000:])
        files, runs, points, rejected = (int(x) for x in m.groups()[:4])
        self.assertEqual((files, runs, rejected), (31, 31, 0))
        self.assertEqual(points, progress[-1][4])

        # Every run's data is what convert makes of it: the in-progress run
        # as far as it goes (shipped without waiting for it to end).
        conv = self.db + "_convert"
        convert_into(conv, cfg, "loadgen", [results])
        got, want = dump(self.db), dump(conv)
        self.assertEqual(sorted(got), sorted(want))
        for m in want:
            self.assertEqual(got[m], want[m], m)
        marks = {}
        for r in INFLUX.query(self.db, "SELECT event, status, backfill FROM runs GROUP BY run"):
            marks.setdefault(r["run"], []).append((r["event"], r["status"], r["backfill"]))
        self.assertEqual(sorted(marks), sorted(days + [today]))
        for name in days:
            self.assertEqual(sorted(marks[name]), [("end", "success", True),
                                                   ("start", "running", True)], name)
        self.assertEqual(marks[today], [("start", "running", False)])
        rows = INFLUX.query(self.db, "SELECT status FROM loadgen_run GROUP BY run")
        self.assertEqual(sorted((r["run"], r["status"]) for r in rows),
                         sorted((name, "success") for name in days))

        # The heartbeat: one perfship point, sent after everything else was
        # acknowledged (so it counts every point but itself).
        beat = INFLUX.query(self.db, "SELECT * FROM perfship")
        self.assertEqual(len(beat), 1)
        self.assertEqual(beat[0]["points_written"], points - 1)
        self.assertEqual(beat[0]["files_watched"], 31)
        self.assertEqual(beat[0]["pending_points"], 0)
        self.assertEqual(beat[0]["records_rejected"], 0)

        # Not on a terminal (a journal, a CI log): no status line, an info
        # line every 10 s instead, and the same summary. The first write is
        # held for 10.5 s so exactly one progress line is due.
        other = self.db + "_log"
        with FaultProxy(upstream_port=INFLUX.port) as proxy:
            proxy.add_rule("delay", seconds=10.5, count=1, path="/write")
            cfg2 = self.config("loadgen", name="log.cfg", db=other, state="state-log",
                               path=results, url=proxy.url,
                               influx_extra="timeout_ms = 30000;")
            t0 = time.monotonic()
            rc, out, err = run_perfship(["-c", cfg2, "run", "--once"], timeout=90)
            took = time.monotonic() - t0
        self.assertEqual(rc, 0, err)
        self.assertGreater(took, 10)
        self.assertNotIn("\r", err)
        self.assertNotIn("\x1b", err)
        lines = [ln for ln in err.splitlines() if "info pipeline: progress: " in ln]
        self.assertEqual(len(lines), 1, err[-3000:])
        p = PROGRESS.search(lines[0])
        self.assertEqual((int(p.group(2)), int(p.group(4))), (31, 31))
        # The held request (data or markers) keeps a file or a run from done.
        self.assertLess(min(int(p.group(1)), int(p.group(3))), 31, lines[0])
        m = SUMMARY.search(err)
        self.assertIsNotNone(m, err[-3000:])
        self.assertEqual(tuple(int(x) for x in m.groups()[:4])[:2], (31, 31))
        self.assertEqual(int(m.group(4)), 0)
        # The data is the same; a run judged before its slog was read and
        # again with its growth rewrites the verdicts that changed, so the
        # count may differ by verdict points only, never by data
        # (docs/verdicts.md "Kernel growth across revisions").
        verdicts = INFLUX.count(self.db, "perfship_verdict")
        self.assertLessEqual(abs(int(m.group(3)) - points), verdicts)
        self.assertEqual(dump(other), got)

        # Ingested again: nothing is sent twice, only the heartbeat.
        rc, out, err = run_perfship(["-c", cfg, "run", "--once"], timeout=60)
        self.assertEqual(rc, 0, err)
        m = SUMMARY.search(err)
        self.assertEqual(tuple(int(x) for x in m.groups()[:4]), (31, 31, 1, 0))
        self.assertEqual(len(INFLUX.query(self.db, "SELECT * FROM perfship")), 2)
        self.assertEqual(dump(self.db), got)


    def test_a_heartbeat_that_never_lands_does_not_change_the_verdict(self):
        """The data is acknowledged, the closing self-metrics point is
        refused for good: --once gives up on it after the deadline and
        exits 0, the data's verdict, with a warning."""
        with open(os.path.join(self.src, "a.jsonl"), "w") as f:
            for i in range(50):
                f.write('{"ts": %d, "k": "a", "n": %d}\n' % (1700000000 + i, i))
        with FaultProxy(upstream_port=INFLUX.port) as proxy:
            proxy.add_rule("pass", min_body=1000)  # the data batch
            proxy.add_rule("status", code=503, path="/write")  # the small heartbeat
            src = ('{ path = "%s"; format = "jsonl"; measurement = "m"; time_key = "ts"; '
                   'tag_keys = ["k"]; types = { n = "integer"; }; }' % self.src)
            cfg = write_config(os.path.join(self.tmp, "hb.cfg"), proxy.url,
                               os.path.join(self.tmp, "state"), sources=src,
                               extra=groups(), database=self.db,
                               influx_extra="unreachable_deadline_s = 2;")
            rc, _, err = run_perfship(["-c", cfg, "run", "--once"], timeout=60)
            refused = [r for r in proxy.requests if r.status == 503]
        self.assertEqual(rc, 0, err)
        self.assertTrue(refused and all(r.body.startswith(b"perfship,") for r in refused))
        self.assertIn("the closing self-metrics point was not acknowledged", err)
        self.assertIn("done: 1 files, 50 points written, 0 rejected", err)
        rows = INFLUX.query(self.db, "SELECT n FROM m")
        self.assertEqual(sorted(r["n"] for r in rows), list(range(50)))
        self.assertEqual(query(self.db, "SELECT * FROM perfship"), [])


class LoadgenLiveTests(Base):
    def test_run_written_line_by_line_equals_the_same_run_from_scratch(self):
        gen = generate(os.path.join(self.tmp, "gen"), "a")
        name, made = next(iter(gen.items()))
        run = os.path.join(self.src, name)
        os.mkdir(run)
        # The queue creates exit_code empty; the runner's companion files
        # are there from the start; perf.jsonl grows line by line.
        for f in os.listdir(made):
            if f not in ("perf.jsonl", "exit_code"):
                shutil.copy(os.path.join(made, f), run)
        open(os.path.join(run, "exit_code"), "w").close()
        with open(os.path.join(made, "perf.jsonl")) as f:
            lines = f.readlines()
        cfg = self.config("loadgen")
        a = self.agent(cfg)

        def marks():
            return sorted((r["event"], r["status"], r["backfill"]) for r in
                          query(self.db, "SELECT event, status, backfill FROM runs"))

        def streamed():
            rows = query(self.db, "SELECT count(*) FROM /loadgen_.*/")
            return sum(max(v for k, v in r.items() if k.startswith("count") and
                           isinstance(v, int)) for r in rows)

        perf = open(os.path.join(run, "perf.jsonl"), "w")
        half = len(lines) // 2
        for ln in lines[:half]:
            perf.write(ln)
            perf.flush()
            time.sleep(0.01)
        # The lifecycle shows while the run is going: its start, its events.
        wait_until(lambda: marks() == [("start", "running", False)], 10, what="start marker")
        wait_until(lambda: streamed() > 0, 10, what="streamed points")
        for ln in lines[half:-1]:
            perf.write(ln)
            perf.flush()
            time.sleep(0.01)
        # The final line (perf-finish) is appended last, in two writes: half
        # a line is never read.
        last = lines[-1]
        self.assertIn('"perf-finish"', last)
        perf.write(last[:len(last) // 2])
        perf.flush()
        time.sleep(0.6)
        self.assertEqual(query(self.db, "SELECT * FROM loadgen_run"), [])
        perf.write(last[len(last) // 2:])
        perf.close()
        wait_until(lambda: query(self.db, "SELECT * FROM loadgen_run"), 10,
                   what="the run's summary row")
        time.sleep(0.6)  # exit_code is still empty: the run has not ended
        self.assertEqual(marks(), [("start", "running", False)])
        with open(os.path.join(run, "exit_code"), "w") as f:
            f.write("0\n")
        wait_until(lambda: ("end", "success", False) in marks(), 10, what="end marker")
        self.assertEqual(a.stop(), 0)
        self.assertEqual(marks(), [("end", "success", False), ("start", "running", False)])

        # The same folder from scratch (another state, another database).
        scratch = self.db + "_scratch"
        cfg2 = self.config("loadgen", name="scratch.cfg", db=scratch, state="state2")
        rc, _, err = run_perfship(["-c", cfg2, "run", "--once"], timeout=60)
        self.assertEqual(rc, 0, err)
        # Identical points, markers at the same times; only `backfill`
        # tells a watched run from one found ended.
        live, again = dump(self.db, drop=("backfill",)), dump(scratch, drop=("backfill",))
        self.assertEqual(sorted(live), sorted(again))
        for m in again:
            self.assertEqual(live[m], again[m], m)
        self.assertGreater(sum(len(v) for v in live.values()), 100)
        self.assertEqual(sorted(r["backfill"] for r in INFLUX.query(scratch,
                                                                     "SELECT * FROM runs")),
                         [True, True])
        starts = INFLUX.query(self.db, "SELECT * FROM runs WHERE event = 'start'")
        self.assertEqual(len(starts), 1)


class DocumentLiveTests(Base):
    def test_overwritten_results_json_is_a_second_run(self):
        cfg = self.config("dss-bench")
        a = self.agent(cfg)
        # Files there at the first scan are backfills; these are live runs.
        wait_until(lambda: "starting" in a.output(), 10, what="the agent to start")
        time.sleep(0.5)  # the first scan follows "starting" at once
        bench = os.path.join(self.src, "bench-1")
        os.mkdir(bench)
        doc = os.path.join(bench, "results.json")
        with open(os.path.join(DSS, "baseline_single", "results.json"), "rb") as f:
            first = f.read()
        with open(os.path.join(DSS, "datastores_with_errors", "results.json"), "rb") as f:
            second = f.read()
        now = int(time.time())
        t1, t2, t3 = now - 7200, now - 3600, now - 1800
        measurements = ["dss_bench", "dss_bench_target", "runs"]
        expect = self.db + "_convert"

        def runs():
            return sorted(r["time"] for r in query(self.db, "SELECT * FROM runs"))

        # The first run: written elsewhere, then moved into place.
        tmp = os.path.join(bench, ".results.json.tmp")
        with open(tmp, "wb") as f:
            f.write(first)
        os.utime(tmp, (t1, t1))
        os.rename(tmp, doc)
        wait_until(lambda: runs() == [t1 * 10**9], 10, what="the first run's marker")
        convert_into(expect, cfg, "dss-bench", [doc])
        # The agent saw this run end: backfill=false (convert: true).
        wait_until(lambda: dump(self.db, measurements, drop=("backfill",)) ==
                   dump(expect, measurements, drop=("backfill",)), 10,
                   what="the first run's points")

        # The next run overwrites the file in place: a second run, at its
        # own time, next to the first.
        with open(doc, "wb") as f:
            f.write(second)
        os.utime(doc, (t2, t2))
        wait_until(lambda: runs() == [t1 * 10**9, t2 * 10**9], 10,
                   what="the second run's marker")
        convert_into(expect, cfg, "dss-bench", [doc])
        want = dump(expect, measurements, drop=("backfill",))
        wait_until(lambda: dump(self.db, measurements, drop=("backfill",)) == want, 10,
                   what="both runs' points")
        self.assertEqual([r["backfill"] for r in query(self.db, "SELECT * FROM runs")],
                         [False, False])
        times = sorted({r["time"] for r in INFLUX.query(self.db, "SELECT * FROM dss_bench")})
        self.assertEqual(times, [t1 * 10**9, t2 * 10**9])

        # Touched, then rewritten with identical contents: no new run.
        os.utime(doc, (t3, t3))
        time.sleep(1.2)  # settle_ms 300 and a rescan, several times over
        with open(doc, "wb") as f:
            f.write(second)
        time.sleep(1.2)
        self.assertEqual(dump(self.db, measurements, drop=("backfill",)), want)
        self.assertEqual(runs(), [t1 * 10**9, t2 * 10**9])

    def test_locust_history_row_by_row_and_every_failures_row(self):
        folder = os.path.join(self.src, "isa")
        os.mkdir(folder)
        with open(os.path.join(DSS, "locust_isa", "isa_stats_history.csv"), newline="") as f:
            rows = f.readlines()
        with open(os.path.join(DSS, "locust_isa", "isa_failures.csv"), newline="") as f:
            failures = f.readlines()
        hist = os.path.join(folder, "isa_stats_history.csv")
        fail = os.path.join(folder, "isa_failures.csv")
        with open(hist, "w", newline="") as f:
            f.write(rows[0])  # Locust writes the header at start
        now = int(time.time())
        with open(fail, "w", newline="") as f:
            f.writelines(failures[:6])  # 5 failures so far
        os.utime(fail, (now - 100, now - 100))
        cfg = self.config("locust")
        a = self.agent(cfg)
        expect = self.db + "_convert"
        convert_into(expect, cfg, "locust", [fail])

        def history():
            return sorted(r["time"] for r in query(self.db, "SELECT * FROM locust_history"))

        # Row by row: each one arrives before the next is written.
        stamps = []
        delays = []
        # a row's time: its Timestamp plus its line number in ns (docs/schema.md)
        for line, row in enumerate(rows[1:13], start=2):
            stamps.append(int(row.split(",")[0]) * 10**9 + line)
            t0 = time.monotonic()
            with open(hist, "a", newline="") as f:
                f.write(row)
            wait_until(lambda: history() == stamps, 10, interval=0.02,
                       what=f"history row {len(stamps)}")
            delays.append(time.monotonic() - t0)
        print(f"\nlocust history row -> queryable: median "
              f"{sorted(delays)[len(delays) // 2] * 1000:.0f} ms")
        # A row written in two pieces arrives once, whole.
        row = rows[13]
        with open(hist, "a", newline="") as f:
            f.write(row[:20])
        time.sleep(0.5)
        self.assertEqual(len(history()), 12)
        with open(hist, "a", newline="") as f:
            f.write(row[20:])
        stamps.append(int(row.split(",")[0]) * 10**9 + 14)
        wait_until(lambda: history() == stamps, 10, what="the row written in two pieces")
        with open(hist, "a", newline="") as f:
            f.writelines(rows[14:])
        # Locust rewrites the failures file as errors come in: every row of
        # every version is its own point, even rows with the same tags.
        with open(fail, "w", newline="") as f:
            f.writelines(failures)
        os.utime(fail, (now - 50, now - 50))
        shutil.copy(os.path.join(DSS, "locust_isa", "isa_stats.csv"), folder)
        convert_into(expect, cfg, "locust", [hist, fail, os.path.join(folder, "isa_stats.csv")])
        measurements = ["locust_stats", "locust_history", "locust_failures"]
        want = dump(expect, measurements)
        wait_until(lambda: dump(self.db, measurements) == want, 15,
                   what="every locust point, as convert's")
        self.assertEqual(len(want["locust_history"]), len(rows) - 1)
        latest = INFLUX.query(self.db, f"SELECT error FROM locust_failures "
                                       f"WHERE time >= {(now - 50) * 10**9}")
        self.assertEqual(len(latest), len(failures) - 1)
        self.assertEqual(sorted(r["error"] for r in latest),
                         sorted(ln.split(",")[2] for ln in failures[1:]))
        self.assertEqual(len(INFLUX.query(self.db, "SELECT error FROM locust_failures")),
                         len(failures) - 1 + 5)
        self.assertEqual(a.stop(), 0)


@unittest.skipUnless(VICTORIA, "victoria-metrics not installed")
class V2ThroughTheAgentTests(Base):
    def setUp(self):
        super().setUp()
        self.vm = VictoriaMetrics(os.path.join(self.tmp, "vm")).start()
        self.port = self.vm.port

    def tearDown(self):
        self.vm.stop()
        super().tearDown()

    def test_run_once_v2_shape_values_and_no_token_anywhere(self):
        token = "v2-tok-Zq8yW3"
        tok = os.path.join(self.tmp, "token")
        with open(tok, "w") as f:
            f.write(token + "\n")
        os.chmod(tok, 0o600)
        base = int(time.time()) - 600
        with open(os.path.join(self.src, "bench.jsonl"), "w") as f:
            for i in range(50):
                f.write('{"ts": %d, "k": "a", "n": %d}\n' % (base + i, i))
        with FaultProxy(upstream_port=self.port, seed=5) as proxy:
            proxy.add_rule("status", code=503, count=1)  # the retry keeps the shape
            path = os.path.join(self.tmp, "v2.cfg")
            with open(path, "w") as f:
                f.write(f"""
influxdb = {{ url = "{proxy.url}"; api = "v2"; org = "my org"; bucket = "b1";
             token_file = "{tok}"; }};
state_dir = "{self.tmp}/state";
tags = {{ host = "test"; }};
sources = ( {{ path = "{self.src}"; format = "jsonl"; measurement = "m";
              time_key = "ts"; tag_keys = ["k"]; types = {{ n = "integer"; }}; }} );
{groups()}
""")
            rc, out, err = run_perfship(["-c", path, "run", "--once"], timeout=60)
            self.assertEqual(rc, 0, err)
            reqs = proxy.requests
        self.assertGreaterEqual(len(reqs), 3)  # the refused one, its retry, the heartbeat
        self.assertEqual(reqs[0].status, 503)
        for r in reqs:
            self.assertEqual((r.method, r.path), ("POST", "/api/v2/write"))
            self.assertEqual(r.query, {"org": "my org", "bucket": "b1", "precision": "ns"})
            self.assertEqual(r.headers["authorization"], "Token " + token)
        self.assertTrue(any(r.body.startswith(b"perfship,") for r in reqs))
        self.assertIn("done: 1 files,", err)
        st = run_perfship(["-c", path, "status"])
        self.assertEqual(st[0], 0, st[2])
        for text in (out, err, st[1], st[2]):
            self.assertNotIn(token, text)

        def exported():
            url = (f"http://127.0.0.1:{self.port}/api/v1/export?match[]=m_n&start=0")
            with urllib.request.urlopen(url, timeout=5) as f:
                got = {}
                for ln in f.read().decode().splitlines():
                    s = json.loads(ln)
                    self.assertEqual(s["metric"], {"__name__": "m_n", "k": "a",
                                                   "host": "test"})
                    got.update(zip(s["timestamps"], s["values"]))
                return got if len(got) == 50 else None
        got = wait_until(exported, timeout=20, what="the points in victoria-metrics")
        self.assertEqual(got, {(base + i) * 1000: float(i) for i in range(50)})


if __name__ == "__main__":
    unittest.main(verbosity=2)
