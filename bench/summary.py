"""The table at the end of a benchmark session: each figure against its
target (docs/benchmarks.md)."""
from bench.measure import lowest, median


def summary():
    rows = []

    def row(what, value, target, ok, unit=""):
        if value is None:
            return
        rows.append((what, f"{value:.3g}{unit}", target, "ok" if ok else "MISSED"))

    v = median("convert", "cpu_us")
    row("convert CPU/point", v, "<= 0.5 us", v is not None and v <= 0.5, " us")
    v = median("convert-ts", "cpu_us")
    row("convert CPU/point (gen_jsonl input)", v, "(reported)", True, " us")
    v = median("e2e", "cpu_us")
    row("run --once agent CPU/point", v, "<= 0.9 us", v is not None and v <= 0.9, " us")
    c = median("convert", "cpu_us")
    p = median("e2e-pair", "ratio")
    if p:  # each e2e run against the convert run just before it
        row("run --once CPU / convert CPU (paired runs)", p, "<= 1.3", p <= 1.3)
    elif v and c:
        row("run --once CPU / convert CPU", v / c, "<= 1.3", v / c <= 1.3)
    # the medians move with the machine (docs/benchmarks.md, "Eighth pass")
    v, c = lowest("e2e", "cpu_us"), lowest("convert", "cpu_us")
    if v and c:
        row("run --once CPU / convert CPU (lowest runs)", v / c, "(reported)", True)
    v = median("e2e-ts", "cpu_us")
    row("run --once agent CPU/point (gen_jsonl input)", v, "(reported)", True, " us")
    pmed = min([x for x in (median("plain1", "wall"), median("plain2", "wall")) if x] or [0]) or None
    v = median("e2e", "wall")
    if v and pmed:
        row("run --once wall / plain client (medians)", v / pmed, "(reported)", True)
    pi = min([x for x in (median("plain1", "influx_us"), median("plain2", "influx_us")) if x] or [0]) or None
    v = median("e2e", "influx_us")
    if v and pi:
        row("influxd CPU/point, agent / plain LP", v / pi, "<= 1.0 (noise ~5%)", v / pi <= 1.05)
    v = median("gzip", "cpu_us")
    e = median("e2e", "cpu_us")
    if v and e:
        row("gzip extra agent CPU/point", v - e, "(reported)", True, " us")
    v = median("e2e", "rss_mb")
    row("run --once peak RSS", v, "<= 24 MB", v is not None and v <= 24, " MB")
    v = median("bigline", "cpu")
    row("loadgen run with 9 MB line: CPU", v, "<= 0.3 s", v is not None and v <= 0.3, " s")
    v = median("bigline", "rss_mb")
    row("loadgen run with 9 MB line: RSS", v, "<= 100 MB", v is not None and v <= 100, " MB")
    v = median("scale", "ratio")
    row("many files: CPU/point vs one file", v, "<= 1.1", v is not None and v <= 1.1)
    nf = median("scale", "files")
    if nf:
        v = median(f"scale{int(nf)}", "rss_mb")
        lim = 32 if nf >= 1000 else 24 + 8 * nf / 1000
        row(f"{int(nf)} files: peak RSS", v, f"<= {lim:.0f} MB", v is not None and v <= lim, " MB")
    v = median("verdicts60", "one_run")
    row("verdicts: one new run (365 x 7)", v, "< 1 s", v is not None and v < 1, " s")
    v = median("verdicts60", "all_runs")
    row("verdicts: a year recomputed", v, "<= 5 s", v is not None and v <= 5, " s")
    v = median("latency", "p99_ms")
    row("latency p99", v, "<= 1100 ms", v is not None and v <= 1100, " ms")
    v = median("idle", "cpu_ms_per_min")
    row("idle CPU", v, "~0 (< 10 ms/min)", v is not None and v < 10, " ms/min")
    for name, what in (("backfill6", "backfill, 6 runs"), ("month", "backfill, a month")):
        v = median(name + "-ratio", "ratio")
        row(f"{what}: wall / InfluxDB alone", v, "<= 1.25", v is not None and v <= 1.25)
        v = median(name, "cpu_us")
        row(f"{what}: agent CPU/point", v, "(reported)", True, " us")
    v = median("month", "rss_mb")
    row("backfill, a month: peak RSS", v, "<= 110 MB", v is not None and v <= 110, " MB")
    v = median("month", "progress_lines")
    w = median("month", "wall")
    if w is not None and w >= 12:  # a line every 10 s: shorter runs print none
        row("backfill progress lines", v, ">= 1", v >= 1)
    py, v = median("benchmarker-python", "cpu"), median("benchmarker-convert", "cpu")
    if py and v:
        row("benchmarker report: convert CPU / Python", v / py, "<= 0.1", v / py <= 0.1)
    v = median("benchmarker-agent", "rss_mb")
    row("benchmarker report: agent peak RSS", v, "<= 64 MB", v is not None and v <= 64, " MB")
    print("\nfigure summary:")
    w = max([len(r[0]) for r in rows] + [10])
    for r in rows:
        print(f"  {r[0]:<{w}}  {r[1]:>12}  target {r[2]:<20} {r[3]}")
