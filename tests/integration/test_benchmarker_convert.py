"""`perfship convert -f benchmarker` into a real InfluxDB: generated reports
of the InterUSS benchmarker (tests/tools/gen_benchmarker.py, validated
against the tool's published JSON Schema) land with every figure equal to a
recomputation written here from the definitions of the tool's analysis
(monitoring/benchmarker/reports/analysis.py: throughput_of_step,
latency_of_step, USLFit.from_data), the USL fit agreeing with scipy's
Nelder-Mead run as the analysis runs it; bad reports are reported with
file and byte offset and stop nothing else (docs/schema.md "Benchmarker")."""
import datetime as dt
import json
import math
import os
import subprocess
import sys
import unittest

try:
    import numpy as np
    import scipy.optimize
    import scipy.stats
except ImportError:
    # The reference fit needs Debian's python3-scipy (scripts/deps --test);
    # a python3 of its own earlier on PATH (pyenv) does not see it.
    if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3", *sys.argv])
    raise

sys.path.insert(0, os.path.dirname(__file__))
from harness import (SOURCE_DIR, InfluxTestCase, convert, convert_into, run_perfship,  # noqa: E402
                     write_config, write_lines)

GEN = os.path.join(SOURCE_DIR, "tests", "tools", "gen_benchmarker.py")
REL = 1e-9   # figures: the same arithmetic, only rounding differs
FIT_REL = 1e-3


def parse_time(s):
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def ns(s):
    return (parse_time(s) - EPOCH) // dt.timedelta(microseconds=1) * 1000


def operations(scenario):
    """(type, successful, t0, t1) of every operation, as select_operations walks them."""
    for by_type in scenario["operations"]:
        for by_origin in by_type["origins"]:
            for outcome in by_origin["outcomes"]:
                for ok in (True, False):
                    for op in outcome.get("successful" if ok else "unsuccessful") or []:
                        yield by_type["type"], ok, parse_time(op["t0"]), parse_time(op["t1"])


def reference_step(scenario, step, op_type):
    """analysis.py's throughput_of_step and latency_of_step (all outcomes),
    plus the share and percentiles over the same operations."""
    after = parse_time(step["throughput_stability_time"])
    before = parse_time(step["end_time"])
    sel = [(ok, (t1 - t0).total_seconds()) for typ, ok, t0, t1 in operations(scenario)
           if (op_type == "all" or typ == op_type) and not t1 < after and not t1 > before]
    dur = (before - after).total_seconds()
    succ = sum(1 for ok, _ in sel if ok)
    out = {"stable_s": dur, "throughput": succ / dur if dur > 0 else 0.0,
           "successful": succ, "unsuccessful": len(sel) - succ}
    if sel:
        lat = np.array([l for _, l in sel])
        out.update(unsuccessful_share=(len(sel) - succ) / len(sel),
                   latency_mean_s=sum((t for _, t in sel), 0.0) / len(sel),
                   latency_p50_s=float(np.percentile(lat, 50)),
                   latency_p95_s=float(np.percentile(lat, 95)),
                   latency_p99_s=float(np.percentile(lat, 99)),
                   latency_max_s=float(lat.max()))
    return out


def reference_fit_single(x, y):
    """USLFit._fit_single of analysis.py."""
    def rmse(params):
        gamma, alpha, beta = params
        alpha, beta = pow(10, alpha), pow(10, beta)
        denom = np.maximum(1.0 + alpha * (x - 1.0) + beta * x * (x - 1.0), 1e-12)
        return float(np.sqrt(np.mean((y - gamma * x / denom) ** 2)))
    best, best_score = None, float("inf")
    for a, b in ((-3, -5), (-5, -3), (-1, -1), (-7, -7)):
        res = scipy.optimize.minimize(rmse, x0=[np.max(y / x), a, b], method="Nelder-Mead",
                                      bounds=[(0.0, None), (None, None), (None, None)],
                                      options={"xatol": 1e-12, "fatol": 1e-12, "maxiter": 20000})
        score = rmse(res.x)
        if score < best_score:
            best, best_score = res.x, score
    return best[0], pow(10, best[1]), pow(10, best[2]), best_score


def reference_fit(xs, ys):
    """USLFit.from_data of analysis.py: (gamma, alpha, beta, rmse, inlier mask)."""
    x_arr, y_arr = np.array(xs, float), np.array(ys, float)
    mask = np.ones(len(x_arr), dtype=bool)
    while True:
        x_in, y_in = x_arr[mask], y_arr[mask]
        gamma, alpha, beta, score = reference_fit_single(x_in, y_in)
        if len(x_in) <= 3:
            break
        denom = np.maximum(1.0 + alpha * (x_in - 1.0) + beta * x_in * (x_in - 1.0), 1e-12)
        res = y_in - gamma * x_in / denom
        sigma = 1.4826 * np.median(np.abs(res - np.median(res)))
        if sigma <= 1e-12:
            sigma = float(np.std(res, ddof=min(3, len(res) - 1)))
        if sigma < 1e-12:
            break
        k = float(scipy.stats.norm.ppf((1.0 + 0.95 ** (1.0 / len(x_in))) / 2.0))
        limit = max(k * sigma, max(1e-6, 1e-3 * float(np.max(np.abs(y_in)))))
        if not np.any(np.abs(res) > limit):
            break
        mask[np.where(mask)[0][int(np.argmax(np.abs(res)))]] = False
    return gamma, alpha, beta, score, mask


def generate(path, *args):
    subprocess.run([sys.executable, GEN, "--out", path, *args], check=True)
    with open(path, encoding="utf-8") as f:
        return f.read()


class BenchmarkerConvertTest(InfluxTestCase):
    tmp_prefix = "perfship-benchmarker-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.good = {}
        for name, args in (("isas_images", ["--seed", "11"]),
                           ("isas_details", ["--seed", "12", "--query-details",
                                             "--scenarios", "2"])):
            path = os.path.join(cls.tmp, name, "report.json")
            cls.good[name] = (path, json.loads(generate(path, *args)))
        cls.bad = {}
        for kind in ("truncated", "wrong-type", "t1-before-t0", "no-stability", "huge-detail"):
            path = os.path.join(cls.tmp, "bad_" + kind.replace("-", "_"), "report.json")
            cls.bad[kind] = (path, generate(path, "--seed", "13", "--scenarios", "2",
                                            "--steps", "5", "--bad", kind))
        # the bad ones between the good ones: what follows them must still come
        paths = ([cls.good["isas_images"][0]] + [p for p, _ in cls.bad.values()] +
                 [cls.good["isas_details"][0]])
        cls.rc, cls.out, cls.err = convert_into(cls.influx, "perf", "benchmarker", paths)

    def q(self, query):
        return self.influx.query("perf", query)

    def scenario_names(self, doc):
        return [s["name"] for s in doc["configuration"]["scenarios"]]

    def test_every_step_figure_equals_the_analysis(self):
        for conf, (_, doc) in self.good.items():
            names = self.scenario_names(doc)
            for si, scen in enumerate(doc["report"]["scenarios"]):
                types = ["all"] + sorted({o["type"] for o in scen["operations"]})
                for op_type in types:
                    rows = self.q(f"SELECT * FROM benchmarker_step WHERE configuration='{conf}' "
                                  f"AND scenario='{names[si]}' AND operation='{op_type}'")
                    rows.sort(key=lambda r: r["step"])
                    self.assertEqual([r["step"] for r in rows],
                                     list(range(1, len(scen["steps"]) + 1)), (conf, si, op_type))
                    for r, step in zip(rows, scen["steps"]):
                        with self.subTest(conf=conf, scenario=si, type=op_type, step=r["step"]):
                            self.check_step(r, scen, step, op_type, doc)

    def check_step(self, r, scen, step, op_type, doc):
        self.assertEqual(r["time"], ns(step["end_time"]))
        self.assertEqual(r["load_factor"], step["load_factor"])
        self.assertEqual(r["termination_reason"], step["termination_reason"])
        self.assertEqual(r["commit"], doc["commit_hash"])
        if "throughput_stability_time" not in step:
            self.assertIsNone(r["throughput"])
            self.assertIsNone(r["latency_mean_s"])
            return
        want = reference_step(scen, step, op_type)
        for key in ("stable_s", "throughput", "unsuccessful_share", "latency_mean_s",
                    "latency_p50_s", "latency_p95_s", "latency_p99_s", "latency_max_s"):
            self.assertTrue(math.isclose(r[key], want[key], rel_tol=REL, abs_tol=1e-12),
                            (key, r[key], want[key]))
        self.assertEqual(r["successful"], want["successful"])
        self.assertEqual(r["unsuccessful"], want["unsuccessful"])

    def test_arms_from_metadata_and_setup(self):
        doc = self.good["isas_images"][1]
        rows = self.q("SELECT last(load_factor) FROM benchmarker_step WHERE "
                      "configuration='isas_images' AND operation='all' GROUP BY scenario, arm")
        arms = {r["scenario"]: r["arm"] for r in rows}
        names = self.scenario_names(doc)
        self.assertEqual(arms, {names[0]: "interuss/dss:v0.22.0",
                                names[1]: "interuss/dss:v0.23.0-rc5",
                                names[2]: "crdb", names[3]: "ybdb"})

    def test_configured_arm_for_reports_that_name_none(self):
        # a report whose scenarios name no image or datastore anywhere
        path = os.path.join(self.tmp, "isas_unnamed", "report.json")
        doc = json.loads(generate(path, "--seed", "31", "--scenarios", "2", "--steps", "4"))

        def unname(node):
            if isinstance(node, dict):
                for key in ("dss_image", "DSS_IMAGE", "DB_TYPE"):
                    node.pop(key, None)
                for v in node.values():
                    unname(v)
            elif isinstance(node, list):
                for v in node:
                    unname(v)
        unname(doc)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        rc, out, err = convert("benchmarker", [path])
        self.assertEqual(rc, 0, err)
        self.assertNotIn(",arm=", out)  # nothing names an arm: no tag
        cfg = write_config(os.path.join(self.tmp, "arm.cfg"), self.influx.url,
                           os.path.join(self.tmp, "arm-state"),
                           sources='{ path = "/nowhere"; format = "benchmarker";'
                                   ' arm = "interuss/dss:v0.24.0"; }')
        rc, out, err = run_perfship(["-c", cfg, "convert", "-f", "benchmarker", path])
        self.assertEqual(rc, 0, err)
        self.influx.create_db("armed")
        write_lines(self.influx, "armed", out)
        rows = self.influx.query("armed", "SELECT last(load_factor) FROM benchmarker_step WHERE "
                                 "configuration='isas_unnamed' GROUP BY scenario, arm")
        self.assertEqual({r["scenario"]: r["arm"] for r in rows},
                         {n: "interuss/dss:v0.24.0" for n in self.scenario_names(doc)})

    def test_usl_fit_agrees_with_the_reference(self):
        for conf, (_, doc) in self.good.items():
            names = self.scenario_names(doc)
            for si, scen in enumerate(doc["report"]["scenarios"]):
                for op_type in ["all"] + sorted({o["type"] for o in scen["operations"]}):
                    with self.subTest(conf=conf, scenario=si, type=op_type):
                        self.check_fit(conf, names[si], scen, op_type)

    def check_fit(self, conf, name, scen, op_type):
        steps = [s for s in scen["steps"] if s["termination_reason"] == "Completed"]
        xs = [s["load_factor"] for s in steps]
        ys = [reference_step(scen, s, op_type)["throughput"] for s in steps]
        gamma, alpha, beta, score, mask = reference_fit(xs, ys)
        rows = self.q(f"SELECT * FROM benchmarker_fit WHERE configuration='{conf}' "
                      f"AND scenario='{name}' AND operation='{op_type}'")
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual(r["time"], max(ns(s["end_time"]) for s in scen["steps"]))
        self.assertEqual(r["points_kept"], int(mask.sum()))
        self.assertEqual(r["points_discarded"], int((~mask).sum()))
        dropped = ",".join("%g" % x for x, keep in zip(xs, mask) if not keep)
        self.assertEqual(r["discarded_loads"], dropped or None)
        close = lambda a, b: math.isclose(a, b, rel_tol=FIT_REL, abs_tol=1e-6)  # noqa: E731
        self.assertTrue(close(r["gamma"], gamma), (r["gamma"], gamma))
        self.assertTrue(close(r["rmse"], score), (r["rmse"], score))
        # alpha and beta are fitted on a log scale: near 0 their size is what counts
        self.assertTrue(close(r["alpha"], alpha), (r["alpha"], alpha))
        self.assertTrue(close(r["beta"], beta), (r["beta"], beta))
        n_star = math.sqrt((1 - alpha) / beta)
        x_star = gamma * n_star / (1 + alpha * (n_star - 1) + beta * n_star * (n_star - 1))
        kept_max = max(x for x, keep in zip(xs, mask) if keep)
        self.assertEqual(r["peak_within_loads"], n_star <= kept_max)
        if n_star > 10 * kept_max:
            # beta near 0: the data have no falling side, so where the peak
            # lies is not determined (the RMSE is flat in log beta there);
            # both fits say it is far beyond what was measured.
            self.assertGreater(r["n_star"], 10 * kept_max)
            return
        self.assertTrue(math.isclose(r["n_star"], n_star, rel_tol=FIT_REL), (r["n_star"], n_star))
        self.assertTrue(math.isclose(r["x_n_star"], x_star, rel_tol=FIT_REL))

    def test_run_marker_says_which_steps(self):
        rows = self.q("SELECT * FROM runs WHERE source='benchmarker' AND run='isas_images'")
        self.assertEqual(len(rows), 1)
        r = rows[0]
        self.assertEqual(r["status"], "unstable")
        names = self.scenario_names(self.good["isas_images"][1])
        self.assertIn(f'Scenario "{names[1]}" step 8 (load 16): unstable.', r["text"])
        self.assertIn(f'Scenario "{names[2]}" step 8 (load 16): never stable.', r["text"])
        rows = self.q("SELECT * FROM runs WHERE source='benchmarker' AND run='isas_details'")
        self.assertEqual(rows[0]["status"], "unstable")

    def reject(self, kind, offset, reason):
        path = self.bad[kind][0]
        self.assertIn(f"{path}: byte {offset}: {reason}", self.err)

    def test_truncated_report_reported_with_position(self):
        self.assertEqual(self.rc, 65, self.err)
        text = self.bad["truncated"][1]
        self.reject("truncated", len(text.encode()),
                    "invalid JSON: unexpected end; the report gives no points")
        self.assertEqual(self.q("SELECT count(load_factor) FROM benchmarker_step "
                                "WHERE configuration='bad_truncated'"), [])

    def test_wrong_type_reported_and_the_rest_kept(self):
        text = self.bad["wrong-type"][1]
        at = text.index('"load_factor": "seven"') + len('"load_factor": ')
        self.reject("wrong-type", at, "scenario 1 step 2: load_factor is not a positive "
                    "number; step dropped")
        rows = self.q("SELECT load_factor, step FROM benchmarker_step WHERE "
                      "configuration='bad_wrong_type' AND operation='all'")
        self.assertEqual(len(rows), 5 + 4)  # two scenarios of 5 steps, one step dropped

    def test_t1_before_t0_reported(self):
        text = self.bad["t1-before-t0"][1]
        doc = json.loads(text)
        op = doc["report"]["scenarios"][0]["operations"][0]["origins"][0]["outcomes"][0]
        at = text.index(json.dumps(op["successful"][0], sort_keys=True))
        self.reject("t1-before-t0", at, "scenario 1: an operation ends (t1) before it starts "
                    "(t0); dropped")
        self.assertTrue(self.q("SELECT count(throughput) FROM benchmarker_step WHERE "
                               "configuration='bad_t1_before_t0'"))

    def test_step_without_stability_time_reported(self):
        text = self.bad["no-stability"][1]
        step = json.loads(text)["report"]["scenarios"][0]["steps"][2]
        at = text.index(json.dumps(step, sort_keys=True))
        self.reject("no-stability", at, "scenario 1 step 3: Completed without a "
                    "throughput_stability_time; no figures for its window")
        rows = self.q("SELECT load_factor, throughput FROM benchmarker_step WHERE "
                      "configuration='bad_no_stability' AND operation='all' AND step=3")
        self.assertEqual(len(rows), 2)

    def test_huge_query_detail_reported(self):
        text = self.bad["huge-detail"][1]
        doc = json.loads(text)
        group = next(o for o in doc["report"]["scenarios"][0]["operations"]
                     if o["type"].startswith("query."))
        query = json.dumps(group["origins"][0]["outcomes"][0]["successful"][0]["query"],
                           sort_keys=True)
        at, size = text.index(query), len(query)
        self.reject("huge-detail", at, f"scenario 1: a query detail of {size} bytes (more "
                    f"than 1048576); skipped, its operation counted")
        self.assertTrue(self.q("SELECT count(throughput) FROM benchmarker_step WHERE "
                               "configuration='bad_huge_detail'"))


class BenchmarkerLiveTest(InfluxTestCase):
    """The agent watching a benchmarker output folder: the report streams
    through the pipeline (never read whole) and lands as convert prints it;
    a report rewritten by the next run is read again, its marker live."""
    tmp_prefix = "perfship-benchmarker-live-"

    def test_agent_ingests_as_convert_prints(self):
        src = os.path.join(self.tmp, "output")
        path = os.path.join(src, "isas_live", "report.json")
        generate(path, "--seed", "21", "--scenarios", "3", "--query-details")
        rc, out, err = convert("benchmarker", [path])
        self.assertEqual(rc, 0, err)
        want = sorted(line.split(" ")[0] for line in out.splitlines()
                      if line.startswith("benchmarker_"))
        cfg = write_config(os.path.join(self.tmp, "perfship.cfg"), self.influx.url,
                           os.path.join(self.tmp, "state"),
                           sources=f'{{ path = "{src}"; format = "benchmarker"; }}',
                           extra="watch = { settle_ms = 100; };")
        for _ in range(2):
            rc, _, err = run_perfship(["-c", cfg, "run", "--once"], timeout=120)
            self.assertEqual(rc, 0, err)
        rows = self.influx.query("perf", "SELECT count(load_factor) FROM benchmarker_step")
        steps = sum(1 for k in want if k.startswith("benchmarker_step,"))
        self.assertEqual(rows[0]["count"], steps)
        fits = self.influx.query("perf", "SELECT count(gamma) FROM benchmarker_fit")
        self.assertEqual(fits[0]["count"], sum(1 for k in want if k.startswith("benchmarker_fit,")))
        marks = self.influx.query("perf", "SELECT * FROM runs WHERE source='benchmarker'")
        self.assertEqual([(m["run"], m["status"], m["backfill"]) for m in marks],
                         [("isas_live", "unstable", True)])
        # The benchmarker run again into the same folder: the new report is
        # a new version (told by size, time and inode, not by its bytes) and
        # is read whole again; its marker is not a backfill.
        generate(path + ".new", "--seed", "22", "--scenarios", "1")
        os.rename(path + ".new", path)
        rc, _, err = run_perfship(["-c", cfg, "run", "--once"], timeout=120)
        self.assertEqual(rc, 0, err)
        marks = self.influx.query("perf", "SELECT * FROM runs WHERE source='benchmarker'")
        self.assertEqual(sorted(m["backfill"] for m in marks), [False, True], marks)
        rows = self.influx.query("perf", "SELECT count(load_factor) FROM benchmarker_step")
        rc, out, _ = convert("benchmarker", [path])
        again = sum(1 for line in out.splitlines() if line.startswith("benchmarker_step,"))
        self.assertEqual(rows[0]["count"], steps + again)


class BenchmarkerArmsJudged(InfluxTestCase):
    """Within a report, the scenarios that applied one load are arms: each
    is judged against the reference arm (method arm_compare) on throughput
    and p95 latency at the load factors both completed, and on the fitted
    peak X(N*); the weaker arm is the regression, in both orders, and the
    figures mirror (docs/verdicts.md "Benchmarker: between arms")."""
    tmp_prefix = "perfship-benchmarker-arms-"

    def judged(self, ref, db):
        src = os.path.join(self.tmp, db)
        path = os.path.join(src, "isas_arms", "report.json")
        doc = json.loads(generate(path, "--seed", "31", "--noise", "0.01"))
        cfg = write_config(os.path.join(self.tmp, db + ".cfg"), self.influx.url,
                           os.path.join(self.tmp, db + "-state"), database=db,
                           sources=f'{{ path = "{src}"; format = "benchmarker"; }}',
                           extra=f'verdicts = {{ dss = {{ reference_arm = "{ref}"; }}; }};')
        rc, _, err = run_perfship(["-c", cfg, "run", "--once"], timeout=180)
        self.assertEqual(rc, 0, err[-2000:])
        rows = self.influx.query(db, "SELECT * FROM perfship_verdict WHERE method = 'arm_compare'")
        return doc, {(r["series"], r["metric"], r["arm"]): r for r in rows}

    def geomean_throughput(self, doc, arm_index, ref_index):
        """The arm's and the reference's geometric mean throughput over the
        load factors both completed, recomputed from the report."""
        def by_load(i):
            scen = doc["report"]["scenarios"][i]
            return {s["load_factor"]: reference_step(scen, s, "all")["throughput"]
                    for s in scen["steps"] if s["termination_reason"] == "Completed"}
        a, r = by_load(arm_index), by_load(ref_index)
        shared = sorted(set(a) & set(r))
        g = lambda d: math.exp(sum(math.log(d[x]) for x in shared) / len(shared))  # noqa: E731
        return g(a), g(r), len(shared)

    def test_weaker_arm_is_the_regression_both_orders(self):
        strong, weak = "interuss/dss:v0.22.0", "crdb"
        doc, a = self.judged(strong, "arms1")
        _, b = self.judged(weak, "arms2")
        va = a[("ramp", "rps_total", weak)]
        vb = b[("ramp", "rps_total", strong)]
        self.assertEqual((va["verdict"], va["reference"], va["source"], va["run"]),
                         ("regression", strong, "benchmarker", "isas_arms"))
        self.assertEqual((vb["verdict"], vb["reference"]), ("improvement", weak))
        value, baseline, shared = self.geomean_throughput(doc, 2, 0)
        self.assertTrue(math.isclose(va["value"], value, rel_tol=1e-9))
        self.assertTrue(math.isclose(va["baseline"], baseline, rel_tol=1e-9))
        self.assertEqual(va["variants"], shared)
        self.assertAlmostEqual(vb["value"], va["baseline"], places=9)
        self.assertAlmostEqual(vb["baseline"], va["value"], places=9)
        for key in a:
            if key[0] == "ramp" and key[2] == weak and key[1] != "errors" and \
                    (key[0], key[1], strong) in b:
                mirror = {"regression": "improvement", "improvement": "regression",
                          "none": "none"}
                self.assertEqual(a[key]["verdict"], mirror[b[(key[0], key[1], strong)]["verdict"]])


if __name__ == "__main__":
    unittest.main()
