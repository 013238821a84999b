"""Every function or variable one file of the agent shares with another
carries a prefix: ps_ for a module's own (public, or shared among its
parts as influx/sink_private.h and report/html_private.h do), or the short
prefix of a module whose parts share a private header, used by that
module's files alone (PRIVATE). A generic name (sink_backoff, put) would
collide with any other code linked into the binary or a test, and a
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
# private prefix -> the object files (their names' start) that may define it
# The judging layer's files are alerting*, judging, reporter and verdicts*.
JUDGING_OBJECTS = ("alerting", "judging", "reporter", "verdicts")
PRIVATE = {
    "pl_": None,          # the data path of perfship run (pipeline/) and its service
    "jd_": JUDGING_OBJECTS,  # the judges (judging/): their own prefix, not the data path's
    "lg_": ("loadgen",),  # formats/loadgen*.c behind loadgen_private.h
    "jsonl_": ("jsonl",),  # formats/jsonl*.c behind jsonl_private.h
}


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

    def test_every_exported_symbol_has_a_prefix(self):
        bad = []
        for obj, sym in exported():
            if sym.startswith("ps_"):
                continue
            owner = next((p for p in PRIVATE if sym.startswith(p)), None)
            if owner is None:
                bad.append(f"{obj}: {sym}: no prefix (make it static, or give it ps_ and its "
                           "module's name)")
            elif PRIVATE[owner] and not obj.startswith(PRIVATE[owner]):
                bad.append(f"{obj}: {sym}: {owner} is private to {PRIVATE[owner]}*.c")
        self.assertEqual(bad, [])

    def test_the_judges_do_not_speak_as_the_data_path(self):
        # judging/ once exported 123 names with the pipeline's pl_: a reader
        # could not tell a judge from a stage of the data path by its name
        wrong = [f"{obj}: {sym}" for obj, sym in exported()
                 if obj.startswith(JUDGING_OBJECTS) and sym.startswith("pl_")]
        self.assertEqual(wrong, [])


if __name__ == "__main__":
    unittest.main()
