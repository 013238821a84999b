"""The InfluxDB client and the HTTP transport keep their layering: the
includes among agent/influx/, agent/net/ and their headers form no circle,
the transport (net) never includes anything of the client (influx), and
every public header of the two has the source file of the same name, so a
reader finds a function where its header says.

No server: this reads the source tree (PERFSHIP_SOURCE_DIR).
"""
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ROOT = harness.SOURCE_DIR
LAYERS = ("influx", "net")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Headers that only gather others (no code of their own).
UMBRELLAS = {"include/influx/lp.h"}


def files():
    out = []
    for layer in LAYERS:
        for base in ("agent", "include"):
            d = os.path.join(ROOT, base, layer)
            for name in sorted(os.listdir(d)):
                if name.endswith((".c", ".h")):
                    out.append(f"{base}/{layer}/{name}")
    return out


def resolve(src, inc):
    """The repository path an #include "..." of src names, or None when it
    is outside the two layers."""
    here = os.path.join(os.path.dirname(src), inc)
    if os.path.exists(os.path.join(ROOT, here)):
        path = os.path.normpath(here)
    elif os.path.exists(os.path.join(ROOT, "include", inc)):
        path = os.path.normpath(os.path.join("include", inc))
    else:
        return None
    return path if path.split("/")[1] in LAYERS else None


def graph():
    g = {}
    for f in files():
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            text = fh.read()
        g[f] = sorted({p for p in (resolve(f, i) for i in INCLUDE.findall(text)) if p})
    return g


class IncludeGraphTest(unittest.TestCase):
    def test_no_circle(self):
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

    def test_net_below_influx(self):
        for f, deps in graph().items():
            if f.split("/")[1] == "net":
                self.assertEqual([d for d in deps if d.split("/")[1] == "influx"], [],
                                 f"{f} includes the InfluxDB client")

    def test_headers_match_sources(self):
        for f in files():
            if f.startswith("include/") and f not in UMBRELLAS:
                stem = os.path.splitext(f)[0].replace("include/", "agent/", 1)
                self.assertTrue(os.path.exists(os.path.join(ROOT, stem + ".c")),
                                f"{f} has no {stem}.c")

    def test_graph_is_read(self):
        # The test sees the includes it judges (a broken pattern would pass
        # everything).
        g = graph()
        self.assertIn("include/influx/endpoint.h", g["agent/influx/client.c"])
        self.assertIn("include/net/http_loop.h", g["agent/influx/sink_private.h"])


if __name__ == "__main__":
    unittest.main()
