"""The project's Node.js test tools (tests/node): installed from its lockfile.

tests/node/package.json and package-lock.json pin what the tests run under
Node: the Flux parser and type checker, ajv and ajv-formats for the Grafana
schema validator, and playwright-core for the browser tests. `npm ci` installs
exactly the lockfile, but it deletes node_modules first and so needs the
registry (or npm's cache) every time; here it runs only when node_modules
does not already hold what the lockfile names, so a machine that installed
them once runs the tests offline.

Several test scripts run at once under `ctest -j`: the install holds a lock
on a file in tests/node so that one installs and the others wait.
"""
import fcntl
import json
import os
import subprocess

import harness

NODE_DIR = os.path.join(harness.SOURCE_DIR, "tests", "node")
NODE_MODULES = os.path.join(NODE_DIR, "node_modules")


def _installed_matches_lockfile():
    """True when node_modules holds every package of the lockfile at its
    locked version (npm records what it installed in .package-lock.json)."""
    try:
        with open(os.path.join(NODE_DIR, "package-lock.json")) as f:
            want = json.load(f)["packages"]
        with open(os.path.join(NODE_MODULES, ".package-lock.json")) as f:
            have = json.load(f)["packages"]
    except (OSError, ValueError, KeyError):
        return False
    for path, meta in want.items():
        if not path:  # the project itself
            continue
        got = have.get(path)
        if not got or got.get("version") != meta.get("version"):
            return False
        if not os.path.isdir(os.path.join(NODE_DIR, path)):
            return False
    return True


def ensure_node_modules(timeout=600):
    """Installs tests/node's packages from the lockfile unless they are there.
    Raises AssertionError with npm's output when the install fails."""
    with open(os.path.join(NODE_DIR, ".install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed_matches_lockfile():
            return NODE_MODULES
        p = subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefer-offline"],
                           cwd=NODE_DIR, capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0 or not _installed_matches_lockfile():
            raise AssertionError(f"npm ci in {NODE_DIR} failed (exit {p.returncode}):\n"
                                 + p.stdout[-2000:] + p.stderr[-2000:])
    return NODE_MODULES
