"""The live agent reading loadgen chain slogs (docs/loadgen.md "Slogs")
against a real InfluxDB: `run --once` writes exactly what `convert`
writes; a running stage is partial and then completes in place; kill -9
in the middle of a slog loses and doubles nothing.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(__file__))
from faultproxy import FaultProxy  # noqa: E402
from harness import (DATA_DIR, Agent, InfluxTestCase, convert, run_perfship,  # noqa: E402
                     wait_until, write_config, write_lines)

GEN = os.path.join(DATA_DIR, "loadgen", "gen_loadgen.py")
SLOG = ("loadgen_slog_block", "loadgen_slog_block_vat", "loadgen_slog_vat",
        "loadgen_slog_stage")
GROUPS = ("batch = { flush_interval_ms = 100; };\n"
          "watch = { rescan_interval_ms = 300; settle_ms = 100; };\n")


def generate(out, *args, **scenario):
    scenario.setdefault("slog", "rich")
    argv = [sys.executable, GEN, "--out", out] + list(args)
    if scenario:
        argv += ["--scenario-json", json.dumps(scenario)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    (name,) = os.listdir(out)
    return os.path.join(out, name)


class SlogLive(InfluxTestCase):
    tmp_prefix = "perfship-sloglive-"

    def setUp(self):
        self.dir = os.path.join(self.tmp, self.id().rsplit(".", 1)[-1])
        os.makedirs(self.dir)
        self.results = os.path.join(self.dir, "results")
        os.makedirs(self.results)

    def config(self, db, url=None):
        state = os.path.join(self.dir, "state")
        os.makedirs(state, exist_ok=True)
        return write_config(os.path.join(self.dir, "perfship.cfg"), url or self.influx.url, state,
                            sources=f'{{ path = "{self.results}"; format = "loadgen"; }}',
                            extra=GROUPS, database=db)

    def rows(self, db, m, run):
        rows = self.influx.query(db, f"SELECT * FROM {m} WHERE run='{run}' GROUP BY *")
        out = {}
        for r in rows:
            r.pop("host", None)
            r.pop("_measurement", None)
            key = (r.get("stage"), r.get("vat"), r["time"])
            self.assertNotIn(key, out, f"{m}: a point twice: {key}")
            out[key] = r
        return out

    @staticmethod
    def written(agent):
        """Points the last run of the agent wrote (its summary line; the log
        is appended to by every start)."""
        got = re.findall(r"done: .*?, (\d+) points written", agent.output())
        return int(got[-1])

    def converted_db(self, folder, db):
        rc, out, err = convert("loadgen", [folder])
        self.assertIn(rc, (0, 65), err)
        self.influx.create_db(db)
        write_lines(self.influx, db, out)

    def assert_same(self, db_a, db_b, run):
        for m in SLOG:
            a, b = self.rows(db_a, m, run), self.rows(db_b, m, run)
            with self.subTest(measurement=m):
                self.assertGreater(len(a), 0)
                self.assertEqual(set(a), set(b), f"{m}: series and times")
                for k in a:
                    self.assertEqual(a[k], b[k], f"{m} {k}")

    def test_once_writes_what_convert_writes(self):
        folder = generate(os.path.join(self.dir, "gen"), "--stages", "3", "--stage-minutes", "3",
                          seed=4102, rev_seed="live-once",
                          leak_per_cycle={"kernelObjects": 2})
        run = os.path.basename(folder)
        shutil.move(folder, os.path.join(self.results, run))
        self.converted_db(os.path.join(self.results, run), "conv1")
        agent = Agent(self.config("live1"), ["--once"]).start()
        self.assertEqual(agent.wait(180), 0, agent.output()[-2000:])
        self.assert_same("conv1", "live1", run)
        g = self.influx.query("live1", "SELECT kernelObjectsPerCycle FROM loadgen_slog_stage "
                                       f"WHERE run='{run}' AND stage='1'")
        self.assertEqual(g[0]["kernelObjectsPerCycle"], 2.0)
        # a second start reads no complete stage again: nothing to do, same data
        agent = Agent(self.config("live1"), ["--once"]).start()
        self.assertEqual(agent.wait(180), 0, agent.output()[-2000:])
        self.assertEqual(self.written(agent), 1)  # the heartbeat alone
        self.assert_same("conv1", "live1", run)
        # forgetting the run folder forgets its slogs too: read again, same data
        cfg = self.config("live1")
        rc, out, err = run_perfship(["-c", cfg, "forget", os.path.join(self.results, run)])
        self.assertEqual(rc, 0, err)
        self.assertIn("3 slog stages", out)
        agent = Agent(cfg, ["--once"]).start()
        self.assertEqual(agent.wait(180), 0, agent.output()[-2000:])
        self.assertGreater(self.written(agent), 1)
        self.assert_same("conv1", "live1", run)

    def test_running_stage_partial_then_complete(self):
        folder = generate(os.path.join(self.dir, "gen"), "--stages", "3", "--stage-minutes", "3",
                          seed=4106, rev_seed="live-inprog", outcome="inprogress",
                          outcome_stage=1, outcome_frac=0.6)
        run = os.path.basename(folder)
        dst = os.path.join(self.results, run)
        shutil.move(folder, dst)
        path = os.path.join(dst, "chain-stage-1.slog.gz")
        with open(path, "rb") as f:
            data = f.read()
        raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)
        complete_lines = raw[:raw.rindex(b"\n") + 1]
        # the file as the loadgen leaves it mid-stage: no trailer, a cut line
        cut = complete_lines.rindex(b"\n", 0, len(complete_lines) * 2 // 3) + 40
        z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        with open(path, "wb") as f:
            f.write(z.compress(complete_lines[:cut]) + z.flush(zlib.Z_SYNC_FLUSH))
        agent = Agent(self.config("live2")).start()
        try:
            def stage_partial():
                r = self.influx.query("live2", "SELECT partial, blocks FROM loadgen_slog_stage "
                                               f"WHERE run='{run}' AND stage='1'") \
                    if "live2" in str(self.influx.query_raw("SHOW DATABASES")) else []
                return r and r[0]["partial"] is True and r[0]["blocks"] > 0
            wait_until(stage_partial, timeout=60, what="the running stage, partial")
            blocks_before = self.influx.count("live2", "loadgen_slog_block")
            # the stage ends: the same stream goes on, the cut line first, then its trailer
            with open(path, "ab") as f:
                f.write(z.compress(complete_lines[cut:]) + z.flush(zlib.Z_FINISH))

            def stage_complete():
                r = self.influx.query("live2", "SELECT partial FROM loadgen_slog_stage "
                                               f"WHERE run='{run}' AND stage='1'")
                return r and r[0]["partial"] is False
            wait_until(stage_complete, timeout=60, what="the stage, complete")
            time.sleep(0.5)
        finally:
            agent.stop()
        rows = self.influx.query("live2", "SELECT count(partial) FROM loadgen_slog_stage "
                                          f"WHERE run='{run}' AND stage='1'")
        self.assertEqual(rows[0]["count"], 1, "one stage point, overwritten in place")
        self.assertGreater(self.influx.count("live2", "loadgen_slog_block"), blocks_before)
        # and it is what convert makes of the finished file
        self.converted_db(dst, "conv2")
        self.assert_same("conv2", "live2", run)

    def test_crc_error_keeps_every_line(self):
        """A stage whose only fault is one flipped byte of its gzip CRC, in a
        74,400-line and a 248-line stage: `run --once` writes every line gzip
        -dc recovers (the stage partial), exactly what convert writes, and
        names the file and the line where it broke."""
        folder = generate(os.path.join(self.dir, "gen"), "--stages", "3",
                          seed=4109, rev_seed="live-crc", stage_minutes=37)
        run = os.path.basename(folder)
        dst = os.path.join(self.results, run)
        shutil.move(folder, dst)
        for stage, keep in ((1, 74_400), (2, 248)):
            path = os.path.join(dst, f"chain-stage-{stage}.slog.gz")
            with open(path, "rb") as f:
                raw = zlib.decompress(f.read(), 16 + zlib.MAX_WBITS)
            whole = b"".join(l + b"\n" for l in raw.split(b"\n")[:keep])
            body = bytearray(gzip.compress(whole))
            body[-8] ^= 0x01  # the CRC's first byte
            with open(path, "wb") as f:
                f.write(body)
            z = subprocess.run(["gzip", "-dc", path], capture_output=True)
            self.assertNotEqual(z.returncode, 0)
            self.assertEqual(z.stdout, whole)
        self.converted_db(dst, "conv4")
        agent = Agent(self.config("live4"), ["--once"]).start()
        # a corrupt stream is bad input: --once says so in its exit code
        self.assertEqual(agent.wait(180), 65, agent.output()[-2000:])
        self.assert_same("conv4", "live4", run)
        log = agent.output()
        for stage, keep in ((1, 74_400), (2, 248)):
            with self.subTest(stage=stage):
                rows = self.influx.query("live4", "SELECT lines, partial FROM loadgen_slog_stage "
                                                  f"WHERE run='{run}' AND stage='{stage}'")
                self.assertEqual(len(rows), 1)
                self.assertEqual(rows[0]["lines"], keep)
                self.assertIs(rows[0]["partial"], True)
                path = os.path.join(dst, f"chain-stage-{stage}.slog.gz")
                self.assertIn(f"{path}:{keep + 1}: corrupt gzip data (incorrect data check)", log)

    def test_kill_9_during_a_slog_read(self):
        big = os.path.join(self.dir, "gen")
        folder = generate(big, "--big-slog", "48", slog="rich")
        run = os.path.basename(folder)
        dst = os.path.join(self.results, run)
        shutil.move(folder, dst)
        self.converted_db(dst, "conv3")
        total = self.influx.count("conv3", "loadgen_slog_block")
        # every write answered late: the reading waits for its batches, so
        # the kill lands in the middle of the stage, not after it
        with FaultProxy(upstream_port=self.influx.port) as proxy:
            proxy.add_rule("delay", seconds=0.3, count=100000, path="/write")
            agent = Agent(self.config("live3", url=proxy.url)).start()
            try:
                wait_until(lambda: "live3" in str(self.influx.query_raw("SHOW DATABASES")) and
                           self.influx.count("live3", "loadgen_slog_block") > 0,
                           timeout=60, what="the first slog blocks")
                part = self.influx.count("live3", "loadgen_slog_block")
            finally:
                agent.kill()  # SIGKILL
        self.assertLess(part, total, "killed before the stage was read whole")
        agent = Agent(self.config("live3"), ["--once"]).start()
        self.assertEqual(agent.wait(300), 0, agent.output()[-2000:])
        self.assert_same("conv3", "live3", run)


if __name__ == "__main__":
    unittest.main(verbosity=2)
