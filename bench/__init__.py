"""perfship's benchmarks (docs/benchmarks.md): `python3 -m bench` runs
them (bench/run.py; scripts/bench is its launcher), and the input
generators beside it write what they measure.

The benchmarks start the same real influxd as the integration tests and
use the project's run generator, so tests/integration (harness,
reportdata) and tests/data/loadgen (gen_loadgen) are importable from every
module of this package: set up here, once, for all of them.
"""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BUILD = os.path.join(ROOT, "build-release")

for _d in (os.path.join(ROOT, "tests", "integration"),
           os.path.join(ROOT, "tests", "data", "loadgen")):
    if _d not in sys.path:
        sys.path.append(_d)


def module_argv(name, *args):
    """The command line that runs bench.<name> as a program; run it with
    cwd=ROOT, where python3 -m finds this package."""
    return [sys.executable, "-m", f"bench.{name}", *args]
