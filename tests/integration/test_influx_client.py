"""ps_rb_query (readback/query.h, over influx/client.h) against a real InfluxDB 1.6.7, and the
InfluxQL quoting helpers (influx/influxql.h) against its real parser.

tests/tools/influx_query runs one query through the client and prints the
return code, the error sentence and the server's JSON. Checked: a query
that returns rows (times in nanoseconds), InfluxQL errors (a bad statement,
a missing database), credentials refused by a server with auth-enabled
(and the password never shown), a server that is down (-EIO at once, not
after the timeout), VictoriaMetrics (no InfluxQL: -EOPNOTSUPP, not its
canned answer taken for data), and names and values taken from data that
try to break out of their quotes: each selects exactly its own rows.
"""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

TOOL = os.path.join(os.path.dirname(harness.PERFSHIP_BIN), "tests", "tools", "influx_query")

# Tag values (and a measurement) a benchmark could produce, each built to end
# the quotes of a naive query and change it.
HOSTILE = [
    "it's",
    'say "hi"',
    "back\\slash",
    "tail\\",
    "x' OR 'a'='a",
    "x'; DROP DATABASE perf; --",
    "\\' OR run =~ /.*/ --",
]


def tag_ok(v):
    # InfluxDB 1.x keeps a backslash in a tag value as it is, and cannot
    # carry one at the end or before a comma, '=' or space (see
    # docs/line-protocol.md): such values are only tested as string fields.
    return not v.endswith("\\") and not any(f"\\{c}" in v for c in ", =")


def lp_tag(v):
    return v.replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ")


def lp_string(v):
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


def query(url, *args, env=None, db="perf", timeout=60):
    argv = [TOOL, "--url", url, "--db", db] + list(args)
    e = dict(os.environ)
    e.pop("PERFSHIP_PASSWORD", None)
    e.pop("PERFSHIP_TOKEN", None)
    e.update(env or {})
    p = subprocess.run(argv, capture_output=True, timeout=timeout, env=e)
    if p.returncode != 0:
        raise AssertionError(f"influx_query {args} -> {p.returncode}: {p.stderr.decode()}")
    return json.loads(p.stdout)


def rows(answer):
    out = []
    for res in answer["results"]:
        for s in res.get("series", []) or []:
            for v in s.get("values", []):
                row = dict(zip(s["columns"], v))
                row["_measurement"] = s["name"]
                out.append(row)
    return out


class QueryTest(harness.InfluxTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.influx.create_db("perf")
        lines = ["cpu,host=a usage=1.5,n=3i 1000000000",
                 "cpu,host=b usage=2.5,n=4i 2000000000"]
        for i, v in enumerate(HOSTILE):
            tag = f",name={lp_tag(v)}" if tag_ok(v) else ""
            lines.append(f"runs,run=r{i}{tag} k={i}i,label={lp_string(v)} {3000000000 + i}")
        lines.append('we"ird,run=plain k=99i 5000000000')
        st, body = cls.influx.write("perf", "\n".join(lines) + "\n")
        assert st == 204, body

    def test_rows(self):
        out = query(self.influx.url, "SELECT usage, n FROM cpu ORDER BY time")
        self.assertEqual(out["rc"], 0, out["err"])
        series = out["answer"]["results"][0]["series"][0]
        self.assertEqual(series["name"], "cpu")
        self.assertEqual(series["columns"], ["time", "usage", "n"])
        # epoch=ns: times are integer nanoseconds, exactly as written
        self.assertEqual(series["values"], [[1000000000, 1.5, 3], [2000000000, 2.5, 4]])

    def test_several_statements_and_show(self):
        out = query(self.influx.url, "SELECT count(n) FROM cpu; SHOW DATABASES")
        self.assertEqual(out["rc"], 0, out["err"])
        results = out["answer"]["results"]
        self.assertEqual(results[0]["series"][0]["values"][0][1], 2)
        # InfluxDB's own database list is not mistaken for VictoriaMetrics'
        self.assertIn(["perf"], results[1]["series"][0]["values"])
        out = query(self.influx.url, "show databases")
        self.assertEqual(out["rc"], 0, out["err"])

    def test_influxql_errors(self):
        out = query(self.influx.url, "SELECT FROM WHERE")
        self.assertEqual(out["errno"], "EPROTO")
        self.assertIn("error parsing query", out["err"])
        self.assertIsNone(out["answer"])
        # the error of a later statement is not lost behind a good first one
        out = query(self.influx.url, "SELECT n FROM cpu; SELECT nope( FROM cpu")
        self.assertEqual(out["errno"], "EPROTO")
        out = query(self.influx.url, "SELECT mean(usage) FROM cpu WHERE host = 1 GROUP BY x(")
        self.assertEqual(out["errno"], "EPROTO")
        # a database that does not exist is an error of its own that names
        # it and says what to do
        out = query(self.influx.url, "SELECT * FROM cpu", db="nope")
        self.assertEqual(out["errno"], "ENOENT")
        self.assertIn('database "nope" not found', out["err"])
        self.assertIn('CREATE DATABASE "nope"', out["err"])

    def test_quoted_values_select_only_their_rows(self):
        tags = 0
        for i, v in enumerate(HOSTILE):
            # as a string field (any text) and, where line protocol can
            # carry it, as a tag
            for key in ("label", "name") if tag_ok(v) else ("label",):
                tags += key == "name"
                out = query(self.influx.url, "--where-tag", "runs", key, v)
                self.assertEqual(out["rc"], 0, f"{v!r}: {out['err']} in {out['query']}")
                got = rows(out["answer"])
                self.assertEqual([r["k"] for r in got], [i], f"{v!r} via {out['query']}")
                self.assertEqual(got[0][key], v)
        self.assertGreaterEqual(tags, 5)
        # a value that was never written matches nothing, even one built to
        # match everything
        out = query(self.influx.url, "--where-tag", "runs", "name", "y' OR '1'='1")
        self.assertEqual(out["rc"], 0, out["err"])
        self.assertEqual(rows(out["answer"]), [])
        # a quoted identifier: measurement and tag key from data
        out = query(self.influx.url, "--where-tag", 'we"ird', "run", "plain")
        self.assertEqual(out["rc"], 0, out["err"])
        self.assertEqual([r["k"] for r in rows(out["answer"])], [99])
        # the database is still there
        self.assertIn(["perf"], self.influx.query_raw("SHOW DATABASES")["results"][0]
                      ["series"][0]["values"])

    def test_server_down_fails_fast(self):
        port = harness.free_port()
        out = query(f"http://127.0.0.1:{port}", "--timeout-ms", "20000", "SHOW DATABASES")
        self.assertEqual(out["errno"], "EIO")
        self.assertIn(f"cannot reach http://127.0.0.1:{port}/query", out["err"])
        # refused at once, not after the 20 s timeout
        self.assertLess(out["ms"], 5000)


class AuthTest(harness.InfluxTestCase):
    influx_options = {"auth": True}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.influx.query_raw("CREATE USER admin WITH PASSWORD 'adm1n-pw' WITH ALL PRIVILEGES")
        cls.influx.query_raw("CREATE DATABASE perf", user="admin", password="adm1n-pw")
        cls.influx.query_raw("CREATE USER reader WITH PASSWORD 'Zq9-reader-secret'",
                             user="admin", password="adm1n-pw")
        cls.influx.query_raw('GRANT READ ON "perf" TO "reader"', user="admin",
                             password="adm1n-pw")
        st, body = cls.influx.write("perf", "m v=1i 1000\n", user="admin", password="adm1n-pw")
        assert st == 204, body

    def test_refused_credentials(self):
        out = query(self.influx.url, "--user", "reader", "SELECT * FROM m",
                    env={"PERFSHIP_PASSWORD": "wrong-Zq9-reader-secret"})
        self.assertEqual(out["errno"], "EACCES")
        self.assertIn("refused the credentials", out["err"])
        self.assertNotIn("wrong-Zq9-reader-secret", out["err"])
        out = query(self.influx.url, "SELECT * FROM m")
        self.assertEqual(out["errno"], "EACCES")

    def test_right_credentials(self):
        out = query(self.influx.url, "--user", "reader", "SELECT v FROM m",
                    env={"PERFSHIP_PASSWORD": "Zq9-reader-secret"})
        self.assertEqual(out["rc"], 0, out["err"])
        self.assertEqual(rows(out["answer"])[0]["v"], 1)
        # read-only: a statement it may not run is refused, with the server's words
        out = query(self.influx.url, "--user", "reader", "DROP DATABASE perf",
                    env={"PERFSHIP_PASSWORD": "Zq9-reader-secret"})
        self.assertIn(out["errno"], ("EACCES", "EPROTO"))
        self.assertNotIn("Zq9-reader-secret", out["err"])
        self.assertIn("perf", [r[0] for r in self.influx.query_raw(
            "SHOW DATABASES", user="admin", password="adm1n-pw")["results"][0]["series"][0]
            ["values"]])


@unittest.skipUnless(harness.VictoriaMetrics.BIN, "victoria-metrics is not installed")
class VictoriaMetricsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = harness.scratch_dir(cls, "perfship-vm-")
        cls.vm = harness.VictoriaMetrics(cls.tmp).start()
        cls.addClassCleanup(cls.vm.stop)

    def test_no_influxql(self):
        url = f"http://127.0.0.1:{self.vm.port}"
        for api in (["--api", "v1"], ["--api", "v2", "--bucket", "perf"]):
            out = query(url, *api, "--timeout-ms", "20000", "SELECT * FROM cpu")
            self.assertEqual(out["errno"], "EOPNOTSUPP", out)
            self.assertIn("no InfluxQL", out["err"])
            self.assertLess(out["ms"], 5000)


if __name__ == "__main__":
    unittest.main()
