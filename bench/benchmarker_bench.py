"""The benchmarker case of the benchmarks (docs/benchmarks.md "Benchmarker").

scripts/bench runs it as its opt-in `benchmarker` case. On one report of
the InterUSS benchmarker of about 1 GB with query details
(tests/tools/gen_benchmarker.py --query-details --detail-bytes 4000
--rate-scale 36; --quick: --rate-scale 2, about 57 MB), cached in the bench
data folder, it measures side by side in one session:

  python      bench/benchmarker_reduce.py: json.load, then each step's
              throughput and latency as the tool's analysis defines them
  convert     perfship convert -f benchmarker of the same report
  agent       perfship run --once with the report's folder as a source,
              into the bench's InfluxDB (the streamed document path)

Targets: convert's CPU at most 1/10 of the Python reduction's; the agent's
peak RSS at most 64 MB.
"""
import os
import shutil
import subprocess
import sys

from bench.measure import median, record, run_child

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
GEN = os.path.join(ROOT, "tests", "tools", "gen_benchmarker.py")
REDUCE = os.path.join(ROOT, "bench", "benchmarker_reduce.py")


def report_path(data, quick):
    scale = "2" if quick else "36"
    # the agent's source: the folder holds nothing but this report's folder
    folder = os.path.join(data, f"benchmarker_x{scale}")
    path = os.path.join(folder, "isas_images", "report.json")
    if not os.path.exists(path):
        print(f"benchmarker bench: generating {path}", file=sys.stderr, flush=True)
        tmp = folder + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run([sys.executable, GEN, "--seed", "1", "--no-validate", "--query-details",
                        "--detail-bytes", "4000", "--rate-scale", scale,
                        "--out", os.path.join(tmp, "isas_images", "report.json")], check=True)
        shutil.rmtree(folder, ignore_errors=True)
        os.rename(tmp, folder)
    return folder, path


def case_benchmarker(b, data, quick, runs, figure):
    folder, path = report_path(data, quick)
    size_mb = os.path.getsize(path) / 1e6
    for _ in range(runs):
        rc, wall, cpu, rss, err = run_child([sys.executable, REDUCE, path])
        if rc != 0:
            raise RuntimeError(f"benchmarker: the Python reduction exited {rc}: {err[-800:]}")
        record("benchmarker-python", cpu=cpu, wall=wall, rss_mb=rss / 1024)
        rc, wall, cpu, rss, err = run_child([b.bin, "convert", "-f", "benchmarker", path])
        if rc != 0:
            raise RuntimeError(f"benchmarker: convert exited {rc}: {err[-800:]}")
        record("benchmarker-convert", cpu=cpu, wall=wall, rss_mb=rss / 1024)
        db = b.fresh_db("benchmarker")
        cfg = b.config(db, f'{{ path = "{folder}"; format = "benchmarker"; }}')
        rc, wall, cpu, rss, err = run_child([b.bin, "-c", cfg, "run", "--once"])
        if rc != 0:
            raise RuntimeError(f"benchmarker: run --once exited {rc}: {err[-800:]}")
        if b.count(db, measurement="benchmarker_step", field="load_factor") == 0:
            raise RuntimeError("benchmarker: run --once wrote no step point")
        record("benchmarker-agent", cpu=cpu, wall=wall, rss_mb=rss / 1024)
        b.drop(db)
    py, cv = median("benchmarker-python", "cpu"), median("benchmarker-convert", "cpu")
    figure("benchmarker", f"report {size_mb:.0f} MB: python cpu {py:.2f} s rss "
           f"{median('benchmarker-python', 'rss_mb'):.0f} MB; convert cpu {cv:.2f} s "
           f"({cv / py:.3f} of python) rss {median('benchmarker-convert', 'rss_mb'):.1f} MB; "
           f"agent run --once cpu {median('benchmarker-agent', 'cpu'):.2f} s rss "
           f"{median('benchmarker-agent', 'rss_mb'):.1f} MB")
