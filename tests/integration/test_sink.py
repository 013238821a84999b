"""The HTTP sink against a real InfluxDB (and VictoriaMetrics for the v2
API), through a fault-injecting proxy: every answer of the sink's delivery
matrix, checked by what lands in the server.

The sink is driven by tests/tools/sink_driver, which ships a line-protocol
file in batches and prints rejected lines and the sink's counters.
"""
import email.utils
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (InfluxServer, PERFSHIP_BIN, VictoriaMetrics, free_port,  # noqa: E402
                     wait_until, write_config)
from harness import scratch_dir  # noqa: E402
from faultproxy import FaultProxy  # noqa: E402
from pointset import acked_counts  # noqa: E402

DRIVER = os.environ.get("PERFSHIP_SINK_DRIVER") or os.path.join(
    os.path.dirname(PERFSHIP_BIN), "tests", "tools", "sink_driver")
VALGRIND = shutil.which("valgrind")
VICTORIA = VictoriaMetrics.BIN
T0 = 1_700_000_000_000_000_000

influx = None
tmp = None


def setUpModule():
    global influx, tmp
    tmp = tempfile.mkdtemp(prefix="perfship-sink-")
    influx = InfluxServer().start()


def tearDownModule():
    influx.close()
    shutil.rmtree(tmp, ignore_errors=True)


def lp_lines(n, measurement="m", start=0, step_ns=1000):
    return [f"{measurement},t=a v={i}i {T0 + i * step_ns}" for i in range(start, start + n)]


def write_lp(name, lines):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


class Result:
    def __init__(self, proc, elapsed):
        self.rc = proc.returncode
        self.out = proc.stdout.decode("utf-8", "replace")
        self.err = proc.stderr.decode("utf-8", "replace")
        self.elapsed = elapsed
        lines = self.out.strip().splitlines()
        self.summary = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {}
        self.rejects = [ln[len("REJECT "):] for ln in lines if ln.startswith("REJECT ")]


def driver_args(url, db, path, extra=()):
    return [DRIVER, "--url", url, "--db", db, *extra, path]


def run_driver(url, db, path, extra=(), env=None, timeout=60, prefix=()):
    e = dict(os.environ)
    e.update(env or {})
    t = time.monotonic()
    p = subprocess.run(list(prefix) + driver_args(url, db, path, extra),
                       capture_output=True, timeout=timeout, env=e)
    return Result(p, time.monotonic() - t)


def stored(db, measurement="m"):
    """What the server holds, as a sorted list of (time_ns, v). InfluxDB
    keeps one point per series and time, so a batch stored twice looks
    exactly like one stored once: this cannot show duplicates. The proxy's
    log can (SinkTest.assertNoneAckedTwice)."""
    rows = influx.query(db, f'SELECT v FROM "{measurement}"')
    return sorted((r["time"], r["v"]) for r in rows)


def expected(n, start=0, step_ns=1000):
    return sorted((T0 + i * step_ns, i) for i in range(start, start + n))


class SinkTest(unittest.TestCase):
    counter = 0

    def setUp(self):
        SinkTest.counter += 1
        self.db = f"sink{SinkTest.counter}"
        influx.create_db(self.db)
        self.proxy = FaultProxy(influx.port, seed=SinkTest.counter).start()

    def tearDown(self):
        self.proxy.stop()

    def assertClean(self, res, rejected=0):
        self.assertEqual(res.rc, 0, res.out + res.err)
        self.assertEqual(res.summary["loop_close"], 0)
        self.assertEqual(res.summary["batches_done"], res.summary["batches"])
        self.assertEqual(res.summary["batches_cancelled"], 0)
        self.assertEqual(res.summary["points_rejected"], rejected)
        self.assertEqual(res.summary["rejected_counted"], rejected)
        self.assertNoneAckedTwice()

    def assertNoneAckedTwice(self):
        """No line went out again after a 2xx for it. A resend after an
        error, a timeout or a lost answer is the sink's job and not counted
        here (the server may then hold it already; it overwrites itself)."""
        twice = {ln: n for ln, n in acked_counts(self.proxy.requests).items() if n > 1}
        self.assertEqual(twice, {}, "lines sent again after the server acknowledged them")

    # -- 2xx ---------------------------------------------------------------
    def test_pass_through_shape_and_keepalive(self):
        path = write_lp("plain.lp", lp_lines(2000))
        res = run_driver(self.proxy.url, self.db, path, ["--batch", "250"])
        self.assertClean(res)
        self.assertEqual(stored(self.db), expected(2000))
        reqs = self.proxy.requests
        self.assertEqual(len(reqs), 8)
        for r in reqs:
            self.assertEqual(r.method, "POST")
            self.assertEqual(r.path, "/write")
            self.assertEqual(r.query, {"db": self.db, "precision": "n"})
            self.assertTrue(r.headers["content-type"].startswith("text/plain"))
            self.assertNotIn("content-encoding", r.headers)  # loopback: auto = off
        # Four requests in flight at most (SINK_MAX_IN_FLIGHT), on kept-alive
        # connections: 8 requests over at most 4 of them.
        self.assertLessEqual(len({r.conn for r in reqs}), 4)
        self.assertEqual(res.summary["batches_sent"], 8)
        self.assertEqual(res.summary["points_written"], 2000)
        self.assertEqual(res.summary["bytes_sent"], sum(r.body_len for r in reqs))

    def test_gzip_auto_is_off_for_localhost(self):
        path = write_lp("local.lp", lp_lines(50))
        url = self.proxy.url.replace("127.0.0.1", "localhost")
        res = run_driver(url, self.db, path, ["--gzip", "auto"])
        self.assertClean(res)
        self.assertEqual(stored(self.db), expected(50))
        self.assertEqual([r.headers.get("content-encoding") for r in self.proxy.requests],
                         [None])

    def test_proxy_rules_over_its_control_endpoint(self):
        # How a test in another process steers the proxy.
        ctl = self.proxy.url + "/__faultproxy__/"
        rules = json.dumps([{"action": "status", "code": 500, "count": 1}]).encode()
        req = urllib.request.Request(ctl + "rules", data=rules, method="POST")
        with urllib.request.urlopen(req, timeout=5) as r:
            self.assertEqual(r.status, 204)
        path = write_lp("ctl.lp", lp_lines(100))
        res = run_driver(self.proxy.url, self.db, path)
        self.assertClean(res)
        self.assertEqual(stored(self.db), expected(100))
        with urllib.request.urlopen(ctl + "requests", timeout=5) as r:
            seen = json.loads(r.read())
        self.assertEqual([(q["path"], q["status"]) for q in seen],
                         [("/write", 500), ("/write", 204)])
        self.assertEqual(seen[1]["body"].splitlines(), lp_lines(100))

    # -- 5xx, 503/429 with Retry-After ---------------------------------------
    def test_500_then_ok(self):
        self.proxy.add_rule("status", code=500, count=3)
        path = write_lp("e500.lp", lp_lines(1000))
        res = run_driver(self.proxy.url, self.db, path, ["--batch", "500"])
        self.assertClean(res)
        self.assertEqual(stored(self.db), expected(1000))
        self.assertEqual(res.summary["http_retries"], 3)
        self.assertEqual(sum(1 for r in self.proxy.requests if r.status == 500), 3)

    def _retry_after(self, code, seconds):
        self.proxy.add_rule("status", code=code, retry_after=str(seconds), count=1)
        path = write_lp(f"e{code}.lp", lp_lines(300))
        res = run_driver(self.proxy.url, self.db, path)
        self.assertClean(res)
        self.assertEqual(stored(self.db), expected(300))
        reqs = self.proxy.requests
        self.assertEqual([r.status for r in reqs], [code, 204])
        self.assertGreaterEqual(reqs[1].t - reqs[0].t, seconds - 0.1)

    def test_503_retry_after(self):
        self._retry_after(503, 2)

    def test_429_retry_after(self):
        self._retry_after(429, 1)

    def test_503_retry_after_http_date(self):
        # Whole seconds only: 3 s ahead is at least 2 s after rounding.
        when = email.utils.formatdate(time.time() + 3, usegmt=True)
        self.proxy.add_rule("status", code=503, retry_after=when, count=1)
        path = write_lp("date.lp", lp_lines(100))
        res = run_driver(self.proxy.url, self.db, path)
        self.assertClean(res)
        self.assertEqual(stored(self.db), expected(100))
        reqs = self.proxy.requests
        self.assertEqual([r.status for r in reqs], [503, 204])
        self.assertGreaterEqual(reqs[1].t - reqs[0].t, 1.5)

    def test_v2_style_parse_error_resends_the_good_lines(self):
        # InfluxDB 2.x refuses a whole body when one line does not parse
        # (plain 400 naming the line, nothing stored); the sink must not
        # take the other lines as stored. The first answer is 2.x's.
        lines = lp_lines(400)
        lines[99] = "nope nope"
        self.proxy.add_rule("status", code=400, count=1, body=json.dumps(
            {"code": "invalid", "message": "unable to parse 'nope nope': invalid field format"}))
        path = write_lp("v2bad.lp", lines)
        res = run_driver(self.proxy.url, self.db, path)
        self.assertClean(res, rejected=1)
        self.assertEqual(stored(self.db), [p for p in expected(400) if p[1] != 99])
        self.assertEqual(len(res.rejects), 1)
        self.assertTrue(res.rejects[0].startswith(f"{path}:100 "))

    # -- 413 -----------------------------------------------------------------
    def test_413_splits_and_rejects_a_single_huge_line(self):
        lines = lp_lines(1000)
        huge = f'm,t=a v=5000i,s="{"x" * 9000}" {T0 + 5000 * 1000}'
        lines.insert(500, huge)  # line 501 of the file
        self.proxy.add_rule("status", code=413, min_body=8192,
                            body='{"error":"Request Entity Too Large"}')
        path = write_lp("big.lp", lines)
        res = run_driver(self.proxy.url, self.db, path, ["--batch", "1001"])
        self.assertClean(res, rejected=1)
        self.assertEqual(stored(self.db), expected(1000))
        self.assertEqual(len(res.rejects), 1)
        self.assertTrue(res.rejects[0].startswith(f"{path}:501 "), res.rejects)
        self.assertIn("413", res.rejects[0])
        for r in self.proxy.requests:
            if r.status == 204:
                self.assertLess(r.body_len, 8192)

    def ship_413s_after_four_taken(self, name, nlines, batch, **rule):
        """lp_lines(nlines, start=1000) (lines of one length) in batches of
        `batch` lines: the first four requests (one per slot) pass, so the
        server has taken a body of this size before the proxy answers 413
        as `rule` says. Returns the file, the driver's result and the
        number of 413s."""
        self.proxy.add_rule("pass", count=4)
        self.proxy.add_rule("status", code=413, body='{"error":"Request Entity Too Large"}',
                            **rule)
        path = write_lp(name, lp_lines(nlines, start=1000))
        res = run_driver(self.proxy.url, self.db, path, ["--batch", str(batch)])
        return path, res, [r.status for r in self.proxy.requests].count(413)

    def test_413_for_a_body_no_larger_than_one_stored_is_retried(self):
        # A proxy or a busy front may answer 413 for what is not about size.
        # After the server stored a body of this size, the sink retries such
        # a 413 instead of refusing the line.
        path, res, n413 = self.ship_413s_after_four_taken("doubt413.lp", 20, 1, count=2)
        self.assertClean(res)
        self.assertEqual(res.rejects, [])
        self.assertEqual(stored(self.db), expected(20, start=1000))
        self.assertEqual(n413, 2)

    def test_413_that_persists_is_believed_after_three_doubts(self):
        # The server's limit may have been lowered since it took a body of
        # this size: the fourth 413 for the same line is believed.
        path, res, n413 = self.ship_413s_after_four_taken("persist413.lp", 20, 1,
                                                          contains=b"v=1010i")
        self.assertClean(res, rejected=1)
        self.assertEqual(len(res.rejects), 1)
        self.assertTrue(res.rejects[0].startswith(f"{path}:11 "), res.rejects)
        self.assertIn("413", res.rejects[0])
        self.assertEqual(stored(self.db), [p for p in expected(20, start=1000) if p[1] != 1010])
        self.assertEqual(n413, 4)

    def test_413_after_the_limit_was_lowered_is_doubted_once(self):
        # The server took bodies of 3.4 kB, then its limit drops to 1,000
        # bytes: the first 413s are doubted, the rest believed at once, and
        # each batch of 100 lines is cut down to quarters that pass. Doubting
        # the halves too (three retries a level) would cost seconds a batch.
        path, res, n413 = self.ship_413s_after_four_taken("lowered413.lp", 2000, 100,
                                                          min_body=1000)
        self.assertClean(res)
        self.assertEqual(res.rejects, [])
        self.assertEqual(stored(self.db), expected(2000, start=1000))
        # 16 batches x (the batch and its two halves), plus at most three
        # doubts for each of the four requests in flight when it dropped
        self.assertLessEqual(n413, 16 * 3 + 4 * 3, n413)
        self.assertLess(res.elapsed, 15)

    def test_real_413_from_influxdb_max_body_size(self):
        # Straight to influxd: it answers 413 while the body is still being
        # sent, which a proxy that reads the whole request would hide.
        with InfluxServer(max_body_size=20000) as small:
            small.create_db("small")
            lines = lp_lines(20000)  # ~700 kB in one batch
            huge = f'm,t=a v=99999i,s="{"y" * 300000}" {T0 + 99999 * 1000}'
            lines.insert(2000, huge)  # line 2001 of the file
            path = write_lp("real413.lp", lines)
            res = run_driver(small.url, "small", path, ["--batch", "20001"])
            self.assertClean(res, rejected=1)
            self.assertEqual(len(res.rejects), 1)
            self.assertTrue(res.rejects[0].startswith(f"{path}:2001 "), res.rejects)
            self.assertIn("413", res.rejects[0])
            rows = small.query("small", "SELECT v FROM m")
            self.assertEqual(sorted((r["time"], r["v"]) for r in rows), expected(20000))

    # -- 400 partial writes ----------------------------------------------------
    def test_partial_write_reports_exactly_the_bad_lines(self):
        # v is an integer in this database; a float v is a type conflict.
        st, _ = influx.write(self.db, f"m,t=a v=0i {T0}\n")
        self.assertEqual(st, 204)
        lines = lp_lines(3000)
        lines[700] = "this is not line protocol"
        lines[1800] = "m,t=a v= 12"
        lines[2500] = f"m,t=a v=1.5 {T0 + 2500 * 1000}"
        path = write_lp("bad.lp", lines)
        res = run_driver(self.proxy.url, self.db, path, ["--batch", "3000"])
        self.assertClean(res, rejected=3)
        good = [p for p in expected(3000) if p[1] not in (700, 1800, 2500)]
        self.assertEqual(stored(self.db), good)
        where = sorted(int(r.split(" ", 1)[0].rsplit(":", 1)[1]) for r in res.rejects)
        self.assertEqual(where, [701, 1801, 2501])
        by_line = {int(r.split(" ", 1)[0].rsplit(":", 1)[1]): r for r in res.rejects}
        self.assertIn("unable to parse: invalid field format", by_line[701])
        self.assertIn("unable to parse", by_line[1801])
        self.assertIn("field type conflict", by_line[2501])
        self.assertEqual(res.summary["points_written"], 2997)

    def test_a_lone_bad_line_gets_the_reason_alone(self):
        lines = lp_lines(3)
        lines[1] = "bad line here"
        path = write_lp("lone.lp", lines)
        res = run_driver(self.proxy.url, self.db, path, ["--batch", "1"])
        self.assertClean(res, rejected=1)
        self.assertEqual(res.rejects, [f"{path}:2 unable to parse: invalid field format"])
        self.assertEqual(stored(self.db), [p for p in expected(3) if p[1] != 1])

    def test_many_bad_lines_cost_one_request(self):
        lines = lp_lines(2000)
        bad = set(range(5, 2000, 10))  # 200 lines
        for i in bad:
            lines[i] = f"broken{i} value"
        path = write_lp("many.lp", lines)
        res = run_driver(self.proxy.url, self.db, path, ["--batch", "2000"])
        self.assertClean(res, rejected=200)
        self.assertEqual(stored(self.db), [p for p in expected(2000) if p[1] not in bad])
        where = sorted(int(r.split(" ", 1)[0].rsplit(":", 1)[1]) for r in res.rejects)
        self.assertEqual(where, sorted(i + 1 for i in bad))
        self.assertEqual(len(self.proxy.requests), 1)

    def test_whole_batch_of_the_wrong_type(self):
        st, _ = influx.write(self.db, f"m,t=a v=0i {T0}\n")
        self.assertEqual(st, 204)
        lines = [f"m,t=a v={i}.5 {T0 + i * 1000}" for i in range(1, 301)]
        path = write_lp("wrongtype.lp", lines)
        res = run_driver(self.proxy.url, self.db, path, ["--batch", "300"])
        self.assertClean(res, rejected=300)
        self.assertEqual(stored(self.db), [(T0, 0)])
        self.assertTrue(all("field type conflict" in r for r in res.rejects))
        self.assertEqual(len(self.proxy.requests), 1)

    # -- 401/403/404 -----------------------------------------------------------
    def test_404_missing_database_retries_until_created(self):
        db = self.db + "_later"
        path = write_lp("missing.lp", lp_lines(500))
        e = dict(os.environ)
        proc = subprocess.Popen(driver_args(self.proxy.url, db, path),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
        try:
            self.proxy.wait_for(lambda rs: any(r.status == 404 for r in rs),
                                what="a 404")
            influx.create_db(db)
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, 0, err)
        summary = json.loads(out.decode().strip().splitlines()[-1])
        self.assertEqual(summary["points_written"], 500)
        self.assertEqual(stored(db), expected(500))
        self.assertIn("create the database", err.decode())
        statuses = [r.status for r in self.proxy.requests]
        self.assertEqual(statuses[0], 404)
        self.assertEqual(statuses[-1], 204)

    def test_missing_retention_policy_retries_until_created(self):
        path = write_lp("rp.lp", lp_lines(100))
        proc = subprocess.Popen(driver_args(self.proxy.url, self.db, path, ["--rp", "later"]),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            self.proxy.wait_for(lambda rs: any(r.status == 500 for r in rs), what="a 500")
            influx.query_raw(f'CREATE RETENTION POLICY "later" ON "{self.db}" '
                             "DURATION 0s REPLICATION 1")
            out, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.assertEqual(proc.returncode, 0, err)
        self.assertIn("create the retention policy", err.decode())
        self.assertEqual(self.proxy.requests[0].query["rp"], "later")
        rows = influx.query(self.db, 'SELECT v FROM "later"."m"')
        self.assertEqual(sorted((r["time"], r["v"]) for r in rows), expected(100))

    def test_real_401_and_403_from_an_auth_enabled_influxdb(self):
        with InfluxServer(auth=True) as secured:
            admin = dict(user="admin", password="adm1n-pw")
            secured.query_raw("CREATE USER admin WITH PASSWORD 'adm1n-pw' WITH ALL PRIVILEGES")
            secured.query_raw('CREATE DATABASE "locked"', **admin)
            secured.query_raw("CREATE USER writer WITH PASSWORD 'wr1ter-pw'", **admin)
            path = write_lp("locked.lp", lp_lines(200))
            with FaultProxy(secured.port) as px:
                # A wrong password: 401, logged with what to fix, data kept.
                res = run_driver(px.url, "locked", path,
                                 ["--user", "writer", "--close-after-ms", "800"],
                                 env={"PERFSHIP_PASSWORD": "not-the-pw"})
                self.assertEqual(res.rc, 0, res.err)
                self.assertEqual(res.summary["batches_cancelled"], 1)
                self.assertEqual(px.requests[0].status, 401)
                # Basic auth in a header, never u/p in the URL.
                for r in px.requests:
                    self.assertTrue(r.headers["authorization"].startswith("Basic "))
                    self.assertNotIn("u", r.query)
                    self.assertNotIn("p", r.query)
                self.assertIn("password_file", res.err)
                self.assertNotIn("not-the-pw", res.out + res.err)
                px.clear_requests()
                # No WRITE permission: 403 until it is granted.
                proc = subprocess.Popen(driver_args(px.url, "locked", path, ["--user", "writer"]),
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env=dict(os.environ, PERFSHIP_PASSWORD="wr1ter-pw"))
                try:
                    px.wait_for(lambda rs: any(r.status == 403 for r in rs), what="a 403")
                    secured.query_raw('GRANT WRITE ON "locked" TO writer', **admin)
                    out, err = proc.communicate(timeout=30)
                finally:
                    if proc.poll() is None:
                        proc.kill()
                        proc.wait()
                self.assertEqual(proc.returncode, 0, err)
                self.assertIn("the user lacks the right to write the database", err.decode())
                self.assertNotIn("wr1ter-pw", (out + err).decode())
                rows = secured.query("locked", "SELECT v FROM m", **admin)
                self.assertEqual(sorted((r["time"], r["v"]) for r in rows), expected(200))

    # -- timeouts, drops, half-written answers -------------------------------------
    def test_server_closing_kept_alive_connections_costs_nothing(self):
        """A server that ends kept-alive connections after its answers,
        without a word: the next request goes out on a new connection,
        without a retry, a warning or a lost line."""
        self.proxy.add_rule("pass", prob=0.5, close_after=True)
        path = write_lp("closing.lp", lp_lines(4000))
        res = run_driver(self.proxy.url, self.db, path, ["--batch", "250"])
        self.assertClean(res)
        self.assertEqual(stored(self.db), expected(4000))
        reqs = self.proxy.requests
        self.assertEqual(len(reqs), 16)
        self.assertTrue(all(r.status == 204 for r in reqs), reqs)
        self.assertGreater(len({r.conn for r in reqs}), 4)  # connections were reopened
        self.assertEqual(res.summary["http_retries"], 0)
        self.assertNotIn("retrying", res.err)
        self.assertNotIn("cannot reach", res.err)

    def test_slow_answer_beyond_timeout_is_retried(self):
        self.proxy.add_rule("delay", seconds=2.5, count=1)
        path = write_lp("slow.lp", lp_lines(400))
        res = run_driver(self.proxy.url, self.db, path, ["--timeout-ms", "700"])
        self.assertClean(res)
        self.assertEqual(stored(self.db), expected(400))
        # The server stored the first attempt, but no answer reached the
        # sink before its timeout: sending it again is right, and the one
        # acknowledged copy is the second.
        self.proxy.wait_for(lambda rs: all(r.done for r in rs), 10,
                            what="the held request answered")
        self.assertNoneAckedTwice()
        self.assertEqual([(r.action, r.status) for r in self.proxy.requests],
                         [("delay", None), ("pass", 204)])
        self.assertGreaterEqual(res.summary["http_retries"], 1)
        self.assertIn("retrying", res.err)

    def test_random_drops_and_half_answers_over_20k_lines(self):
        self.proxy.stop()
        self.proxy = FaultProxy(influx.port, seed=1234).start()
        self.proxy.add_rule("drop", prob=0.12)
        self.proxy.add_rule("drop", prob=0.12, forward=True)
        self.proxy.add_rule("half", prob=0.12)
        self.proxy.add_rule("status", code=500, prob=0.05)
        lines = lp_lines(20000)
        # A bad line in every batch: those batches never see a 2xx, and the
        # back-off must still start over once the server answers again.
        bad = set(range(500, 20000, 1000))
        for i in bad:
            lines[i] = f"junk{i}"
        path = write_lp("chaos.lp", lines)
        res = run_driver(self.proxy.url, self.db, path, ["--batch", "1000"], timeout=90)
        self.assertClean(res, rejected=len(bad))
        self.assertEqual(stored(self.db), [p for p in expected(20000) if p[1] not in bad])
        self.assertEqual(sorted(int(r.split(" ", 1)[0].rsplit(":", 1)[1]) for r in res.rejects),
                         sorted(i + 1 for i in bad))
        actions = [r.action for r in self.proxy.requests]
        self.assertIn("drop", actions)
        self.assertIn("half", actions)
        # A cut answer is always the sink's to resend; its connection
        # resends by itself once when a kept-alive connection dies before
        # any answer (net/http_conn.h), so drops may or may not count.
        self.assertGreaterEqual(res.summary["http_retries"], actions.count("half"))
        self.assertLessEqual(res.summary["http_retries"],
                             sum(1 for a in actions if a != "pass"))
        self.assertEqual(res.summary["unreachable_since_ms"], 0)
        # Back-off that never starts over would take minutes here.
        self.assertLess(res.elapsed, 30)

    # -- gzip ------------------------------------------------------------------------
    def test_gzip_on(self):
        lines = lp_lines(1500)
        path = write_lp("gz.lp", lines)
        res = run_driver(self.proxy.url, self.db, path, ["--gzip", "on", "--batch", "500"])
        self.assertClean(res)
        self.assertEqual(stored(self.db), expected(1500))
        reqs = self.proxy.requests
        self.assertEqual(len(reqs), 3)
        sent = []
        for r in reqs:
            self.assertEqual(r.headers.get("content-encoding"), "gzip")
            self.assertLess(r.body_len, len(r.body) / 3)
            sent += r.body.decode().splitlines()
        self.assertEqual(sorted(sent), sorted(lines))

    # -- TLS -------------------------------------------------------------------------
    def test_tls_verifies_by_default_and_takes_a_ca_file(self):
        cert, key = os.path.join(tmp, "proxy.crt"), os.path.join(tmp, "proxy.key")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                        "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                       check=True, capture_output=True)
        path = write_lp("tls.lp", lp_lines(200))
        with FaultProxy(influx.port, tls_cert=cert, tls_key=key) as px:
            self.assertTrue(px.url.startswith("https://"))
            # An unknown certificate is refused: nothing sent, data kept.
            res = run_driver(px.url, self.db, path, ["--close-after-ms", "1200"])
            self.assertEqual(res.rc, 0, res.err)
            self.assertEqual(res.summary["batches_cancelled"], 1)
            self.assertGreater(res.summary["unreachable_since_ms"], 0)
            self.assertRegex(res.err, "(?i)ssl|certificate")
            self.assertEqual(px.requests, [])
            self.assertEqual(stored(self.db), [])
            res = run_driver(px.url, self.db, path, ["--ca-file", cert])
            self.assertClean(res)
            self.assertEqual(stored(self.db), expected(200))
            self.assertEqual(len(px.requests), 1)

    # -- configuration file ---------------------------------------------------------------
    def test_settings_from_a_config_file(self):
        conf = write_config(os.path.join(tmp, f"{self.db}.cfg"), self.proxy.url,
                            os.path.join(tmp, "state"), database=self.db,
                            influx_extra='gzip = "on"; timeout_ms = 5000;')
        path = write_lp("cfg.lp", lp_lines(300))
        p = subprocess.run([DRIVER, "-c", conf, path], capture_output=True, timeout=60)
        err = p.stderr.decode()
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(stored(self.db), expected(300))
        self.assertEqual([r.headers.get("content-encoding") for r in self.proxy.requests],
                         ["gzip"])

    # -- shutdown ----------------------------------------------------------------------
    def test_close_cancels_in_flight(self):
        self.proxy.add_rule("delay", seconds=3, count=1)
        path = write_lp("cancel.lp", lp_lines(100))
        res = run_driver(self.proxy.url, self.db, path, ["--close-after-ms", "300"])
        self.assertEqual(res.rc, 0, res.err)
        self.assertEqual(res.summary["batches_cancelled"], 1)
        self.assertEqual(res.summary["loop_close"], 0)

    def test_close_from_inside_a_done_callback(self):
        path = write_lp("inside.lp", lp_lines(5000))
        res = run_driver(self.proxy.url, self.db, path,
                         ["--batch", "500", "--close-after-batches", "1"])
        self.assertEqual(res.rc, 0, res.err)
        self.assertEqual(res.summary["batches_done"], 10)
        self.assertEqual(res.summary["batches_sent"], 1)
        self.assertEqual(res.summary["batches_cancelled"], 9)
        self.assertEqual(res.summary["loop_close"], 0)

    @unittest.skipUnless(VALGRIND, "valgrind not installed")
    def test_valgrind_no_leaks(self):
        ldd = subprocess.run(["ldd", DRIVER], capture_output=True, text=True).stdout
        if "libasan" in ldd:
            self.skipTest("the driver is built with AddressSanitizer")
        vg = [VALGRIND, "-q", "--error-exitcode=99", "--leak-check=full"]
        # A partial write, a retry and gzip: most paths of the sink.
        st, _ = influx.write(self.db, f"m,t=a v=0i {T0}\n")
        lines = lp_lines(200)
        lines[50] = "garbage"
        lines[150] = f"m,t=a v=2.5 {T0 + 150 * 1000}"
        path = write_lp("vg.lp", lines)
        self.proxy.add_rule("status", code=500, count=1)
        res = run_driver(self.proxy.url, self.db, path, ["--gzip", "on", "--batch", "100"],
                         prefix=vg, timeout=120)
        self.assertClean(res, rejected=2)
        self.assertEqual(len(stored(self.db)), 198)
        # Cancelled transfers and sockets still open at close.
        self.proxy.add_rule("delay", seconds=3, count=1)
        res = run_driver(self.proxy.url, self.db, path, ["--close-after-ms", "500"],
                         prefix=vg, timeout=120)
        self.assertEqual(res.rc, 0, res.err)
        self.assertEqual(res.summary["loop_close"], 0)
        self.assertGreaterEqual(res.summary["batches_cancelled"], 1)
        # Closed from inside a done callback, a transfer still running.
        res = run_driver(self.proxy.url, self.db, path,
                         ["--batch", "20", "--close-after-batches", "1"],
                         prefix=vg, timeout=120)
        self.assertEqual(res.rc, 0, res.err)
        self.assertEqual(res.summary["loop_close"], 0)
        self.assertEqual(res.summary["batches_done"], 10)


@unittest.skipUnless(VICTORIA, "victoria-metrics not installed")
class V2ApiTest(unittest.TestCase):
    def setUp(self):
        self.dir = scratch_dir(self, "perfship-vm-")
        self.vm = VictoriaMetrics(self.dir).start()
        self.port = self.vm.port
        self.proxy = FaultProxy(self.port, seed=99).start()

    def tearDown(self):
        self.proxy.stop()
        self.vm.stop()

    def test_v2_write_shape_and_data(self):
        token = "tok-SECRET-123"
        # VictoriaMetrics keeps milliseconds: use whole-ms timestamps.
        now_ms = int(time.time() * 1000) - 60_000
        lines = [f"vm,t=a v={i} {(now_ms + i) * 1_000_000}" for i in range(300)]
        path = write_lp("v2.lp", lines)
        self.proxy.add_rule("status", code=503, count=1)
        res = run_driver(self.proxy.url, "unused", path,
                         ["--api", "v2", "--org", "my org", "--bucket", "b1", "--batch", "100"],
                         env={"PERFSHIP_TOKEN": token})
        self.assertEqual(res.rc, 0, res.err)
        self.assertEqual(res.summary["points_written"], 300)
        self.assertNotIn(token, res.out + res.err)
        reqs = self.proxy.requests
        self.assertEqual(len(reqs), 4)
        for r in reqs:
            self.assertEqual(r.path, "/api/v2/write")
            self.assertEqual(r.query, {"org": "my org", "bucket": "b1", "precision": "ns"})
            self.assertEqual(r.headers["authorization"], "Token " + token)

        def exported():
            url = (f"http://127.0.0.1:{self.port}/api/v1/export?"
                   "match[]=vm_v&start=0")
            with urllib.request.urlopen(url, timeout=5) as f:
                got = {}
                for ln in f.read().decode().splitlines():
                    s = json.loads(ln)
                    for v, t in zip(s["values"], s["timestamps"]):
                        got[t] = v
                return got if len(got) == 300 else None
        got = wait_until(exported, timeout=20, what="points in victoria-metrics")
        self.assertEqual(got, {now_ms + i: float(i) for i in range(300)})


if __name__ == "__main__":
    unittest.main(verbosity=2)
