"""Dashboards, queries and alert definitions, checked the way a user would.

Offline parts (always run):
  - the generated dashboards and query files are what dashboards/build.py
    makes from its cell list (nobody edited one copy and forgot the others);
  - Chronograf dashboards pass what Chronograf itself does with a resources
    file: decoded into its Go types, found by id (bare objects, unique
    negative ids), and every cell and template through the server's request
    validation; Grafana JSON carries ids, geometry without overlaps, query
    objects, defined variables and annotations in the target form;
  - every .flux file passes the Flux parser and type checker (npm package
    @influxdata/flux-lsp-browser, run with Node), and a broken copy fails;
  - every TICKscript passes a structural check: dbrp, balanced pipeline,
    known node and property names, measurements and fields that exist in
    docs/schema.md.
(test_loaders.py runs the tools' own loaders: ticklint and Grafana's schema.)

Against a real InfluxDB loaded with the fixture runs (`perfship convert`)
and hand-written verdict and alert points (docs/schema.md, "Verdicts" and
"Alerts"; the agent does not write them yet): every InfluxQL query of every
Chronograf cell, Grafana panel, variable and annotation, with variables and
time range filled in, returns the series and values the data implies, e.g.
the daily-runs table lists every fixture run with its status, the stage
comparison has one row per loadgen stage and matches the runner's own
perf_to_stats_csv.jq output value for value. Every Kapacitor stream task's
filter, written as the equivalent InfluxQL condition, selects exactly the
points that must alert, and its groupBy and message templates name tags and
fields those points have.
"""
import csv
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import nodetools  # noqa: E402

SRC = harness.SOURCE_DIR
DASH = os.path.join(SRC, "dashboards")
sys.path.insert(0, DASH)
sys.dont_write_bytecode = True  # no __pycache__ inside the installed dashboards/ tree
import build  # noqa: E402

LOADGEN = os.path.join(harness.DATA_DIR, "loadgen", "synth")
DSS = os.path.join(harness.DATA_DIR, "dss", "synth")
# An InterUSS benchmarker report (tests/tools/gen_benchmarker.py): its cells
# share the DSS dashboard.
BENCHMARKER = os.path.join(harness.DATA_DIR, "benchmarker", "isas_images", "report.json")


def benchmarker_steps():
    """(arm, step, reason, throughput) of the report, from its definitions
    (docs/schema.md "Benchmarker"): successful operations completed in the
    stable window, per second."""
    import datetime as dt
    with open(BENCHMARKER) as f:
        doc = json.load(f)
    t = lambda s: dt.datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    out = []
    for cfg, scen in zip(doc["configuration"]["scenarios"], doc["report"]["scenarios"]):
        arm = cfg["metadata"].get("dss_image") or next(
            a["run_command"]["env"]["DB_TYPE"] for a in doc["configuration"]["actions"]
            if a["name"] == cfg["setup"][0])
        done = [t(op["t1"]) for o in scen["operations"] for org in o["origins"]
                for oc in org["outcomes"] for op in oc.get("successful", [])]
        for k, step in enumerate(scen["steps"]):
            tp = None
            if "throughput_stability_time" in step:
                a, b = t(step["throughput_stability_time"]), t(step["end_time"])
                tp = sum(1 for x in done if a <= x <= b) / (b - a).total_seconds()
            out.append((arm, k + 1, step["termination_reason"], tp, t(step["end_time"])))
    return out
FLUX_CHECK = os.path.join(nodetools.NODE_DIR, "flux-check.mjs")
DB = "perf"

# What each fixture run ends as, per tests/data/loadgen/README.md. The
# in-progress run is given a stalled marker by this test (the agent's stall
# detection is tested elsewhere); the others get the markers perfship's
# run tracker writes, when `convert` does not emit them itself.
FIXTURE_STATUS = {
    "daily-perf-9eb37164f6f7": "success",
    "daily-perf-1cb7c2d80874": "success",
    "daily-perf-ba4674aa5495": "failed",
    "manual-7102939": "interrupted",
    "daily-perf-31400797d904": "stalled",
}


def doc_blocks(lang):
    """The fenced code blocks of docs/queries.md in one language."""
    with open(os.path.join(SRC, "docs", "queries.md")) as f:
        return re.findall(rf"```{lang}\n(.*?)```", f.read(), re.S)


def schema_words():
    with open(os.path.join(SRC, "docs", "schema.md")) as f:
        return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", f.read()))


# -- fixture facts, read straight from the files (not through perfship) ------

def perf_lines(run):
    """The records of a run's perf.jsonl that perfship reads: an
    unterminated last line only once the run has ended (docs/schema.md)."""
    folder = os.path.join(LOADGEN, run)
    with open(os.path.join(folder, "perf.jsonl")) as f:
        lines = f.read().split("\n")
    try:
        with open(os.path.join(folder, "exit_code")) as f:
            ended = f.read().strip() != ""
    except FileNotFoundError:
        ended = False
    if not ended:
        lines = lines[:-1]  # "" after a final newline, else the unfinished line
    for line in lines:
        try:
            yield json.loads(line)
        except ValueError:
            pass


def finish_stats(run):
    for r in perf_lines(run):
        if r.get("type") == "perf-finish":
            return r["stats"]
    return None


def time_origin(run):
    for r in perf_lines(run):
        if r.get("type") == "perf-start":
            return r["timeOrigin"]
    raise AssertionError(f"{run}: no perf-start")


def stats_csv():
    """The runner's own per-revision comparison, keyed by run folder."""
    with open(os.path.join(LOADGEN, "stats.csv")) as f:
        rows = list(csv.DictReader(f))
    out = {}
    for row in rows:
        for run in FIXTURE_STATUS:
            if run.rsplit("-", 1)[1].startswith(row["sdkRevision"]):
                out[run] = row
    return out


def csv_float(v):
    return None if v in ("", None) else float(v)


def lp_line(measurement, tags, fields, t):
    """One line of line protocol for the hand-written points."""
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return f"{v}i"
        if isinstance(v, float):
            return repr(v)
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    tagset = "".join(f",{k}=" + re.sub(r"([,= ])", r"\\\1", v) for k, v in sorted(tags.items()))
    return f"{measurement}{tagset} " + ",".join(f"{k}={value(v)}" for k, v in fields.items()) + f" {t}"


# -- variable filling ----------------------------------------------------------

def fill_grafana(q, start_ns, end_ns, variables, interval="1m"):
    q = q.replace("$timeFilter", f"time >= {start_ns} AND time <= {end_ns}")
    q = q.replace("$__interval", interval)
    for k, v in variables.items():
        q = q.replace(f"${k}", v)
    assert "$" not in q, f"unfilled variable in {q}"
    return q


def fill_chronograf(q, start_ns, end_ns, variables, interval="1m"):
    q = q.replace(":dashboardTime:", str(start_ns)).replace(":upperDashboardTime:", str(end_ns))
    q = q.replace(":interval:", interval)
    for k, v in variables.items():
        q = q.replace(f":{k}:", "'" + v.replace("'", "\\'") + "'")
    assert not re.search(r":\w+:", q), f"unfilled variable in {q}"
    return q


# =============================================================================
class GeneratedFiles(unittest.TestCase):
    def test_generated_files_are_current(self):
        p = subprocess.run([sys.executable, os.path.join(DASH, "build.py"), "--check"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)


    def test_queries_name_documented_measurements_and_fields(self):
        words = schema_words()
        queries = [c["influxql"] for d in build.DASHBOARDS for c in d["cells"]]
        queries += [a["influxql"] for d in build.DASHBOARDS for a in d["annotations"]]
        for q in queries:
            aliases = set(re.findall(r'AS "(\w+)"', q))
            for ident in re.findall(r'"(\w+)"', q):
                if ident not in aliases:
                    self.assertIn(ident, words, f"{ident} (in {q}) is not in docs/schema.md")


# -- Chronograf: what its resources store and its server do with a file -------
#
# Chronograf's Go types for a dashboard (chronograf.go: Dashboard,
# DashboardCell, Axis, CellColor, Legend, TableOptions, RenamableField,
# DecimalPlaces, DashboardQuery, QueryConfig, Template, TemplateValue,
# TemplateQuery). Its resources store decodes every *.dashboard file into
# them with encoding/json, which ignores unknown keys and nulls but fails on
# a value of the wrong JSON type; the lookup by id stops at the first file
# that fails, so one bad file makes every resources dashboard answer 404.
_S, _I, _B, _N, _ANY = "string", "int", "bool", "number", "any"
CHRONOGRAF_GO_TYPES = {
    "Dashboard": {"id": "dashboard_id", "cells": ["#DashboardCell"], "templates": ["#Template"],
                  "name": _S, "organization": _S},
    "DashboardCell": {"i": _S, "x": _I, "y": _I, "w": _I, "h": _I, "name": _S,
                      "queries": ["#DashboardQuery"], "axes": {"map": "#Axis"}, "type": _S,
                      "colors": ["#CellColor"], "legend": "#Legend", "tableOptions": "#TableOptions",
                      "fieldOptions": ["#RenamableField"], "timeFormat": _S,
                      "decimalPlaces": "#DecimalPlaces", "note": _S, "noteVisibility": _S},
    "Axis": {"bounds": [_S], "label": _S, "prefix": _S, "suffix": _S, "base": _S, "scale": _S},
    "CellColor": {"id": _S, "type": _S, "hex": _S, "name": _S, "value": _S},
    "Legend": {"type": _S, "orientation": _S},
    "TableOptions": {"verticalTimeAxis": _B, "sortBy": "#RenamableField", "wrapping": _S,
                     "fixFirstColumn": _B},
    "RenamableField": {"internalName": _S, "displayName": _S, "visible": _B},
    "DecimalPlaces": {"isEnforced": _B, "digits": _I},
    "DashboardQuery": {"query": _S, "label": _S, "range": "#Range", "queryConfig": "#QueryConfig",
                       "source": _S, "type": _S},
    "Range": {"upper": _I, "lower": _I},
    "QueryConfig": {"id": _S, "database": _S, "measurement": _S, "retentionPolicy": _S,
                    "fields": ["#Field"], "tags": {"map": [_S]}, "groupBy": "#GroupBy",
                    "areTagsAccepted": _B, "fill": _S, "rawText": _S, "range": "#DurationRange",
                    "shifts": ["#TimeShift"]},
    "Field": {"value": _ANY, "type": _S, "alias": _S, "args": ["#Field"]},
    "GroupBy": {"time": _S, "tags": [_S]},
    "DurationRange": {"upper": _S, "lower": _S},
    "TimeShift": {"label": _S, "unit": _S, "quantity": _S},
    "Template": {"tempVar": _S, "values": ["#TemplateValue"], "id": _S, "type": _S, "label": _S,
                 "query": "#TemplateQuery", "sourceID": _S},
    "TemplateValue": {"value": _S, "type": _S, "selected": _B, "key": _S},
    "TemplateQuery": {"influxql": _S, "flux": _S, "db": _S, "rp": _S, "measurement": _S,
                      "tagKey": _S, "fieldKey": _S},
}


def go_decode_errors(value, typ, path="/"):
    """What encoding/json would refuse when decoding `value` into `typ`."""
    if value is None or typ == _ANY:
        return []
    if isinstance(typ, str) and typ.startswith("#"):
        typ = CHRONOGRAF_GO_TYPES[typ[1:]]
    if isinstance(typ, list):
        if not isinstance(value, list):
            return [f"{path}: want an array"]
        return [e for i, v in enumerate(value) for e in go_decode_errors(v, typ[0], f"{path}/{i}")]
    if isinstance(typ, dict) and "map" in typ:
        if not isinstance(value, dict):
            return [f"{path}: want an object"]
        return [e for k, v in value.items() for e in go_decode_errors(v, typ["map"], f"{path}/{k}")]
    if isinstance(typ, dict):
        if not isinstance(value, dict):
            return [f"{path}: want an object"]
        fields = {k.lower(): t for k, t in typ.items()}  # encoding/json matches keys case-insensitively
        return [e for k, v in value.items() if k.lower() in fields
                for e in go_decode_errors(v, fields[k.lower()], f"{path}/{k}")]
    ok = {_S: isinstance(value, str),
          _B: isinstance(value, bool),
          _I: isinstance(value, int) and not isinstance(value, bool),
          _N: isinstance(value, (int, float)) and not isinstance(value, bool),
          # Dashboard.UnmarshalJSON takes a number or a numeric string.
          "dashboard_id": (isinstance(value, (int, float)) and not isinstance(value, bool))
          or (isinstance(value, str) and re.fullmatch(r"-?\d+", value) is not None)}[typ]
    return [] if ok else [f"{path}: want {typ}, got {json.dumps(value)[:40]}"]


def chronograf_problems(docs):
    """Why Chronograf would not open these resources files ({name: parsed
    JSON}): the decode above, the lookup by id (server/filestore), and the
    request validation of server/cells.go and server/templates.go."""
    out, ids = [], {}
    for name, d in sorted(docs.items()):
        errs = go_decode_errors(d, "#Dashboard")
        out += [f"{name}: decode: {e}" for e in errs]
        if errs or not isinstance(d, dict):
            continue
        if "dashboard" in d or "meta" in d or "id" not in d:
            out.append(f"{name}: not a bare dashboard (the export wrapper is listed but never found by id)")
            continue
        if not d.get("name"):
            out.append(f"{name}: no name (the store then reads the file as an export wrapper)")
        if not isinstance(d["id"], int) or d["id"] >= 0:
            out.append(f"{name}: id {d['id']!r}: resources dashboards need negative ids "
                       "(positive ones clash with dashboards made in the UI)")
        if d["id"] in ids:
            out.append(f"{name}: id {d['id']} is also the id of {ids[d['id']]}: only the first file opens")
        ids[d["id"]] = name
        for c in d.get("cells") or []:
            where = f"{name}: cell {c.get('name')!r}"
            if c.get("noteVisibility", "") not in ("", "default", "showWhenNoData"):
                out.append(f"{where}: noteVisibility {c['noteVisibility']!r}")
            for q in c.get("queries") or []:
                if q.get("type") not in ("influxql", "flux"):
                    out.append(f"{where}: query type {q.get('type')!r}")
                for fld in ((q.get("queryConfig") or {}).get("fields") or []):
                    for f2 in [fld] + (fld.get("args") or []):
                        if f2.get("type") not in ("func", "field", "integer", "number", "regex", "wildcard"):
                            out.append(f"{where}: queryConfig field type {f2.get('type')!r}")
            for label, axis in (c.get("axes") or {}).items():
                # "raw" is accepted by newer servers only.
                if (label not in ("x", "y", "y2") or axis.get("scale", "") not in ("linear", "log", "")
                        or axis.get("base", "") not in ("10", "2", "")):
                    out.append(f"{where}: axis {label} {axis}")
            for color in c.get("colors") or []:
                if color.get("type") not in ("max", "min", "threshold", "text", "background", "scale"):
                    out.append(f"{where}: colour type {color.get('type')!r}")
                if len(color.get("hex", "")) != 7:
                    out.append(f"{where}: colour hex {color.get('hex')!r} is not #rrggbb")
            legend = c.get("legend") or {}
            if legend.get("type", "") or legend.get("orientation", ""):
                if (legend.get("type") != "static"
                        or legend.get("orientation") not in ("top", "bottom", "right", "left")):
                    out.append(f"{where}: legend {legend}")
        seen = set()
        for t in d.get("templates") or []:
            where = f"{name}: template {t.get('tempVar')!r}"
            if t.get("tempVar") in seen:
                out.append(f"{where}: defined twice")
            seen.add(t.get("tempVar"))
            if t.get("type") not in ("constant", "csv", "fieldKeys", "tagKeys", "tagValues",
                                     "measurements", "databases", "map", "influxql", "text", "flux"):
                out.append(f"{where}: type {t.get('type')!r}")
            for v in t.get("values") or []:
                if v.get("type") not in ("csv", "map", "fieldKey", "tagKey", "tagValue", "measurement",
                                         "database", "constant", "influxql", "flux"):
                    out.append(f"{where}: value type {v.get('type')!r}")
                if t.get("type") == "map" and not v.get("key"):
                    out.append(f"{where}: a map value needs a key")
            if t.get("type") in ("influxql", "flux") and not t.get("query"):
                out.append(f"{where}: no query")
    return out


def chronograf_files():
    docs = {}
    for path in sorted(glob.glob(os.path.join(DASH, "chronograf", "*.dashboard"))):
        with open(path) as f:
            docs[os.path.basename(path)] = json.load(f)
    return docs


class ChronografJson(unittest.TestCase):
    CELL_TYPES = {"line", "line-stacked", "line-stepplot", "bar", "line-plus-single-stat",
                  "single-stat", "gauge", "table", "alerts", "news", "guide", "note"}
    PREDEFINED = {"dashboardTime", "upperDashboardTime", "interval", "database",
                  "measurement", "tagKey", "fieldKey"}

    def test_chronograf_opens_every_dashboard(self):
        docs = chronograf_files()
        self.assertEqual(len(docs), len(build.DASHBOARDS))
        self.assertEqual(chronograf_problems(docs), [])

    def test_checker_rejects_what_chronograf_refuses(self):
        # Each change below is one Chronograf refuses; the check must see it,
        # or the test above proves nothing.
        docs = chronograf_files()
        name = "daily-runs.dashboard"
        other = next(n for n in docs if n != name)

        def changed(fn):
            d = json.loads(json.dumps(docs[name]))
            fn(d)
            return d
        cell = lambda d: d["cells"][0]  # noqa: E731
        broken = {
            "export wrapper": {"meta": {"chronografVersion": "1.10.0"}, "dashboard": docs[name]},
            "positive id": changed(lambda d: d.update(id=7)),
            "string geometry": changed(lambda d: cell(d).update(x="0")),
            "axis base": changed(lambda d: cell(d)["axes"]["y"].update(base="16")),
            "axis label": changed(lambda d: cell(d)["axes"].update(z=cell(d)["axes"]["y"])),
            "short hex": changed(lambda d: d["cells"][1]["colors"][0].update(hex="#fff")),
            "half legend": changed(lambda d: cell(d).update(legend={"type": "static"})),
            "query type": changed(lambda d: cell(d)["queries"][0].update(type="sql")),
            "template type": changed(lambda d: d["templates"][0].update(type="tagValue")),
            "note visibility": changed(lambda d: cell(d).update(noteVisibility="always")),
        }
        self.assertTrue(docs[name]["cells"][1]["colors"], "the second cell is a coloured stat")
        for what, doc in broken.items():
            with self.subTest(what):
                self.assertTrue(chronograf_problems({name: doc}), what)
        dup = dict(docs)
        dup[other] = dict(docs[other], id=docs[name]["id"])
        self.assertTrue(any("also the id" in p for p in chronograf_problems(dup)))

    def test_every_dashboard(self):
        for name, d in chronograf_files().items():
            with self.subTest(path=name):
                defined = {t["tempVar"].strip(":") for t in d["templates"]}
                for t in d["templates"]:
                    self.assertRegex(t["tempVar"], r"^:\w+:$")
                    self.assertIsInstance(t["values"], list)
                    if t["type"] == "text":  # how far back the pickers look
                        self.assertEqual(t["tempVar"], f":{build.CHRONOGRAF_RANGE_VAR}:")
                        self.assertEqual([v["value"] for v in t["values"]], [build.CHRONOGRAF_RANGE_DEFAULT])
                        continue
                    self.assertEqual(t["type"], "tagValues")
                    for k in ("db", "measurement", "tagKey", "influxql"):
                        self.assertTrue(t["query"][k], k)
                cell_ids, occupied = set(), set()
                self.assertTrue(d["cells"])
                for c in d["cells"]:
                    self.assertNotIn(c["i"], cell_ids)
                    cell_ids.add(c["i"])
                    self.assertGreaterEqual(c["x"], 0)
                    self.assertGreater(c["w"], 0)
                    self.assertGreater(c["h"], 0)
                    self.assertLessEqual(c["x"] + c["w"], 12, "Chronograf's grid is 12 wide")
                    cells = {(x, y) for x in range(c["x"], c["x"] + c["w"])
                             for y in range(c["y"], c["y"] + c["h"])}
                    self.assertFalse(cells & occupied, f"cell {c['name']} overlaps another")
                    occupied |= cells
                    self.assertIn(c["type"], self.CELL_TYPES)
                    self.assertTrue(c["queries"])
                    for q in c["queries"]:
                        self.assertEqual(q["type"], "influxql")
                        self.assertTrue(q["query"].startswith("SELECT"))
                        self.assertEqual(q["queryConfig"]["rawText"], q["query"])
                        self.assertEqual(q["queryConfig"]["database"], DB)
                        used = set(re.findall(r":(\w+):", q["query"] + " " + c["name"]))
                        self.assertLessEqual(used, defined | self.PREDEFINED,
                                             f"undefined template variable in {c['name']}")
                    for k in ("axes", "colors", "legend", "tableOptions", "fieldOptions",
                              "timeFormat", "decimalPlaces", "note", "noteVisibility"):
                        self.assertIn(k, c)


class GrafanaJson(unittest.TestCase):
    PANEL_TYPES = {"timeseries", "table", "stat", "barchart"}
    BUILTIN = {"timeFilter", "__interval"}

    def test_every_dashboard(self):
        files = sorted(glob.glob(os.path.join(DASH, "grafana", "dashboards", "*.json")))
        self.assertEqual(len(files), len(build.DASHBOARDS))
        uids = set()
        for path in files:
            with self.subTest(path=os.path.basename(path)):
                with open(path) as f:
                    d = json.load(f)
                self.assertTrue(d["uid"])
                self.assertLessEqual(len(d["uid"]), 40, "Grafana's uid limit")
                self.assertNotIn(d["uid"], uids)
                uids.add(d["uid"])
                self.assertTrue(d["title"])
                self.assertIsInstance(d["schemaVersion"], int)
                self.assertIn("from", d["time"])
                names = {v["name"] for v in d["templating"]["list"]}
                for v in d["templating"]["list"]:
                    self.assertEqual(v["type"], "query")
                    self.assertEqual(v["datasource"], build.DS)
                    self.assertTrue(v["query"].startswith("SHOW TAG VALUES"))
                for a in d["annotations"]["list"]:
                    if a.get("builtIn"):
                        continue
                    # The form Grafana 10+ stores: query and mappings in target.
                    self.assertFalse({"query", "textColumn", "tagsColumn", "titleColumn",
                                      "timeEndColumn"} & set(a), "legacy annotation fields")
                    t = a["target"]
                    self.assertEqual(a["datasource"], build.DS)
                    self.assertIs(t["rawQuery"], True)
                    self.assertIs(t["fromAnnotations"], True)
                    self.assertIn("$timeFilter", t["query"], "Grafana requires $timeFilter in annotation queries")
                    self.assertTrue(t["textColumn"])
                ids, occupied = set(), set()
                for p in d["panels"]:
                    self.assertIsInstance(p["id"], int)
                    self.assertNotIn(p["id"], ids)
                    ids.add(p["id"])
                    self.assertIn(p["type"], self.PANEL_TYPES)
                    g = p["gridPos"]
                    self.assertTrue(all(isinstance(g[k], int) for k in "xywh"))
                    self.assertLessEqual(g["x"] + g["w"], 24)
                    self.assertGreater(g["w"], 0)
                    self.assertGreater(g["h"], 0)
                    cells = {(x, y) for x in range(g["x"], g["x"] + g["w"])
                             for y in range(g["y"], g["y"] + g["h"])}
                    self.assertFalse(cells & occupied, f"panel {p['title']} overlaps another")
                    occupied |= cells
                    self.assertEqual(p["datasource"], build.DS)
                    self.assertTrue(p["targets"])
                    refs = set()
                    for t in p["targets"]:
                        self.assertNotIn(t["refId"], refs)
                        refs.add(t["refId"])
                        self.assertIs(t["rawQuery"], True)
                        self.assertIn(t["resultFormat"], ("time_series", "table"))
                        used = set(re.findall(r"\$(\w+)", t["query"] + " " + p["title"]))
                        self.assertLessEqual(used, names | self.BUILTIN)

    def test_provisioning(self):
        prov = os.path.join(DASH, "grafana", "provisioning")
        with open(os.path.join(prov, "datasources", "perfship.yaml")) as f:
            ds = f.read()
        self.assertRegex(ds, r"(?m)^apiVersion: 1$")
        self.assertRegex(ds, r"(?m)^datasources:$")
        self.assertRegex(ds, rf"(?m)^\s+uid: {build.DS['uid']}$", "the dashboards refer to this uid")
        self.assertRegex(ds, r"(?m)^\s+type: influxdb$")
        self.assertRegex(ds, rf"(?m)^\s+dbName: {DB}$")
        with open(os.path.join(prov, "dashboards", "perfship.yaml")) as f:
            pr = f.read()
        self.assertRegex(pr, r"(?m)^apiVersion: 1$")
        self.assertRegex(pr, r"(?m)^\s+type: file$")
        path = re.search(r"(?m)^\s+path: (\S+)$", pr).group(1)
        prefix = "/usr/share/perfship/dashboards/"
        self.assertTrue(path.startswith(prefix))
        self.assertTrue(glob.glob(os.path.join(DASH, path[len(prefix):], "*.json")),
                        "the provider path must hold the dashboards once installed")


# =============================================================================
class FluxFiles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        nodetools.ensure_node_modules()
        cls.files = sorted(glob.glob(os.path.join(DASH, "**", "*.flux"), recursive=True))

    def check(self, files):
        return subprocess.run(["node", FLUX_CHECK] + files,
                              capture_output=True, text=True, timeout=120)

    def test_every_flux_file_parses_and_type_checks(self):
        self.assertGreaterEqual(len(self.files), 7 + sum(len(d["cells"]) for d in build.DASHBOARDS))
        p = self.check(self.files)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.count("\nok ") + p.stdout.startswith("ok "), len(self.files))

    def test_checker_rejects_broken_flux(self):
        # The checker must be able to fail, or the test above proves nothing.
        task = os.path.join(DASH, "flux", "tasks", "perfship_run_failed.flux")
        with open(task) as f:
            good = f.read()
        # each with what the language server says, at the line an editor shows
        line = next(i for i, ln in enumerate(good.splitlines(), 1) if "monitor.check(" in ln)
        broken = {"unknown_function": (good.replace("monitor.check(", "monitor.chek("),
                                       f"{line}:8: record is missing label chek"),
                  "syntax": (good.replace("|> range(start: -30m)", "|> range(start: -30m"),
                             "expected RPAREN"),
                  "missing_import": (good.replace('import "influxdata/influxdb/monitor"', ""),
                                     f"{line}:8: undefined identifier monitor")}
        with tempfile.TemporaryDirectory() as tmp:
            for name, (text, said) in broken.items():
                path = os.path.join(tmp, name + ".flux")
                with open(path, "w") as f:
                    f.write(text)
                with self.subTest(name):
                    p = self.check([path])
                    self.assertEqual(p.returncode, 1, p.stdout)
                    self.assertIn(f"FAIL {path}: ", p.stdout)
                    self.assertIn(said, p.stdout)
                    self.assertNotIn("semantic check failed", p.stdout)

    def test_cookbook_flux(self):
        blocks = doc_blocks("flux")
        self.assertGreaterEqual(len(blocks), 3)
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for i, b in enumerate(blocks):
                paths.append(os.path.join(tmp, f"queries-md-{i}.flux"))
                with open(paths[-1], "w") as f:
                    f.write(b)
            p = self.check(paths)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_flux_older_servers_parse(self):
        """What the checker (a recent Flux) accepts and older servers do not:
        `test` is a keyword of Flux before about 0.173 (InfluxDB 1.8, 2.0 to
        2.3 cannot parse `r.test`: write r["test"]), and a task that says
        1.8 can run it imports nothing 1.8's Flux lacks."""
        texts = {}
        for path in self.files:
            with open(path) as f:
                texts[path] = f.read()
        texts.update({f"docs/queries.md block {i}": b for i, b in enumerate(doc_blocks("flux"))})
        for path, text in texts.items():
            code = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//"))
            with self.subTest(path):
                self.assertNotRegex(code, r"(\.|\bv\s*=\s*\{[^}]*\b)test\b(?!_)",
                                    "`test` as a member or variable name: write r[\"test\"]")
                if "1.8" in text.split("\nimport", 1)[0]:
                    self.assertNotIn('"influxdata/influxdb/schema"', code,
                                     "InfluxDB 1.8's Flux has no schema package")
        # the guard can fail: the query as it was
        self.assertRegex('r.run == v.dss_run and r.test == v.test', r"\.test\b(?!_)")

    def test_task_options_are_durations(self):
        # The type checker accepts `every: "1m"` (a string); InfluxDB does not.
        for path in glob.glob(os.path.join(DASH, "flux", "tasks", "*.flux")):
            with open(path) as f:
                text = f.read()
            m = re.search(r"option task = \{([^}]*)\}", text)
            self.assertTrue(m, path)
            self.assertRegex(m.group(1), r'name: "[\w-]+"')
            self.assertRegex(m.group(1), r"every: \d+[smhdw]\b")
            ids = re.findall(r'_check_id: "([^"]*)"', text)
            self.assertEqual(len(ids), 1)
            self.assertRegex(ids[0], r"^[0-9a-f]{16}$")


# =============================================================================
TICK_NODES = {"stream", "batch", "from", "query", "where", "default", "alert", "deadman",
              "join", "eval", "window", "mean", "count", "sum", "max", "min", "last",
              "first", "stats", "derivative", "difference", "shift", "union", "combine",
              "flatten", "change", "log", "httpOut", "influxDBOut", "groupBy", "delete",
              "stateDuration", "stateCount", "holtWinters", "top", "bottom", "sample"}
TICK_PROPERTIES = {"measurement", "where", "groupBy", "database", "retentionPolicy",
                   "field", "tag", "id", "message", "details", "crit", "warn", "info",
                   "stateChangesOnly", "noRecoveries", "log", "exec", "post", "topic",
                   "tcp", "email", "slack", "period", "every", "align", "as", "tolerance",
                   "keep", "tags", "fill", "offset", "cron", "quiet", "unit", "nonNegative",
                   "header", "flapping", "history", "levelTag", "idTag", "messageField",
                   "durationField", "on", "delimiter", "streamName", "create", "precision"}
TICK_FUNCS = {"lambda", "isPresent", "string", "int", "float", "bool", "abs", "sigma",
              "count", "spread", "duration", "if", "strContains", "unixNano"}
# The task that is no alert: it writes Chronograf's annotations (docs/queries.md).
TICK_ANNOTATIONS = "perfship_chronograf_annotations"


def tick_strip(text):
    """Removes comments and string contents; returns (code, strings, refs):
    `code` keeps quote marks so structure stays visible."""
    code, strings, refs = [], [], []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "'\"":
            j, buf = i + 1, []
            while j < n and text[j] != c:
                if text[j] == "\\" and j + 1 < n:
                    buf.append(text[j + 1])
                    j += 2
                    continue
                if text[j] == "\n":
                    raise AssertionError(f"unterminated {c} string at offset {i}")
                buf.append(text[j])
                j += 1
            if j >= n:
                raise AssertionError(f"unterminated {c} string at offset {i}")
            (strings if c == "'" else refs).append("".join(buf))
            code.append(c + c)
            i = j + 1
            continue
        code.append(c)
        i += 1
    return "".join(code), strings, refs


def tick_where_lambdas(text):
    """[(kind, expression)] of a TICKscript's filters: kind "from" for
    |from().where(lambda: ...), "where" for a |where(lambda: ...) node."""
    out = []
    for m in re.finditer(r"(?m)^\s*(\.|\|)where\(\s*lambda:", text):
        i, depth, quote = m.end(), 1, None
        while depth:
            ch = text[i]
            if quote:
                if ch == "\\":
                    i += 1
                elif ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            i += 1
        out.append(("from" if m.group(1) == "." else "where", text[m.end():i - 1].strip()))
    return out


def lambda_to_influxql(expr):
    """A TICKscript lambda of comparisons joined by AND/OR, as the same
    InfluxQL condition; anything else is refused rather than guessed."""
    tokens = re.findall(r"""\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|==|!=|<=|>=|<|>|\(|\)|"""
                        r"""\bAND\b|\bOR\b|\bTRUE\b|\bFALSE\b|-?\d+(?:\.\d+)?|\S+)""", expr)
    out, operand = [], False
    for t in tokens:
        if t in ("AND", "OR"):
            if not operand:
                raise AssertionError(f"cannot translate {expr!r}")
            out.append(t)
            operand = False
        elif t in ("==", "!=", "<", ">", "<=", ">="):
            out.append("=" if t == "==" else t)
            operand = False
        elif t in ("(", ")"):
            out.append(t)
        elif t in ("TRUE", "FALSE"):
            out.append(t.lower())
            operand = True
        elif t[0] in "\"'" or re.fullmatch(r"-?\d+(?:\.\d+)?", t):
            out.append(t)
            operand = True
        else:
            raise AssertionError(f"cannot translate {t!r} in {expr!r}")
    if not operand:
        raise AssertionError(f"cannot translate {expr!r}")
    return " ".join(out).replace("( ", "(").replace(" )", ")")


class TickScripts(unittest.TestCase):
    def scripts(self):
        files = sorted(glob.glob(os.path.join(DASH, "kapacitor", "load", "tasks", "*.tick")))
        self.assertGreaterEqual(len(files), 5)
        return files

    def check_script(self, path, words):
        with open(path) as f:
            text = f.read()
        code, strings, refs = tick_strip(text)
        self.assertRegex(code, r'(?m)^dbrp ""\.""$', "dbrp statement")
        self.assertRegex(text, r'(?m)^dbrp "perf"\."autogen"$')
        depth = 0
        for ch in code:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            self.assertGreaterEqual(depth, 0, "unbalanced parentheses")
        self.assertEqual(depth, 0, "unbalanced parentheses")
        self.assertRegex(code, r"(?m)^(var \w+ = )?(stream|batch)\s*$", "a stream or batch pipeline")
        for node in re.findall(r"\|\s*(\w+)\s*\(", code):
            self.assertIn(node, TICK_NODES, f"unknown node |{node}()")
        for prop in re.findall(r"(?m)^\s*\.(\w+)\s*\(", code):
            self.assertIn(prop, TICK_PROPERTIES, f"unknown property .{prop}()")
        if os.path.basename(path) == TICK_ANNOTATIONS + ".tick":
            # each pipeline ends where Chronograf reads its annotations
            outs = re.findall(r"\|influxDBOut\(\)\s*\.database\('(\w+)'\)\s*"
                              r"\.retentionPolicy\('(\w+)'\)\s*\.measurement\('(\w+)'\)", text)
            self.assertEqual(outs, [("chronograf", "autogen", "annotations")] * 2)
            self.assertEqual(len(re.findall(r"(?m)^stream\s*$", code)), 2)
            for fields in re.findall(r"\.keep\(([^)]*)\)", text):
                self.assertEqual(set(re.findall(r"'(\w+)'", fields)),
                                 {"start_time", "modified_time_ns", "text", "type", "deleted"})
        else:
            self.assertRegex(code, r"\|alert\(\)|\|deadman\(", "every task alerts")
            for handler in ("log", "topic"):
                self.assertRegex(code, rf"(?m)^\s*\.{handler}\(", f"handler .{handler}()")
        # Every variable used is declared.
        declared = set(re.findall(r"(?m)^var (\w+)", code))
        for name in re.findall(r"\b([a-z_][a-z0-9_]*)\b", re.sub(r"[.|]\s*\w+", "", code)):
            if name in ("var", "dbrp", "lambda", "stream", "batch", "TRUE", "FALSE", "AND", "OR", "NOT"):
                continue
            if re.fullmatch(r"\d+\w*", name) or name in TICK_FUNCS:
                continue
            self.assertIn(name, declared, f"undeclared name {name}")
        # Measurements and fields exist in the schema.
        measurements = re.findall(r"\.measurement\('(\w+)'\)", text)
        aliases = set()
        for s in strings:
            if s.lstrip().upper().startswith("SELECT"):
                measurements += re.findall(r'FROM "\w+"\."\w+"\."(\w+)"', s)
                aliases |= set(re.findall(r'AS "(\w+)"', s))
                for ident in re.findall(r'"(\w+)"', s):
                    if ident in (DB, "autogen") or ident in aliases:
                        continue
                    self.assertIn(ident, words, f"query names {ident}, not in docs/schema.md")
        self.assertTrue(measurements, "no measurement referenced")
        for m in measurements:
            self.assertIn(m, words, f"measurement {m} not in docs/schema.md")
        as_names = set()
        for args in re.findall(r"\.as\(([^)]*)\)", text):
            as_names |= set(re.findall(r"'(\w+)'", args))
        for ref in refs:
            if ref in ("perf", "autogen", "time"):  # "time": the point's own time
                continue
            if "." in ref:
                prefix, field = ref.split(".", 1)
                self.assertIn(prefix, as_names, f"join prefix {prefix}")
                self.assertTrue(field in aliases or field in words, f"field {field}")
            else:
                self.assertTrue(ref in words or ref in as_names, f"{ref} not in docs/schema.md")

    def test_structure(self):
        words = schema_words()
        for path in self.scripts():
            with self.subTest(os.path.basename(path)):
                self.check_script(path, words)

    def test_checker_rejects_broken_scripts(self):
        words = schema_words()
        path = os.path.join(DASH, "kapacitor", "load", "tasks", "perfship_run_failed.tick")
        with open(path) as f:
            good = f.read()
        broken = {"paren": good.replace(".groupBy('run')", ".groupBy('run'"),
                  "node": good.replace("|alert()", "|alret()"),
                  "field": good.replace('"backfill" == FALSE', '"backfil" == FALSE'),
                  "measurement": good.replace(".measurement('runs')", ".measurement('run_markers')"),
                  "quote": good.replace("'end'", "'end")}
        with tempfile.TemporaryDirectory() as tmp:
            for name, text in broken.items():
                p = os.path.join(tmp, name + ".tick")
                with open(p, "w") as f:
                    f.write(text)
                with self.subTest(name):
                    with self.assertRaises(AssertionError):
                        self.check_script(p, words)

    def test_load_directory_layout(self):
        load = os.path.join(DASH, "kapacitor", "load")
        handlers = sorted(glob.glob(os.path.join(load, "handlers", "*.yaml")))
        kinds = set()
        for h in handlers:
            with open(h) as f:
                text = f.read()
            self.assertRegex(text, r"(?m)^id: [\w-]+$")
            self.assertRegex(text, r"(?m)^topic: perfship$")
            kinds.add(re.search(r"(?m)^kind: (\w+)$", text).group(1))
        self.assertEqual(kinds, {"log", "exec", "post"})
        with open(os.path.join(load, "handlers", "perfship-exec.yaml")) as f:
            prog = re.search(r"prog: (\S+)", f.read()).group(1)
        self.assertTrue(os.access(os.path.join(DASH, prog.split("/dashboards/", 1)[1]), os.X_OK))


# =============================================================================
def convert(fmt, path):
    return harness.convert(fmt, [path])


class QueriesAgainstInflux(unittest.TestCase):
    """Loads the fixtures through `perfship convert` into a real influxd and
    runs every dashboard and alert query against them."""

    @classmethod
    def setUpClass(cls):
        probe = os.path.join(LOADGEN, "daily-perf-9eb37164f6f7")
        rc, out, err = (None, "", "")
        if os.path.exists(harness.PERFSHIP_BIN):
            rc, out, err = convert("loadgen", probe)
        # Both converters are part of the product: a broken one must fail
        # these checks, not skip them (ctest counts a skip as a pass).
        if rc != 0 or "loadgen_run" not in out:
            raise AssertionError(
                "`perfship convert -f loadgen` does not produce loadgen points "
                f"(exit {rc}: {err.strip()[-300:]}); the data-dependent query checks "
                "need the loadgen and dss-bench converters")
        rc, out, err = convert("dss-bench", os.path.join(DSS, "latency_compare_images", "results.json"))
        if rc != 0 or "dss_bench" not in out:
            raise AssertionError(f"`perfship convert -f dss-bench` does not produce dss_bench points (exit {rc}: {err.strip()[-300:]})")
        cls.influx = harness.InfluxServer().start()
        try:
            cls.load()
        except Exception:
            cls.influx.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.influx.close()

    @classmethod
    def write(cls, body):
        harness.write_lines(cls.influx, DB, body)

    @classmethod
    def load_file(cls, fmt, path):
        harness.convert_into(cls.influx, DB, fmt, [path], ok=(0,))

    @classmethod
    def load(cls):
        cls.influx.create_db(DB)
        for run in FIXTURE_STATUS:
            cls.load_file("loadgen", os.path.join(LOADGEN, run))
        with open(os.path.join(DSS, "manifest.json")) as f:
            manifest = json.load(f)
        cls.dss_files = [m["path"] for m in manifest["files"]
                         if m["path"].endswith("results.json") and m.get("valid_json")]
        for rel in cls.dss_files:
            cls.load_file("dss-bench", os.path.join(DSS, rel))
        cls.load_file("benchmarker", BENCHMARKER)
        # Locust CSVs too, so that the schema check below sees their keys.
        for path in sorted(glob.glob(os.path.join(DSS, "*", "*_stats.csv")) +
                           glob.glob(os.path.join(DSS, "*", "*_stats_history.csv")) +
                           glob.glob(os.path.join(DSS, "*", "*_failures.csv"))):
            cls.load_file("locust", path)
        cls.write_markers()
        cls.write_selfstats()
        cls.write_verdicts()
        cls.write_triage()
        cls.write_alerts()

    @classmethod
    def write_markers(cls):
        """Markers `convert` did not write (the run tracker writes them in
        service mode), as docs/schema.md defines them; the in-progress run gets a
        stalled marker (stall detection itself is tested elsewhere)."""
        def marked(event):
            q = f'SHOW TAG VALUES FROM "runs" WITH KEY = "run" WHERE "event" = \'{event}\''
            return {r["value"] for r in cls.influx.query(DB, q)}
        have_start, have_end = marked("start"), marked("end")
        lines = []
        for run, status in FIXTURE_STATUS.items():
            origin = time_origin(run)
            start = int(round(origin * 1e6)) * 1000
            rev = run.rsplit("-", 1)[1]
            tags = f"host=test,revision={rev},run={run},source=loadgen"
            if run not in have_start:
                lines.append(f'runs,{tags},event=start,status=running text="{run} started",backfill=false {start}')
            if status == "stalled":
                last = max(origin + r["timestamp"] for r in perf_lines(run))
                t = int(round((last + 1800) * 1e6)) * 1000
                lines.append(f'runs,{tags},event=end,status=stalled text="{run} stalled",backfill=false {t}')
            elif run not in have_end:
                st = finish_stats(run)
                last = max(origin + r["timestamp"] for r in perf_lines(run))
                end = int(round((st.get("endedAt") or last) * 1e6)) * 1000
                dur = f",duration={st['duration']}" if st.get("duration") else ""
                lines.append(f'runs,{tags},event=end,status={status} text="{run} ended: {status}"{dur},backfill=false {end}')
        if lines:
            cls.write("\n".join(lines))

    @classmethod
    def write_selfstats(cls):
        """perfship's own heartbeat for the health dashboard: 30 points, 10 s
        apart, ending now, with a few rejections and retries."""
        now = time.time_ns()
        cls.health_end = now
        lines = []
        for i in range(30):
            t = now - (29 - i) * 10 * 10**9
            lines.append(f"perfship,host=test-health points_written={i * 1000}i,points_rejected={i // 10}i,"
                         f"records_rejected={i // 10}i,http_retries={i // 5}i,pending_points={(i * 37) % 500}i,"
                         f"oldest_unacked_s={i % 4}i,files_watched=3i,uptime_s={i * 10}i,lines_read={i * 100}i,"
                         f"records_parsed={i * 90}i,batches_sent={i}i,bytes_sent={i * 50000}i {t}")
        cls.write("\n".join(lines))

    @classmethod
    def write_verdicts(cls):
        """perfship_verdict points as docs/schema.md ("Verdicts") defines them,
        written by hand until the agent writes them: each at its run's time
        (the run's loadgen_run point; DSS: the results file's marker), one of
        each kind a dashboard or an alert task must tell apart."""
        run_time = {r["run"]: r["time"] for r in cls.influx.query(
            DB, 'SELECT "cycleAvgDuration" FROM "loadgen_run" GROUP BY "run"')}
        dss_time = min(r["time"] for r in cls.influx.query(
            DB, 'SELECT "text" FROM "runs" WHERE "run" = \'latency_compare_images\''))
        old, new = "daily-perf-9eb37164f6f7", "daily-perf-1cb7c2d80874"
        ref, arm = "interuss/dss:v0.23.0-rc2", "local/dss:pr-1523"
        # (tags, fields, time); backfill is present on every point.
        cls.verdicts = [
            ({"metric": "cycleAvgDuration", "run": old, "series": "daily-perf", "source": "loadgen"},
             {"verdict": "none", "value": 24.1, "baseline": 23.8, "change_pct": 1.26, "change_run": old,
              "baseline_runs": 6, "method": "edivisive", "p_value": 0.61, "revision": old[-12:], "backfill": False},
             run_time[old]),
            ({"metric": "live_avgSwingsetTime", "run": old, "series": "daily-perf", "source": "loadgen"},
             {"verdict": "regression", "value": 0.5, "baseline": 0.4, "change_pct": 25.0, "change_run": old,
              "baseline_runs": 5, "method": "edivisive", "p_value": 0.01, "revision": old[-12:], "backfill": True},
             run_time[old]),
            ({"metric": "cycleAvgDuration", "run": new, "series": "daily-perf", "source": "loadgen"},
             {"verdict": "regression", "value": 27.8, "baseline": 24.33, "change_pct": 14.26, "change_run": new,
              "baseline_runs": 6, "method": "edivisive", "p_value": 0.004, "revision": new[-12:], "backfill": False},
             run_time[new]),
            ({"metric": "cycleSuccessRate", "run": new, "series": "daily-perf", "source": "loadgen"},
             {"verdict": "improvement", "value": 100.0, "baseline": 95.0, "change_pct": 5.26, "change_run": new,
              "baseline_runs": 6, "method": "edivisive", "p_value": 0.02, "revision": new[-12:], "backfill": False},
             run_time[new]),
            ({"metric": "stage_avgSwingsetTime", "run": new, "series": "daily-perf", "source": "loadgen", "stage": "4"},
             {"verdict": "regression", "value": 0.59, "baseline": 0.5, "change_pct": 18.0, "change_run": new,
              "baseline_runs": 1, "method": "stage_drift", "revision": new[-12:], "backfill": False},
             run_time[new]),
            ({"metric": "stage_avgDuration", "run": new, "series": "daily-perf", "source": "loadgen", "stage": "2"},
             {"verdict": "none", "value": 20.2, "baseline": 20.0, "change_pct": 1.0, "change_run": new,
              "baseline_runs": 1, "method": "stage_drift", "revision": new[-12:], "backfill": False},
             run_time[new]),
            ({"metric": "rps_total", "run": "latency_compare_images", "series": "rid_isa", "source": "dss_bench",
              "arm": arm, "reference": ref},
             {"verdict": "regression", "value": 80.0, "baseline": 100.0, "change_pct": -20.0,
              "change_run": "latency_compare_images", "baseline_runs": 1, "method": "arm_compare",
              "backfill": False, "variants": 4, "variants_agree": 3},
             dss_time),
            ({"metric": "p95_ms", "run": "latency_compare_images", "series": "rid_isa", "source": "dss_bench",
              "arm": arm, "reference": ref},
             {"verdict": "none", "value": 41.0, "baseline": 40.0, "change_pct": 2.5,
              "change_run": "latency_compare_images", "baseline_runs": 1, "method": "arm_compare",
              "backfill": False, "variants": 4, "variants_agree": 2},
             dss_time),
            # Another test of the same file: the panel shows the chosen test only.
            ({"metric": "rps_total", "run": "latency_compare_images", "series": "rid_isa_sub",
              "source": "dss_bench", "arm": arm, "reference": ref},
             {"verdict": "improvement", "value": 110.0, "baseline": 100.0, "change_pct": 10.0,
              "change_run": "latency_compare_images", "baseline_runs": 1, "method": "arm_compare",
              "backfill": False, "variants": 4, "variants_agree": 4},
             dss_time),
        ]
        cls.write("\n".join(lp_line("perfship_verdict", dict(tags, host="test"), fields, t)
                            for tags, fields, t in cls.verdicts))

    @classmethod
    def write_triage(cls):
        """perfship_triage points as docs/schema.md ("Triage decisions")
        defines them: an acknowledgement of the nightly regression, an
        exclusion on one machine, and the undo of the exclusion, an hour
        apart after the newer run."""
        new, failed = "daily-perf-1cb7c2d80874", "daily-perf-ba4674aa5495"
        t = max(r["time"] for r in cls.influx.query(
            DB, 'SELECT "cycleAvgDuration" FROM "loadgen_run" GROUP BY "run"')) + 3600 * 10**9
        cls.triage = [
            ({"id": "t0000000000a1", "action": "ack"},
             {"run": new, "metric": "cycleAvgDuration", "who": "ana",
              "reason": "expected: the new cache costs 14 %", "ticket": "https://tickets.example/T-1"}, t),
            ({"id": "t0000000000a2", "action": "exclude", "host": "test"},
             {"run": failed, "who": "bo", "reason": "noisy neighbour"}, t + 3600 * 10**9),
            ({"id": "t0000000000a3", "action": "undo"},
             {"revokes": "t0000000000a2", "who": "bo", "reason": "it was the code after all"},
             t + 2 * 3600 * 10**9),
        ]
        cls.write("\n".join(lp_line("perfship_triage", tags, fields, t)
                            for tags, fields, t in cls.triage))

    @classmethod
    def write_alerts(cls):
        """perfship_alert points (docs/schema.md, "Alerts"), by hand: two run
        events at the fixture runs' time, two agent events in the last hour."""
        end = {r["run"]: r["time"] for r in cls.influx.query(
            DB, 'SELECT "text" FROM "runs" WHERE "event" = \'end\' GROUP BY "run"')}
        failed, new = "daily-perf-ba4674aa5495", "daily-perf-1cb7c2d80874"
        cls.alerts = [
            ({"event": "run_failed", "source": "loadgen"},
             {"run": failed, "text": f"run {failed} failed", "id": f"run_failed:{failed}"}, end[failed] + 10**9),
            ({"event": "regression", "source": "loadgen"},
             {"run": new, "text": f"cycleAvgDuration regressed at {new}", "id": f"regression:{new}"},
             end[new] + 10**9),
            ({"event": "agent_unhealthy", "source": "perfship"},
             {"run": "agent", "text": "perfship cannot write to InfluxDB", "id": "agent_unhealthy:1"},
             cls.health_end - 20 * 60 * 10**9),
            ({"event": "agent_recovered", "source": "perfship"},
             {"run": "agent", "text": "perfship writes again", "id": "agent_recovered:1"},
             cls.health_end - 10 * 60 * 10**9),
        ]
        cls.write("\n".join(lp_line("perfship_alert", dict(tags, host="test"), fields, t)
                            for tags, fields, t in cls.alerts))

    @classmethod
    def keys_written(cls):
        """measurement -> the tag and field keys that landed in InfluxDB."""
        out = {}
        for r in cls.influx.query(DB, "SHOW MEASUREMENTS"):
            m = r["name"]
            keys = {k["tagKey"] for k in cls.influx.query(DB, f'SHOW TAG KEYS FROM "{m}"')}
            keys |= {k["fieldKey"] for k in cls.influx.query(DB, f'SHOW FIELD KEYS FROM "{m}"')}
            out[m] = keys
        return out

    # -- helpers -----------------------------------------------------------
    def ranges(self, slug):
        if slug in ("daily-runs", "one-run"):
            origins = [time_origin(r) for r in FIXTURE_STATUS]
            return int((min(origins) - 86400) * 1e9), int((max(origins) + 2 * 86400) * 1e9)
        if slug == "dss-bench":
            mt = min(os.path.getmtime(os.path.join(DSS, p)) for p in self.dss_files)
            first = min(s[4] for s in benchmarker_steps()).timestamp()  # the benchmarker's
            return int((min(mt, first) - 86400) * 1e9), time.time_ns() + 86400 * 10**9
        return self.health_end - 3600 * 10**9, self.health_end + 60 * 10**9

    def run_cell(self, d, index, variables):
        """Runs the cell's query as Grafana and as Chronograf would send it;
        both must give the same answer. Returns the series."""
        start, end = self.ranges(d["slug"])
        with open(os.path.join(DASH, "grafana", "dashboards", d["slug"] + ".json")) as f:
            panel = json.load(f)["panels"][index]
        with open(os.path.join(DASH, "chronograf", d["slug"] + ".dashboard")) as f:
            chrono = json.load(f)["cells"][index]
        self.assertEqual(panel["title"], d["cells"][index]["title"])
        gq = fill_grafana(panel["targets"][0]["query"], start, end, variables)
        # Chronograf's lower bound is exclusive, Grafana's inclusive.
        cq = fill_chronograf(chrono["queries"][0]["query"], start - 1, end, variables)
        gs = self.influx.series(DB, gq)
        cs = self.influx.series(DB, cq)
        self.assertEqual(gs, cs, f"Grafana and Chronograf differ for {panel['title']}")
        return gs

    @staticmethod
    def rows(series):
        out = []
        for s in series:
            for v in s.get("values", []):
                row = dict(zip(s["columns"], v))
                row.update(s.get("tags") or {})
                out.append(row)
        return out

    def verdict_fields(self):
        """The hand-written verdicts, tags and fields in one dict each."""
        return [dict(fields, **tags) for tags, fields, _ in self.verdicts]

    def cells(self, d):
        for i, c in enumerate(d["cells"]):
            yield i, c, c["expect"].get("kind")

    def assertClose(self, got, want, what):
        if want is None:
            self.assertIsNone(got, what)
        else:
            self.assertIsNotNone(got, what)
            self.assertAlmostEqual(float(got), float(want), places=6, msg=what)

    # -- the tests ------------------------------------------------------------
    def test_everything_written_is_documented(self):
        """docs/schema.md is the authority: every measurement, tag and field
        that the fixtures produce through `convert` is described there."""
        words = schema_words()
        for m, keys in self.keys_written().items():
            with self.subTest(measurement=m):
                self.assertIn(m, words)
                self.assertEqual(keys - words - {"host"}, set(), f"undocumented keys of {m}")

    def test_variables_and_annotations(self):
        for d in build.DASHBOARDS:
            with open(os.path.join(DASH, "grafana", "dashboards", d["slug"] + ".json")) as f:
                g = json.load(f)
            # The pickers list what the dashboard's range holds (Grafana fills
            # $timeFilter in a variable refreshed on a time range change).
            start, end = self.ranges(d["slug"])
            for v in g["templating"]["list"]:
                vals = {r["value"] for r in self.influx.query(DB, fill_grafana(v["query"], start, end, {}))}
                with self.subTest(dashboard=d["slug"], variable=v["name"], bound="before the data"):
                    # The bound reaches the server: a range before every
                    # point lists nothing (InfluxDB 1.x keeps the shards that
                    # overlap the range, InfluxDB 3 the rows in it).
                    self.assertEqual(self.influx.query(DB, fill_grafana(v["query"], 0, 10**9, {})), [])
                with self.subTest(dashboard=d["slug"], variable=v["name"]):
                    if v["name"] == "run":
                        self.assertEqual(vals, {r for r in FIXTURE_STATUS if finish_stats(r)})
                    elif v["name"] in ("revision", "compare_revision"):
                        self.assertEqual(vals, {r.rsplit("-", 1)[1] for r in FIXTURE_STATUS if finish_stats(r)})
                    elif v["name"] == "dss_run":
                        self.assertEqual(vals, {p.split("/")[0] for p in self.dss_files})
                    elif v["name"] == "dss_test":
                        self.assertIn("rid_isa", vals)
                    elif v["name"] == "bm_config":
                        self.assertEqual(vals, {"isas_images"})
                    elif v["name"] == "bm_load":
                        self.assertEqual(vals, {"ramp"})
            # Chronograf asks the same through its meta-query template.
            with open(os.path.join(DASH, "chronograf", d["slug"] + ".dashboard")) as f:
                templates = json.load(f)["templates"]
            for t in templates:
                if t["type"] == "text":
                    continue
                tq = t["query"]
                q = (tq["influxql"].replace(":database:", f'"{tq["db"]}"')
                     .replace(":measurement:", f'"{tq["measurement"]}"').replace(":tagKey:", f'"{tq["tagKey"]}"'))
                # the pickers' text variable, set to reach back to the range's start
                q = q.replace(f":{build.CHRONOGRAF_RANGE_VAR}:", f"{(time.time_ns() - start) // 10**9 + 1}s")
                q = fill_chronograf(q, start - 1, end, {})
                grafana_var = next(v for v in g["templating"]["list"] if f":{v['name']}:" == t["tempVar"])
                gq = fill_grafana(grafana_var["query"], start, end, {})
                with self.subTest(dashboard=d["slug"], chronograf_template=t["tempVar"]):
                    self.assertEqual({r["value"] for r in self.influx.query(DB, q)},
                                     {r["value"] for r in self.influx.query(DB, gq)})
            names = [a["name"] for a in g["annotations"]["list"] if not a.get("builtIn")]
            if d is not build.HEALTH:
                # every dashboard of runs marks runs, verdicts and decisions on its
                # time-series panels (the agent's health has no runs to judge)
                self.assertEqual(names, [a["name"] for a in build.JUDGED_ANNOTATIONS])
            for a in g["annotations"]["list"]:
                if a.get("builtIn"):
                    continue
                t = a["target"]
                start, end = self.ranges("daily-runs")
                if d["slug"] == "dss-bench":
                    start = min(start, self.ranges("dss-bench")[0])
                    end = max(end, self.ranges("dss-bench")[1])
                rows = self.influx.query(DB, fill_grafana(t["query"], start, end, {}))
                tags = t["tagsColumn"].split(",")
                with self.subTest(dashboard=d["slug"], annotation=a["name"]):
                    # what Grafana shows: a text and the tags of each mark
                    self.assertTrue(rows and all(r[t["textColumn"]] for r in rows))
                    self.assertTrue(all(k in r for r in rows for k in tags), rows[:2])
                    if a["name"] == build.RUN_MARKERS_ANNOTATION["name"]:
                        # A start and an end marker for every fixture run.
                        self.assertGreaterEqual(len(rows), 2 * len(FIXTURE_STATUS))
                        # (and the benchmarker report's, where the range holds it)
                        self.assertEqual({r["status"] for r in rows} - {"running", "unstable"},
                                         set(FIXTURE_STATUS.values()))
                    elif a["name"] == build.VERDICT_ANNOTATION["name"]:
                        # every change in range, and nothing that is none
                        want = sorted((tg["run"], tg["metric"], tg.get("stage", ""), f["verdict"])
                                      for tg, f, tm in self.verdicts
                                      if f["verdict"] != "none" and start <= tm <= end)
                        self.assertGreaterEqual(len(want), 3)
                        self.assertEqual(len(rows), len(want), rows)
                        self.assertEqual(sorted((r["run"], r["metric"], r["verdict"]) for r in rows),
                                         sorted(w[:2] + w[3:] for w in want))
                        self.assertTrue(all(r["host"] == "test" for r in rows))
                    elif a["name"] == build.TRIAGE_ANNOTATION["name"]:
                        self.assertEqual(sorted((r["action"], r["reason"]) for r in rows),
                                         sorted((tg["action"], f["reason"])
                                                for tg, f, tm in self.triage))
                        ack = next(r for r in rows if r["action"] == "ack")
                        self.assertEqual((ack["run"], ack["metric"], ack["who"], ack["ticket"]),
                                         ("daily-perf-1cb7c2d80874", "cycleAvgDuration", "ana",
                                          "https://tickets.example/T-1"))
                        excl = next(r for r in rows if r["action"] == "exclude")
                        self.assertEqual(excl["host"], "test")
                    else:
                        self.fail(f"an annotation this test does not know: {a['name']}")

    def test_daily_runs(self):
        d = build.DAILY
        csvrows = stats_csv()
        finished = {r: finish_stats(r) for r in FIXTURE_STATUS if finish_stats(r)}
        rev, other = "9eb37164f6f7", "1cb7c2d80874"
        for i, c, kind in self.cells(d):
            series = self.run_cell(d, i, {"revision": rev, "compare_revision": other})
            rows = self.rows(series)
            with self.subTest(cell=c["title"]):
                if kind == "runs_status":
                    self.assertEqual({r["run"]: r["status"] for r in rows}, FIXTURE_STATUS)
                    self.assertEqual(len(rows), len(FIXTURE_STATUS), "one row per run")
                elif kind == "bad_run_count":
                    bad = sum(1 for s in FIXTURE_STATUS.values() if s in ("failed", "interrupted", "stalled"))
                    self.assertEqual(rows[0]["bad runs"], bad)
                elif kind == "started_count":
                    self.assertEqual(rows[0]["runs started"], len(FIXTURE_STATUS))
                elif kind == "run_summaries":
                    self.assertEqual({r["run"] for r in rows}, set(finished))
                    for r in rows:
                        want = csvrows[r["run"]]
                        self.assertEqual(r["status"], FIXTURE_STATUS[r["run"]])
                        for col in ("chainBootstrapDuration", "walletDeployDuration", "loadgenDeployDuration",
                                    "cycleSuccessRate", "cycleAvgDuration"):
                            self.assertClose(r[col], csv_float(want[col]), f"{r['run']} {col}")
                        self.assertEqual(r["sdkRevision"], want["sdkRevision"])
                        self.assertClose(r["live_avgSwingsetTime"],
                                         finished[r["run"]]["liveBlocksSummary"]["avgSwingsetTime"], r["run"])
                elif kind == "run_field":
                    self.assertTrue(rows, "no points")
                    col = c["expect"]["column"]
                    field = c["expect"]["field"]
                    want = []
                    for run, row in csvrows.items():
                        if c["expect"].get("success_only") and row["success"] != "true":
                            continue
                        if field in row:  # the runner's own CSV, where it has the column
                            v = csv_float(row[field])
                        else:             # else the run's live block summary
                            v = finished[run]["liveBlocksSummary"].get(field[len("live_"):])
                        if v is not None:
                            want.append(v)
                    want.sort()
                    got = sorted(r[col] for r in rows if r[col] is not None)
                    self.assertEqual(len(series), 1, "one trend line")
                    self.assertEqual(len(got), len(want))
                    for g, w in zip(got, want):
                        self.assertAlmostEqual(g, w, places=6)
                elif kind in ("revision_stage_cycles", "revision_stage_blocks"):
                    # Two revisions side by side, stage by stage, as the runner's CSV has them.
                    for r_rev, run in ((rev, "daily-perf-9eb37164f6f7"), (other, "daily-perf-1cb7c2d80874")):
                        want = csvrows[run]
                        mine = [r for r in rows if r["revision"] == r_rev]
                        stages = sorted(int(k[5:].split("_")[0]) for k in want
                                        if k.startswith("stage") and k.endswith("_cycleSuccessRate") and want[k] != "")
                        if kind == "revision_stage_cycles":
                            self.assertEqual(sorted(int(r["stage"]) for r in mine), stages)
                            for r in mine:
                                self.assertClose(r["avgDuration"], want[f"stage{r['stage']}_cycleAvgDuration"], r["stage"])
                                self.assertClose(r["cycleSuccessRate"], want[f"stage{r['stage']}_cycleSuccessRate"], r["stage"])
                        else:
                            by_stage = {int(r["stage"]): r for r in mine}
                            self.assertLessEqual(set(stages), set(by_stage))
                            for n in stages:
                                self.assertClose(by_stage[n]["avgSwingsetTime"], want[f"stage{n}_avgSwingsetBlockTime"], n)
                                self.assertClose(by_stage[n]["avgSwingsetPercentage"], want[f"stage{n}_avgSwingsetPercentage"], n)
                elif kind == "regression_count":
                    want = [v for v in self.verdict_fields() if v["source"] == "loadgen"
                            and v["method"] == "edivisive" and v["verdict"] == "regression"]
                    self.assertEqual(len(want), 2, "one live, one backfilled")
                    self.assertEqual(rows[0]["regressions"], len(want))
                elif kind == "verdicts":
                    want = {(v["series"], v["metric"], v["run"]): v for v in self.verdict_fields()
                            if v["method"] == "edivisive" and v["verdict"] != "none"}
                    self.assertEqual({(r["series"], r["metric"], r["run"]) for r in rows}, set(want))
                    for r in rows:
                        v = want[(r["series"], r["metric"], r["run"])]
                        for col in ("verdict", "value", "baseline", "change_pct", "change_run",
                                    "baseline_runs", "revision", "backfill"):
                            self.assertEqual(r[col], v[col], col)
                elif kind == "verdict_change":
                    want = sorted((v["metric"], v["change_pct"]) for v in self.verdict_fields()
                                  if v["method"] == "edivisive")
                    self.assertEqual(len(series), len({m for m, _ in want}), "one line per metric")
                    self.assertEqual(sorted((r["metric"], r["change %"]) for r in rows), want)
                elif kind == "alerts":
                    self.assertEqual({(r["event"], r["source"], r["run"], r["text"]) for r in rows},
                                     {(tags["event"], tags["source"], f["run"], f["text"])
                                      for tags, f, _ in self.alerts if tags["source"] != "perfship"})
                elif kind == "markers":
                    self.assertIn(("daily-perf-31400797d904", "end", "stalled"),
                                  {(r["run"], r["event"], r["status"]) for r in rows})
                    self.assertEqual({r["run"] for r in rows if r["event"] == "start"}, set(FIXTURE_STATUS))
                else:
                    self.fail(f"no expectation for {c['title']}")

    def test_one_run_for_every_fixture_run(self):
        d = build.ONE_RUN
        csvrows = stats_csv()
        for run in FIXTURE_STATUS:
            st = finish_stats(run)
            for i, c, kind in self.cells(d):
                rows = self.rows(self.run_cell(d, i, {"run": run}))
                with self.subTest(run=run, cell=c["title"]):
                    if st is None and kind != "timeseries":
                        self.assertEqual(rows, [], "no summaries before perf-finish")
                        continue
                    if kind == "stage_cycles":
                        # One row per loadgen stage, the CSV's stage<N>_ columns value for value.
                        want = csvrows[run]
                        stages = {k[5:].split("_")[0] for k in want
                                  if k.startswith("stage") and k.endswith("_cycleSuccessRate") and want[k] != ""}
                        self.assertEqual({r["stage"] for r in rows}, stages)
                        self.assertEqual(len(rows), len(stages))
                        for r in rows:
                            self.assertClose(r["cycleSuccessRate"], want[f"stage{r['stage']}_cycleSuccessRate"], r["stage"])
                            self.assertClose(r["avgDuration"], want[f"stage{r['stage']}_cycleAvgDuration"], r["stage"])
                            self.assertClose(r["p95Duration"], st["stages"][r["stage"]]["cyclesSummaries"]["all"]["p95Duration"], r["stage"])
                    elif kind == "stage_blocks":
                        want = csvrows[run]
                        by_stage = {r["stage"]: r for r in rows}
                        self.assertEqual(set(by_stage), {k for k, s in st["stages"].items()
                                                         if (s.get("blocksSummaries") or {}).get("onlyLive")})
                        for k in want:
                            m = re.fullmatch(r"stage(\d+)_avgSwingsetBlockTime", k)
                            if m and want[k] != "":
                                self.assertClose(by_stage[m.group(1)]["avgSwingsetTime"], want[k], k)
                                self.assertClose(by_stage[m.group(1)]["avgSwingsetPercentage"],
                                                 want[f"stage{m.group(1)}_avgSwingsetPercentage"], k)
                    elif kind == "stage_timing":
                        self.assertEqual({r["stage"] for r in rows}, set(st["stages"]))
                        for r in rows:
                            s = st["stages"][r["stage"]]
                            self.assertClose(r["restart time"], s.get("chainInitDuration"), r["stage"])
                            cfg = s["stageConfig"]
                            self.assertIs(r["loadgen"], (not cfg.get("chainOnly")) and cfg.get("durationConfig") != 0)
                    elif kind == "stage_tasks":
                        want = {(k, t) for k, s in st["stages"].items()
                                for t in (s.get("cyclesSummaries") or {}) if t != "all"}
                        self.assertEqual({(r["stage"], r["task"]) for r in rows}, want)
                    elif kind == "failed_cycles":
                        want = {(k, c2["task"], c2["seq"]) for k, s in st["stages"].items()
                                for c2 in s["cycles"].values() if c2.get("success") is False}
                        self.assertEqual({(r["stage"], r["task"], r["seq"]) for r in rows}, want)
                    elif kind == "run_verdicts":
                        want = {(v["metric"], v.get("stage", ""), v["verdict"], v["method"], v["change_pct"])
                                for v in self.verdict_fields() if v["run"] == run}
                        self.assertEqual({(r["metric"], r["stage"], r["verdict"], r["method"], r["change_pct"])
                                          for r in rows}, want)
                        self.assertEqual(len(rows), len(want))
                    elif kind == "timeseries":
                        self.check_timeseries(run, st, c, rows)
                    else:
                        self.fail(f"no expectation for {c['title']}")

    def check_timeseries(self, run, st, c, rows):
        m = c["expect"]["measurement"]
        lines = list(perf_lines(run))
        if m == "loadgen_block":
            self.assertEqual(bool(rows), bool(st), "blocks come with perf-finish")
        elif m == "loadgen_cycle":
            tasks = {c2["task"] for s in (st or {"stages": {}})["stages"].values() for c2 in s["cycles"].values()}
            self.assertEqual({r["task"] for r in rows}, tasks)
        elif m == "loadgen_process":
            procs = set()
            for r in lines:
                if r.get("type") == "perf-chain-process-usage":
                    procs.add("kernel" if r["processType"] == "kernel"
                              else r["vatID"] + (":" + r["name"] if r.get("name") else ""))
            self.assertTrue(procs, "fixture has process records")
            if c["title"].startswith("Process CPU"):
                # A derivative needs two samples of the same process.
                self.assertTrue(rows)
                self.assertLessEqual({r["process"] for r in rows}, procs)
            else:
                self.assertEqual({r["process"] for r in rows}, procs)
        elif m == "loadgen_storage":
            self.assertIn("total", {r["area"] for r in rows})
            total = max(r["kib"] for r in rows if r["area"] == "total")
            want = max(sum(r["chain"].values()) for r in lines if r.get("type") == "perf-chain-storage-usage")
            self.assertEqual(total, want)

    def test_dss_bench(self):
        d = build.DSS
        with open(os.path.join(DSS, "latency_compare_images", "results.json")) as f:
            res = json.load(f)
        test = "rid_isa"
        arms = res["by_test"][test]
        for i, c, kind in self.cells(d):
            series = self.run_cell(d, i, {"dss_run": "latency_compare_images", "dss_test": test,
                                          "bm_config": "isas_images", "bm_load": "ramp"})
            with self.subTest(cell=c["title"]):
                if kind == "dss_arms":
                    field = c["expect"]["field"]
                    all_rows = self.rows(series)
                    self.assertEqual({r["arm"] for r in all_rows}, set(arms), "one series per arm")
                    for arm, pts in arms.items():
                        # In the sweep's order: variantIndex, label, value.
                        rows = sorted((r for r in all_rows if r["arm"] == arm), key=lambda r: r["variantIndex"])
                        self.assertEqual([r["variant"] for r in rows], [p["label"] for p in pts])
                        for r, p in zip(rows, pts):
                            # A latency of 0.0 means "no samples": absent (docs/schema.md).
                            want = None if field.endswith("_ms") and p[field] == 0 else p[field]
                            self.assertClose(r[field], want, f"{arm} {r['variant']}")
                elif kind == "dss_points":
                    rows = self.rows(series)
                    self.assertEqual(len(rows), sum(len(p) for p in arms.values()))
                    errs = {(r["arm"], r["variant"]): r["errors"] for r in rows}
                    for arm, pts in arms.items():
                        for p in pts:
                            self.assertEqual(errs[(arm, p["label"])], p["errors"])
                elif kind == "arm_verdicts":
                    rows = self.rows(series)
                    want = {(v["arm"], v["reference"], v["metric"], v["verdict"], v["change_pct"],
                             v["variants"], v["variants_agree"])
                            for v in self.verdict_fields() if v["method"] == "arm_compare" and v["series"] == test}
                    self.assertEqual({(r["arm"], r["reference"], r["metric"], r["verdict"], r["change_pct"],
                                       r["variants"], r["variants_agree"]) for r in rows}, want)
                    self.assertEqual({r["reference"] for r in rows}, {list(arms)[0]},
                                     "the first arm of the results file is the reference")
                elif kind == "dss_trend":
                    rows = self.rows(series)
                    self.assertLessEqual(set(arms), {r["arm"] for r in rows})
                    best = {r["arm"]: r["rps_total"] for r in rows}
                    for arm, pts in arms.items():
                        self.assertGreaterEqual(best[arm], max(p["rps_total"] for p in pts))
                elif kind in ("bm_steps", "bm_fits", "bm_peak_trend"):
                    self.check_benchmarker(kind, self.rows(series))
                else:
                    self.fail(f"no expectation for {c['title']}")

    def check_benchmarker(self, kind, rows):
        steps = benchmarker_steps()
        arms = {s[0] for s in steps}
        self.assertEqual({r["arm"] for r in rows if kind != "bm_peak_trend"} or arms, arms)
        if kind == "bm_steps":
            got = {(r["arm"], r["step"]): r for r in rows}
            self.assertEqual(set(got), {(s[0], s[1]) for s in steps})
            for arm, k, reason, tp, _ in steps:
                self.assertEqual(got[(arm, k)]["termination_reason"], reason)
                self.assertClose(got[(arm, k)]["throughput"], tp, f"{arm} step {k}")
        elif kind == "bm_fits":
            for r in rows:  # every Completed step is a point of the fit, kept or not
                completed = sum(1 for s in steps if s[0] == r["arm"] and s[2] == "Completed")
                self.assertEqual(r["points_kept"] + r["points_discarded"], completed)
            self.peaks = {r["arm"]: r["x_n_star"] for r in rows if r["x_n_star"] is not None}
        else:
            best = {r["arm"]: r["x_n_star"] for r in rows}
            self.assertTrue(best, "no peak throughput in the range")
            for arm, peak in best.items():
                self.assertIn(arm, arms)
                self.assertGreater(peak, 0)

    def test_health(self):
        d = build.HEALTH
        for i, c, kind in self.cells(d):
            rows = self.rows(self.run_cell(d, i, {}))
            with self.subTest(cell=c["title"]):
                if kind == "health_last":
                    self.assertEqual(len(rows), 1)
                    self.assertEqual(rows[0]["host"], "test-health")
                    self.assertEqual(rows[0]["points_written"], 29000)
                    self.assertEqual(rows[0]["uptime_s"], 290)
                elif kind == "agent_alerts":
                    self.assertEqual({(r["event"], r["text"]) for r in rows},
                                     {(tags["event"], f["text"]) for tags, f, _ in self.alerts
                                      if tags["event"].startswith("agent_")})
                elif kind == "health_series":
                    col = c["expect"]["column"]
                    got = [r[col] for r in rows if r[col] is not None]
                    self.assertEqual({r["host"] for r in rows}, {"test-health"})
                    self.assertEqual(got, self.expected_health(col))
                else:
                    self.fail(f"no expectation for {c['title']}")

    def expected_health(self, col):
        """What InfluxDB's GROUP BY time(1m) with max() and a derivative or
        difference makes of the heartbeat points this test wrote."""
        buckets = {}
        for i in range(30):
            t = self.health_end - (29 - i) * 10 * 10**9
            field = {"points/s": i * 1000, "points rejected": i // 10, "retries": i // 5,
                     "pending": (i * 37) % 500, "lag": i % 4}[col]
            b = t // (60 * 10**9)
            buckets[b] = max(buckets.get(b, field), field)
        maxes = [buckets[b] for b in sorted(buckets)]
        if col == "points/s":
            return [(b - a) / 60 for a, b in zip(maxes, maxes[1:]) if b >= a]
        if col in ("points rejected", "retries"):
            return [b - a for a, b in zip(maxes, maxes[1:]) if b >= a]
        return maxes

    def test_cookbook(self):
        """Every InfluxQL recipe of docs/queries.md that does not depend on
        the current time answers with data from the fixture runs."""
        blocks = [b.strip() for b in doc_blocks("sql")]
        self.assertGreaterEqual(len(blocks), 10)
        ran = 0
        for q in blocks:
            if "now()" in q:
                self.influx.series(DB, q)  # valid InfluxQL; fixture runs are older
                continue
            with self.subTest(q):
                self.assertTrue(self.influx.series(DB, q), "no data")
                ran += 1
        self.assertGreaterEqual(ran, 10)

    def alert_task_expectations(self):
        """task -> (groups its filter lets through to the alert, groups its
        from().where alone selects): the hand-written points decide both."""
        new, arm = "daily-perf-1cb7c2d80874", "local/dss:pr-1523"

        def verdict_groups(method, keys):
            return {tuple(v[k] for k in keys) for v in self.verdict_fields() if v["method"] == method}
        return {
            # Both ended runs were found already ended by `convert` (backfill=true).
            "perfship_run_failed": (set(), {("daily-perf-ba4674aa5495",), ("manual-7102939",)}),
            "perfship_run_stalled": ({("daily-perf-31400797d904",)}, {("daily-perf-31400797d904",)}),
            "perfship_regression_revision": (
                {("daily-perf", "cycleAvgDuration", new)},
                verdict_groups("edivisive", ("series", "metric", "run"))),
            "perfship_regression_stage_drift": (
                {("daily-perf", "stage_avgSwingsetTime", new, "4")},
                verdict_groups("stage_drift", ("series", "metric", "run", "stage"))),
            "perfship_regression_dss_arm": (
                {("rid_isa", "rps_total", "latency_compare_images", arm)},
                verdict_groups("arm_compare", ("series", "metric", "run", "arm"))),
        }

    def check_annotation_task(self, text):
        """The Chronograf annotation task: each pipeline reads one measurement,
        its filter selects exactly the verdicts with a change (every triage
        decision), and its texts name only tags and fields the stored points
        have."""
        pipelines = re.split(r"(?m)^stream\s*$", text)[1:]
        read = {}
        for body in pipelines:
            m = re.search(r"\.measurement\('(\w+)'\)", body)
            measurement = m.group(1)
            keys = {r["tagKey"] for r in self.influx.query(DB, f'SHOW TAG KEYS FROM "{measurement}"')}
            keys |= {r["fieldKey"] for r in self.influx.query(DB, f'SHOW FIELD KEYS FROM "{measurement}"')}
            keys |= {"host", "time"}
            evals = body[body.index("|eval("):body.index(".as(")]
            self.assertLessEqual(set(re.findall(r'"(\w+)"', evals)), keys, measurement)
            cond = " AND ".join(f"({lambda_to_influxql(e)})" for _, e in tick_where_lambdas(body))
            q = f'SELECT * FROM "{measurement}"' + (f" WHERE {cond}" if cond else "")
            read[measurement] = self.influx.query(DB, q)
        self.assertEqual(sorted(read), ["perfship_triage", "perfship_verdict"])
        self.assertEqual(sorted((r["run"], r["metric"], r.get("stage") or "") for r in read["perfship_verdict"]),
                         sorted((tg["run"], tg["metric"], tg.get("stage", ""))
                                for tg, f, _ in self.verdicts if f["verdict"] != "none"))
        self.assertEqual(len(read["perfship_triage"]), len(self.triage))

    def test_alert_tasks_select_what_must_alert(self):
        """Kapacitor cannot run here (ticklint in test_loaders.py checks that
        it would define and start each task). What its stream tasks do with
        the points is checked instead: each filter lambda, written as the
        equivalent InfluxQL condition, selects exactly the groups that must
        alert from the stored points (the verdicts and markers above), and
        the groupBy and the id/message/details templates name tags and fields
        those points have."""
        expect = self.alert_task_expectations()
        seen = set()
        for path in sorted(glob.glob(os.path.join(DASH, "kapacitor", "load", "tasks", "*.tick"))):
            task = os.path.basename(path)[:-len(".tick")]
            with open(path) as f:
                text = f.read()
            with self.subTest(task):
                self.assertRegex(text, r"(?m)^stream\s*$", "every shipped task is a stream task")
                if task == TICK_ANNOTATIONS:
                    self.check_annotation_task(text)
                    continue
                m = re.search(r"\.measurement\('(\w+)'\)", text)
                measurement = m.group(1)
                tag_keys = {r["tagKey"] for r in self.influx.query(DB, f'SHOW TAG KEYS FROM "{measurement}"')}
                tag_keys.add("host")  # a global tag of every point (docs/schema.md)
                field_keys = {r["fieldKey"] for r in self.influx.query(DB, f'SHOW FIELD KEYS FROM "{measurement}"')}
                group = re.findall(r"'(\w+)'", re.search(r"\.groupBy\(([^)]*)\)", text).group(1))
                self.assertLessEqual(set(group), tag_keys, "groupBy names tags")
                self.assertLessEqual(set(re.findall(r'index \.Tags "(\w+)"', text)), tag_keys)
                self.assertLessEqual(set(re.findall(r'index \.Fields "(\w+)"', text)), field_keys)
                lambdas = tick_where_lambdas(text)
                if task not in expect:
                    self.assertEqual(lambdas, [], f"{task} filters points: say what it must select")
                    continue
                seen.add(task)
                must_alert, candidates = expect[task]

                def selected(kinds):
                    cond = " AND ".join(f"({lambda_to_influxql(e)})" for k, e in lambdas if k in kinds)
                    rows = self.influx.query(DB, f'SELECT * FROM "{measurement}" WHERE {cond} GROUP BY *')
                    return {tuple(r.get(k, "") for k in group) for r in rows}
                self.assertEqual(selected({"from"}), candidates, "from().where")
                self.assertEqual(selected({"from", "where"}), must_alert, "what reaches |alert()")
        self.assertEqual(seen, set(expect), "a task this test expects is missing")

    def test_lambda_translation_refuses_what_it_cannot_translate(self):
        self.assertEqual(lambda_to_influxql('"verdict" == \'regression\' AND "backfill" == FALSE'),
                         '"verdict" = \'regression\' AND "backfill" = false')
        for expr in ('"x" =~ /a/', 'strLength("x") > 2', '"x" == \'a\' AND'):
            with self.subTest(expr):
                with self.assertRaises(AssertionError):
                    lambda_to_influxql(expr)

if __name__ == "__main__":
    unittest.main(verbosity=2)
