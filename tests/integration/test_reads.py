"""Reads that fail say so, against a real influxd (docs/operations.md,
"Reads"): a missing database, or a v2 bucket InfluxQL cannot find (no
database and retention policy mapped to it), makes `perfship verdicts`
and `perfship report` exit 69 with the database named, never "0
verdicts" or an empty page; a bucket spelt "db/rp" reads that database and
retention policy; `perfship check` tries a read and names credentials that
can write but not read; `perfship verdicts --host` shows whose verdicts.
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import InfluxTestCase, run_perfship, write_config  # noqa: E402

CHART_JS = "/usr/share/javascript/chart.js/chart.min.js"
# Longer than any word of the server's answers, which are redacted of it.
PASSWORD = "pw-7Qz9-not-in-any-message"


def verdict_line(host, run, change, t_s, verdict="regression"):
    return (f"perfship_verdict,host={host},metric=cycleAvgDuration,run={run},"
            f"series=daily-perf,source=loadgen verdict=\"{verdict}\",value={30 + change},"
            f"baseline=30,change_pct={change * 100 / 30:.2f},change_run=\"{run}\","
            f"method=\"edivisive\",backfill=false {t_s * 10**9}")


class MissingReads(InfluxTestCase):
    tmp_prefix = "perfship-reads-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        now = int(time.time())
        cls.influx.create_db("perf")
        harness.write_lines(cls.influx, "perf", "\n".join([
            verdict_line("bench-a", "daily-perf-aaaa", 3.0, now - 3600),
            verdict_line("bench-b", "daily-perf-aaaa", 0.3, now - 3500, "none"),
            verdict_line("bench-c", "daily-perf-cccc", -2.0, now - 3400, "improvement"),
        ]))

    def cfg(self, name, **kw):
        return write_config(os.path.join(self.tmp, name + ".cfg"), self.influx.url,
                            os.path.join(self.tmp, "state-" + name), **kw)

    def v2(self, name, bucket):
        return self.cfg(name, influx_extra=f'api = "v2"; org = "o"; bucket = "{bucket}";')

    def test_missing_database_exits_69_named(self):
        cfg = self.cfg("missing", database="absent_db")
        rc, out, err = run_perfship(["-c", cfg, "verdicts"])
        self.assertEqual(rc, 69, out + err)
        self.assertIn('database "absent_db" not found', err)
        self.assertNotIn("0 verdicts", out)
        if os.path.exists(CHART_JS):
            page = os.path.join(self.tmp, "missing.html")
            rc, out, err = run_perfship(["-c", cfg, "report", "-o", page])
            self.assertEqual(rc, 69, out + err)
            self.assertIn('database "absent_db" not found', err)
            self.assertFalse(os.path.exists(page))

    def test_unmapped_bucket_exits_69_with_the_mapping_to_make(self):
        # /query finds a v2 bucket only through a database it is mapped to
        cfg = self.v2("unmapped", "perf-bucket")
        for args in (["verdicts"], ["report", "-o", os.path.join(self.tmp, "u.html")]):
            if args[0] == "report" and not os.path.exists(CHART_JS):
                continue
            with self.subTest(args=args[0]):
                rc, out, err = run_perfship(["-c", cfg] + args, env={"PERFSHIP_TOKEN": "t"})
                self.assertEqual(rc, 69, out + err)
                self.assertIn('database "perf-bucket" not found', err)
                self.assertIn("influx v1 dbrp create --db perf-bucket", err)

    def test_bucket_db_rp_reads_that_database(self):
        # InfluxDB 1.8's v2 form: database/retention policy
        cfg = self.v2("dbrp", "perf/autogen")
        rc, out, err = run_perfship(["-c", cfg, "verdicts"], env={"PERFSHIP_TOKEN": "t"})
        self.assertEqual(rc, 0, out + err)
        self.assertIn("3 verdicts", out)
        cfg = self.v2("dbrp-bad-rp", "perf/no_such_rp")
        rc, out, err = run_perfship(["-c", cfg, "verdicts"], env={"PERFSHIP_TOKEN": "t"})
        self.assertEqual(rc, 69, out + err)
        self.assertIn("no_such_rp", err)

    def test_empty_existing_database_is_no_error(self):
        self.influx.create_db("empty_db")
        cfg = self.cfg("empty", database="empty_db")
        rc, out, err = run_perfship(["-c", cfg, "verdicts"])
        self.assertEqual(rc, 0, out + err)
        self.assertIn("0 verdicts", out)

    def test_verdicts_host_column_and_filter(self):
        cfg = self.cfg("hosts")
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--all"])
        self.assertEqual(rc, 0, out + err)
        lines = out.splitlines()
        self.assertIn("HOST", lines[1].split())
        rows = {(ln.split()[0], ln.split()[3]) for ln in lines[2:]}
        # the same run name on two machines: two rows, each with its host
        self.assertEqual(rows, {("regression", "bench-a"), ("none", "bench-b"),
                                ("improvement", "bench-c")})
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--all", "--host", "bench-b"])
        self.assertEqual(rc, 0, out + err)
        self.assertIn("1 verdicts", out)
        self.assertEqual([ln.split()[3] for ln in out.splitlines()[2:]], ["bench-b"])
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--all", "--host", "bench-a",
                                     "--host", "bench-c"])
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(sorted(ln.split()[3] for ln in out.splitlines()[2:]),
                         ["bench-a", "bench-c"])
        # a host no verdict has: nothing, and a hostile name selects nothing
        for h in ("bench-z", "x' OR 'a'='a"):
            rc, out, err = run_perfship(["-c", cfg, "verdicts", "--host", h])
            self.assertEqual(rc, 0, out + err)
            self.assertIn("0 verdicts", out)
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--host"])
        self.assertEqual(rc, 64, out + err)


def run_lines(host, run, value, t_s):
    rev = run.rsplit("-", 1)[1]
    return [f"runs,event=start,host={host},revision={rev},run={run},source=loadgen,status=running"
            f" text=\"started\" {t_s * 10**9}",
            f"loadgen_run,host={host},revision={rev},run={run},test_type=daily-perf "
            f"cycleAvgDuration={value},status=\"success\",duration=600 {t_s * 10**9}",
            f"runs,event=end,host={host},revision={rev},run={run},source=loadgen,status=success"
            f" text=\"ok\",duration=600 {(t_s + 600) * 10**9}"]


@unittest.skipUnless(os.path.exists(CHART_JS), "needs libjs-chart.js")
class ReportHosts(InfluxTestCase):
    """Two machines, the same run names: the report counts every run of
    every host, and --host narrows it to one."""
    tmp_prefix = "perfship-reads-hosts-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        now = int(time.time()) - 86400
        lines = []
        for i, rev in enumerate(("1111111", "2222222", "3333333")):
            lines += run_lines("bench-a", f"daily-perf-{rev}", 24.0 + i / 10, now + i * 3600)
            lines += run_lines("bench-b", f"daily-perf-{rev}", 32.0 + i / 10, now + i * 3600 + 60)
        lines += run_lines("bench-b", "daily-perf-4444444", 32.5, now + 4 * 3600)
        cls.influx.create_db("perf")
        harness.write_lines(cls.influx, "perf", "\n".join(lines))
        cls.cfg = write_config(os.path.join(cls.tmp, "r.cfg"), cls.influx.url,
                               os.path.join(cls.tmp, "state"))

    def page(self, *args):
        rc, out, err = run_perfship(["-c", self.cfg, "report", "-o", "-", "--since", "7d"]
                                    + list(args))
        self.assertEqual(rc, 0, err)
        return out.split("<script", 1)[0]

    def test_every_run_of_every_host(self):
        body = self.page()
        self.assertIn("7 loadgen runs", body)
        one = self.page("--host", "bench-a")
        self.assertIn("3 loadgen runs", one)
        self.assertNotIn("daily-perf-4444444", one)
        both = self.page("--host", "bench-a", "--host", "bench-b")
        self.assertIn("7 loadgen runs", both)
        none = self.page("--host", "x' OR 'a'='a")
        self.assertIn("No loadgen run in this range.", none)


class WriteButNotRead(InfluxTestCase):
    """influxd with auth on and a user with WRITE only on the database."""
    tmp_prefix = "perfship-reads-auth-"
    influx_options = {"auth": True}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        admin = {"user": "admin", "password": PASSWORD}
        cls.influx.query_raw(f"CREATE USER admin WITH PASSWORD '{PASSWORD}' WITH ALL PRIVILEGES")
        cls.influx.create_db("perf", **admin)
        cls.influx.query_raw(f"CREATE USER writer WITH PASSWORD '{PASSWORD}'", **admin)
        cls.influx.query_raw('GRANT WRITE ON "perf" TO "writer"', **admin)
        cls.influx.query_raw(f"CREATE USER both WITH PASSWORD '{PASSWORD}'", **admin)
        cls.influx.query_raw('GRANT ALL ON "perf" TO "both"', **admin)

    def cfg(self, user):
        pw = os.path.join(self.tmp, user + ".pw")
        with open(pw, "w") as f:
            f.write(PASSWORD + "\n")
        os.chmod(pw, 0o600)
        return write_config(os.path.join(self.tmp, user + ".cfg"), self.influx.url,
                            os.path.join(self.tmp, "state"),
                            influx_extra=f'username = "{user}"; password_file = "{pw}"; '
                                         'create_database = false;')

    def test_check_names_write_but_not_read(self):
        rc, out, err = run_perfship(["-c", self.cfg("writer"), "check"])
        self.assertEqual(rc, 69, out + err)
        self.assertIn("write probe: /write accepted", out)
        self.assertIn('user "writer" can write but not read database "perf"', err)
        self.assertNotIn("check: ok", out)
        self.assertNotIn(PASSWORD, out + err)

    def test_check_passes_with_read_and_write(self):
        rc, out, err = run_perfship(["-c", self.cfg("both"), "check"])
        self.assertEqual(rc, 0, out + err)
        self.assertIn('read probe: SHOW MEASUREMENTS answered: database "perf" can be read', out)
        self.assertIn("check: ok", out)


if __name__ == "__main__":
    unittest.main()
