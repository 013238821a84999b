"""The data the report tests put into a real InfluxDB, the way users' data
gets there: run folders and results files converted by `perfship convert`
(the bundled samples, plus a generated nightly history with a regression),
and, for what the agent does not write yet or what no folder can hold,
points written by hand exactly as docs/schema.md defines them: verdicts,
a self-metrics heartbeat, and runs whose names are hostile HTML.

    fx = ReportData(influx, tmpdir).build()
    fx.statuses        # run name -> the status the page must show
    fx.newest_run      # the run the headline must name
"""
import json
import os
import shutil
import sys
import time

import harness

DATA = harness.DATA_DIR
sys.path.insert(0, os.path.join(DATA, "loadgen"))
import gen_loadgen  # noqa: E402  (the project's deterministic run generator)

DAY = 86400

# Names a browser must show as text. A run folder can hold the first (no
# slash); the others are written as points by hand.
HOSTILE_TEST_TYPE = "<img src=x onerror=alert(1)>"
HOSTILE_RUN = "evil</script><script>window.__pwned=1</script>-abcdef1"
HOSTILE_ERROR = "Error: <script>window.__pwned=2</script> & <b>not bold</b>"
HOSTILE_ARM = "</script><img src=x onerror=alert(3)>"
HOSTILE_DSS = "dss<!--<script>-x"


def lp_key(v):
    """A measurement, tag key or tag value in line protocol."""
    return v.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=").replace(" ", "\\ ")


def lp_str(v):
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'


def lp_line(measurement, tags, fields, t_ns):
    tag_text = "".join(f",{lp_key(k)}={lp_key(v)}" for k, v in sorted(tags.items()) if v)
    parts = []
    for k, v in fields.items():
        if isinstance(v, bool):
            parts.append(f"{lp_key(k)}={'true' if v else 'false'}")
        elif isinstance(v, int):
            parts.append(f"{lp_key(k)}={v}i")
        elif isinstance(v, float):
            parts.append(f"{lp_key(k)}={v!r}")
        else:
            parts.append(f"{lp_key(k)}={lp_str(v)}")
    return f"{lp_key(measurement)}{tag_text} {','.join(parts)} {t_ns}"


def set_tree_mtime(path, t):
    for d, _dirs, files in os.walk(path):
        for f in files:
            os.utime(os.path.join(d, f), (t, t))
        os.utime(d, (t, t))


class ReportData:
    def __init__(self, influx, tmp, db="perf", now=None):
        self.influx = influx
        self.db = db
        self.tmp = tmp
        self.now = int(now or time.time())
        self.statuses = {}          # run -> status expected on the page
        self.nightly = []           # the generated history, oldest first
        self.dss_files = {}         # results folder -> expected status
        self.lines = []             # hand-written points

    # -- loadgen ---------------------------------------------------------------
    def _copy_samples(self, root):
        synth = os.path.join(DATA, "loadgen", "synth")
        expect = {"daily-perf-9eb37164f6f7": "success", "daily-perf-1cb7c2d80874": "success",
                  "daily-perf-ba4674aa5495": "failed", "daily-perf-31400797d904": "stalled",
                  "manual-7102939": "interrupted"}
        for name, status in expect.items():
            shutil.copytree(os.path.join(synth, name), os.path.join(root, name))
            self.statuses[name] = status
        # The in-progress sample has not changed for years: stalled.
        set_tree_mtime(os.path.join(root, "daily-perf-31400797d904"), 1647480000)

    def _generate(self, root):
        """Nightly runs of the last days: stable, one failed in the middle,
        and the newest on a revision 15 % slower."""
        for i in range(8):
            start = self.now - (9 - i) * DAY + 60
            sc = gen_loadgen.Scenario(
                key=f"n{i}", seed=7100 + i, rev_seed=f"nightly-{i}", start_epoch=start,
                commit_time=start - 3600, test_type="nightly", stages=5, stage_minutes=3,
                slow=1.15 if i == 7 else 1.0,
                outcome="fail" if i == 4 else "success", outcome_stage=2, outcome_frac=0.5)
            sim = gen_loadgen.RunSim(sc)
            sim.run()
            d = gen_loadgen.write_run(sim, root)
            name = os.path.basename(d)
            self.statuses[name] = "failed" if i == 4 else "success"
            if i == 4:  # its error line becomes the marker text
                with open(os.path.join(d, "docker.log"), "a") as f:
                    f.write(HOSTILE_ERROR + "\n")
            self.nightly.append(name)
        sc = gen_loadgen.Scenario(
            key="h", seed=7199, rev_seed="hostile", start_epoch=self.now - 10 * DAY,
            commit_time=self.now - 10 * DAY - 3600, test_type=HOSTILE_TEST_TYPE, stages=3,
            stage_minutes=2)
        sim = gen_loadgen.RunSim(sc)
        sim.run()
        d = gen_loadgen.write_run(sim, root)
        self.hostile_folder = os.path.basename(d)
        self.statuses[self.hostile_folder] = "success"

    def _convert(self, fmt, paths):
        rc, _out, err = harness.convert_into(self.influx, self.db, fmt, paths, ok=(0, 65))
        return rc, err

    # -- DSS ----------------------------------------------------------------------
    def _dss(self, root):
        synth = os.path.join(DATA, "dss", "synth")
        ages = {"latency_compare_images": 3600, "datastores_with_errors": 2 * DAY,
                "baseline_single": 3 * DAY, "legacy_dss_bench_per_dss": 4 * DAY}
        paths = []
        for name, age in ages.items():
            d = os.path.join(root, name)
            shutil.copytree(os.path.join(synth, name), d)
            set_tree_mtime(d, self.now - age)
            paths.append(os.path.join(d, "results.json"))
            self.dss_files[name] = "success"
        return paths

    # -- by hand ----------------------------------------------------------------------
    def _hostile_points(self):
        t = (self.now - int(8.5 * DAY)) * 10**9
        tags = {"source": "loadgen", "run": HOSTILE_RUN, "revision": "abcdef1"}
        self.lines.append(lp_line("runs", dict(tags, event="start", status="running"),
                                  {"text": f"{HOSTILE_RUN} started", "backfill": True}, t))
        self.lines.append(lp_line("runs", dict(tags, event="end", status="failed"),
                                  {"text": "Error: </script><script>window.__pwned=3</script>",
                                   "exitCode": 1, "duration": 60.0, "backfill": True},
                                  t + 60 * 10**9))
        self.lines.append(lp_line("loadgen_run", {"run": HOSTILE_RUN, "revision": "abcdef1",
                                                  "test_type": "nightly"},
                                  {"status": "failed", "success": False, "exitCode": 1}, t))
        self.statuses[HOSTILE_RUN] = "failed"
        td = (self.now - 6 * DAY) * 10**9
        for k, variant in enumerate(["1", "2", "3"]):
            for arm, rps in (("baseline", 10.0), (HOSTILE_ARM, 12.5)):
                self.lines.append(lp_line(
                    "dss_bench", {"run": HOSTILE_DSS, "test": "rid_isa", "arm": arm,
                                  "variant": variant, "sweep": "procs<1>"},
                    {"variantIndex": k, "rps_total": rps + k, "p95_ms": 100.0 + 10 * k,
                     "errors": k}, td))
        self.lines.append(lp_line("runs", {"source": "dss_bench", "run": HOSTILE_DSS,
                                           "event": "end", "status": "success"},
                                  {"text": "results <b>written</b>", "backfill": True}, td))
        self.dss_files[HOSTILE_DSS] = "success"

    def _loadgen_run(self, run):
        rows = self.influx.query(self.db, "SELECT * FROM loadgen_run WHERE run = "
                                 f"'{run}'")
        return rows[0] if rows else None

    def _verdicts(self):
        metrics = ["cycleAvgDuration", "cycleSuccessRate", "live_avgSwingsetTime",
                   "live_avgBlockDuration", "chainBootstrapDuration", "walletDeployDuration",
                   "loadgenDeployDuration"]
        ok = [r for r in self.nightly if self.statuses[r] == "success"]
        points = {r: self._loadgen_run(r) for r in ok}
        self.regressions = {}  # run -> metrics judged regression
        for k, run in enumerate(ok):
            if k < 5:
                continue  # verdicts.min_runs
            row = points[run]
            t = row["time"]
            base_rows = [points[x] for x in ok[:k]]
            for m in metrics:
                value = row.get(m)
                if value is None:
                    continue
                base = sum(b[m] for b in base_rows) / len(base_rows)
                verdict = "none"
                if run == ok[-1] and m in ("cycleAvgDuration", "live_avgSwingsetTime"):
                    verdict = "regression"
                    self.regressions.setdefault(run, []).append(m)
                fields = {"verdict": verdict, "value": float(value), "baseline": float(base),
                          "change_run": run, "baseline_runs": len(base_rows),
                          "method": "edivisive", "p_value": 0.004 if verdict != "none" else 0.4,
                          "revision": row.get("revision", ""), "backfill": True}
                if base:
                    fields["change_pct"] = round((value - base) / base * 100, 2)
                # no host tag: the converted runs carry none either, and a
                # run's verdicts are those of its host (docs/report.md)
                self.lines.append(lp_line("perfship_verdict", {
                    "source": "loadgen", "series": "nightly", "metric": m, "run": run},
                    fields, t))
        newest = ok[-1]
        t = points[newest]["time"]
        blocks = self.influx.query(self.db, "SELECT avgSwingsetTime FROM loadgen_stage_blocks "
                                   f"WHERE run = '{newest}' AND summary = 'onlyLive' "
                                   "GROUP BY stage")
        by_stage = {r["stage"]: r["avgSwingsetTime"] for r in blocks}
        first = by_stage.get("1")
        self.drift = {}
        # Loadgen stages 2 and 3 against stage 1 (stage 4 only restarts the
        # chain); judged as docs/verdicts.md's 10 % default would.
        for stage in ("2", "3"):
            if stage in by_stage and first:
                v = by_stage[stage]
                pct = round((v - first) / first * 100, 2)
                verdict = "regression" if pct >= 10 else "improvement" if pct <= -10 else "none"
                self.drift[stage] = verdict
                self.lines.append(lp_line("perfship_verdict", {
                    "source": "loadgen", "series": "nightly", "metric": "stage_avgSwingsetTime",
                    "run": newest, "stage": stage},
                    {"verdict": verdict, "value": v, "baseline": first, "change_pct": pct,
                     "change_run": newest, "baseline_runs": 1, "method": "stage_drift",
                     "revision": points[newest].get("revision", ""), "backfill": True}, t))
        marker = self.influx.query(self.db, "SELECT * FROM runs WHERE run = "
                                   "'latency_compare_images'")
        td = marker[0]["time"]
        for test in ("rid_isa", "rid_isa_sub"):
            self.lines.append(lp_line("perfship_verdict", {
                "source": "dss_bench", "series": test, "metric": "rps_total",
                "run": "latency_compare_images", "arm": "local/dss:pr-1523",
                "reference": "interuss/dss:v0.23.0-rc2"},
                {"verdict": "regression" if test == "rid_isa" else "none", "value": 30.1,
                 "baseline": 34.2, "change_pct": -11.99, "change_run": "latency_compare_images",
                 "baseline_runs": 1, "method": "arm_compare", "variants": 11,
                 "variants_agree": 10, "backfill": True}, td))

    def _heartbeat(self):
        self.lines.append(lp_line("perfship", {"host": "test"}, {
            "lines_read": 5120, "records_parsed": 5101, "records_rejected": 2,
            "points_written": 48211, "points_rejected": 1, "batches_sent": 31, "http_retries": 0,
            "bytes_sent": 9123321, "pending_points": 0, "files_watched": 14,
            "oldest_unacked_s": 0, "uptime_s": 3600}, (self.now - 120) * 10**9))

    def build(self):
        root = os.path.join(self.tmp, "loadgen")
        os.makedirs(root)
        self._copy_samples(root)
        self._generate(root)
        folders = sorted(os.path.join(root, n) for n in os.listdir(root))
        self.convert_rc, self.convert_err = self._convert("loadgen", folders)
        self._convert("dss-bench", self._dss(os.path.join(self.tmp, "dss")))
        self._hostile_points()
        self._verdicts()
        self._heartbeat()
        harness.write_lines(self.influx, self.db, "\n".join(self.lines) + "\n")
        self.newest_run = self.nightly[-1]
        return self

    def expected_json(self):
        return json.dumps({"statuses": self.statuses, "dss": self.dss_files})
