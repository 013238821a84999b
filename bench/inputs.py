"""The benchmarks' inputs (docs/benchmarks.md, "Inputs"), generated once
and cached in the data directory, and the agent's sources for them."""
import os
import shutil
import subprocess
import sys

from bench import ROOT, module_argv
from bench.measure import log

JSONL_SOURCE = ('{{ path = "{path}"; format = "jsonl"; measurement = "bench"; '
                'time_key = "ts"; tag_keys = ["stage"]; types = {{ count = "integer"; }}; }}')
# The issue's input (bench/gen_stats_jsonl.py): every number a float but for
# the declared none, "type" the tag, seconds with milliseconds.
STATS_SOURCE = ('{{ path = "{path}"; format = "jsonl"; measurement = "bench"; '
                'time_key = "time"; time_unit = "s"; tag_keys = ["type"]; }}')
STATS_CONVERT = ["--measurement", "bench", "--tag", "type", "--time-key", "time",
                 "--time-unit", "s"]
TS_CONVERT = ["--measurement", "bench", "--tag", "stage", "--time-key", "ts",
              "--type", "count=integer"]


def ensure(path, argv):
    if not os.path.exists(path):
        log(f"generating {os.path.basename(path)}")
        tmp = path + ".tmp"
        subprocess.run(argv + ["--out", tmp], check=True, stdout=subprocess.DEVNULL)
        os.rename(tmp, path)
    return path


def stats_files(data, lines):
    """gen_jsonl.py's file (the earlier rounds' input) and its LP."""
    gen = [sys.executable, os.path.join(ROOT, "bench", "gen_jsonl.py"), "--lines", str(lines)]
    j = ensure(os.path.join(data, f"stats-{lines}.jsonl"), gen)
    lp = ensure(os.path.join(data, f"stats-{lines}.lp"), gen + ["--lp", "--host", "bench"])
    return j, lp


def issue_stats_files(b, data, lines):
    """gen_stats_jsonl.py's file and its points as LP, made by `convert` with
    the global tag the agent adds (host=bench): byte for byte the agent's
    request bodies."""
    j = os.path.join(data, f"gstats-{lines}.jsonl")
    if not os.path.exists(j):
        log(f"generating {os.path.basename(j)}")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_stats_jsonl.py"),
                        str(lines), j + ".tmp"], check=True, stdout=subprocess.DEVNULL)
        os.rename(j + ".tmp", j)
    lp = j[:-len(".jsonl")] + ".lp"
    if not os.path.exists(lp):
        with open(lp + ".tmp", "wb") as out:
            subprocess.run([b.bin, "-c", b.convert_cfg, "convert", "-f", "jsonl"] + STATS_CONVERT
                           + [j], stdout=out, check=True)
        os.rename(lp + ".tmp", lp)
    return j, lp


def loadgen_dir(data, name, days, minutes, monitor=True):
    d = os.path.join(data, name)
    if not os.path.exists(d + ".complete"):
        log(f"generating {name} ({days} runs, 12 stages x {minutes} min"
            f"{'' if monitor else ', no monitor records'})")
        shutil.rmtree(d, ignore_errors=True)
        subprocess.run(module_argv("gen_month", "--out", d, "--days", str(days),
                                   "--stage-minutes", str(minutes),
                                   *([] if monitor else ["--no-monitor-events"])),
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        open(d + ".complete", "w").close()
    return d


def loadgen_lp(b, d):
    """The points of a loadgen folder as LP (what the plain client posts),
    with the agent's global tag."""
    lp = d.rstrip("/") + ".lp"
    if not os.path.exists(lp):
        with open(lp + ".tmp", "wb") as out:
            subprocess.run([b.bin, "-c", b.convert_cfg, "convert", "-f", "loadgen", d],
                           stdout=out, check=True)
        os.rename(lp + ".tmp", lp)
    return lp


def count_lines(path):
    n = 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            n += chunk.count(b"\n")
    return n
