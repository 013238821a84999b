"""`perfship verdicts` as a CI gate, against a real influxd holding verdict
points (docs/verdicts.md, "In CI"): `--fail-on regression` exits 3 when a
regression is in range and 0 when none is (also when the range or the
filters leave it out), after writing its whole output; `--format junit`
writes a file xmllint validates against the JUnit schema in tests/data,
one test case per series and metric, failed for a regression, with hostile
run names escaped; `--format markdown` is a table a pull-request comment
shows as it is, a `|` or a newline in a run name unable to split a cell;
`--fail-on unacknowledged` passes once every regression in range was
acknowledged (a `perfship_triage` point or a triage_file line, whose bad
lines are reported with file and line and lose nothing else), and JUnit
then shows the acknowledged case as skipped, not as failed.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import InfluxTestCase, run_perfship, write_config  # noqa: E402

XSD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "junit",
                   "junit.xsd")
# A run name with everything XML and markdown read: it has to come back
# as text in both.
HOSTILE = 'pr-<b>&"x\'|*@team*'


def verdict_line(run, series, metric, change, t_s, verdict, host="bench-a"):
    # line protocol: a tag escapes space, comma and '='; a string field '"' and '\\'
    tag = run.replace(" ", "\\ ").replace(",", "\\,").replace("=", "\\=")
    field = run.replace("\\", "\\\\").replace('"', '\\"')
    return (f"perfship_verdict,host={host},metric={metric},run={tag},"
            f"series={series},source=loadgen verdict=\"{verdict}\",value={30 + change},"
            f"baseline=30,change_pct={change * 100 / 30:.2f},change_run=\"{field}\","
            f"method=\"edivisive\",revision=\"abc123\",backfill=false {t_s * 10**9}")


class VerdictsInCI(InfluxTestCase):
    tmp_prefix = "perfship-verdicts-ci-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        now = int(time.time())
        cls.influx.create_db("perf")
        harness.write_lines(cls.influx, "perf", "\n".join([
            # two days ago: a regression on daily-perf, then its next run
            verdict_line("daily-perf-0001", "daily-perf", "cycleAvgDuration", 4.0,
                         now - 2 * 86400, "regression"),
            verdict_line("daily-perf-0002", "daily-perf", "cycleAvgDuration", 0.1,
                         now - 3600, "none"),
            verdict_line("daily-perf-0002", "daily-perf", "swingsetTime", -2.0,
                         now - 3600, "improvement"),
            # a PR image's series with a hostile name, a regression an hour ago
            verdict_line(HOSTILE, "manual", "cycleAvgDuration", 3.0, now - 3000,
                         "regression", host="bench-b"),
        ]))
        cls.influx.create_db("calm")
        harness.write_lines(cls.influx, "calm", "\n".join([
            verdict_line("daily-perf-0003", "daily-perf", "cycleAvgDuration", 0.1,
                         now - 3600, "none"),
            verdict_line("daily-perf-0003", "daily-perf", "swingsetTime", -3.0,
                         now - 3600, "improvement"),
        ]))

    def cfg(self, database="perf", triage_file=None):
        extra = f'triage_file = "{triage_file}";' if triage_file else ""
        return write_config(os.path.join(self.tmp, database + ".cfg"), self.influx.url,
                            os.path.join(self.tmp, "state-" + database), database=database,
                            extra=extra)

    def verdicts(self, *args, database="perf", triage_file=None):
        return run_perfship(["-c", self.cfg(database, triage_file), "verdicts", *args])

    def test_fail_on_regression_exit_codes(self):
        rc, out, err = self.verdicts("--fail-on", "regression")
        self.assertEqual(rc, 3, out + err)
        self.assertIn("2 regressions in range", err)
        self.assertIn("4 verdicts", out)          # the whole table first
        # without the gate the same verdicts exit 0
        rc, out, err = self.verdicts()
        self.assertEqual(rc, 0, out + err)
        # an improvement does not fail the gate
        rc, out, err = self.verdicts("--fail-on", "regression", database="calm")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("1 improvement", out)
        # out of range, or filtered out: no regression, exit 0
        rc, out, err = self.verdicts("--fail-on", "regression", "--since", "30m")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("0 verdicts", out)
        rc, out, err = self.verdicts("--fail-on", "regression", "--since", "1d",
                                     "--host", "bench-a")
        self.assertEqual(rc, 0, out + err)
        rc, out, err = self.verdicts("--fail-on", "regression", "--since", "1d",
                                     "--series", "manual")
        self.assertEqual(rc, 3, out + err)
        self.assertIn("1 regression in range", err)
        # the gate with the other faces: output written, then exit 3
        rc, out, err = self.verdicts("--fail-on", "regression", "--json")
        self.assertEqual(rc, 3, out + err)
        self.assertIn('"verdict":\t"regression"', out)
        # usage
        for bad in (["--fail-on", "everything"], ["--fail-on"], ["--format", "html"],
                    ["--fail-on", "acknowledged"]):
            rc, out, err = self.verdicts(*bad)
            self.assertEqual(rc, 64, out + err)

    def test_missing_database_is_not_a_gate_failure(self):
        # a gate that cannot read says 69, never 0 (passing) nor 3
        rc, out, err = self.verdicts("--fail-on", "regression", database="absent_db")
        self.assertEqual(rc, 69, out + err)

    @unittest.skipUnless(shutil.which("xmllint"), "xmllint (libxml2-utils) not installed")
    def test_junit_validates_and_says_what_failed(self):
        rc, out, err = self.verdicts("--format", "junit", "--fail-on", "regression")
        self.assertEqual(rc, 3, out + err)
        path = os.path.join(self.tmp, "verdicts.xml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(out)
        v = subprocess.run(["xmllint", "--noout", "--schema", XSD, path],
                           capture_output=True, text=True)
        self.assertEqual(v.returncode, 0, v.stderr + out)
        root = ET.fromstring(out.encode())
        self.assertEqual(root.tag, "testsuites")
        cases = root.findall("./testsuite/testcase")
        # one case per (host, series, metric): daily-perf cycleAvgDuration and
        # swingsetTime on bench-a, manual cycleAvgDuration on bench-b
        self.assertEqual(len(cases), 3, out)
        failed = {(c.get("classname"), c.get("name")): c.find("failure") for c in cases}
        self.assertEqual(root.get("tests"), "3")
        self.assertEqual(root.get("failures"), "2")
        self.assertIsNotNone(failed[("loadgen.daily-perf on bench-a", "cycleAvgDuration")])
        self.assertIsNone(failed[("loadgen.daily-perf on bench-a", "swingsetTime")])
        manual = failed[("loadgen.manual on bench-b", "cycleAvgDuration")]
        self.assertIsNotNone(manual)
        # the hostile name came back as text, in the message and the body
        self.assertIn(HOSTILE, manual.get("message"))
        self.assertIn(f"run {HOSTILE}: +10.0 %", manual.text)
        self.assertIn("revision abc123", manual.text)
        # the calm database: every case passes
        rc, out, err = self.verdicts("--format", "junit", database="calm")
        self.assertEqual(rc, 0, out + err)
        root = ET.fromstring(out.encode())
        self.assertEqual((root.get("tests"), root.get("failures")), ("2", "0"))

    def junit_failures(self, database, lines):
        """{(classname, name): runs named in its failure's text} of
        `verdicts --format junit` over `lines` written into `database`."""
        self.influx.create_db(database)
        harness.write_lines(self.influx, database, "\n".join(lines))
        rc, out, err = self.verdicts("--format", "junit", database=database)
        self.assertEqual(rc, 0, out + err)
        got = {}
        for c in ET.fromstring(out.encode()).findall("./testsuite/testcase"):
            f = c.find("failure")
            if f is not None:
                got[(c.get("classname"), c.get("name"))] = sorted(
                    ln.split(":")[0][len("run "):] for ln in f.text.splitlines()
                    if ln.startswith("run "))
        return got

    def test_junit_failure_names_only_its_own_runs(self):
        # two regressions of two metrics: the second case named the first's too
        now = int(time.time())
        got = self.junit_failures("two_failing", [
            verdict_line("daily-perf-r1", "daily-perf", "cycleAvgDuration", 4.0,
                         now - 7200, "regression"),
            verdict_line("daily-perf-r2", "daily-perf", "live_avgSwingsetTime", 3.0,
                         now - 3600, "regression"),
        ])
        self.assertEqual(got, {
            ("loadgen.daily-perf on bench-a", "cycleAvgDuration"): ["daily-perf-r1"],
            ("loadgen.daily-perf on bench-a", "live_avgSwingsetTime"): ["daily-perf-r2"],
        })
        # seven failing cases of two runs each, their rows interleaved by the
        # sort on change: the last case listed all seven cases' runs
        lines, want = [], {}
        for k in range(7):
            metric = f"stage{k}_cycleAvgDuration"
            runs = [f"daily-perf-{k}a", f"daily-perf-{k}b"]
            for j, run in enumerate(runs):
                lines.append(verdict_line(run, "daily-perf", metric, 2.0 + k * 0.3 + j * 2.5,
                                          now - 7200 + j * 600 + k, "regression"))
            want[("loadgen.daily-perf on bench-a", metric)] = sorted(runs)
        self.assertEqual(self.junit_failures("seven_failing", lines), want)

    def test_markdown_summary(self):
        rc, out, err = self.verdicts("--format", "markdown")
        self.assertEqual(rc, 0, out + err)
        lines = out.splitlines()
        self.assertEqual(lines[0], "### perfship verdicts: 2 regressions, 1 improvement")
        rows = [ln for ln in lines if ln.startswith("| ")]
        self.assertEqual(len(rows), 4, out)      # the header and three changes
        self.assertTrue(rows[0].startswith("| verdict | change |"))
        # regressions first, the larger first; the `none` is only counted
        self.assertIn("regression | +13.3 %", rows[1])
        self.assertIn("regression | +10.0 %", rows[2])
        self.assertIn("improvement | -6.7 %", rows[3])
        # every row has the header's cells: a `|` from the data is escaped
        for r in rows:
            cells = [c for c in r.replace("\\|", "").split("|")]
            self.assertEqual(len(cells), 12, r)
        self.assertIn("pr\\-\\<b\\>\\&\\\"x\\'\\|\\*\\@team\\*", rows[2])
        self.assertNotIn("@team", out.replace("\\@team", ""))


class UnacknowledgedInCI(InfluxTestCase):
    """--fail-on unacknowledged over the decisions people took (docs/schema.md,
    "Triage decisions"): the server's points and a triage_file."""
    tmp_prefix = "perfship-verdicts-ack-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        now = int(time.time())
        cls.influx.create_db("perf")
        harness.write_lines(cls.influx, "perf", "\n".join([
            verdict_line("daily-perf-0001", "daily-perf", "cycleAvgDuration", 4.0,
                         now - 2 * 86400, "regression"),
            # a later run at the new level: the same change, seen again
            verdict_line("daily-perf-0002", "daily-perf", "cycleAvgDuration", 4.1,
                         now - 86400, "regression").replace(
                'change_run="daily-perf-0002"', 'change_run="daily-perf-0001"'),
            verdict_line("manual-77", "manual", "swingsetTime", 3.0, now - 3600, "regression",
                         host="bench-b"),
        ]))

    def cfg(self, triage_file=None):
        extra = f'triage_file = "{triage_file}";' if triage_file else ""
        return write_config(os.path.join(self.tmp, "ack.cfg"), self.influx.url,
                            os.path.join(self.tmp, "state"), extra=extra)

    def test_acknowledged_regressions_pass_the_gate(self):
        cfg = self.cfg()
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--fail-on", "unacknowledged"])
        self.assertEqual(rc, 3, out + err)
        self.assertIn("3 unacknowledged regressions in range", err)
        # someone acknowledged the nightly change on the server: it and the
        # later run that sees the same change are known now
        t = time.time_ns()
        harness.write_lines(self.influx, "perf",
                            'perfship_triage,action=ack,id=t0123456789ab run="daily-perf-0001",'
                            'metric="cycleAvgDuration",who="ana",reason="expected: the <new> | '
                            f'cache costs 13 %",ticket="https://tickets.example/T-1" {t}')
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--fail-on", "unacknowledged"])
        self.assertEqual(rc, 3, out + err)
        self.assertIn("1 unacknowledged regression in range", err)
        # --fail-on regression still fails on all three
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--fail-on", "regression"])
        self.assertEqual(rc, 3, out + err)
        self.assertIn("3 regressions in range", err)
        # the PR image's one, in a triage_file, beside a bad line that loses nothing
        path = os.path.join(self.tmp, "triage.txt")
        with open(path, "w") as f:
            f.write("# kept in git\n"
                    "ack run=manual-77 host=bench-b reason=\"flaky host\"\n"
                    "acknowledge run=manual-78 reason=typo\n")
        cfg = self.cfg(path)
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--fail-on", "unacknowledged"])
        self.assertEqual(rc, 0, out + err)
        self.assertIn(f"{path}:3:", err)
        self.assertNotIn(f"{path}:2:", err)
        # JUnit: the acknowledged cases are skipped with who and why, none failed
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--format", "junit",
                                     "--fail-on", "unacknowledged"])
        self.assertEqual(rc, 0, out + err)
        root = ET.fromstring(out.encode())
        self.assertEqual((root.get("tests"), root.get("failures")), ("2", "0"))
        suite = root.find("testsuite")
        self.assertEqual(suite.get("skipped"), "2")
        skipped = {c.get("classname"): c.find("skipped").get("message")
                   for c in suite.findall("testcase")}
        self.assertIn("acknowledged by ana: expected: the <new> | cache costs 13 %",
                      skipped["loadgen.daily-perf on bench-a"])
        self.assertIn("https://tickets.example/T-1", skipped["loadgen.daily-perf on bench-a"])
        self.assertIn("flaky host", skipped["loadgen.manual on bench-b"])
        if shutil.which("xmllint"):
            xml = os.path.join(self.tmp, "ack.xml")
            with open(xml, "w") as f:
                f.write(out)
            v = subprocess.run(["xmllint", "--noout", "--schema", XSD, xml],
                               capture_output=True, text=True)
            self.assertEqual(v.returncode, 0, v.stderr)
        # markdown: counted and said, the ticket a link, the reason escaped
        rc, out, err = run_perfship(["-c", cfg, "verdicts", "--format", "markdown"])
        self.assertEqual(rc, 0, out + err)
        self.assertIn("3 regressions (3 acknowledged)", out.splitlines()[0])
        self.assertIn("acknowledged by ana: expected\\: the \\<new\\> \\| cache costs 13 \\% "
                      "([ticket](https://tickets.example/T-1))", out)
        # a server whose triage read fails cannot pass the gate: 69, not 0
        down = write_config(os.path.join(self.tmp, "down.cfg"), "http://127.0.0.1:9",
                            os.path.join(self.tmp, "state-down"))
        rc, out, err = run_perfship(["-c", down, "verdicts", "--fail-on", "unacknowledged"])
        self.assertEqual(rc, 69, out + err)


if __name__ == "__main__":
    unittest.main()
