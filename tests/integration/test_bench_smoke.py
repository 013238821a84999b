"""Smoke test of scripts/bench: the quick benchmark runs against a real
InfluxDB and prints every figure. No timing is asserted (CI machines vary);
what must hold is that each case ran to the end and measured something."""
import os
import re
import subprocess
import sys
import unittest

import harness

CASES = ["convert", "plain1", "plain2", "e2e", "gzip", "bigline", "scale", "latency", "idle"]


class BenchSmoke(unittest.TestCase):
    def test_quick_bench_prints_every_figure(self):
        script = os.path.join(harness.SOURCE_DIR, "scripts", "bench")
        p = subprocess.run([sys.executable, script, "--quick", "--bin", harness.PERFSHIP_BIN],
                           capture_output=True, timeout=120)
        out = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace")
        self.assertEqual(p.returncode, 0, f"scripts/bench --quick failed:\n{out}\n{err[-3000:]}")
        for case in CASES:
            m = re.search(rf"^figure {case} +(.*)$", out, re.M)
            self.assertIsNotNone(m, f"no figure line for {case}:\n{out}")
            # a figure carries numbers, e.g. "cpu 0.812 us/pt"
            self.assertRegex(m.group(1), r"\d+(\.\d+)? (us/pt|s|ms)", f"{case}: {m.group(1)}")
        # each e2e run against the convert run just before it
        self.assertRegex(out, r"\nfigure e2e-pair +run --once CPU / convert CPU of the run just "
                         r"before: median \d+\.\d+", out)
        self.assertIn("figure summary:", out)
        for what in ("convert CPU/point", "run --once agent CPU/point", "latency p99", "idle CPU",
                     "run --once CPU / convert CPU (paired runs)",
                     "run --once CPU / convert CPU (lowest runs)"):
            self.assertRegex(out, rf"\n  {re.escape(what)} +\S+", f"summary lacks {what}:\n{out}")

    def test_agoric_comparison_without_the_script_is_skipped_not_failed(self):
        # The side-by-side case needs agoric-sdk's script, which CI does not
        # have: without a path it must say so and succeed, before generating
        # its gigabyte; a path that is not there must fail, not pass as skipped.
        script = os.path.join(harness.SOURCE_DIR, "scripts", "bench")
        base = [sys.executable, script, "--case", "slog-vs-agoric", "--bin", harness.PERFSHIP_BIN]
        p = subprocess.run(base, capture_output=True, timeout=60)
        out = p.stdout.decode("utf-8", "replace")
        self.assertEqual(p.returncode, 0, out + p.stderr.decode("utf-8", "replace"))
        self.assertRegex(out, r"slog-vs-agoric: skipped: no --agoric-script PATH given")
        self.assertNotRegex(out, r"^figure slog-vs-agoric", out)
        missing = os.path.join(harness.SOURCE_DIR, "no-such-dir", "monitor-slog-block-time.py")
        p = subprocess.run(base + ["--agoric-script", missing], capture_output=True, timeout=60)
        err = p.stderr.decode("utf-8", "replace")
        self.assertNotEqual(p.returncode, 0, err)
        self.assertIn(f"slog-vs-agoric: {missing}: No such file or directory", err)


if __name__ == "__main__":
    unittest.main()
