"""Every function or variable one file of the agent shares with another
carries the project's prefix: ps_ for a module's own (public or shared
among its parts, as influx/sink_private.h and report/html_private.h do),
pl_ for the stages of the pipeline. A generic name (sink_backoff, put)
would collide with any other code linked into the binary or a test, and a
search for a module's prefix would miss part of the module.

Reads the symbols the build's core library exports (nm); no server.
"""
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

LIBRARY = os.path.join(os.path.dirname(os.path.abspath(harness.PERFSHIP_BIN)),
                       "libperfship_core.a")
PREFIXES = ("ps_", "pl_")


def exported():
    """(object, symbol) of every defined external symbol in the library."""
    out = subprocess.run(["nm", "--defined-only", "-g", LIBRARY], capture_output=True,
                         text=True, check=True).stdout
    obj, syms = None, []
    for line in out.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            obj = line[:-1]
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRVWGS":
            syms.append((obj, parts[2]))
    return syms


@unittest.skipUnless(shutil.which("nm") and os.path.exists(LIBRARY),
                     f"needs nm and the built {LIBRARY}")
class SymbolsTest(unittest.TestCase):
    def test_the_library_is_read(self):
        names = {s for _, s in exported()}
        self.assertIn("ps_sink_submit", names)  # the test sees what it judges
        self.assertGreater(len(names), 300)

    def test_every_exported_symbol_has_the_prefix(self):
        bad = [f"{obj}: {sym}" for obj, sym in exported()
               if not sym.startswith(PREFIXES)]
        self.assertEqual(bad, [], "exported without the ps_/pl_ prefix (make it static, or "
                                  "give it its module's prefix)")


if __name__ == "__main__":
    unittest.main()
