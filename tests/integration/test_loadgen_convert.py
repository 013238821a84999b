"""`perfship convert -f loadgen` end to end, against a real InfluxDB.

Every fixture run folder is converted and written (precision n); then
InfluxQL reproduces the runner's own stats.csv value for value, the block
and cycle counts of every perf-finish, and the run markers docs/schema.md
defines. A full-size generated run (12 stages of 2 h, a ~9 MB perf-finish
line) checks memory and CPU bounds.
"""
import csv
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from harness import (DATA_DIR, PERFSHIP_BIN, InfluxTestCase, convert,  # noqa: E402
                     convert_into, run_perfship)

SYNTH = os.path.join(DATA_DIR, "loadgen", "synth")
GEN = os.path.join(DATA_DIR, "loadgen", "gen_loadgen.py")
DB = "perf"
RUNS = {
    "daily-perf-9eb37164f6f7": "success",
    "daily-perf-1cb7c2d80874": "success",
    "daily-perf-ba4674aa5495": "failed",
    "manual-7102939": "interrupted",
    "daily-perf-31400797d904": None,  # in progress
}


def to_ns(seconds):
    """docs/schema.md: seconds rounded to the microsecond, then nanoseconds."""
    whole = math.floor(seconds)
    return int(whole) * 10**9 + round((seconds - whole) * 1e6) * 1000


def copy_run(src, dst_parent):
    """A copy with fresh modification times (copy, not copy2): a fixture
    checked out long ago must not look stalled."""
    dst = os.path.join(dst_parent, os.path.basename(src))
    os.makedirs(dst)
    for name in os.listdir(src):
        shutil.copyfile(os.path.join(src, name), os.path.join(dst, name))
    return dst


def read_lines(path):
    """Complete lines of perf.jsonl as JSON, plus the unterminated tail."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    tail = lines.pop()
    return [json.loads(l) for l in lines if l], tail


def q(s):
    return s.replace("'", "\\'")


class LoadgenConvert(InfluxTestCase):
    tmp_prefix = "perfship-lg-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.folders = {}
        cls.outputs = {}
        for name in RUNS:
            folder = copy_run(os.path.join(SYNTH, name), cls.tmp)
            cls.folders[name] = folder
            _, cls.outputs[name], _ = convert_into(cls.influx, DB, "loadgen", [folder], ok=(0,))

    def query(self, text):
        return self.influx.query(DB, text)

    def finish_stats(self, name):
        lines, _ = read_lines(os.path.join(self.folders[name], "perf.jsonl"))
        last = lines[-1]
        return last["stats"] if last["type"] == "perf-finish" else None

    # -- the runner's CSV, value for value ---------------------------------
    def test_stats_csv_value_for_value(self):
        with open(os.path.join(SYNTH, "stats.csv"), newline="") as f:
            rows = list(csv.reader(f))
        header, body = rows[0], rows[1:]

        runs = self.query(
            "SELECT * FROM loadgen_run WHERE sdkRevision =~ /./ GROUP BY *")
        runs.sort(key=lambda r: r["sdkCommitTime"])
        self.assertEqual([r["sdkRevision"] for r in runs], [r[0] for r in body],
                         "one row per finished run, sorted by commit time")

        # the loadgen stages (chainOnly != true and durationConfig != 0), in
        # the order the jq script builds its header
        stages = self.query(
            "SELECT stageIndex FROM loadgen_stage WHERE loadgen = true GROUP BY *")
        by_run = {}
        for s in stages:
            by_run.setdefault(s["run"], []).append(int(s["stage"]))
        order = []
        for r in runs:
            for n in sorted(by_run.get(r["run"], [])):
                if n not in order:
                    order.append(n)
        expect_header = ["sdkRevision", "sdkCommitTime", "success",
                         "chainBootstrapDuration", "walletDeployDuration",
                         "loadgenDeployDuration", "cycleSuccessRate",
                         "cycleAvgDuration"]
        for n in order:
            expect_header += [f"stage{n}_cycleSuccessRate",
                              f"stage{n}_cycleAvgDuration",
                              f"stage{n}_avgSwingsetBlockTime",
                              f"stage{n}_avgSwingsetPercentage"]
        self.assertEqual(header, expect_header)

        def num(v):
            return "" if v is None else v

        checked = 0
        for run, csv_row in zip(runs, body):
            name = run["run"]
            got = [
                run["sdkRevision"],
                time.strftime("%Y-%m-%d %H:%M:%S",
                              time.gmtime(run["sdkCommitTime"])),
                "true" if run["success"] else "false",
                num(run.get("chainBootstrapDuration")),
                num(run.get("walletDeployDuration")),
                num(run.get("loadgenDeployDuration")),
                num(run.get("cycleSuccessRate")),
                num(run.get("cycleAvgDuration")),
            ]
            for n in order:
                cyc = self.query(
                    "SELECT cycleSuccessRate, avgDuration FROM loadgen_stage_cycles "
                    f"WHERE run = '{q(name)}' AND stage = '{n}' AND task = 'all'")
                blk = self.query(
                    "SELECT avgSwingsetTime, avgSwingsetPercentage FROM "
                    f"loadgen_stage_blocks WHERE run = '{q(name)}' AND "
                    f"stage = '{n}' AND summary = 'onlyLive'")
                c = cyc[0] if cyc else {}
                b = blk[0] if blk else {}
                got += [num(c.get("cycleSuccessRate")), num(c.get("avgDuration")),
                        num(b.get("avgSwingsetTime")),
                        num(b.get("avgSwingsetPercentage"))]
            self.assertEqual(len(got), len(csv_row))
            for col, want, have in zip(header, csv_row, got):
                with self.subTest(run=name, column=col):
                    if want == "" or isinstance(have, str):
                        self.assertEqual(have, want)
                    else:
                        # same double: the CSV is the runner's own text
                        self.assertEqual(float(have), float(want))
                    checked += 1
        self.assertGreater(checked, 80)

    def test_field_types(self):
        """docs/schema.md's integer list; every other number a float (the JSON
        said 100, not 100.0, for most success rates)."""
        want = {
            "loadgen_run": {"cycleSuccessRate": "float", "duration": "float",
                            "totalBlockCount": "integer", "stageCount": "integer",
                            "sdkCommitTime": "integer", "sdkRevision": "string",
                            "success": "boolean", "status": "string",
                            "exitCode": "integer", "live_blockCount": "integer",
                            "live_avgSwingsetTime": "float"},
            "loadgen_stage_cycles": {"cycleSuccessRate": "float",
                                     "cycleCount": "integer",
                                     "avgBlockCount": "float",
                                     "p95BlockCount": "float"},
            "loadgen_stage_blocks": {"blockCount": "integer",
                                     "avgSwingsetPercentage": "float",
                                     "p95Deliveries": "float"},
            "loadgen_block": {"blockHeight": "integer", "computrons": "integer",
                              "swingsetPercentage": "float", "lag": "float",
                              "beforeShutdown": "boolean"},
            "loadgen_cycle": {"seq": "integer", "duration": "float",
                              "success": "boolean", "finished": "boolean"},
            "loadgen_stage": {"stageIndex": "integer", "durationConfig": "float",
                              "chainOnly": "boolean", "loadgen": "boolean"},
            "loadgen_process": {"vmRss": "integer", "user": "float", "real": "float"},
            "loadgen_storage": {"kib": "integer"},
            "loadgen_event": {"block": "integer", "elapsed": "float",
                              "reset": "boolean"},
            "runs": {"exitCode": "integer", "duration": "float",
                     "backfill": "boolean", "text": "string"},
        }
        for m, fields in want.items():
            got = {r["fieldKey"]: r["fieldType"] for r in
                   self.query(f'SHOW FIELD KEYS FROM "{m}"')}
            for k, t in fields.items():
                with self.subTest(measurement=m, field=k):
                    self.assertEqual(got.get(k), t)

    def test_identity_tags_on_every_point(self):
        measurements = [r["name"] for r in self.query("SHOW MEASUREMENTS")
                        if r["name"].startswith("loadgen_")]
        # nine from perf.jsonl, four from the slogs (loadgen_slog_*)
        self.assertEqual(len(measurements), 13)
        for m in measurements:
            for tag in ("run", "test_type", "revision"):
                with self.subTest(measurement=m, tag=tag):
                    rows = self.query(f'SELECT count(*) FROM "{m}" '
                                      f"WHERE \"{tag}\" = ''")
                    self.assertEqual(rows, [], f"{m} points without {tag}")

    def test_no_chain_monitor_era(self):
        out_dir = os.path.join(self.tmp, "nomon")
        subprocess.run([sys.executable, GEN, "--out", out_dir, "--only", "a",
                        "--no-chain-monitor"], check=True,
                       stdout=subprocess.DEVNULL)
        folder = os.path.join(out_dir, os.listdir(out_dir)[0])
        rc, out, err = convert("loadgen", [folder])
        self.assertEqual(rc, 0, err)
        kinds = {l.split(",", 1)[0] for l in out.splitlines()}
        self.assertNotIn("loadgen_process", kinds)
        self.assertNotIn("loadgen_storage", kinds)
        self.assertTrue({"loadgen_event", "loadgen_block", "loadgen_run",
                         "runs"} <= kinds)

    # -- every block and cycle of every perf-finish --------------------------
    def test_block_and_cycle_counts_per_stage(self):
        for name in RUNS:
            stats = self.finish_stats(name)
            if stats is None:
                continue
            blocks = {r["stage"]: r["count"] for r in self.query(
                "SELECT count(blockHeight) FROM loadgen_block "
                f"WHERE run = '{q(name)}' GROUP BY stage")}
            cycles = {r["stage"]: r["count"] for r in self.query(
                "SELECT count(seq) FROM loadgen_cycle "
                f"WHERE run = '{q(name)}' GROUP BY stage")}
            for idx, st in stats["stages"].items():
                with self.subTest(run=name, stage=idx):
                    self.assertEqual(blocks.get(idx, 0), len(st.get("blocks", {})))
                    self.assertEqual(cycles.get(idx, 0), len(st.get("cycles", {})))
            # unfinished cycles: no success field, finished=false
            unfinished = sum(1 for st in stats["stages"].values()
                             for c in st.get("cycles", {}).values()
                             if "endedAt" not in c)
            rows = self.query("SELECT count(seq) FROM loadgen_cycle WHERE "
                              f"run = '{q(name)}' AND finished = false")
            self.assertEqual(rows[0]["count"] if rows else 0, unfinished)

    # -- markers --------------------------------------------------------------
    def test_markers(self):
        for name, status in RUNS.items():
            lines, tail = read_lines(os.path.join(self.folders[name], "perf.jsonl"))
            origin = lines[0]["timeOrigin"]
            start_ns = to_ns(origin + lines[0]["timestamp"])
            marks = self.query(f"SELECT * FROM runs WHERE run = '{q(name)}'")
            starts = [m for m in marks if m["event"] == "start"]
            ends = [m for m in marks if m["event"] == "end"]
            with self.subTest(run=name):
                self.assertEqual(len(starts), 1)
                self.assertEqual(starts[0]["time"], start_ns)
                self.assertEqual(starts[0]["status"], "running")
                self.assertEqual(starts[0]["source"], "loadgen")
                self.assertEqual(starts[0]["revision"], name.rsplit("-", 1)[1])
                if status is None:
                    self.assertEqual(ends, [], "in progress: no end marker")
                    self.assertFalse(starts[0]["backfill"])
                    self.assertTrue(tail, "the fixture's last line is unterminated")
                    continue
                self.assertEqual(len(ends), 1)
                end = ends[0]
                self.assertEqual(end["status"], status)
                self.assertTrue(end["backfill"])
                stats = lines[-1]["stats"]
                if "endedAt" in stats:
                    self.assertEqual(end["time"], to_ns(stats["endedAt"]))
                    self.assertEqual(end["duration"], stats["duration"])
                else:
                    self.assertEqual(end["time"],
                                     to_ns(origin + lines[-1]["timestamp"]))
                with open(os.path.join(self.folders[name], "exit_code")) as f:
                    self.assertEqual(end["exitCode"], int(f.read()))
                self.assertTrue(end["text"].startswith(f"{name} ended: {status}"))
                run = self.query(f"SELECT status, exitCode FROM loadgen_run "
                                 f"WHERE run = '{q(name)}'")
                self.assertEqual(len(run), 1, "status merges into the one row")
                self.assertEqual(run[0]["status"], status)
        failed = self.query("SELECT text FROM runs WHERE run = "
                            "'daily-perf-ba4674aa5495' AND event = 'end'")
        self.assertIn("Error: Loadgen vault task 25 failed", failed[0]["text"])
        intr = self.query("SELECT text FROM runs WHERE run = 'manual-7102939' "
                          "AND event = 'end'")
        self.assertIn("Error: Interrupted", intr[0]["text"])

    def test_stall_threshold_from_the_configuration(self):
        """convert -c judges a quiet run with the configuration's
        alerts.stall_after_s, as the agent reading that file would."""
        parent = os.path.join(self.tmp, "stall-threshold")
        os.makedirs(parent)
        folder = copy_run(os.path.join(SYNTH, "daily-perf-31400797d904"), parent)
        two_hours_ago = time.time() - 7200
        for name in os.listdir(folder):
            os.utime(os.path.join(folder, name), (two_hours_ago, two_hours_ago))

        def stalled_markers(args):
            rc, out, err = run_perfship(args + ["convert", "-f", "loadgen", folder])
            self.assertEqual(rc, 0, err)
            return [l for l in out.splitlines()
                    if l.startswith("runs,") and "status=stalled" in l]

        self.assertEqual(len(stalled_markers([])), 1,
                         "quiet for 2 h > the default 1800 s: stalled")
        cfg = os.path.join(parent, "perfship.cfg")
        with open(cfg, "w") as f:
            f.write("alerts = { stall_after_s = 86400; };\n")
        self.assertEqual(stalled_markers(["-c", cfg]), [],
                         "quiet for 2 h < stall_after_s = 1 day: still running")

    def test_streamed_points(self):
        name = "daily-perf-9eb37164f6f7"
        lines, _ = read_lines(os.path.join(self.folders[name], "perf.jsonl"))
        origin = lines[0]["timeOrigin"]
        events = [l for l in lines if l["type"] not in (
            "perf-chain-process-usage", "perf-chain-storage-usage")]
        rows = self.query(f"SELECT elapsed, event FROM loadgen_event "
                          f"WHERE run = '{q(name)}'")
        self.assertEqual(len(rows), len(events))
        first_block = [l for l in lines if l["type"] == "perf-stage-first-block"][0]
        got = self.query("SELECT block FROM loadgen_event WHERE run = "
                         f"'{q(name)}' AND event = 'stage-first-block' AND "
                         f"stage = '{first_block['stage']}'")
        self.assertEqual(got[0]["time"], to_ns(origin + first_block["timestamp"]))
        self.assertEqual(got[0]["block"], first_block["block"])
        procs = [l for l in lines if l["type"] == "perf-chain-process-usage"]
        got = self.query("SELECT count(vmRss) FROM loadgen_process "
                         f"WHERE run = '{q(name)}'")
        self.assertEqual(got[0]["count"], len(procs))
        kernel = self.query("SELECT vmRss, \"user\" FROM loadgen_process WHERE "
                            f"run = '{q(name)}' AND process = 'kernel' LIMIT 1")
        first = [l for l in procs if l["processType"] == "kernel"][0]
        self.assertEqual(kernel[0]["vmRss"], first["vmRss"])
        self.assertEqual(kernel[0]["time"], to_ns(origin + first["timestamp"]))
        storage = [l for l in lines if l["type"] == "perf-chain-storage-usage"]
        got = self.query("SELECT kib FROM loadgen_storage WHERE "
                         f"run = '{q(name)}' AND area = 'total'")
        self.assertEqual(sorted(r["kib"] for r in got),
                         sorted(sum(l["chain"].values()) for l in storage))

    def test_convert_twice_identical(self):
        for name, folder in self.folders.items():
            rc, out, err = convert("loadgen", [folder])
            self.assertEqual(rc, 0, err)
            self.assertEqual(out, self.outputs[name], name)

    def test_stalled_run(self):
        folder = copy_run(os.path.join(SYNTH, "daily-perf-31400797d904"),
                          os.path.join(self.tmp, "stall"))
        old = int(time.time()) - 7200
        for i, f in enumerate(sorted(os.listdir(folder))):
            os.utime(os.path.join(folder, f), (old + i, old + i))
        newest = old + len(os.listdir(folder)) - 1
        rc, out, err = convert("loadgen", [folder])
        self.assertEqual(rc, 0, err)
        ends = [l for l in out.splitlines()
                if l.startswith("runs,") and "event=end" in l]
        self.assertEqual(len(ends), 1)
        self.assertIn("status=stalled", ends[0])
        self.assertTrue(ends[0].endswith(f" {(newest + 1800) * 10**9}"))

    # -- full size --------------------------------------------------------------
    def test_full_size_run(self):
        out_dir = os.path.join(self.tmp, "big")
        subprocess.run([sys.executable, GEN, "--out", out_dir, "--only", "a",
                        "--stages", "12", "--stage-minutes", "120"],
                       check=True, stdout=subprocess.DEVNULL)
        folder = os.path.join(out_dir, os.listdir(out_dir)[0])
        perf = os.path.join(folder, "perf.jsonl")
        line_bytes = len(read_last_raw(perf))
        lp_path = os.path.join(self.tmp, "big.lp")
        with open(lp_path, "wb") as out:
            t0 = time.monotonic()
            p = subprocess.Popen([PERFSHIP_BIN, "convert", "-f", "loadgen", folder],
                                 stdout=out, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            wall = time.monotonic() - t0
        self.assertEqual(p.returncode, 0, p.stderr.read())
        p.stderr.close()
        rss_mb = usage.ru_maxrss / 1024
        cpu = usage.ru_utime + usage.ru_stime
        with open(lp_path, "rb") as f:
            points = sum(1 for _ in f)
        print(f"\nfull-size loadgen run: perf-finish line {line_bytes / 1e6:.1f} MB, "
              f"{points} points, peak RSS {rss_mb:.1f} MB, CPU {cpu:.2f} s, "
              f"wall {wall:.2f} s", file=sys.stderr)
        self.assertGreater(line_bytes, 8_000_000)
        self.assertLess(rss_mb, 300)
        self.assertLess(cpu, 30)
        # every block of the big run arrives
        self.influx.create_db("big")
        with open(lp_path, "rb") as f:
            st, body = self.influx.write("big", f.read(), precision="n")
        self.assertEqual(st, 204, body[:300])
        stats = json.loads(read_last_raw(perf))["stats"]
        want = sum(len(s["blocks"]) for s in stats["stages"].values())
        self.assertEqual(self.influx.count("big", "loadgen_block", "blockHeight"), want)


def read_last_raw(path):
    with open(path, "rb") as f:
        data = f.read()
    return data.rstrip(b"\n").rsplit(b"\n", 1)[-1]


if __name__ == "__main__":
    unittest.main(verbosity=2)
