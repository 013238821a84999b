"""`perfship convert -f locust` into a real InfluxDB: every stats row and
every failures row lands as its own point with the CSV's values, history
rows land at their own Timestamp; quoted cells and N/A survive the trip."""
import csv
import glob
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DATA_DIR, InfluxTestCase, convert_into, run_perfship  # noqa: E402

LOCUST = os.path.join(DATA_DIR, "dss", "synth", "locust_isa")

# The field keys a user finds in InfluxDB for Locust's headers (docs/schema.md).
KEYS = {
    "Request Count": "request_count", "Failure Count": "failure_count",
    "Median Response Time": "median_response_time",
    "Average Response Time": "average_response_time",
    "Min Response Time": "min_response_time", "Max Response Time": "max_response_time",
    "Average Content Size": "average_content_size", "Requests/s": "requests_per_s",
    "Failures/s": "failures_per_s", "50%": "p50", "66%": "p66", "75%": "p75",
    "80%": "p80", "90%": "p90", "95%": "p95", "98%": "p98", "99%": "p99",
    "99.9%": "p99_9", "99.99%": "p99_99", "100%": "p100", "User Count": "user_count",
    "Total Request Count": "total_request_count",
    "Total Failure Count": "total_failure_count",
    "Total Median Response Time": "total_median_response_time",
    "Total Average Response Time": "total_average_response_time",
    "Total Min Response Time": "total_min_response_time",
    "Total Max Response Time": "total_max_response_time",
    "Total Average Content Size": "total_average_content_size",
}
INTEGERS = {"request_count", "failure_count", "user_count", "total_request_count",
            "total_failure_count", "occurrences"}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def expected(row, key):
    v = row[key]
    if v in ("", "N/A"):
        return None
    return int(float(v)) if KEYS[key] in INTEGERS else float(v)


class LocustConvertTest(InfluxTestCase):
    tmp_prefix = "perfship-locust-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # A second run with what the fixture lacks: quoted cells with commas,
        # quotes and a line break, and N/A percentiles of an unused endpoint.
        cls.q_failures = os.path.join(cls.tmp, "quoted_failures.csv")
        with open(cls.q_failures, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["Method", "Name", "Error", "Occurrences"])
            w.writerow(["PUT", "/isa/[id]", "ValueError('a, b')", 4])
            w.writerow(["PUT", "/isa/[id]", 'HTTPError("409, \\"taken\\"")', 2])
            w.writerow(["GET", "/isa,list", "ConnectionError('reset\r\nby peer')", 1])
        with open(os.path.join(LOCUST, "isa_stats.csv"), newline="") as f:
            rows = list(csv.reader(f))
        rows.insert(1, ["GET", "/unused", "0", "0", "0", "0", "0", "0", "0", "0.0", "0.0"]
                    + ["N/A"] * 11)
        cls.q_stats = os.path.join(cls.tmp, "quoted_stats.csv")
        with open(cls.q_stats, "w", newline="") as f:
            csv.writer(f).writerows(rows)

        cls.stats = os.path.join(LOCUST, "isa_stats.csv")
        cls.failures = os.path.join(LOCUST, "isa_failures.csv")
        cls.history = os.path.join(LOCUST, "isa_stats_history.csv")
        cls.rc, cls.out, cls.err = convert_into(
            cls.influx, "perf", "locust",
            [cls.stats, cls.failures, cls.history, cls.q_failures, cls.q_stats])

    def q(self, query):
        return self.influx.query("perf", query)

    def test_clean_exit(self):
        self.assertEqual(self.rc, 0, self.err)
        self.assertEqual(self.err, "")

    def check_stats(self, run, path):
        rows = read_csv(path)
        got = self.q(f"SELECT * FROM locust_stats WHERE run='{run}' GROUP BY *")
        self.assertEqual(len(got), len(rows))
        by_key = {(g.get("type") or "", g["name"]): g for g in got}
        mtime_ns = int(os.stat(path).st_mtime) * 10**9
        for row in rows:
            with self.subTest(run=run, name=row["Name"]):
                g = by_key[(row["Type"], row["Name"])]
                self.assertEqual(g["time"], mtime_ns)
                for col in row:
                    if col in ("Type", "Name"):
                        continue
                    self.assertEqual(g[KEYS[col]], expected(row, col), col)
        return by_key

    def test_every_stats_row(self):
        by_key = self.check_stats("isa", self.stats)
        agg = by_key[("", "Aggregated")]
        # no type tag on the Aggregated row (GROUP BY * shows it as "")
        keys = [r["key"] for r in self.q(
            "SHOW SERIES FROM locust_stats WHERE run='isa' AND \"name\"='Aggregated'")]
        self.assertEqual(keys, ["locust_stats,name=Aggregated,run=isa"])
        self.assertEqual(agg["request_count"], 3188)

    def test_na_is_absent(self):
        by_key = self.check_stats("quoted", self.q_stats)
        unused = by_key[("GET", "/unused")]
        self.assertEqual(unused["request_count"], 0)
        self.assertIsNone(unused["p50"])
        self.assertIsNone(unused["p99_9"])

    def check_failures(self, run, path):
        rows = read_csv(path)
        got = self.q(f"SELECT * FROM locust_failures WHERE run='{run}' GROUP BY *")
        self.assertEqual(len(got), len(rows))
        mtime_ns = int(os.stat(path).st_mtime) * 10**9
        got.sort(key=lambda g: g["time"])
        for i, (g, row) in enumerate(zip(got, rows)):
            with self.subTest(run=run, row=i):
                self.assertEqual(g["time"], mtime_ns + i)
                self.assertEqual(g["type"], row["Method"])
                self.assertEqual(g["name"], row["Name"])
                self.assertEqual(g["error"], row["Error"].replace("\r", "\\r").replace("\n", "\\n"))
                self.assertEqual(g["occurrences"], int(row["Occurrences"]))

    def test_every_failures_row(self):
        self.check_failures("isa", self.failures)

    def test_quoted_cells(self):
        self.check_failures("quoted", self.q_failures)

    def test_history_rows_at_their_timestamps(self):
        rows = read_csv(self.history)
        got = self.q("SELECT * FROM locust_history WHERE run='isa' GROUP BY *")
        self.assertEqual(len(got), len(rows))
        got.sort(key=lambda g: g["time"])
        for line, (g, row) in enumerate(zip(got, rows), start=2):
            with self.subTest(ts=row["Timestamp"]):
                # its Timestamp plus its line number in ns (docs/schema.md)
                self.assertEqual(g["time"], int(row["Timestamp"]) * 10**9 + line)
                self.assertEqual(g["name"], row["Name"])
                self.assertIsNone(g.get("type"))
                for col in row:
                    if col in ("Timestamp", "Type", "Name"):
                        continue
                    self.assertEqual(g[KEYS[col]], expected(row, col), col)

    def test_field_types(self):
        for m in ("locust_stats", "locust_history", "locust_failures"):
            fields = {r["fieldKey"]: r["fieldType"] for r in self.q(f"SHOW FIELD KEYS FROM {m}")}
            for key, typ in fields.items():
                with self.subTest(measurement=m, key=key):
                    want = ("integer" if key in INTEGERS
                            else "string" if key == "error" else "float")
                    self.assertEqual(typ, want)

    def test_csv_folder_glob(self):
        """`convert -f locust out/*.csv` over a Locust --csv folder: the
        exceptions file is noted on stderr and skipped, the exit status is 0,
        and the other three files land as if named alone."""
        paths = sorted(glob.glob(os.path.join(LOCUST, "*.csv")))
        exceptions = os.path.join(LOCUST, "isa_exceptions.csv")
        self.assertIn(exceptions, paths)
        rc, out, err = convert_into(self.influx, "globbed", "locust", paths)
        self.assertEqual(rc, 0, err)
        self.assertEqual(
            err, f"perfship convert: {exceptions}: Locust exceptions file; not converted\n")
        for m in ("locust_stats", "locust_failures", "locust_history"):
            with self.subTest(measurement=m):
                want = self.q(f"SELECT * FROM {m} WHERE run='isa' GROUP BY *")
                got = self.influx.query("globbed", f"SELECT * FROM {m} GROUP BY *")
                self.assertTrue(want)
                self.assertEqual(got, want)

    def test_other_files_stay_errors(self):
        """Only Locust's own exceptions file is skipped: a file that is no
        Locust output, or an exceptions file that is not there, is still an
        error (exit 66) naming the file."""
        exceptions = os.path.join(LOCUST, "isa_exceptions.csv")
        readme = os.path.join(DATA_DIR, "loadgen", "README.md")
        missing = os.path.join(self.tmp, "gone_exceptions.csv")
        for args, why in (([exceptions, readme], "not a Locust --csv"),
                          ([missing], "cannot read")):
            with self.subTest(args=args):
                rc, out, err = run_perfship(["convert", "-f", "locust"] + args)
                self.assertEqual(rc, 66, err)
                self.assertEqual(out, "")
                self.assertIn(why, err)
                self.assertIn(os.path.basename(args[-1]), err)

if __name__ == "__main__":
    unittest.main()
