"""The README's demo: perfship's main job on the bundled sample results.

Starts a throw-away InfluxDB (Debian's influxd) on a free loopback port in a
temporary directory, writes a configuration whose sources are the bundled
loadgen runs, DSS bench results and Locust CSVs, runs `perfship run --once`,
then prints what landed: points per measurement, the run markers, the
per-revision summary and the DSS comparison; then writes the report page
(`perfship report`) and says where it is, opening it when a display is
there. The server is stopped at the end (pass --keep to leave it running and
print its URL).
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
os.environ.setdefault("PERFSHIP_BIN", os.path.join(ROOT, "build", "perfship"))

import harness  # noqa: E402


def table(rows, cols):
    if not rows:
        print("  (none)")
        return
    widths = [max(len(c), *(len(fmt(r.get(c))) for r in rows)) for c in cols]
    print("  " + "  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for r in rows:
        print("  " + "  ".join(fmt(r.get(c)).ljust(w) for c, w in zip(cols, widths)))


def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.2f}"
    return str(v)


def main():
    keep = "--keep" in sys.argv
    work = tempfile.mkdtemp(prefix="perfship-demo-")
    data = os.path.join(ROOT, "tests", "data")
    influx = harness.InfluxServer().start()
    try:
        sources = f"""
  {{ path = "{data}/loadgen/synth"; format = "loadgen"; }},
  {{ path = "{data}/dss/synth"; format = "dss-bench"; }},
  {{ path = "{data}/dss/synth/locust_isa"; format = "locust"; }}"""
        cfg = harness.write_config(os.path.join(work, "perfship.cfg"), influx.url,
                                   os.path.join(work, "state"), sources=sources,
                                   host=socket.gethostname() or "demo")
        print(f"InfluxDB {influx.url} (database perf); configuration {cfg}")
        print("$ perfship -c perfship.cfg run --once")
        sys.stdout.flush()
        rc = os.spawnv(os.P_WAIT, harness.PERFSHIP_BIN,
                       [harness.PERFSHIP_BIN, "-c", cfg, "run", "--once"])
        print(f"(exit code {rc}: 0 all shipped; 65 some input rejected and reported above)\n")

        print("Points per measurement:")
        rows = []
        for s in influx.series("perf", "SHOW MEASUREMENTS"):
            for (name,) in s.get("values", []):
                rows.append({"measurement": name, "points": influx.count("perf", name)})
        table(rows, ["measurement", "points"])

        print("\nRun markers (runs):")
        rows = influx.query("perf", 'SELECT "text", "backfill" FROM "runs" GROUP BY "run", "event", "status", "source"')
        table(rows, ["source", "run", "event", "status", "text"])

        print("\nLoadgen runs (loadgen_run):")
        rows = influx.query("perf", 'SELECT "status", "cycleSuccessRate", "cycleAvgDuration", '
                            '"chainBootstrapDuration", "duration" FROM "loadgen_run" GROUP BY "run"')
        table(rows, ["run", "status", "cycleSuccessRate", "cycleAvgDuration",
                     "chainBootstrapDuration", "duration"])

        print("\nDSS bench, rid_isa: q/s and p95 per arm and variant:")
        rows = influx.query("perf", 'SELECT "variantIndex", "rps_total", "p95_ms", "errors" FROM "dss_bench" '
                            "WHERE \"test\" = 'rid_isa' GROUP BY \"run\", \"arm\", \"variant\"")
        rows.sort(key=lambda r: (r.get("run", ""), r.get("arm", ""), r.get("variantIndex") or 0))
        table(rows, ["run", "arm", "variant", "rps_total", "p95_ms", "errors"])

        page = os.path.join(work, "report.html")
        print("\n$ perfship -c perfship.cfg report -o report.html --since 3650d")
        sys.stdout.flush()
        if os.spawnv(os.P_WAIT, harness.PERFSHIP_BIN, [harness.PERFSHIP_BIN, "-c", cfg, "report",
                                                       "-o", page, "--since", "3650d"]) == 0:
            print(f"The report: {page}\n  open it in any browser (file://{page}); it needs "
                  "nothing else, not even a network.")
            opener = shutil.which("xdg-open")
            if opener and (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
                subprocess.Popen([opener, page], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)

        # Last, what a person reads first: the changes, the rest counted.
        # The loadgen samples ran in 2022: a range that still holds them.
        # Too few runs of one series for a verdict across revisions (it
        # needs verdicts.min_runs); the stage drift of the successful runs
        # and the DSS arms are judged.
        print("\nWhat changed (perfship verdicts: regressions first; --all lists the rest):")
        print("$ perfship -c perfship.cfg verdicts --since 3650d")
        sys.stdout.flush()
        os.spawnv(os.P_WAIT, harness.PERFSHIP_BIN, [harness.PERFSHIP_BIN, "-c", cfg, "verdicts",
                                                    "--since", "3650d"])
        if keep:
            print(f"\nInfluxDB left running at {influx.url} (pid {influx.proc.pid}, dir {influx.dir})")
        return 0 if rc in (0, 65) else rc
    finally:
        if not keep:
            influx.close()


if __name__ == "__main__":
    sys.exit(main())
