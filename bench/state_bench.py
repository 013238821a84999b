"""The state case: run --once starting from a state file whose alert lists
were blown far past their caps (80,000 entries each), the peak RSS of the
load and the warning it gives (docs/benchmarks.md, "State loading")."""
import json
import os

from bench.measure import figure, median, record, run_child

ENTRIES = 80000


def big_state(path, n=ENTRIES):
    """The lists a damaged or hand-edited alerts section could hold: every
    entry well formed, so everything past a cap is 'over', nothing 'bad'."""
    alerts = {
        "outbox": [{"alert": {"id": f"{i:032x}", "event": "run_failed", "source": "l",
                              "run": f"r{i}", "text": "t"},
                    "time_us": str(i + 1), "pending": ["exec"]} for i in range(n)],
        "throttle": [{"event": "run_failed", "key": f"k{i}", "last_ns": i + 1}
                     for i in range(n)],
        "seen": [{"id": f"{i:032x}", "at": i + 1} for i in range(n)],
        "sources": [{"key": f"loadgen:/srv/results/{i}", "since": 1} for i in range(n)],
    }
    with open(path, "w") as f:
        json.dump({"version": 1, "files": [], "alerts": alerts}, f, separators=(",", ":"))


def case_state(b, runs):
    empty = os.path.join(b.tmp, "state-empty-source")
    os.makedirs(empty, exist_ok=True)
    size = 0
    for r in range(runs):
        db = b.fresh_db("state")
        cfg = b.config(db, f'{{ path = "{empty}"; format = "loadgen"; }}',
                       extra='alerts = { exec = ["/bin/true"]; };')
        state = os.path.join(os.path.dirname(cfg), "state.json")
        big_state(state)
        size = os.path.getsize(state)
        rc, wall, cpu, rss, err = run_child([b.bin, "-c", cfg, "run", "--once"])
        if rc != 0 or "over its cap" not in err:
            raise RuntimeError(f"state: run --once exited {rc} or said no cap: {err[-800:]}")
        record("state", cpu=cpu, wall=wall, rss_mb=rss / 1024)
        b.drop(db)
    figure("state", f"cpu {median('state', 'cpu'):.3f} s  wall {median('state', 'wall'):.2f} s  "
           f"peak rss {median('state', 'rss_mb'):.1f} MB  (state.json {size / 1e6:.1f} MB, "
           f"{ENTRIES:,} entries in each alert list)")
