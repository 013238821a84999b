#!/usr/bin/env python3
"""Generates InterUSS benchmarker reports (a BenchmarkRunReport, the tool's
raw_report artifact) for perfship's tests.

What a report holds is docs/schema.md "Benchmarker"; the tool writes it with
json.dump(sort_keys=True) on one line, and so does this generator.

- Arms: two DSS images named in the scenarios' metadata (`dss_image`) and
  two datastores named only by the scenario's setup action (its run_command
  env DB_TYPE), as the DSS's own configurations do.
- Each arm has a known USL curve X(N) = gN / (1 + a(N-1) + bN(N-1)); a
  step's successful operations in its stable window are that throughput
  times the window, with multiplicative noise; latencies follow Little's law
  N / X with log-normal jitter.
- The last step of the second scenario went Unstable; the scenario after
  that has a step that never got stable (StabilityNotAchieved, no
  throughput_stability_time).
- --unstable-users N: the step at load N of the scenario --unstable-scenario
  (the first by default) went Unstable and ended its ramp (a release that
  lost capacity there); --release names the DSS image of the datastore
  scenarios (their release).
- --query-details records a request and response per query operation
  (record_query_details), with a body of --detail-bytes.
- A release: --epoch sets when the first report starts, --day shifts every
  time by that many days (reports of
  successive releases), --gamma-scale multiplies every arm's gamma (and so
  its whole curve and peak X(N*)).
- Deterministic by --seed. Every output is validated against the published
  JSON Schema (tests/data/benchmarker/schemas) unless --no-validate.

Bad inputs for the reader's tests (--bad): truncated, wrong-type, t1-before-t0,
no-stability (a Completed step without throughput_stability_time),
huge-detail (a query detail of several megabytes).
"""
import argparse
import datetime as dt
import json
import math
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMAS = os.path.join(HERE, "..", "data", "benchmarker", "schemas")
RUN_REPORT_SCHEMA = "monitoring/benchmarker/reports/report/BenchmarkRunReport.json"

FLIGHT = "workflow.flight_planner.flight"
SEARCH_ISAS = "query.astm.f3411.v22a.dss.searchIdentificationServiceAreas"
PUT_ISA = "query.astm.f3411.v22a.dss.createIdentificationServiceArea"
COMMIT = "5f0c2b1e9d8a7c6b5a4f3e2d1c0b9a8f7e6d5c4b"
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
EPOCH = dt.datetime(2026, 3, 2, 9, 0, 0, tzinfo=dt.timezone.utc)

# (scenario name, arm as the report names it, how: metadata or setup, USL)
ARMS = [
    ("ISAs dss:v0.22.0", "interuss/dss:v0.22.0", "image", (1.0, 0.05, 0.002)),
    ("ISAs dss:v0.23.0-rc5", "interuss/dss:v0.23.0-rc5", "image", (1.1, 0.04, 0.0025)),
    ("ISAs crdb", "crdb", "datastore", (0.8, 0.08, 0.001)),
    ("ISAs ybdb", "ybdb", "datastore", (0.7, 0.06, 0.003)),
]


def usl(n, gamma, alpha, beta):
    return gamma * n / (1 + alpha * (n - 1) + beta * n * (n - 1))


def stamp(t):
    """RFC 3339 as implicitdict's StringBasedDateTime writes it (UTC, 'Z')."""
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_PADDING = {}


def padding(rng, n):
    """A body of n bytes; one per size, shared, so a gigabyte report (the
    benchmarks') does not need gigabytes of memory to write."""
    if n not in _PADDING:
        body = "".join(rng.choice("abcdefghij") for _ in range(min(n, 64)))
        _PADDING[n] = (body * (n // max(len(body), 1) + 1))[:n]
    return _PADDING[n]


def query_detail(rng, op_type, t0, t1, detail_bytes):
    body = padding(rng, detail_bytes)
    return {
        "participant_id": "uss1_dss1",
        "query_type": op_type[len("query."):],
        "request": {
            "method": "GET",
            "url": "http://localhost:8001/rid/v2/dss/identification_service_areas?area=34,-118",
            "initiated_at": stamp(t0),
            "headers": {"Authorization": "Bearer <redacted>", "User-Agent": "benchmarker"},
            "json": None,
        },
        "response": {
            "code": 200,
            "elapsed_s": (t1 - t0).total_seconds(),
            "reported": stamp(t1),
            "headers": {"Content-Type": "application/json"},
            "json": {"service_areas": [], "padding": body},
        },
    }


def step_plan(index, arm_index, nsteps, unstable_step=None):
    """(termination_reason, has_stability_time) of a step."""
    if index == unstable_step:
        return "Unstable", True
    if arm_index == 1 and index == nsteps - 1:
        return "Unstable", True
    if arm_index == 2 and index == nsteps - 1:
        return "StabilityNotAchieved", False
    return "Completed", True


def gen_scenario(rng, arm_index, args, t_start):
    name, arm, how, (gamma, alpha, beta) = ARMS[arm_index]
    gamma *= args.gamma_scale
    steps = []
    ops = {}  # type -> origin -> {"successful": [...], "unsuccessful": [...]}
    t = t_start
    nsteps = args.steps
    unstable_step = None
    if args.unstable_users is not None:
        # that scenario went Unstable at that load: the ramp ends there
        unstable_step = (args.unstable_users - args.initial_users) // args.users_per_step
        if arm_index != args.unstable_scenario:
            unstable_step = None
        else:
            nsteps = min(nsteps, unstable_step + 1)
    for i in range(nsteps):
        load = args.initial_users + i * args.users_per_step
        reason, stable = step_plan(i, arm_index, nsteps, unstable_step)
        warmup = dt.timedelta(seconds=5 + rng.random() * 3)
        window = dt.timedelta(seconds=args.window_s * (0.8 + 0.4 * rng.random()))
        start, stab = t, t + warmup
        end = stab + (window if stable else dt.timedelta(seconds=args.window_s / 2))
        x = usl(load, gamma, alpha, beta) * math.exp(rng.gauss(0, args.noise))
        if reason == "Unstable":
            x *= 0.5
        mean_latency = load / max(x, 1e-3)
        step = {"load_factor": load, "start_time": stamp(start), "end_time": stamp(end),
                "termination_reason": reason}
        if stable:
            step["throughput_stability_time"] = stamp(stab)
        steps.append(step)
        span = (end - start).total_seconds()
        n_flights = max(1, int(round(x * span * args.rate_scale)))
        for type_, count, lat_scale in ((FLIGHT, n_flights, 1.0),
                                        (SEARCH_ISAS, n_flights * 2, 0.05),
                                        (PUT_ISA, n_flights, 0.1)):
            for _ in range(count):
                lat = mean_latency * lat_scale * math.exp(rng.gauss(0, 0.3) - 0.045)
                t1 = start + dt.timedelta(seconds=rng.random() * span)
                t0 = t1 - dt.timedelta(seconds=lat)
                ok = rng.random() >= args.fail_share
                origin = "FPU%d_%d" % (arm_index + 1, rng.randrange(load))
                rec = {"t0": stamp(t0), "t1": stamp(t1)}
                if args.query_details and type_.startswith("query."):
                    rec["query"] = query_detail(rng, type_, t0, t1, args.detail_bytes)
                by_origin = ops.setdefault(type_, {}).setdefault(origin, {"successful": [], "unsuccessful": []})
                by_origin["successful" if ok else "unsuccessful"].append(rec)
        t = end + dt.timedelta(seconds=1)
    operations = []
    for type_ in sorted(ops):
        origins = []
        for origin in sorted(ops[type_]):
            o = ops[type_][origin]
            outcome = {}
            if o["successful"]:
                outcome["successful"] = sorted(o["successful"], key=lambda r: r["t1"])
            if o["unsuccessful"]:
                outcome["unsuccessful"] = sorted(o["unsuccessful"], key=lambda r: r["t1"])
            origins.append({"origin": origin, "outcomes": [outcome]})
        operations.append({"type": type_, "origins": origins})
    metadata = {"dss_image": arm, "dss_instance": 1} if how == "image" else {"dss_instance": 1}
    return {"metadata": metadata, "operations": operations, "steps": steps}, t


def configuration(args):
    actions, scenarios = [], []
    for i, (name, arm, how, _) in enumerate(ARMS[:args.scenarios]):
        env = {"NUM_USS": "1", "NUM_NODES": "1",
               "DSS_IMAGE": arm if how == "image" else args.release,
               "DB_TYPE": arm if how == "datastore" else "crdb"}
        action = "Bring up DSS pool %d" % (i + 1)
        actions.append({"name": action, "run_command": {"env": env, "path": "$REPO_ROOT",
                                                        "command": "make start-locally"}})
        spec = {"name": name, "load": "ramp", "setup": [action],
                "record_query_details": bool(args.query_details)}
        spec["metadata"] = ({"dss_image": arm, "dss_instance": 1} if how == "image"
                            else {"dss_instance": 1})
        scenarios.append(spec)
    count = {"count": 1, "operations": [FLIGHT]}
    load = {"name": "ramp", "user_ramp": {
        "user_type": "FPU", "initial_users": args.initial_users,
        "additional_users_per_step": args.users_per_step,
        "throughput_stability_criteria": {"each_user_completed_at_least": count},
        "step_completion_criteria": {"sampling_duration_at_least": "%ds" % args.window_s},
        "load_completion_criteria": {"completed_steps": args.steps}}}
    return {"actions": actions, "loads": [load], "scenarios": scenarios,
            "user_types": [{"name": "FPU"}],
            "artifacts": [{"raw_report": {"name": "report"}}]}


def generate(args):
    rng = random.Random(args.seed)
    epoch = dt.datetime.fromisoformat(args.epoch) if args.epoch else EPOCH
    scenarios, t = [], epoch + dt.timedelta(days=args.day)
    for i in range(args.scenarios):
        s, t = gen_scenario(rng, i, args, t)
        scenarios.append(s)
        t += dt.timedelta(seconds=30)
    return {"codebase_version": "interuss/monitoring/v0.24.0", "commit_hash": COMMIT,
            "configuration": configuration(args), "report": {"scenarios": scenarios}}


def validate(doc):
    """Checks `doc` against the published schema with a real validator
    (Debian's python3-jsonschema: RefResolver; newer ones: referencing)."""
    import jsonschema

    store = {}
    for folder, _, files in os.walk(SCHEMAS):
        for name in files:
            if name.endswith(".json"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    schema = json.load(f)
                store[schema["$id"]] = schema
    root = next(s for i, s in store.items() if i.endswith("/" + RUN_REPORT_SCHEMA))
    cls = jsonschema.Draft202012Validator
    # Debian's jsonschema checks "date-time" only with a package Debian
    # lacks: RFC 3339's grammar is checked here instead.
    checker = jsonschema.FormatChecker()

    @checker.checks("date-time")
    def rfc3339(value):
        if not isinstance(value, str) or not RFC3339.match(value):
            return False
        dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        return True
    try:
        from referencing import Registry, Resource
        registry = Registry().with_resources(
            (i, Resource.from_contents(s)) for i, s in store.items())
        validator = cls(root, registry=registry, format_checker=checker)
    except ImportError:
        resolver = jsonschema.RefResolver.from_schema(root, store=store)
        validator = cls(root, resolver=resolver, format_checker=checker)
    validator.validate(doc)


def make_bad(doc, kind):
    """A copy of `doc` broken as `kind` says, and its text."""
    s0 = doc["report"]["scenarios"][0]
    if kind == "wrong-type":
        s0["steps"][1]["load_factor"] = "seven"
    elif kind == "t1-before-t0":
        op = s0["operations"][0]["origins"][0]["outcomes"][0]["successful"][0]
        op["t0"], op["t1"] = op["t1"], op["t0"]
        if op["t0"] == op["t1"]:
            op["t0"] = stamp(dt.datetime.strptime(op["t1"], "%Y-%m-%dT%H:%M:%S.%fZ")
                             .replace(tzinfo=dt.timezone.utc) + dt.timedelta(seconds=1))
    elif kind == "no-stability":
        del s0["steps"][2]["throughput_stability_time"]
    elif kind == "huge-detail":
        for o in s0["operations"]:
            if o["type"].startswith("query."):
                rec = o["origins"][0]["outcomes"][0]["successful"][0]
                rec["query"] = query_detail(random.Random(1), o["type"],
                                            EPOCH, EPOCH, 6 * 1024 * 1024)
                break
    text = json.dumps(doc, sort_keys=True)
    if kind == "truncated":
        text = text[: len(text) * 2 // 3]
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="output file (the tool names it <output>/report.json)")
    ap.add_argument("--scenarios", type=int, default=4, choices=range(1, len(ARMS) + 1))
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--initial-users", type=int, default=2)
    ap.add_argument("--users-per-step", type=int, default=2)
    ap.add_argument("--window-s", type=int, default=8)
    ap.add_argument("--noise", type=float, default=0.03, help="sd of log throughput")
    ap.add_argument("--fail-share", type=float, default=0.02)
    ap.add_argument("--rate-scale", type=float, default=1.0,
                    help="multiply every step's operation count (large reports)")
    ap.add_argument("--day", type=int, default=0, help="days after the first report")
    ap.add_argument("--epoch", help="the first report's start, ISO 8601 with its offset "
                    "(default 2026-03-02T09:00:00+00:00)")
    ap.add_argument("--gamma-scale", type=float, default=1.0,
                    help="multiply every arm's gamma: a release with more or less capacity")
    ap.add_argument("--unstable-users", type=int,
                    help="the step at this load of --unstable-scenario went Unstable, its last")
    ap.add_argument("--unstable-scenario", type=int, default=0)
    ap.add_argument("--release", default="interuss/dss:v0.23.0-rc5",
                    help="the DSS image the datastore scenarios run")
    ap.add_argument("--query-details", action="store_true")
    ap.add_argument("--detail-bytes", type=int, default=256)
    ap.add_argument("--bad", choices=["truncated", "wrong-type", "t1-before-t0",
                                      "no-stability", "huge-detail"])
    ap.add_argument("--no-validate", action="store_true")
    args = ap.parse_args(argv)
    doc = generate(args)
    if not args.no_validate:
        validate(doc)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        if args.bad:
            f.write(make_bad(doc, args.bad))
        else:
            json.dump(doc, f, sort_keys=True)  # written as it is encoded
    return 0


if __name__ == "__main__":
    sys.exit(main())
