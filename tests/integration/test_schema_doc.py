"""docs/schema.md is true to what perfship writes, field by field.

The document is read as data (schemadoc.py: its measurement sections, tag
tables and sentences, field tables with their types, sample lines) and
held against real output:
  - `perfship convert` of every bundled sample (the loadgen run folders of
    tests/data/loadgen/synth with their abbreviated slogs, the DSS
    results.json of both eras, the Locust CSVs) and of generated runs with
    full slogs of both slog eras (kernel counters, commits, memory, heap
    snapshots: what the abbreviated slogs lack);
  - an agent against a real InfluxDB, which writes what convert cannot:
    its `perfship` heartbeat, `perfship_verdict` of every method
    (across revisions, candidates, stage drift, the kernel growth limit,
    DSS arms, triage's excluded and baseline), `perfship_alert`,
    `perfship_triage` from `perfship triage`, and `runs` markers from
    `perfship mark`. What the server holds is read back with SHOW
    MEASUREMENTS, SHOW TAG KEYS and SHOW FIELD KEYS, so a type is the one
    InfluxDB stored (and a field stored with two types shows as two).
Checked: every measurement written is documented; every tag and field
written is documented for its measurement, with the type written; every
documented tag and field is written by some sample, unless the document
says it is not always there (schemadoc.CONDITIONAL) or UNWRITTEN gives the
reason; every sample line of the document parses, uses only documented
keys and types, and (but for the agent's own measurements) is a line
convert prints; each verdict carries what its method promises.

A new measurement fails this test until docs/schema.md has a section for
it written the way the document's opening says ("How this file is
written").
"""
import json
import os
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (DATA_DIR, Agent, InfluxTestCase, convert, run_perfship,  # noqa: E402
                     wait_until, write_config)
import pointset  # noqa: E402
import schemadoc  # noqa: E402

GEN = os.path.join(DATA_DIR, "loadgen", "gen_loadgen.py")
SYNTH = os.path.join(DATA_DIR, "loadgen", "synth")
DSS = os.path.join(DATA_DIR, "dss", "synth")
DB = "perf"
DAY = 86400
START = 1647216131 + 10 * DAY  # after the synth runs, so the generated ones are the newest
# Tags every point carries besides its own (docs/schema.md "Rules for every
# point"): the configuration's global tags, of which this test sets `host`.
GLOBAL_TAGS = {"host"}

# Documented fields and tags that none of this test's samples writes,
# though the document does not say they are sometimes absent: each with why.
UNWRITTEN = {
}

# Measurements timed by their file's modification time (docs/schema.md), which
# a checkout sets: their sample lines match convert's output but for the time.
MTIME_TIMED = {"dss_bench", "dss_bench_target", "locust_stats", "locust_failures"}
# What only the agent writes (its judgement, its decisions, its heartbeat):
# their sample lines are made up, not convert's output.
AGENT_ONLY = {"perfship", "perfship_verdict", "perfship_alert", "perfship_triage"}


def subprocess_generate(out, args, **scenario):
    subprocess.run([sys.executable, GEN, "--out", out, *args, "--scenario-json", json.dumps(scenario)],
                   check=True, stdout=subprocess.DEVNULL)
    (name,) = os.listdir(out)
    return os.path.join(out, name)


def generate(out, **scenario):
    """One generated run folder (tests/data/loadgen/README.md "Rich slogs"):
    short stages, four of them, so that two are loadgen stages to compare."""
    scenario.setdefault("slog", "rich")
    return subprocess_generate(out, ["--stages", "4", "--stage-minutes", "2"], **scenario)


class Written:
    """What perfship wrote: measurement -> tag keys, field -> types, each
    with where it was seen (for the failure messages)."""

    def __init__(self):
        self.m = {}

    def _of(self, meas):
        return self.m.setdefault(meas, {"tags": {}, "fields": {}})

    def tag(self, meas, key, where):
        self._of(meas)["tags"].setdefault(key, where)

    def field(self, meas, key, typ, where):
        self._of(meas)["fields"].setdefault(key, {}).setdefault(typ, where)

    def lines(self, text, where):
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            meas, tags, _, fields = pointset.parse_lp_line(line)
            for k, _ in tags:
                self.tag(meas, k, f"{where}, line {n}")
            for k, (typ, _) in fields.items():
                self.field(meas, k, typ, f"{where}, line {n}")


class SchemaDoc(InfluxTestCase):
    tmp_prefix = "perfship-schemadoc-"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.doc = schemadoc.Schema()
        cls.written = Written()
        cls.converted = set()  # every line convert printed
        cls.results = os.path.join(cls.tmp, "results")
        os.makedirs(cls.results)
        gen = os.path.join(cls.tmp, "gen")
        # a daily-perf history of full slogs in the head era (kernel-stats),
        # one that leaks (the limit judge's regression), one in the 2022 era
        # (no kernel-stats: c-list growth from clist events), and a manual
        # run judged as a candidate against daily-perf
        runs = [dict(seed=4101 + i, rev_seed=f"sd{i}", start_epoch=START + i * DAY) for i in range(4)]
        runs.append(dict(seed=4110, rev_seed="sdleak", start_epoch=START + 4 * DAY,
                         leak_per_cycle={"kernelObjects": 2}))
        runs.append(dict(seed=4111, rev_seed="sd2022", start_epoch=START + 5 * DAY, slog_era="2022"))
        runs.append(dict(seed=4112, rev_seed="sdpr", start_epoch=START + 6 * DAY, test_type="manual"))
        cls.names = []
        for i, sc in enumerate(runs):
            folder = generate(os.path.join(gen, str(i)), **sc)
            cls.names.append(os.path.basename(folder))
            shutil.move(folder, cls.results)
        # the bundled runs, their files two days old as after a night, so
        # that the one in progress has stalled (a `runs` marker of its own)
        old = time.time() - 2 * DAY
        for name in sorted(os.listdir(SYNTH)):
            if os.path.isdir(os.path.join(SYNTH, name)):
                dst = os.path.join(cls.results, name)
                shutil.copytree(os.path.join(SYNTH, name), dst)
                for f in os.listdir(dst):
                    os.utime(os.path.join(dst, f), (old, old))
        cls.dss = os.path.join(cls.tmp, "dss")
        for name in sorted(os.listdir(DSS)):
            if os.path.isdir(os.path.join(DSS, name)) and name not in ("truncated", "locust_isa"):
                shutil.copytree(os.path.join(DSS, name), os.path.join(cls.dss, name))
        cls.convert_all()
        cls.agent_writes()

    @classmethod
    def convert_all(cls):
        folders = sorted(os.path.join(cls.results, n) for n in os.listdir(cls.results))
        # the run the slog sections' sample lines come from (their "Examples:" note)
        folders.append(subprocess_generate(os.path.join(cls.tmp, "example"), ["--stages", "3",
                                           "--stage-minutes", "3"], slog="rich", seed=4101))
        jobs = [("loadgen", [f]) for f in folders]
        jobs.append(("dss-bench", sorted(os.path.join(DSS, n, "results.json") for n in os.listdir(DSS)
                                         if os.path.exists(os.path.join(DSS, n, "results.json")))))
        jobs.append(("benchmarker", [os.path.join(DATA_DIR, "benchmarker", "isas_images",
                                                  "report.json")]))
        loc = os.path.join(DSS, "locust_isa")
        jobs.append(("locust", [os.path.join(loc, n) for n in sorted(os.listdir(loc))
                                if n != "isa_exceptions.csv"]))
        for fmt, paths in jobs:
            rc, out, err = convert(fmt, paths)
            # 65: a sample meant to be rejected in part (the truncated DSS
            # file, a cut slog line); the rest is still printed
            if rc not in (0, 65):
                raise AssertionError(f"convert -f {fmt} {paths}: exit {rc}: {err[-1000:]}")
            cls.written.lines(out, f"convert -f {fmt} {os.path.basename(paths[0])}")
            cls.converted.update(out.splitlines())

    @classmethod
    def agent_writes(cls):
        state = os.path.join(cls.tmp, "state")
        hook = os.path.join(cls.tmp, "alerts.jsonl")
        extra = (
            "batch = { flush_interval_ms = 100; };\n"
            "watch = { rescan_interval_ms = 300; settle_ms = 100; };\n"
            "selfstats = { interval_ms = 200; };\n"
            f'alerts = {{ exec = ["/bin/sh", "-c", "cat >> {hook}"]; catch_up_s = {9 * 365 * DAY}; '
            'on = ["run_failed", "run_interrupted", "run_stalled", "run_recovered", "no_new_run", '
            '"regression", "improvement", "agent_unhealthy", "agent_recovered"]; };\n'
            'verdicts = { min_runs = 4; candidates = { series = ["manual"]; against = "daily-perf"; }; };\n')
        sources = (f'{{ path = "{cls.results}"; format = "loadgen"; }}, '
                   f'{{ path = "{cls.dss}"; format = "dss-bench"; }}')
        cls.cfg = write_config(os.path.join(cls.tmp, "perfship.cfg"), cls.influx.url, state,
                               sources=sources, extra=extra, database=DB)
        cls.perfship("run", "--once", ok=(0, 65))
        # the decisions people take, and what judging makes of them
        n = cls.names
        cls.perfship("triage", "ack", "--run", n[4], "--metric", "kernelObjectsPerCycle",
                     "--reason", "known leak", "--ticket", "https://tickets.example/1")
        cls.perfship("triage", "exclude", "--run", n[1], "--host", "test", "--reason", "noisy neighbour")
        cls.perfship("triage", "baseline", "--run", n[2], "--reason", "new hardware")
        out = cls.perfship("triage", "ack", "--run", n[3], "--reason", "undone below")
        cls.perfship("triage", "undo", out.split()[1])
        cls.perfship("mark", "start", "--run", "by-hand")
        cls.perfship("mark", "end", "--run", "by-hand", "--status", "failed", "--text", "by hand")
        cls.perfship("run", "--once", ok=(0, 65))
        # the heartbeat: a service-mode agent writes it every interval_ms
        agent = Agent(cls.cfg).start()
        try:
            wait_until(lambda: cls.influx.count(DB, "perfship") > 0, timeout=30,
                       what="a perfship point")
        finally:
            agent.stop()

    @classmethod
    def perfship(cls, *args, ok=(0,)):
        rc, out, err = run_perfship(["-c", cls.cfg, *args], timeout=180,
                                    env={"USER": "ann", "SUDO_USER": ""})
        if rc not in ok:
            raise AssertionError(f"perfship {' '.join(args)}: exit {rc}: {err[-2000:]}")
        return out

    def server_keys(self):
        """measurement -> (tag keys, {field: [types]}) as InfluxDB holds them."""
        got = {}
        for r in self.influx.query(DB, "SHOW MEASUREMENTS"):
            m = r["name"]
            q = '"' + m.replace('"', '\\"') + '"'
            tags = {t["tagKey"] for t in self.influx.query(DB, f"SHOW TAG KEYS FROM {q}")}
            fields = {}
            for f in self.influx.query(DB, f"SHOW FIELD KEYS FROM {q}"):
                fields.setdefault(f["fieldKey"], []).append(f["fieldType"])
            got[m] = (tags, fields)
        return got

    @classmethod
    def _merge_server(cls, test):
        if getattr(cls, "_merged", False):
            return
        for m, (tags, fields) in test.server_keys().items():
            for k in tags:
                cls.written.tag(m, k, "the server (agent)")
            for k, types in fields.items():
                for t in types:
                    cls.written.field(m, k, t, "the server (agent)")  # SHOW FIELD KEYS' names are pointset's
        cls._merged = True

    def setUp(self):
        self._merge_server(self)

    # -- the checks -----------------------------------------------------------
    def test_the_agent_wrote_its_own_measurements(self):
        """The agent run is what this test says it is: without its points
        the checks below would hold the document against less than it
        describes."""
        got = self.server_keys()
        for m in ("perfship", "perfship_verdict", "perfship_alert", "perfship_triage", "runs"):
            self.assertIn(m, got)
        statuses = {r["status"] for r in self.influx.query(DB, 'SELECT "text" FROM "runs" GROUP BY "status"')}
        self.assertEqual(statuses, {"running", "success", "failed", "interrupted", "stalled"})
        methods = {r["method"] for r in self.influx.query(
            DB, 'SELECT "method", "verdict" FROM "perfship_verdict"')}
        self.assertLessEqual({"edivisive", "candidate", "stage_drift", "limit", "arm_compare"}, methods)
        verdicts = {r["verdict"] for r in self.influx.query(DB, 'SELECT "verdict" FROM "perfship_verdict"')}
        self.assertTrue({"excluded", "baseline", "regression", "none"} <= verdicts, verdicts)
        actions = {r["action"] for r in self.influx.query(
            DB, 'SELECT "reason" FROM "perfship_triage" GROUP BY "action"')}
        self.assertEqual(actions, {"ack", "exclude", "baseline", "undo"})

    def no_problems(self, problems):
        if problems:
            self.fail(f"{len(problems)} disagreements with docs/schema.md:\n" + "\n".join(problems))

    def test_every_measurement_written_is_documented(self):
        """A measurement is documented by a section with its field table: a
        name in a heading alone (a group heading) is not enough."""
        documented = {m for m, d in self.doc.measurements.items() if d["fields"]}
        problems = []
        for m in sorted(set(self.written.m) - documented):
            where = next(iter(next(iter(self.written.m[m]["fields"].values())).values()))
            problems.append(f"{m} written ({where}) but docs/schema.md has no section with its fields")
        self.no_problems(problems)

    def test_every_tag_and_field_written_is_documented_with_its_type(self):
        problems = []
        for m, w in sorted(self.written.m.items()):
            d = self.doc.measurements.get(m)
            if d is None:
                continue  # reported by the test above
            for k, where in sorted(w["tags"].items()):
                if k not in d["tags"] and k not in GLOBAL_TAGS:
                    problems.append(f"{m}: tag {k} written ({where}) but not documented")
            for k, types in sorted(w["fields"].items()):
                if k not in d["fields"]:
                    problems.append(f"{m}: field {k} ({'/'.join(types)}, {next(iter(types.values()))}) "
                                    "written but not documented")
                    continue
                want, line, _ = d["fields"][k]
                for t, where in sorted(types.items()):
                    if t != want:
                        problems.append(f"{m}.{k}: documented {want} (docs/schema.md:{line}), "
                                        f"written {t} ({where})")
        self.no_problems(problems)

    def test_every_documented_key_is_written_or_said_to_be_conditional(self):
        problems = []
        for m, d in sorted(self.doc.measurements.items()):
            w = self.written.m.get(m, {"fields": {}})
            for k, (typ, line, cond) in d["fields"].items():
                if k in w["fields"] or cond or (m, k) in UNWRITTEN:
                    continue
                problems.append(f"{m}.{k} (docs/schema.md:{line}) is never written by the samples, "
                                "and its row does not say when it is absent")
            wt = self.written.m.get(m, {"tags": {}})["tags"]
            for k, (line, cond) in d["tags"].items():
                if k in wt or cond or (m, k) in UNWRITTEN:
                    continue
                problems.append(f"{m}: tag {k} (docs/schema.md:{line}) is never written by the samples, "
                                "and the document does not say when it is absent")
        for (m, k), why in UNWRITTEN.items():
            w = self.written.m.get(m, {"fields": {}, "tags": {}})
            d = self.doc.measurements.get(m, {"fields": {}, "tags": {}})
            if k in w["fields"] or k in w["tags"]:
                problems.append(f"UNWRITTEN lists {m}.{k} ({why}), but it is written now: drop the entry")
            elif k not in d["fields"] and k not in d["tags"]:
                problems.append(f"UNWRITTEN lists {m}.{k}, which docs/schema.md no longer documents")
        self.no_problems(problems)

    def test_every_sample_line_parses_and_uses_documented_keys(self):
        self.assertGreater(len(self.doc.samples), 20)
        problems = []
        for line_no, text in self.doc.samples:
            at = f"docs/schema.md:{line_no}"
            try:
                meas, tags, t, fields = pointset.parse_lp_line(text)
            except (ValueError, IndexError) as e:
                problems.append(f"{at}: not line protocol: {e}")
                continue
            d = self.doc.measurements.get(meas)
            if d is None:
                problems.append(f"{at}: measurement {meas} is not documented")
                continue
            if t is None:
                problems.append(f"{at}: no timestamp (every point has its time from the data)")
            for k, _ in tags:
                if k not in d["tags"] and k not in GLOBAL_TAGS:
                    problems.append(f"{at}: {meas} has no documented tag {k}")
            for k, (typ, _) in fields.items():
                if k not in d["fields"]:
                    problems.append(f"{at}: {meas} has no documented field {k}")
                elif d["fields"][k][0] != typ:
                    problems.append(f"{at}: {meas}.{k} is {typ} here, {d['fields'][k][0]} in its table")
        self.no_problems(problems)

    def test_sample_lines_are_convert_output(self):
        """docs/schema.md: "The example lines below are real output of
        `perfship convert` on the samples in `tests/data`" (the slog ones
        of the run its "Examples:" note generates)."""
        heads = {line.rsplit(" ", 1)[0] for line in self.converted}
        problems = []
        for line_no, text in self.doc.samples:
            meas = text.split(",", 1)[0].split(" ", 1)[0]
            if meas in AGENT_ONLY or text in self.converted:
                continue
            if meas in MTIME_TIMED and text.rsplit(" ", 1)[0] in heads:
                continue
            problems.append(f"docs/schema.md:{line_no}: not a line convert prints: {text[:120]}")
        self.no_problems(problems)

    def test_each_verdict_has_what_its_method_promises(self):
        """docs/schema.md "Verdicts", the paragraph after the field table:
        what every verdict has, and what each method adds. Only what must
        be there is checked: what a point leaves out may still be held from
        an earlier judgement of the run (the server merges field by field)."""
        always = {"verdict", "value", "change_run", "method", "backfill"}
        judged = {"baseline"}  # all but excluded and baseline decisions
        adds = {
            "edivisive": {"good_run", "good_revision", "bad_run", "bad_revision"},
            "candidate": {"against", "baseline_runs", "revision", "good_run", "good_revision",
                          "bad_run", "bad_revision"},
            "stage_drift": {"revision", "stage", "family_size"},
            "limit": {"stage"},
            "arm_compare": {"variants", "variants_agree", "variants_skipped", "arm", "reference"},
        }
        judged_adds = {"edivisive": {"baseline_runs"}}
        problems = []
        for r in self.influx.query(DB, 'SELECT * FROM "perfship_verdict"'):
            have = {k for k, v in r.items() if v is not None}
            m = r["method"]
            want = always | adds.get(m, set())
            if r["verdict"] not in ("excluded", "baseline"):
                want |= judged | judged_adds.get(m, set())
                if r.get("baseline") not in (0, 0.0, None):
                    want.add("change_pct")
            else:
                if m != "edivisive":
                    problems.append(f"{r['run']} {r['metric']}: {r['verdict']} with method {m}")
            if m not in adds:
                problems.append(f"{r['run']} {r['metric']}: method {m} is not documented")
            if m in ("edivisive", "stage_drift") and r["verdict"] not in ("excluded", "baseline") \
                    and r.get("p_value") is not None and r.get("p_adjusted") is None:
                problems.append(f"{m} of {r['run']} {r['metric']}: a p_value without p_adjusted")
            missing = sorted(want - have)
            if missing:
                problems.append(f"{m} {r['verdict']} of {r['run']} {r['metric']} {r.get('stage') or ''}: "
                                f"no {', '.join(missing)}")
        self.no_problems(problems)

    def test_jsonl_types_as_documented(self):
        """docs/schema.md "Generic sources": numbers are floats unless
        declared, whole ones too; strings and booleans keep their type."""
        path = os.path.join(self.tmp, "app.jsonl")
        with open(path, "w") as f:
            f.write('{"ts": 1700000000, "stage": "1", "n": 3, "x": 2, "ok": true, "who": "a"}\n')
        rc, out, err = run_perfship(["convert", "-f", "jsonl", "--measurement", "app", "--time-key", "ts",
                                     "--tag", "stage", "--type", "n=integer", path])
        self.assertEqual(rc, 0, err)
        meas, tags, t, fields = pointset.parse_lp_line(out.strip())
        self.assertEqual((meas, tags, t), ("app", (("stage", "1"),), 1700000000 * 10**9))
        self.assertEqual({k: v[0] for k, v in fields.items()},
                         {"n": "integer", "x": "float", "ok": "boolean", "who": "string"})


if __name__ == "__main__":
    unittest.main()
