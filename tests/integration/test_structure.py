"""The structure docs/architecture.md draws holds in the code.

- The includes among agent/ and include/ form no circle.
- Folders depend only downward, in the order of the data flow: a folder
  includes only the folders ALLOWED lists for it (so a new dependency is a
  decision made here, next to the picture, not an accident).
- The stages of agent/pipeline/ include only stages below them
  (STAGE_ORDER): stages never call back up into the service.
- The transport (net/) knows nothing of InfluxDB.
- The pipeline never branches on a format's id (PS_FMT_*): what a format
  brings (run folders, run markers, backfill) is an entry of its ops table
  (include/formats/format.h), and the pipeline asks for the entry.
- Every header has a source file of its name, except the interfaces that
  many files implement (INTERFACES), so a reader finds a function where its
  header says.

No server: this reads the source tree (PERFSHIP_SOURCE_DIR).
"""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ROOT = harness.SOURCE_DIR
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

# folder -> the folders it may include (besides itself).
ALLOWED = {
    "core": set(),
    "net": {"core"},
    "influx": {"core", "net"},
    "runs": {"core"},
    "formats": {"core", "runs", "influx"},
    "input": {"core", "formats", "runs"},
    "state": {"core", "input"},
    "verdict": {"core", "runs"},
    "alert": {"core", "net", "runs"},
    "report": {"core", "influx", "runs", "verdict"},
    "pipeline": {"core", "net", "influx", "runs", "formats", "input", "state",
                 "verdict", "alert", "report"},
    "cmd": {"core", "net", "influx", "runs", "formats", "input", "state",
            "verdict", "alert", "report", "pipeline"},
}

# The stages of agent/pipeline/, bottom first: each includes only earlier
# ones. A new stage gets its place here.
STAGE_ORDER = [
    "shared", "gens", "selfstats", "reload", "registry", "commit", "delivery",
    "createdb", "reader_queue", "reader_parser", "reader_settle",
    "reader_lines", "reader_docs", "reader", "runtracker", "slogs", "router", "verdicts_collect", "verdicts_history", "verdicts_send", "verdicts",
    "alerting_raise", "alerting_clock", "alerting_runs", "alerting", "reporter",
    "reporting", "pipeline", "service",
]

# Headers many files implement, or that only declare types.
INTERFACES = {
    "include/cmd/cmd.h",              # one file per command
    "include/core/sysexits_ps.h",     # constants
    "include/formats/format.h",       # one file per format
    "include/pipeline/pipeline.h",    # the face of agent/pipeline/ (service.c)
    "include/report/assets.h",        # the page's script and style, generated at build time
}


def source_files():
    out = []
    for base in ("agent", "include"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, base)):
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(dirpath, name), ROOT))
    return sorted(out)


def folder(path):
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else None  # agent/main.c has none


def resolve(src, inc):
    here = os.path.normpath(os.path.join(os.path.dirname(src), inc))
    if os.path.exists(os.path.join(ROOT, here)):
        return here
    there = os.path.normpath(os.path.join("include", inc))
    if os.path.exists(os.path.join(ROOT, there)):
        return there
    return None


def graph():
    g = {}
    for f in source_files():
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            text = fh.read()
        g[f] = sorted({p for p in (resolve(f, i) for i in INCLUDE.findall(text)) if p})
    return g


def stage(path):
    if folder(path) != "pipeline":
        return None
    name = os.path.splitext(os.path.basename(path))[0]
    return name


class StructureTest(unittest.TestCase):
    def test_graph_is_read(self):
        # The test sees the includes it judges (a broken pattern would pass
        # everything).
        g = graph()
        self.assertIn("include/influx/endpoint.h", g["agent/influx/client.c"])
        self.assertIn("include/pipeline/registry.h", g["include/pipeline/reader_queue.h"])
        self.assertGreater(sum(len(v) for v in g.values()), 150)

    def test_no_include_circle(self):
        g = graph()
        state = {}

        def visit(n, path):
            state[n] = "open"
            for m in g.get(n, []):
                if state.get(m) == "open":
                    self.fail("include circle: " + " -> ".join(path + [n, m]))
                if m not in state:
                    visit(m, path + [n])
            state[n] = "done"

        for n in g:
            if n not in state:
                visit(n, [])

    def test_folders_depend_downward(self):
        for f, deps in graph().items():
            src = folder(f)
            if src is None:
                continue
            self.assertIn(src, ALLOWED, f"{f}: folder {src}/ has no place in ALLOWED "
                                        "(add it where the data flow puts it)")
            for d in deps:
                dst = folder(d)
                if dst and dst != src:
                    self.assertIn(dst, ALLOWED[src],
                                  f"{f} includes {d}: {src}/ may not depend on {dst}/")

    def test_stages_never_call_back_up(self):
        for f, deps in graph().items():
            s = stage(f)
            if s is None:
                continue
            self.assertIn(s, STAGE_ORDER, f"{f}: a new stage needs its place in STAGE_ORDER")
            for d in deps:
                t = stage(d)
                if t and t != s:
                    self.assertIn(t, STAGE_ORDER, f"{d}: not in STAGE_ORDER")
                    self.assertLess(STAGE_ORDER.index(t), STAGE_ORDER.index(s),
                                    f"{f} includes {d}: a stage includes only those below it")

    def test_net_knows_nothing_of_influxdb(self):
        for f, deps in graph().items():
            if folder(f) == "net":
                self.assertEqual([d for d in deps if folder(d) == "influx"], [],
                                 f"{f} includes the InfluxDB client")

    def test_pipeline_has_no_format_branches(self):
        files = [f for f in source_files() if folder(f) == "pipeline"]
        self.assertIn("agent/pipeline/alerting.c", files)  # the test sees what it judges
        for f in files:
            with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    self.assertNotIn("PS_FMT_", line,
                                     f"{f}:{n}: the pipeline branches on a format id; ask the "
                                     "format's ops table (formats/format.h) instead")

    def test_headers_match_sources(self):
        for f in source_files():
            if f.startswith("include/") and f not in INTERFACES:
                stem = os.path.splitext(f)[0].replace("include/", "agent/", 1)
                self.assertTrue(os.path.exists(os.path.join(ROOT, stem + ".c")),
                                f"{f} has no {stem}.c")


if __name__ == "__main__":
    unittest.main()
