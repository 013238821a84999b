"""`perfship check` and `perfship mark` against a real influxd.

What a user relies on: check exits 0 only when the configuration is valid and
the server takes writes, 78 for configuration mistakes (named by file, line
and key), 69 when the server is down or refuses; secrets never show up in the
output. mark puts a `runs` point with the documented tags and fields into the
database, and gives up after --timeout with 69 when the server is down.
"""
import os
import shutil
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import InfluxTestCase, free_port, run_perfship, write_config  # noqa: E402
from harness import scratch_dir  # noqa: E402

SECRET = "s3cr3t-Pa55word"


class CheckMarkTest(InfluxTestCase):
    tmp_prefix = "perfship-check-"

    def cfg(self, name, url=None, **kw):
        path = os.path.join(self.tmp, name)
        kw.setdefault("sources", '{ path = "%s/results"; format = "loadgen"; },'
                      ' { path = "%s/dss"; format = "dss-bench"; }' % (self.tmp, self.tmp))
        return write_config(path, url or self.influx.url, os.path.join(self.tmp, "state"), **kw)

    # -- check -------------------------------------------------------------
    def test_check_ok_names_version(self):
        cfg = self.cfg("ok.cfg", database="checkdb")
        rc, out, err = run_perfship(["-c", cfg, "check"])
        self.assertEqual(rc, 0, out + err)
        self.assertIn("1.6.7", out)
        self.assertIn(self.influx.url, out)
        self.assertIn("loadgen", out)
        # `check` before -c works the same
        rc2, out2, err2 = run_perfship(["check", "-c", cfg])
        self.assertEqual(rc2, 0, out2 + err2)
        self.assertIn("1.6.7", out2)

    def test_shipped_sample_checks_ok(self):
        """The annotated sample, pointed at the test server, passes check."""
        from harness import SOURCE_DIR
        with open(os.path.join(SOURCE_DIR, "config", "perfship.cfg")) as f:
            text = f.read()
        self.assertIn('url = "http://127.0.0.1:8086";', text)
        text = text.replace('url = "http://127.0.0.1:8086";', 'url = "%s";' % self.influx.url)
        text = text.replace('"/var/lib/perfship"', '"%s/state"' % self.tmp)
        path = os.path.join(self.tmp, "sample.cfg")
        with open(path, "w") as f:
            f.write(text)
        rc, out, err = run_perfship(["-c", path, "check"])
        self.assertEqual(rc, 0, out + err)
        self.assertIn("sources: 3", out)
        self.assertIn("/srv/loadgen/results (loadgen)", out)

    def test_check_existing_db_accepted(self):
        self.influx.create_db("existing")
        cfg = self.cfg("existing.cfg", database="existing",
                       influx_extra="create_database = false;")
        rc, out, err = run_perfship(["-c", cfg, "check"])
        self.assertEqual(rc, 0, out + err)
        self.assertIn('database "existing" exists', out)

    def test_check_missing_db_without_create(self):
        cfg = self.cfg("nocreate.cfg", database="nowhere",
                       influx_extra="create_database = false;")
        rc, out, err = run_perfship(["-c", cfg, "check"])
        self.assertEqual(rc, 69, out + err)
        self.assertIn('database "nowhere" not found', err)

    def test_typo_key_is_config_error(self):
        path = os.path.join(self.tmp, "typo.cfg")
        with open(path, "w") as f:
            f.write('influxdb = { url = "%s"; };\n'
                    'batch = {\n'
                    '  max_points = 100;\n'
                    '  flush_intervall_ms = 500;\n'
                    '};\n' % self.influx.url)
        rc, out, err = run_perfship(["-c", path, "check"])
        self.assertEqual(rc, 78, out + err)
        self.assertIn("typo.cfg:4:", err)
        self.assertIn("flush_intervall_ms", err)
        self.assertIn("did you mean 'flush_interval_ms'", err)

    def test_wrong_type_is_config_error(self):
        cfg = self.cfg("wrongtype.cfg", extra='watch = {\n  settle_ms = "2000";\n};\n')
        rc, out, err = run_perfship(["-c", cfg, "check"])
        self.assertEqual(rc, 78, out + err)
        with open(cfg) as f:
            line = next(i for i, l in enumerate(f, 1) if "settle_ms" in l)
        self.assertIn("wrongtype.cfg:%d:" % line, err)
        self.assertIn("watch.settle_ms", err)

    def test_missing_config_file(self):
        rc, out, err = run_perfship(["-c", os.path.join(self.tmp, "nope.cfg"), "check"])
        self.assertEqual(rc, 78)
        self.assertIn("nope.cfg", err)

    def test_server_down(self):
        cfg = self.cfg("down.cfg", url="http://127.0.0.1:%d" % free_port())
        t0 = time.time()
        rc, out, err = run_perfship(["-c", cfg, "check"])
        self.assertEqual(rc, 69, out + err)
        self.assertIn("cannot reach", err)
        self.assertLess(time.time() - t0, 10)

    # -- mark --------------------------------------------------------------
    def test_mark_start_and_end(self):
        cfg = self.cfg("mark.cfg", database="marks")  # created on the 404
        run = "daily-perf-9eb37164f6f7"
        rc, out, err = run_perfship(["-c", cfg, "mark", "start", "--run", run])
        self.assertEqual(rc, 0, out + err)
        rc, out, err = run_perfship(["mark", "end", "--run", run, "-c", cfg,
                                     "--status", "failed", "--text", 'cycle 3 "failed", see log'])
        self.assertEqual(rc, 0, out + err)
        rows = self.influx.query("marks", 'SELECT * FROM "runs" ORDER BY time')
        self.assertEqual(len(rows), 2, rows)
        start, end = rows
        for r in rows:
            self.assertEqual(r["run"], run)
            self.assertEqual(r["revision"], "9eb37164f6f7")
            self.assertEqual(r["source"], "manual")
            self.assertEqual(r["host"], "test")  # the configuration's global tag
            self.assertIs(r["backfill"], False)
        self.assertEqual((start["event"], start["status"]), ("start", "running"))
        self.assertEqual((end["event"], end["status"]), ("end", "failed"))
        self.assertEqual(end["text"], 'cycle 3 "failed", see log')
        now = time.time_ns()
        self.assertLess(abs(end["time"] - now), 60 * 10**9)
        self.assertLessEqual(start["time"], end["time"])
        # the tags are tags (GROUP BY works), not fields
        series = self.influx.series("marks", 'SELECT count(backfill) FROM runs GROUP BY "event"')
        self.assertEqual(sorted(s["tags"]["event"] for s in series), ["end", "start"])

    def test_mark_source_and_no_revision(self):
        cfg = self.cfg("mark2.cfg", database="marks2")
        rc, out, err = run_perfship(["-c", cfg, "mark", "end", "--run", "nightly-smoke",
                                     "--source", "dss_bench"])
        self.assertEqual(rc, 0, out + err)
        rows = self.influx.query("marks2", "SELECT * FROM runs")
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["source"], "dss_bench")
        self.assertEqual(rows[0]["status"], "success")
        self.assertIsNone(rows[0].get("revision"))

    def test_mark_usage(self):
        rc, out, err = run_perfship(["-c", self.cfg("u.cfg"), "mark", "start"])
        self.assertEqual(rc, 64)
        self.assertIn("--run", err)
        rc, out, err = run_perfship(["-c", self.cfg("u.cfg"), "mark", "end", "--run", "x",
                                     "--status", "sucess"])
        self.assertEqual(rc, 64)

    def test_mark_server_down_times_out(self):
        cfg = self.cfg("markdown.cfg", url="http://127.0.0.1:%d" % free_port())
        t0 = time.time()
        rc, out, err = run_perfship(["-c", cfg, "mark", "start", "--run", "r-1234567",
                                     "--timeout", "2"])
        took = time.time() - t0
        self.assertEqual(rc, 69, out + err)
        self.assertIn("unreachable", err)
        self.assertGreater(took, 1.8)
        self.assertLess(took, 4.5)


class AuthTest(InfluxTestCase):
    """influxd with auth on: credentials right, wrong, and badly protected."""
    tmp_prefix = "perfship-auth-"
    influx_options = {"auth": True}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.influx.query_raw("CREATE USER admin WITH PASSWORD 'x' WITH ALL PRIVILEGES")

    def setup_cfg(self, name, password, mode=0o600):
        pw = os.path.join(self.tmp, name + ".pw")
        with open(pw, "w") as f:
            f.write(password + "\n")
        os.chmod(pw, mode)
        path = os.path.join(self.tmp, name + ".cfg")
        return write_config(path, self.influx.url, os.path.join(self.tmp, "state"),
                            influx_extra='username = "admin"; password_file = "%s";' % pw), pw

    def test_right_password(self):
        cfg, _ = self.setup_cfg("right", "x")
        rc, out, err = run_perfship(["-c", cfg, "check"])
        self.assertEqual(rc, 0, out + err)
        # and mark can create the database and write with it
        rc, out, err = run_perfship(["-c", cfg, "mark", "start", "--run", "auth-run-42"])
        self.assertEqual(rc, 0, out + err)
        rows = self.influx.query("perf", "SELECT * FROM runs", user="admin", password="x")
        self.assertEqual([(r["run"], r["revision"]) for r in rows], [("auth-run-42", "42")])

    def test_wrong_password_never_printed(self):
        cfg, _ = self.setup_cfg("wrong", SECRET)
        rc, out, err = run_perfship(["-c", cfg, "check"])
        self.assertEqual(rc, 69, out + err)
        self.assertIn("refused", err)
        self.assertNotIn(SECRET, out + err)
        rc, out, err = run_perfship(["-c", cfg, "mark", "start", "--run", "x",
                                     "--timeout", "5"])
        self.assertEqual(rc, 69, out + err)
        self.assertNotIn(SECRET, out + err)

    def test_password_file_world_readable(self):
        cfg, pw = self.setup_cfg("open", "x", mode=0o644)
        rc, out, err = run_perfship(["-c", cfg, "check"])
        self.assertEqual(rc, 78, out + err)
        self.assertIn(pw, err)
        self.assertIn("chmod 600", err)
        rc, out, err = run_perfship(["-c", cfg, "mark", "end", "--run", "x"])
        self.assertEqual(rc, 78, out + err)

    def test_missing_password_file(self):
        path = os.path.join(self.tmp, "nopw.cfg")
        write_config(path, self.influx.url, os.path.join(self.tmp, "state"),
                     influx_extra='username = "admin"; password_file = "%s/absent";' % self.tmp)
        rc, out, err = run_perfship(["-c", path, "check"])
        self.assertEqual(rc, 78, out + err)
        self.assertIn("absent", err)


@unittest.skipUnless(shutil.which("victoria-metrics"), "victoria-metrics not installed")
class V2Test(unittest.TestCase):
    """The v2 write path against a real v2-compatible server (VictoriaMetrics
    accepts /api/v2/write; it ignores the token, so only the shape is ours)."""

    def setUp(self):
        import subprocess
        self.tmp = scratch_dir(self, "perfship-v2-")
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["victoria-metrics", "-storageDataPath=" + os.path.join(self.tmp, "vm"),
             "-httpListenAddr=127.0.0.1:%d" % self.port],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import urllib.request
        deadline = time.time() + 20
        while time.time() < deadline:
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/health" % self.port, timeout=1)
                break
            except OSError:
                time.sleep(0.1)

    def tearDown(self):
        self.proc.terminate()
        self.proc.wait(15)

    def test_check_and_mark_v2(self):
        path = os.path.join(self.tmp, "v2.cfg")
        with open(path, "w") as f:
            f.write('influxdb = { url = "http://127.0.0.1:%d"; api = "v2"; org = "o";'
                    ' bucket = "b"; };\nstate_dir = "%s/state";\n' % (self.port, self.tmp))
        env = {"PERFSHIP_TOKEN": SECRET}
        rc, out, err = run_perfship(["-c", path, "check"], env=env)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("/api/v2/write accepted", out)
        self.assertIn("PERFSHIP_TOKEN", out)
        self.assertNotIn(SECRET, out + err)
        rc, out, err = run_perfship(["-c", path, "mark", "end", "--run", "v2-run"], env=env)
        self.assertEqual(rc, 0, out + err)
        # without bucket the configuration is refused before any request
        with open(path, "w") as f:
            f.write('influxdb = { url = "http://127.0.0.1:%d"; api = "v2"; };\n' % self.port)
        rc, out, err = run_perfship(["-c", path, "check"], env=env)
        self.assertEqual(rc, 78, out + err)
        self.assertIn("influxdb.bucket", err)


if __name__ == "__main__":
    unittest.main()
