"""The structure docs/architecture.md draws holds in the code.

- The includes among agent/ and include/ form no circle.
- Folders depend only downward, in the order of the data flow: a folder
  includes only the folders ALLOWED lists for it (so a new dependency is a
  decision made here, next to the picture, not an accident).
- `perfship run` is three layers in three folders: service -> judging ->
  pipeline, never back (LAYERS). The data path (agent/pipeline/) includes
  nothing of the judges or the service, the judges nothing of the service,
  and the service sees the judges through their one face (JUDGING_FACE).
- Within each layer, a stage includes only stages below it (STAGE_ORDER):
  stages never call back up into the service.
- A stage's parts share private headers beside their sources
  (agent/pipeline/slogs_private.h, agent/influx/sink_private.h), which no
  other folder includes.
- The transport (net/) knows nothing of InfluxDB.
- Every read of the server goes through readback/: no other folder quotes
  InfluxQL (influx/influxql.h; influx/ itself for CREATE DATABASE), sends
  a query (ps_influx_query_post) or walks an answer ("results"); the
  judges include of report/ only the page's writer (READ_RULES).
- Neither the data path nor the judges branch on a format's id (PS_FMT_*):
  what a format brings (run folders, run markers, backfill) is an entry of
  its ops table (include/formats/format.h), and they ask for the entry. Nor
  does core/ beyond its table of format names: the configuration loader
  asks what a source's format allows through the rules its caller gives.
- The judged figures are written once (agent/core/figures.c): no other
  file of agent/ spells a figure's name or a selector's value, except the
  producers of the data (formats/, runs/), whose fields they are.
- Every header has a source file of its name, except the interfaces that
  many files implement (INTERFACES), so a reader finds a function where its
  header says.
- Text from the data reaches a terminal through one writer
  (core/visible.h: ps_visible_put, ps_visible_say): no file but core/
  shows text through ps_visible_into itself, and in the commands that print
  data (DATA_PRINTERS) a printf-family %s, fputs or puts is given only the
  code's own text (a literal, a choice of literals, a name function, or a
  buffer the command formats itself: OWN_TEXT).
- The source files of one folder use each other one way: no circle of
  calls or tables among them (CALL_CIRCLES_NOT_YET lists the ones left).
- Each flag of a tracked file (pl_file) is written by one module, the one
  FILE_FLAG_OWNERS names; the others ask it through a function.
- No function is longer than MAX_FUNCTION_LINES (LONG_FUNCTIONS lists the
  ones left, each with its length, and only shrinks).

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
    "readback": {"core", "net", "influx", "runs", "verdict"},
    "report": {"core", "influx", "runs", "verdict", "readback"},
    # readback: its threadpool runner, for CREATE DATABASE (pipeline/createdb)
    "pipeline": {"core", "net", "influx", "runs", "formats", "input", "state", "readback"},
    "judging": {"core", "influx", "runs", "formats", "state", "verdict", "alert",
                "readback", "report", "pipeline"},
    "service": {"core", "formats", "input", "state", "pipeline", "judging"},
    "cmd": {"core", "net", "influx", "runs", "formats", "input", "state",
            "verdict", "alert", "readback", "report", "service"},
}

# The layers of `perfship run`, bottom first: a layer includes only those
# before it (docs/architecture.md draws them).
LAYERS = ["pipeline", "judging", "service"]

# The one header of the judges the service may include.
JUDGING_FACE = "include/judging/judging.h"

# The stages of each layer, bottom first: each includes only earlier ones
# of its layer. A new stage gets its place here.
STAGE_ORDER = {
    "pipeline": [
        "shared", "gens", "selfmetrics_point", "registry", "commit", "delivery",
        "createdb", "reader", "runtracker", "slogs", "router", "selfmetrics",
    ],
    "judging": [
        "verdicts_collect", "verdicts_history", "verdicts_send", "verdicts",
        "alerting_raise", "alerting_clock", "alerting_runs", "alerting",
        "reporter", "judging",
    ],
    "service": ["reload", "service"],
}

# The parts of a stage: files of their own beside the stage's source, with
# private headers there (agent/pipeline/slogs_private.h), one stage to the
# others. Among themselves the parts of a stage are free.
STAGE_PARTS = {
    "verdicts_private": "verdicts", "verdicts_judge": "verdicts",
    "verdicts_triage": "verdicts", "verdicts_growth": "verdicts",
    "verdicts_fetch": "verdicts",
    "slogs_private": "slogs", "slogs_cycles": "slogs",
    "verdicts_slogdrift": "verdicts", "verdicts_sdblocks": "verdicts",
    "verdicts_sdheld": "verdicts",
}

# Headers many files implement, or that only declare types.
INTERFACES = {
    "include/cmd/cmd.h",              # one file per command
    "include/core/sysexits_ps.h",     # constants
    "include/formats/format.h",       # one file per format
    "include/report/assets.h",        # the page's script and style, generated at build time
}


# The one table of the judged figures, and who may spell their names too:
# the producers of the data (their fields are the data's). NOT_YET: files
# another branch of the same restructuring is splitting; they keep their
# own copy until that lands (then this set is emptied).
FIGURES = "agent/core/figures.c"
FIGURE_PRODUCERS = ("agent/formats/", "agent/runs/")
FIGURES_NOT_YET = set()
# The same word as a figure, meaning something else: the stage cycles' own
# success rate (a field of loadgen_stage_cycles the report shows).
FIGURES_HOMONYMS = {("agent/report/query.c", "cycleSuccessRate")}


def figure_strings():
    with open(os.path.join(ROOT, FIGURES), encoding="utf-8") as fh:
        text = fh.read()
    # the headline figures and the stage figures' verdict names (the other
    # run fields are also the run's own facts the report reads)
    names = set(re.findall(r'\bHEAD\("([^"]+)"', text))
    names |= {"stage_" + n for n in re.findall(r'\bSTAGE_FIG\("([^"]+)"', text)}
    names |= set(re.findall(r'\bGROWTH_FIG\("([^"]+)"', text))
    # selectors: #define LIVE "summary", "onlyLive" (the value; tag keys
    # such as `task` are also identity tags the report groups by)
    values = set(re.findall(r'^#define \w+ "\w+", "(\w+)"$', text, re.M))
    return names, values


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
    """(layer, stage) of a file of a layer of `perfship run`, else None."""
    layer = folder(path)
    if layer not in STAGE_ORDER:
        return None
    name = os.path.splitext(os.path.basename(path))[0]
    return layer, STAGE_PARTS.get(name, name)


# Who may do which part of reading the server back.
READ_HOME = {"readback", "influx"}
READ_SIGNS = ('"influx/influxql.h"', "ps_influx_query_post", '"results"')
JUDGING_REPORT = {"include/report/report.h"}


def read_violations(texts, g):
    """Every read of the server outside readback/: `texts` maps a file to
    its text, `g` is the include graph."""
    out = []
    for f, text in texts.items():
        if folder(f) in READ_HOME:
            continue
        for sign in READ_SIGNS:
            if sign in text:
                out.append(f"{f}: {sign} outside readback/ (read the server through "
                           "include/readback/)")
    for f, deps in g.items():
        if folder(f) != "judging":
            continue
        for d in deps:
            if folder(d) == "report" and d not in JUDGING_REPORT:
                out.append(f"{f} includes {d}: the judges include of report/ only the "
                           "page's writer; reads are readback/'s")
    return out


def source_texts():
    out = {}
    for f in source_files():
        with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
            out[f] = fh.read()
    return out


def layer_violations(g):
    """Every include that runs up or across the layers: a data-path file
    that includes a judge or the service, a judge that includes the
    service, the service including a judge other than by its face."""
    out = []
    for f, deps in g.items():
        src = folder(f)
        if src not in LAYERS:
            continue
        for d in deps:
            dst = folder(d)
            if dst not in LAYERS or dst == src:
                continue
            if LAYERS.index(dst) > LAYERS.index(src):
                out.append(f"{f} includes {d}: {src}/ is below {dst}/ and never "
                           "includes it")
            elif src == "service" and dst == "judging" and d != JUDGING_FACE:
                out.append(f"{f} includes {d}: the service sees the judges only "
                           f"through {JUDGING_FACE}")
    return out



# The commands that print strings from the data (runs, series, decisions,
# the server's words), and the variables of theirs that hold only text the
# command formats itself (a time, a change in percent, a duration the
# option parser checked, the id it made, a literal chosen earlier).
DATA_PRINTERS = ["agent/cmd/verdicts.c", "agent/cmd/verdicts_candidate.c",
                 "agent/cmd/verdicts_explain.c", "agent/cmd/triage.c", "agent/cmd/common.c",
                 "agent/cmd/status.c"]
OWN_TEXT = {"when", "change", "since", "id", "what", "cmd", "msg", "option", "running", "sd", "agent"}
PRINT_CALL = re.compile(r"\b(printf|fprintf|fputs|puts)\s*\(")
C_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
CONVERSION = re.compile(r"%[-+ #0]*(\*|\d+)?(\.(\*|\d+))?(hh|h|ll|l|z|j|t|L)?([a-zA-Z%])")


def call_args(text, i):
    """The top-level arguments of the call whose '(' ends just before i."""
    depth, args, cur, j = 0, [], "", i
    while j < len(text):
        c = text[j]
        if c == '"':
            m = C_STRING.match(text, j)
            cur += m.group(0)
            j = m.end()
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                args.append(cur.strip())
                return args
            depth -= 1
        elif c == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            j += 1
            continue
        cur += c
        j += 1
    raise AssertionError("a call that does not close")


def top_level_split(expr, sep):
    depth = 0
    pending = 0  # '?' seen before a ':' at this depth
    for k, c in enumerate(C_STRING.sub(lambda m: "_" * len(m.group(0)), expr)):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and c == "?" and sep == ":":
            pending += 1
        elif depth == 0 and c == sep:
            if sep == ":" and pending:
                pending -= 1
                continue
            return expr[:k].strip(), expr[k + 1:].strip()
    return None


def own_text(expr):
    """Whether `expr` can only be the code's own text."""
    expr = expr.strip()
    while expr.startswith("(") and expr.endswith(")"):
        expr = expr[1:-1].strip()
    if C_STRING.sub("", expr).strip() == "" and expr.startswith('"'):
        return True
    q = top_level_split(expr, "?")
    if q:
        branches = top_level_split(q[1], ":")
        return bool(branches) and own_text(branches[0]) and own_text(branches[1])
    if re.fullmatch(r"(ps_\w+_name|strerror|ps_verdict_kind_name)\(.*\)", expr, re.S):
        return True
    return expr in OWN_TEXT


def raw_data_prints(path):
    """(line, call) of each print in `path` that may show a data string
    other than through core/visible.h."""
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                 open(path).read(), flags=re.S)
    found = []
    for m in PRINT_CALL.finditer(src):
        fn, args = m.group(1), call_args(src, m.end())
        line = src.count("\n", 0, m.start()) + 1
        if fn == "fprintf":
            args = args[1:]
        if fn in ("fputs", "puts"):
            shown = args[:1]
        else:
            fmt = "".join(C_STRING.findall(args[0])) if args[0].startswith('"') else None
            if fmt is None:
                found.append((line, f"{fn}: a format that is not a literal"))
                continue
            shown, k = [], 1
            for conv in CONVERSION.finditer(fmt):
                if conv.group(5) == "%":
                    continue
                k += (conv.group(1) == "*") + (conv.group(3) == "*")
                if conv.group(5) == "s" and k < len(args):
                    shown.append(args[k])
                k += 1
        found += [(line, f"{fn}(... {a} ...)") for a in shown if not own_text(a)]
    return found

# Circles among the source files of one folder (a file calls a function or
# reads a table another defines) left to cut, each a set of files: the
# branches that restructure those parts empty it. Only shrinks: a set that
# is no longer a circle fails too.
CALL_CIRCLES_NOT_YET = [
]

# What a file defines for the others: a name at column 0, not static, that a
# call, an index or an initialiser follows (the project's style puts every
# definition there).
DEFINITION = re.compile(r"^(?!static\b|typedef\b|extern\b)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)"
                        r"\s*[(\[=]")
COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:[^"\\\n]|\\.)*"', re.S)


def file_uses(texts):
    """{file: the files of `texts` whose definitions it uses}; texts maps a
    file to its source."""
    owner = {}
    for f, text in texts.items():
        for line in text.split("\n"):
            m = DEFINITION.match(line)
            if m and ";" not in line[:m.start(1)]:
                owner.setdefault(m.group(1), f)
    uses = {}
    for f, text in texts.items():
        words = set(re.findall(r"\b[A-Za-z_]\w*\b", COMMENT_OR_STRING.sub(" ", text)))
        uses[f] = {owner[w] for w in words if w in owner and owner[w] != f}
    return uses


def circles(uses):
    """The strongly connected sets of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(uses[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(uses):
        if v not in index:
            visit(v)
    return out


def folder_circles():
    by_folder = {}
    for f in source_files():
        if f.startswith("agent/") and f.endswith(".c"):
            with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
                by_folder.setdefault(os.path.dirname(f), {})[f] = fh.read()
    return [c for texts in by_folder.values() for c in circles(file_uses(texts))]


# pl_file's flags (include/pipeline/registry.h) and the one module that
# writes each (a stage with its parts: slogs means slogs*.c).
FILE_FLAG_OWNERS = {
    "retired": "registry", "in_id_index": "registry", "doc_backfill": "registry",
    "draining": "router", "scan_gen": "router",
    "queued": "reader", "paused": "reader", "at_end": "reader", "doc_loaded": "reader",
    "settle_due": "reader",
    "yielded": "delivery", "record_rejected": "delivery",
}


def flag_writers(texts):
    """{flag: the modules of `texts` (file -> source) that write it}: a write
    through a name the file declares a pl_file (other structs have flags of
    the same name)."""
    out = {}
    for f, text in texts.items():
        name = os.path.splitext(os.path.basename(f))[0]
        module = STAGE_PARTS.get(name, name)
        text = COMMENT_OR_STRING.sub(" ", text)
        files = set(re.findall(r"\bpl_file\s*\*\s*(\w+)", text))
        if not files:
            continue
        write = re.compile(r"\b(?:" + "|".join(sorted(files)) + r")->(" +
                           "|".join(FILE_FLAG_OWNERS) + r")\s*(?:[-+|&]?=(?!=)|\+\+|--)")
        for flag in write.findall(text):
            out.setdefault(flag, set()).add(module)
    return out


def pipeline_texts():
    texts = {}
    for f in source_files():
        if f.startswith("agent/pipeline/") and f.endswith(".c"):
            with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
                texts[f] = fh.read()
    return texts


# Functions are short: none over about 80 lines (docs/architecture.md, "Size").
MAX_FUNCTION_LINES = 80
# The longer ones left, (file, function): lines. It only shrinks: a new long
# function fails, and so does one listed here that got shorter than it says
# (lower its figure) or short (drop it), so the list stays true. Most sit in
# parts other branches are reworking; cut them there.
LONG_FUNCTIONS = {
}
# A function's first line: at column 0, a name and its opening parenthesis,
# no statement (the body's braces are at the end of the signature and at
# column 0, as .clang-format has them).
FUNCTION_START = re.compile(r"^(?![ \t#}/*])(?!(?:typedef|struct|union|enum)\b[^(]*$)[^=;]*?"
                            r"\b(\w+)\s*\([^;]*$")


def functions(text):
    """(name, first line, lines from the signature to the closing brace)."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FUNCTION_START.match(lines[i])
        if m:
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith("{") and ";" not in lines[j]:
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{") and ";" not in lines[j]:
                k = j + 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                out.append((m.group(1), i + 1, k - i + 1))
                i = k + 1
                continue
        i += 1
    return out


def function_lengths():
    out = {}
    for f in source_files():
        if f.startswith("agent/") and f.endswith(".c"):
            with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
                for name, _, n in functions(fh.read()):
                    out[(f, name)] = n
    return out


def long_functions():
    return {k: n for k, n in function_lengths().items() if n > MAX_FUNCTION_LINES}


class StructureTest(unittest.TestCase):
    def test_graph_is_read(self):
        # The test sees the includes it judges (a broken pattern would pass
        # everything).
        g = graph()
        self.assertIn("include/influx/endpoint.h", g["agent/influx/client.c"])
        self.assertIn("include/pipeline/registry.h", g["include/pipeline/reader.h"])
        self.assertIn("agent/pipeline/slogs_private.h", g["agent/pipeline/slogs_cycles.c"])
        self.assertIn("include/pipeline/slogs.h", g["agent/pipeline/slogs_private.h"])
        self.assertIn(JUDGING_FACE, g["agent/service/service.c"])
        self.assertIn("include/pipeline/runtracker.h", g["include/judging/verdicts.h"])
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

    def test_layers_never_call_back_up(self):
        self.assertEqual(layer_violations(graph()), [])

    def test_layer_check_sees_a_violation(self):
        # The check above fails when the rule is broken (a check that
        # cannot fail would pass a tree that breaks it).
        bad = {
            "agent/pipeline/delivery.c": ["include/judging/verdicts.h"],
            "agent/judging/verdicts.c": ["include/service/service.h"],
            "agent/service/service.c": ["include/judging/alerting.h", JUDGING_FACE],
            "agent/judging/alerting.c": ["include/pipeline/delivery.h"],
        }
        found = layer_violations(bad)
        self.assertEqual(len(found), 3, found)
        self.assertTrue(found[0].startswith("agent/pipeline/delivery.c includes"))

    def test_stages_never_call_back_up(self):
        for f, deps in graph().items():
            s = stage(f)
            if s is None:
                continue
            layer, name = s
            order = STAGE_ORDER[layer]
            self.assertIn(name, order,
                          f"{f}: a new stage needs its place in STAGE_ORDER[{layer!r}]")
            for d in deps:
                t = stage(d)
                if t and t[0] == layer and t[1] != name:
                    self.assertIn(t[1], order, f"{d}: not in STAGE_ORDER[{layer!r}]")
                    self.assertLess(order.index(t[1]), order.index(name),
                                    f"{f} includes {d}: a stage includes only those below it")

    def test_private_headers_stay_home(self):
        # A header beside its sources (agent/<folder>/x.h) is private to
        # that folder; what other folders need is in include/.
        for f, deps in graph().items():
            for d in deps:
                if d.startswith("agent/") and d.endswith(".h"):
                    self.assertEqual(os.path.dirname(d), os.path.dirname(f),
                                     f"{f} includes {d}, private to its folder")

    def test_net_knows_nothing_of_influxdb(self):
        for f, deps in graph().items():
            if folder(f) == "net":
                self.assertEqual([d for d in deps if folder(d) == "influx"], [],
                                 f"{f} includes the InfluxDB client")

    def test_reads_go_through_readback(self):
        self.assertEqual(read_violations(source_texts(), graph()), [])

    def test_read_check_sees_a_violation(self):
        texts = {
            "agent/cmd/x.c": '#include "influx/influxql.h"\n',
            "agent/judging/y.c": 'cJSON_GetObjectItemCaseSensitive(j, "results")',
            "agent/report/z.c": "ps_influx_query_post(cfg, q, &r, err);",
            "agent/readback/ok.c": '"results" ps_influx_query_post',
        }
        g = {"agent/judging/y.c": ["include/report/query.h", "include/report/report.h"]}
        found = read_violations(texts, g)
        self.assertEqual(len(found), 4, found)
        self.assertTrue(any("include/report/query.h" in v for v in found))

    def test_layers_have_no_format_branches(self):
        files = [f for f in source_files() if folder(f) in LAYERS]
        # the test sees what it judges
        self.assertIn("agent/pipeline/delivery.c", files)
        self.assertIn("agent/judging/alerting_clock.c", files)
        for f in files:
            with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    self.assertNotIn("PS_FMT_", line,
                                     f"{f}:{n}: {folder(f)}/ branches on a format id; ask the "
                                     "format's ops table (formats/format.h) instead")

    def test_core_has_no_format_branches(self):
        # core/ lists the formats' ids and names (config_keys.c) and nothing
        # else of them: what a format asks of its sources' configuration is
        # asked of the formats (ps_source_rules, docs/architecture.md).
        files = [f for f in source_files() if folder(f) == "core" and f.startswith("agent/")]
        self.assertIn("agent/core/config.c", files)  # the test sees what it judges
        for f in files:
            if f == "agent/core/config_keys.c":
                continue
            with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    self.assertNotIn("PS_FMT_", line,
                                     f"{f}:{n}: core branches on a format id; ask the "
                                     "caller's ps_source_rules_fn instead")

    def test_figures_written_once(self):
        names, values = figure_strings()
        # the test sees what it judges
        self.assertIn("cycleAvgDuration", names)
        self.assertIn("stage_avgSwingsetTime", names)
        self.assertIn("onlyLive", values)
        for f in source_files():
            if (not f.startswith("agent/") or f == FIGURES or f in FIGURES_NOT_YET
                    or f.startswith(FIGURE_PRODUCERS)):
                continue
            with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', line):
                        if (f, lit) in FIGURES_HOMONYMS:
                            continue
                        self.assertNotIn(lit, names | values,
                                         f"{f}:{n}: \"{lit}\" is a judged figure's name or "
                                         f"selector; read it from the table ({FIGURES})")

    def test_one_header_guard_scheme(self):
        # PS_<FOLDER>_<NAME>_H, from the header's path below include/ or
        # agent/, so a guard never needs a decision and two never collide.
        seen = {}
        for f in source_files():
            if not f.endswith(".h"):
                continue
            with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
                m = re.search(r"^#ifndef (\w+)\n#define \1\b", fh.read(), re.M)
            self.assertIsNotNone(m, f"{f}: no include guard")
            rel = f.split("/", 1)[1][:-2]
            want = "PS_" + re.sub(r"[^A-Za-z0-9]", "_", rel).upper() + "_H"
            self.assertEqual(m.group(1), want, f"{f}: the guard is {want}")
            self.assertNotIn(want, seen, f"{f} and {seen.get(want)} share a guard")
            seen[want] = f

    def test_no_circle_among_a_folders_files(self):
        found = folder_circles()
        total = sum(1 for f in source_files() if f.startswith("agent/") and f.endswith(".c"))
        print(f"structure: {total} source files, {len(found)} circles among a folder's files "
              f"({len(CALL_CIRCLES_NOT_YET)} listed to cut)", file=sys.stderr)
        for c in found:
            self.assertIn(c, CALL_CIRCLES_NOT_YET,
                          "a circle among a folder's files: " + ", ".join(sorted(c)) +
                          "; let one part call the other through a hook or move the "
                          "function to the part that owns it")
        for c in CALL_CIRCLES_NOT_YET:
            self.assertIn(c, found, "no longer a circle, drop it from CALL_CIRCLES_NOT_YET: "
                          + ", ".join(sorted(c)))

    def test_circle_check_sees_a_circle(self):
        # The check above fails when two files call each other, also through
        # a third, and not when the calls run one way.
        one_way = {"agent/x/a.c": "int x_a(void) { return x_b(); }\n",
                   "agent/x/b.c": "int x_b(void) { return x_c; }\n",
                   "agent/x/c.c": "const int x_c = 1;\n"}
        self.assertEqual(circles(file_uses(one_way)), [])
        injected = dict(one_way)
        injected["agent/x/c.c"] = "static int own(void);\nconst int x_c[] = {0};\n" \
                                  "int x_d(void) { return x_a(); }\n"
        self.assertEqual(circles(file_uses(injected)),
                         [{"agent/x/a.c", "agent/x/b.c", "agent/x/c.c"}])
        # the real tree with a circle put in fails as the test above would
        texts = {}
        for f in ("agent/core/config.c", "agent/core/config_walk.c"):
            with open(os.path.join(ROOT, f), encoding="utf-8") as fh:
                texts[f] = fh.read()
        self.assertEqual(circles(file_uses(texts)), [])
        texts["agent/core/config_walk.c"] += "\nstatic void up(void) { ps_config_defaults(0); }\n"
        self.assertEqual(circles(file_uses(texts)),
                         [{"agent/core/config.c", "agent/core/config_walk.c"}])

    def test_file_flags_have_one_writer(self):
        with open(os.path.join(ROOT, "include/pipeline/registry.h"), encoding="utf-8") as fh:
            struct = re.search(r"typedef struct pl_file \{(.*?)\} pl_file;", fh.read(),
                               re.S).group(1)
        flags = set(re.findall(r"^\s*(?:int|unsigned|uint64_t) (\w+);", struct, re.M))
        self.assertEqual(flags - {"fd", "cur_hash", "last_read_ms", "doc_hash", "doc_size"},
                         set(FILE_FLAG_OWNERS),
                         "a flag of pl_file needs its one owner in FILE_FLAG_OWNERS")
        writers = flag_writers(pipeline_texts())
        self.assertIn("reader", writers["paused"])  # the test sees what it judges
        for flag, owner in FILE_FLAG_OWNERS.items():
            self.assertEqual(writers.get(flag, {owner}), {owner},
                             f"pl_file.{flag} is written by {sorted(writers.get(flag))}; only "
                             f"{owner} writes it, the others ask it through a function")

    def test_flag_check_sees_a_second_writer(self):
        texts = {"agent/pipeline/reader.c": "pl_file *f;\nf->paused = 1;\n",
                 "agent/pipeline/registry.c": "void x(pl_file *f) {\n  f->retired = 1; "
                                              "/* f->paused = 0 */\n  s->paused = 1;\n"}
        self.assertEqual(flag_writers(texts), {"paused": {"reader"}, "retired": {"registry"}})
        texts["agent/pipeline/registry.c"] += "  f->paused = 0;\n  if (f->queued == 1) {}\n"
        self.assertEqual(flag_writers(texts)["paused"], {"reader", "registry"})
        self.assertNotIn("queued", flag_writers(texts))

    def test_functions_are_short(self):
        found = long_functions()
        lengths = function_lengths()
        largest = max(lengths.items(), key=lambda kv: kv[1]) if lengths else None
        print(f"structure: largest function {largest}, {len(found)} over "
              f"{MAX_FUNCTION_LINES} lines", file=sys.stderr)
        for (f, name), n in sorted(found.items()):
            self.assertIn((f, name), LONG_FUNCTIONS,
                          f"{f}: {name} is {n} lines; keep a function under "
                          f"{MAX_FUNCTION_LINES} (give its steps functions of their own)")
            self.assertLessEqual(n, LONG_FUNCTIONS[(f, name)],
                                 f"{f}: {name} grew to {n} lines; it is to shrink")
        for key, n in LONG_FUNCTIONS.items():
            self.assertEqual(found.get(key), n,
                             f"{key[0]}: {key[1]} is now {found.get(key, 'short')}; lower or "
                             "drop its entry in LONG_FUNCTIONS")

    def test_function_length_sees_a_long_function(self):
        text = ("static int small(void) {\n  return 0;\n}\n\n"
                "int ps_long(int a,\n            int b) {\n" + "  a++;\n" * 90 +
                "  return a + b;\n}\n"
                "static const int table[] = {\n  1,\n};\n"
                "struct s {\n  int x;\n};\n")
        found = functions(text)
        self.assertEqual([(n, first) for n, first, _ in found], [("small", 1), ("ps_long", 5)])
        self.assertEqual(found[1][2], 94)
        self.assertGreater(found[1][2], MAX_FUNCTION_LINES)
        # the tree is read (a broken pattern would find nothing to judge)
        with open(os.path.join(ROOT, "agent/core/config_walk.c"), encoding="utf-8") as fh:
            self.assertIn("ps_cfg_walk_group", [n for n, _, _ in functions(fh.read())])

    def test_headers_match_sources(self):
        for f in source_files():
            if f.startswith("include/") and f not in INTERFACES:
                stem = os.path.splitext(f)[0].replace("include/", "agent/", 1)
                self.assertTrue(os.path.exists(os.path.join(ROOT, stem + ".c")),
                                f"{f} has no {stem}.c")


    def test_one_writer_of_data_text(self):
        # A parser may escape a cell into the words of its reject (formats/
        # print nothing: the driver writes the reason through the writer).
        private = [f for f in source_files() if f.startswith("agent/")
                   and not f.startswith(("agent/core/", "agent/formats/"))
                   and "ps_visible_into(" in open(os.path.join(ROOT, f)).read()]
        self.assertEqual(private, [], "shows data text through a writer of its own; use "
                                      "ps_visible_put or ps_visible_say (core/visible.h)")
        for path in DATA_PRINTERS:
            self.assertEqual(raw_data_prints(os.path.join(ROOT, path)), [],
                             f"{path} prints a string that may be data without "
                             "ps_visible_put/ps_visible_say")

    def test_data_text_check_sees_a_violation(self):
        # a command that printed a verdict or a decision's id raw (issue 32)
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
            f.write('static void p(const row *r) {\n'
                    '  printf("%-11s %9s  ", r->verdict ? r->verdict : "?", change);\n'
                    '  printf(" [%s]\\n", d->id);\n'
                    '  fputs(run, stderr);\n'
                    '  printf("%zu decision%s\\n", n, n == 1 ? "" : "s");\n'
                    '  fprintf(stderr, "%s %s: %s\\n", ps_triage_action_name(a), id, strerror(e));\n'
                    '}\n')
        self.addCleanup(os.unlink, f.name)
        self.assertEqual([line for line, _ in raw_data_prints(f.name)], [2, 3, 4])

if __name__ == "__main__":
    unittest.main()
