"""`perfship convert -f dss-bench` into a real InfluxDB: every results.json
fixture lands value for value, in variant order, with no fake 0 ms latency,
one run marker per file; a truncated file is reported with its position and
does not stop the other files of the same call."""
import copy
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import DATA_DIR, InfluxTestCase, convert_into, run_perfship  # noqa: E402

SYNTH = os.path.join(DATA_DIR, "dss", "synth")
VALID = ["latency_compare_images", "datastores_with_errors", "baseline_single",
         "legacy_dss_bench_per_dss"]
LATENCIES = ["p50_ms", "p95_ms", "err_p50_ms", "err_p95_ms", "p50_all_ms", "p95_all_ms"]


def expected_latency(dp, key):
    """The file's value, or None where docs/schema.md says the 0.0 means no data."""
    v = dp.get(key)
    successes = dp["rps_total"] != 0.0
    errors = dp["errors"] != 0
    if key in ("p50_ms", "p95_ms"):
        has_samples = successes
    elif key.startswith("err_"):
        has_samples = errors
    else:
        has_samples = successes or errors
    return None if (v == 0.0 and not has_samples) else v


class DssConvertTest(InfluxTestCase):
    tmp_prefix = "perfship-dss-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # A run where every call failed, made from a real fixture.
        with open(os.path.join(SYNTH, "baseline_single", "results.json")) as f:
            doc = json.load(f)
        for dp in doc["by_test"]["rid_isa"]["baseline"]:
            errors = dp["errors"] + 50
            dp.update(rps_total=0.0, p50_ms=0.0, p95_ms=0.0, errors=errors,
                      err_p50_ms=10012.5, err_p95_ms=10090.0,
                      p50_all_ms=10012.5, p95_all_ms=10090.0)
            dp["rps_per_target"] = {k: 0.0 for k in dp["rps_per_target"]}
        os.mkdir(os.path.join(cls.tmp, "all_failed"))
        cls.failed_path = os.path.join(cls.tmp, "all_failed", "results.json")
        with open(cls.failed_path, "w") as f:
            json.dump(doc, f, indent=2)
        cls.failed_doc = doc

        cls.paths = {name: os.path.join(SYNTH, name, "results.json") for name in VALID}
        cls.paths["all_failed"] = cls.failed_path
        cls.docs = {}
        for name, path in cls.paths.items():
            with open(path) as f:
                cls.docs[name] = json.load(f)
        cls.truncated = os.path.join(SYNTH, "truncated", "results.json")
        # the truncated file in the middle: the files after it must still come
        paths = ([cls.paths["latency_compare_images"], cls.truncated] +
                 [cls.paths[n] for n in VALID[1:]] + [cls.failed_path])
        cls.rc, cls.out, cls.err = convert_into(cls.influx, "perf", "dss-bench", paths)

    def q(self, query):
        return self.influx.query("perf", query)

    def test_truncated_file_reported_with_position(self):
        self.assertEqual(self.rc, 65, self.err)
        with open(self.truncated, "rb") as f:
            data = f.read()
        line = data.count(b"\n") + 1
        col = len(data) - (data.rfind(b"\n") + 1) + 1
        want = (f"{self.truncated}: invalid JSON at line {line}, column {col} "
                f"(byte {len(data)}): unexpected end")
        self.assertIn(want, self.err)
        self.assertEqual(self.q("SELECT count(rps_total) FROM dss_bench WHERE run='truncated'"), [])

    def test_every_point_in_variant_order(self):
        for run, doc in self.docs.items():
            meta = doc["meta"]
            legacy = "context" in meta
            processes = (meta["processes/DSS"] * meta["num_uss"] * meta["num_nodes"]
                         if legacy else meta["processes"])
            mtime_ns = int(os.stat(self.paths[run]).st_mtime) * 10**9
            for test, arms in doc["by_test"].items():
                for arm, points in arms.items():
                    with self.subTest(run=run, test=test, arm=arm):
                        rows = self.q(
                            f"SELECT * FROM dss_bench WHERE run='{run}' AND test='{test}' "
                            f"AND arm='{arm}'")
                        rows.sort(key=lambda r: r["variantIndex"])
                        self.assertEqual([r["variant"] for r in rows],
                                         [dp["label"] for dp in points])
                        self.assertEqual([r["variantIndex"] for r in rows],
                                         list(range(len(points))))
                        for r, dp in zip(rows, points):
                            self.assertEqual(r["time"], mtime_ns)
                            self.assertEqual(r["sweep"], meta.get("sweep", meta.get("context")))
                            self.assertEqual(r["base_datastore"], meta["datastore"])
                            self.assertEqual(r["base_image"], meta["image"])
                            self.assertEqual(r["rps_total"], dp["rps_total"])
                            self.assertEqual(r["errors"], dp["errors"])
                            for key in LATENCIES:
                                self.assertEqual(r[key], expected_latency(dp, key), key)
                            self.assertEqual(r["processes"], processes)
                            self.assertEqual(r["duration_s"], meta["duration_s"])
                            self.assertEqual(r["num_uss"], meta["num_uss"])
                            self.assertEqual(r["num_nodes"], meta["num_nodes"])
                        targets = self.q(
                            f"SELECT rps FROM dss_bench_target WHERE run='{run}' "
                            f"AND test='{test}' AND arm='{arm}' GROUP BY target, variant")
                        got = sorted((t["variant"], t["target"], t["rps"]) for t in targets)
                        key = "rps_per_dss" if legacy else "rps_per_target"
                        want = sorted((dp["label"], url, v) for dp in points
                                      for url, v in dp[key].items())
                        self.assertEqual(got, want)

    def test_integer_fields(self):
        fields = {r["fieldKey"]: r["fieldType"] for r in self.q("SHOW FIELD KEYS FROM dss_bench")}
        for key in ("variantIndex", "errors", "processes", "num_uss", "num_nodes"):
            self.assertEqual(fields[key], "integer", key)
        for key in ["rps_total", "duration_s"] + LATENCIES:
            self.assertEqual(fields[key], "float", key)

    def test_error_heavy_run_has_no_fake_zero_latency(self):
        rows = self.q("SELECT rps_total, p50_ms, p95_ms, errors, err_p50_ms FROM dss_bench "
                      "WHERE run='datastores_with_errors' AND test='rid_isa_sub' "
                      "AND arm='crdb' AND variant='100ms'")
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["errors"], 108)
        self.assertEqual(rows[0]["err_p50_ms"], 10027.6)
        self.assertIsNone(rows[0]["p50_ms"])
        self.assertIsNone(rows[0]["p95_ms"])
        # nowhere in the database does a latency read 0 ms
        for key in LATENCIES:
            rows = self.q(f"SELECT min({key}) FROM dss_bench")
            self.assertGreater(rows[0]["min"], 0.0, key)

    def test_one_marker_per_file(self):
        rows = self.q("SELECT * FROM runs WHERE source='dss_bench' GROUP BY *")
        self.assertEqual(sorted(r["run"] for r in rows), sorted(self.paths))
        for r in rows:
            with self.subTest(run=r["run"]):
                self.assertEqual(r["event"], "end")
                self.assertEqual(r["status"], "failed" if r["run"] == "all_failed" else "success")
                # convert reads runs that ended before perfship saw them
                self.assertIs(r["backfill"], True)
                self.assertIn(r["run"], r["text"])
                self.assertEqual(r["time"], int(os.stat(self.paths[r["run"]]).st_mtime) * 10**9)

    def test_user_query_one_series_per_arm(self):
        series = self.influx.series(
            "perf", "SELECT rps_total, p95_ms, variantIndex FROM dss_bench "
                    "WHERE test='rid_isa' GROUP BY arm")
        want = {}
        for doc in self.docs.values():
            for arm, points in doc["by_test"].get("rid_isa", {}).items():
                want.setdefault(arm, []).extend(points)
        self.assertEqual(sorted(s["tags"]["arm"] for s in series), sorted(want))
        for s in series:
            arm = s["tags"]["arm"]
            cols = s["columns"]
            got = sorted((dict(zip(cols, v)) for v in s["values"]),
                         key=lambda r: (r["time"], r["variantIndex"]))
            self.assertEqual(len(got), len(want[arm]), arm)
            got_pairs = sorted((r["rps_total"], r["p95_ms"] or -1) for r in got)
            want_pairs = sorted((dp["rps_total"], expected_latency(dp, "p95_ms") or -1)
                                for dp in want[arm])
            self.assertEqual(got_pairs, want_pairs, arm)
        # within one run, ordering by variantIndex gives the sweep order
        rows = self.q("SELECT rps_total, p95_ms, variantIndex FROM dss_bench WHERE "
                      "test='rid_isa' AND run='latency_compare_images' "
                      "AND arm='local/dss:pr-1523'")
        rows.sort(key=lambda r: r["variantIndex"])
        points = self.docs["latency_compare_images"]["by_test"]["rid_isa"]["local/dss:pr-1523"]
        self.assertEqual([(r["rps_total"], r["p95_ms"]) for r in rows],
                         [(dp["rps_total"], dp["p95_ms"]) for dp in points])

    def test_convert_is_repeatable(self):
        rc, out, _ = run_perfship(["convert", "-f", "dss-bench", self.failed_path])
        self.assertEqual(rc, 0)
        self.assertTrue(out and out in self.out)


if __name__ == "__main__":
    unittest.main()
