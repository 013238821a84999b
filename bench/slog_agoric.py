#!/usr/bin/env python3
"""The slog-vs-agoric case of the benchmarks (docs/benchmarks.md, "Slog:
side by side with Agoric's monitor-slog-block-time.py").

    bench/slog_agoric.py --bin BIN --agoric-script PATH [--mb 1024] [--data DIR] [--runs 1]
    scripts/bench --case slog-vs-agoric --agoric-script PATH

PATH is packages/SwingSet/misc-tools/monitor-slog-block-time.py of an
agoric-sdk checkout. The script is not part of this tree (Apache-2.0, kept
where it is); without PATH the case says it is skipped and succeeds, so that
nothing here depends on an agoric-sdk checkout; a PATH that cannot be read,
or a script without the line this case switches off, is an error.

On the stage slog the slog case measures (gen_loadgen.py --big-slog MB,
the same cache), interleaved in one session, --runs times each:

  gzip        `gzip -dc FILE >/dev/null`, the floor of any reader
  perfship    `perfship convert -f loadgen` of a folder holding that stage,
              minus the same folder without it (as the slog case does); its
              peak RSS is the whole convert's
  agoric      `gzip -dc FILE | python3 monitor-slog-block-time.py`: the
              script reads the decompressed slog on stdin, as its own usage
              line says (`tail -F chain.slog | python3 ...`). Its per-block
              query of a live node (`agd query block`, do_count_signatures)
              is switched off: a file has no node behind it, and a process
              per block would measure agd, not the reading. That one line is
              all that is changed, in memory; the file is not copied.

Then it compares what the two print for the same blocks: the block count,
and for every height both have, computrons, cranks, the script's `swingset`
(end-block-start to end-block-finish) beside perfship's `deliverySeconds`
(the sum of the block's delivery times), and the script's swingset, cosmos
and lag seconds beside the same figures of perfship's `loadgen_block`
points, which come from the run's perf.jsonl (the loadgen's own monitor of
that slog), not from the slog.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
if not __package__:  # run as bench/slog_agoric.py: the package is beside it
    sys.path.insert(0, ROOT)

from bench.slog_bench import generate, only_folder, timed, uncompressed_mb  # noqa: E402

SIGNATURES_ON = "\ndo_count_signatures = True\n"

# Runs the script as its own __main__ with the node queries off. Its source
# is read and compiled under its own path, so a traceback names the script.
RUNNER = """import sys
path = sys.argv[1]
with open(path) as f:
    src = f.read()
src = src.replace(%r, "\\ndo_count_signatures = False\\n", 1)
sys.argv = [path]
exec(compile(src, path, "exec"), {"__name__": "__main__", "__file__": path})
""" % SIGNATURES_ON

# One block line of the script: "  %5d   %2d(%4s)  %6s -> %4s(%5s)  %9d
# %6s(%6s)  +  %6s = %4s (%4s) ..." (height, blockTime delta, lag, cranks or
# blanks, computrons, swingset, cosmos, proc%).
SCRIPT_ROW = re.compile(
    r"^\s*(\d+)\s+(-?\d+)\(\s*[-\d.]+\)\s+(-?[\d.]+) ->\s*(-?\d*)\(\s*[-\d.]+\)\s+(-?\d+)"
    r"\s+(-?[\d.]+)\(\s*[-\d.]+\)\s+\+\s+(-?[\d.]+) =\s*(-?\d+)%")


def usable(script):
    """None when script can be run here, else why not (the skip message)."""
    if not script:
        return "no --agoric-script PATH given (agoric-sdk's " \
               "packages/SwingSet/misc-tools/monitor-slog-block-time.py)"
    try:
        with open(script) as f:
            src = f.read()
    except OSError as e:
        return f"{script}: {e.strerror}"
    if src.count(SIGNATURES_ON) != 1:
        return (f"{script}: no single 'do_count_signatures = True' line, so its per-block "
                f"agd queries cannot be switched off; not the script this case knows")
    return None


def timed_pipeline(slog, script, out):
    """gzip -dc slog | python3 script > out: (rc, wall s, gzip cpu s,
    script cpu s, script peak RSS KB, stderr tail). The script runs under
    /usr/bin/time for its own peak (not this Python's after fork)."""
    with tempfile.NamedTemporaryFile(prefix="rss-") as rssf, \
            tempfile.TemporaryFile() as errf, open(out, "wb") as outf:
        t0 = time.perf_counter()
        gz = subprocess.Popen(["gzip", "-dc", slog], stdout=subprocess.PIPE)
        py = subprocess.Popen(["/usr/bin/time", "-o", rssf.name, "-f", "%M %x",
                               sys.executable, "-c", RUNNER, script],
                              stdin=gz.stdout, stdout=outf, stderr=errf)
        gz.stdout.close()  # the script alone holds the pipe: gzip sees it close
        _, _, ru_py = os.wait4(py.pid, 0)
        _, _, ru_gz = os.wait4(gz.pid, 0)
        wall = time.perf_counter() - t0
        gz.returncode = py.returncode = 0  # reaped above
        with open(rssf.name) as f:
            rss_kb, rc = (int(x) for x in f.read().split()[-2:])
        errf.seek(0)
        err = errf.read().decode("utf-8", "replace")[-2000:]
    return (rc, wall, ru_gz.ru_utime + ru_gz.ru_stime, ru_py.ru_utime + ru_py.ru_stime,
            rss_kb, err)


def perfship_blocks(lp_path, measurement, stage="1"):
    """height -> the fields of the stage's points of measurement
    (loadgen_slog_block from the slog, loadgen_block from perf.jsonl)."""
    blocks = {}
    tag = f",stage={stage},"
    with open(lp_path) as f:
        for line in f:
            if not line.startswith(measurement + ","):
                continue
            key, fields, _ts = line.rsplit(" ", 2)
            if tag not in key + ",":
                continue
            fv = {}
            for kv in fields.split(","):  # block points carry numbers and booleans only
                k, v = kv.split("=", 1)
                fv[k] = v == "true" if v in ("true", "false") else \
                    int(v[:-1]) if v.endswith("i") else float(v)
            blocks[fv["blockHeight"]] = fv
    return blocks


def script_blocks(out_path):
    """height -> the script's figures for that block."""
    blocks = {}
    with open(out_path) as f:
        for line in f:
            m = SCRIPT_ROW.match(line)
            if m:
                h, _bt, lag, cranks, comp, swingset, cosmos, _proc = m.groups()
                blocks[int(h)] = dict(lag=float(lag), cranks=int(cranks) if cranks else None,
                                      computrons=int(comp), swingset=float(swingset),
                                      cosmos=float(cosmos))
    return blocks


def routing_cranks(slog):
    """height -> the block's routing cranks (crank-finish lines whose
    crankType is "routing"), read here from the file itself: perfship's
    cranks leave them out (docs/schema.md), the script's crank numbers do
    not, and neither tool prints them."""
    counts, height = {}, None
    with gzip.open(slog, "rb") as f:
        for line in f:
            head = line[:72]
            if b'"type":"cosmic-swingset-begin-block"' in head:
                height = json.loads(line)["blockHeight"]
                counts[height] = 0
            elif height is not None and b'"type":"crank-finish"' in head \
                    and b'"crankType":"routing"' in line:
                counts[height] += 1
    return counts


def compare(ours, theirs, routing, runner, figure):
    """Prints what the two agree on, block by block. runner: perfship's
    loadgen_block points, the loadgen's own figures of each block from
    perf.jsonl, which carry the script's time figures under their names."""
    both = sorted(set(ours) & set(theirs))
    only_ours = sorted(set(ours) - set(theirs))
    only_theirs = sorted(set(theirs) - set(ours))
    figure("slog-vs-agoric", f"blocks: perfship {len(ours)}, script {len(theirs)}, both {len(both)}; "
                             f"perfship only {only_ours[:5]}{' ...' if len(only_ours) > 5 else ''}, "
                             f"script only {only_theirs[:5]}{' ...' if len(only_theirs) > 5 else ''}")
    if not both:
        return {}
    comp_eq = sum(ours[h]["computrons"] == theirs[h]["computrons"] for h in both)
    with_cranks = [h for h in both if theirs[h]["cranks"] is not None]
    cranks_eq = sum(ours[h]["cranks"] == theirs[h]["cranks"] for h in with_cranks)
    cranks_routing = sum(ours[h]["cranks"] + routing.get(h, 0) == theirs[h]["cranks"]
                         for h in with_cranks)
    # the script prints seconds to the millisecond: within 0.5 ms is "the same"
    inside = sum(ours[h]["deliverySeconds"] <= theirs[h]["swingset"] + 0.0005 for h in both)
    ds = sum(ours[h]["deliverySeconds"] for h in both)
    ss = sum(theirs[h]["swingset"] for h in both)
    busy = [h for h in both if theirs[h]["swingset"] >= 0.010]
    ratio = statistics.median(ours[h]["deliverySeconds"] / theirs[h]["swingset"] for h in busy) \
        if busy else None
    figure("slog-vs-agoric", f"computrons equal in {comp_eq} of {len(both)} blocks; cranks equal in "
                             f"{cranks_eq} of {len(with_cranks)} (the script has none for its first); perfship's "
                             f"cranks + the block's routing cranks = the script's in {cranks_routing} of "
                             f"{len(with_cranks)}")
    figure("slog-vs-agoric", f"time: script swingset (end-block span) {ss:.1f} s, perfship "
                             f"deliverySeconds {ds:.1f} s over the same blocks; deliverySeconds <= "
                             f"swingset in {inside} of {len(both)}; median ratio "
                             + (f"{ratio:.3f}" if ratio is not None else "-")
                             + f" over the {len(busy)} blocks with swingset >= 10 ms")
    # The script prints seconds rounded to the millisecond ("%1.3f").
    same = lambda a, b: abs(a - b) <= 0.0005 + 1e-9  # noqa: E731
    lb = [h for h in both if h in runner]
    for mine, its in (("swingsetTime", "swingset"), ("cosmosTime", "cosmos"), ("lag", "lag")):
        eq = sum(mine in runner[h] and same(runner[h][mine], theirs[h][its]) for h in lb)
        figure("slog-vs-agoric", f"{its}: the script's = perfship's loadgen_block {mine} (perf.jsonl) "
                                 f"to the ms in {eq} of {len(lb)} blocks")
    heavy = max(both, key=lambda h: theirs[h]["computrons"])
    mid = sorted(busy or both, key=lambda h: theirs[h]["swingset"])[len(busy or both) // 2]
    for label, h in (("first", both[0]), ("median", mid), ("heaviest", heavy), ("last", both[-1])):
        o, t = ours[h], theirs[h]
        figure("slog-vs-agoric",
               f"block {h} ({label}): computrons {o['computrons']} / {t['computrons']}, cranks "
               f"{o['cranks']} (+{routing.get(h, 0)} routing) / "
               f"{t['cranks'] if t['cranks'] is not None else '-'}, "
               f"deliverySeconds {o['deliverySeconds']:.3f} / swingset {t['swingset']:.3f} s "
               f"(perfship / script)")
    return dict(comp_eq=comp_eq, cranks_eq=cranks_eq, cranks_routing=cranks_routing, both=len(both))


def case_slog_vs_agoric(binary, data, mb, runs, script, figure=None, record=None):
    """Runs the case, or says why it is skipped and returns None."""
    figure = figure or (lambda case, text: print(f"figure {case:<10} {text}", flush=True))
    record = record or (lambda case, **m: None)
    why = usable(script)
    if why and not script:
        print(f"slog-vs-agoric: skipped: {why}", flush=True)
        return None
    if why:  # asked for and not there: a typo must not pass for a skipped case
        raise SystemExit(f"slog-vs-agoric: {why}")
    script = os.path.abspath(script)
    run = generate(data, f"big-{mb}", ["--big-slog", str(mb)])
    slog = os.path.join(run, "chain-stage-1.slog.gz")
    raw_mb = uncompressed_mb(slog)
    work = tempfile.mkdtemp(prefix="slog-agoric-")
    try:
        with_slog = only_folder(run, os.path.join(work, os.path.basename(run)), True)
        without = only_folder(run, os.path.join(work, "plain", os.path.basename(run)), False)
        ours_lp = os.path.join(work, "perfship.lp")
        theirs_out = os.path.join(work, "script.txt")
        g, p, a = [], [], []
        for _ in range(runs):  # interleaved, so the machine's load falls on all alike
            rc, wall, cpu, rss = timed(["gzip", "-dc", slog])
            assert rc == 0, rc
            g.append((cpu, wall, rss))
            with open(ours_lp, "wb") as out:
                rc, wall, cpu, rss = timed([binary, "convert", "-f", "loadgen", with_slog], out)
            assert rc in (0, 65), rc
            with open(os.devnull, "wb") as out:
                rc0, wall0, cpu0, _ = timed([binary, "convert", "-f", "loadgen", without], out)
            assert rc0 in (0, 65), rc0
            p.append((cpu - cpu0, wall - wall0, rss))
            rc, wall, gcpu, scpu, rss, err = timed_pipeline(slog, script, theirs_out)
            if rc != 0:
                raise SystemExit(f"slog-vs-agoric: the script failed ({rc}):\n{err}")
            a.append((gcpu + scpu, wall, rss, scpu))
        med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
        gz = med(g, 0)
        pyv = sys.version.split()[0]
        figure("slog-vs-agoric", f"{raw_mb:.0f} MB slog ({os.path.getsize(slog) / 1e6:.0f} MB gzipped), "
                                 f"{runs} run(s), medians; CPU = user+sys")
        figure("slog-vs-agoric", f"gzip -dc >/dev/null: {gz:.2f} s CPU, {med(g, 1):.2f} s wall, "
                                 f"peak RSS {max(x[2] for x in g) / 1024:.1f} MB")
        figure("slog-vs-agoric", f"perfship reduce: {med(p, 0):.2f} s CPU ({med(p, 0) / gz:.2f} x gzip), "
                                 f"{med(p, 1):.2f} s wall, peak RSS {max(x[2] for x in p) / 1024:.1f} MB "
                                 f"(whole convert)")
        figure("slog-vs-agoric", f"gzip -dc | monitor-slog-block-time.py (python {pyv}): "
                                 f"{med(a, 0):.2f} s CPU ({med(a, 0) / gz:.2f} x gzip; the script alone "
                                 f"{med(a, 3):.2f} s), {med(a, 1):.2f} s wall, script peak RSS "
                                 f"{max(x[2] for x in a) / 1024:.1f} MB")
        record("slog-vs-agoric", gzip_cpu=gz, perfship_cpu=med(p, 0), agoric_cpu=med(a, 0),
               agoric_script_cpu=med(a, 3), perfship_rss_mb=max(x[2] for x in p) / 1024,
               agoric_rss_mb=max(x[2] for x in a) / 1024)
        agree = compare(perfship_blocks(ours_lp, "loadgen_slog_block"), script_blocks(theirs_out),
                        routing_cranks(slog), perfship_blocks(ours_lp, "loadgen_block"), figure)
        return dict(gzip_cpu=gz, perfship_cpu=med(p, 0), agoric_cpu=med(a, 0), **agree)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "build-release", "perfship"))
    ap.add_argument("--agoric-script", default=None, metavar="PATH",
                    help="agoric-sdk's packages/SwingSet/misc-tools/monitor-slog-block-time.py")
    ap.add_argument("--mb", type=int, default=1024, help="stage slog size, uncompressed MB")
    ap.add_argument("--data", default=os.path.join(ROOT, "build-release", "bench-data"))
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    if usable(args.agoric_script) is None:
        os.makedirs(args.data, exist_ok=True)
    case_slog_vs_agoric(os.path.abspath(args.bin), args.data, args.mb, args.runs, args.agoric_script)


if __name__ == "__main__":
    main()
