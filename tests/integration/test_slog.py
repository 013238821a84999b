"""The chain slogs of loadgen runs (docs/schema.md "Slog figures") through
`perfship convert -f loadgen` into a real InfluxDB.

Every figure the server holds is compared with a recomputation written
here from the definitions in docs/schema.md: each slog line parsed whole
with Python's json (not the agent's prefix scanner), in both eras. The
generator's leak run must show the leak it was given per finished cycle;
an in-progress stage ships its closed blocks marked partial and then
completes, overwriting itself; a corrupt gzip stream and hostile lines are
reported as FILE:LINE and stop nothing else.
"""
import gzip
import json
import math
import os
import re
import shutil
import subprocess
import sys
import unittest
import zlib

sys.path.insert(0, os.path.dirname(__file__))
from harness import DATA_DIR, InfluxTestCase, convert, write_lines  # noqa: E402

GEN = os.path.join(DATA_DIR, "loadgen", "gen_loadgen.py")
DB = "perf"
COUNTERS = ["kernelObjects", "kernelPromises", "kpUnresolved", "clistEntries",
            "promiseQueuesLength", "runQueueLength", "vats"]
TREND_MIN_BLOCKS = 10


# ---- the independent recomputation ---------------------------------------

def inflate(path):
    """(uncompressed bytes, complete): every gzip member, a missing trailer
    tolerated."""
    with open(path, "rb") as f:
        data = f.read()
    out, complete = b"", True
    while data:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out += d.decompress(data)
        if not d.eof:
            complete = False
            break
        data = d.unused_data
    return out, complete and len(out) > 0


def lines_of(path):
    raw, complete = inflate(path)
    parts = raw.split(b"\n")
    last = parts.pop()
    if last and complete:
        parts.append(last)
    return parts, complete, len(raw)


USED = {"cosmic-swingset-begin-block", "crank-finish", "deliver", "deliver-result",
        "syscall", "clist", "kernel-stats", "cosmic-swingset-commit-block-start",
        "cosmic-swingset-commit-block-finish", "cosmic-swingset-after-commit-stats",
        "heap-snapshot-save", "create-vat"}


def reduce_stage(path, finished_cycles):
    """The figures of docs/schema.md, from whole parsed lines."""
    lines, complete, nbytes = lines_of(path)
    st = dict(lines=0, skippedLines=0, badLines=0, blocks=0, cranks=0, deliveries=0,
              computrons=0, deliverySeconds=0.0, boydDeliveries=0, boydSeconds=0.0,
              syscalls=0, clistImports=0, clistExports=0, clistDrops=0, heapSnapshots=0,
              kernelStats=0)
    blocks, block_vats, vats, kfirst, klast, kmax = [], [], {}, {}, {}, {}
    era, stage_time, blk = None, None, None
    first_begin = last_begin = None
    closed_seconds = 0.0
    deliver = None  # (time, boyd) of the non-replay deliver before a result
    commit_start = None

    def vat(v):
        return vats.setdefault(v, dict(name=None, deliveries=0, seconds=0.0, vals=[],
                                       computrons=0, boydDeliveries=0, boydSeconds=0.0,
                                       syscalls=0, imports=0, exports=0, drops=0,
                                       snapshots=0, snapshotBytes=None, blk={}, trend=[]))

    def close():
        nonlocal blk
        if blk is None:
            return
        for v, bv in blk["_vats"].items():
            vats[v]["trend"].append((blk["blockHeight"], bv["deliverySeconds"]))
            block_vats.append(dict(bv, vat=v, time=blk["time"], blockHeight=blk["blockHeight"]))
        blocks.append(blk)
        blk = None

    for raw in lines:
        st["lines"] += 1
        try:
            e = json.loads(raw)
            t = e["type"]
            assert isinstance(e, dict) and isinstance(t, str)
            first = next(iter(e))
            assert first in ("type", "time")
        except Exception:
            st["badLines"] += 1
            if blk is not None:
                blk["lines"] += 1
            continue
        era = era or ("time-first" if first == "time" else "type-first")
        if stage_time is None and isinstance(e.get("time"), (int, float)):
            stage_time = e["time"]
        if t == "cosmic-swingset-begin-block":
            if blk is not None:
                closed_seconds += blk["deliverySeconds"]
            close()
            blk = dict(time=e["time"], blockHeight=e["blockHeight"], cranks=0, deliveries=0,
                       computrons=0, deliverySeconds=0.0, boydDeliveries=0, boydSeconds=0.0,
                       syscalls=0, lines=1, _vats={})
            first_begin = e["time"] if first_begin is None else first_begin
            last_begin = e["time"]
            continue
        if blk is not None:
            blk["lines"] += 1
        if t not in USED:
            st["skippedLines"] += 1
            continue
        if t == "crank-finish" and e.get("crankType") != "routing":
            st["cranks"] += 1
            if blk is not None:
                blk["cranks"] += 1
        elif t == "deliver" and e.get("replay") is not True:
            kd = e.get("kd") or e.get("vd") or [None]
            deliver = (e.get("time"), kd[0] == "bringOutYourDead")
        elif t == "deliver-result" and e.get("replay") is not True:
            if "seconds" in e:
                s = e["seconds"]
            elif deliver and deliver[0] is not None:
                s = e["time"] - deliver[0]
            else:
                s = 0.0
            boyd = bool(deliver and deliver[1])
            deliver = None
            dr = e.get("dr") or []
            meter = dr[2] if len(dr) > 2 and isinstance(dr[2], dict) else {}
            comp = meter.get("compute") or 0
            targets = [st] + ([blk] if blk is not None else [])
            for x in targets:
                x["deliveries"] += 1
                x["deliverySeconds"] += s
                x["computrons"] += comp
                if boyd:
                    x["boydDeliveries"] += 1
                    x["boydSeconds"] += s
            v = vat(e["vatID"])
            v["deliveries"] += 1
            v["seconds"] += s
            v["vals"].append(s)
            v["computrons"] += comp
            if boyd:
                v["boydDeliveries"] += 1
                v["boydSeconds"] += s
            if blk is not None:
                bv = blk["_vats"].setdefault(e["vatID"], dict(deliveries=0, deliverySeconds=0.0,
                                                              computrons=0))
                bv["deliveries"] += 1
                bv["deliverySeconds"] += s
                bv["computrons"] += comp
        elif t == "syscall" and e.get("replay") is not True:
            st["syscalls"] += 1
            if blk is not None:
                blk["syscalls"] += 1
            vat(e["vatID"])["syscalls"] += 1
        elif t == "clist":
            key = {"import": "imports", "export": "exports", "drop": "drops"}.get(e["mode"])
            if key:
                st["clist" + key[:-1].capitalize() + "s"] += 1
                vat(e["vatID"])[key] += 1
        elif t == "kernel-stats":
            st["kernelStats"] += 1
            for c in COUNTERS:
                if c in e["stats"]:
                    x = e["stats"][c]
                    kfirst.setdefault(c, x)
                    klast[c] = x
                    kmax[c] = max(kmax.get(c, x), x)
                    if blk is not None:
                        blk[c] = x
        elif t == "cosmic-swingset-commit-block-start":
            commit_start = e.get("time")
        elif t == "cosmic-swingset-commit-block-finish":
            if blk is not None:
                if "seconds" in e:
                    blk["commitSeconds"] = e["seconds"]
                elif commit_start is not None:
                    blk["commitSeconds"] = e["time"] - commit_start
            commit_start = None
        elif t == "cosmic-swingset-after-commit-stats" and blk is not None:
            mu = e.get("memoryUsage") or {}
            if "rss" in mu:
                blk["rssBytes"] = mu["rss"]
            if "heapUsed" in mu:
                blk["heapUsedBytes"] = mu["heapUsed"]
        elif t == "heap-snapshot-save":
            st["heapSnapshots"] += 1
            v = vat(e["vatID"])
            v["snapshots"] += 1
            if "uncompressedSize" in e:
                v["snapshotBytes"] = e["uncompressedSize"]
        elif t == "create-vat":
            vat(e["vatID"])["name"] = e.get("name")
    if complete:
        close()
    st["blocks"] = len(blocks)
    st["vats"] = len(vats)
    st["bytes"] = nbytes
    st["era"] = era
    st["partial"] = not complete
    if st["deliverySeconds"] > 0:
        st["boydShare"] = st["boydSeconds"] / st["deliverySeconds"]
    if first_begin is not None and last_begin > first_begin:
        st["wallSeconds"] = last_begin - first_begin
        st["swingsetUtilisation"] = closed_seconds / st["wallSeconds"]
    for c in kfirst:
        st[c + "Start"], st[c + "End"], st[c + "Max"] = kfirst[c], klast[c], kmax[c]
    if finished_cycles > 0:
        st["finishedCycles"] = finished_cycles
        for c in ("kernelObjects", "kpUnresolved"):
            if c in kfirst:
                st[c + "PerCycle"] = (klast[c] - kfirst[c]) / finished_cycles
        if "clistEntries" in kfirst:
            st["clistEntriesPerCycle"] = (klast["clistEntries"] - kfirst["clistEntries"]) / finished_cycles
        else:
            st["clistEntriesPerCycle"] = (st["clistImports"] + st["clistExports"]
                                          - st["clistDrops"]) / finished_cycles
    vat_rows = {}
    for vid, v in vats.items():
        row = dict(deliveries=v["deliveries"], deliverySeconds=v["seconds"],
                   computrons=v["computrons"], boydDeliveries=v["boydDeliveries"],
                   boydSeconds=v["boydSeconds"], syscalls=v["syscalls"],
                   clistImports=v["imports"], clistExports=v["exports"],
                   clistDrops=v["drops"], heapSnapshots=v["snapshots"],
                   trendBlocks=len(v["trend"]), partial=not complete)
        if v["name"] is not None:
            row["name"] = v["name"]
        if v["deliveries"]:
            row["deliverySecondsMean"] = v["seconds"] / v["deliveries"]
            vals = sorted(v["vals"])
            row["deliverySecondsP95"] = vals[max(math.ceil(0.95 * len(vals)) - 1, 0)]
        if v["snapshotBytes"] is not None:
            row["lastSnapshotBytes"] = v["snapshotBytes"]
        tr = v["trend"]
        if len(tr) >= TREND_MIN_BLOCKS:
            mx = sum(x for x, _ in tr) / len(tr)
            my = sum(y for _, y in tr) / len(tr)
            sxx = sum((x - mx) ** 2 for x, _ in tr)
            if sxx > 0:
                row["deliverySecondsSlope"] = sum((x - mx) * (y - my) for x, y in tr) / sxx
        vat_rows[vid] = row
    for b in blocks:
        del b["_vats"]
    return dict(stage=st, blocks=blocks, block_vats=block_vats, vats=vat_rows, time=stage_time)


def finished_cycles(folder):
    """Cycles with endedAt in perf-finish, per stage (docs/schema.md)."""
    out = {}
    with open(os.path.join(folder, "perf.jsonl"), "rb") as f:
        for line in f:
            if b'"perf-finish"' not in line[:200]:
                continue
            try:
                e = json.loads(line)
            except ValueError:
                continue
            for k, s in (e.get("stats", {}).get("stages") or {}).items():
                out[int(k)] = sum(1 for c in (s.get("cycles") or {}).values()
                                  if isinstance(c.get("endedAt"), (int, float)))
    return out


def stage_files(folder):
    got = []
    for name in os.listdir(folder):
        m = re.fullmatch(r"chain-stage-(\d+)\.slog\.gz", name)
        if m:
            got.append((int(m.group(1)), os.path.join(folder, name)))
    return sorted(got)


def to_ns(seconds):
    whole = math.floor(seconds)
    return int(whole) * 10**9 + round((seconds - whole) * 1e6) * 1000


def generate(out, **scenario):
    scenario.setdefault("slog", "rich")
    subprocess.run([sys.executable, GEN, "--out", out, "--stages", "3", "--stage-minutes", "3",
                    "--scenario-json", json.dumps(scenario)], check=True,
                   stdout=subprocess.DEVNULL)
    (name,) = os.listdir(out)
    return os.path.join(out, name)


def regzip(path, lines, trailer=True):
    """A slog rewritten from lines; without its trailer when asked, as the
    loadgen leaves a running stage."""
    raw = b"".join(l + b"\n" for l in lines)
    if trailer:
        with gzip.open(path, "wb") as f:
            f.write(raw)
        return
    c = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    with open(path, "wb") as f:
        f.write(c.compress(raw) + c.flush(zlib.Z_SYNC_FLUSH))


def pad_deliveries(lines, sizes):
    """Lengthens the bodies in kd and vd of the first non-replay deliveries
    with arguments, one per size, to about that many bytes in all, as a
    large message makes them. Returns the indexes of the lines changed."""
    def pad(v, extra):
        if isinstance(v, dict):
            return {k: (x + "x" * extra if k == "body" and isinstance(x, str) else pad(x, extra))
                    for k, x in v.items()}
        if isinstance(v, list):
            return [pad(x, extra) for x in v]
        return v
    done = []
    for i, raw in enumerate(lines):
        if len(done) == len(sizes):
            break
        if b'"deliver"' not in raw[:60] or b'"replay":false' not in raw or b'"body"' not in raw:
            continue
        e = json.loads(raw)
        if e.get("type") != "deliver":
            continue
        half = sizes[len(done)] // 2
        e = {k: pad(v, half) if k in ("kd", "vd") else v for k, v in e.items()}
        lines[i] = json.dumps(e, separators=(",", ":")).encode()
        done.append(i)
    return done


def lines_of_zcat(path):
    """The complete lines gzip -dc writes of a file it may find corrupt."""
    raw = subprocess.run(["gzip", "-dc", path], capture_output=True).stdout
    return raw.split(b"\n")[:-1]


def flip_crc(path, keep):
    """The stage cut to its first `keep` lines, whole, with one byte of its
    gzip CRC flipped. Returns (lines, the bytes zcat recovers from it)."""
    lines, _, _ = lines_of(path)
    lines = lines[:keep]
    regzip(path, lines)
    with open(path, "r+b") as f:
        f.seek(-8, os.SEEK_END)
        crc = f.read(1)
        f.seek(-8, os.SEEK_END)
        f.write(bytes([crc[0] ^ 0x01]))
    z = subprocess.run(["gzip", "-dc", path], capture_output=True)
    assert z.returncode != 0 and b"crc error" in z.stderr.lower(), z.stderr
    return lines, z.stdout


# ---- the tests ----------------------------------------------------------

class Slog(InfluxTestCase):
    tmp_prefix = "perfship-slog-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.influx.create_db(DB)
        gen = os.path.join(cls.tmp, "gen")
        cls.runs = {
            "steady": generate(os.path.join(gen, "steady"), seed=4101, rev_seed="slog-steady"),
            "leak": generate(os.path.join(gen, "leak"), seed=4102, rev_seed="slog-leak",
                             leak_per_cycle={"kernelObjects": 2, "clistEntries": 1,
                                             "kpUnresolved": 1}),
            "old": generate(os.path.join(gen, "old"), seed=4105, rev_seed="slog-old",
                            slog_era="2022", leak_per_cycle={"clistEntries": 1}),
            "boyd": generate(os.path.join(gen, "boyd"), seed=4104, rev_seed="slog-boyd",
                             boyd_every=2, boyd_seconds=0.05),
        }
        cls.converted = {}
        for key, folder in cls.runs.items():
            rc, out, err = convert("loadgen", [folder])
            assert rc == 0, (key, rc, err[-800:])
            write_lines(cls.influx, DB, out)
            cls.converted[key] = out

    def q(self, text):
        return self.influx.query(DB, text)

    def run_name(self, key):
        return os.path.basename(self.runs[key])

    def assert_figures(self, got, want, what):
        for k, v in want.items():
            if k.startswith("_") or k == "time":
                continue
            with self.subTest(what=what, field=k):
                self.assertIn(k, got, f"{what}: {k} missing")
                if isinstance(v, float) or isinstance(got[k], float):
                    self.assertTrue(math.isclose(got[k], v, rel_tol=1e-9, abs_tol=1e-9),
                                    f"{what}: {k} = {got[k]}, recomputed {v}")
                else:
                    self.assertEqual(got[k], v, f"{what}: {k}")

    def check_block_vats(self, run, stage, want, what):
        """loadgen_slog_block_vat: exactly the recomputed (block, vat) points,
        and each block's points add up to the block's own figures."""
        got = {(r["vat"], r["time"]): r for r in self.q(
            f"SELECT * FROM loadgen_slog_block_vat WHERE run='{run}' AND stage='{stage}' GROUP BY vat")}
        expect = {(bv["vat"], to_ns(bv["time"])): bv for bv in want["block_vats"]}
        if any(b["deliveries"] for b in want["blocks"]):
            self.assertGreater(len(expect), 0, f"{what}: blocks with deliveries, no vats")
        self.assertEqual(set(got), set(expect), f"{what}: block/vat points")
        for k, bv in expect.items():
            self.assert_figures(got[k], {f: bv[f] for f in ("blockHeight", "deliveries",
                                                         "deliverySeconds", "computrons")},
                                f"{what} block {bv['blockHeight']} vat {bv['vat']}")
        for b in want["blocks"]:
            mine = [bv for bv in want["block_vats"] if bv["time"] == b["time"]]
            self.assertEqual(sum(x["deliveries"] for x in mine), b["deliveries"])
            self.assertTrue(math.isclose(sum(x["deliverySeconds"] for x in mine),
                                         b["deliverySeconds"], rel_tol=1e-9, abs_tol=1e-9))
        return len(got)

    def check_run(self, key):
        return self.check_folder(self.runs[key], key)

    def check_folder(self, folder, key):
        run = os.path.basename(folder)
        cycles = finished_cycles(folder)
        files = stage_files(folder)
        self.assertGreaterEqual(len(files), 3)
        block_vats = 0
        for stage, path in files:
            want = reduce_stage(path, cycles.get(stage, 0))
            rows = self.q(f"SELECT * FROM loadgen_slog_stage WHERE run='{run}' AND stage='{stage}'")
            self.assertEqual(len(rows), 1, f"{run} stage {stage}")
            self.assertEqual(rows[0]["time"], to_ns(want["time"]))
            self.assert_figures(rows[0], want["stage"], f"{key} stage {stage}")
            blocks = self.q(f"SELECT * FROM loadgen_slog_block WHERE run='{run}' "
                            f"AND stage='{stage}' ORDER BY time")
            self.assertEqual(len(blocks), len(want["blocks"]), f"{key} stage {stage} blocks")
            for got, b in zip(blocks, want["blocks"]):
                self.assertEqual(got["time"], to_ns(b["time"]))
                self.assert_figures(got, b, f"{key} stage {stage} block {b['blockHeight']}")
            block_vats += self.check_block_vats(run, stage, want, f"{key} stage {stage}")
            vrows = {r["vat"]: r for r in self.q(
                f"SELECT * FROM loadgen_slog_vat WHERE run='{run}' AND stage='{stage}' GROUP BY vat")}
            self.assertEqual(set(vrows), set(want["vats"]), f"{key} stage {stage} vats")
            for vid, v in want["vats"].items():
                self.assert_figures(vrows[vid], v, f"{key} stage {stage} vat {vid}")
        self.assertGreater(block_vats, 0, f"{key}: no block/vat points at all")
        return files

    def test_steady_every_figure(self):
        self.check_run("steady")

    def test_old_era_every_figure(self):
        files = self.check_run("old")
        run = self.run_name("old")
        rows = self.q(f"SELECT era, clistEntriesPerCycle, kernelObjectsEnd FROM loadgen_slog_stage "
                      f"WHERE run='{run}' AND stage='1'")
        self.assertEqual(rows[0]["era"], "time-first")
        self.assertIsNone(rows[0]["kernelObjectsEnd"])  # no kernel-stats in that era
        # the generator leaked one c-list entry per cycle: seen in clist events alone
        self.assertAlmostEqual(rows[0]["clistEntriesPerCycle"], 1.0, places=9)
        self.assertTrue(files)

    def test_boyd_heavy_every_figure(self):
        self.check_run("boyd")
        run = self.run_name("boyd")
        steady = self.q(f"SELECT boydShare FROM loadgen_slog_stage WHERE run='{self.run_name('steady')}' AND stage='1'")
        heavy = self.q(f"SELECT boydShare FROM loadgen_slog_stage WHERE run='{run}' AND stage='1'")
        self.assertGreater(heavy[0]["boydShare"], 2 * steady[0]["boydShare"])

    def test_leak_growth_per_cycle_is_the_generators(self):
        self.check_run("leak")
        run = self.run_name("leak")
        for stage in ("1",):
            rows = self.q(f"SELECT * FROM loadgen_slog_stage WHERE run='{run}' AND stage='{stage}'")
            r = rows[0]
            self.assertGreater(r["finishedCycles"], 0)
            self.assertEqual(r["kernelObjectsPerCycle"], 2.0)
            self.assertEqual(r["clistEntriesPerCycle"], 1.0)
            self.assertEqual(r["kpUnresolvedPerCycle"], 1.0)
        steady = self.q("SELECT kernelObjectsPerCycle, clistEntriesPerCycle FROM loadgen_slog_stage "
                        f"WHERE run='{self.run_name('steady')}' AND stage='1'")
        self.assertEqual(steady[0]["kernelObjectsPerCycle"], 0.0)
        self.assertEqual(steady[0]["clistEntriesPerCycle"], 0.0)

    def test_in_progress_stage_is_partial_then_completes(self):
        folder = generate(os.path.join(self.tmp, "gen", "inprog"), seed=4106,
                          rev_seed="slog-inprog", outcome="inprogress", outcome_stage=1,
                          outcome_frac=0.6)
        run = os.path.basename(folder)
        path = os.path.join(folder, "chain-stage-1.slog.gz")
        raw, complete = inflate(path)
        self.assertFalse(complete)
        self.assertFalse(raw.endswith(b"\n"), "the generator cuts the last line")
        rc, out, err = convert("loadgen", [folder])
        self.assertEqual(rc, 0, err)  # a running stage is no error
        write_lines(self.influx, DB, out)
        want = reduce_stage(path, 0)
        self.assertTrue(want["stage"]["partial"])
        rows = self.q(f"SELECT * FROM loadgen_slog_stage WHERE run='{run}' AND stage='1'")
        self.assertEqual(len(rows), 1)
        self.assertIs(rows[0]["partial"], True)
        self.assert_figures(rows[0], want["stage"], "in progress")
        blocks = self.q(f"SELECT count(deliveries) FROM loadgen_slog_block WHERE run='{run}' AND stage='1'")
        self.assertEqual(blocks[0]["count"], len(want["blocks"]))
        self.assertGreater(len(want["blocks"]), 0)
        self.check_block_vats(run, "1", want, "in progress")  # the open block's vats left out
        # the stage ends: the same lines, now with the trailer
        lines = raw.split(b"\n")[:-1]
        regzip(path, lines, trailer=True)
        rc, out, err = convert("loadgen", [folder])
        self.assertEqual(rc, 0, err)
        write_lines(self.influx, DB, out)
        done = reduce_stage(path, 0)
        rows = self.q(f"SELECT * FROM loadgen_slog_stage WHERE run='{run}' AND stage='1'")
        self.assertEqual(len(rows), 1, "the stage point overwrote itself")
        self.assertIs(rows[0]["partial"], False)
        self.assert_figures(rows[0], done["stage"], "completed")
        blocks = self.q(f"SELECT count(deliveries) FROM loadgen_slog_block WHERE run='{run}' AND stage='1'")
        self.assertEqual(blocks[0]["count"], len(want["blocks"]) + 1,
                         "the open block is added, no block doubled")
        self.check_block_vats(run, "1", done, "completed")

    def copy(self, key, name):
        dst = os.path.join(self.tmp, name, os.path.basename(self.runs[key]))
        shutil.copytree(self.runs[key], dst)
        return dst

    def test_corrupt_gzip_reported_with_file_and_line(self):
        folder = self.copy("steady", "corrupt")
        path = os.path.join(folder, "chain-stage-1.slog.gz")
        with open(path, "rb") as f:
            data = bytearray(f.read())
        mid = len(data) // 2
        data[mid:mid + 64] = b"\x00" * 64
        with open(path, "wb") as f:
            f.write(bytes(data))
        rc, out, err = convert("loadgen", [folder])
        self.assertEqual(rc, 65, err)
        m = re.search(re.escape(path) + r":(\d+): corrupt gzip data", err)
        self.assertIsNotNone(m, err[-1000:])
        good, _, _ = lines_of(os.path.join(self.runs["steady"], "chain-stage-1.slog.gz"))
        # zeros inflate as garbage until zlib finds a code it cannot read, or
        # only the CRC at the end: the break is where zlib found it, what it
        # inflated before is kept (and its garbage lines are bad lines)
        self.assertGreater(int(m.group(1)), 1)
        self.assertLessEqual(int(m.group(1)), len(good) + 1)
        # the other stages, and perf.jsonl, are whole
        for stage in ("0", "2"):
            self.assertRegex(out, rf"loadgen_slog_stage,.*stage={stage}\b.*partial=false")
        self.assertRegex(out, r"loadgen_slog_stage,.*stage=1\b.*partial=true")
        self.assertIn("loadgen_run,", out)

    def test_crc_error_keeps_every_line(self):
        """One flipped byte of a stage's gzip CRC (docs/loadgen.md "Slogs"):
        every line zcat recovers lands, the stage is partial, and the break is
        reported with the file and the line after the last (a 248-line stage
        had no point at all, a 74,400-line one lost its last ~2,000 lines)."""
        folder = generate(os.path.join(self.tmp, "gen", "crc"), seed=4108, rev_seed="slog-crc",
                          stage_minutes=37)
        run = os.path.basename(folder)
        cycles = finished_cycles(folder)
        for stage, keep in ((1, 74_400), (2, 248)):
            path = os.path.join(folder, f"chain-stage-{stage}.slog.gz")
            lines, recovered = flip_crc(path, keep)
            self.assertEqual(len(lines), keep)
            self.assertEqual(recovered, b"".join(l + b"\n" for l in lines))
        rc, out, err = convert("loadgen", [folder])
        self.assertEqual(rc, 65, err[-800:])
        write_lines(self.influx, DB, out)
        for stage, keep in ((1, 74_400), (2, 248)):
            with self.subTest(stage=stage):
                path = os.path.join(folder, f"chain-stage-{stage}.slog.gz")
                self.assertIn(f"{path}:{keep + 1}: corrupt gzip data (incorrect data check); "
                              "1 stretch skipped, the stage is partial", err)
                # the recomputation: the same lines as a stage that did not end
                twin = os.path.join(self.tmp, "gen", "crc", f"twin-{stage}.slog.gz")
                regzip(twin, lines_of_zcat(path), trailer=False)
                want = reduce_stage(twin, cycles.get(stage, 0))
                self.assertEqual(want["stage"]["lines"], keep)
                self.assertTrue(want["stage"]["partial"])
                rows = self.q(f"SELECT * FROM loadgen_slog_stage WHERE run='{run}' "
                              f"AND stage='{stage}'")
                self.assertEqual(len(rows), 1)
                self.assertEqual(rows[0]["lines"], keep)
                self.assertIs(rows[0]["partial"], True)
                self.assert_figures(rows[0], want["stage"], f"stage {stage} with a bad CRC")
                blocks = self.q(f"SELECT count(deliveries) FROM loadgen_slog_block "
                                f"WHERE run='{run}' AND stage='{stage}'")
                self.assertEqual(blocks[0]["count"] if blocks else 0, len(want["blocks"]))
        self.assertRegex(out, r"loadgen_slog_stage,.*stage=0\b.*partial=false")

    def test_hostile_lines_reported_and_skipped(self):
        folder = self.copy("steady", "hostile")
        path = os.path.join(folder, "chain-stage-1.slog.gz")
        lines, _, _ = lines_of(path)
        hostile = [
            b"not json at all",
            b'{"type":"deliver-result","vatID":"v1\\",x=1 y","replay":false,"dr":["ok",null,null]}',
            b'{"type":"cosmic-swingset-begin-block","blockHeight":"12; DROP","time":1}',
            b'{"vatID":"v1","type":"syscall"}',
            b'{"type":"kernel-stats","stats":{"kernelObjects":1' + b"[" * 200,
        ]
        at = len(lines) // 2
        lines[at:at] = hostile
        regzip(path, lines)
        rc, out, err = convert("loadgen", [folder])
        self.assertEqual(rc, 65, err)
        for i in range(len(hostile)):
            with self.subTest(line=at + 1 + i):
                self.assertRegex(err, re.escape(f"{path}:{at + 1 + i}: ") + "not a slog event")
        self.assertNotIn("x=1 y", out)
        self.assertNotIn("DROP", out)
        stage = [l for l in out.splitlines() if l.startswith("loadgen_slog_stage,") and re.search(r",stage=1[, ]", l)]
        self.assertEqual(len(stage), 1)
        self.assertIn(f"badLines={len(hostile)}i", stage[0])
        self.assertIn("partial=false", stage[0])

    def test_long_deliveries_read_from_their_head(self):
        """A deliver whose kd and vd bodies make it longer than the kept head
        (64 KiB, docs/loadgen.md "Slogs"): 66 kB and 3.5 MB lines in both
        eras are read from their head, none is a bad line, and every figure
        equals the recomputation from the whole lines (the time-first era
        times a delivery from its deliver line: a lost line loses time)."""
        for key, sizes in (("steady", (66_000, 3_500_000)), ("old", (66_000, 70_000, 3_500_000))):
            with self.subTest(era=key):
                src = self.runs[key]
                folder = os.path.join(self.tmp, "longdeliver", "daily-perf-10c0de" + src[-6:])
                shutil.copytree(src, folder)
                path = os.path.join(folder, "chain-stage-1.slog.gz")
                lines, _, _ = lines_of(path)
                padded = pad_deliveries(lines, sizes)
                self.assertEqual(len(padded), len(sizes))
                self.assertGreater(min(len(lines[i]) for i in padded), 65_536)
                self.assertGreater(max(len(lines[i]) for i in padded), 3_000_000)
                regzip(path, lines)
                rc, out, err = convert("loadgen", [folder])
                self.assertEqual(rc, 0, err[-800:])
                self.assertNotIn("not a slog event", err)
                write_lines(self.influx, DB, out)
                self.check_folder(folder, key + " with long deliveries")

    def test_fifo_named_like_a_slog_is_skipped(self):
        """A FIFO named chain-stage-1.slog.gz hung convert for good (no
        writer ever comes); it is reported by name and not read, and the
        other stages and perf.jsonl are converted as usual."""
        folder = self.copy("steady", "fifo")
        path = os.path.join(folder, "chain-stage-1.slog.gz")
        os.unlink(path)
        os.mkfifo(path)
        try:
            rc, out, err = convert("loadgen", [folder], timeout=60)
        except subprocess.TimeoutExpired:
            self.fail("convert waited on a FIFO")
        self.assertEqual(rc, 65, err)
        self.assertIn(f"{path}: not a regular file; not read\n", err)
        self.assertIn("perfship convert: 1 record(s) rejected", err)
        for stage in ("0", "2"):
            self.assertRegex(out, rf"loadgen_slog_stage,.*stage={stage}\b.*partial=false")
        self.assertNotRegex(out, r"loadgen_slog_stage,.*stage=1\b")
        self.assertIn("loadgen_run,", out)

    def test_many_rejects_all_reported_with_their_lines(self):
        """80,000 bad lines, each reported as FILE:LINE in order and counted,
        among good ones; the messages end with the count (convert writes
        what it says in chunks: docs/benchmarks.md)."""
        folder = self.copy("steady", "rejects")
        path = os.path.join(folder, "chain-stage-1.slog.gz")
        lines, _, _ = lines_of(path)
        bad = [b'{"type":"deliver","vatID":"v%d x=1","kd":[]}' % i for i in range(80_000)]
        mixed = lines[:100] + bad + lines[100:]
        regzip(path, mixed)
        rc, out, err = convert("loadgen", [folder])
        self.assertEqual(rc, 65, err[-500:])
        said = err.splitlines()
        self.assertEqual(said[-1], "perfship convert: 80000 record(s) rejected")
        want = [f"{path}:{101 + i}: not a slog event: vatID is not a vat ID" for i in range(80_000)]
        self.assertEqual(said[:-1], want)
        stage = [l for l in out.splitlines()
                 if l.startswith("loadgen_slog_stage,") and re.search(r",stage=1[, ]", l)]
        self.assertEqual(len(stage), 1)
        self.assertIn("badLines=80000i", stage[0])
        self.assertIn(f"lines={len(mixed)}i", stage[0])

    def test_big_lines_cost_no_memory(self):
        folder = generate(os.path.join(self.tmp, "gen", "big"), seed=4107, rev_seed="slog-big",
                          bundle_bytes={"amm": 8000000})
        path = os.path.join(folder, "chain-stage-1.slog.gz")
        lines, _, _ = lines_of(path)
        self.assertGreater(max(len(l) for l in lines), 8_000_000)
        rc, out, err = convert("loadgen", [folder])
        self.assertEqual(rc, 0, err)
        write_lines(self.influx, DB, out)
        run = os.path.basename(folder)
        want = reduce_stage(path, finished_cycles(folder).get(1, 0))
        rows = self.q(f"SELECT * FROM loadgen_slog_vat WHERE run='{run}' AND stage='1' GROUP BY vat")
        names = {r["vat"]: r.get("name") for r in rows}
        self.assertEqual(names, {v: w.get("name") for v, w in want["vats"].items()})
        self.assertIn("zcf-b1-8d1c4-amm", names.values())


if __name__ == "__main__":
    unittest.main(verbosity=2)
